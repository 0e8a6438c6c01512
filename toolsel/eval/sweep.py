"""Sweep scorers × top_k (and, optionally, × selection policies) over a labeled query set into
tidy tables.

Every scorer is fitted once; the queries are scored in batches as one matrix per batch; each
query's candidates are ranked once and every ``top_k`` is read off that ranking, so a sweep
costs about one scoring pass per scorer whatever the number of cut-offs. Selection policies
(:mod:`toolsel.policies`), when given, are evaluated per scorer by
:func:`toolsel.eval.policies.evaluate_policies` on the same fitted scorer: one more scoring
pass per scorer, whatever the number of policies.

The tables (pandas DataFrames, written as CSV by :meth:`SweepResult.write`):

- ``summary``: one row per scorer × top_k: ``scorer, top_k, R@k, Success@k, Complete@k, MRR,
  NDCG@k, MAP, payload_chars, payload_reduction, n_queries`` then token and JSON payload
  columns. ``NDCG@k`` is graded where the queries carry ``grades``; ``MRR`` and ``MAP`` do not
  depend on the cut-off (the same value on every row of a scorer).
- ``query_metrics``: the same metrics per query (``RR`` and ``AP`` for ``MRR`` and ``MAP``).
- ``per_query``: one row per scorer × query × required tool: its rank among the candidates
  and whether it was sent at each top_k.
- ``misses``: one row per scorer × top_k × required tool not sent: the query, the tool, its
  rank and what was sent instead (best first).
- ``policies`` (only when policies are given; ``None`` otherwise): one row per scorer ×
  policy configuration: ``scorer, policy, config, param, R@sent, Complete@sent, n_queries,
  n_sent, payload_json_tokens, payload_json_tokens_reduction, pareto``. ``R@sent`` and
  ``Complete@sent`` are ``R@k`` and ``Complete@k`` read at what the policy sends
  (:func:`toolsel.eval.metrics.evaluate_sent`); ``payload_json_tokens``
  counts the tokens of the JSON definitions sent (always-include tools included), as the
  summary's column of that name; ``payload_json_tokens_reduction`` is 1 − that / the whole
  registry's JSON tokens; ``pareto`` marks the points on the
  recall-vs-payload-reduction frontier among the scorer's own rows
  (:func:`toolsel.eval.policies.frontier`). A ``TopK(k)`` row has the ``R@k`` of the
  summary's row at ``top_k=k``.

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

from ..scorers.base import compared_scorers
from ..data import Query, Tool
from ..policies import Policy, as_policies
from ..scorers.base import Scorer
from .engine import DEFAULT_BATCH_SIZE, Candidates, OnDemand, rank_batches, scorer_for, \
    scorer_items
from .metrics import METRICS, evaluate, group_means, payload_reduction, tool_costs
from .policies import SUMMARY_COLUMNS as _POLICY_SUMMARY_COLUMNS
from .policies import evaluate_policies, frontier, summarize_policies

__all__ = ["sweep", "SweepResult", "effective_top_k", "DEFAULT_TOP_K", "DEFAULT_SCORERS",
           "SUMMARY_COLUMNS", "summary_columns", "POLICY_COLUMNS"]

DEFAULT_TOP_K = (1, 3, 5, 10, 20, 30)
#: Scores (queries × tools) one scoring block of a sweep may hold: 64 queries at 4,000 tools.
MAX_BLOCK_CELLS = 64 * 4000
#: The built-in compared scorers (:func:`toolsel.scorers.base.compared_scorers`, read when
#: this module is imported); a sweep without ``scorers`` asks the registry itself.
DEFAULT_SCORERS = compared_scorers()


def summary_columns() -> list[str]:
    """The summary's columns: each metric of the metric table
    (:data:`~toolsel.eval.metrics.METRICS`) by its mean's name, then payload."""
    return ["scorer", "top_k", *(m.mean for m in METRICS.values()),
            "payload_chars", "payload_reduction", "n_queries", "payload_tokens",
            "payload_tokens_reduction", "payload_json_chars", "payload_json_tokens",
            "payload_json_reduction"]


#: :func:`summary_columns` of the built-in metrics (read when this module is imported).
SUMMARY_COLUMNS = summary_columns()
#: The policy summary's payload columns, renamed in :attr:`SweepResult.policies` after what
#: they count (JSON-definition tokens), as the summary's ``payload_json_tokens``.
_POLICY_RENAME = {"payload_tokens": "payload_json_tokens",
                  "payload_reduction": "payload_json_tokens_reduction"}
