"""What labeled requests buy, measured: cross-fitted blind vs learned per style and scorer, the
learning curve, every method, and the cost of fitting and selecting with a learned model.

Two studies (both by default):

``quality``
    On the six bundled sets (the five ``data/styles`` and the workspace registry with
    ``data/requests.jsonl``), for each scorer: 5-fold cross-fitting over *all* labeled
    requests of the set (group folds: near-duplicates and conversations together; each fold's
    model picks its setting by the dev rule on its training folds only), per-request R@5 and
    Complete@10 blind and learned, paired 95% bootstrap intervals of learned - blind. Also
    each method forced (its weight chosen by the rule, which may keep blind; and at weight 1
    with no rule) and the learning curve (at most 0, 1, 2, 5, all labeled requests per tool)
    for ``default``. Writes
    ``learn_styles.csv``, ``learn_methods.csv``, ``learn_settings.csv``, ``learn_curve.csv``.
``many``
    The many-labels regime (several labeled requests per tool, as on public tool-retrieval
    sets with about 5 per tool), built from this repository's data: ``workspace-all`` is the
    workspace registry (61 tools) with every labeled request there is, ``data/requests.jsonl``,
    ``data/queries.jsonl`` and each labeled turn of ``data/conversations.jsonl`` (a
    conversation's turns share a fold): 279 requests, about 6 per tool. Cross-fitted per
    scorer with 2 folds (half the labels to learn from, half to evaluate, as the public
    targets are stated) and with 5 folds; each method forced (weight by the rule) at 5 folds. Writes
    ``learn_many.csv``. The quality study also includes ``workspace-all`` among its sets.
``cost``
    ``LearnedScorer(base="default").fit`` on a synthetic registry (``toolsel.synthetic``) of
    ``--tools`` tools with ``--labels`` labeled requests: fit seconds and peak resident memory
    (``ru_maxrss``, the whole process); then ``Selector.select`` p50/p95 on 3-5-sentence
    requests (the marketplace style's), blind and learned interleaved request by request, the
    request-vector cache cleared before each request (a new turn). Writes
    ``learn_cost.csv`` (timings: a benchmark table, not a report). Synthetic labels name each
    tool once, so the dev rule keeps them unused; the timed model uses the costliest setting
    (``fusion`` of all three signals) on the same fitted evidence.

    .venv/bin/python benchmarks/bench_learn.py --out reports/benchmarks
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import copy
import dataclasses

import numpy as np
import pandas as pd

from toolsel import Selector, load_queries, load_registry
from toolsel.data import Query
from toolsel.datasets import load_conversations, load_style
from toolsel.eval.crossfit import cross_fit, learned_label, learning_curve, prepare
from toolsel.eval.metrics import evaluate
from toolsel.eval.stats import paired_comparison
from toolsel.io import write_table
from toolsel.learn import LearnedScorer, Setting
from toolsel.learn.rule import required_ranks
from toolsel.scorers.base import get_scorer

ROOT = Path(__file__).resolve().parents[1]
SETS = ("api", "plugin", "pooled", "marketplace", "openapi", "workspace", "workspace-all")
METHODS = ("expand", "centroid", "knn", "fusion")
METRICS = (("R@5", "R@k", 5), ("Complete@10", "Complete@k", 10))


def load_set(name: str):
    if name == "workspace":
        reg = load_registry(ROOT / "data" / "registry.json")
        return reg, load_queries(ROOT / "data" / "requests.jsonl", reg)
    if name == "workspace-all":
        reg = load_registry(ROOT / "data" / "registry.json")
        qs = load_queries(ROOT / "data" / "requests.jsonl", reg) + \
            load_queries(ROOT / "data" / "queries.jsonl", reg)
        for conv in load_conversations(ROOT / "data" / "conversations.jsonl", reg):
            qs += [Query(f"{conv.id}.turn{i}", t.user, t.expected, split=conv.split,
                         metadata={"conversation": conv.id})
                   for i, t in enumerate(conv.turns, start=1) if t.expected]
        return reg, qs
    return load_style(name)


def _paired(cf, **extra) -> list[dict]:
    label = learned_label(cf.base)
    rows = []
    for col, metric, k in METRICS:
        # request groups (near-duplicates, one conversation) are resampled whole, as the
        # folds keep them together; one comparison per row (the family of one)
        r = paired_comparison(cf.query_metrics, metric, scorers=[label, cf.base], top_k=[k],
                              family=1, cluster="group").iloc[0]
        rows.append({**extra, "metric": col, "blind": r["mean_b"], "learned": r["mean_a"],
                     "diff": r["diff"], "diff_low": r["diff_low"], "diff_high": r["diff_high"],
                     "won": int(r["a_wins"]), "lost": int(r["b_wins"]),
                     "n_queries": int(r["a_wins"] + r["b_wins"] + r["ties"])})
    return rows


def quality(sets, scorers, out: Path | None) -> None:
    styles, methods, settings, curves = [], [], [], []
    for name in sets:
        reg, qs = load_set(name)
        for scorer in scorers:
            t0 = time.perf_counter()
            prep = prepare(reg, qs, scorer)
            cf = cross_fit(reg, qs, prepared=prep, ks=(5, 10))
            styles += _paired(cf, style=name, scorer=scorer)
            settings += [{"style": name, "scorer": scorer, **r}
                         for r in cf.settings.to_dict("records")]
            if scorer == "default":
                for method in METHODS:
                    # the method with its weight chosen by the rule (which may keep blind),
                    # and the method at weight 1 with no rule at all
                    m = cross_fit(reg, qs, prepared=prep, ks=(5, 10), setting=method)
                    methods += _paired(m, style=name, scorer=scorer, method=method,
                                       weight="rule")
                    fixed = Setting(method, 1.0, mix=(1 / 3, 1 / 3, 1 / 3)
                                    if method == "fusion" else (0.0, 0.0, 0.0))
                    m = cross_fit(reg, qs, prepared=prep, ks=(5, 10), setting=fixed)
                    methods += _paired(m, style=name, scorer=scorer, method=method,
                                       weight="1 (no rule)")
                curve = learning_curve(prep)
                curves += [{"style": name, "scorer": scorer, **r}
                           for r in curve.to_dict("records")]
            r5 = [r for r in styles if r["style"] == name and r["scorer"] == scorer][0]
            print(f"{name:12s} {scorer:10s} R@5 {r5['blind']:.3f} -> {r5['learned']:.3f} "
                  f"[{r5['diff_low']:+.3f}, {r5['diff_high']:+.3f}] "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    tables = {"learn_styles.csv": pd.DataFrame(styles),
              "learn_methods.csv": pd.DataFrame(methods),
              "learn_settings.csv": pd.DataFrame(settings),
              "learn_curve.csv": pd.DataFrame(curves)}
    for file, table in tables.items():
        print(f"\n{file}\n{table.to_string(index=False, float_format=lambda v: f'{v:.3f}')}")
        if out is not None:
            write_table(table, out / file)


def appended(cf, prep, scorer: str, per_tool: int = 5) -> list[dict]:
    """The crude trick on ``cf``'s folds: each fold's training requests appended to their
    tools' descriptions (at most ``per_tool`` each), ``scorer`` refit blind on that registry,
    the fold's held-out requests scored; paired with the blind scores of ``cf``."""
    reg, qs = prep.registry, prep.queries
    scores = np.empty_like(cf.blind_scores)
    for f in range(int(cf.folds.max()) + 1):
        train, test = np.flatnonzero(cf.folds != f), np.flatnonzero(cf.folds == f)
        examples: dict[str, list[str]] = {}
        for j in train:
            for name in qs[j].expected:
                if len(examples.setdefault(name, [])) < per_tool:
                    examples[name].append(qs[j].query)
        tools = [dataclasses.replace(t, description=t.description + " Example requests: "
                                     + " | ".join(examples[t.name]))
                 if t.name in examples else t for t in reg]
        sc = get_scorer(scorer).fit(tools)
        scores[test] = sc.score_many([qs[j].query for j in test])
    cand = prep.scorer.candidates_
    required = [[t for t in (reg.index(n) for n in q.expected) if cand[t]] for q in qs]
    rows = []
    for col, metric, k in METRICS:
        per = [evaluate(required_ranks(s, required, cand), [k], [len(r) for r in required])
               for s in (scores, cf.blind_scores)]
        a, b = per[0][metric][:, 0], per[1][metric][:, 0]
        table = pd.DataFrame({"scorer": ["appended"] * len(qs) + ["blind"] * len(qs),
                              "top_k": k, "query_id": [q.id for q in qs] * 2,
                              "group": np.concatenate([cf.groups, cf.groups]),
                              metric: np.concatenate([a, b])})
        r = paired_comparison(table, metric, scorers=["appended", "blind"], top_k=[k],
                              cluster="group").iloc[0]
        rows.append({"metric": col, "blind": r["mean_b"], "learned": r["mean_a"],
                     "diff": r["diff"], "diff_low": r["diff_low"],
                     "diff_high": r["diff_high"], "won": int(r["a_wins"]),
                     "lost": int(r["b_wins"]),
                     "n_queries": int(r["a_wins"] + r["b_wins"] + r["ties"])})
    return rows


