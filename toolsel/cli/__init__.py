"""The ``toolsel`` command line: thin wrappers that parse, call the package, and print.

One module per subcommand; each registers itself in :data:`~toolsel.cli.common.COMMANDS`
with :func:`~toolsel.cli.common.command` when imported below.
"""

from __future__ import annotations

import argparse
import sys

from ..data import DataError
# importing a subcommand module registers it; the order here is the order of `toolsel -h`
from . import (benchmark, compare, conversations, discovery, importers, label,  # noqa: F401
               report, runs, sweep, validate)
from .common import COMMANDS, command, csv_list, int_list

__all__ = ["main", "build_parser", "command", "COMMANDS", "csv_list", "int_list"]

_ORDER = ("validate", "label", "sweep", "report", "import", "compare", "discovery",
          "conversations", "runs", "synthetic", "benchmark")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolsel", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = [n for n in _ORDER if n in COMMANDS] + [n for n in COMMANDS if n not in _ORDER]
    for name in names:
        help_, add_arguments, _ = COMMANDS[name]
        add_arguments(sub.add_parser(name, help=help_, description=help_))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _, _, run = COMMANDS[args.command]
    try:
        return run(args)
    except (DataError, KeyError, ValueError, FileNotFoundError, ImportError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"toolsel {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
