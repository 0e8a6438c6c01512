"""The page "Recall vs payload" (notebook 01): every scorer at every cut-off K.

:func:`recall_tables` sweeps the scorers and returns the page's tables (summary, per-query
metrics, 95% intervals, paired differences); :func:`recall_sentences` renders its findings
from them, each number citing the CSV it is read from (:data:`FILES`);
:func:`real_differences` says which paired differences the one rule calls real
(:mod:`toolsel.eval.inference`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry
from ..eval.inference import level_words
from ..eval.stats import mean_intervals, paired_comparison
from ..eval.sweep import sweep
from ..report import claims
from ..report import markdown as md
from ..report.claims import Builder, Claim, Ref
from ..report.cutoffs import distinct_top_k

__all__ = ["RecallTables", "FILES", "EXACT", "intervals", "recall_tables", "recall_sentences",
           "real_differences", "k_marks", "k_mark_sentence"]

#: The CSV each table is written to.
FILES = {"data": "data.csv", "summary": "summary.csv", "query_metrics": "query_metrics.csv",
         "intervals": "intervals.csv", "paired_recall": "paired_recall.csv",
         "paired_complete": "paired_complete.csv", "k_marks": "k_marks.csv"}
#: The tables written with their floats as they are (counts), not rounded to 6 decimals.
EXACT = frozenset({"data"})


@dataclass
class RecallTables:
    """The page's tables: ``data`` (one row of counts), ``summary`` (scorer × K),
    ``query_metrics`` (per query), ``intervals`` (95%, by the one rule: Wilson's for a 0/1
    rate, a bootstrap for any other mean), ``paired_recall`` and ``paired_complete`` (every
    pair of scorers at each K, with the rule's verdict), ``k_marks`` (:func:`k_marks`).
    ``ks``/``dropped``: the cut-offs
    swept and those left out because they send every tool; ``result``: the sweep."""

    data: pd.DataFrame
    summary: pd.DataFrame
    query_metrics: pd.DataFrame
    intervals: pd.DataFrame
    paired_recall: pd.DataFrame
    paired_complete: pd.DataFrame
    k_marks: pd.DataFrame
    ks: list[int]
    dropped: list[int]
    n_candidates: int
    result: object = None

    def items(self):
        """``(name, table)`` as written beside the page."""
        return [(n, getattr(self, n)) for n in FILES]


def intervals(query_metrics: pd.DataFrame, *, n_boot: int = 2000,
              seed: int = 0) -> pd.DataFrame:
    """95% intervals of R@k and Complete@k per scorer and K, by the one rule
    (:func:`toolsel.eval.stats.mean_intervals`): Wilson's where every query scored 0 or 1
    (Complete@k always; R@k where no query needs several tools or all are alike), a bootstrap
    over queries otherwise; so the same 27 of 30 gets the same interval in both columns."""
    return mean_intervals(query_metrics, ("R@k", "Complete@k"), n_boot=n_boot, seed=seed)


def recall_tables(registry: Registry, queries: Sequence[Query], scorers: Sequence[str],
                  top_k: Sequence[int], *, always_include: Sequence[str] = (),
                  n_boot: int = 2000, seed: int = 0) -> RecallTables:
    """Sweep ``scorers`` over the distinct cut-offs of ``top_k`` and build the page's tables."""
    n_candidates = len(registry) - len(set(always_include))
    ks, dropped = distinct_top_k(top_k, n_candidates)
    result = sweep(registry, queries, list(scorers), ks, always_include=always_include,
                   progress=False)
    qm = result.query_metrics
    return RecallTables(
        claims.data_table(registry, queries), result.summary, qm,
        intervals(qm, n_boot=n_boot, seed=seed),
        paired_comparison(qm, "R@k", n_boot=n_boot, seed=seed),
        paired_comparison(qm, "Complete@k", n_boot=n_boot, seed=seed),
        k_marks(result.summary), ks, dropped, n_candidates, result)


def k_marks(summary: pd.DataFrame, first: str | None = None) -> pd.DataFrame:
    """Where the figure marks each cut-off K, and how far the other curves' points for that
    K lie from the mark: one row per K with ``marked_at`` (the payload reduction of
    ``first``'s point, default the summary's first scorer: the one the figure's top axis
    follows), ``farthest`` (the other scorer whose point lies farthest; empty with one
    scorer) and ``gap`` (that distance, a fraction of payload reduction; 0 with one scorer).
    A scorer sends its own K tools, so on tools of uneven length its point moves along the
    payload axis."""
    names = list(dict.fromkeys(summary["scorer"]))
    first = names[0] if first is None else first
    wide = summary.pivot_table(index="top_k", columns="scorer", values="payload_reduction",
                               sort=True)
    rows = []
    for k, r in wide.iterrows():
        gaps = {s: abs(float(r[s]) - float(r[first])) for s in names if s != first}
        far = max(gaps, key=lambda s: (gaps[s], -names.index(s)), default="")
        rows.append({"top_k": int(k), "marked_at": float(r[first]), "farthest": far,
                     "gap": gaps.get(far, 0.0)})
    return pd.DataFrame(rows, columns=["top_k", "marked_at", "farthest", "gap"])


def k_mark_sentence(marks: pd.DataFrame, first: str) -> Claim:
    """What the figure's top axis marks, and how far from its marks the other curves'
    points lie (the widest gap, read from ``k_marks.csv``; none said for one scorer)."""
    text = Claim(f"K is written above the frame at the points of {md.code(first)}")
    others = marks[marks["farthest"].astype(str) != ""]
    if others.empty:
        return text + "."
    widest = others.loc[others["gap"].idxmax()]
    if round(100 * float(widest["gap"]), 1) == 0:
        return text + "; the other curves' points for each K sit on the same marks."
    return text + claims.fill(
        others, FILES["k_marks"], "; the other curves' points for a K lie up to {g} points "
        "of payload reduction from its mark (K={k}, " + md.code(str(widest["farthest"]))
        + ").", where={"top_k": int(widest["top_k"])}, g=("gap", "value", "points", 1),
        k="top_k")


def recall_sentences(t: RecallTables) -> dict[str, Claim]:
    """The page's findings by section (``run``, ``one_request``, ``data``, ``n_queries``,
    ``mrr``, ``real``), each computed from the table it cites (:data:`FILES`)."""
    src, data = FILES, t.data
    first_k = t.ks[0]
    return {
        "run": claims.counts(data, src["data"], "{q} labeled queries over {t} tools, every "
                             "scorer at each cut-off K.", q="n_queries", t="n_tools"),
        "one_request": claims.one_request(int(data["n_queries"].iloc[0]), src["data"],
                                          column="n_queries", unit="query", what="R@k"),
        "data": claims.counts(
            data, src["data"], "**{t} tools** ({a} marked always-include), **{q} labeled "
            "queries** ({m} needing several tools); sending every tool costs {c} characters "
            "of name + description ({k} `cl100k_base` tokens).", t="n_tools",
            a="n_always_include", q="n_queries", m="n_multi_tool", c="unfiltered_chars",
            k="unfiltered_tokens"),
        "n_queries": claims.counts(data, src["data"], "{q} queries", q="n_queries"),
        "mrr": claims.values(t.summary[t.summary.top_k == first_k], "MRR", src["summary"],
                             where={"top_k": first_k}),
        "real": real_differences(t.paired_recall, src["paired_recall"],
                                 n_queries=int(t.summary["n_queries"].max()),
                                 n_source=src["summary"]),
    }


def real_differences(paired: pd.DataFrame, source: str, *, n_queries: int, n_source: str,
                     metric: str = "R@k") -> Claim:
    """The pairs the one rule tells apart (:mod:`toolsel.eval.inference`: the paired interval
    at the family's level excludes zero; the family is every pair at one K), per cut-off, with
    the family's size counted from the table (``n_source``: a CSV with an ``n_queries``
    column, e.g. the sweep's summary). "Every other pair" is then what the rule calls a tie."""
    b = Builder()
    if paired.empty:
        return b.claim("No pairs of scorers to compare.")
    per_k = paired.groupby("top_k", sort=False).size()
    k0 = per_k.index[0]
    n_pairs = b.num(per_k.iloc[0], Ref(source, "a", {"top_k": k0}, "count"))
    real = paired[paired["verdict"] != "tie"]
    parts = []
    for r in real.itertuples():
        w = {"top_k": r.top_k, "a": r.a, "b": r.b}
        parts.append(f"K={b.num(r.top_k, Ref(source, 'top_k', w))}: {b.lit(r.a)} "
                     f"{'ahead of' if r.verdict == 'ahead' else 'behind'} {b.lit(r.b)} "
                     f"({b.num(r.diff, Ref(source, 'diff', w), 'spoints', 1)} points "
                     f"[{b.num(r.diff_low, Ref(source, 'diff_low', w), 'spoints', 1)}, "
                     f"{b.num(r.diff_high, Ref(source, 'diff_high', w), 'spoints', 1)}])")
    level = b.param(level_words(int(paired["family"].iloc[0])))
    head = (f"With the {n_pairs} pair{'s' if per_k.iloc[0] != 1 else ''} of scorers at each K "
            f"as one family (paired {level} intervals), ")
    nq = b.num(n_queries, Ref(n_source, "n_queries", {}, "max"))
    n_tie = len(paired) - len(real)
    if real.empty:
        return b.claim(head + f"no {md.escape(metric)} difference excludes zero: every pair "
                       f"ties, within what {nq} queries can tell apart.")
    ties = b.num(n_tie, Ref(source, "verdict", {"verdict": "tie"}, "count"))
    total = b.num(len(paired), Ref(source, "a", {}, "count"))
    return b.claim(head + f"these {md.escape(metric)} differences exclude zero: "
                   + "; ".join(parts) + f". The other {ties} of the {total} comparisons tie: "
                   f"within what {nq} queries can tell apart.")
