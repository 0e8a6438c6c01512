"""The ranking engine every evaluation table is built on.

One job: given a registry, labeled queries and scorers, fit each scorer once (a clone of what
the caller passed, never the caller's object), score the queries in batches, and rank every
query's *candidates*: the registry minus the always-include tools, which are sent anyway and
so are never ranked. Table builders (:mod:`~toolsel.eval.sweep`,
:mod:`~toolsel.tables.discovery`, :mod:`~toolsel.tables.compare`, ...) read ranks off the
batches and compute metrics with :mod:`~toolsel.eval.metrics`.

Ranks are 1-based among the candidates; ties go to the tool earlier in the registry, as in
:func:`toolsel.ranking.rank_order`, so a query's rank here always agrees with what
:meth:`toolsel.selection.Selector.select` sends.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Query, Registry, Tool
from ..scorers.base import Scorer, compared_scorers, get_scorer, registry_fingerprint
from ..selection import fitted_scorer

__all__ = ["Candidates", "RankedBatch", "scorer_items", "fit_scorers", "rank_batches",
           "query_ranks", "as_registry", "score_matrix", "OnDemand", "scorer_for",
           "DEFAULT_BATCH_SIZE"]

#: Queries scored per matrix operation: bounds memory at (batch x registry) floats.
DEFAULT_BATCH_SIZE = 64


def as_registry(tools: Sequence[Tool]) -> Registry:
    return tools if isinstance(tools, Registry) else Registry(tools)


def scorer_items(scorers) -> list[tuple[str, str | Scorer]]:
    """``(label, spec)`` pairs from names, scorer objects, or a mapping ``{label: scorer}``;
    ``None``: the registry's compared scorers (:func:`~toolsel.scorers.base.compared_scorers`,
    read now).

    Labels must be unique (pass a mapping to compare variants of one scorer).
    """
    if scorers is None:
        scorers = compared_scorers()
    if isinstance(scorers, (str, Scorer)):
        scorers = [scorers]
    if isinstance(scorers, Mapping):
        items = [(str(k), v) for k, v in scorers.items()]
    else:
        items = []
        for s in scorers:
            label = s if isinstance(s, str) else get_scorer(s).name
            items.append((label, s))
    labels = [k for k, _ in items]
    if len(set(labels)) != len(labels):
        raise ValueError(f"scorer labels must be unique, got {labels}; pass a mapping "
                         "{label: scorer} to compare variants of one scorer")
    if not items:
        raise ValueError("no scorers to evaluate")
    for label, spec in items:  # unknown names fail here, before any fitting
        if isinstance(spec, str):
            get_scorer(spec)
    return items


def fit_scorers(registry: Sequence[Tool], scorers) -> Iterator[tuple[str, Scorer]]:
    """``(label, fitted scorer)`` one at a time, so only one index is in memory at once.

    Each is fitted on ``registry`` by :func:`toolsel.selection.fitted_scorer`: the caller's
    scorer objects are never modified.
    """
    reg = as_registry(registry)
    for label, spec in scorer_items(scorers):
        yield label, fitted_scorer(spec, reg)


class OnDemand:
    """A scorer fitted on ``registry`` only when something must be scored with it: during a
    report the score cache may already hold every matrix asked for, and then nothing is
    fitted (no model loaded, no index built). ``fitted`` fits it (once)."""

    def __init__(self, spec, registry: Sequence[Tool]):
        self.spec = spec
        self.registry = as_registry(registry)
        self.unfitted = get_scorer(spec)  # its class and parameters name the cache entries
        self.name = self.unfitted.name
        self._fitted: Scorer | None = None

    @property
    def fitted(self) -> Scorer:
        if self._fitted is None:
            self._fitted = fitted_scorer(self.spec, self.registry)
        return self._fitted

    @property
    def was_fitted(self) -> bool:
        """Whether anything had to be scored with it (so it was fitted)."""
        return self._fitted is not None

    def score_many(self, texts: Sequence[str]) -> np.ndarray:
        return self.fitted.score_many(texts)

    def score_and_match(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        return self.fitted.score_and_match(texts)


def scorer_for(spec, registry: Sequence[Tool]) -> Scorer | OnDemand:
    """What a table builder scores ``registry`` with: the fitted scorer
    (:func:`toolsel.selection.fitted_scorer`), or during a report (its score cache active) an
    :class:`OnDemand` one, fitted only if the cache lacks a matrix asked for."""
    from .score_cache import active_cache
    if active_cache() is None:
        return fitted_scorer(spec, as_registry(registry))
    return OnDemand(spec, registry)


@dataclass(frozen=True)
class Candidates:
    """The registry split into always-include tools and the candidates the filter ranks."""

    registry: Registry
    always: np.ndarray  # bool, registry order

    @classmethod
    def of(cls, registry: Sequence[Tool], always_include: Iterable[str] = ()) -> Candidates:
        reg = as_registry(registry)
        names = [always_include] if isinstance(always_include, str) else list(always_include)
        mask = np.zeros(len(reg), dtype=bool)
        for name in reg.check_names(names, what="always_include"):
            mask[reg.index(name)] = True
        return cls(reg, mask)

    @property
    def index(self) -> np.ndarray:
        """Registry indices of the candidates, in registry order."""
        return np.flatnonzero(~self.always)

    @property
    def position(self) -> np.ndarray:
        """Registry index → position among the candidates (-1 for always-include tools)."""
        pos = np.full(len(self.registry), -1)
        idx = self.index
        pos[idx] = np.arange(len(idx))
        return pos

    def required(self, query: Query) -> list[int]:
        """Registry indices of ``query``'s required tools that the filter must find."""
        reg = self.registry
        out = []
        for name in query.expected:
            if name not in reg:
                raise KeyError(f"query {query.id!r} expects {name!r}, which is not in the "
                               "registry")
            i = reg.index(name)
            if not self.always[i]:
                out.append(i)
        return out


