"""What labeled requests teach, as arrays: the per-tool evidence and the signals read from it.

Everything here is a pure function of arrays, shared by :class:`~toolsel.learn.model.LearnedScorer`
(fit once, score new requests) and :mod:`~toolsel.eval.crossfit` (fit per fold, score the
held-out requests): the same code scores a request in both, so the cross-fitted numbers are the
numbers of the model a user fits.

Three learned signals, each ``(n_requests, n_tools)`` in ``[0, 1]`` and 0 for a tool with no
labeled request:

``expand``
    BM25 over one document per labeled tool: the words of its labeled requests (document
    expansion, as doc2query does with generated questions; the tool's own text is already in
    the blind score). Divided by the request's best ``expand`` score.
``centroid``
    Cosine between the request's vector and the tool's usage vector: the mean of its labeled
    requests' vectors (Tool2Vec's representation), mixed with the tool's description vector
    (share ``alpha``); rescaled as ``(cos - FLOOR) / (1 - FLOOR)``, clipped to ``[0, 1]``.
``knn``
    Nearest labeled request: a tool gets the rescaled cosine between the request and the
    nearest of the labeled requests that name it (every labeled request votes for its tools;
    unlike ``centroid``, a tool used for several kinds of request keeps each of them).

A :class:`Setting` mixes them into the blind scores:
``score = blind + weight * spread * mix``, where ``spread`` is the request's best blind score
minus its mean blind score (so ``weight`` means the same for every scorer: 1 lets a perfect
learned signal lift a tool by the blind distance from average to best), applied to labeled
tools only. A tool with no labeled request keeps its blind score exactly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Setting", "Evidence", "fit_evidence", "learned_signals", "combine", "SETTINGS",
           "FLOOR", "WEIGHTS", "SIGNALS", "METHODS", "RULE_METHODS", "RULE_WEIGHTS",
           "tool2vec_signal", "lift", "interleave", "knn_signal", "description_signal"]

#: Cosine under which a labeled request or a usage vector says nothing (MiniLM cosines of
#: unrelated sentences sit around 0 to 0.2).
FLOOR = 0.2
#: The weights every method is tried at (the learned lift in units of the blind spread).
WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0)
SIGNALS = ("expand", "centroid", "knn")
#: Every way of using the labels a model file may name. ``expand``, ``centroid``, ``knn`` and
#: ``fusion`` lift labeled tools only (kept for model files written before; the rule no longer
#: offers them: they bury unlabeled tools); ``tool2vec`` lifts every tool by its usage vector
#: (a description vector for a tool with no label); ``ltr`` scores every tool on one calibrated
#: scale (:mod:`~toolsel.learn.ltr`).
METHODS = ("blind", "expand", "centroid", "knn", "fusion", "tool2vec", "ltr")
#: What the rule chooses among (:data:`SETTINGS`), simplest first.
RULE_METHODS = ("blind", "knn", "tool2vec", "ltr")
#: The weights the lift methods are tried at by the rule.
RULE_WEIGHTS = (0.5, 1.0, 2.0)
#: The per-(request, tool) features of the ``ltr`` stage (:mod:`~toolsel.learn.ltr`), in the
#: order of its coefficients (after the intercept).
FEATURES = ("blind_rel", "blind_rank", "usage", "labeled", "labeled_far", "description")
#: The share of the description vector in a labeled tool's ``tool2vec`` usage vector.
TOOL2VEC_ALPHA = 0.5


@dataclass(frozen=True)
class Setting:
    """One way to use the labels: a method, its weight and (``centroid``) the description
    share ``alpha``, or (``fusion``) the weights of the three signals, summing to 1."""

    method: str
    weight: float = 0.0
    alpha: float = 0.0
    mix: tuple[float, float, float] = (0.0, 0.0, 0.0)  # expand, centroid, knn (fusion)
    coef: tuple[float, ...] = ()  # ltr: intercept, then one per toolsel.learn.ltr.FEATURES
    interleave: bool = False  # the learned ranking interleaved with the blind one

    @property
    def label(self) -> str:
        base = self._label()
        return f"{base} interleaved with blind" if self.interleave and base != "blind" \
            else base

    def _label(self) -> str:
        if self.method == "blind":
            return "blind"
        if self.method == "ltr":
            return "ltr" if not self.coef else \
                "ltr(" + ", ".join(f"{c:.2f}" for c in self.coef) + ")"
        if self.method == "centroid":
            return f"centroid(alpha={self.alpha:g}, weight={self.weight:g})"
        if self.method == "fusion":
            parts = ", ".join(f"{s}={m:g}" for s, m in zip(SIGNALS, self.mix) if m)
            return f"fusion({parts}, weight={self.weight:g})"
        return f"{self.method}(weight={self.weight:g})"

    def to_json(self) -> dict:
        out = {"method": self.method, "weight": self.weight, "alpha": self.alpha,
               "mix": list(self.mix)}
        if self.method == "ltr":
            out["coef"] = list(self.coef)
        if self.interleave:
            out["interleave"] = True
        return out

    @classmethod
    def from_json(cls, value) -> Setting:
        if not isinstance(value, dict) or value.get("method") not in METHODS:
            raise ValueError(f"a setting is an object with a method among {list(METHODS)}, "
                             f"got {value!r}")
        mix = value.get("mix", [0, 0, 0])
        if not isinstance(mix, list) or len(mix) != 3 or not all(_finite(m, 0) for m in mix):
            raise ValueError(f"'mix' must be three finite non-negative numbers, got {mix!r}")
        for key in ("weight", "alpha"):
            if not _finite(value.get(key, 0.0), 0):
                raise ValueError(f"{key!r} must be a finite non-negative number, got "
                                 f"{value.get(key)!r}")
        interleave = value.get("interleave", False)
        if not isinstance(interleave, bool):
            raise ValueError(f"'interleave' must be true or false, got {interleave!r}")
        coef = _coef(value) if value["method"] == "ltr" else ()
        return cls(value["method"], float(value.get("weight", 0.0)),
                   float(value.get("alpha", 0.0)), tuple(float(m) for m in mix), coef,
                   interleave)


def _finite(v, low: float | None = None) -> bool:
    """``v`` is a finite number (not a bool), at least ``low`` when given."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and bool(np.isfinite(v))
    return ok and (low is None or v >= low)


