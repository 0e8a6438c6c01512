"""The ``toolsel`` command line: thin wrappers that parse, call the package, and print.

One module per subcommand; each registers itself in :data:`~toolsel.cli.common.COMMANDS`
with :func:`~toolsel.cli.common.command` when imported below.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from ..data import DataError
from ..io import OutputError
# importing a subcommand module registers it; the order here is the order of `toolsel -h`
from . import (benchmark, check, compare, conversations, discovery, explore,  # noqa: F401
               importers, label, policies, report, runs, sweep, validate)
from . import fit, serve  # noqa: F401,E402
from .common import COMMANDS, command, csv_list, int_list
from .terminal import check_argv, safe_terminal
from ..visible import visible

__all__ = ["main", "build_parser", "command", "COMMANDS", "csv_list", "int_list"]

_ORDER = ("validate", "label", "fit", "sweep", "report", "explore", "import", "compare", "discovery",
          "conversations", "runs", "policies", "synthetic", "benchmark", "serve")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolsel", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    names = [n for n in _ORDER if n in COMMANDS] + [n for n in COMMANDS if n not in _ORDER]
    for name in names:
        help_, add_arguments, _ = COMMANDS[name]
        add_arguments(sub.add_parser(name, help=help_, description=help_))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status. Whatever it prints passes through
    :func:`~toolsel.cli.terminal.safe_terminal` (control characters from data shown, not
    obeyed); Ctrl-C ends it quietly with status 130."""
    argv = sys.argv[1:] if argv is None else list(argv)
    with safe_terminal():
        try:
            check_argv(argv)
        except ValueError as exc:
            print(f"toolsel: error: {exc}", file=sys.stderr)
            return 2
        try:
            args = build_parser().parse_args(argv)
        except KeyboardInterrupt:
            return 130
        _, _, run = COMMANDS[args.command]
        try:
            with warnings.catch_warnings():
                # a data warning reads as a line of the command's output, not a source location
                warnings.showwarning = lambda message, *a, **k: print(
                    f"toolsel {args.command}: warning: {visible(message)}", file=sys.stderr)
                return run(args)
        except KeyboardInterrupt:
            print(file=sys.stderr)  # end the line the interrupt left (e.g. a prompt)
            return 130
        except (DataError, KeyError, ValueError, ImportError, OSError) as exc:
            print(f"toolsel {args.command}: error: {_one_line(exc)}", file=sys.stderr)
            return 2


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` as one line; an ``OSError`` as ``file: reason``."""
    if isinstance(exc, KeyError) and exc.args:
        msg = str(exc.args[0])
    elif isinstance(exc, OSError) and exc.strerror and not isinstance(exc, OutputError):
        files = " -> ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
        msg = f"{files}: {exc.strerror}" if files else exc.strerror
    else:
        msg = str(exc)
    # one line whatever the data: a newline (or any control character) in a path, an id or a
    # name is shown as an escape
    return visible(msg)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
