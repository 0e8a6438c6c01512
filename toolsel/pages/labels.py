"""The page "What your labels buy" (notebook 13): its tables, and its sentences from them.

:func:`label_tables` runs the cross-fitted comparison (:mod:`toolsel.eval.crossfit`) of each
blind scorer against the same scorer learned from the labeled requests, on one registry, and
returns plain DataFrames; :func:`label_sentences` renders the page's findings from those tables
(:mod:`toolsel.report.claims`: every number cites the CSV it is read from). The notebook only
calls the two and shows what they return, so the page says the right thing on any registry;
:func:`skip_reason` says, in one sentence, why a registry cannot be cross-fitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import Query, Registry
from ..eval.crossfit import (CURVE_CAPS, GAIN_SUBSETS, can_cross_fit, cross_fit, gain_table,
                             learning_curve, prepare)
from ..eval.inference import level_words
from ..eval.stats import paired_comparison
from ..learn.rule import RULE, required_ranks
from ..report import claims

__all__ = ["LabelTables", "label_tables", "label_sentences", "skip_reason", "METRICS",
           "FILES", "tool_tables", "model_table", "model_sentence", "MODEL_FILE"]

#: The page's two metrics: (column in the comparison table, metric of the sweep tables, k).
METRICS = (("R@5", "R@k", 5), ("Complete@10", "Complete@k", 10))
#: The CSV each table is written to.
FILES = {"data": "data.csv", "comparison": "comparison.csv", "coverage": "coverage.csv",
         "settings": "settings.csv", "curve": "curve.csv", "tools": "tools.csv",
         "next": "next_to_label.csv"}


@dataclass
class LabelTables:
    """The page's tables: ``data`` (one row of counts), ``comparison`` (scorer × metric:
    blind, learned, paired difference and interval resampling request groups, wins, losses),
    ``coverage`` (the same per coverage subset: requests all, some or none of whose tools had
    a labeled request in their fold's training), ``settings`` (scorer ×
    fold: what the selection rule picked), ``curve`` (labels per tool → R@5, Complete@10),
    ``tools`` (per required tool: requests found blind / learned at 5) and ``next`` (tools
    missed while their fold had no labeled request for them: the next to label)."""

    data: pd.DataFrame
    comparison: pd.DataFrame
    coverage: pd.DataFrame
    settings: pd.DataFrame
    curve: pd.DataFrame
    tools: pd.DataFrame
    next: pd.DataFrame

    def items(self):
        return [(name, getattr(self, name)) for name in FILES]


def skip_reason(queries: Sequence[Query]) -> str | None:
    """Why these labeled requests cannot be cross-fitted (one sentence), or ``None``."""
    if not queries:
        return "there are no labeled requests to learn from"
    return can_cross_fit(list(queries))


def label_tables(registry: Registry, queries: Sequence[Query],
                 scorers: Sequence[str] = ("default", "bm25", "embedding"), *,
                 curve_scorer: str = "default", caps: Sequence[int | None] = CURVE_CAPS,
                 n_boot: int = 2000, seed: int = 0) -> LabelTables:
    """Cross-fit every scorer blind vs learned on ``queries`` and build the page's tables."""
    queries = list(queries)
    reason = skip_reason(queries)
    if reason:
        raise ValueError(reason)
    comp, cov, sets = [], [], []
    cf_main = prep_main = None
    for name in scorers:
        prep = prepare(registry, queries, name)
        cf = cross_fit(registry, queries, prepared=prep, ks=(5, 10))
        if name == curve_scorer or cf_main is None:
            cf_main, prep_main = cf, prep
        # the page's family: one learned-vs-blind comparison per scorer on each metric
        for r in gain_table(cf, family=len(scorers)).to_dict("records"):
            row = {"scorer": name, "metric": r["metric"], "blind": r["blind"],
                   "learned": r["learned"], "diff": r["diff"], "diff_low": r["low"],
                   "diff_high": r["high"], "won": r["won"], "lost": r["lost"],
                   "n_queries": r["n"], "family": r["family"], "verdict": r["verdict"]}
            if r["subset"] == GAIN_SUBSETS[0]:
                comp.append(row)
            elif r["n"]:
                cov.append({"scorer": name, "coverage": r["subset"], **row})
        for _, row in cf.settings.iterrows():
            sets.append({"scorer": name, **row.to_dict()})
    comparison = pd.DataFrame(comp)
    coverage = pd.DataFrame(cov, columns=["scorer", "coverage", "metric", "blind", "learned",
                                          "diff", "diff_low", "diff_high", "won", "lost",
                                          "n_queries", "family", "verdict"])
    settings = pd.DataFrame(sets)
    # the curve's uncapped point is the comparison's own cross-fit: not fitted twice
    curve = learning_curve(prep_main, caps=caps, uncapped=cf_main).assign(scorer=cf_main.base)
    curve = curve[["scorer", "labels_per_tool", "R@5", "R@5_low", "R@5_high", "Complete@10",
                   "n_queries", "n_labeled_tools"]]
    tools, nxt = tool_tables(prep_main, cf_main)
    counts = {}
    for q in queries:
        for t in q.expected:
            counts[t] = counts.get(t, 0) + 1
    data = pd.DataFrame([{
        "n_tools": len(registry), "n_requests": len(queries),
        "n_evaluated": int(comparison["n_queries"].iloc[0]) if len(comparison) else 0,
        "n_groups": int(len(np.unique(cf_main.groups))),
        "n_folds": int(cf_main.folds.max()) + 1,
        "n_labeled_tools": len(counts),
        "n_tools_2plus": sum(c >= 2 for c in counts.values()),
        "n_unlabeled_tools": len(registry) - len(counts),
        "curve_scorer": cf_main.base}])
    return LabelTables(data, comparison, coverage, settings, curve, tools, nxt)