def _coef(value: dict) -> tuple[float, ...]:
    """An ``ltr`` setting's coefficients: the intercept and one finite number a feature."""
    raw = value.get("coef")
    if not isinstance(raw, list) or len(raw) != len(FEATURES) + 1 or \
            not all(_finite(c) for c in raw):
        raise ValueError(f"'coef' of an ltr setting must be {len(FEATURES) + 1} finite "
                         f"numbers (intercept, {', '.join(FEATURES)}), got {raw!r}")
    return tuple(float(c) for c in raw)


def _settings() -> list[Setting]:
    learned = [Setting("knn", w) for w in RULE_WEIGHTS]
    learned += [Setting("tool2vec", w, alpha=TOOL2VEC_ALPHA) for w in RULE_WEIGHTS]
    learned += [Setting("ltr")]  # its coefficients are learned by each fit
    return [Setting("blind"), *learned,
            *(dataclasses.replace(s, interleave=True) for s in learned)]


def legacy_settings() -> list[Setting]:
    """The lift settings an earlier rule compared (every method at every weight of
    :data:`WEIGHTS`): for benchmarks that set them side by side with the rule's."""
    out = [Setting("expand", w) for w in WEIGHTS]
    out += [Setting("centroid", w, alpha=a) for a in (0.0, 0.5) for w in WEIGHTS]
    out += [Setting("knn", w) for w in WEIGHTS]
    mixes = [(1 / 3, 1 / 3, 1 / 3), (0.5, 0.0, 0.5), (0.0, 0.5, 0.5), (0.5, 0.5, 0.0)]
    out += [Setting("fusion", w, mix=m) for m in mixes for w in WEIGHTS]
    return out


#: Every setting the dev rule compares, simplest first (``blind``: the labels unused); ties go
#: to the earlier one.
SETTINGS: tuple[Setting, ...] = tuple(_settings())


