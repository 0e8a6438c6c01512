"""The page "Misses by failure mode" (notebook 02): every required tool the filter cut.

:func:`miss_tables` runs the scorers at one cut-off and returns the page's tables (each miss
classified, counts per scorer and failure mode, repair hints); :func:`miss_sentences` renders
its findings from them, each number citing the CSV it is read from (:data:`FILES`);
:func:`mode_summary` says, per failure mode, which scorers miss least.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry
from ..eval.sweep import sweep
from ..report import claims
from ..report import markdown as md
from ..report.claims import Builder, Claim, Ref, and_list
from ..report.cutoffs import headline_k
from ..tables.failure_modes import classify_misses, mode_counts, repair_hints

__all__ = ["MissTables", "FILES", "INDEXED", "miss_tables", "miss_sentences", "mode_summary"]

#: The CSV each table is written to (every one with its floats as they are).
FILES = {"data": "data.csv", "run": "run.csv", "misses": "misses.csv",
         "counts": "mode_counts.csv", "hints": "repair_hints.csv"}
#: The tables written with their index (the scorer).
INDEXED = frozenset({"counts"})


@dataclass
class MissTables:
    """The page's tables: ``data`` (one row of counts), ``run`` (K, scorers, misses),
    ``misses`` (every miss, classified), ``counts`` (scorer × failure mode, and ``total``),
    ``hints`` (per tool, the query words its text lacks). ``k``: the cut-off."""

    data: pd.DataFrame
    run: pd.DataFrame
    misses: pd.DataFrame
    counts: pd.DataFrame
    hints: pd.DataFrame
    k: int

    def items(self):
        """``(name, table)`` as written beside the page."""
        return [(n, getattr(self, n)) for n in FILES]


def miss_tables(registry: Registry, queries: Sequence[Query], scorers: Sequence[str],
                top_k: Sequence[int], *, always_include: Sequence[str] = ()) -> MissTables:
    """Run ``scorers`` at the headline cut-off of ``top_k`` and classify every miss."""
    k = headline_k(top_k, len(registry) - len(set(always_include)))
    result = sweep(registry, queries, list(scorers), [k], always_include=always_include,
                   progress=False)
    classified = classify_misses(result.misses, registry)
    run = pd.DataFrame([{"top_k": k, "n_scorers": len(scorers),
                         "n_misses": len(classified)}])
    return MissTables(claims.data_table(registry, queries), run, classified,
                      mode_counts(classified, scorers=list(scorers)),
                      repair_hints(classified), k)


def miss_sentences(t: MissTables) -> dict[str, Claim]:
    """The page's findings: ``run`` and ``queries`` (the misses at K over the scorers, and over
    how many queries), ``modes`` (:func:`mode_summary`) and ``per_scorer`` (scorer → its
    count of misses)."""
    n, n_s = int(t.run["n_misses"].iloc[0]), int(t.run["n_scorers"].iloc[0])
    n_q = int(t.data["n_queries"].iloc[0])
    run = claims.counts(
        t.run.join(t.data), FILES["run"], "At K={k}: **{n} miss" + ("" if n == 1 else "es")
        + "** (required tools not sent) over {s} scorer" + ("" if n_s == 1 else "s"),
        k="top_k", n="n_misses", s="n_scorers")
    counts = t.counts.reset_index()
    per = {}
    for name in counts["scorer"]:
        total = int(counts.loc[counts["scorer"] == name, "total"].iloc[0])
        per[name] = claims.counts(counts, FILES["counts"], "({n} miss"
                                  + ("" if total == 1 else "es") + ")", where={"scorer": name},
                                  n="total")
    return {"run": run,
            "queries": claims.counts(t.data, FILES["data"], "and {q} quer"
                                     + ("y" if n_q == 1 else "ies") + ".", q="n_queries"),
            "modes": mode_summary(t.counts, FILES["counts"], k=t.k), "per_scorer": per}


def mode_summary(counts: pd.DataFrame, source: str, *, k: int | None = None) -> Claim:
    """Per failure mode, how many misses each scorer has and which have the fewest.

    ``counts``: scorer rows (index or a ``scorer`` column) × mode columns and ``total``
    (:func:`toolsel.tables.failure_modes.mode_counts`).
    """
    b = Builder()
    c = counts.reset_index() if "scorer" not in counts.columns else counts
    c = c.set_index("scorer")
    modes = [m for m in c.columns if m != "total"]
    if c.empty:
        return b.claim("No scorer was run.")
    if "total" in c.columns and (c["total"] == 0).all():
        return b.claim("No scorer missed a required tool" + (f" at K={k}" if k else "") + ".")
    parts = [f"**{md.escape(m)}**: {_mode_counts(b, c[m].astype(int), m, source)}"
             for m in modes if int(c[m].sum())]
    none = [m for m in modes if int(c[m].sum()) == 0]
    text = "; ".join(parts) + "."
    if none:
        text += (" No scorer has a miss of kind "
                 + " or ".join(md.escape(m) for m in none) + ".")
    return b.claim(text)


def _mode_counts(b: Builder, col: pd.Series, mode: str, source: str) -> str:
    """One failure mode's misses per scorer, and which scorers have the fewest."""
    each = ", ".join(f"{b.num(v, Ref(source, mode, {'scorer': s}))} with {b.lit(s)}"
                     for s, v in col.items())
    if len(col) > 1 and col.nunique() > 1:
        fewest = [s for s, v in col.items() if v == col.min()]
        each += f" (fewest: {and_list([b.lit(s) for s in fewest])})"
    elif len(col) > 1:
        each += " (the same for every scorer)"
    return each


