"""Choosing a scorer configuration on dev splits: variants × styles, then one pick.

:func:`evaluate_variants` sweeps every variant (a label and a scorer object) over every style's
queries of one split and returns one row per style × variant with ``R@5``, ``Complete@10``,
``MRR`` and ``n`` (queries). :func:`choose` picks the variant with the best mean over styles of
``(R@5 + Complete@10) / 2``, optionally only among variants that lose at most ``max_loss`` of
either metric on any style against a baseline, and reports per style a paired bootstrap of the
chosen variant's difference from the baseline.

Every tool competes (no always-include set), as in :mod:`toolsel.tables.compare_styles`. Tables
are deterministic for a seed; nothing here times anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import Query
from ..scorers.base import Scorer
from ..datasets import filter_split
from .stats import paired_comparison
from .sweep import sweep

__all__ = ["evaluate_variants", "choose", "concat_tables", "query_metrics",
           "paired_differences", "Choice", "METRICS", "TARGETS"]

#: Metric columns of the tables: the sweep column each is read from, and the cut-off.
METRICS = {"R@5": ("R@k", 5), "Complete@10": ("Complete@k", 10), "MRR": ("RR", 10)}
#: The metrics :func:`choose` averages.
TARGETS = ("R@5", "Complete@10")


def evaluate_variants(styles: Mapping[str, tuple[Sequence, Sequence[Query]]],
                      variants: Mapping[str, str | Scorer], split: str | None = "dev",
                      ks: Sequence[int] = (5, 10)) -> pd.DataFrame:
    """R@5, Complete@10, MRR and n for every style × variant on one split.

    Parameters
    ----------
    styles : mapping ``{style: (registry, queries)}``
        Queries of every split; only those of ``split`` are scored.
    variants : mapping ``{label: scorer}``
        Scorer names or objects (never modified: each is fitted as a clone, once per style).
    split : "dev", "test" or None
        ``None`` (or ``"all"``) scores every query.
    ks : cut-offs swept; must include 5 and 10.

    Returns
    -------
    DataFrame
        One row per style × variant (styles, then variants, in the given order):
        ``style, variant, R@5, Complete@10, MRR, n``. The per-query values, which
        :func:`choose` needs, ride along in ``table.attrs["query_metrics"]`` as a dict of
        columns (:func:`query_metrics` returns them as a sweep's ``query_metrics`` frame with a
        ``style`` column; ``scorer`` is the variant label). ``pd.concat`` drops them: join
        tables with :func:`concat_tables`.
    """
    missing = sorted({k for _, k in METRICS.values()} - {int(k) for k in ks})
    if missing:
        raise ValueError(f"ks must include {missing} (the cut-offs of {list(METRICS)})")
    if not styles:
        raise ValueError("no styles to evaluate")
    if not variants:
        raise ValueError("no variants to evaluate")
    rows, parts = [], []
    for style, (registry, queries) in styles.items():
        try:
            qs = filter_split(queries, split)
        except ValueError as exc:
            raise ValueError(f"style {style!r}: {exc}") from None
        qm = sweep(registry, qs, dict(variants), top_k=ks, progress=False).query_metrics
        parts.append(qm.assign(style=style))
        for label in variants:
            g = qm[qm["scorer"] == label]
            row = {"style": style, "variant": label}
            for name, (col, k) in METRICS.items():
                row[name] = float(g.loc[g["top_k"] == k, col].mean())  # nan-skipping
            row["n"] = int(g.loc[g["top_k"] == ks[0], "R@k"].notna().sum())
            rows.append(row)
    table = pd.DataFrame(rows, columns=["style", "variant", *METRICS, "n"])
    return _with_query_metrics(table, pd.concat(parts, ignore_index=True))


def _with_query_metrics(table: pd.DataFrame, qm: pd.DataFrame) -> pd.DataFrame:
    # a dict of plain lists, not a DataFrame: pandas compares attrs with == when combining
    # frames, which a DataFrame in attrs turns into an error
    keep = ["style", "scorer", "top_k", "query_id", *{c for c, _ in METRICS.values()}]
    table.attrs["query_metrics"] = qm[keep].to_dict("list")
    return table


def query_metrics(table: pd.DataFrame) -> pd.DataFrame:
    """The per-query values behind a table of :func:`evaluate_variants` (one row per style ×
    variant × top_k × query: ``style, scorer, top_k, query_id, R@k, Complete@k, RR``)."""
    qm = table.attrs.get("query_metrics")
    if qm is None:
        raise ValueError("table has no per-query values (attrs['query_metrics']); pass a "
                         "table evaluate_variants or concat_tables returned (pd.concat and "
                         "CSV round trips drop them)")
    return pd.DataFrame(qm)


def concat_tables(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Tables of :func:`evaluate_variants` (same styles, other variants) joined into one,
    rows ordered by style (first-seen order), per-query values kept."""
    qms = [query_metrics(t) for t in tables]
    out = pd.concat([t.assign() for t in tables], ignore_index=True)
    out.attrs = {}
    order = list(dict.fromkeys(out["style"]))
    out = out.iloc[np.argsort(out["style"].map(order.index).to_numpy(), kind="stable")]
    out = out.reset_index(drop=True)
    return _with_query_metrics(out, pd.concat(qms, ignore_index=True))