def tool_tables(prep, cf) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per required tool: requests that need it, found at 5 blind / learned (cross-fitted);
    and the tools missed when their fold's model had no labeled request for them."""
    reg, qs = prep.registry, prep.queries
    cand = prep.scorer.candidates_
    req = [[reg.index(n) for n in q.expected if cand[reg.index(n)]] for q in qs]
    rb = required_ranks(cf.blind_scores, req, cand)
    rl = required_ranks(cf.learned_scores, req, cand)
    rows: dict[int, dict] = {}
    for i, ts in enumerate(req):
        model = cf.models[cf.folds[i]]
        seen = set(model.labeled_tools_)
        for t, b, l in zip(ts, rb[i], rl[i]):
            r = rows.setdefault(t, {"tool": reg[t].name, "n_requests": 0, "found_blind": 0,
                                    "found_learned": 0, "missed_cold": 0})
            r["n_requests"] += 1
            r["found_blind"] += int(b <= 5)
            r["found_learned"] += int(l <= 5)
            if l > 5 and b > 5 and reg[t].name not in seen:  # still missed, no label
                r["missed_cold"] += 1
    tools = pd.DataFrame(sorted(rows.values(), key=lambda r: reg.index(r["tool"])),
                         columns=["tool", "n_requests", "found_blind", "found_learned",
                                  "missed_cold"])
    tools["change"] = tools["found_learned"] - tools["found_blind"]
    tools["gained"] = tools["change"] > 0
    tools["lost"] = tools["change"] < 0
    nxt = tools[tools["missed_cold"] > 0].copy()
    nxt["order"] = [reg.index(n) for n in nxt["tool"]]
    nxt = nxt.sort_values(["missed_cold", "n_requests", "order"],
                          ascending=[False, True, True], kind="stable")
    nxt = nxt.drop(columns="order").reset_index(drop=True)
    nxt.insert(0, "rank", np.arange(1, len(nxt) + 1))
    return tools, nxt


