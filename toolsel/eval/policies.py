"""Selection policies on the recall-vs-payload plane, and their Pareto frontier.

:func:`evaluate_policies` fits a scorer once, scores the labeled queries in batches
(:mod:`toolsel.eval.engine`) and, for every policy of a list (each usually a sweep of one
parameter, :func:`toolsel.policies.policy_grid`), records per query what the policy sends:

- ``R@sent``: share of the query's required tools sent; ``Complete@sent``: 1 if all are
  (:func:`toolsel.eval.metrics.evaluate_sent`);
- ``n_sent``: filtered tools sent; ``payload_tokens``: tokens of the JSON definitions of
  everything sent (always-include tools included); ``payload_reduction``: 1 − that / the
  whole registry's.

Required tools that are always-include are visible anyway and never count (the
zero-relevant policy of :mod:`toolsel.eval.metrics`). :func:`summarize_policies` averages
per policy configuration; :func:`frontier` marks the Pareto-best points (no other point has
at least the payload reduction and at least the recall, one of them strictly);
:func:`dominates_top_k` asks whether a policy has a point that no fixed top-K point dominates
and that dominates at least one (on the means: whether that is a real gain is the paired
interval of notebook 12's ``beats``); :func:`dev_choice` keeps, per policy family, the configurations
on that family's own frontier of the dev split (what a test report then shows);
:func:`best_at_comparable_payload` reads the frontier at the payload of given top-K cut-offs.
Everything is deterministic (no timings).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from ..data import Query, Tool
from ..policies import Policy, TopK, PrefixPolicy, default_grid, get_policy
from .engine import DEFAULT_BATCH_SIZE, Candidates, rank_batches, scorer_for, scorer_items
from .metrics import evaluate_sent, group_means, tool_costs

__all__ = ["evaluate_policies", "summarize_policies", "frontier", "dominates_top_k", "dev_choice",
           "best_at_comparable_payload", "default_grid", "SUMMARY_COLUMNS",
           "settings_table"]

SUMMARY_COLUMNS = ["policy", "config", "param_name", "param", "R@sent", "Complete@sent", "n_queries",
                   "n_sent", "payload_tokens", "payload_reduction"]

def _param(policy: Policy) -> float:
    """The one number a policy's curve is swept over (its ``sweep_param``, for plots and
    sorting)."""
    name = policy.sweep_param
    return float(getattr(policy, name)) if name else float("nan")


def evaluate_policies(registry: Sequence[Tool], queries: Sequence[Query], scorer,
                      policies: Iterable[Policy | str], *, always_include: Iterable[str] = (),
                      batch_size: int = DEFAULT_BATCH_SIZE,
                      encoding: str = "cl100k_base") -> pd.DataFrame:
    """Per query × policy: what the policy sends for the query, and what it costs.

    Parameters
    ----------
    registry, queries : the registry and its labeled queries
    scorer : a scorer name or object (fitted once, as a clone)
    policies : policies or names; each is fitted on the registry (as a clone)
    always_include : tools sent on every query, outside every policy

    Returns
    -------
    DataFrame
        One row per policy × query: ``policy`` (family name), ``config`` (the policy's
        repr), ``param_name`` and ``param`` (the parameter its curve is swept over, e.g.
        ``min_score``, and its value: the policy's ``sweep_param``), ``query_id``, ``split``, ``n_required``, ``found``,
        ``R@sent``, ``Complete@sent`` (``nan`` without a required tool), ``n_sent``, ``payload_tokens``,
        ``payload_reduction``.
    """
    cands = Candidates.of(registry, always_include)
    reg = cands.registry
    queries = list(queries)
    if not queries:
        raise ValueError("no queries to evaluate")
    costs = tool_costs(reg, encoding=encoding).json_tokens
    fitted, configs = _fitted_policies(policies, reg, costs)
    total = float(costs.sum())
    always_tokens = float(costs[cands.always].sum())
    candidates = ~cands.always
    pos = cands.position
    scorer_items({"scorer": scorer})  # an unknown name fails here
    sc = scorer_for(scorer, reg)  # during a report, fitted only if the cache lacks its scores
    required = [pos[cands.required(q)] for q in queries]
    cols: dict[str, list] = {c: [] for c in ("config_i", "query_i", "found", "n_sent",
                                             "tokens")}
    for batch in rank_batches(sc, [q.query for q in queries], cands, batch_size=batch_size):
        for b, qi in enumerate(range(batch.start, batch.stop)):
            # the engine's ranking is the policies' ranking (stable, ties to the earlier
            # tool): prefix policies read their cut-off off it, found = required ranks <= k
            order = cands.index[batch.order[b]]
            ranked_scores = batch.scores[b][order]
            ranks = batch.ranks_of(b, required[qi])
            spent = np.concatenate([[0.0], np.cumsum(costs[order], dtype=np.float64)])
            for i, policy in enumerate(fitted):
                if isinstance(policy, PrefixPolicy):
                    # a cut-off past the candidates sends them all (a one-tool registry)
                    k = min(policy.cutoff(ranked_scores, order), len(order))
                    found, tokens = int((ranks <= k).sum()), spent[k]
                else:
                    found, k, tokens = _selected(policy, batch.scores[b], candidates,
                                                 cands.index[required[qi]], costs)
                for c, v in (("config_i", i), ("query_i", qi), ("found", found),
                             ("n_sent", k), ("tokens", tokens)):
                    cols[c].append(v)
    return _per_query_table(cols, fitted, configs, queries, required, always_tokens, total)


def _fitted_policies(policies, reg, costs) -> tuple[list, list[str]]:
    """Each policy fitted (as a clone) on the registry, and its repr; refuses none and a
    policy listed twice."""
    fitted = [get_policy(p).clone().fit(reg, costs=costs) for p in policies]
    if not fitted:
        raise ValueError("no policies to evaluate")
    configs = [repr(p) for p in fitted]
    if len(set(configs)) != len(configs):
        raise ValueError("a policy is listed twice: " + ", ".join(
            c for c in configs if configs.count(c) > 1))
    return fitted, configs


def _selected(policy, scores, candidates, req, costs) -> tuple[int, int, float]:
    """What a non-prefix policy sends for one query: required tools found (``req``, registry
    indices), tools sent, their tokens."""
    sent = policy.select(scores, candidates)
    k = len(sent)
    at = np.searchsorted(sent, req).clip(max=max(k - 1, 0))
    found = int((sent[at] == req).sum()) if k else 0
    tokens = float(costs[sent].sum())
    return found, k, tokens


def _per_query_table(cols, fitted, configs, queries, required, always_tokens,
                     total) -> pd.DataFrame:
    """The per policy × query table of :func:`evaluate_policies` from its collected columns."""
    ci = np.asarray(cols["config_i"])
    qi = np.asarray(cols["query_i"])
    n_req = np.asarray([len(r) for r in required])[qi]
    found = np.asarray(cols["found"], dtype=np.int64)
    tokens = always_tokens + np.asarray(cols["tokens"], dtype=np.float64)
    sent_metrics = evaluate_sent(found, n_req)
    out = pd.DataFrame({
        "policy": [fitted[i].name for i in ci], "config": [configs[i] for i in ci],
        "param_name": [fitted[i].sweep_param or "" for i in ci],
        "param": [_param(fitted[i]) for i in ci],
        "query_id": [queries[i].id for i in qi], "split": [queries[i].split or "" for i in qi],
        "n_required": n_req, "found": found, "R@sent": sent_metrics["R@sent"],
        "Complete@sent": sent_metrics["Complete@sent"],
        "n_sent": np.asarray(cols["n_sent"], dtype=np.int64), "payload_tokens": tokens,
        "payload_reduction": 1.0 - tokens / total if total else np.zeros(len(tokens))})
    # configuration-major, queries in file order within each configuration
    return out.iloc[np.lexsort((qi, ci))].reset_index(drop=True)


def summarize_policies(per_query: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """One row per (``by`` ×) configuration: means of ``R@sent`` and ``Complete@sent`` over queries with a
    required tool, of ``n_sent``, ``payload_tokens``, ``payload_reduction`` over all."""
    keys = [*by, "policy", "config", "param_name", "param"]
    out = group_means(per_query.assign(_valid=per_query["n_required"] > 0), keys,
                      valid="_valid", over_valid={c: c for c in ("R@sent", "Complete@sent")},
                      over_all={c: c for c in ("n_sent", "payload_tokens",
                                               "payload_reduction")})
    return out[[*by, *SUMMARY_COLUMNS]]


def _dominates(x1, y1, x2, y2) -> np.ndarray:
    """Whether point 1 dominates point 2 (broadcast): at least as good on both, better on one."""
    return (x1 >= x2) & (y1 >= y2) & ((x1 > x2) | (y1 > y2))


def _keys(by: str | Sequence[str] | None) -> list[str]:
    return [] if not by else ([by] if isinstance(by, str) else list(by))


def _groups(df: pd.DataFrame, by: str | Sequence[str] | None
            ) -> tuple[list[str], list[tuple[tuple, pd.DataFrame]]]:
    """The ``by`` columns as a list, and ``(key tuple, rows)`` per group in first-seen order
    (one group, key ``()``, when ``by`` is empty)."""
    keys = _keys(by)
    if not keys:
        return keys, [((), df)]
    return keys, [(k if isinstance(k, tuple) else (k,), g)
                  for k, g in df.groupby(keys, sort=False)]


def frontier(df: pd.DataFrame, *, x: str = "payload_reduction", y: str = "R@sent",
             by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """``df`` with a boolean column ``pareto``: no other point (of its ``by`` group) dominates it.

    A point dominates another when it is at least as good on ``x`` and on ``y`` (both higher
    is better) and strictly better on one; identical points are both Pareto-best.
    """
    for col in (x, y):
        if col not in df.columns:
            raise KeyError(f"the table has no column {col!r}")
    out = df.copy()
    out["pareto"] = False
    for _, g in _groups(out, by)[1]:
        xs, ys = g[x].to_numpy(float), g[y].to_numpy(float)
        dominated = _dominates(xs[:, None], ys[:, None], xs[None, :], ys[None, :]).any(axis=0)
        out.loc[g.index, "pareto"] = ~dominated
    return out


def dominates_top_k(summary: pd.DataFrame, *, baseline: str = "top_k",
                x: str = "payload_reduction", y: str = "R@sent",
                by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Per (``by`` ×) policy family: does a point of it dominate a fixed top-K point?

    ``dominates`` is true when one of its points is dominated by no ``baseline`` point and
    dominates at least one, on the means (no interval: notebook 12 says where such a point
    is a real gain). Returns ``policy, dominates, n_winning``, and the winning point with the
    largest ``y`` (``config, <x>, <y>``) and the baseline point it dominates with the largest
    ``y`` (``dominated, dominated_<x>, dominated_<y>``).
    """
    keys, groups = _groups(summary, by)
    rows = []
    for key, g in groups:
        base = g[g["policy"] == baseline]
        if base.empty:
            raise ValueError(f"no {baseline!r} points to compare with" +
                             (f" in {dict(zip(keys, key))}" if keys else ""))
        bx, by_ = base[x].to_numpy(float), base[y].to_numpy(float)
        for policy, p in g[g["policy"] != baseline].groupby("policy", sort=False):
            px, py = p[x].to_numpy(float), p[y].to_numpy(float)
            dominated_by = _dominates(bx[:, None], by_[:, None], px[None, :], py[None, :])
            dominating = _dominates(px[:, None], py[:, None], bx[None, :], by_[None, :])
            win = ~dominated_by.any(axis=0) & dominating.any(axis=1)
            row = dict(zip(keys, key))
            row.update({"policy": policy, "dominates": bool(win.any()),
                        "n_winning": int(win.sum())})
            if win.any():
                i = int(np.flatnonzero(win)[np.argmax(py[win])])
                j = int(np.flatnonzero(dominating[i])[np.argmax(by_[dominating[i]])])
                row.update({"config": p["config"].iloc[i], x: px[i], y: py[i],
                            "dominated": base["config"].iloc[j], f"dominated_{x}": bx[j],
                            f"dominated_{y}": by_[j]})
            rows.append(row)
    cols = [*keys, "policy", "dominates", "n_winning", "config", x, y, "dominated",
            f"dominated_{x}", f"dominated_{y}"]
    return pd.DataFrame(rows).reindex(columns=cols)


def dev_choice(dev_summary: pd.DataFrame, *, keep_all: Iterable[str] = ("top_k",),
               x: str = "payload_reduction", y: str = "R@sent",
               by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """The configurations chosen on dev: per (``by`` ×) family, those on the family's own
    frontier (of configurations giving the very same point, the first listed); every
    configuration of the ``keep_all`` families (the baseline needs no choosing)."""
    keys = _keys(by)
    marked = frontier(dev_summary, x=x, y=y, by=[*keys, "policy"])
    first = ~marked.duplicated([*keys, "policy", x, y], keep="first")
    keep = (marked["pareto"] & first) | marked["policy"].isin(list(keep_all))
    return marked.loc[keep, [*keys, "policy", "config"]].reset_index(drop=True)


def best_at_comparable_payload(summary: pd.DataFrame, ks: Sequence[int] = (3, 5, 10), *,
                               baseline: str = "top_k", x: str = "payload_reduction",
                               y: str = "R@sent", by: str | Sequence[str] | None = None
                               ) -> pd.DataFrame:
    """At the payload of each fixed top-K cut-off: the best point sending no more than it.

    One row per (``by`` ×) ``k``: the top-K point (``top_k_<x>``, ``top_k_<y>``), and among
    every point with at least that payload reduction the one with the highest ``y`` (ties:
    higher ``x``, then first listed): ``best_policy``, ``best_config``, ``best_<x>``,
    ``best_<y>``, and ``gain`` (its ``y`` − top-K's).
    """
    keys, groups = _groups(summary, by)
    rows = []
    for key, g in groups:
        base = g[g["policy"] == baseline]
        for k in ks:
            point = base[base["config"] == repr(TopK(k))]
            if point.empty:
                continue
            bx, byv = float(point[x].iloc[0]), float(point[y].iloc[0])
            ok = g[g[x] >= bx - 1e-12]
            best = ok.sort_values([y, x], ascending=False, kind="stable").iloc[0]
            row = dict(zip(keys, key))
            row.update({"k": int(k), f"top_k_{x}": bx, f"top_k_{y}": byv,
                        "best_policy": best["policy"], "best_config": best["config"],
                        f"best_{x}": float(best[x]), f"best_{y}": float(best[y]),
                        "gain": float(best[y]) - byv})
            rows.append(row)
    return pd.DataFrame(rows)


def settings_table(summary: pd.DataFrame, policies: Iterable[Policy], *,
                   by: Sequence[str] = ("scorer",),
                   same: Sequence[str] = ("R@sent", "Complete@sent", "n_sent")) -> pd.DataFrame:
    """A policy summary as people read it: spec strings, identical settings merged.

    ``config`` (a repr) becomes ``setting``, the spec string ``toolsel sweep --policy``
    takes (:func:`toolsel.policies.policy_spec`). Settings of one policy family (within each
    ``by`` group) whose ``same`` columns and payload are all equal select identically on
    every query as far as the table can tell: they are printed as one row, the first setting,
    with ``n_settings`` counting them and ``also`` listing the others' specs.
    """
    from ..policies import policy_spec
    specs = {repr(p): policy_spec(p) for p in policies}
    payload = [c for c in summary.columns if c.startswith("payload")]
    keys = [*by, "policy", *same, *payload]
    rows = []
    for _, g in summary.groupby(keys, sort=False, dropna=False):
        first = g.iloc[0].to_dict()
        first["_row"] = summary.index.get_loc(g.index[0])
        first["setting"] = specs.get(first["config"], first["config"])
        first["n_settings"] = len(g)
        first["also"] = "; ".join(specs.get(c, c) for c in g["config"].iloc[1:])
        rows.append(first)
    out = pd.DataFrame(rows).sort_values("_row", kind="stable")
    cols = [c for c in out.columns
            if c not in ("config", "setting", "n_settings", "also", "_row")]
    lead = [c for c in cols if c in (*by, "policy")]
    rest = [c for c in cols if c not in lead]
    return out[[*lead, "setting", *rest, "n_settings", "also"]].reset_index(drop=True)
