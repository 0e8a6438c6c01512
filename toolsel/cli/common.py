"""What every subcommand module shares: the :func:`command` registry, argument types, and the
argument builders that give one concept one flag across commands.

- ``--registry``, ``--queries`` (a labeled JSONL file: always a path), ``--out``;
- ``--scorers`` (comma-separated; every command that scores takes a list and reports each;
  ``--scorer`` is kept as a hidden alias where it existed) with one default,
  :data:`DEFAULT_SCORER`, for commands that run one scorer unless told otherwise;
- ``--top-k`` (comma-separated cut-offs, every command);
- ``--split`` (``dev``, ``test`` or ``all``; default :data:`DEFAULT_SPLIT` everywhere);
- ``--always-include``; ``--n-queries`` for a count of queries.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["command", "COMMANDS", "csv_list", "int_list", "always_include_names",
           "DEFAULT_SCORER", "DEFAULT_SPLIT", "SPLIT_CHOICES", "add_registry", "add_queries",
           "add_scorers", "add_top_k", "add_split", "add_always_include", "add_out",
           "add_n_queries",
           "MAX_TOP_K", "file_path"]

#: name -> (help, add_arguments(parser), run(args) -> exit code)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None],
                          Callable[[argparse.Namespace], int]]] = {}

#: The scorer of a command that runs one unless told otherwise: the one Selector uses.
DEFAULT_SCORER = "default"
#: ``--split`` choices and their default (every query).
SPLIT_CHOICES = ("dev", "test", "all")
DEFAULT_SPLIT = "all"


def command(name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]):
    """Decorator registering ``run(args) -> int`` as the subcommand ``name``."""
    def deco(run: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help, add_arguments, run)
        return run
    return deco


def csv_list(value: str) -> list[str]:
    """``"a,b, c"`` → ``["a", "b", "c"]`` (empty items dropped)."""
    return [v.strip() for v in value.split(",") if v.strip()]


#: The largest cut-off a command takes (no registry comes near it; beyond it K overflows
#: the 64-bit arrays rankings are kept in).
MAX_TOP_K = 10**9


def int_list(value: str) -> list[int]:
    try:
        out = [int(v) for v in csv_list(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}")
    if not out or min(out) < 1 or max(out) > MAX_TOP_K:
        raise argparse.ArgumentTypeError(f"expected integers from 1 to {MAX_TOP_K:,}, got "
                                         f"{value!r}")
    return out


def file_path(value: str) -> Path:
    """An output *file* argument: refused when it ends with a separator (``reg.json/`` names
    a folder, which ``Path`` would silently turn into the file ``reg.json``)."""
    if not value or value.endswith(("/", os.sep)) or os.path.basename(value) in (".", ".."):
        raise argparse.ArgumentTypeError(f"{value!r} names a folder; give a file name")
    return Path(value)


def always_include_names(value: list[str] | None, registry) -> list[str]:
    """``--always-include`` values: names as given, or ``marked`` for the registry's own."""
    if not value:
        return []
    if value == ["marked"]:
        return sorted(registry.always_include, key=registry.index)
    return value


# --------------------------------------------------------------------------------------------
# argument builders


def add_registry(p, *, required: bool = True, help: str = "tool registry (JSON or JSONL)"):
    p.add_argument("--registry", required=required, type=Path, help=help)


def add_queries(p, *, required: bool = True, help: str = "labeled queries (JSONL)"):
    p.add_argument("--queries", required=required, type=Path, help=help)


def add_scorers(p, default: Sequence[str] | None = (DEFAULT_SCORER,), *, alias: bool = False,
                help: str = "comma-separated scorer names"):
    """``--scorers`` (a list; ``None`` default: the caller's own); with ``alias`` also a hidden
    ``--scorer`` writing the same list (the flag this command had before)."""
    shown = "" if default is None else f" (default: {','.join(default)})"
    p.add_argument("--scorers", type=csv_list, default=None if default is None else list(default),
                   help=help + shown)
    if alias:
        p.add_argument("--scorer", dest="scorers", type=csv_list, help=argparse.SUPPRESS)


def add_top_k(p, default: Sequence[int] | None, *, help: str = "comma-separated cut-offs"):
    shown = "" if default is None else f" (default: {','.join(map(str, default))})"
    p.add_argument("--top-k", type=int_list, default=None if default is None else list(default),
                   help=help + shown)


def add_split(p, *, help: str = "which labeled split to evaluate"):
    p.add_argument("--split", choices=SPLIT_CHOICES, default=DEFAULT_SPLIT,
                   help=f"{help} (default: {DEFAULT_SPLIT})")


def add_always_include(p, *, help: str = "names sent every turn, outside the filter"):
    p.add_argument("--always-include", type=csv_list, default=[],
                   help=f"{help}; 'marked' takes the registry's always_include tools "
                        "(default: none: every tool competes for the K places)")


def add_out(p, *, required: bool = False, help: str = "folder for the CSV tables"):
    p.add_argument("--out", required=required, type=Path, help=help)


def add_n_queries(p, *, help: str = "how many labeled queries to generate"):
    p.add_argument("--n-queries", type=int, default=0, help=help)
