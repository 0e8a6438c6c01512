"""Intervals and paired comparisons over per-request tables, by the rule of
:mod:`toolsel.eval.inference`.

This module applies that rule to the tables a sweep writes (:attr:`toolsel.eval.sweep.SweepResult.query_metrics`:
one row per scorer × top_k × query); it decides nothing of its own.

- :func:`mean_intervals`: one interval per scorer × top_k × metric: Wilson's for a 0/1 rate
  over independent requests, the bootstrap resampling whole groups otherwise
  (:func:`toolsel.eval.inference.mean_interval`).
- :func:`intervals_by_group`: the same within each group of a column (a category, a number of
  required tools).
- :func:`paired_comparison`: every pair of scorers at each cut-off, the paired difference with
  its interval at the family's level (every pair of the table's scorers at that cut-off is the
  family, :func:`toolsel.eval.inference.pairs_in`) and its verdict (ahead / behind / tie).

Everything is deterministic for a given ``seed``. Queries whose metric is ``nan`` (no required
tool left after always-include) are dropped, as in the sweep's means.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import pandas as pd

from .inference import (ALPHA, family_level, mean_interval, paired_difference, pairs_in,
                        verdict, wilson_interval)
from .metrics import binary_metrics

__all__ = ["BINARY_METRICS", "mean_intervals", "intervals_by_group", "paired_comparison",
           "wilson_interval", "verdict", "INTERVAL_COLUMNS", "PAIRED_COLUMNS"]

_KEYS = ["scorer", "top_k", "query_id"]

#: The per-request metrics that are a yes-or-no outcome (from the metric table,
#: :data:`toolsel.eval.metrics.METRICS`).
BINARY_METRICS = binary_metrics()
#: Columns of :func:`mean_intervals`.
INTERVAL_COLUMNS = ["scorer", "top_k", "metric", "mean", "low", "high", "n_queries", "method"]
#: Columns of :func:`paired_comparison`.
PAIRED_COLUMNS = ["top_k", "metric", "a", "b", "mean_a", "mean_b", "diff", "diff_low",
                  "diff_high", "a_wins", "b_wins", "ties", "n_groups", "family", "level",
                  "verdict"]


def _check(query_metrics: pd.DataFrame, metrics: Sequence[str]) -> None:
    missing = [c for c in [*_KEYS, *metrics] if c not in query_metrics.columns]
    if missing:
        raise KeyError(f"query_metrics has no column(s) {missing}; expected a sweep's "
                       "query_metrics table")


def _scorers(query_metrics: pd.DataFrame, scorers: Iterable[str] | None) -> list[str]:
    present = list(dict.fromkeys(query_metrics["scorer"]))
    if scorers is None:
        return present
    scorers = list(scorers)
    unknown = [s for s in scorers if s not in present]
    if unknown:
        raise ValueError(f"scorer(s) {unknown} not in the table; it has {present}")
    return scorers


def _cluster_of(query_metrics: pd.DataFrame, cluster: str | None) -> pd.Series | None:
    """The group of each query id (first row wins), or ``None`` without a cluster column."""
    if cluster is None:
        return None
    if cluster not in query_metrics.columns:
        raise KeyError(f"query_metrics has no cluster column {cluster!r}")
    return query_metrics.drop_duplicates("query_id").set_index("query_id")[cluster]


def mean_intervals(query_metrics: pd.DataFrame,
                   metrics: Sequence[str] = ("R@k", "Complete@k"), *,
                   n_boot: int = 2000, level: float = 1 - ALPHA, seed: int = 0,
                   cluster: str | None = None) -> pd.DataFrame:
    """The interval of the mean of each metric, per scorer × top_k, by the rule
    (:func:`toolsel.eval.inference.mean_interval`).

    ``cluster`` names a column grouping rows that are not independent (the turns of one
    conversation, near-duplicate requests): whole groups are resampled. Returns one row per
    ``scorer, top_k, metric`` with ``mean, low, high, n_queries, method``, in the table's
    scorer and top_k order.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    _check(query_metrics, metrics)
    group_of = _cluster_of(query_metrics, cluster)
    rows = []
    for (scorer, k), g in query_metrics.groupby(["scorer", "top_k"], sort=False):
        groups = None if group_of is None else group_of.loc[g["query_id"]].to_numpy()
        for metric in metrics:
            r = mean_interval(g[metric].to_numpy(dtype=float), groups, level=level,
                              n_boot=n_boot, seed=seed)
            rows.append({"scorer": scorer, "top_k": int(k), "metric": metric,
                         "mean": r["mean"], "low": r["low"], "high": r["high"],
                         "n_queries": r["n"], "method": r["method"]})
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


