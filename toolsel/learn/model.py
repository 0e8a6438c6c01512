"""A scorer that learns from labeled requests on top of any blind scorer.

>>> from toolsel import load_registry, load_queries, Selector            # doctest: +SKIP
>>> from toolsel.learn import LearnedScorer                               # doctest: +SKIP
>>> reg = load_registry("data/registry.json")                             # doctest: +SKIP
>>> learned = LearnedScorer(base="default").fit(reg, load_queries("data/requests.jsonl", reg))
>>> Selector(reg, learned).select("tell the team the deploy finished")  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..data import Query, Registry, Tool
from ..scorers.base import NotFittedError, Scorer, get_scorer, registry_fingerprint
from .groups import request_groups
from .rule import RULE, FoldSignals, choose, fit_setting, setting_scores
from .signals import METHODS, SETTINGS, Evidence, Setting, fit_evidence

__all__ = ["LearnedScorer", "tool_hash", "labels_hash", "check_labeled"]


def tool_hash(tool: Tool) -> str:
    """A digest of one tool's name, description and parameters (what its scores depend on)."""
    text = json.dumps([tool.name, tool.description, tool.parameters], sort_keys=True,
                      ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def labels_hash(queries: Sequence[Query]) -> str:
    """A digest of the labeled requests (ids, texts, expected tools), in order."""
    h = hashlib.sha256()
    for q in queries:
        h.update(json.dumps([q.id, q.query, list(q.expected)], ensure_ascii=False)
                 .encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()[:32]


def check_labeled(queries: Sequence[Query], registry: Registry) -> list[Query]:
    """``queries`` as a list, each a :class:`Query` whose expected tools are in ``registry``;
    a clear error naming the request and the tool otherwise."""
    if isinstance(queries, (str, Query)):
        raise TypeError("labeled requests are a sequence of Query objects")
    out = list(queries)
    for i, q in enumerate(out):
        if not isinstance(q, Query):
            raise TypeError(f"labeled request {i} is a {type(q).__name__}, expected a Query "
                            "(toolsel.load_queries reads a labeled JSONL file)")
        for name in q.expected:
            if name not in registry:
                raise KeyError(f"labeled request {q.id!r} expects {name!r}, which is not a "
                               "tool in the registry")
    return out


def _fitted(base, registry: Registry) -> Scorer:
    """``base`` fitted on ``registry``: as it is when already fitted on exactly these tools,
    else a fitted clone (the caller's object is never modified), as
    :func:`toolsel.selection.fitted_scorer` does."""
    sc = get_scorer(base)
    if sc is base:
        if sc.is_fitted_for(registry):
            return sc
        sc = sc.clone()
    return sc.fit(registry)


class LearnedScorer(Scorer):
    """A blind scorer plus what labeled requests teach about the tools they name.

    Tools with a labeled request get a learned lift (:mod:`toolsel.learn.signals`); every
    other tool keeps the blind scorer's score exactly. Which signal and how much is chosen by
    the dev rule (:mod:`toolsel.learn.rule`) on the labeled requests given to :meth:`fit`.

    Parameters
    ----------
    base : str or Scorer
        The blind scorer (``"default"``, ``"bm25"``, ``"embedding"``, ...).
    setting : "auto", a method name, or Setting
        ``"auto"``: the dev rule picks among every setting; a method (``"expand"``,
        ``"centroid"``, ``"knn"``, ``"fusion"``, ``"blind"``): the rule picks among that
        method's weights (and ``blind``); a :class:`~toolsel.learn.signals.Setting`: used as is.
    max_per_tool : int, optional
        Each tool learns from at most this many labeled requests (its first ones).
    model : str, optional
        The embedding model of request vectors; default: the base scorer's own encoder, else
        MiniLM.
    always_include : iterable of str, optional
        Tools the dev rule does not rank (sent anyway); default the registry's marked ones.
    bases : sequence of str, optional
        Blind scorers the dev rule may choose among (``base`` first when it is in them);
        default ``base`` alone.

    Attributes
    ----------
    base_ : Scorer
        The fitted blind scorer the model learns on top of (the one the rule chose).
    base_name_ : str
        Its name.
    setting_ : Setting
        What the dev rule picked.
    selection_ : list of dict
        The dev rule's table (one row per setting compared).
    evidence_ : Evidence
        The labeled requests' vectors, texts and which tools they teach.
    train_ids_ : tuple of str
        Ids of the labeled requests the model learned from.
    labeled_tools_ : list of str
        Tools with at least one labeled request.
    """

    name = "learned"

    def __init__(self, *, base: str | Scorer = "default", setting: str | Setting = "auto",
                 max_per_tool: int | None = None, model: str | None = None,
                 always_include: Sequence[str] | None = None,
                 bases: Sequence[str] | None = None):
        super().__init__()
        self.base = base
        self.setting = setting
        self.max_per_tool = max_per_tool
        self.model = model
        self.always_include = always_include
        self.bases = bases

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, tools: Sequence[Tool], queries: Sequence[Query] | None = None
            ) -> LearnedScorer:
        """Fit the blind scorer on ``tools`` and learn from the labeled ``queries``."""
        if queries is None:
            raise TypeError("LearnedScorer.fit needs labeled requests: fit(tools, queries) "
                            "(a LearnedScorer is not refit on a registry alone)")
        registry = self._start(tools)
        queries = check_labeled(queries, registry)
        texts = [q.query for q in queries]
        vectors = self._request_vectors(texts)
        blinds = {name: (sc.score_many(texts) if texts else np.zeros((0, len(registry))))
                  for name, sc in self.bases_.items()}
        self._learn(registry, queries, blinds, vectors)
        return self

    def _base_names(self) -> list[str]:
        if self.bases is None:
            return [self.base if isinstance(self.base, str) else "base"]
        names = [str(b) for b in self.bases]
        if isinstance(self.base, str) and self.base in names:
            names.remove(self.base)
            names.insert(0, self.base)
        return list(dict.fromkeys(names))

    def _start(self, tools) -> Registry:
        """Fit the blind scorer and the embedder on ``tools``: the label-free half of a fit."""
        registry = tools if isinstance(tools, Registry) else Registry(tools)
        if not len(registry):
            raise ValueError("LearnedScorer.fit: the registry has no tools")
        if self.max_per_tool is not None and (isinstance(self.max_per_tool, bool) or
                                              not isinstance(self.max_per_tool, int) or
                                              self.max_per_tool < 0):
            raise ValueError(f"max_per_tool must be a non-negative integer or None, got "
                             f"{self.max_per_tool!r}")
        self._settings()  # a bad setting fails before any model is loaded
        self.fingerprint_ = registry_fingerprint(registry)
        self.tool_names_ = list(registry.names)
        self.n_tools_ = len(registry)
        self.texts_ = []
        names = self._base_names()
        self.bases_ = {}
        own = self.base if isinstance(self.base, str) else "base"
        for name in names:
            self.bases_[name] = _fitted(self.base if name == own else name, registry)
        self.base_name_ = names[0]
        self.base_ = self.bases_[names[0]]
        # request and description vectors are read the way the first offered scorer reads
        # them, whichever scorer the rule then chooses: the same vectors in every fold
        self.vectors_from_ = names[0]
        self.vector_base_ = self.base_
        self.embedder_ = self._embedder(registry)
        always = registry.always_include if self.always_include is None else \
            registry.check_names(list(self.always_include), what="always_include")
        self.candidates_ = np.ones(len(registry), dtype=bool)
        for name in always:
            self.candidates_[registry.index(name)] = False
        return registry

    def _settings(self) -> list[Setting]:
        s = self.setting
        if isinstance(s, Setting):
            return [s]
        if s == "auto":
            return list(SETTINGS)
        if s in METHODS:
            from .signals import legacy_settings
            return list(dict.fromkeys(x for x in (*SETTINGS, *legacy_settings())
                                      if x.method in ("blind", s)))
        raise ValueError(f"setting must be 'auto', a method among {list(METHODS)} or a "
                         f"Setting, got {s!r}")

    def _learn(self, registry: Registry, queries: list[Query],
               blinds: dict[str, np.ndarray] | np.ndarray, vectors: np.ndarray) -> None:
        """Choose by the dev rule and learn, from these labeled requests only: ``blinds``
        holds each offered blind scorer's scores of them (an array: the base's alone)."""
        if not isinstance(blinds, dict):
            blinds = {self.base_name_: blinds}
        tools_of = [[registry.index(n) for n in q.expected] for q in queries]
        required = [[t for t in ts if self.candidates_[t]] for ts in tools_of]
        texts = [q.query for q in queries]
        groups = request_groups(queries)
        self.description_vectors_ = self._description_vectors()
        name, setting, self.selection_ = choose(
            blinds, texts, vectors, tools_of, required, self.candidates_, groups,
            description_vectors=self.description_vectors_, settings=self._settings(),
            max_per_tool=self.max_per_tool)
        self.base_name_, self.base_ = name, self.bases_[name]
        self.setting_ = fit_setting(setting, blinds[name], vectors, tools_of, required,
                                    self.candidates_, groups, self.description_vectors_,
                                    max_per_tool=self.max_per_tool)
        self.evidence_ = fit_evidence(len(registry), texts, vectors, tools_of,
                                      max_per_tool=self.max_per_tool)

        self.train_ids_ = tuple(q.id for q in queries)
        self.labels_hash_ = labels_hash(queries)
        self.labeled_tools_ = [registry[int(t)].name for t in self.evidence_.labeled]
        self.rule_ = RULE

    def _embedder(self, registry: Registry):
        """The embedding scorer giving request and description vectors: the base scorer's own
        (a fusion's semantic signal, or an embedding base), else MiniLM fit here."""
        from ..scorers.embedding import EmbeddingScorer
        from ..scorers.fusion import FusionScorer
        base = self.vector_base_
        if isinstance(base, EmbeddingScorer) and self.model in (None, base.model):
            return base
        if isinstance(base, FusionScorer):
            for kind, sc in base.signals_:
                if kind == "semantic" and self.model in (None, sc.model):
                    return sc
        params = {} if self.model is None else {"model": self.model}
        return EmbeddingScorer(**params).fit(registry)

    def _description_vectors(self) -> np.ndarray:
        v = np.asarray(self.embedder_.vectors_, dtype=np.float64)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return np.divide(v, n, out=np.zeros_like(v), where=n > 0)

    def _request_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts``, read the way the base scorer reads them (a fusion base's
        whole-request vector comes from its in-context pass, so it is computed once)."""
        from ..scorers.fusion import FusionScorer, locate_clauses
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0))
        emb = self.embedder_
        base = self.vector_base_
        spans = [None] * len(texts)
        if isinstance(base, FusionScorer) and base.clause_vectors == "in_context" and \
                hasattr(emb, "encode_in_context"):
            for i, t in enumerate(texts):
                segs = base.segments(t)
                spans[i] = locate_clauses(segs[0], segs[1:]) if len(segs) > 1 else None
        out = np.zeros((len(texts), 0))
        single = [i for i, s in enumerate(spans) if s is None]
        multi = [i for i, s in enumerate(spans) if s is not None]
        rows: dict[int, np.ndarray] = {}
        if single:
            for i, v in zip(single, emb.encode_queries([texts[i] for i in single])):
                rows[i] = v
        if multi:
            pooled = emb.encode_in_context([texts[i] for i in multi], [spans[i] for i in multi])
            for i, v in zip(multi, pooled):
                rows[i] = v[0]
        out = np.vstack([rows[i] for i in range(len(texts))]).astype(np.float64)
        n = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, n, out=np.zeros_like(out), where=n > 0)

    def is_fitted(self) -> bool:
        return hasattr(self, "evidence_")

    def _check_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError("LearnedScorer is not fitted: call fit(tools, queries) first, "
                                 "or load a model file (toolsel.learn.load_model)")

    # -- scoring ------------------------------------------------------------------------------
    def learned_scores(self, texts: Sequence[str], blind: np.ndarray,
                       vectors: np.ndarray | None = None) -> np.ndarray:
        """The learned scores of ``texts`` from their ``blind`` scores (what :meth:`score_many`
        returns; ``vectors`` computed when not given)."""
        ev: Evidence = self.evidence_
        s = self.setting_
        if s.method == "blind" or (s.method != "ltr" and s.weight == 0) or \
                (s.method != "tool2vec" and s.method != "ltr" and not len(ev.labeled)):
            return np.asarray(blind, dtype=np.float64).copy()
        if vectors is None:
            vectors = self._request_vectors(texts)
        return setting_scores(s, blind, list(texts), vectors, FoldSignals(ev),
                              self.description_vectors_,
                              self.candidates_)

    def _score_many(self, queries: list[str]) -> np.ndarray:
        return self.learned_scores(queries, self.base_.score_many(queries))

    def _score_and_match_many(self, queries: list[str]):
        # which tools match at all is the blind scorer's rule, on its own scores
        blind, matches = self.base_.score_and_match(queries)
        return self.learned_scores(queries, blind), matches

    def _match_many(self, queries: list[str], scores: np.ndarray) -> np.ndarray:
        return self.base_.matches(queries)

    def __repr__(self) -> str:
        base = self.base if isinstance(self.base, str) else type(self.base).__name__
        picked = f", setting_={self.setting_.label!r}" if self.is_fitted() else ""
        return f"LearnedScorer(base={base!r}{picked})"

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self._param_names()}
