"""``toolsel policies``: every selection policy on the recall-vs-payload plane, frontier marked."""

from __future__ import annotations

import argparse

from ..data import load_queries, load_registry
from ..visible import visible
from .common import (add_always_include, add_out, add_queries, add_registry, add_scorers,
                     add_split, always_include_names, command)

_FILES = ("per_query.csv", "summary.csv", "dominates_top_k.csv")


def _args(p: argparse.ArgumentParser) -> None:
    add_registry(p)
    add_queries(p)
    add_scorers(p, alias=True, help="comma-separated scorers whose rankings the policies cut")
    add_split(p, help="queries evaluated (choose settings on dev, report on test)")
    add_always_include(p, help="names sent every turn, outside every policy")
    add_out(p)


@command("policies", "fixed top-K, threshold, adaptive K, token budget and two-stage selection "
         "on the recall-vs-payload plane; Pareto-best settings marked", _args)
def _run(args: argparse.Namespace) -> int:
    from ..datasets import filter_split
    from ..eval.policies import (default_grid, dominates_top_k, evaluate_policies, frontier,
                                 settings_table, summarize_policies)
    from ..io import check_output_dir, write_set
    if args.out:
        check_output_dir(args.out, _FILES)
    reg = load_registry(args.registry)
    queries = filter_split(load_queries(args.queries, reg), args.split)
    import pandas as pd
    grid = default_grid()
    always = always_include_names(args.always_include, reg)
    per_query = pd.concat([
        evaluate_policies(reg, queries, scorer, grid, always_include=always)
        .assign(scorer=scorer) for scorer in args.scorers], ignore_index=True)
    per_query = per_query[["scorer", *[c for c in per_query.columns if c != "scorer"]]]
    summary = frontier(summarize_policies(per_query, by=["scorer"]), by="scorer")
    beats = dominates_top_k(summary, by="scorer")
    best = settings_table(summary[summary["pareto"]], grid, by=("scorer",))
    best = best.sort_values(["scorer", "payload_reduction"], ascending=[True, False],
                            kind="stable")
    cols = ["scorer", "policy", "setting", "R@sent", "Complete@sent", "n_sent", "payload_tokens",
            "payload_reduction", "n_settings"]
    print(f"{len(reg)} tools, {len(queries)} queries ({args.split}), scorers "
          f"{visible(', '.join(args.scorers))}: {len(summary)} settings, "
          f"{int(summary['pareto'].sum())} on the frontier")
    print(best[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print()
    from ..policies import policy_spec
    specs = {repr(p): policy_spec(p) for p in grid}
    print(beats.assign(**{c: beats[c].map(lambda v: specs.get(v, v))
                          for c in ("config", "dominated")})
          .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        write_set(args.out, dict(zip(_FILES, (per_query, summary, beats))))
        print(f"\nwrote {len(_FILES)} tables to {visible(args.out)}")
    return 0