@dataclass
class Evidence:
    """What a fit keeps from its labeled requests, in the index space of one registry.

    ``pairs`` holds ``(request row, tool index)``: which labeled requests teach which tools
    (at most ``max_per_tool`` per tool, the earliest); ``vectors`` the requests' unit vectors;
    ``texts`` their texts.
    """

    n_tools: int
    texts: list[str]
    vectors: np.ndarray  # (m, d) unit rows
    pairs: np.ndarray  # (p, 2) int: request row, tool index
    labeled: np.ndarray = field(init=False)  # tool indices with a labeled request, sorted
    centroids: np.ndarray = field(init=False)  # (len(labeled), d): unit mean request vector
    _index: object = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.pairs = np.asarray(self.pairs, dtype=np.int64).reshape(-1, 2)
        self.labeled = np.unique(self.pairs[:, 1]) if len(self.pairs) else \
            np.zeros(0, dtype=np.int64)
        d = self.vectors.shape[1] if self.vectors.ndim == 2 else 0
        self.centroids = np.zeros((len(self.labeled), d), dtype=np.float64)
        pos = {int(t): i for i, t in enumerate(self.labeled)}
        for j, t in self.pairs:
            self.centroids[pos[int(t)]] += self.vectors[j]
        self.centroids = _unit(self.centroids)
        # the (request row, tool) pairs ordered by tool, and where each tool's run starts:
        # ``knn`` takes a maximum per run (np.maximum.reduceat) without a Python loop
        order = np.lexsort((self.pairs[:, 0], self.pairs[:, 1])) if len(self.pairs) else \
            np.zeros(0, dtype=np.int64)
        self.teaching_vectors = np.ascontiguousarray(self.vectors[self.pairs[order, 0]]) \
            if len(self.pairs) else np.zeros((0, d))
        self.runs = np.flatnonzero(np.r_[True, np.diff(self.pairs[order, 1]) != 0]) \
            if len(self.pairs) else np.zeros(0, dtype=np.int64)
        self._mixed: dict[float, np.ndarray] = {}

    def example_index(self):
        """BM25 over one document per labeled tool: its labeled requests' words (built once)."""
        if self._index is None and len(self.labeled):
            from ..data import Tool
            from ..scorers.bm25 import Bm25Scorer
            docs: dict[int, list[str]] = {int(t): [] for t in self.labeled}
            for j, t in self.pairs:
                docs[int(t)].append(self.texts[j])
            pseudo = [Tool(f"t{t}", " \n".join(docs[int(t)])) for t in self.labeled]
            self._index = Bm25Scorer(fields=("description",)).fit(pseudo)
        return self._index


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)


def fit_evidence(n_tools: int, texts: Sequence[str], vectors: np.ndarray,
                 tools_of: Sequence[Sequence[int]], *,
                 max_per_tool: int | None = None) -> Evidence:
    """:class:`Evidence` of labeled requests: ``tools_of[j]`` are the tool indices request ``j``
    is labeled with; with ``max_per_tool`` each tool learns from its first that many only."""
    if max_per_tool is not None and max_per_tool < 0:
        raise ValueError(f"max_per_tool must be >= 0, got {max_per_tool}")
    count = np.zeros(n_tools, dtype=np.int64)
    pairs = []
    for j, tools in enumerate(tools_of):
        for t in dict.fromkeys(int(t) for t in tools):
            if max_per_tool is None or count[t] < max_per_tool:
                count[t] += 1
                pairs.append((j, t))
    return Evidence(n_tools, list(texts), np.asarray(vectors, dtype=np.float64), pairs)


def _rescale(cos: np.ndarray) -> np.ndarray:
    return np.clip((cos - FLOOR) / (1 - FLOOR), 0.0, 1.0)


def learned_signals(ev: Evidence, texts: Sequence[str], vectors: np.ndarray,
                    description_vectors: np.ndarray | None,
                    alphas: Sequence[float] = (0.0,)) -> dict[str, np.ndarray]:
    """The signals of ``texts`` (with unit ``vectors``), ``{name: (n, n_tools)}``.

    ``centroid`` appears once per ``alpha`` as ``centroid@alpha``; ``description_vectors``
    (one unit row per tool) are needed only for an ``alpha`` above 0.
    """
    n, T = len(texts), ev.n_tools
    out = {}
    lab = ev.labeled
    q = np.asarray(vectors, dtype=np.float64)
    # expand
    s = np.zeros((n, T))
    if len(lab) and n:
        bm = ev.example_index().score_many(list(texts))
        top = bm.max(axis=1, keepdims=True)
        s[:, lab] = np.divide(bm, top, out=np.zeros_like(bm), where=top > 0)
    out["expand"] = s
    # centroid, per alpha
    for a in alphas:
        s = np.zeros((n, T))
        if len(lab) and n:
            c = ev.centroids
            if a > 0:
                if description_vectors is None:
                    raise ValueError("centroid with alpha > 0 needs the description vectors")
                if a not in ev._mixed:
                    ev._mixed[a] = _unit(a * np.asarray(description_vectors,
                                                        dtype=np.float64)[lab] + (1 - a) * c)
                c = ev._mixed[a]
            s[:, lab] = _rescale(q @ c.T)
        out[f"centroid@{a:g}"] = s
    out["knn"] = knn_signal(ev, q)
    return out


def knn_signal(ev: Evidence, vectors: np.ndarray) -> np.ndarray:
    """``(n, n_tools)``: per labeled tool, the rescaled cosine of the nearest labeled request
    naming it (every labeled request votes for its tools); 0 for a tool with none."""
    q = np.asarray(vectors, dtype=np.float64)
    s = np.zeros((len(q), ev.n_tools))
    if len(ev.labeled) and len(q):
        sims = q @ ev.teaching_vectors.T  # (n, pairs), pairs grouped by tool
        s[:, ev.labeled] = _rescale(np.maximum.reduceat(sims, ev.runs, axis=1))
    return s


