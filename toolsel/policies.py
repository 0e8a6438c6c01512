"""Selection policies: how many of the ranked tools to send, decided per query.

A policy turns one query's scores (registry order) and a boolean mask of the *candidates*
(the registry minus always-include and pinned tools) into the registry indices to send, in
registry order. The fixed top-K of the article is one policy among several:

============== ==============================================================================
``top_k``       the ``k`` best candidates (:func:`toolsel.ranking.top_k_indices`, exactly)
``threshold``   every candidate scoring at least ``min_score`` (by default on a per-request
                relative scale: average candidate 0, best 1), kept within ``[min_k, max_k]``
``adaptive_k``  cut the ranking where the scores fall away: at the largest gap between
                consecutive scores, or at the knee of the sorted scores, within
                ``[min_k, max_k]``
``token_budget`` the best candidates while their JSON definitions fit in ``tokens``
``two_stage``   pick the ``n_servers`` best servers (:attr:`Tool.domain`), then the best tools
                within them
============== ==============================================================================

All policies except ``two_stage`` send a *prefix of the ranking* (the best ``k`` candidates
for a ``k`` they choose per query), so sending more never drops a better tool. Everything is
deterministic: of two tools with equal scores the earlier one in the registry ranks higher, and
every other tie (equal gaps, equal server scores) goes to the smaller cut-off or the server
listed first. A score of ``nan`` (a scorer that failed on a tool) ranks last.

Policies that need the registry (``token_budget``: the cost of each tool; ``two_stage``: the
server of each tool) learn it in :meth:`Policy.fit`, scikit-learn style: attributes ending in
``_``, ``fit`` returns ``self``, and :meth:`Policy.clone` gives an unfitted copy (what
:class:`toolsel.selection.Selector` fits, so the caller's object is never modified).

On the command line a policy is a spec string, ``name`` or ``name:key=value,...``
(``"threshold:min_score=0.5,max_k=10"``): :func:`parse_policy` reads one,
:func:`policy_spec` writes one.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from .data import Tool
from .ranking import rank_order, top_k_indices

__all__ = ["Policy", "PrefixPolicy", "TopK", "Threshold", "AdaptiveK", "TokenBudget", "TwoStage",
           "POLICIES", "register_policy", "get_policy", "available_policies", "prefix_policies",
           "policy_grid", "default_grid", "parse_policy", "policy_spec", "config_specs", "as_policies"]

#: Every policy class by name, in registration order: what :func:`get_policy`,
#: :func:`parse_policy`, :func:`default_grid` (``toolsel policies``, notebook 12) and
#: ``toolsel check``/``sweep --policy`` read.
POLICIES: dict[str, type[Policy]] = {}


def register_policy(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make a :class:`Policy` subclass available by its ``name`` (and its
    ``aliases``) everywhere a policy is named. Adding a policy is its class with this
    decorator (its ``name``, keyword parameters, ``sweep_param`` and ``grid``) and its tests.
    """
    POLICIES[cls.name] = cls
    return cls


def _clean(scores, n: int | None = None) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1:
        raise ValueError(f"scores must be one query's 1-d array, got shape {scores.shape}")
    if n is not None and len(scores) != n:
        raise ValueError(f"scores has {len(scores)} entries but the policy was fitted on "
                         f"{n} tools")
    return np.where(np.isnan(scores), -np.inf, scores)


def _mask(candidates, n: int) -> np.ndarray:
    if candidates is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(candidates, dtype=bool)
    if mask.shape != (n,):
        raise ValueError(f"candidates must be a boolean mask of shape ({n},), got {mask.shape}")
    return mask


def _int(name: str, value, low: int, *, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}"
                         f"{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


def _bounds(min_k, max_k) -> tuple[int, int | None]:
    lo = _int("min_k", min_k, 0)
    hi = _int("max_k", max_k, 1, allow_none=True)
    if hi is not None and hi < lo:
        raise ValueError(f"max_k ({hi}) must be >= min_k ({lo})")
    return lo, hi


