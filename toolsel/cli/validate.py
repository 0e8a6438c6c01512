"""``toolsel validate``: load a registry and labeled files; print a summary or the first error."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data import count_servers, load_queries, load_registry, servers_text
from ..visible import visible
from .common import command


def _validate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", required=True, type=Path, help="registry file (JSON or JSONL)")
    p.add_argument("--queries", type=Path, action="append", default=[],
                   help="labeled query file (JSONL); repeat for several")
    p.add_argument("--conversations", type=Path, action="append", default=[],
                   help="labeled conversation file (JSONL); repeat for several")
    p.add_argument("--strict", action="store_true",
                   help="refuse tool names the OpenAI or Anthropic APIs refuse (1-64 letters, "
                        "digits, '_' or '-'); default: warn about names every API refuses")


@command("validate", "check a registry and query files; print a summary or the first error",
         _validate_args)
def _validate(args: argparse.Namespace) -> int:
    from ..eval.metrics import payload_chars
    reg = load_registry(args.registry, strict=args.strict)
    marked = sorted(reg.always_include, key=reg.index)
    print(f"{visible(args.registry)}: {len(reg)} tools, {servers_text(count_servers(reg))}, "
          f"{payload_chars(reg):,} chars of name+description"
          + (f", always-include: {visible(', '.join(marked))}" if marked else ""))
    for path in args.queries:
        qs = load_queries(path, reg)
        multi = sum(len(q.expected) > 1 for q in qs)
        print(f"{visible(path)}: {len(qs)} queries ({multi} need several tools), all expected tools "
              "exist")
    if args.conversations:
        from ..datasets import load_conversations
    for path in args.conversations:
        convs = load_conversations(path, reg)
        turns = sum(len(c.turns) for c in convs)
        print(f"{visible(path)}: {len(convs)} conversations, {turns} turns, all expected tools exist")
    return 0