#: Columns of :attr:`SweepResult.policies`.
POLICY_COLUMNS = ["scorer", *(_POLICY_RENAME.get(c, c) for c in _POLICY_SUMMARY_COLUMNS),
                  "pareto"]


@dataclass
class SweepResult:
    """Tables of one sweep, plus the unfiltered payload and (untabled) timings.

    ``policies`` is ``None`` when the sweep was run without selection policies.
    """

    summary: pd.DataFrame
    query_metrics: pd.DataFrame
    per_query: pd.DataFrame
    misses: pd.DataFrame
    unfiltered: dict[str, int]
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    policies: pd.DataFrame | None = None

    #: The files :meth:`write` always creates.
    FILES = ("summary.csv", "query_metrics.csv", "per_query.csv", "misses.csv")
    #: The file :meth:`write` adds when the sweep evaluated selection policies.
    POLICIES_FILE = "policies.csv"

    @classmethod
    def files_for(cls, policies: bool) -> tuple[str, ...]:
        """The files :meth:`write` creates for a sweep with or without policies (what to pass
        to :func:`toolsel.io.check_output_dir` before sweeping)."""
        return cls.FILES + ((cls.POLICIES_FILE,) if policies else ())

    @property
    def files(self) -> tuple[str, ...]:
        """The files :meth:`write` creates for this result."""
        return self.files_for(self.policies is not None)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``summary.csv``, ``query_metrics.csv``, ``per_query.csv``, ``misses.csv``,
        and ``policies.csv`` when the sweep evaluated policies (:attr:`files`).

        The files are replaced as one set (:func:`toolsel.io.write_set`): a reader, or a run
        killed at any point, sees the old set or the new set, never a mix; a second process
        writing the same folder waits for the first. Other files in ``out_dir`` are kept,
        except a ``policies.csv`` of an earlier sweep when this one had no policies: it is
        removed, so the folder never pairs tables of two different sweeps.
        """
        from ..io import write_set
        tables = {f"{name}.csv": getattr(self, name)
                  for name in ("summary", "query_metrics", "per_query", "misses")}
        if self.policies is not None:
            tables[self.POLICIES_FILE] = self.policies
        # an earlier sweep's policies.csv goes with the same swap (never after it)
        return write_set(out_dir, tables,
                         remove=[] if self.policies is not None else [self.POLICIES_FILE])


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
          scorers: Sequence[str | Scorer] | Mapping[str, str | Scorer] | None = None,
          top_k: Iterable[int] = DEFAULT_TOP_K, *, always_include: Iterable[str] = (),
          batch_size: int = DEFAULT_BATCH_SIZE, progress: bool | None = None,
          encoding: str = "cl100k_base",
          policies: Iterable[Policy | str] | Policy | str = ()) -> SweepResult:
    """Evaluate every scorer at every ``top_k`` on ``queries``, and under every policy.

    Parameters
    ----------
    registry : Registry or sequence of Tool
    queries : sequence of Query
        Every expected name must be in the registry.
    scorers : names, Scorer objects, or a mapping ``{label: scorer}``; ``None``: the
        registry's compared scorers (:func:`~toolsel.scorers.base.compared_scorers`)
        Scorer objects are never modified (each is fitted as a clone when needed).
    top_k : iterable of int
        Cut-offs; the filter sends this many tools besides always-include ones. Cut-offs at
        or above the number of candidates all send everything: only the smallest of them is
        reported (:attr:`SweepResult.notes` says which were dropped).
    always_include : iterable of str
        Names sent on every turn, outside the filter and outside ``top_k``.
    batch_size : int
        Queries scored per matrix operation (bounds memory on large sets): at most this many,
        and at most :data:`MAX_BLOCK_CELLS` divided by the registry size (a fusion scorer
        holds several blocks of segments × tools scores), so past 4,000 tools blocks shrink.
    progress : bool or None
        Show a progress bar; ``None`` shows it only on a terminal.
    encoding : str
        Tokenizer of the token payloads (and of :class:`~toolsel.policies.TokenBudget` costs).
    policies : iterable of Policy or str, optional
        Selection policies (:mod:`toolsel.policies`): objects, names, or spec strings such as
        ``"threshold:min_score=0.5,max_k=10"`` (:func:`toolsel.policies.parse_policy`).
        When given, every scorer is also evaluated under every policy by
        :func:`toolsel.eval.policies.evaluate_policies` (on the scorer fitted for the
        top-K sweep, with the same always-include tools) into
        :attr:`SweepResult.policies`. Policy objects are never modified (each is fitted as a
        clone). Bad specs and a policy listed twice raise ``ValueError`` before any fitting.

    Returns
    -------
    SweepResult
        ``summary``, ``query_metrics``, ``per_query``, ``misses`` (see the module
        docstring), and ``policies`` (``None`` without policies).
    """
    policy_list = as_policies(policies)
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
    m = len(cand_idx)
    ks, dropped = effective_top_k(top_k, m)
    notes = _dropped_notes(dropped, ks, m)

    costs = tool_costs(reg, encoding=encoding)
    unfiltered = costs.total()
    texts = [q.query for q in queries]
    ctx = _SweepContext(reg, queries, cands, required, ks, m, costs.total(always_mask),
                        {c: getattr(costs, c)[cand_idx] for c in _COST_KINDS})

    always_names = [names[i] for i in np.flatnonzero(always_mask)]
    qm_parts: list[pd.DataFrame] = []
    policy_parts: list[pd.DataFrame] = []
    pq_rows: list[dict] = []
    miss_rows: list[dict] = []
    timings: dict[str, float] = {}

    from tqdm.auto import tqdm
    # a block of queries holds at most MAX_BLOCK_CELLS scores per array, so memory stays
    # bounded however large the registry (64 queries up to 4,000 tools, 5 at 44,000)
    batch_size = max(1, min(batch_size, MAX_BLOCK_CELLS // max(len(reg), 1)))
    n_batches = (len(queries) + batch_size - 1) // batch_size
    # None: a bar only on a terminal (never in notebooks, whose reports must regenerate
    # byte-identically)
    show = progress if progress is not None else sys.stderr.isatty()
    bar = tqdm(total=len(items) * n_batches, desc="sweep", unit="batch", disable=not show)
    try:
        for label, spec in items:
            t0 = time.perf_counter()
            # during a report, fitted only if its score matrix is not in the report's cache
            scorer = scorer_for(spec, reg)
            timer = {"fit_s": time.perf_counter() - t0, "score_s": 0.0}
            for batch in rank_batches(scorer, texts, cands, batch_size=batch_size,
                                      timer=timer):
                qm_parts.append(ctx.batch_rows(label, batch, pq_rows, miss_rows))
                bar.update(1)
            if policy_list:
                # the fitted scorer is passed on: evaluate_policies reuses it (same registry)
                t0 = time.perf_counter()
                fitted = scorer.fitted if isinstance(scorer, OnDemand) else scorer
                per_policy = evaluate_policies(reg, queries, fitted, policy_list,
                                               always_include=always_names,
                                               batch_size=batch_size, encoding=encoding)
                policy_parts.append(summarize_policies(per_policy).assign(scorer=label))
                timer["policies_s"] = time.perf_counter() - t0
            timings[label] = timer
            del scorer  # one fitted index in memory at a time
    finally:
        bar.close()

    query_metrics = pd.concat(qm_parts, ignore_index=True)
    summary = _summarize(query_metrics, unfiltered)
    per_query = pd.DataFrame(pq_rows)
    misses = pd.DataFrame(miss_rows, columns=["scorer", "top_k", "query_id", "query",
                                              "expected", "rank", "sent_instead"])
    policy_table = _policy_table(policy_parts) if policy_list else None
    return SweepResult(summary, query_metrics, per_query, misses, unfiltered, timings, notes,
                       policy_table)


_COST_KINDS = ("chars", "tokens", "json_chars", "json_tokens")


def _dropped_notes(dropped, ks, m) -> list[str]:
    """The note naming the cut-offs dropped as sending every candidate (none if none)."""
    notes = []
    if dropped:
        notes.append(f"top_k {', '.join(map(str, dropped))} dropped: at or above the "
                     f"{m} candidate tools every tool is sent, as at top_k={ks[-1]}")
    return notes


def _policy_table(policy_parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Every scorer's policy summary, on its frontier, in :data:`POLICY_COLUMNS`."""
    return frontier(pd.concat(policy_parts, ignore_index=True),
                    by="scorer").rename(columns=_POLICY_RENAME)[POLICY_COLUMNS]