@dataclass
class Choice:
    """What :func:`choose` picked and the evidence.

    ``ranking``: one row per variant, best first: ``variant, score`` (mean over styles of the
    mean of R@5 and Complete@10), ``R@5, Complete@10`` (means over styles), ``worst_loss``
    (largest drop of either metric on any style vs the baseline) and ``eligible``.
    ``differences``: per style and metric, the chosen variant minus the baseline with a paired
    bootstrap interval, wins/losses and the verdict by the one rule
    (:func:`~toolsel.eval.stats.paired_comparison`; the family is one comparison per style).
    """

    variant: str
    baseline: str
    ranking: pd.DataFrame
    differences: pd.DataFrame


def choose(table: pd.DataFrame, baseline: str, *, max_loss: float | None = None,
           max_loss_queries: float | None = None, candidates: Sequence[str] | None = None,
           n_boot: int = 2000, seed: int = 0) -> Choice:
    """The variant with the best mean over styles of R@5 and Complete@10.

    Parameters
    ----------
    table : DataFrame from :func:`evaluate_variants`
    baseline : the variant label compared against (usually today's default)
    max_loss : float, optional
        Only variants losing at most this much (e.g. 0.01 = 1 point) of R@5 or Complete@10
        on every style are eligible; the baseline always is. ``None``: no constraint.
    max_loss_queries : float, optional
        The same budget counted in queries: a loss of ``d`` on a style of ``n`` queries costs
        ``d * n`` (1 = one query's worth, 1.25 points on a set of 80, 1.8 on a set of 56), so
        small sets are not held to a budget finer than one query. Both budgets apply when
        both are given.
    candidates : sequence of str, optional
        The variants that may be chosen (e.g. those meeting a latency target); default all.
        Losses are still measured against ``baseline``, which is eligible only if listed.

    Ties in score keep the table's variant order (so the baseline wins a tie if listed first).
    """
    qm = query_metrics(table)
    variants = list(dict.fromkeys(table["variant"]))
    if baseline not in variants:
        raise ValueError(f"baseline {baseline!r} is not a variant of the table: {variants}")
    allowed = set(variants if candidates is None else candidates)
    if not allowed & set(variants):
        raise ValueError(f"no candidate is a variant of the table: {sorted(allowed)}")
    wide = table.set_index(["variant", "style"])[list(TARGETS)]
    base = wide.xs(baseline, level="variant")
    n = table.set_index(["variant", "style"])["n"].xs(baseline, level="variant")
    rows = []
    for v in variants:
        own = wide.xs(v, level="variant")
        diff = base - own.reindex(base.index)
        loss = float(diff.max().max())
        loss_q = float(diff.mul(n.reindex(base.index), axis=0).max().max())
        ok = ((max_loss is None or loss <= max_loss + 1e-12)
              and (max_loss_queries is None or loss_q <= max_loss_queries + 1e-9))
        rows.append({"variant": v, "score": float(own.mean(axis=1).mean()),
                     "R@5": float(own["R@5"].mean()),
                     "Complete@10": float(own["Complete@10"].mean()),
                     "worst_loss": loss, "worst_loss_queries": loss_q,
                     "eligible": v in allowed and (v == baseline or ok)})
    ranking = pd.DataFrame(rows)
    ranking["_order"] = range(len(ranking))
    ranking = ranking.sort_values(["score", "_order"], ascending=[False, True],
                                  kind="stable").drop(columns="_order").reset_index(drop=True)
    if not ranking["eligible"].any():
        raise ValueError("no candidate variant is within the loss budget against "
                         f"{baseline!r}:\n{ranking.to_string(index=False)}")
    chosen = str(ranking.loc[ranking["eligible"], "variant"].iloc[0])
    return Choice(chosen, baseline, ranking,
                  paired_differences(qm, chosen, baseline, n_boot=n_boot, seed=seed))


def paired_differences(query_metrics: pd.DataFrame, a: str, b: str, *, n_boot: int = 2000,
                       seed: int = 0) -> pd.DataFrame:
    """Per style, ``a − b`` on R@5 and Complete@10 with a paired bootstrap interval and the
    one rule's verdict (:mod:`toolsel.eval.inference`; the family on one metric is one
    comparison per style).

    ``query_metrics`` is :func:`query_metrics` of a table of :func:`evaluate_variants`. Rows:
    ``style, metric, a, b, mean_a, mean_b, diff, diff_low, diff_high, a_wins, b_wins, family,
    verdict``; ``a == b`` gives zero differences (a tie).
    """
    rows = []
    family = max(1, query_metrics["style"].nunique())
    for style, g in query_metrics.groupby("style", sort=False):
        for metric in TARGETS:
            col, k = METRICS[metric]
            if a == b:
                v = g.loc[(g["scorer"] == a) & (g["top_k"] == k), col].dropna()
                rows.append({"style": style, "metric": metric, "a": a, "b": b,
                             "mean_a": float(v.mean()), "mean_b": float(v.mean()),
                             "diff": 0.0, "diff_low": 0.0, "diff_high": 0.0,
                             "a_wins": 0, "b_wins": 0, "family": family, "verdict": "tie"})
                continue
            pc = paired_comparison(g, col, scorers=[a, b], top_k=[k], family=family,
                                   n_boot=n_boot, seed=seed).iloc[0]
            rows.append({"style": style, "metric": metric, "a": a, "b": b,
                         **{c: pc[c] for c in ("mean_a", "mean_b", "diff", "diff_low",
                                               "diff_high", "a_wins", "b_wins", "family",
                                               "verdict")}})
    return pd.DataFrame(rows)