@dataclass
class RankedBatch:
    """One batch of queries ranked by one scorer.

    ``scores`` are in registry order (NaN replaced by -inf); ``order`` lists candidate
    positions best first; ``ranks[b, p]`` is the 1-based rank of candidate position ``p``;
    ``matches`` (when asked for) is the scorer's no-match rule, registry order.
    """

    start: int
    stop: int
    scores: np.ndarray
    order: np.ndarray
    ranks: np.ndarray
    matches: np.ndarray | None = None

    def ranks_of(self, b: int, positions: Sequence[int]) -> np.ndarray:
        """Ranks of candidate ``positions`` for the batch's ``b``-th query."""
        return self.ranks[b, np.asarray(positions, dtype=np.int64)].astype(np.int64)


def _cache_key(scorer: Scorer, registry: Registry, texts: Sequence[str], matches: bool):
    """The report cache and this matrix's entry key, or ``(None, None)`` when it is not
    cached (no report running, a scorer not described by its parameters, too large)."""
    from .score_cache import MAX_CELLS, active_cache, entry_key, scorer_config
    cache = active_cache()
    if cache is None or not texts or len(texts) * len(registry) > MAX_CELLS:
        return None, None
    if isinstance(scorer, OnDemand):
        config = scorer_config(scorer.unfitted)
        fits = scorer.registry is registry or \
            registry_fingerprint(scorer.registry) == registry_fingerprint(registry)
    else:
        config = scorer_config(scorer)
        fits = config is not None and scorer.is_fitted_for(registry)
    if config is None or not fits:
        return None, None
    return cache, entry_key(config, registry, texts, matches=matches)