def many(scorers, out: Path | None) -> None:
    reg, qs = load_set("workspace-all")
    per_tool = sum(len(q.expected) for q in qs) / len(reg)
    print(f"workspace-all: {len(reg)} tools, {len(qs)} labeled requests "
          f"({per_tool:.1f} labels per tool)")
    rows = []
    for scorer in scorers:
        prep = prepare(reg, qs, scorer)
        for k in (2, 5):
            cf = cross_fit(reg, qs, prepared=prep, ks=(5, 10), k=k)
            rows += _paired(cf, set="workspace-all", scorer=scorer, folds=k, method="rule",
                            settings="; ".join(cf.settings["setting"]))
            rows += [{"set": "workspace-all", "scorer": scorer, "folds": k,
                      "method": "appended", "settings": "examples in descriptions (<= 5)",
                      **r} for r in appended(cf, prep, scorer)]
            if scorer == "default" and k == 5:
                for method in METHODS:
                    m = cross_fit(reg, qs, prepared=prep, ks=(5, 10), k=k, setting=method)
                    rows += _paired(m, set="workspace-all", scorer=scorer, folds=k,
                                    method=method, settings="; ".join(m.settings["setting"]))
    table = pd.DataFrame(rows)
    print(table.drop(columns="settings").to_string(
        index=False, float_format=lambda v: f"{v:.3f}"))
    if out is not None:
        write_table(table, out / "learn_many.csv")


