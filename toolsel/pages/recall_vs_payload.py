"""The page "Recall vs payload" (notebook 01): every scorer at every cut-off K.

:func:`recall_tables` sweeps the scorers and returns the page's tables (summary, per-query
metrics, 95% intervals, paired differences); :func:`recall_sentences` renders its findings
from them, each number citing the CSV it is read from (:data:`FILES`);
:func:`real_differences` says which paired differences a Holm-adjusted sign test calls real.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry
from ..eval.stats import bootstrap_intervals, paired_comparison, with_wilson
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
    ``query_metrics`` (per query), ``intervals`` (95%: bootstrap for R@k, Wilson's for
    Complete@k and where R@k's bootstrap collapses), ``paired_recall`` and
    ``paired_complete`` (every pair of scorers at each K), ``k_marks`` (:func:`k_marks`).
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
    """95% intervals of R@k and Complete@k per scorer and K: Wilson's for Complete@k (0/1 per
    query) and for R@k where its bootstrap collapses to a point (every query 0 or 1 alike),
    a bootstrap over queries otherwise (the rule of pages 00 and 01)."""
    qm = query_metrics
    boot = bootstrap_intervals(qm, ("R@k", "Complete@k"), n_boot=n_boot, seed=seed)
    return with_wilson(with_wilson(boot, qm), qm, ["R@k"], collapsed_only=True)


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
    text = Claim(f"The top axis marks K at the points of {md.code(first)}")
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
                     metric: str = "R@k", alpha: float = 0.05) -> Claim:
    """The pairs whose difference a Holm-adjusted sign test calls real, per cut-off, with the
    number of pairs adjusted over counted from the table (``n_source``: a CSV with an
    ``n_queries`` column, e.g. the sweep's summary)."""
    b = Builder()
    if paired.empty:
        return b.claim("No pairs of scorers to compare.")
    per_k = paired.groupby("top_k", sort=False).size()
    k0 = per_k.index[0]
    n_pairs = b.num(per_k.iloc[0], Ref(source, "a", {"top_k": k0}, "count"))
    real = paired[paired["real"].astype(bool)]
    parts = []
    for r in real.itertuples():
        w = {"top_k": r.top_k, "a": r.a, "b": r.b}
        parts.append(f"K={b.num(r.top_k, Ref(source, 'top_k', w))}: {b.lit(r.a)} vs "
                     f"{b.lit(r.b)} ({b.num(r.diff, Ref(source, 'diff', w), 'spoints', 1)} "
                     "points)")
    head = (f"Holm-adjusted over the {n_pairs} pair{'s' if per_k.iloc[0] != 1 else ''} "
            f"compared at each K, the sign test (p < {b.param(alpha)}) finds ")
    nq = b.num(n_queries, Ref(n_source, "n_queries", {}, "max"))
    if real.empty:
        return b.claim(head + f"no real {md.escape(metric)} difference: every pair is within "
                       f"what {nq} queries can tell apart.")
    return b.claim(head + f"real {md.escape(metric)} differences for " + "; ".join(parts)
                   + f". Every other pair is within what {nq} queries can tell apart.")


