"""Uncertainty for small query sets: bootstrap intervals and paired comparisons of scorers.

With 30 queries one miss moves recall by 3.3 points, so every mean gets an interval and every
difference between scorers a test. Both work on the per-query table of a sweep
(:attr:`toolsel.eval.sweep.SweepResult.query_metrics`: one row per scorer × top_k × query).

- :func:`bootstrap_intervals`: percentile bootstrap over queries (resampling queries with
  replacement), one interval per scorer × top_k × metric. The same resampled query sets are
  used for every scorer and cut-off, so intervals are comparable.
- :func:`wilson_interval`: the Wilson score interval of a rate ``k / n``: honest on small ``n``
  and at 0 or 1, where a bootstrap over n requests collapses to ``[0, 0]`` or ``[1, 1]``.
- :func:`paired_comparison`: for every pair of scorers at every cut-off, the mean per-query
  difference, a paired bootstrap interval for it, how many queries each scorer wins, and an
  exact two-sided sign test on the queries where they differ (McNemar's exact test when the
  metric is 0/1), Holm-adjusted over the pairs compared at one cut-off. A difference is
  called *real* when the adjusted p-value is below ``alpha``.

Everything is deterministic for a given ``seed``. Queries whose metric is ``nan`` (no required
tool left after always-include) are dropped, as in the sweep's means.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from .metrics import binary_metrics

__all__ = ["BINARY_METRICS", "bootstrap_intervals", "bootstrap_by_group", "paired_comparison", "sign_test", "holm",
           "wilson_interval", "with_wilson", "clustered_gain", "clustered_mean", "verdict"]

_KEYS = ["scorer", "top_k", "query_id"]

#: The per-request metrics that are a yes-or-no outcome (from the metric table,
#: :data:`toolsel.eval.metrics.METRICS`): their intervals are Wilson's (:func:`with_wilson`);
#: every other mean gets a bootstrap interval.
BINARY_METRICS = binary_metrics()


def _check(query_metrics: pd.DataFrame, metrics: Sequence[str]) -> None:
    missing = [c for c in [*_KEYS, *metrics] if c not in query_metrics.columns]
    if missing:
        raise KeyError(f"query_metrics has no column(s) {missing}; expected a sweep's "
                       "query_metrics table")


def _wide(query_metrics: pd.DataFrame, metric: str, scorers: Sequence[str]) -> pd.DataFrame:
    """``(top_k, query_id)`` rows × scorer columns of one metric, queries in first-seen order."""
    qm = query_metrics[query_metrics["scorer"].isin(scorers)]
    wide = qm.pivot_table(index=["top_k", "query_id"], columns="scorer", values=metric,
                          sort=False, dropna=False)
    return wide.reindex(columns=list(scorers))


def _scorers(query_metrics: pd.DataFrame, scorers: Iterable[str] | None) -> list[str]:
    present = list(dict.fromkeys(query_metrics["scorer"]))
    if scorers is None:
        return present
    scorers = list(scorers)
    unknown = [s for s in scorers if s not in present]
    if unknown:
        raise ValueError(f"scorer(s) {unknown} not in the table; it has {present}")
    return scorers


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of the rate ``successes / n``: ``(low, high)``.

    Unlike a bootstrap over ``n`` requests, it does not collapse to a point at 0 or 1 (0 of 10
    gives about ``[0, 0.278]``) and keeps its coverage on small ``n``. ``n == 0`` gives
    ``(nan, nan)``.
    """
    from scipy.stats import norm
    if isinstance(successes, bool) or isinstance(n, bool):
        raise TypeError("wilson_interval takes counts, not booleans")
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes} of {n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if n == 0:
        return float("nan"), float("nan")
    z = float(norm.ppf(1 - (1 - level) / 2))
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = max(0.0, center - half), min(1.0, center + half)
    # exact ends: 0 successes reach 0, n successes reach 1 (no rounding just above/below)
    return (0.0 if successes == 0 else float(low)), (1.0 if successes == n else float(high))


def _group_values(query_metrics: pd.DataFrame, row: pd.Series, keys: Sequence[str],
                  metric: str) -> pd.Series:
    """The per-query values of ``metric`` behind one interval row (``nan`` left out)."""
    mask = pd.Series(True, index=query_metrics.index)
    for k in keys:
        mask &= query_metrics[k] == row[k]
    return query_metrics.loc[mask, metric].dropna()


def with_wilson(intervals: pd.DataFrame, query_metrics: pd.DataFrame,
                metrics: Sequence[str] = ("Complete@k",),
                keys: Sequence[str] = ("scorer", "top_k"), *,
                collapsed_only: bool = False) -> pd.DataFrame:
    """``intervals`` (:func:`bootstrap_intervals`) with the rows of the 0/1 ``metrics``
    given the Wilson score interval of their rate instead (successes and n counted from
    ``query_metrics``, ``nan`` left out). Other rows are unchanged.

    ``collapsed_only``: for a metric that is a fraction per query (R@k), replace only the rows
    whose bootstrap collapsed to a point and whose every query scored 0 or 1: resampling
    such values cannot move the mean, but the rate is still an estimate from n queries, so
    it gets the yes-or-no outcome's interval (a row mixing fractions keeps its bootstrap).
    """
    out = intervals.copy()
    keys = [k for k in keys if k in intervals.columns and k in query_metrics.columns]
    for i, r in out.iterrows():
        if r["metric"] not in metrics or (collapsed_only and r["low"] != r["high"]):
            continue
        values = _group_values(query_metrics, r, keys, r["metric"])
        if len(values) and not values.isin([0, 1]).all():
            if collapsed_only:
                continue
            raise ValueError(f"with_wilson: {r['metric']} is not 0/1 per query")
        if collapsed_only and not len(values):
            continue
        out.loc[i, ["low", "high"]] = wilson_interval(int(values.sum()), len(values))
    return out


def bootstrap_intervals(query_metrics: pd.DataFrame,
                        metrics: Sequence[str] = ("R@k", "Complete@k"), *,
                        n_boot: int = 2000, level: float = 0.95, seed: int = 0,
                        cluster: str | None = None) -> pd.DataFrame:
    """Percentile bootstrap intervals of the mean of each metric, per scorer × top_k.

    ``cluster`` names a column grouping rows that are not independent (the turns of one
    conversation, the tool calls of one task): whole groups are resampled, and the mean of a
    resample is over every row of the groups drawn. Without it each query is its own group.

    Returns one row per ``scorer, top_k, metric`` with ``mean, low, high, n_queries``, rows in
    the table's scorer and top_k order.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    _check(query_metrics, metrics)
    if cluster is not None and cluster not in query_metrics.columns:
        raise KeyError(f"query_metrics has no cluster column {cluster!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    query_ids = list(dict.fromkeys(query_metrics["query_id"]))
    if cluster is None:
        group_of = {q: i for i, q in enumerate(query_ids)}
        n_groups = len(query_ids)
    else:
        first = query_metrics.drop_duplicates("query_id").set_index("query_id")[cluster]
        groups = list(dict.fromkeys(first.loc[query_ids]))
        gpos = {c: i for i, c in enumerate(groups)}
        group_of = {q: gpos[first.loc[q]] for q in query_ids}
        n_groups = len(groups)
    rng = np.random.default_rng(seed)
    # one set of resampled groups shared by every scorer, cut-off and metric
    draws = rng.integers(0, n_groups, size=(n_boot, n_groups))
    pos = {q: i for i, q in enumerate(query_ids)}
    gidx = np.array([group_of[q] for q in query_ids], dtype=int)
    alpha = (1 - level) / 2
    rows = []
    for (scorer, k), g in query_metrics.groupby(["scorer", "top_k"], sort=False):
        idx = g["query_id"].map(pos).to_numpy()
        for metric in metrics:
            values = np.full(len(query_ids), np.nan)
            values[idx] = g[metric].to_numpy(dtype=float)
            ok = ~np.isnan(values)
            sums = np.bincount(gidx[ok], weights=values[ok], minlength=n_groups)
            counts = np.bincount(gidx[ok], minlength=n_groups).astype(float)
            total, cnt = sums[draws].sum(axis=1), counts[draws].sum(axis=1)
            means = np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan)
            means = means[~np.isnan(means)]
            n = int((~np.isnan(values)).sum())
            mean = float(np.nanmean(values)) if n else float("nan")
            low, high = ((float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha)))
                         if len(means) else (float("nan"), float("nan")))
            rows.append({"scorer": scorer, "top_k": int(k), "metric": metric, "mean": mean,
                         "low": low, "high": high, "n_queries": n})
    return pd.DataFrame(rows, columns=["scorer", "top_k", "metric", "mean", "low", "high",
                                       "n_queries"])


def sign_test(wins: int, losses: int) -> float:
    """Exact two-sided sign test: p-value of ``wins`` vs ``losses`` under a fair coin.

    Ties are left out before calling. With 0/1 outcomes this is McNemar's exact test.
    """
    from scipy.stats import binomtest
    n = wins + losses
    if n == 0:
        return 1.0
    return float(binomtest(wins, n, 0.5, alternative="two-sided").pvalue)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a family of p-values (same order as given)."""
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def bootstrap_by_group(query_metrics: pd.DataFrame, by: str,
                       metrics: Sequence[str] = ("R@k", "Complete@k"), *,
                       required: str | None = "n_required", wilson: Sequence[str] = (),
                       **kwargs) -> pd.DataFrame:
    """:func:`bootstrap_intervals` within each group of ``by`` (a category, a number of
    required tools), groups in first-seen order, with a ``by`` column.

    Rows whose ``required`` column is 0 (nothing to find) are dropped first; the 0/1 metrics
    named in ``wilson`` get the Wilson score interval instead of the bootstrap's
    (:func:`with_wilson`: honest on small groups and at 0 or 1); ``kwargs`` go to
    :func:`bootstrap_intervals`. An empty table gives an empty frame with the usual columns.
    """
    frame = query_metrics if required is None else query_metrics[query_metrics[required] > 0]
    parts = [with_wilson(bootstrap_intervals(g, metrics=list(metrics), **kwargs), g,
                         [m for m in metrics if m in wilson]).assign(**{by: key})
             for key, g in frame.groupby(by, sort=False)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["scorer", "top_k", "metric", "mean", "low", "high", "n_queries", by])


def paired_comparison(query_metrics: pd.DataFrame, metric: str = "R@k", *,
                      scorers: Iterable[str] | None = None, top_k: Iterable[int] | None = None,
                      n_boot: int = 2000, level: float = 0.95, alpha: float = 0.05,
                      seed: int = 0) -> pd.DataFrame:
    """Compare every pair of scorers on the same queries, at each cut-off.

    Returns one row per ``top_k`` × pair (``a``, ``b`` in the given scorer order) with
    ``mean_a, mean_b, diff`` (a − b), the paired bootstrap interval ``diff_low, diff_high``,
    ``a_wins, b_wins, ties`` (queries where a is better, worse, equal), the sign-test
    ``p_value``, its Holm adjustment ``p_holm`` over the pairs at that cut-off, and ``real``
    (``p_holm < alpha``). Only queries scored by both (metric not ``nan``) count.
    """
    _check(query_metrics, [metric])
    names = _scorers(query_metrics, scorers)
    if len(names) < 2:
        raise ValueError("paired_comparison needs at least two scorers")
    wide = _wide(query_metrics, metric, names)
    ks = list(dict.fromkeys(wide.index.get_level_values("top_k")))
    if top_k is not None:
        wanted = [int(k) for k in top_k]
        unknown = [k for k in wanted if k not in ks]
        if unknown:
            raise ValueError(f"top_k {unknown} not in the table; it has {ks}")
        ks = wanted
    rng = np.random.default_rng(seed)
    q = (1 - level) / 2
    rows = []
    for k in ks:
        block = wide.xs(k, level="top_k")
        draws = rng.integers(0, len(block), size=(n_boot, len(block)))
        k_rows = []
        for a, b in combinations(names, 2):
            va, vb = block[a].to_numpy(float), block[b].to_numpy(float)
            both = ~(np.isnan(va) | np.isnan(vb))
            d = va - vb
            boot = np.where(both[draws], d[draws], 0.0).sum(axis=1) / np.maximum(
                both[draws].sum(axis=1), 1)
            wins, losses = int((d[both] > 0).sum()), int((d[both] < 0).sum())
            k_rows.append({
                "top_k": int(k), "metric": metric, "a": a, "b": b,
                "mean_a": float(va[both].mean()), "mean_b": float(vb[both].mean()),
                "diff": float(d[both].mean()),
                "diff_low": float(np.quantile(boot, q)),
                "diff_high": float(np.quantile(boot, 1 - q)),
                "a_wins": wins, "b_wins": losses, "ties": int(both.sum()) - wins - losses,
                "p_value": sign_test(wins, losses)})
        adjusted = holm([r["p_value"] for r in k_rows])
        for r, p in zip(k_rows, adjusted):
            r["p_holm"] = float(p)
            r["real"] = bool(p < alpha)
        rows.extend(k_rows)
    return pd.DataFrame(rows, columns=["top_k", "metric", "a", "b", "mean_a", "mean_b", "diff",
                                       "diff_low", "diff_high", "a_wins", "b_wins", "ties",
                                       "p_value", "p_holm", "real"])


def clustered_gain(a: Sequence[float], b: Sequence[float], groups: Sequence[int] | None = None,
                   *, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> dict:
    """The paired difference of means ``a - b`` over the same requests, with a bootstrap
    interval that resamples whole request *groups* (near-duplicates, one conversation's turns:
    requests that are not independent) with replacement; every request its own group when
    ``groups`` is ``None``. Requests where either value is ``nan`` are left out.

    Returns ``{"mean_a", "mean_b", "diff", "low", "high", "won", "lost", "n", "n_groups"}``
    (``won``: requests where ``a`` is higher).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    g = np.arange(len(a)) if groups is None else np.asarray(groups)
    both = ~(np.isnan(a) | np.isnan(b))
    a, b, g = a[both], b[both], g[both]
    n = len(a)
    if not n:
        nan = float("nan")
        return {"mean_a": nan, "mean_b": nan, "diff": nan, "low": nan, "high": nan,
                "won": 0, "lost": 0, "n": 0, "n_groups": 0}
    d = a - b
    _, inv = np.unique(g, return_inverse=True)
    sums = np.bincount(inv, weights=d)
    counts = np.bincount(inv).astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(sums), size=(n_boot, len(sums)))
    boot = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    q = (1 - level) / 2
    return {"mean_a": float(a.mean()), "mean_b": float(b.mean()), "diff": float(d.mean()),
            "low": float(np.quantile(boot, q)), "high": float(np.quantile(boot, 1 - q)),
            "won": int((d > 0).sum()), "lost": int((d < 0).sum()), "n": int(n),
            "n_groups": int(len(sums))}


def verdict(low: float, high: float, n: int) -> str:
    """The word for a paired difference with interval ``[low, high]`` over ``n`` requests:
    ``"ahead"`` when the whole interval lies above one request's worth (``1 / n``),
    ``"behind"`` when it lies below minus that, ``"tie"`` otherwise (a difference smaller
    than one request flipping is not told apart from none)."""
    if not n or not (np.isfinite(low) and np.isfinite(high)):
        return "tie"
    step = 1.0 / n
    if low > step:
        return "ahead"
    if high < -step:
        return "behind"
    return "tie"


def clustered_mean(values: Sequence[float], groups: Sequence[int] | None = None, **kwargs
                   ) -> dict:
    """The mean of ``values`` with the interval :func:`clustered_gain` gives (groups
    resampled whole): ``{"mean", "low", "high", "n"}``."""
    v = np.asarray(values, dtype=np.float64)
    g = clustered_gain(v, np.zeros_like(v), groups, **kwargs)
    return {"mean": g["diff"], "low": g["low"], "high": g["high"], "n": g["n"]}
