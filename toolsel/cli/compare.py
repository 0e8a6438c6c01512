"""``toolsel compare``: the same suite on two registry versions; what changed per query."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_out, add_queries, add_scorers, add_split, add_top_k, command
from ..data import load_queries, load_registry
from ..visible import visible


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry-a", required=True, type=Path, help="the current registry")
    b = p.add_mutually_exclusive_group(required=True)
    b.add_argument("--registry-b", type=Path, help="the changed registry")
    b.add_argument("--repairs", type=Path,
                   help="a description patch {tool: new description} applied to registry A")
    add_queries(p)
    add_scorers(p, alias=True, help="comma-separated scorers, each compared")
    add_top_k(p, [5], help="comma-separated cut-offs, each compared")
    add_split(p)
    add_out(p, help="folder for compare_*.csv (one row per scorer x top_k x ...)")


@command("compare", "run one suite on two registry versions; list found/lost tools and rank "
         "moves per query", _args)
def _run(args: argparse.Namespace) -> int:
    import pandas as pd

    from ..datasets import filter_split, load_repairs
    from ..tables.compare import apply_repairs, compare_registries
    from ..io import check_output_dir, write_set
    names = [f"compare_{n}.csv" for n in ("summary", "per_tool", "per_query")]
    if args.out:  # judged where it really is (links followed), before any work
        check_output_dir(args.out, names)
    reg_a = load_registry(args.registry_a)
    if args.repairs:
        reg_b = apply_repairs(reg_a, load_repairs(args.repairs, reg_a))
        label_b = f"{args.registry_a.name} + {args.repairs.name}"
    else:
        reg_b = load_registry(args.registry_b)
        label_b = args.registry_b.name
    queries = filter_split(load_queries(args.queries, reg_a), args.split)
    print(f"a = {visible(args.registry_a.name)}, b = {visible(label_b)}; split={args.split}, "
          f"{len(queries)} queries")
    tables: dict[str, list] = {"summary": [], "per_tool": [], "per_query": []}
    for scorer in args.scorers:
        for k in args.top_k:
            cmp = compare_registries(reg_a, reg_b, queries, scorer, k, labels=("a", "b"))
            print(f"\nscorer {visible(scorer)}, top_k={k}:")
            print(cmp.summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            changed = cmp.changed()
            if len(changed):
                print("changed (rank among candidates, a -> b):")
                for _, r in changed.iterrows():
                    print(f"  {r['change']:5}  {visible(r['query_id'])}  {visible(r['tool'])}: "
                          f"{r['rank_a']} -> {r['rank_b']}  ({visible(r['query'])})")
            else:
                print("no required tool changed hit/miss")
            for name in tables:
                tables[name].append(getattr(cmp, name).assign(scorer=scorer, top_k=k))
    if args.out:
        frames = {}
        for name, parts in tables.items():
            df = pd.concat(parts, ignore_index=True)
            df = df[["scorer", "top_k", *[c for c in df.columns if c not in ("scorer", "top_k")]]]
            frames[f"compare_{name}.csv"] = df
        write_set(args.out, frames)
        print(f"\nwrote compare_summary.csv, compare_per_tool.csv, compare_per_query.csv to "
              f"{visible(args.out)}")
    return 0