FAIR_BASES = ("default", "bm25", "embedding")
FAIR_CANDIDATES = ("auto", "knn", "tool2vec", "ltr")
SPLITS = (("request folds", None), ("tool-held-out folds", 0.3))


def _single_base(prep, base: str):
    """``prep`` offering one blind scorer to the rule."""
    return dataclasses.replace(prep, blinds={base: prep.blinds[base]})


def fair(sets, candidate_sets, out: Path | None) -> None:
    """Per set and split, blind vs each candidate (a method forced on ``default``, the rule
    picking its weight and interleaving) vs the rule's choice over three blind scorers
    (``auto``), with coverage subsets and intervals resampling request groups."""
    from toolsel.eval.crossfit import gain_table
    rows = []
    for name in sets:
        reg, qs = load_set(name)
        prep = prepare(reg, qs, "default", bases=list(FAIR_BASES))
        cands = FAIR_CANDIDATES if name in candidate_sets else ("auto",)
        for split, share in SPLITS:
            for cand in cands:
                t0 = time.perf_counter()
                p = prep if cand == "auto" else _single_base(prep, "default")
                cf = cross_fit(reg, qs, prepared=p, ks=(5, 10), tool_holdout=share,
                               setting="auto" if cand == "auto" else cand)
                chosen = "; ".join(f"{b}: {s}" for b, s in zip(cf.settings["base"],
                                                                cf.settings["setting"]))
                for r in gain_table(cf).to_dict("records"):
                    rows.append({"set": name, "split": split, "candidate": cand, **r,
                                 "chosen_per_fold": chosen})
                r5 = rows[-8]
                print(f"{name:13s} {split:19s} {cand:8s} R@5 {r5['blind']:.3f} -> "
                      f"{r5['learned']:.3f} [{r5['low']:+.3f}, {r5['high']:+.3f}] "
                      f"({time.perf_counter() - t0:.0f} s)", flush=True)
    if out is not None:
        write_table(pd.DataFrame(rows), out / "learn_fair.csv")


