"""The ``toolsel`` command line: thin wrappers that parse, call the package, and print.

Subcommands register themselves in :data:`COMMANDS` with :func:`command`, so each feature
adds its own without touching the others.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .data import DataError, load_queries, load_registry

__all__ = ["main", "command", "COMMANDS", "csv_list", "int_list"]

#: name -> (help, add_arguments(parser), run(args) -> exit code)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None],
                          Callable[[argparse.Namespace], int]]] = {}


def command(name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]):
    """Decorator registering ``run(args) -> int`` as the subcommand ``name``."""
    def deco(run: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help, add_arguments, run)
        return run
    return deco


def csv_list(value: str) -> list[str]:
    """``"a,b, c"`` → ``["a", "b", "c"]`` (empty items dropped)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def int_list(value: str) -> list[int]:
    try:
        out = [int(v) for v in csv_list(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}")
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError(f"expected integers >= 1, got {value!r}")
    return out


def _always_include(value: list[str] | None, registry) -> list[str]:
    if not value:
        return []
    if value == ["marked"]:
        return sorted(registry.always_include, key=registry.index)
    return value


# --------------------------------------------------------------------------------------------
# validate

def _validate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", required=True, type=Path, help="registry file (JSON or JSONL)")
    p.add_argument("--queries", type=Path, action="append", default=[],
                   help="labeled query file (JSONL); repeat for several")
    p.add_argument("--conversations", type=Path, action="append", default=[],
                   help="labeled conversation file (JSONL); repeat for several")


@command("validate", "check a registry and query files; print a summary or the first error",
         _validate_args)
def _validate(args: argparse.Namespace) -> int:
    from .metrics import payload_chars
    reg = load_registry(args.registry)
    marked = sorted(reg.always_include, key=reg.index)
    domains = {t.domain for t in reg if t.domain}
    print(f"{args.registry}: {len(reg)} tools, {len(domains)} domains, "
          f"{payload_chars(reg):,} chars of name+description"
          + (f", always-include: {', '.join(marked)}" if marked else ""))
    for path in args.queries:
        qs = load_queries(path, reg)
        multi = sum(len(q.expected) > 1 for q in qs)
        print(f"{path}: {len(qs)} queries ({multi} need several tools), all expected tools "
              "exist")
    if args.conversations:
        from .conversations import load_conversations
    for path in args.conversations:
        convs = load_conversations(path, reg)
        turns = sum(len(c.turns) for c in convs)
        print(f"{path}: {len(convs)} conversations, {turns} turns, all expected tools exist")
    return 0


# --------------------------------------------------------------------------------------------
# sweep

def _sweep_args(p: argparse.ArgumentParser) -> None:
    from .sweep import DEFAULT_SCORERS, DEFAULT_TOP_K
    p.add_argument("--registry", required=True, type=Path)
    p.add_argument("--queries", required=True, type=Path)
    p.add_argument("--scorers", type=csv_list, default=list(DEFAULT_SCORERS),
                   help=f"comma-separated scorer names (default: {','.join(DEFAULT_SCORERS)})")
    p.add_argument("--top-k", type=int_list, default=list(DEFAULT_TOP_K),
                   help="comma-separated cut-offs (default: 1,3,5,10,20,30)")
    p.add_argument("--always-include", type=csv_list, default=[],
                   help="names sent every turn, outside the filter; 'marked' takes the "
                        "registry's always_include tools (default: none, as in the article)")
    p.add_argument("--out", required=True, type=Path, help="output folder for the CSV tables")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-timings", action="store_true",
                   help="leave wall-clock timings out of the output (reproducible logs)")


@command("sweep", "evaluate scorers x top_k on a labeled query set; write CSV tables",
         _sweep_args)
def _sweep(args: argparse.Namespace) -> int:
    from .sweep import sweep
    reg = load_registry(args.registry)
    queries = load_queries(args.queries, reg)
    t0 = time.perf_counter()
    result = sweep(reg, queries, args.scorers, args.top_k,
                   always_include=_always_include(args.always_include, reg),
                   progress=False if args.no_progress else None)
    elapsed = time.perf_counter() - t0
    paths = result.write(args.out)
    cols = ["scorer", "top_k", "R@k", "Success@k", "Complete@k", "MRR", "payload_chars",
            "payload_reduction"]
    print(result.summary[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"\n{len(reg)} tools, {len(queries)} queries, unfiltered payload "
          f"{result.unfiltered['chars']:,} chars / {result.unfiltered['tokens']:,} tokens"
          + ("" if args.no_timings else f"; swept in {elapsed:.1f} s"))
    if not args.no_timings:
        for label, t in result.timings.items():
            print(f"  {label}: fit {t['fit_s']:.2f} s, scoring {t['score_s']:.2f} s")
    print("wrote " + ", ".join(str(p) for p in paths))
    return 0


# --------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    _load_plugins()
    parser = argparse.ArgumentParser(prog="toolsel", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_, add_arguments, _) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_, description=help_))
    return parser


def _load_plugins() -> None:
    """Import the modules whose subcommands live beside their feature."""
    import importlib
    for module in ("report", "importers", "compare", "discovery", "conversations", "runs",
                   "benchmark"):
        try:
            importlib.import_module(f"toolsel.{module}_cli")
        except ModuleNotFoundError as exc:
            if exc.name != f"toolsel.{module}_cli":
                raise


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