def score_matrix(scorer: Scorer, registry: Sequence[Tool], texts: Sequence[str], *,
                 matches: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """``scorer``'s scores of ``texts`` (and its no-match rule when ``matches``), fitted on
    ``registry``: from the running report's score cache when it holds them
    (:mod:`toolsel.eval.score_cache`: one scoring per scorer and query set for every page),
    else computed (and stored there during a report)."""
    texts = list(texts)
    reg = as_registry(registry)
    got = _cached_matrix(scorer, reg, texts, matches)
    if got is not None:
        return got
    out = _canonical(scorer, texts, matches, len(reg))
    return out["scores"], out.get("matches")


def _canonical(scorer: Scorer, texts: list[str], matches: bool, n_tools: int
               ) -> dict[str, np.ndarray]:
    """The matrix computed the one way every caller shares, cached or not: in blocks of
    :func:`~toolsel.eval.score_cache.canonical_block` texts (a sweep's own batches), so its
    floats do not depend on who asked or whether a report's cache held it."""
    from .score_cache import canonical_block
    step = canonical_block(n_tools)
    parts = [_score(scorer, texts[i:i + step], matches) for i in range(0, len(texts), step)]
    if not parts:
        parts = [_score(scorer, [], matches)]
    out = {"scores": np.vstack([p[0] for p in parts])}
    if matches:
        out["matches"] = np.vstack([p[1] for p in parts])
    return out


def _cached_matrix(scorer: Scorer, registry: Registry, texts: list[str], matches: bool):
    """The matrix from the report's score cache (computed there the canonical way on a
    miss), or ``None`` when it is not cached."""
    cache, key = _cache_key(scorer, registry, texts, matches)
    if cache is None:
        return None
    got = cache.get_or_compute(key, lambda: _canonical(scorer, texts, matches, len(registry)))
    return got["scores"], got.get("matches")


def _score(scorer: Scorer, texts: Sequence[str], matches: bool):
    if matches:
        return scorer.score_and_match(texts)
    return scorer.score_many(texts), None


def rank_batches(scorer: Scorer, texts: Sequence[str], candidates: Candidates, *,
                 batch_size: int = DEFAULT_BATCH_SIZE, matches: bool = False,
                 timer: dict | None = None) -> Iterator[RankedBatch]:
    """Score ``texts`` with a fitted ``scorer`` in batches and rank the candidates.

    During a report the whole matrix comes from the report's score cache
    (:func:`score_matrix`), computed once for every page. ``timer``, when given, accumulates
    scoring seconds under ``"score_s"`` (for benchmarks; never written into tables).
    """
    import time
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    cand = candidates.index
    m = len(cand)
    n = len(candidates.registry)
    texts = list(texts)
    t0 = time.perf_counter()
    whole = _cached_matrix(scorer, candidates.registry, texts, matches)
    if whole is not None:
        if timer is not None:
            timer["score_s"] = timer.get("score_s", 0.0) + time.perf_counter() - t0
    for start in range(0, len(texts), batch_size):
        stop = min(start + batch_size, len(texts))
        t0 = time.perf_counter()
        if whole is not None:
            scores = whole[0][start:stop]
            match = None if whole[1] is None else whole[1][start:stop]
        else:
            scores, match = _score(scorer, texts[start:stop], matches)
        if timer is not None:
            timer["score_s"] = timer.get("score_s", 0.0) + time.perf_counter() - t0
        if scores.shape != (stop - start, n):
            raise RuntimeError(f"{type(scorer).__name__} returned scores of shape "
                               f"{scores.shape}, expected {(stop - start, n)}")
        scores = np.where(np.isnan(scores), -np.inf, scores)
        # best first; a stable sort keeps registry order among equal scores
        order = np.argsort(-scores[:, cand], axis=1, kind="stable")
        ranks = np.empty_like(order)
        rows = np.arange(order.shape[0])[:, None]
        ranks[rows, order] = np.arange(1, m + 1)[None, :]
        yield RankedBatch(start, stop, scores, order, ranks, match)


def query_ranks(registry: Sequence[Tool], queries: Sequence[Query], scorer,
                *, always_include: Iterable[str] = (), text: str = "query",
                batch_size: int = DEFAULT_BATCH_SIZE) -> list[np.ndarray]:
    """Per query, the ranks of its required (non-always-include) tools among the candidates.

    ``scorer`` is a name or a scorer object (fitted here as a clone when needed); ``text``
    picks the field scored (``"query"`` or ``"search_term"``, falling back to the query).
    """
    cands = Candidates.of(registry, always_include)
    sc = fitted_scorer(scorer, cands.registry)
    pos = cands.position
    texts = [_text(q, text) for q in queries]
    out: list[np.ndarray] = []
    for batch in rank_batches(sc, texts, cands, batch_size=batch_size):
        for b, qi in enumerate(range(batch.start, batch.stop)):
            out.append(batch.ranks_of(b, pos[cands.required(queries[qi])]))
    return out


def _text(q: Query, field: str) -> str:
    if field == "query":
        return q.query
    if field == "search_term":
        return q.search_term or q.query
    raise ValueError(f"text must be 'query' or 'search_term', got {field!r}")