class Policy:
    """Base class: ``select(scores, candidates)`` → registry indices to send, registry order.

    Subclasses set ``name``, store their keyword parameters in the constructor (checked
    there, with errors naming the parameter) and implement :meth:`select`. Policies that need
    the registry override :meth:`fit`.
    """

    name: ClassVar[str] = ""
    #: other names :func:`get_policy` accepts for it (any case)
    aliases: ClassVar[tuple[str, ...]] = ()
    #: the parameter its recall-vs-payload curve is swept over (the ``param`` column of
    #: :mod:`toolsel.eval.policies` tables)
    sweep_param: ClassVar[str | None] = None
    #: the settings :func:`default_grid` sweeps: one ``{parameter: values}`` per
    #: :func:`policy_grid` call
    grid: ClassVar[tuple[dict[str, Any], ...]] = ()

    def fit(self, tools: Sequence[Tool], *, costs: Sequence[int] | None = None) -> Policy:
        """Learn what the policy needs from the registry (nothing by default); return ``self``.

        ``costs`` (tokens per tool, registry order) is used by :class:`TokenBudget` only.
        """
        self.n_tools_ = len(tools)
        return self

    def select(self, scores: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
        """Indices of the candidates to send, in registry order."""
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        """The constructor's parameters, by name."""
        return {p: getattr(self, p) for p in self.param_names()}

    @classmethod
    def param_names(cls) -> list[str]:
        """The constructor's parameter names, in order."""
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def clone(self) -> Policy:
        """A new, unfitted policy with the same parameters."""
        return type(self)(**self.get_params())

    def _n(self) -> int | None:
        return getattr(self, "n_tools_", None)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.get_params() == self.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(repr(v) for v in self.get_params().values())))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class PrefixPolicy(Policy):
    """A policy that sends the best ``k`` candidates for a ``k`` it picks per query."""

    def cutoff(self, ranked_scores: np.ndarray, ranked: np.ndarray) -> int:
        """How many of the ranked candidates to send (scores best first, their indices)."""
        raise NotImplementedError

    def select(self, scores, candidates=None):
        scores = _clean(scores, self._n())
        mask = _mask(candidates, len(scores))
        order = rank_order(scores, mask)
        k = self.cutoff(scores[order], order)
        return np.sort(order[:k])


@register_policy
class TopK(PrefixPolicy):
    """The ``k`` best candidates (the article's fixed top-K; ``k`` past the candidates: all).

    Equal to :func:`toolsel.ranking.top_k_indices` for every input.
    """

    name = "top_k"
    aliases = ("topk", "fixed")
    sweep_param = "k"
    grid = ({"k": [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20]},)

    def __init__(self, k: int = 10):
        self.k = _int("k", k, 0)

    def select(self, scores, candidates=None):
        scores = _clean(scores, self._n())
        return top_k_indices(scores, self.k, _mask(candidates, len(scores)))

    def cutoff(self, ranked_scores, ranked):
        return min(self.k, len(ranked))


@register_policy
class Threshold(PrefixPolicy):
    """Every candidate scoring ``>= min_score``, at least ``min_k`` and at most ``max_k`` of them.

    Parameters
    ----------
    min_score : float
        The threshold, on the scale ``scale`` says.
    min_k, max_k : int
        When fewer than ``min_k`` candidates reach it the best ``min_k`` are sent anyway; when
        more than ``max_k`` do, the best ``max_k`` (``None``: no cap).
    scale : {"relative", "raw"}
        ``"relative"`` (default): the threshold means the same on every scorer. Each request's
        candidate scores are rescaled so that the average candidate scores 0 and the best 1,
        ``(s - mean) / (best - mean)``, and ``min_score`` applies to that: ``0.5`` keeps the
        tools at least halfway from the average candidate to the best one, whether the scorer
        is BM25 (unbounded), a cosine or the ``default`` scorer (already about this scale). A
        request whose candidates all score the same sends ``min_k``. ``"raw"``: the scorer's
        own scores, as they come (BM25 scores are unbounded: a fixed raw threshold keeps
        every tool on some requests and none on others).
    """

    name = "threshold"
    sweep_param = "min_score"
    grid = ({"min_score": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], "min_k": [1, 3], "max_k": [10, 20]},)
    SCALES = ("relative", "raw")

    def __init__(self, min_score: float = 0.5, *, min_k: int = 1, max_k: int | None = 20,
                 scale: str = "relative"):
        if isinstance(min_score, bool) or not isinstance(min_score, (int, float, np.number)) \
                or np.isnan(min_score):
            raise ValueError(f"min_score must be a number, got {min_score!r}")
        self.min_score = float(min_score)
        self.min_k, self.max_k = _bounds(min_k, max_k)
        if scale not in self.SCALES:
            raise ValueError(f"scale must be one of {self.SCALES}, got {scale!r}")
        self.scale = scale

    def relative(self, ranked_scores: np.ndarray) -> np.ndarray:
        """Scores best first, rescaled to average candidate 0, best 1 (``-inf`` stays)."""
        s = np.asarray(ranked_scores, dtype=np.float64)
        finite = np.isfinite(s)
        if not finite.any():
            return s
        best, mean = s[finite].max(), s[finite].mean()
        if not best > mean:
            return np.where(finite, 0.0, s)
        return np.where(finite, (s - mean) / (best - mean), s)

    def cutoff(self, ranked_scores, ranked):
        s = self.relative(ranked_scores) if self.scale == "relative" else ranked_scores
        k = max(int(np.count_nonzero(s >= self.min_score)), self.min_k)
        return min(k, len(ranked) if self.max_k is None else self.max_k)


