"""JSON Lines as toolsel writes and reads them: one serializer, one line splitter.

Every JSONL file toolsel writes (queries, registries, import outputs, appended labels) goes
through :func:`jsonl_line`; every one it reads is split by :func:`jsonl_lines`. A newline is
the only separator: ``str.splitlines`` also splits at U+2028, U+2029, U+0085, form feeds and
other characters a JSON string may hold raw, and made files unreadable. On write those three
line separators are escaped (``\\u2028``), so other readers (JavaScript, editors) see one
record a line too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["dumps", "jsonl_line", "jsonl_text", "jsonl_lines"]


def dumps(value: Any, **kwargs: Any) -> str:
    """Strict JSON (``NaN``/``Infinity`` raise :class:`ValueError`), UTF-8 characters kept."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **kwargs)
    except ValueError as exc:  # NaN/Infinity: not JSON, and no loader reads it back
        raise ValueError("cannot write NaN or Infinity: they are not JSON values and no JSON "
                         f"reader takes them back ({exc}); use null or a number") from None


#: Characters some line readers (Python's ``str.splitlines``, JavaScript, editors) take for
#: line ends: written escaped in JSONL so every reader sees one record a line.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}
_LINE_BREAK_RE = re.compile("[\u2028\u2029\x85]")


def jsonl_line(record: Any) -> str:
    """One record as a JSONL line (without its newline): strict JSON, UTF-8 characters as
    they are, except U+2028, U+2029 and U+0085, written as ``\\uXXXX`` escapes.

    The one serializer of every JSONL file toolsel writes (queries, registries, import
    outputs, appended labels); :func:`jsonl_lines` is its reader."""
    return _LINE_BREAK_RE.sub(lambda m: _LINE_BREAKS[m.group(0)], dumps(record))


def jsonl_text(records: Iterable[Any]) -> str:
    """Records as JSONL text: :func:`jsonl_line` each, ``\\n`` after each."""
    return "".join(jsonl_line(r) + "\n" for r in records)


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of JSONL text: split at ``\\n`` only (a ``\\r`` before it
    dropped), never at the other characters ``str.splitlines`` takes for line ends
    (U+2028, U+0085, form feed, ...), which a JSON string may hold raw."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        yield lineno, line[:-1] if line.endswith("\r") else line


