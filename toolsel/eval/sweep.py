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

from ..data import Query, Tool
from ..scorers.base import Scorer
from ..selection import fitted_scorer
from .engine import DEFAULT_BATCH_SIZE, Candidates, rank_batches, scorer_items
from .metrics import evaluate, group_means, payload_reduction, tool_costs

__all__ = ["sweep", "SweepResult", "effective_top_k", "DEFAULT_TOP_K", "DEFAULT_SCORERS",
           "SUMMARY_COLUMNS"]

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
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

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


def _check_top_k(top_k: Iterable[int]) -> list[int]:
    ks = sorted(set(int(k) for k in top_k))
    if not ks or ks[0] < 1:
        raise ValueError(f"top_k values must be integers >= 1, got {list(top_k)}")
    return ks


def effective_top_k(top_k: Iterable[int], n_candidates: int) -> tuple[list[int], list[int]]:
    """The cut-offs worth reporting, and those dropped as duplicates.

    Every ``k >= n_candidates`` sends every candidate, so all such cut-offs give the same
    row: only the smallest is kept.
    """
    ks = _check_top_k(top_k)
    keep = [k for k in ks if k < n_candidates]
    over = [k for k in ks if k >= n_candidates]
    if over:
        keep.append(over[0])
    return keep, over[1:]


def sweep(registry: Sequence[Tool], queries: Sequence[Query],
          scorers: Sequence[str | Scorer] | Mapping[str, str | Scorer] = DEFAULT_SCORERS,
          top_k: Iterable[int] = DEFAULT_TOP_K, *, always_include: Iterable[str] = (),
          batch_size: int = DEFAULT_BATCH_SIZE, progress: bool | None = None,
          encoding: str = "cl100k_base") -> SweepResult:
    """Evaluate every scorer at every ``top_k`` on ``queries``.

    Parameters
    ----------
    registry : Registry or sequence of Tool
    queries : sequence of Query
        Every expected name must be in the registry.
    scorers : names, Scorer objects, or a mapping ``{label: scorer}``
        Scorer objects are never modified (each is fitted as a clone when needed).
    top_k : iterable of int
        Cut-offs; the filter sends this many tools besides always-include ones. Cut-offs at
        or above the number of candidates all send everything: only the smallest of them is
        reported (:attr:`SweepResult.notes` says which were dropped).
    always_include : iterable of str
        Names sent on every turn, outside the filter and outside ``top_k``.
    batch_size : int
        Queries scored per matrix operation (bounds memory on large sets).
    progress : bool or None
        Show a progress bar; ``None`` shows it only on a terminal.
    """
    cands = Candidates.of(registry, always_include)
    reg = cands.registry
    _check_top_k(top_k)
    items = scorer_items(scorers)
    queries = list(queries)
    if not queries:
        raise ValueError("no queries to evaluate")
    required = [cands.required(q) for q in queries]  # raises on unknown names, before fitting

    names = reg.names
    always_mask = cands.always
    cand_idx = cands.index
    cand_pos = cands.position
    m = len(cand_idx)
    ks, dropped = effective_top_k(top_k, m)
    notes = []
    if dropped:
        notes.append(f"top_k {', '.join(map(str, dropped))} dropped: at or above the "
                     f"{m} candidate tools every tool is sent, as at top_k={ks[-1]}")

    costs = tool_costs(reg, encoding=encoding)
    unfiltered = costs.total()
    fixed = costs.total(always_mask)
    cost_kinds = ("chars", "tokens", "json_chars", "json_tokens")
    cand_costs = {c: getattr(costs, c)[cand_idx] for c in cost_kinds}
    texts = [q.query for q in queries]
    n_required = [len(r) for r in required]

    qm_parts: list[pd.DataFrame] = []
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
        for label, spec in items:
            t0 = time.perf_counter()
            scorer = fitted_scorer(spec, reg)
            timer = {"fit_s": time.perf_counter() - t0, "score_s": 0.0}
            for batch in rank_batches(scorer, texts, cands, batch_size=batch_size,
                                      timer=timer):
                qs = range(batch.start, batch.stop)
                req_ranks = [batch.ranks_of(b, cand_pos[required[qi]])
                             for b, qi in enumerate(qs)]
                per_q = evaluate(req_ranks, ks, [n_required[qi] for qi in qs])
                # payload of the top kk candidates of every query, for every cut-off
                kks = np.asarray([min(k, m) for k in ks])
                cum = {c: np.cumsum(cand_costs[c][batch.order], axis=1) for c in cost_kinds}
                sent = {c: fixed[c] + (cum[c][:, kks - 1] if m else
                                       np.zeros((batch.stop - batch.start, len(ks)), int))
                        for c in cost_kinds}
                qm_parts.append(_query_metric_rows(label, ks, [queries[qi] for qi in qs],
                                                   [n_required[qi] for qi in qs],
                                                   [len(queries[qi].expected) for qi in qs],
                                                   per_q, sent))
                for b, qi in enumerate(qs):
                    q = queries[qi]
                    for t in q.expected:
                        ti = reg.index(t)
                        rank = None if always_mask[ti] else int(batch.ranks[b, cand_pos[ti]])
                        row = {"scorer": label, "query_id": q.id, "query": q.query, "tool": t,
                               "always_include": bool(always_mask[ti]), "rank": rank}
                        for k in ks:
                            row[f"hit@{k}"] = None if rank is None else int(rank <= k)
                        pq_rows.append(row)
                    for j, k in enumerate(ks):
                        kk = kks[j]
                        missed = [(t, r) for t, r in zip(required[qi], req_ranks[b]) if r > kk]
                        if not missed:
                            continue
                        sent_names = ";".join(names[cand_idx[i]] for i in batch.order[b, :kk])
                        for t, r in missed:
                            miss_rows.append({
                                "scorer": label, "top_k": k, "query_id": q.id,
                                "query": q.query, "expected": names[t], "rank": int(r),
                                "sent_instead": sent_names})
                bar.update(1)
            timings[label] = timer
            del scorer  # one fitted index in memory at a time
    finally:
        bar.close()

    query_metrics = pd.concat(qm_parts, ignore_index=True)
    summary = _summarize(query_metrics, unfiltered)
    per_query = pd.DataFrame(pq_rows)
    misses = pd.DataFrame(miss_rows, columns=["scorer", "top_k", "query_id", "query",
                                              "expected", "rank", "sent_instead"])
    return SweepResult(summary, query_metrics, per_query, misses, unfiltered, timings, notes)