@register_policy
class AdaptiveK(PrefixPolicy):
    """Cut the ranking where the scores fall away, sending between ``min_k`` and ``max_k``.

    Parameters
    ----------
    min_k, max_k : int
        Bounds on the number sent, ``1 <= min_k <= max_k`` (fewer than ``min_k`` candidates:
        all of them).
    rule : {"gap", "knee"}
        ``"gap"``: send the best ``k`` where the drop from the ``k``-th to the ``(k+1)``-th
        score is largest, for ``k`` in ``[min_k, max_k]`` (a drop to a ``nan`` score counts
        as infinite). ``"knee"``: the knee of the sorted scores of the best ``max_k + 1``
        candidates: the ``k`` whose score lies furthest below the straight line from the
        best to the last of them (the Kneedle rule on a decreasing curve); the knee tool is
        sent. Equal gaps or distances go to the smaller ``k``; a flat ranking sends
        ``min_k``.
    """

    name = "adaptive_k"
    aliases = ("adaptive",)
    sweep_param = "max_k"
    grid = ({"rule": ["gap", "knee"], "min_k": [1, 2, 3, 5], "max_k": [5, 8, 10, 15, 20]},)
    RULES = ("gap", "knee")

    def __init__(self, min_k: int = 1, max_k: int = 10, *, rule: str = "gap"):
        if max_k is None:
            raise ValueError("max_k must be an integer >= 1, got None")
        self.min_k, self.max_k = _bounds(_int("min_k", min_k, 1), max_k)
        if rule not in self.RULES:
            raise ValueError(f"rule must be one of {self.RULES}, got {rule!r}")
        self.rule = rule

    def cutoff(self, ranked_scores, ranked):
        m = len(ranked)
        lo = self.min_k
        if m <= lo:
            return m
        s = ranked_scores
        if self.rule == "gap":
            hi = min(self.max_k, m - 1)  # the (k+1)-th score must exist; hi >= lo here
            ks = np.arange(lo, hi + 1)
            with np.errstate(invalid="ignore"):
                gaps = s[ks - 1] - s[ks]
            gaps = np.where(np.isnan(gaps), 0.0, gaps)  # -inf minus -inf: no drop
            return int(ks[int(np.argmax(gaps))])
        w = min(self.max_k + 1, m)
        y = s[:w].copy()
        finite = np.isfinite(y)
        if not finite.any():
            return lo
        y[~finite] = y[finite].min()
        chord = y[0] + (y[-1] - y[0]) * np.arange(w) / max(w - 1, 1)
        ks = np.arange(lo, min(self.max_k, w) + 1)
        below = chord[ks - 1] - y[ks - 1]
        return int(ks[int(np.argmax(below))])


