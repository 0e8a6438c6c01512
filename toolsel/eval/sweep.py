"""Sweep scorers × top_k over a labeled query set into tidy tables.

Every scorer is fitted once; the queries are scored in batches as one matrix per batch; each
query's candidates are ranked once and every ``top_k`` is read off that ranking, so a sweep
costs about one scoring pass per scorer whatever the number of cut-offs.

The tables (pandas DataFrames, written as CSV by :meth:`SweepResult.write`):

- ``summary``: one row per scorer × top_k: ``scorer, top_k, R@k, Success@k, Complete@k, MRR,
  payload_chars, payload_reduction, n_queries`` then token and JSON payload columns.
- ``query_metrics``: the same metrics per query.
- ``per_query``: one row per scorer × query × required tool: its rank among the candidates
  and whether it was sent at each top_k.
- ``misses``: one row per scorer × top_k × required tool not sent: the query, the tool, its
  rank and what was sent instead (best first).

Required tools that are always-include are visible anyway: they are listed in ``per_query``
with ``always_include=True`` and no rank, and excluded from every metric (see
:mod:`toolsel.eval.metrics` for the zero-relevant policy). Values are deterministic: no timings or
timestamps go into the tables (:attr:`SweepResult.timings` has them).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import Query, Registry, Tool
from .metrics import payload_reduction, tool_costs
from ..scorers.base import Scorer, get_scorer

__all__ = ["sweep", "SweepResult", "DEFAULT_TOP_K", "DEFAULT_SCORERS", "SUMMARY_COLUMNS"]

DEFAULT_TOP_K = (1, 3, 5, 10, 20, 30)
DEFAULT_SCORERS = ("jaccard", "bm25", "tfidf", "embedding", "default")
SUMMARY_COLUMNS = ["scorer", "top_k", "R@k", "Success@k", "Complete@k", "MRR", "payload_chars",
                   "payload_reduction", "n_queries", "payload_tokens", "payload_tokens_reduction",
                   "payload_json_chars", "payload_json_tokens", "payload_json_reduction"]
_FLOAT_FORMAT = "%.6f"


@dataclass
class SweepResult:
    """Tables of one sweep, plus the unfiltered payload and (untabled) timings."""

    summary: pd.DataFrame
    query_metrics: pd.DataFrame
    per_query: pd.DataFrame
    misses: pd.DataFrame
    unfiltered: dict[str, int]
    timings: dict[str, float] = field(default_factory=dict)

    #: The files :meth:`write` creates.
    FILES = ("summary.csv", "query_metrics.csv", "per_query.csv", "misses.csv")

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``summary.csv``, ``query_metrics.csv``, ``per_query.csv``, ``misses.csv``.

        The four files are replaced as one set (:func:`toolsel.io.write_set`): a reader, or a
        run killed at any point, sees the old four or the new four, never a mix; a second
        process writing the same folder waits for the first.
        """
        from ..io import write_set
        return write_set(out_dir, {f"{name}.csv": getattr(self, name)
                                   for name in ("summary", "query_metrics", "per_query",
                                                "misses")})


def _scorer_items(scorers) -> list[tuple[str, Scorer]]:
    if isinstance(scorers, (str, Scorer)):
        scorers = [scorers]
    if isinstance(scorers, Mapping):
        items = [(str(k), get_scorer(v)) for k, v in scorers.items()]
    else:
        items = []
        for s in scorers:
            sc = get_scorer(s)
            items.append((s if isinstance(s, str) else sc.name, sc))
    labels = [k for k, _ in items]
    if len(set(labels)) != len(labels):
        raise ValueError(f"scorer labels must be unique, got {labels}; pass a mapping "
                         "{label: scorer} to compare variants of one scorer")
    if not items:
        raise ValueError("no scorers to sweep")
    return items


def _check_top_k(top_k: Iterable[int]) -> list[int]:
    ks = sorted(set(int(k) for k in top_k))
    if not ks or ks[0] < 1:
        raise ValueError(f"top_k values must be integers >= 1, got {list(top_k)}")
    return ks