def _query_metric_rows(label, ks, queries, n_required, n_expected, per_q, sent) -> pd.DataFrame:
    """``query_metrics`` rows of one batch: query-major, then top_k."""
    nq, nk = len(queries), len(ks)
    return pd.DataFrame({
        "scorer": label,
        "top_k": np.tile(ks, nq),
        "query_id": np.repeat([q.id for q in queries], nk),
        "n_required": np.repeat(n_required, nk),
        "n_always_required": np.repeat(np.asarray(n_expected) - np.asarray(n_required), nk),
        "R@k": per_q["R@k"].ravel(), "Success@k": per_q["Success@k"].ravel(),
        "Complete@k": per_q["Complete@k"].ravel(), "RR": np.repeat(per_q["RR"], nk),
        "payload_chars": sent["chars"].ravel(), "payload_tokens": sent["tokens"].ravel(),
        "payload_json_chars": sent["json_chars"].ravel(),
        "payload_json_tokens": sent["json_tokens"].ravel(),
    })


def _summarize(qm: pd.DataFrame, unfiltered: dict[str, int]) -> pd.DataFrame:
    out = group_means(qm.assign(_valid=qm["R@k"].notna()), ["scorer", "top_k"], valid="_valid",
                      over_valid={"R@k": "R@k", "Success@k": "Success@k",
                                  "Complete@k": "Complete@k", "MRR": "RR"},
                      over_all={"payload_chars": "payload_chars",
                                "payload_tokens": "payload_tokens",
                                "payload_json_chars": "payload_json_chars",
                                "payload_json_tokens": "payload_json_tokens"})
    out["top_k"] = out["top_k"].astype(int)
    out["payload_reduction"] = [payload_reduction(v, unfiltered["chars"])
                                for v in out["payload_chars"]]
    out["payload_tokens_reduction"] = [payload_reduction(v, unfiltered["tokens"])
                                       for v in out["payload_tokens"]]
    out["payload_json_reduction"] = [payload_reduction(v, unfiltered["json_chars"])
                                     for v in out["payload_json_chars"]]
    return out.reindex(columns=SUMMARY_COLUMNS)
