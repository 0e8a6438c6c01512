"""Every scorer on every registry style: R@5, Complete@10, MRR with bootstrap intervals.

The evaluation registries under ``data/styles/`` differ in kind, not only in size: ``api``
(camelCase endpoints with parameter schemas and terse descriptions), ``plugin`` (marketing
blurbs, brand names, no parameters) and ``pooled`` (many servers with near-duplicate tools).
:func:`compare_styles` sweeps each scorer over each style's queries of one split and returns
per-query metrics, bootstrap intervals, and per-query latency; :func:`versus_best` asks, per
style and metric, whether a candidate (the ``default`` scorer) is at least as good as the best
single scorer there, with a paired bootstrap interval of the difference;
:func:`toolsel.report.plots.plot_style_comparison` draws the table and
:mod:`toolsel.pages.which_scorer` renders the README's "Which scorer?" block from it.

Metrics are per request over the whole registry (no always-include set: every tool competes):
``R@5`` share of required tools in the top 5, ``Complete@10`` 1 if every required tool is in
the top 10, ``MRR`` mean reciprocal rank of the first required tool. Means, intervals and
verdicts are deterministic for a seed; latency (wall clock) is kept apart from the tables.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..scorers.base import compared_scorers
from ..data import Query, Registry
from ..scorers.base import Scorer
from ..selection import fitted_scorer
from ..eval.stats import mean_intervals, paired_comparison
from ..eval.sweep import sweep

__all__ = ["SINGLE_SCORERS", "METRICS", "StyleComparison", "compare_styles",
           "versus_best"]

#: The single-signal scorers the default must match.
SINGLE_SCORERS = compared_scorers(single=True)  # the registry of scorer names
#: Metric columns of the comparison, and the sweep cut-off each is read at.
METRICS = {"R@5": ("R@k", 5), "Complete@10": ("Complete@k", 10), "MRR": ("RR", 10)}


@dataclass
class StyleComparison:
    """Tables of :func:`compare_styles`.

    ``query_metrics``: one row per style × scorer × query with ``R@5, Complete@10, MRR`` and
    ``n_required``. ``summary``: one row per style × scorer × metric with ``mean, low, high,
    n_queries`` (95%: percentile bootstrap; Wilson score interval for the 0/1 metrics of
    :data:`BINARY_METRICS`). ``latency``: per-query milliseconds per style ×
    scorer (wall clock: shown, never written with the tables).
    """

    query_metrics: pd.DataFrame
    summary: pd.DataFrame
    latency: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """The summary as one row per style × scorer, ``metric``, ``metric_low``, ``metric_high``."""
        rows = []
        for (style, scorer), g in self.summary.groupby(["style", "scorer"], sort=False):
            row = {"style": style, "scorer": scorer}
            for r in g.itertuples():
                row[r.metric] = r.mean
                row[f"{r.metric}_low"] = r.low
                row[f"{r.metric}_high"] = r.high
            row["n_queries"] = int(g["n_queries"].iloc[0])
            rows.append(row)
        return pd.DataFrame(rows)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``style_summary.csv`` (long), ``style_table.csv`` (wide) and
        ``style_query_metrics.csv``; deterministic (no timings). Each through the one table
        writer, :func:`toolsel.io.write_table` (atomic, 6-decimal floats)."""
        from ..io import write_table
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        return [write_table(frame, out / f"{name}.csv")
                for name, frame in (("style_summary", self.summary),
                                    ("style_table", self.table()),
                                    ("style_query_metrics", self.query_metrics))]


def _per_query(result, style: str) -> pd.DataFrame:
    qm = result.query_metrics
    frames = []
    for metric, (column, k) in METRICS.items():
        part = qm.loc[qm["top_k"] == k, ["scorer", "query_id", "n_required", column]]
        frames.append(part.rename(columns={column: metric}).set_index(
            ["scorer", "query_id"]))
    wide = frames[0]
    for f in frames[1:]:
        wide = wide.join(f.drop(columns="n_required"))
    wide = wide.reset_index()
    wide.insert(0, "style", style)
    return wide


def _latency(scorers: Mapping[str, str | Scorer], registry: Registry,
             queries: Sequence[Query], n: int) -> list[float]:
    out = []
    texts = [q.query for q in queries][:n]
    for spec in scorers.values():
        scorer = fitted_scorer(spec, registry)
        scorer.score(texts[0])  # warm-up: model load, caches
        t0 = time.perf_counter()
        for text in texts:
            scorer.score(text)
        out.append((time.perf_counter() - t0) / max(len(texts), 1) * 1000)
    return out