def _verdict(word: str) -> str:
    """The one rule's word (:func:`toolsel.eval.inference.verdict`) for learned - blind."""
    return {"ahead": "the labels help", "behind": "the labels hurt",
            "tie": "a tie: the interval includes zero"}[word]


def _requests(n: int, word: str) -> str:
    """"1 request won", "2 requests won": the noun agrees with the count (the count itself is
    a cited number placed before this text)."""
    return f"{'request' if n == 1 else 'requests'} {word}"


def label_sentences(t: LabelTables) -> list[claims.Claim]:
    """The page's findings, each computed from the table it cites (:data:`FILES`)."""
    src = FILES
    out = []
    d = t.data.iloc[0]

    def noun(col: str, one: str, many: str) -> str:  # the word agrees with the count
        return one if int(d[col]) == 1 else many

    out.append(claims.counts(
        t.data, src["data"],
        "{n} labeled " + noun("n_requests", "request", "requests") + " ({g} "
        + noun("n_groups", "group", "groups") + " once near-duplicates and conversations are "
        "joined) over {nt} " + noun("n_tools", "tool", "tools") + ", {e} of them "
        "needing a tool outside always-include (the requests every table below counts): {lt} "
        + noun("n_labeled_tools", "tool is", "tools are") + " named by a labeled request, "
        "{l2} by two or more, and {u} by none.",
        n="n_requests", g="n_groups", nt="n_tools", e="n_evaluated", lt="n_labeled_tools",
        l2="n_tools_2plus", u="n_unlabeled_tools"))
    for scorer in dict.fromkeys(t.comparison["scorer"]):
        parts = []
        for col, _, _ in METRICS:
            row = t.comparison[(t.comparison["scorer"] == scorer) &
                               (t.comparison["metric"] == col)].iloc[0]
            w = {"scorer": scorer, "metric": col}
            parts.append(claims.fill(
                t.comparison, src["comparison"],
                f"{col} {{b}} blind, {{l}} learned ({{d}} points, ", where=w,
                b=("blind", "value", "pct", 1), l=("learned", "value", "pct", 1),
                d=("diff", "value", "spoints", 1))
                + claims.literal("{lvl}", lvl=level_words(int(row["family"])))
                + claims.fill(
                t.comparison, src["comparison"],
                f" interval [{{lo}}, {{hi}}]; {{w}} {_requests(int(row['won']), 'won')}, {{x}} "
                f"lost: {_verdict(row['verdict'])})", where=w,
                lo=("diff_low", "value", "spoints", 1), hi=("diff_high", "value", "spoints", 1),
                w="won", x="lost"))
        claim = claims.literal("{s}, cross-fitted: ", s=scorer) + parts[0] + "; " + parts[1]
        out.append(claim + ".")
    c = t.curve
    if len(c):
        scorer = c["scorer"].iloc[0]
        first, last = str(c["labels_per_tool"].iloc[0]), str(c["labels_per_tool"].iloc[-1])
        def words(cap: str) -> str:  # a cap as words: a digit quoted as data would hide
            return {"0": "no labeled request per tool (the blind scorer)",  # other numbers
                    "all": "all of them"}.get(cap, f"at most {cap} per tool")
        out.append(claims.literal("Learning curve of {s}: with {a}, ", s=scorer,
                                  a=words(first)) + claims.fill(
            c, src["curve"], "R@5 is {r0} and Complete@10 {c0}; ",
            where={"labels_per_tool": first},
            r0=("R@5", "value", "pct", 1), c0=("Complete@10", "value", "pct", 1))
            + claims.literal("with {a}: ", a=words(last)) + claims.fill(
            c, src["curve"], "{r1} and {c1}.", where={"labels_per_tool": last},
            r1=("R@5", "value", "pct", 1), c1=("Complete@10", "value", "pct", 1)))
    tools = t.tools
    n_gained = int(tools["gained"].sum()) if len(tools) else 0
    out.append(claims.fill(
        tools, src["tools"],
        "Per tool at R@5: {g} " + ("tool is" if n_gained == 1 else "tools are")
        + " found for more of " + ("its" if n_gained == 1 else "their") + " requests with "
        "the labels, {l} for fewer.", g=("gained", "count_true"), l=("lost", "count_true")))
    if len(t.next):
        one = len(t.next) == 1
        out.append(claims.count_rows(
            t.next, src["next"],
            "{n} " + ("tool was" if one else "tools were") + " missed blind and learned by "
            "a fold's model that had no labeled request for " + ("it" if one else "them") +
            ": the next requests "
            "worth labeling are for " + ("this tool" if one else "these tools") +
            " (table below" + ("" if one else ", most such misses first") + ")."))
    else:
        out.append(claims.Claim("No tool was missed blind and learned by a fold's model that "
                                "had no labeled "
                                "request for it."))
    return out


