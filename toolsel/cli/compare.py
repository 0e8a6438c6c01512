"""``toolsel compare``: the same suite on two registry versions; what changed per query."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import command
from ..data import load_queries, load_registry


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry-a", required=True, type=Path, help="the current registry")
    b = p.add_mutually_exclusive_group(required=True)
    b.add_argument("--registry-b", type=Path, help="the changed registry")
    b.add_argument("--repairs", type=Path,
                   help="a description patch {tool: new description} applied to registry A")
    p.add_argument("--queries", required=True, type=Path, help="labeled queries (JSONL)")
    p.add_argument("--scorer", default="bm25", help="scorer name (default bm25)")
    p.add_argument("--top-k", type=int, default=5, help="cut-off (default 5)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="all",
                   help="restrict to one split (default: all queries)")
    p.add_argument("--out", type=Path, help="folder for compare_*.csv")


@command("compare", "run one suite on two registry versions; list found/lost tools and rank "
         "moves per query", _args)
def _run(args: argparse.Namespace) -> int:
    from ..datasets import load_repairs
    from ..tables.compare import apply_repairs, compare_registries
    from ..datasets import filter_split
    if args.top_k < 1:
        raise ValueError(f"--top-k must be >= 1, got {args.top_k}")
    reg_a = load_registry(args.registry_a)
    if args.repairs:
        reg_b = apply_repairs(reg_a, load_repairs(args.repairs, reg_a))
        label_b = f"{args.registry_a.name} + {args.repairs.name}"
    else:
        reg_b = load_registry(args.registry_b)
        label_b = args.registry_b.name
    queries = filter_split(load_queries(args.queries, reg_a), args.split)
    cmp = compare_registries(reg_a, reg_b, queries, args.scorer, args.top_k,
                             labels=("a", "b"))
    print(f"a = {args.registry_a.name}, b = {label_b}; scorer {args.scorer}, "
          f"top_k={args.top_k}, split={args.split}, {len(queries)} queries")
    print(cmp.summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    changed = cmp.changed()
    if len(changed):
        print("\nchanged (rank among candidates, a -> b):")
        for _, r in changed.iterrows():
            print(f"  {r['change']:5}  {r['query_id']}  {r['tool']}: {r['rank_a']} -> "
                  f"{r['rank_b']}  ({r['query']})")
    else:
        print("\nno required tool changed hit/miss")
    if args.out:
        cmp.write(args.out)
        print(f"wrote compare_summary.csv, compare_per_tool.csv, compare_per_query.csv to "
              f"{args.out}")
    return 0