@register_policy
class TokenBudget(PrefixPolicy):
    """The best candidates while their definitions fit in ``tokens``.

    Candidates are taken best first while the running total of their costs stays within
    ``tokens``; the first one that does not fit ends the selection (no smaller, worse tool is
    slipped in after it, so the result is always a prefix of the ranking). **The budget is
    never exceeded, except by the ``min_k`` best candidates** (default 1: a query always gets
    its best tool, even one whose definition alone exceeds the budget). Always-include and
    pinned tools are sent outside the budget, as they are outside K.

    Parameters
    ----------
    tokens : int
        The budget for the filtered tools' definitions.
    encoding : str
        Tokenizer of the cost (offline, :func:`toolsel.tokens.count_tokens`).
    min_k, max_k : int
        Bounds on the number sent (``max_k=None``: no cap).

    A tool's cost is the tokens of its JSON definition (name, description, parameters:
    :func:`toolsel.tokens.definition_tokens`), learnt in :meth:`fit`; pass ``costs`` to
    :meth:`fit` to use precomputed ones.
    """

    name = "token_budget"
    aliases = ("budget",)
    sweep_param = "tokens"
    grid = ({"tokens": [250, 500, 1000, 1500, 2000, 3000, 4000, 6000]},)

    def __init__(self, tokens: int = 2000, *, encoding: str = "cl100k_base", min_k: int = 1,
                 max_k: int | None = None):
        self.tokens = _int("tokens", tokens, 0)
        if not isinstance(encoding, str):
            raise ValueError(f"encoding must be a tokenizer name, got {encoding!r}")
        self.encoding = encoding
        self.min_k, self.max_k = _bounds(min_k, max_k)

    def fit(self, tools, *, costs=None):
        if costs is None:
            from .tokens import definition_tokens
            costs = [definition_tokens(t, self.encoding) for t in tools]
        costs = np.asarray(costs, dtype=np.int64)
        if costs.shape != (len(tools),) or (costs < 0).any():
            raise ValueError(f"costs must be {len(tools)} non-negative token counts (one per "
                             f"tool, registry order), got shape {costs.shape}")
        self.costs_ = costs
        return super().fit(tools)

    def select(self, scores, candidates=None):
        if not hasattr(self, "costs_"):
            raise RuntimeError("TokenBudget is not fitted: call fit(tools) first (a Selector "
                               "does it)")
        return super().select(scores, candidates)

    def cutoff(self, ranked_scores, ranked):
        spent = np.cumsum(self.costs_[ranked])
        k = max(int(np.searchsorted(spent, self.tokens, side="right")), self.min_k)
        return min(k, len(ranked) if self.max_k is None else self.max_k)