#: The selection rule (inner cross-validation), for the page's method section.
DEV_RULE = RULE


#: The CSV of a given model file's held-out comparison.
MODEL_FILE = "model_heldout.csv"


def model_table(registry: Registry, queries: Sequence[Query], model, *, n_boot: int = 2000,
                seed: int = 0) -> tuple[pd.DataFrame | None, int]:
    """A fitted model (a ``toolsel fit`` file, loaded) against its blind scorer on the labeled
    requests it was **not** fit on: ``(table, n_fit_on)``; the table (one row per metric, as
    :attr:`LabelTables.comparison`) is ``None`` when every request was used to fit it."""
    from ..eval.crossfit import learned_label as _label
    from ..eval.sweep import sweep
    seen = set(model.train_ids_)
    held = [q for q in queries if q.id not in seen]
    n_fit = len(queries) - len(held)
    if not held:
        return None, n_fit
    base = model.base_name_
    label = _label(base)
    res = sweep(registry, held, {base: model.base_, label: model}, [5, 10],
                always_include=[registry[int(i)].name for i in
                                np.flatnonzero(~model.candidates_)], progress=False)
    rows = []
    for col, metric, k in METRICS:
        k_eff = min(k, int(res.query_metrics["top_k"].max()))
        r = paired_comparison(res.query_metrics, metric, scorers=[label, base], top_k=[k_eff],
                              n_boot=n_boot, seed=seed).iloc[0]
        rows.append({"scorer": base, "metric": col, "blind": r["mean_b"],
                     "learned": r["mean_a"], "diff": r["diff"], "diff_low": r["diff_low"],
                     "diff_high": r["diff_high"], "won": int(r["a_wins"]),
                     "lost": int(r["b_wins"]),
                     "n_queries": int(r["a_wins"] + r["b_wins"] + r["ties"]),
                     "n_fit_on": n_fit, "family": int(r["family"]), "verdict": r["verdict"]})
    return pd.DataFrame(rows), n_fit


def model_sentence(table: pd.DataFrame | None, n_fit: int) -> claims.Claim:
    """What the given model does on the requests it was not fit on (or why nothing is shown)."""
    if table is None:
        return claims.Claim("Every labeled request here was used to fit the given model: "
                            "there is no request to evaluate it on without grading it on its "
                            "own labels.")
    parts = []
    for col, _, _ in METRICS:
        row = table[table["metric"] == col].iloc[0]
        parts.append(claims.fill(
            table, MODEL_FILE,
            f"{col} {{b}} blind, {{l}} with the model ({{d}} points, 95% interval [{{lo}}, "
            f"{{hi}}]: {_verdict(row['verdict'])})",
            where={"metric": col},
            b=("blind", "value", "pct", 1), l=("learned", "value", "pct", 1),
            d=("diff", "value", "spoints", 1), lo=("diff_low", "value", "spoints", 1),
            hi=("diff_high", "value", "spoints", 1)))
    head = claims.fill(table, MODEL_FILE, "On the {n} labeled requests the given model was not "
                       "fit on ({f} others were left out): ", where={"metric": METRICS[0][0]},
                       n="n_queries", f="n_fit_on")
    return head + parts[0] + "; " + parts[1] + "."
