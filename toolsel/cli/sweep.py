"""``toolsel sweep``: scorers x top_k (x selection policies) on a labeled query set, written as
CSV tables."""

from __future__ import annotations

import argparse
import time

from ..data import load_queries, load_registry
from ..policies import available_policies
from ..visible import visible
from .fit import add_model_arg, with_model
from .common import (add_always_include, add_out, add_queries, add_registry, add_scorers,
                     add_split, add_top_k, always_include_names, command)


def _sweep_args(p: argparse.ArgumentParser) -> None:
    from ..eval.sweep import DEFAULT_TOP_K
    from ..scorers.base import compared_scorers
    add_registry(p)
    add_queries(p)
    add_scorers(p, compared_scorers())
    add_top_k(p, DEFAULT_TOP_K)
    add_split(p)
    add_always_include(p)
    p.add_argument("--policy", action="append", default=[], metavar="SPEC",
                   help="also evaluate every scorer under this selection policy, written to "
                        "policies.csv; SPEC is 'name' or 'name:key=value,...', e.g. "
                        "threshold:min_score=0.5,max_k=10 or two_stage:n_servers=2,k=10 "
                        f"(repeatable; policies: {', '.join(available_policies())})")
    p.add_argument("--policies", choices=["default"],
                   help="'default': also evaluate the settings `toolsel policies` sweeps "
                        "(toolsel.eval.policies.default_grid), with any --policy")
    add_model_arg(p)
    add_out(p, required=True)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--no-timings", action="store_true",
                   help="leave wall-clock timings out of the output (reproducible logs)")


def _single_scorer_warnings(result, scorers) -> list[str]:
    """A ``warning:`` line per swept scorer far below ``default`` on these requests
    (:mod:`toolsel.eval.scorer_warning`; from the sweep's own per-query metrics)."""
    from ..eval.scorer_warning import gap_message, scorer_gaps
    names = [s for s in dict.fromkeys(result.query_metrics["scorer"])]
    if "default" not in names or len(names) < 2:
        return []
    if not {5, 10} <= set(result.query_metrics["top_k"]):
        return ["note: no check of single scorers against 'default': it needs cut-offs 5 "
                "and 10 in --top-k"]
    out = []
    for name in names:
        if name != "default":
            msg = gap_message(scorer_gaps(result.query_metrics, name, "default"))
            if msg:
                out.append(msg)
    return out


#: At most this many policy rows are printed; past it, only the Pareto-best ones.
_MAX_POLICY_ROWS = 50


@command("sweep", "evaluate scorers x top_k (and selection policies) on a labeled query set; "
         "write CSV tables", _sweep_args)
def _sweep(args: argparse.Namespace) -> int:
    from ..datasets import filter_split
    from ..eval.sweep import SweepResult, sweep
    from ..io import check_output_dir
    from ..policies import as_policies
    # before any work: a bad spec or --out fails now, in one line (a ValueError: cli.main)
    policies = []
    if args.policies == "default":
        from ..eval.policies import default_grid
        policies = default_grid()
    policies = as_policies([*policies, *args.policy])
    check_output_dir(args.out, SweepResult.files_for(bool(policies)))
    reg = load_registry(args.registry)
    queries = filter_split(load_queries(args.queries, reg), args.split)
    scorers = args.scorers if args.model is None else \
        with_model(args.scorers, args.model, reg, queries)
    t0 = time.perf_counter()
    result = sweep(reg, queries, scorers, args.top_k,
                   always_include=always_include_names(args.always_include, reg),
                   progress=False if args.no_progress else None, policies=policies)
    elapsed = time.perf_counter() - t0
    paths = result.write(args.out)
    cols = ["scorer", "top_k", "R@k", "Success@k", "Complete@k", "MRR", "NDCG@k", "MAP",
            "payload_chars", "payload_reduction"]
    print(result.summary[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if result.policies is not None:
        from ..eval.policies import settings_table
        table = settings_table(result.policies, policies)
        print()
        merged = len(result.policies) - len(table)
        if len(table) > _MAX_POLICY_ROWS:
            table = table[table["pareto"]]
            print(f"policies: the {len(table)} Pareto-best of {len(result.policies)} settings "
                  "(per scorer; all in policies.csv)")
        if merged:
            print(f"policies: {merged} settings that select the same as another setting of "
                  "their policy (equal recall, completeness, tools sent and payload) are "
                  "counted in n_settings, not printed (all in policies.csv)")
        cols = ["scorer", "setting", "R@sent", "Complete@sent", "n_sent", "payload_json_tokens_reduction",
                "pareto", "n_settings"]
        print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for line in _single_scorer_warnings(result, args.scorers):
        print(visible(line))
    for note in result.notes:
        print(f"note: {visible(note)}")
    print(f"\n{len(reg)} tools, {len(queries)} queries, unfiltered payload "
          f"{result.unfiltered['chars']:,} chars / {result.unfiltered['tokens']:,} tokens"
          + ("" if args.no_timings else f"; swept in {elapsed:.1f} s"))
    if not args.no_timings:
        for label, t in result.timings.items():
            print(f"  {visible(label)}: fit {t['fit_s']:.2f} s, scoring {t['score_s']:.2f} s"
                  + (f", policies {t['policies_s']:.2f} s" if "policies_s" in t else ""))
    print("wrote " + ", ".join(visible(p) for p in paths))
    return 0