def estimates(sets, out: Path | None) -> None:
    """Per set, ``toolsel fit`` on one half of the labeled requests (group folds), its
    estimate beside what the shipped model, and the learned procedure had it shipped,
    realize on the other half."""
    from toolsel.eval.crossfit import fit_estimated
    from toolsel.learn.groups import group_folds, request_groups
    est_rows = []
    for name in sets:
        reg, qs = load_set(name)
        r = _estimate_vs_realized(name, reg, qs, request_groups(qs), fit_estimated,
                                  group_folds)
        est_rows.append(r)
        print(f"{name:13s} estimate {r['estimate_diff']:+.3f} [{r['estimate_low']:+.3f}, "
              f"{r['estimate_high']:+.3f}], ships {r['ships']}, realized "
              f"{r['realized_diff']:+.3f} [{r['realized_low']:+.3f}, {r['realized_high']:+.3f}]"
              f"; the procedure {r['procedure_diff']:+.3f} [{r['procedure_low']:+.3f}, "
              f"{r['procedure_high']:+.3f}]", flush=True)
    if out is not None:
        write_table(pd.DataFrame(est_rows), out / "learn_estimate.csv")


def _estimate_vs_realized(name, reg, qs, groups, fit_estimated, group_folds) -> dict:
    """``toolsel fit`` on one half of the requests (group folds), its shipped model scored
    on the other half: the estimate beside the realized R@5 gain, with coverage of the
    evaluated half by the fitted half's labels."""
    from toolsel.eval.inference import paired_difference as clustered_gain
    half = group_folds(groups, 2)
    learn = [q for q, h in zip(qs, half) if h == 0]
    test = [q for q, h in zip(qs, half) if h == 1]
    p = prepare(reg, learn, "default", bases=list(FAIR_BASES))
    model, est = fit_estimated(reg, learn, prepared=p)
    g = est.gains[(est.gains["metric"] == "R@5") & (est.gains["subset"] == "every request")]
    texts = [q.query for q in test]
    blind = get_scorer("default").fit(reg).score_many(texts)
    req = [[reg.index(n) for n in q.expected if model.candidates_[reg.index(n)]] for q in test]
    rb = required_ranks(blind, req, model.candidates_)
    rl = required_ranks(model.score_many(texts), req, model.candidates_)
    r5b = np.array([np.mean(r <= 5) if len(r) else np.nan for r in rb])
    r5l = np.array([np.mean(r <= 5) if len(r) else np.nan for r in rl])
    test_groups = np.asarray(groups)[half == 1]
    real = clustered_gain(r5l, r5b, test_groups)
    # the learned procedure as it would have shipped had the gate passed (the same fit)
    proc = model
    if not est.ships:
        proc = copy.copy(p.scorer)
        proc.learn(p.registry, p.queries, p.blinds, p.vectors)
    rp = required_ranks(proc.score_many(texts), req, model.candidates_)
    r5p = np.array([np.mean(r <= 5) if len(r) else np.nan for r in rp])
    pg = clustered_gain(r5p, r5b, test_groups)
    labeled = set(model.labeled_tools_)
    unc = np.array([not any(reg[t].name in labeled for t in r) if r else False for r in req])
    u = clustered_gain(r5l[unc], r5b[unc], test_groups[unc])
    return {"set": name, "n_learn": len(learn), "n_test": len(test),
            "shipped": f"{model.base_name_}: {model.setting_.label}", "ships": est.ships,
            "estimate_diff": float(g["diff"].iloc[0]), "estimate_low": float(g["low"].iloc[0]),
            "estimate_high": float(g["high"].iloc[0]),
            "realized_blind": real["mean_b"], "realized_learned": real["mean_a"],
            "realized_diff": real["diff"], "realized_low": real["low"],
            "realized_high": real["high"], "realized_won": real["won"],
            "realized_lost": real["lost"],
            "covered_by_estimate": bool(g["low"].iloc[0] <= real["diff"] <= g["high"].iloc[0]),
            "procedure": f"{proc.base_name_}: {proc.setting_.label}",
            "procedure_diff": pg["diff"], "procedure_low": pg["low"],
            "procedure_high": pg["high"], "procedure_won": pg["won"],
            "procedure_lost": pg["lost"],
            "procedure_covered": bool(g["low"].iloc[0] <= pg["diff"] <= g["high"].iloc[0]),
            "uncovered_n": u["n"], "uncovered_blind": u["mean_b"],
            "uncovered_learned": u["mean_a"], "uncovered_won": u["won"],
            "uncovered_lost": u["lost"]}