class _SweepContext:
    """What every batch of a sweep reads: queries, candidates, their required tools and costs."""

    def __init__(self, reg, queries, cands, required, ks, m, fixed, cand_costs):
        self.reg, self.queries, self.cands, self.required = reg, queries, cands, required
        self.ks, self.m, self.fixed, self.cand_costs = ks, m, fixed, cand_costs
        self.names = reg.names
        self.n_required = [len(r) for r in required]
        self.gains = [[q.gain(reg[i].name) for i in r] for q, r in zip(queries, required)]

    def batch_rows(self, label, batch, pq_rows: list[dict], miss_rows: list[dict]):
        """Evaluate one batch: append its per-query and miss rows, return its query metrics."""
        ks, m, cand_pos = self.ks, self.m, self.cands.position
        qs = range(batch.start, batch.stop)
        req_ranks = [batch.ranks_of(b, cand_pos[self.required[qi]])
                     for b, qi in enumerate(qs)]
        per_q = evaluate(req_ranks, ks, [self.n_required[qi] for qi in qs],
                         [self.gains[qi] for qi in qs])
        # payload of the top kk candidates of every query, for every cut-off
        kks = np.asarray([min(k, m) for k in ks])
        sent = self._sent(batch, kks)
        part = _query_metric_rows(label, ks, [self.queries[qi] for qi in qs],
                                  [self.n_required[qi] for qi in qs],
                                  [len(self.queries[qi].expected) for qi in qs],
                                  per_q, sent)
        for b, qi in enumerate(qs):
            self._hit_rows(label, batch, b, self.queries[qi], pq_rows)
            self._miss_rows(label, batch, b, qi, req_ranks[b], kks, miss_rows)
        return part

    def _sent(self, batch, kks):
        """Payload sent per query and cut-off, for every cost kind."""
        m, fixed = self.m, self.fixed
        # only the top max(k) columns: four (batch x registry) arrays at 44k tools
        # were the sweep's largest transient
        top = batch.order[:, :int(kks.max())] if len(kks) else batch.order[:, :0]
        cum = {c: np.cumsum(self.cand_costs[c][top], axis=1) for c in _COST_KINDS}
        return {c: fixed[c] + (cum[c][:, kks - 1] if m else
                               np.zeros((batch.stop - batch.start, len(self.ks)), int))
                for c in _COST_KINDS}

    def _hit_rows(self, label, batch, b, q, pq_rows: list[dict]) -> None:
        """One ``per_query`` row per expected tool of query ``q`` (row ``b`` of the batch)."""
        always_mask, cand_pos = self.cands.always, self.cands.position
        for t in q.expected:
            ti = self.reg.index(t)
            rank = None if always_mask[ti] else int(batch.ranks[b, cand_pos[ti]])
            row = {"scorer": label, "query_id": q.id, "query": q.query, "tool": t,
                   "always_include": bool(always_mask[ti]), "rank": rank}
            for k in self.ks:
                row[f"hit@{k}"] = None if rank is None else int(rank <= k)
            pq_rows.append(row)

    def _miss_rows(self, label, batch, b, qi, ranks, kks, miss_rows: list[dict]) -> None:
        """One ``misses`` row per required tool of query ``qi`` ranked below each cut-off."""
        q, names, cand_idx = self.queries[qi], self.names, self.cands.index
        for j, k in enumerate(self.ks):
            kk = kks[j]
            missed = [(t, r) for t, r in zip(self.required[qi], ranks) if r > kk]
            if not missed:
                continue
            sent_names = ";".join(names[cand_idx[i]] for i in batch.order[b, :kk])
            for t, r in missed:
                miss_rows.append({
                    "scorer": label, "top_k": k, "query_id": q.id,
                    "query": q.query, "expected": names[t], "rank": int(r),
                    "sent_instead": sent_names})


