"""``toolsel policies``: every selection policy on the recall-vs-payload plane, frontier marked."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data import load_queries, load_registry
from .common import always_include_names, command, csv_list

_FILES = ("per_query.csv", "summary.csv", "beats_top_k.csv")


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", required=True, type=Path)
    p.add_argument("--queries", required=True, type=Path, help="labeled queries (JSONL)")
    p.add_argument("--scorer", default="default", help="the scorer the policies cut (default: "
                   "default)")
    p.add_argument("--split", choices=["dev", "test", "all"], default="all",
                   help="queries evaluated (choose settings on dev, report on test)")
    p.add_argument("--always-include", type=csv_list, default=[],
                   help="names sent every turn, outside every policy; 'marked' takes the "
                        "registry's always_include tools")
    p.add_argument("--out", type=Path, help="folder for the CSV tables")


@command("policies", "fixed top-K, threshold, adaptive K, token budget and two-stage selection "
         "on the recall-vs-payload plane; Pareto-best settings marked", _args)
def _run(args: argparse.Namespace) -> int:
    from ..eval.discovery import filter_split
    from ..eval.policies import (beats_top_k, default_grid, evaluate_policies, frontier,
                                 settings_table, summarize_policies)
    from ..io import check_output_dir, write_set
    if args.out:
        check_output_dir(args.out, _FILES)
    reg = load_registry(args.registry)
    queries = filter_split(load_queries(args.queries, reg), args.split)
    grid = default_grid()
    per_query = evaluate_policies(reg, queries, args.scorer, grid,
                                  always_include=always_include_names(args.always_include, reg))
    summary = frontier(summarize_policies(per_query))
    beats = beats_top_k(summary)
    best = settings_table(summary[summary["pareto"]], grid, by=())
    best = best.sort_values("payload_reduction", ascending=False, kind="stable")
    cols = ["policy", "setting", "R", "Complete", "n_sent", "payload_tokens", "payload_reduction",
            "n_settings"]
    print(f"{len(reg)} tools, {len(queries)} queries ({args.split}), scorer {args.scorer}: "
          f"{len(summary)} settings, {int(summary['pareto'].sum())} on the frontier")
    print(best[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print()
    from ..policies import policy_spec
    specs = {repr(p): policy_spec(p) for p in grid}
    print(beats.assign(**{c: beats[c].map(lambda v: specs.get(v, v))
                          for c in ("config", "dominated")})
          .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        write_set(args.out, dict(zip(_FILES, (per_query, summary, beats))))
        print(f"\nwrote {len(_FILES)} tables to {args.out}")
    return 0