@register_policy
class TwoStage(Policy):
    """Pick the best servers, then the best tools within them.

    Parameters
    ----------
    n_servers : int
        How many servers to keep. A tool's server is :attr:`Tool.domain` (``domain``, else
        ``server`` in its metadata); a tool with neither is a server of its own.
    k_per_server : int, optional
        Send the best ``k_per_server`` candidates of each kept server.
    k : int, optional
        Send the best ``k`` candidates of the kept servers together. Give exactly one of
        ``k_per_server`` and ``k``.
    by : {"max", "sum"}
        A server's score: its best candidate's score, or the sum of its candidates' positive
        scores (favours servers with several relevant tools). Equal server scores go to the
        server whose first tool comes first in the registry; servers without candidates are
        never kept.
    """

    name = "two_stage"
    aliases = ("two-stage", "twostage")
    sweep_param = "n_servers"
    grid = ({"n_servers": [1, 2, 3, 5], "k_per_server": [2, 3, 5], "by": ["max", "sum"]},
            {"n_servers": [2, 3], "k": [5, 10], "by": ["max", "sum"]})
    BY = ("max", "sum")

    def __init__(self, n_servers: int = 2, k_per_server: int | None = None, *,
                 k: int | None = None, by: str = "max"):
        self.n_servers = _int("n_servers", n_servers, 1)
        if (k_per_server is None) == (k is None):
            raise ValueError("give exactly one of k_per_server and k, got "
                             f"k_per_server={k_per_server!r}, k={k!r}")
        self.k_per_server = _int("k_per_server", k_per_server, 1, allow_none=True)
        self.k = _int("k", k, 1, allow_none=True)
        if by not in self.BY:
            raise ValueError(f"by must be one of {self.BY}, got {by!r}")
        self.by = by

    def fit(self, tools, *, costs=None):
        ids: dict[Any, int] = {}
        groups = []
        for t in tools:
            key = ("server", t.domain) if t.domain is not None else ("tool", t.name)
            groups.append(ids.setdefault(key, len(ids)))
        self.groups_ = np.asarray(groups, dtype=np.int64)
        self.servers_ = [k[1] for k in ids]
        # tools grouped by server (stable), for per-server reductions without ufunc.at
        self._by_server = np.argsort(self.groups_, kind="stable")
        self._starts = np.searchsorted(self.groups_[self._by_server], np.arange(len(ids)))
        return super().fit(tools)

    def select(self, scores, candidates=None):
        if not hasattr(self, "groups_"):
            raise RuntimeError("TwoStage is not fitted: call fit(tools) first (a Selector "
                               "does it)")
        scores = _clean(scores, self._n())
        mask = _mask(candidates, len(scores))
        if not mask.any():
            return np.zeros(0, dtype=np.int64)
        perm, starts = self._by_server, self._starts
        has = np.logical_or.reduceat(mask[perm], starts)
        if self.by == "max":
            server = np.maximum.reduceat(np.where(mask, scores, -np.inf)[perm], starts)
        else:
            server = np.add.reduceat(np.where(mask, np.clip(scores, 0.0, None), 0.0)[perm],
                                     starts)
        kept = top_k_indices(server, self.n_servers, has)
        keep = np.zeros(len(server), dtype=bool)
        keep[kept] = True
        inside = np.flatnonzero(mask & keep[self.groups_])
        ranked = inside[np.argsort(-scores[inside], kind="stable")]  # ties: earlier tool
        if self.k is not None:
            return np.sort(ranked[:self.k])
        group = self.groups_[ranked]
        return np.sort(np.concatenate([ranked[group == g][:self.k_per_server] for g in kept]))


def available_policies() -> list[str]:
    """Names :func:`get_policy` accepts (:data:`POLICIES`)."""
    return list(POLICIES)


def prefix_policies() -> list[str]:
    """Names of the policies that send a prefix of the ranking (what ``toolsel check`` takes)."""
    return [n for n, c in POLICIES.items() if issubclass(c, PrefixPolicy)]


def get_policy(policy: str | Policy, **params: Any) -> Policy:
    """A policy from its name (or an alias) and parameters, or a :class:`Policy` returned as
    it is.

    >>> get_policy("threshold", min_score=0.6)
    Threshold(min_score=0.6, min_k=1, max_k=20, scale='relative')
    """
    if isinstance(policy, Policy):
        if params:
            raise ValueError(f"parameters {sorted(params)} given with a policy object; pass a "
                             "name to build one")
        return policy
    if not isinstance(policy, str):
        raise TypeError(f"policy must be a name or a Policy, got {type(policy).__name__}")
    key = policy.lower()
    cls = next((c for n, c in POLICIES.items() if key == n or key in c.aliases), None)
    if cls is None:
        raise ValueError(f"unknown policy {policy!r}; available: {', '.join(POLICIES)}")
    unknown = sorted(set(params) - set(cls.param_names()))
    if unknown:
        raise ValueError(f"{cls.__name__} has no parameter(s) {unknown}; it takes "
                         f"{', '.join(cls.param_names())}")
    return cls(**params)


def policy_grid(policy: str, **grid: Iterable[Any] | Any) -> list[Policy]:
    """Every combination of the given parameter values, as policies (first parameter slowest).

    >>> policy_grid("top_k", k=[1, 3])
    [TopK(k=1), TopK(k=3)]
    """
    names = list(grid)
    values = [list(v) if isinstance(v, (list, tuple, range)) else [v] for v in grid.values()]
    return [get_policy(policy, **dict(zip(names, combo)))
            for combo in itertools.product(*values)]


def default_grid() -> list[Policy]:
    """The settings every policy of :data:`POLICIES` is swept over (notebook 12, ``toolsel
    policies``): each class's ``grid``, in registration order.

    Fixed top-K over the usual cut-offs; score thresholds with and without a floor and a cap;
    adaptive K cutting at the largest gap or the knee; token budgets; two-stage (servers, then
    tools within them) with a per-server or a total K.
    """
    return [p for name, cls in POLICIES.items() for g in cls.grid
            for p in policy_grid(name, **g)]


