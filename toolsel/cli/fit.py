"""``toolsel fit``: learn from labeled requests; write a versioned model file (JSON).

The model is what :class:`toolsel.learn.LearnedScorer` learns on top of a blind scorer;
``Selector(..., model=FILE)`` and ``--model FILE`` on ``sweep``, ``check`` and ``report`` load
it. ``--cross-fit`` also prints the honest estimate: every request scored by a model fit on the
other folds (:mod:`toolsel.eval.crossfit`), blind vs learned with paired 95% intervals.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..visible import visible
from .common import (add_always_include, add_queries, add_registry, add_split,
                     always_include_names, command, file_path)


def _args(p: argparse.ArgumentParser) -> None:
    from ..learn.signals import METHODS
    add_registry(p)
    add_queries(p, help="labeled requests to learn from (JSONL)")
    p.add_argument("--out", required=True, type=file_path, help="the model file to write (JSON)")
    p.add_argument("--base", default="default", metavar="SCORER",
                   help="the blind scorer the labels are measured against, and the first "
                        "the rule may learn on top of (default: default)")
    p.add_argument("--bases", default=",".join(DEFAULT_BASES), metavar="LIST",
                   help="comma-separated blind scorers the rule may learn on top of; --base "
                        f"is always among them (default: {','.join(DEFAULT_BASES)})")
    p.add_argument("--setting", default="auto", choices=["auto", *METHODS],
                   help="'auto': the dev rule picks the method and weight by inner "
                        "cross-validation; a method: the rule picks its weight")
    p.add_argument("--max-per-tool", type=int, default=None, metavar="N",
                   help="each tool learns from at most its first N labeled requests")
    add_split(p, help="which labeled split to learn from")
    add_always_include(p)
    p.add_argument("--cross-fit", action="store_true",
                   help="kept for old command lines: the cross-fitted estimate is always "
                        "computed and printed (it decides what ships)")
    p.add_argument("--force", action="store_true",
                   help="replace --out even when it is not a toolsel model file")


#: The blind scorers ``toolsel fit`` lets the rule learn on top of.
DEFAULT_BASES = ("default", "bm25", "embedding")


@command("fit", "learn from labeled requests on top of a blind scorer; estimate the gain by "
         "cross-fitting; write the model the estimate evaluated (blind when no gain is shown)",
         _args)
def _fit(args: argparse.Namespace) -> int:
    from ..data import load_queries, load_registry
    from ..datasets import filter_split
    from ..eval.crossfit import fit_estimated, prepare
    from ..io import OutputError, check_output_file, refuse_inputs
    from ..learn.artifact import is_model_file, save_model
    from ..learn.groups import request_groups
    from ..scorers.base import get_scorer
    check_output_file(args.out, force=args.force)  # a link there: refused unless --force
    refuse_inputs([("--out", args.out)], [("--registry", args.registry),
                                          ("--queries", args.queries)])
    if args.out.exists() and not args.out.is_symlink() and not args.force and \
            not is_model_file(args.out):
        raise OutputError(args.out, "exists and is not a toolsel model file; refusing to "
                                    "overwrite it (choose another --out, or pass --force)")
    if args.max_per_tool is not None and args.max_per_tool < 0:
        raise ValueError(f"--max-per-tool must be >= 0, got {args.max_per_tool}")
    bases = [b.strip() for b in args.bases.split(",") if b.strip()]
    bases = list(dict.fromkeys([args.base, *bases]))
    for b in bases:
        get_scorer(b)  # an unknown scorer fails before any model is loaded
    reg = load_registry(args.registry)
    queries = filter_split(load_queries(args.queries, reg), args.split)
    always = always_include_names(args.always_include, reg) or None
    n_groups = len(set(request_groups(queries).tolist())) if queries else 0
    named = {n for q in queries for n in q.expected}
    print(f"{len(reg)} tools, {len(queries)} labeled requests ({n_groups} groups once "
          f"near-duplicates and conversations are joined); {len(named)} tools named by a "
          f"label, {len(reg) - len(named)} by none")
    prep = prepare(reg, queries, args.base, always_include=always, bases=bases)
    model, est = fit_estimated(reg, queries, args.base, setting=args.setting,
                               max_per_tool=args.max_per_tool, prepared=prep)
    print(f"dev rule: {model.rule_}")
    _print_selection(model, args.base)
    _print_estimate(est)
    print(f"decision: {visible(est.sentence)}")
    path = save_model(model, reg, args.out, overwrite=args.force)
    print(f"wrote {visible(path)} ({model.base_name_}, {model.setting_.label})")
    return 0


def _print_selection(model, reference: str) -> None:
    """The rule's table on every labeled request: the chosen candidate, the best others and
    the reference blind scorer's row, always."""
    rows = [r for r in model.selection_ if r["dev_score"] == r["dev_score"]]
    if not rows:
        print(f"chosen: {model.base_name_}, {model.setting_.label} (nothing to validate on)")
        return
    blind = next((r for r in rows if r.get("base", reference) == reference and
                  r["method"] == "blind"), None)
    top = sorted(rows, key=lambda r: -r["dev_score"])[:5]
    shown = top + ([blind] if blind is not None and blind not in top else [])
    n = rows[0]["n_requests"]
    print(f"the rule on all labeled requests (dev R@5 over {n} held-out requests; * chosen; "
          "- not eligible: below blind on requests whose tools had no label):")
    for r in shown:
        mark = "*" if r["chosen"] else ("-" if not r.get("eligible", True) else " ")
        name = f"{r.get('base', reference)}: {r['setting']}"
        print(f"  {mark} {name:<58} dev {r['dev_score']:.3f}")


def _print_estimate(est) -> None:
    if est.cross_fit is None:
        return
    cf = est.cross_fit
    print(f"cross-fitted estimate of this whole procedure ({int(cf.folds.max()) + 1} folds; "
          "each fold's model chose and learned from its training requests only; learned - "
          "blind, 95% intervals resampling request groups):")
    g = est.gains
    for metric in dict.fromkeys(g["metric"]):
        for _, r in g[g["metric"] == metric].iterrows():
            if not r["n"]:
                continue
            what = metric if r["subset"] == "every request" else \
                f"  tools labeled in training: {r['subset']}"
            print(f"  {what:<34} n {int(r['n']):>5}  blind {r['blind']:.3f}  learned "
                  f"{r['learned']:.3f}  {r['diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]  "
                  f"{int(r['won'])} won / {int(r['lost'])} lost")
    per_fold = ", ".join(f"{b}: {s}" for b, s in zip(cf.settings["base"], cf.settings["setting"]))
    print(f"  chosen per fold: {per_fold}")


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
    from ..learn.groups import normalized_text
    model = load_model(model_path, registry)
    label = learned_label(model.base_name_)
    out = {s: s for s in scorers if s != label}
    out[label] = model
    seen = set(model.train_ids_)
    texts = {normalized_text(t) for t in model.evidence_.texts}
    # in-sample by id, or by text under another id (the same request relabeled)
    inside = sum(q.id in seen or normalized_text(q.query) in texts for q in queries)
    if inside:
        print(f"note: {inside} of the {len(queries)} requests evaluated were used to fit "
              f"{visible(model_path)}: {label}'s numbers on them are in-sample (optimistic); "
              "`toolsel fit --cross-fit` gives the cross-fitted estimate")
    return out