def description_signal(vectors: np.ndarray, description_vectors: np.ndarray) -> np.ndarray:
    """``(n, n_tools)``: rescaled cosine between each request and each tool's description."""
    q = np.asarray(vectors, dtype=np.float64)
    d = np.asarray(description_vectors, dtype=np.float64)
    if not len(q) or not d.size:
        return np.zeros((len(q), len(d)))
    return _rescale(q @ d.T)


def combine(blind: np.ndarray, signals: dict[str, np.ndarray], setting: Setting,
            labeled: np.ndarray) -> np.ndarray:
    """Blind scores with ``setting``'s learned lift added to the ``labeled`` tools only."""
    blind = np.asarray(blind, dtype=np.float64)
    if setting.method == "blind" or setting.weight == 0 or not len(labeled):
        return blind.copy()
    if setting.method == "fusion":
        names = ("expand", "centroid@0", "knn")
        mix = sum(m * signals[name] for name, m in zip(names, setting.mix) if m)
    elif setting.method == "centroid":
        mix = signals[f"centroid@{setting.alpha:g}"]
    else:
        mix = signals[setting.method]
    return lift(blind, mix, setting.weight, labeled)


def tool2vec_signal(ev: Evidence, vectors: np.ndarray, description_vectors: np.ndarray,
                    alpha: float = TOOL2VEC_ALPHA) -> np.ndarray:
    """``(n, n_tools)``: rescaled cosine between each request and every tool's usage vector:
    a labeled tool's mean labeled-request vector mixed with its description vector (share
    ``alpha``), an unlabeled tool's description vector (Tool2Vec's mix): every tool has one."""
    q = np.asarray(vectors, dtype=np.float64)
    d = _unit(np.asarray(description_vectors, dtype=np.float64))
    usage = d.copy()
    if len(ev.labeled):
        usage[ev.labeled] = _unit(alpha * d[ev.labeled] + (1 - alpha) * ev.centroids)
    if not len(q) or not usage.size:
        return np.zeros((len(q), ev.n_tools))
    return _rescale(q @ usage.T)


def lift(blind: np.ndarray, signal: np.ndarray, weight: float,
         tools: np.ndarray | None = None) -> np.ndarray:
    """``blind + weight * spread * signal`` on ``tools`` (every tool when ``None``), where
    ``spread`` is each request's best blind score minus its mean (see the module docstring)."""
    blind = np.asarray(blind, dtype=np.float64)
    finite = np.where(np.isfinite(blind), blind, np.nan)
    with np.errstate(invalid="ignore", all="ignore"):
        spread = np.nanmax(finite, axis=1) - np.nanmean(finite, axis=1)
    spread = np.where(np.isfinite(spread) & (spread > 1e-12), spread, 1.0)
    out = blind.copy()
    if tools is None:
        out += weight * spread[:, None] * np.asarray(signal)
    else:
        out[:, tools] += weight * spread[:, None] * np.asarray(signal)[:, tools]
    return out


def candidate_ranks(scores: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
    """Per row, every tool's 1-based rank by ``scores`` (best first; NaN and non-candidates
    last; ties to the earlier tool)."""
    x = np.where(np.isnan(scores), -np.inf, np.asarray(scores, dtype=np.float64))
    if candidates is not None:
        x = np.where(np.asarray(candidates, dtype=bool)[None, :], x, -np.inf)
    order = np.argsort(-x, axis=1, kind="stable")
    r = np.empty_like(order)
    r[np.arange(len(x))[:, None], order] = np.arange(1, x.shape[1] + 1)[None, :]
    return r


def interleave(learned: np.ndarray, blind: np.ndarray, candidates: np.ndarray | None = None,
               *, blind_ranks: np.ndarray | None = None) -> np.ndarray:
    """Scores whose ranking interleaves the ``learned`` ranking with the ``blind`` one: the
    learned first, the blind first, the learned second, ... each tool at its first appearance.

    A tool at blind rank ``r`` lands at rank ``2r`` at worst, and one at learned rank ``r`` at
    ``2r - 1``: labels can move a tool up but never bury a tool the blind scorer ranked well.
    The score is minus the tool's position in that sequence (``-min(2 r_learned - 1,
    2 r_blind)``). ``blind_ranks``: :func:`candidate_ranks` of ``blind``, when already known.
    """
    if not np.size(learned):
        return np.asarray(learned, dtype=np.float64).copy()
    if blind_ranks is None:
        blind_ranks = candidate_ranks(blind, candidates)
    return -np.minimum(2 * candidate_ranks(learned, candidates) - 1,
                       2 * blind_ranks).astype(np.float64)