def _spec_value(text: str) -> Any:
    """A spec value: an int, else a float, else ``None`` for ``none``/``None``, else the text."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return None if text in ("none", "None") else text


def parse_policy(spec: str) -> Policy:
    """A policy from a spec string: ``name`` (defaults) or ``name:key=value,key=value``.

    ``name`` is anything :func:`get_policy` accepts; each value is read as an int, else a
    float, else ``None`` (``none`` or ``None``), else a string.

    >>> parse_policy("threshold:min_score=0.5,max_k=10")
    Threshold(min_score=0.5, min_k=1, max_k=10, scale='relative')
    >>> parse_policy("adaptive_k")
    AdaptiveK(min_k=1, max_k=10, rule='gap')

    Raises
    ------
    ValueError
        One line naming the spec and what is wrong with it: an unknown policy or parameter,
        a part that is not ``key=value``, a parameter given twice, or a value the policy
        rejects.
    """
    if not isinstance(spec, str):
        raise TypeError(f"a policy spec is a string, got {type(spec).__name__}")
    name, colon, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"policy spec {spec!r}: no policy name; expected 'name' or "
                         "'name:key=value,...'")
    params: dict[str, Any] = {}
    if colon:
        parts = [part.strip() for part in rest.split(",")]
        for part in parts:
            key, eq, value = (x.strip() for x in part.partition("="))
            if not eq or not key or not value:
                raise ValueError(f"policy spec {spec!r}: {part!r} is not key=value")
            if key in params:
                raise ValueError(f"policy spec {spec!r}: {key!r} is given twice")
            params[key] = _spec_value(value)
    try:
        return get_policy(name, **params)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"policy spec {spec!r}: {exc}") from None


def policy_spec(policy: str | Policy) -> str:
    """The spec string :func:`parse_policy` reads back as ``policy`` (every parameter given).

    >>> policy_spec(Threshold(0.5, max_k=10))
    'threshold:min_score=0.5,min_k=1,max_k=10,scale=relative'
    """
    policy = get_policy(policy)
    params = policy.get_params()
    for key, value in params.items():
        text = str(value)
        if _spec_value(text) != value or any(c in text for c in ",=:"):
            raise ValueError(f"{policy!r}: {key}={value!r} cannot be written in a spec")
    if not params:
        return policy.name
    return policy.name + ":" + ",".join(f"{k}={v}" for k, v in params.items())


def config_specs(configs: Iterable[Any], policies: Iterable[str | Policy]) -> list[Any]:
    """Policy settings as spec strings: each of ``configs`` that is the ``repr`` of one of
    ``policies`` (the ``config`` column of :mod:`toolsel.eval.policies` tables, e.g.
    ``"TopK(k=5)"``) becomes its :func:`policy_spec` (``"top_k:k=5"``). ``policies`` are
    policy objects or spec strings; any other value (a missing one, a setting of another
    grid) is returned as it is.

    >>> config_specs(["TopK(k=5)", None], [TopK(5)])
    ['top_k:k=5', None]
    """
    spec = {repr(p): policy_spec(p) for p in
            (q if isinstance(q, Policy) else parse_policy(q) for q in policies)}
    return [spec.get(c, c) if isinstance(c, str) else c for c in configs]


def as_policies(policies: Iterable[str | Policy] | str | Policy) -> list[Policy]:
    """Policies from policy objects, names or spec strings (:func:`parse_policy`).

    Objects are returned as they are (not cloned). Raises ``ValueError`` on a bad spec and
    on a policy listed twice (equal parameters, whatever the name or alias used).
    """
    if isinstance(policies, (str, Policy)):
        policies = [policies]
    out = [p if isinstance(p, Policy) else parse_policy(p) for p in policies]
    configs = [repr(p) for p in out]
    twice = sorted({c for c in configs if configs.count(c) > 1}, key=configs.index)
    if twice:
        raise ValueError("a policy is listed twice: " + ", ".join(twice))
    return out