def compare_styles(styles: Mapping[str, tuple[Sequence, Sequence[Query]]],
                   scorers: Sequence[str] | Mapping[str, str | Scorer] = (*SINGLE_SCORERS,
                                                                          "default"), *,
                   n_boot: int = 2000, seed: int = 0,
                   latency_queries: int = 20) -> StyleComparison:
    """Sweep every scorer over every style; bootstrap the means per style.

    Parameters
    ----------
    styles : mapping ``{style: (registry, queries)}``
        E.g. :func:`toolsel.datasets.load_styles` (test split by default).
    scorers : scorer names, or a mapping ``{label: name or Scorer}`` (variants of one scorer)
    n_boot, seed : bootstrap resamples and seed (same resamples for every scorer of a style)
    latency_queries : int
        Requests timed one at a time per style × scorer (0 skips timing).
    """
    if not styles:
        raise ValueError("no styles to compare")
    if not isinstance(scorers, Mapping):
        scorers = {name: name for name in scorers}
    scorers = dict(scorers)
    per_query, summaries, latency = [], [], []
    for style, (registry, queries) in styles.items():
        result = sweep(registry, queries, scorers, top_k=sorted({k for _, k in
                                                                  METRICS.values()}))
        pq = _per_query(result, style)
        per_query.append(pq)
        ci = mean_intervals(pq.assign(top_k=0), metrics=list(METRICS), n_boot=n_boot,
                            seed=seed)
        summaries.append(ci.drop(columns="top_k").assign(style=style))
        if latency_queries:
            ms = _latency(scorers, registry, queries, latency_queries)
            latency.extend({"style": style, "scorer": s, "n_tools": len(registry),
                            "ms_per_query": m} for s, m in zip(scorers, ms))
    summary = pd.concat(summaries, ignore_index=True)[
        ["style", "scorer", "metric", "mean", "low", "high", "n_queries"]]
    return StyleComparison(pd.concat(per_query, ignore_index=True), summary,
                           pd.DataFrame(latency, columns=["style", "scorer", "n_tools",
                                                          "ms_per_query"]))


def versus_best(comparison: StyleComparison, candidate: str = "default",
                singles: Sequence[str] = SINGLE_SCORERS, *,
                metrics: Sequence[str] = tuple(METRICS), chosen_on: StyleComparison | None = None,
                n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per style × metric: the best single scorer, and how ``candidate`` compares with it.

    The best single scorer is picked by its mean on ``chosen_on`` (the dev requests) when
    given, else on the compared requests themselves (``chosen_on`` column: ``"dev"`` or
    ``"in-sample"``). ``diff`` is candidate − best (mean over queries) with its paired interval
    ``diff_low, diff_high`` and ``verdict`` by the one rule (:mod:`toolsel.eval.inference`;
    the family is every pair of the style's scorers on that metric, as in the single-scorer
    gaps). ``matches`` is true unless the candidate is behind.
    """
    qm = comparison.query_metrics
    pick = qm if chosen_on is None else chosen_on.query_metrics
    rows = []
    for style, g in qm.groupby("style", sort=False):
        p = pick[pick["style"] == style]
        for metric in metrics:
            means = p[p["scorer"].isin(singles)].groupby("scorer", sort=False)[metric].mean()
            # best by mean; ties go to the scorer listed first
            best = max(singles, key=lambda s: (means.get(s, -np.inf), -singles.index(s)))
            pair = paired_comparison(g.assign(top_k=0), metric, scorers=[candidate, best],
                                     n_boot=n_boot, seed=seed).iloc[0]
            rows.append({"style": style, "metric": metric, "best_single": best,
                         "chosen_on": "in-sample" if chosen_on is None else "dev",
                         "best_mean": pair["mean_b"], "candidate": candidate,
                         "candidate_mean": pair["mean_a"], "diff": pair["diff"],
                         "diff_low": pair["diff_low"], "diff_high": pair["diff_high"],
                         "family": int(pair["family"]), "level": float(pair["level"]),
                         "verdict": pair["verdict"],
                         "matches": pair["verdict"] != "behind"})
    return pd.DataFrame(rows)