def sweep(registry: Sequence[Tool], queries: Sequence[Query],
          scorers: Sequence[str | Scorer] | Mapping[str, str | Scorer] = DEFAULT_SCORERS,
          top_k: Iterable[int] = DEFAULT_TOP_K, *, always_include: Iterable[str] = (),
          batch_size: int = 256, progress: bool | None = None,
          encoding: str = "cl100k_base") -> SweepResult:
    """Evaluate every scorer at every ``top_k`` on ``queries``.

    Parameters
    ----------
    registry : Registry or sequence of Tool
    queries : sequence of Query
        Every expected name must be in the registry.
    scorers : names, Scorer objects, or a mapping ``{label: scorer}``
    top_k : iterable of int
        Cut-offs; the filter sends this many tools besides always-include ones.
    always_include : iterable of str
        Names sent on every turn, outside the filter and outside ``top_k``.
    batch_size : int
        Queries scored per matrix operation (bounds memory on large sets).
    progress : bool or None
        Show a progress bar; ``None`` shows it only on a terminal.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    ks = _check_top_k(top_k)
    items = _scorer_items(scorers)
    always = reg.check_names([always_include] if isinstance(always_include, str)
                             else always_include, what="always_include")
    queries = list(queries)
    if not queries:
        raise ValueError("no queries to evaluate")
    names = reg.names
    index = {n: i for i, n in enumerate(names)}
    for q in queries:
        for name in q.expected:
            if name not in index:
                raise KeyError(f"query {q.id!r} expects {name!r}, which is not in the registry")

    n = len(reg)
    always_mask = np.zeros(n, bool)
    for name in always:
        always_mask[index[name]] = True
    cand_idx = np.flatnonzero(~always_mask)
    m = len(cand_idx)
    cand_pos = np.full(n, -1)
    cand_pos[cand_idx] = np.arange(m)

    costs = tool_costs(reg, encoding=encoding)
    unfiltered = costs.total()
    fixed = costs.total(always_mask)
    cost_kinds = ("chars", "tokens", "json_chars", "json_tokens")
    cand_costs = {c: getattr(costs, c)[cand_idx] for c in cost_kinds}

    required = [[index[t] for t in q.expected if not always_mask[index[t]]] for q in queries]
    texts = [q.query for q in queries]

    qm_rows: list[dict] = []
    pq_rows: list[dict] = []
    miss_rows: list[dict] = []
    timings: dict[str, float] = {}

    from tqdm.auto import tqdm
    n_batches = (len(queries) + batch_size - 1) // batch_size
    # None: a bar only on a terminal (never in notebooks, whose reports must regenerate
    # byte-identically)
    show = progress if progress is not None else sys.stderr.isatty()
    bar = tqdm(total=len(items) * n_batches, desc="sweep", unit="batch", disable=not show)
    try:
        for label, scorer in items:
            t0 = time.perf_counter()
            scorer.fit(reg)
            t_fit = time.perf_counter() - t0
            t_score = 0.0
            for start in range(0, len(queries), batch_size):
                stop = min(start + batch_size, len(queries))
                t1 = time.perf_counter()
                scores = scorer.score_many(texts[start:stop])
                t_score += time.perf_counter() - t1
                scores = np.where(np.isnan(scores), -np.inf, scores)[:, cand_idx]
                order = np.argsort(-scores, axis=1, kind="stable")  # best first, ties by order
                ranks = np.empty_like(order)
                rows = np.arange(order.shape[0])[:, None]
                ranks[rows, order] = np.arange(1, m + 1)[None, :]
                cum = {c: np.cumsum(cand_costs[c][order], axis=1) for c in cost_kinds}
                for b, qi in enumerate(range(start, stop)):
                    q = queries[qi]
                    req = required[qi]
                    req_ranks = np.asarray([ranks[b, cand_pos[t]] for t in req], dtype=np.int64)
                    for t in q.expected:
                        ti = index[t]
                        row = {"scorer": label, "query_id": q.id, "query": q.query, "tool": t,
                               "always_include": bool(always_mask[ti]),
                               "rank": None if always_mask[ti] else int(ranks[b, cand_pos[ti]])}
                        for k in ks:
                            row[f"hit@{k}"] = None if always_mask[ti] else int(row["rank"] <= k)
                        pq_rows.append(row)
                    for k in ks:
                        kk = m if n <= k else min(k, m)
                        sent = {c: int(fixed[c] + (cum[c][b, kk - 1] if kk else 0))
                                for c in cost_kinds}
                        if len(req_ranks):
                            hits = req_ranks <= kk
                            metrics = {"R@k": float(hits.mean()), "Success@k": float(hits.any()),
                                       "Complete@k": float(hits.all()),
                                       "RR": 1.0 / float(req_ranks.min())}
                        else:
                            metrics = dict.fromkeys(("R@k", "Success@k", "Complete@k", "RR"),
                                                    float("nan"))
                        qm_rows.append({"scorer": label, "top_k": k, "query_id": q.id,
                                        "n_required": len(req),
                                        "n_always_required": len(q.expected) - len(req),
                                        **metrics,
                                        "payload_chars": sent["chars"],
                                        "payload_tokens": sent["tokens"],
                                        "payload_json_chars": sent["json_chars"],
                                        "payload_json_tokens": sent["json_tokens"]})
                        missed = [t for t, r in zip(req, req_ranks) if r > kk]
                        if missed:
                            sent_names = ";".join(names[cand_idx[j]] for j in order[b, :kk])
                            for t in missed:
                                miss_rows.append({
                                    "scorer": label, "top_k": k, "query_id": q.id,
                                    "query": q.query, "expected": names[t],
                                    "rank": int(ranks[b, cand_pos[t]]),
                                    "sent_instead": sent_names})
                bar.update(1)
            timings[label] = {"fit_s": t_fit, "score_s": t_score}
    finally:
        bar.close()

    query_metrics = pd.DataFrame(qm_rows)
    summary = _summarize(query_metrics, unfiltered)
    per_query = pd.DataFrame(pq_rows)
    misses = pd.DataFrame(miss_rows, columns=["scorer", "top_k", "query_id", "query",
                                              "expected", "rank", "sent_instead"])
    return SweepResult(summary, query_metrics, per_query, misses, unfiltered, timings)


def _summarize(qm: pd.DataFrame, unfiltered: dict[str, int]) -> pd.DataFrame:
    rows = []
    for (label, k), g in qm.groupby(["scorer", "top_k"], sort=False):
        valid = g["R@k"].notna()
        chars = g["payload_chars"].mean()
        tokens = g["payload_tokens"].mean()
        json_chars = g["payload_json_chars"].mean()
        rows.append({
            "scorer": label, "top_k": int(k),
            "R@k": g.loc[valid, "R@k"].mean(), "Success@k": g.loc[valid, "Success@k"].mean(),
            "Complete@k": g.loc[valid, "Complete@k"].mean(), "MRR": g.loc[valid, "RR"].mean(),
            "payload_chars": chars,
            "payload_reduction": payload_reduction(chars, unfiltered["chars"]),
            "n_queries": int(valid.sum()),
            "payload_tokens": tokens,
            "payload_tokens_reduction": payload_reduction(tokens, unfiltered["tokens"]),
            "payload_json_chars": json_chars,
            "payload_json_tokens": g["payload_json_tokens"].mean(),
            "payload_json_reduction": payload_reduction(json_chars, unfiltered["json_chars"]),
        })
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
