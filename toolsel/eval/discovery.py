"""Discovery evaluation on whole requests: multi-tool recall, recall vs loaded noise, splits.

Three measurements, each a tidy DataFrame first and a summary second:

- :func:`multi_tool_metrics`: per request ``R@k`` (share of required tools sent) and
  ``Complete@k`` (every required tool sent) side by side, summarized by category and by the
  number of required tools. Built on :func:`toolsel.eval.sweep.sweep`, so required tools that are
  always-include are dropped before any metric (they are visible anyway) and counted apart in
  ``n_always_required``; a request needing only always-include tools has no filtered metric
  and is counted in ``n_always_only``.
- :func:`noise_curve`: a discover/search call returning the top ``n`` (1..10) deferred tools
  scoring above zero, as :meth:`toolsel.selection.Selector.search` does: how many required
  tools it finds against how many irrelevant definitions (and tokens) it loads.
- :func:`assign_splits`: the fixed dev/test rule used for ``data/requests.jsonl``.

Ties are broken by registry order everywhere (see :mod:`toolsel.ranking`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data import Query, Registry, Tool
from .metrics import tool_costs
from ..ranking import top_k_indices
from .sweep import _scorer_items, sweep

__all__ = ["assign_splits", "filter_split", "multi_tool_metrics", "summarize_requests",
           "noise_curve", "summarize_noise", "plot_noise_curve", "plot_multi_tool",
           "write_table", "FLOAT_FORMAT"]

FLOAT_FORMAT = "%.6f"


# --------------------------------------------------------------------------------------------
# splits


def assign_splits(records: Sequence[Query | Mapping[str, Any]]) -> list[str]:
    """The dev/test split rule: alternate within each category, in file order.

    Within each ``category`` (records without one form their own group) the 1st, 3rd, 5th...
    record goes to ``dev`` and the 2nd, 4th... to ``test``. The rule is fixed, uses no
    scores, and stratifies by category (each category splits as evenly as it can, dev getting
    the odd one out).
    """
    seen: dict[Any, int] = {}
    out = []
    for rec in records:
        cat = rec.category if isinstance(rec, Query) else rec.get("category")
        i = seen.get(cat, 0)
        seen[cat] = i + 1
        out.append("dev" if i % 2 == 0 else "test")
    return out


def filter_split(queries: Iterable[Query], split: str | None) -> list[Query]:
    """The queries of ``split`` (``"dev"``/``"test"``), or all of them for ``None``/``"all"``."""
    queries = list(queries)
    if split in (None, "all"):
        return queries
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev', 'test' or 'all', got {split!r}")
    out = [q for q in queries if q.split == split]
    if not out:
        raise ValueError(f"no queries in split {split!r}")
    return out


def _always(registry: Registry, always_include) -> frozenset[str]:
    if always_include is None:
        return registry.always_include
    if isinstance(always_include, str):
        always_include = [always_include]
    return registry.check_names(always_include, what="always_include")


# --------------------------------------------------------------------------------------------
# multi-tool requests


def multi_tool_metrics(registry: Sequence[Tool], queries: Sequence[Query],
                       scorers=("jaccard", "bm25", "tfidf", "embedding"),
                       top_k: Iterable[int] = (1, 3, 5, 10), *,
                       always_include: Iterable[str] | None = None) -> pd.DataFrame:
    """Per request and cut-off: ``R@k``, ``Complete@k`` and ``Success@k`` with request labels.

    Parameters
    ----------
    registry, queries, scorers, top_k
        As for :func:`toolsel.eval.sweep.sweep`.
    always_include : iterable of str, optional
        Tools sent every turn, outside the filter; ``None`` (default) takes the registry's
        marked tools. Required tools among them are counted in ``n_always_required`` and
        never enter ``R@k``/``Complete@k``.

    Returns
    -------
    DataFrame
        One row per scorer × top_k × query: ``scorer, top_k, query_id, category, split,
        n_expected, n_required, n_always_required, R@k, Complete@k, Success@k, RR,
        payload_json_tokens``. ``n_required`` counts the filtered tools; metrics are ``nan``
        when it is 0.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    always = _always(reg, always_include)
    result = sweep(reg, queries, scorers, top_k, always_include=sorted(always, key=reg.index),
                   progress=False)
    qm = result.query_metrics
    labels = pd.DataFrame([{"query_id": q.id, "category": q.category, "split": q.split,
                            "n_expected": len(q.expected)} for q in queries])
    out = qm.merge(labels, on="query_id", how="left", validate="many_to_one")
    cols = ["scorer", "top_k", "query_id", "category", "split", "n_expected", "n_required",
            "n_always_required", "R@k", "Complete@k", "Success@k", "RR", "payload_json_tokens"]
    return out[cols].reset_index(drop=True)