def intervals_by_group(query_metrics: pd.DataFrame, by: str,
                       metrics: Sequence[str] = ("R@k", "Complete@k"), *,
                       required: str | None = "n_required", **kwargs) -> pd.DataFrame:
    """:func:`mean_intervals` within each group of ``by`` (a category, a number of required
    tools), groups in first-seen order, with a ``by`` column. Rows whose ``required`` column
    is 0 (nothing to find) are dropped first; ``kwargs`` go to :func:`mean_intervals`."""
    frame = query_metrics if required is None else query_metrics[query_metrics[required] > 0]
    parts = [mean_intervals(g, metrics=list(metrics), **kwargs).assign(**{by: key})
             for key, g in frame.groupby(by, sort=False)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=[*INTERVAL_COLUMNS, by])


def paired_comparison(query_metrics: pd.DataFrame, metric: str = "R@k", *,
                      scorers: Iterable[str] | None = None, top_k: Iterable[int] | None = None,
                      family: int | None = None, cluster: str | None = None,
                      n_boot: int = 2000, alpha: float = ALPHA, seed: int = 0) -> pd.DataFrame:
    """Compare pairs of scorers on the same queries, at each cut-off, by the rule.

    Returns one row per ``top_k`` × pair (``a``, ``b`` in the given scorer order) with
    ``mean_a, mean_b, diff`` (a − b), its paired interval ``diff_low, diff_high`` at the
    family's ``level``, ``a_wins, b_wins, ties`` (queries where a is better, worse, equal),
    ``n_groups``, ``family`` and ``verdict`` (a against b: ahead, behind or tie). Only queries
    scored by both (metric not ``nan``) count.

    ``family``: the comparisons the family holds; by default every pair of the scorers **in
    the table** (not only those compared here), so a pair compared alone gets the interval it
    gets among all of them. ``cluster``: a column of request groups resampled whole.
    """
    _check(query_metrics, [metric])
    names = _scorers(query_metrics, scorers)
    if len(names) < 2:
        raise ValueError("paired_comparison needs at least two scorers")
    m = family if family is not None else pairs_in(query_metrics["scorer"].nunique())
    family_level(m, alpha)  # checks m and alpha
    qm = query_metrics[query_metrics["scorer"].isin(names)]
    wide = qm.pivot_table(index=["top_k", "query_id"], columns="scorer", values=metric,
                          sort=False, dropna=False).reindex(columns=names)
    group_of = _cluster_of(query_metrics, cluster)
    ks = list(dict.fromkeys(wide.index.get_level_values("top_k")))
    if top_k is not None:
        wanted = [int(k) for k in top_k]
        unknown = [k for k in wanted if k not in ks]
        if unknown:
            raise ValueError(f"top_k {unknown} not in the table; it has {ks}")
        ks = wanted
    rows = []
    for k in ks:
        block = wide.xs(k, level="top_k")
        groups = None if group_of is None else group_of.loc[block.index].to_numpy()
        for a, b in combinations(names, 2):
            r = paired_difference(block[a].to_numpy(float), block[b].to_numpy(float), groups,
                                  family=m, alpha=alpha, n_boot=n_boot, seed=seed)
            rows.append({"top_k": int(k), "metric": metric, "a": a, "b": b,
                         "mean_a": r["mean_a"], "mean_b": r["mean_b"], "diff": r["diff"],
                         "diff_low": r["low"], "diff_high": r["high"], "a_wins": r["won"],
                         "b_wins": r["lost"], "ties": r["ties"], "n_groups": r["n_groups"],
                         "family": r["family"], "level": r["level"],
                         "verdict": r["verdict"]})
    return pd.DataFrame(rows, columns=PAIRED_COLUMNS)