def _query_metric_rows(label, ks, queries, n_required, n_expected, per_q, sent) -> pd.DataFrame:
    """``query_metrics`` rows of one batch: query-major, then top_k."""
    nq, nk = len(queries), len(ks)
    return pd.DataFrame({
        "scorer": label,
        "top_k": np.tile(ks, nq),
        "query_id": np.repeat([q.id for q in queries], nk),
        "n_required": np.repeat(n_required, nk),
        "n_always_required": np.repeat(np.asarray(n_expected) - np.asarray(n_required), nk),
        # every metric of the table: per cut-off, or one value per query repeated per K
        **{key: per_q[key].ravel() if m.cutoff else np.repeat(per_q[key], nk)
           for key, m in METRICS.items()},
        "payload_chars": sent["chars"].ravel(), "payload_tokens": sent["tokens"].ravel(),
        "payload_json_chars": sent["json_chars"].ravel(),
        "payload_json_tokens": sent["json_tokens"].ravel(),
    })


def _summarize(qm: pd.DataFrame, unfiltered: dict[str, int]) -> pd.DataFrame:
    out = group_means(qm.assign(_valid=qm["R@k"].notna()), ["scorer", "top_k"], valid="_valid",
                      over_valid={m.mean: key for key, m in METRICS.items()},
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
    return out.reindex(columns=summary_columns())