def summarize_requests(per_request: pd.DataFrame, by: str | Sequence[str] = "category"
                       ) -> pd.DataFrame:
    """Means of ``R@k``, ``Complete@k``, ``Success@k`` per scorer × top_k × group.

    ``n_requests`` counts requests with at least one filtered required tool (the ones the
    means are over); ``n_always_only`` counts those needing only always-include tools;
    ``n_always_required`` sums the always-include required tools set apart. Groups keep the
    order they first appear in (numeric groups, like ``n_required``, are sorted); use
    ``by=[]`` for one row per scorer × top_k.
    """
    by = [by] if isinstance(by, str) else list(by)
    rows = []
    keys = ["scorer", "top_k", *by]
    for key, g in per_request.groupby(keys, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        valid = g["n_required"] > 0
        row = dict(zip(keys, key))
        row.update({
            "n_requests": int(valid.sum()),
            "R@k": g.loc[valid, "R@k"].mean() if valid.any() else float("nan"),
            "Complete@k": g.loc[valid, "Complete@k"].mean() if valid.any() else float("nan"),
            "Success@k": g.loc[valid, "Success@k"].mean() if valid.any() else float("nan"),
            "gap": (g.loc[valid, "R@k"].mean() - g.loc[valid, "Complete@k"].mean())
            if valid.any() else float("nan"),
            "n_always_only": int((~valid).sum()),
            "n_always_required": int(g["n_always_required"].sum()),
        })
        rows.append(row)
    out = pd.DataFrame(rows)
    numeric = [c for c in by if pd.api.types.is_numeric_dtype(per_request[c])]
    if numeric:  # e.g. n_required: 0, 1, 2, 3 within each scorer × top_k
        order = {s: i for i, s in enumerate(dict.fromkeys(per_request["scorer"]))}
        out = out.sort_values(["scorer", "top_k", *numeric], key=lambda c: c.map(order)
                              if c.name == "scorer" else c, kind="stable")
        out = out.reset_index(drop=True)
    return out


# --------------------------------------------------------------------------------------------
# recall vs loaded noise


def noise_curve(registry: Sequence[Tool], queries: Sequence[Query],
                scorers=("jaccard", "bm25", "tfidf", "embedding"),
                limits: Iterable[int] = range(1, 11), *,
                always_include: Iterable[str] | None = None,
                query_field: str = "query", encoding: str = "cl100k_base") -> pd.DataFrame:
    """Required tools found vs irrelevant definitions loaded by a search returning top ``n``.

    The search ranks the deferred tools (the registry minus always-include ones, which are
    loaded anyway) and returns up to ``n`` of those scoring above zero, best first, as
    :meth:`toolsel.selection.Selector.search` does.

    Parameters
    ----------
    query_field : ``"query"`` or ``"search_term"``
        Search with the request text (what a middleware sees) or with the request's
        ``search_term`` (what a model would pass to ``discover``; the request text when it
        has none).

    Returns
    -------
    DataFrame
        One row per scorer × limit × query: ``scorer, limit, query_id, category, split,
        n_required, found, loaded, irrelevant, R@n, Complete@n, loaded_tokens,
        irrelevant_tokens`` (tokens of the JSON definitions). Requests with no deferred
        required tool get ``nan`` recall.
    """
    if query_field not in ("query", "search_term"):
        raise ValueError(f"query_field must be 'query' or 'search_term', got {query_field!r}")
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    limits = sorted(set(int(n) for n in limits))
    if not limits or limits[0] < 1:
        raise ValueError(f"limits must be integers >= 1, got {limits}")
    always = _always(reg, always_include)
    deferred = np.asarray([t.name not in always for t in reg])
    costs = tool_costs(reg, encoding=encoding).json_tokens
    index = {n: i for i, n in enumerate(reg.names)}
    texts = [q.query if query_field == "query" else (q.search_term or q.query) for q in queries]
    required = [{index[t] for t in q.expected if t not in always} for q in queries]
    rows = []
    for label, scorer in _scorer_items(scorers):
        scorer.fit(reg)
        scores = scorer.score_many(texts)
        for qi, q in enumerate(queries):
            s = np.where(np.isnan(scores[qi]), -np.inf, scores[qi])
            ranked = top_k_indices(s, max(limits), deferred & (s > 0))
            ranked = ranked[np.argsort(-s[ranked], kind="stable")]
            req = required[qi]
            for n in limits:
                hits = [int(i) for i in ranked[:n]]
                found = sum(i in req for i in hits)
                irrelevant = [i for i in hits if i not in req]
                rows.append({
                    "scorer": label, "limit": n, "query_id": q.id, "category": q.category,
                    "split": q.split, "n_required": len(req), "found": found,
                    "loaded": len(hits), "irrelevant": len(irrelevant),
                    "R@n": found / len(req) if req else float("nan"),
                    "Complete@n": float(found == len(req)) if req else float("nan"),
                    "loaded_tokens": int(costs[hits].sum()) if hits else 0,
                    "irrelevant_tokens": int(costs[irrelevant].sum()) if irrelevant else 0,
                })
    return pd.DataFrame(rows)


def summarize_noise(curve: pd.DataFrame) -> pd.DataFrame:
    """Per scorer × limit: mean recall and completeness over requests with a deferred required
    tool, and mean definitions/tokens loaded and irrelevant over all requests."""
    rows = []
    for (label, n), g in curve.groupby(["scorer", "limit"], sort=False):
        valid = g["n_required"] > 0
        rows.append({
            "scorer": label, "limit": int(n), "n_requests": int(valid.sum()),
            "R@n": g.loc[valid, "R@n"].mean(), "Complete@n": g.loc[valid, "Complete@n"].mean(),
            "found": g["found"].mean(), "loaded": g["loaded"].mean(),
            "irrelevant": g["irrelevant"].mean(), "loaded_tokens": g["loaded_tokens"].mean(),
            "irrelevant_tokens": g["irrelevant_tokens"].mean(),
            "precision": g["found"].sum() / g["loaded"].sum() if g["loaded"].sum() else 0.0,
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# tables and figures


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``df`` as CSV with the report conventions (6-decimal floats, ``\\n`` lines).

    Atomic, through :func:`toolsel.io.write_table`; for several tables that belong together
    use :func:`toolsel.io.write_set`.
    """
    from ..io import write_table as _write_table
    return _write_table(df, path, float_format=FLOAT_FORMAT)


def plot_noise_curve(summary: pd.DataFrame, *, ax=None, recall: str = "R@n"):
    """Share of required tools found against irrelevant definitions loaded, one line per scorer;
    each point is a result limit ``n`` (labeled at both ends)."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.5))
    from ..report.plots import _color
    for i, (label, g) in enumerate(summary.groupby("scorer", sort=False)):
        g = g.sort_values("limit")
        ax.plot(g["irrelevant"], g[recall], marker="o", label=label, color=_color(label, i))
        for _, r in g.iloc[[0, -1]].iterrows():
            ax.annotate(f"n={int(r['limit'])}", (r["irrelevant"], r[recall]), fontsize=7,
                        textcoords="offset points", xytext=(3, -9))
    ax.set_xlabel("irrelevant tool definitions loaded per request (mean count)")
    ax.set_ylabel(f"{recall}: share of required tools found")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(title="scorer")
    ax.set_title("Discover/search result limit n = 1..10: recall vs loaded noise")
    return ax.figure


def plot_multi_tool(summary: pd.DataFrame, *, by: str = "category", top_k: int = 5, ax=None):
    """Grouped bars: ``R@k`` (light) and ``Complete@k`` (dark) per group, one color per scorer."""
    import matplotlib.pyplot as plt
    data = summary[summary["top_k"] == top_k]
    groups = list(dict.fromkeys(data[by].astype(str)))
    scorers = list(dict.fromkeys(data["scorer"]))
    if ax is None:
        _, ax = plt.subplots(figsize=(max(7, 1.3 * len(groups)), 4.5))
    width = 0.8 / max(len(scorers), 1)
    x = np.arange(len(groups))
    from ..report.plots import _color
    for j, s in enumerate(scorers):
        g = data[data["scorer"] == s].set_index(data[data["scorer"] == s][by].astype(str))
        r = [g["R@k"].get(k, np.nan) for k in groups]
        c = [g["Complete@k"].get(k, np.nan) for k in groups]
        pos = x - 0.4 + width * (j + 0.5)
        color = _color(s, j)
        ax.bar(pos, r, width, color=color, alpha=0.35)
        ax.bar(pos, c, width * 0.6, color=color, label=s)
    ax.set_xticks(x, groups, rotation=20, ha="right")
    ax.set_ylabel(f"share of requests (R@{top_k} light bar, Complete@{top_k} dark bar)")
    ax.set_xlabel(by.replace("_", " "))
    ax.set_ylim(0, 1.05)
    ax.legend(title="scorer", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Per-request recall vs completeness at top_k={top_k}")
    return ax.figure

