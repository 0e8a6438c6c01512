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
- :func:`toolsel.datasets.assign_splits`: the fixed dev/test rule used for ``data/requests.jsonl``.

Ties are broken by registry order everywhere (see :mod:`toolsel.ranking`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from ..data import Query, Registry, Tool
from ..eval.engine import Candidates, as_registry, fit_scorers, rank_batches
from ..eval.metrics import evaluate, group_means, tool_costs
from ..eval.sweep import sweep
from ..scorers.base import compared_scorers

__all__ = ["multi_tool_metrics", "summarize_requests",
           "noise_curve", "summarize_noise", "write_table", "FLOAT_FORMAT"]

FLOAT_FORMAT = "%.6f"


# --------------------------------------------------------------------------------------------
# splits


def _always(registry: Registry, always_include) -> frozenset[str]:
    if always_include is None:
        return registry.always_include
    if isinstance(always_include, str):
        always_include = [always_include]
    return registry.check_names(always_include, what="always_include")


def _or_single_scorers(scorers):
    """``scorers``, or the registry's single compared scorers when ``None``."""
    return compared_scorers(single=True) if scorers is None else scorers


# --------------------------------------------------------------------------------------------
# multi-tool requests


def multi_tool_metrics(registry: Sequence[Tool], queries: Sequence[Query],
                       scorers: Sequence | None = None,
                       top_k: Iterable[int] = (1, 3, 5, 10), *,
                       always_include: Iterable[str] | None = None) -> pd.DataFrame:
    """Per request and cut-off: ``R@k``, ``Complete@k`` and ``Success@k`` with request labels.

    Parameters
    ----------
    registry, queries, scorers, top_k
        As for :func:`toolsel.eval.sweep.sweep` (``scorers``: the registry's single compared
        scorers by default).
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
    result = sweep(reg, queries, _or_single_scorers(scorers), top_k,
                   always_include=sorted(always, key=reg.index), progress=False)
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
    keys = ["scorer", "top_k", *by]
    df = per_request.assign(_valid=per_request["n_required"] > 0,
                            _only=per_request["n_required"] == 0)
    out = group_means(df, keys, valid="_valid", n_valid="n_requests",
                      over_valid={"R@k": "R@k", "Complete@k": "Complete@k",
                                  "Success@k": "Success@k"})
    out["gap"] = out["R@k"] - out["Complete@k"]
    grouped = df.groupby(keys, sort=False, dropna=False)
    out["n_always_only"] = grouped["_only"].sum().to_numpy().astype(int)
    out["n_always_required"] = grouped["n_always_required"].sum().to_numpy().astype(int)
    out = out[[*keys, "n_requests", "R@k", "Complete@k", "Success@k", "gap", "n_always_only",
               "n_always_required"]]
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
                scorers: Sequence | None = None,
                limits: Iterable[int] = range(1, 11), *,
                always_include: Iterable[str] | None = None,
                query_field: str = "query", encoding: str = "cl100k_base") -> pd.DataFrame:
    """Required tools found vs irrelevant definitions loaded by a search returning top ``n``.

    The search ranks the deferred tools (the registry minus always-include ones, which are
    loaded anyway) and returns up to ``n`` of those that match the request under the
    scorer's no-match rule (:meth:`~toolsel.scorers.base.Scorer.score_and_match`), best
    first, as :meth:`toolsel.selection.Selector.search` does.

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
    reg = as_registry(registry)
    limits = sorted(set(int(n) for n in limits))
    if not limits or limits[0] < 1:
        raise ValueError(f"limits must be integers >= 1, got {limits}")
    always = _always(reg, always_include)
    cands = Candidates.of(reg, sorted(always, key=reg.index))
    costs = tool_costs(reg, encoding=encoding).json_tokens
    texts = [q.query if query_field == "query" else (q.search_term or q.query) for q in queries]
    required = [cands.required(q) for q in queries]
    n_req = [len(r) for r in required]
    cand_idx = cands.index
    rows = []
    for label, scorer in fit_scorers(reg, _or_single_scorers(scorers)):
        for batch in rank_batches(scorer, texts, cands, matches=True):
            for b, qi in enumerate(range(batch.start, batch.stop)):
                q = queries[qi]
                # what the search returns: matching deferred tools, best first, up to the limit
                ranked = cand_idx[batch.order[b]]  # registry indices, best first
                found_order = ranked[batch.matches[b, ranked]][:max(limits)].tolist()
                req = set(required[qi])
                # a required tool's rank among the returned tools (past every limit if not)
                pos = {t: r for r, t in enumerate(found_order, 1)}
                ranks = [pos.get(t, max(limits) + 1) for t in required[qi]]
                per_q = evaluate([ranks], limits, [n_req[qi]])
                for j, n in enumerate(limits):
                    hits = found_order[:n]
                    irrelevant = [i for i in hits if i not in req]
                    rows.append({
                        "scorer": label, "limit": n, "query_id": q.id, "category": q.category,
                        "split": q.split, "n_required": n_req[qi],
                        "found": len(hits) - len(irrelevant), "loaded": len(hits),
                        "irrelevant": len(irrelevant),
                        "R@n": float(per_q["R@k"][0, j]),
                        "Complete@n": float(per_q["Complete@k"][0, j]),
                        "loaded_tokens": int(costs[hits].sum()) if hits else 0,
                        "irrelevant_tokens": int(costs[irrelevant].sum()) if irrelevant else 0,
                    })
    return pd.DataFrame(rows)


def summarize_noise(curve: pd.DataFrame) -> pd.DataFrame:
    """Per scorer × limit: mean recall and completeness over requests with a deferred required
    tool, and mean definitions/tokens loaded and irrelevant over all requests."""
    out = group_means(curve.assign(_valid=curve["n_required"] > 0), ["scorer", "limit"],
                      valid="_valid", n_valid="n_requests",
                      over_valid={"R@n": "R@n", "Complete@n": "Complete@n"},
                      over_all={c: c for c in ("found", "loaded", "irrelevant", "loaded_tokens",
                                               "irrelevant_tokens")})
    out["limit"] = out["limit"].astype(int)
    totals = curve.groupby(["scorer", "limit"], sort=False)[["found", "loaded"]].sum()
    out["precision"] = [f / n if n else 0.0 for f, n in totals.to_numpy()]
    return out[["scorer", "limit", "n_requests", "R@n", "Complete@n", "found", "loaded",
                "irrelevant", "loaded_tokens", "irrelevant_tokens", "precision"]]


# --------------------------------------------------------------------------------------------
# writing tables


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``df`` as CSV with the report conventions (6-decimal floats, ``\\n`` lines).

    Atomic, through :func:`toolsel.io.write_table`; for several tables that belong together
    use :func:`toolsel.io.write_set`.
    """
    from ..io import write_table as _write_table
    return _write_table(df, path, float_format=FLOAT_FORMAT)