def _rss_mb() -> float:
    # ru_maxrss is in kilobytes on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cost(n_tools: int, n_labels: int, n_requests: int, repeat: int, out: Path | None) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_default import style_queries
    from toolsel.scorers.embedding import QUERY_CACHE
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    reg = synthetic_registry(n_tools, seed=0)
    labels = synthetic_queries(reg, n_labels, seed=0)
    requests = style_queries(("marketplace",), min_sentences=3)[:n_requests]
    t0 = time.perf_counter()
    blind = Selector(reg, "default", top_k=10)
    blind_fit = time.perf_counter() - t0
    rss_before = _rss_mb()
    t0 = time.perf_counter()
    model = LearnedScorer(base=blind.scorer).fit(reg, labels)
    fit_s = time.perf_counter() - t0
    rss_peak = _rss_mb()
    chosen = model.setting_.label
    # time the costliest setting whatever the rule chose: the ltr stage interleaved with
    # blind (every feature of every tool, three rankings a request), its coefficients fit on
    # the same labels
    from toolsel.learn.groups import request_groups
    from toolsel.learn.rule import fit_setting
    texts = [q.query for q in labels]
    tools_of = [[reg.index(n) for n in q.expected] for q in labels]
    model.setting_ = fit_setting(
        Setting("ltr", interleave=True), model.base_.score_many(texts),
        model.evidence_.vectors, tools_of, tools_of, model.candidates_,
        request_groups(labels), model.description_vectors_)
    learned = Selector(reg, model, top_k=10)
    for q in requests[:5]:  # warm-up
        blind.select(q)
        learned.select(q)
    ms = {"blind": [], "learned": []}
    pair = [("blind", blind), ("learned", learned)]
    for rep in range(repeat):
        for q in requests:
            # the order alternates between passes: neither runs always right after the other
            for name, sel in (pair if rep % 2 == 0 else pair[::-1]):
                QUERY_CACHE.clear()  # a new turn: its request is not encoded yet
                t = time.perf_counter()
                sel.select(q)
                ms[name].append((time.perf_counter() - t) * 1000)
    rows = []
    for name, v in ms.items():
        v = sorted(v)
        rows.append({"selector": name, "n_tools": n_tools, "n_labels": n_labels,
                     "setting_chosen": chosen if name == "learned" else "blind",
                     "setting_timed": model.setting_.label if name == "learned" else "blind",
                     "n_labeled_tools": len(model.labeled_tools_) if name == "learned" else 0,
                     "fit_s": round(fit_s if name == "learned" else blind_fit, 2),
                     "rss_before_fit_mb": round(rss_before, 1),
                     "peak_rss_mb": round(rss_peak, 1) if name == "learned" else None,
                     "n_requests": len(requests), "n_timings": len(v),
                     "p50_ms": round(v[len(v) // 2], 2),
                     "p95_ms": round(v[int(0.95 * (len(v) - 1))], 2),
                     "mean_ms": round(statistics.fmean(v), 2), "cpus": os.cpu_count(),
                     # other processes share the cores: the 1-minute load when timing ended
                     "load_avg_1m": round(os.getloadavg()[0], 1)})
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    if out is not None:
        write_table(table, out / "learn_cost.csv")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=["fair", "estimate", "quality", "many", "cost", "all"],
                    default="all")
    ap.add_argument("--candidate-sets", default="workspace-all,plugin,pooled",
                   help="sets where every candidate is also run forced (fair study)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--scorers", default="default,bm25,embedding")
    ap.add_argument("--tools", type=int, default=4000)
    ap.add_argument("--labels", type=int, default=2000)
    ap.add_argument("--requests", type=int, default=60, help="3-5-sentence requests timed")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--out", type=Path, help="folder for the CSVs (reports/benchmarks)")
    args = ap.parse_args()
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    if args.study in ("fair", "all"):
        fair(args.sets.split(","), args.candidate_sets.split(","), args.out)
    if args.study in ("estimate", "all"):
        estimates(args.sets.split(","), args.out)
    if args.study in ("quality", "all"):
        quality(args.sets.split(","), args.scorers.split(","), args.out)
    if args.study in ("many", "all"):
        many(args.scorers.split(","), args.out)
    if args.study in ("cost", "all"):
        cost(args.tools, args.labels, args.requests, args.repeat, args.out)


if __name__ == "__main__":
    main()
