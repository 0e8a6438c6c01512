"""``toolsel fit``: learn from labeled requests; write a versioned model file (JSON).

The model is what :class:`toolsel.learn.LearnedScorer` learns on top of a blind scorer;
``Selector(..., model=FILE)`` and ``--model FILE`` on ``sweep``, ``check`` and ``report`` load
it. ``--cross-fit`` also prints the honest estimate: every request scored by a model fit on the
other folds (:mod:`toolsel.eval.crossfit`), blind vs learned with paired 95% intervals.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import (add_always_include, add_queries, add_registry, add_split,
                     always_include_names, command)


def _args(p: argparse.ArgumentParser) -> None:
    from ..learn.signals import METHODS
    add_registry(p)
    add_queries(p, help="labeled requests to learn from (JSONL)")
    p.add_argument("--out", required=True, type=Path, help="the model file to write (JSON)")
    p.add_argument("--base", default="default", metavar="SCORER",
                   help="the blind scorer the model learns on top of (default: default)")
    p.add_argument("--setting", default="auto", choices=["auto", *METHODS],
                   help="'auto': the dev rule picks the method and weight by inner "
                        "cross-validation; a method: the rule picks its weight")
    p.add_argument("--max-per-tool", type=int, default=None, metavar="N",
                   help="each tool learns from at most its first N labeled requests")
    add_split(p, help="which labeled split to learn from")
    add_always_include(p)
    p.add_argument("--cross-fit", action="store_true",
                   help="also print the cross-fitted estimate, blind vs learned")
    p.add_argument("--force", action="store_true",
                   help="replace --out even when it is not a toolsel model file")


@command("fit", "learn from labeled requests on top of a blind scorer; write a versioned "
         "model file", _args)
def _fit(args: argparse.Namespace) -> int:
    from ..data import load_queries, load_registry
    from ..io import OutputError, check_output_file, refuse_inputs
    from ..learn.artifact import is_model_file, save_model
    from ..learn.model import LearnedScorer
    check_output_file(args.out, force=args.force)  # a link there: refused unless --force
    refuse_inputs([("--out", args.out)], [("--registry", args.registry),
                                          ("--queries", args.queries)])
    if args.out.exists() and not args.out.is_symlink() and not args.force and \
            not is_model_file(args.out):
        raise OutputError(args.out, "exists and is not a toolsel model file; refusing to "
                                    "overwrite it (choose another --out, or pass --force)")
    if args.max_per_tool is not None and args.max_per_tool < 0:
        raise ValueError(f"--max-per-tool must be >= 0, got {args.max_per_tool}")
    reg = load_registry(args.registry)
    from ..datasets import filter_split
    queries = filter_split(load_queries(args.queries, reg), args.split)
    always = always_include_names(args.always_include, reg) or None
    model = LearnedScorer(base=args.base, setting=args.setting,
                          max_per_tool=args.max_per_tool, always_include=always)
    model.fit(reg, queries)
    print(f"{len(reg)} tools, {len(queries)} labeled requests; "
          f"{len(model.labeled_tools_)} tools learned from at least one")
    print(f"dev rule: {model.rule_}")
    rows = sorted(model.selection_, key=lambda r: -r["dev_score"]
                  if r["dev_score"] == r["dev_score"] else 0)[:5]
    for r in rows:
        mark = "*" if r["chosen"] else " "
        print(f"  {mark} {r['setting']:<60} dev {r['dev_score']:.3f}")
    print(f"chosen: {model.setting_.label}")
    if args.cross_fit:
        _print_cross_fit(reg, queries, args.base, always)
    path = save_model(model, reg, args.out, overwrite=args.force)
    print(f"wrote {path}")
    return 0


def _print_cross_fit(reg, queries, scorer, always) -> None:
    from ..eval.stats import paired_comparison
    from ..eval.crossfit import can_cross_fit, cross_fit, learned_label, prepare
    from ..pages.labels import tool_tables
    reason = can_cross_fit(queries)
    if reason:
        print(f"cross-fit: skipped: {reason}")
        return
    prep = prepare(reg, queries, scorer, always_include=always)
    cf = cross_fit(reg, queries, prepared=prep)
    label = learned_label(cf.base)
    print("cross-fitted (each request scored by a model fit without it), learned - blind, "
          "paired 95% bootstrap interval:")
    for metric, k in (("R@k", 5), ("Complete@k", 10)):
        if k not in set(cf.query_metrics["top_k"]):
            continue
        r = paired_comparison(cf.query_metrics, metric, scorers=[label, cf.base],
                              top_k=[k]).iloc[0]
        name = metric.replace("@k", f"@{k}")
        print(f"  {name}: blind {r.mean_b:.3f}, learned {r.mean_a:.3f}, diff {r['diff']:+.3f} "
              f"[{r.diff_low:+.3f}, {r.diff_high:+.3f}], {r.a_wins} won / {r.b_wins} lost")
    print(f"  settings per fold: {', '.join(cf.settings['setting'])}")
    nxt = tool_tables(prep, cf)[1]
    if len(nxt):
        names = ", ".join(nxt["tool"].head(10))
        print(f"next requests worth labeling (tools missed while their fold had no labeled "
              f"request for them, most such misses first): {names}"
              + (f" (+{len(nxt) - 10} more: report page 13)" if len(nxt) > 10 else ""))


# --------------------------------------------------------------------------------------------
# --model on other commands


def add_model_arg(p: argparse.ArgumentParser) -> None:
    """``--model FILE``: also score with a model written by ``toolsel fit``."""
    p.add_argument("--model", type=Path, default=None, metavar="FILE",
                   help="also score with this model file (written by `toolsel fit`), labeled "
                        "<scorer>+labels")


def with_model(scorers, model_path, registry, queries=()) -> dict:
    """``scorers`` (names) as ``{label: scorer}`` plus the model of ``model_path`` under
    ``<base>+labels``; prints a note when some of ``queries`` were used to fit it (its numbers
    on them are in-sample)."""
    from ..eval.crossfit import learned_label
    from ..learn.artifact import load_model
    model = load_model(model_path, registry)
    label = learned_label(model.base)
    out = {s: s for s in scorers if s != label}
    out[label] = model
    seen = set(model.train_ids_)
    inside = sum(q.id in seen for q in queries)
    if inside:
        print(f"note: {inside} of the {len(queries)} requests evaluated were used to fit "
              f"{model_path}: {label}'s numbers on them are in-sample (optimistic); "
              "`toolsel fit --cross-fit` gives the cross-fitted estimate")
    return out
