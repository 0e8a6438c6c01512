"""Dynamic tool selection: send the top-K tools plus always-include and pinned ones.

Two layers:

- :func:`select_tools` and :func:`discover` keep the article's functional API and semantics
  exactly (names in registry order; ``scorer`` is a per-tool hook ``(tool, query_tokens)``).
- :class:`Selector` fits a scorer once per registry and answers many queries fast;
  :meth:`Selector.session` gives a per-conversation :class:`Session` whose ``discover`` pins
  its hit for the rest of that conversation.

Ties are always broken by registry order: of two tools with the same score, the one earlier
in the registry ranks higher.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .data import Registry, Tool, suggest_names
from .ranking import best_matches, rank_order, top_k_indices
from .scorers.base import Scorer, check_params, get_scorer, scorer_class
from .text import token_set

__all__ = ["jaccard", "select_tools", "discover", "Selector", "Session", "fitted_scorer",
           "DISCOVER_TOOL"]

ScorerHook = Callable[[Tool, set], float]

#: The escape hatch as the model sees it: injected next to the selected tools, never scored or
#: filtered itself. One definition for every place that sends it (the article's scenario,
#: conversation replays and their cost, the LangChain middleware).
DISCOVER_TOOL = Tool(
    "discover_tools",
    "Search the full tool registry when none of the tools you can see fits the task. The best "
    "match is returned and stays available for the rest of the conversation.",
    parameters={"type": "object",
                "properties": {"query": {"type": "string",
                                         "description": "A few words describing the tool "
                                                        "you need."}},
                "required": ["query"]})


def jaccard(tool: Tool, query_tokens: set[str]) -> float:
    """The article's scorer: Jaccard overlap of query tokens and ``"{name} {description}"`` tokens.

    0 when either token set is empty.
    """
    tool_tokens = token_set(f"{tool.name} {tool.description}")
    if not query_tokens or not tool_tokens:
        return 0.0
    return len(query_tokens & tool_tokens) / len(query_tokens | tool_tokens)


def select_tools(tools: Sequence[Tool], query: str, *, top_k: int,
                 always_include: Iterable[str] = frozenset(),
                 pinned: Iterable[str] = frozenset(),
                 scorer: ScorerHook = jaccard) -> list[str]:
    """Names of the tools to send for ``query``, in registry order.

    The always-include and pinned names, plus the ``top_k`` best-scoring of the remaining
    tools (ties keep registry order). A registry of ``top_k`` tools or fewer is returned whole.
    Names in ``always_include`` or ``pinned`` that are not in ``tools`` are ignored.
    """
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    tools = list(tools)
    if len(tools) <= top_k:
        return [t.name for t in tools]
    keep = set(always_include) | set(pinned)
    q = token_set(query)
    candidates = [(i, t) for i, t in enumerate(tools) if t.name not in keep]
    # sorted() is stable: equal scores keep registry order
    ranked = sorted(candidates, key=lambda it: -scorer(it[1], set(q)))
    chosen = {i for i, _ in ranked[:top_k]}
    return [t.name for i, t in enumerate(tools) if i in chosen or t.name in keep]


def discover(tools: Sequence[Tool], query: str, *, scorer: ScorerHook = jaccard) -> Tool | None:
    """The single best tool for ``query`` over the full registry, or ``None`` if nothing scores above 0.

    Ties go to the earlier tool.
    """
    q = token_set(query)
    best, best_score = None, 0.0
    for tool in tools:
        s = scorer(tool, set(q))
        if s > best_score:
            best, best_score = tool, s
    return best


def fitted_scorer(scorer: str | Scorer | ScorerHook, tools: Sequence[Tool],
                  **params: Any) -> Scorer:
    """A scorer fitted on ``tools``, never by modifying the caller's object.

    A name (with ``params``) or a hook gives a new scorer, fitted here. A
    :class:`~toolsel.scorers.base.Scorer` already fitted on exactly ``tools`` (same names,
    texts, parameters and order: :meth:`~toolsel.scorers.base.Scorer.is_fitted_for`) is
    returned as it is, so several selectors over one registry can share one index; any other
    scorer object is cloned and the clone is fitted (scikit-learn's discipline: the caller's
    object stays as it was, and can never answer from another registry's index).
    """
    sc = get_scorer(scorer, **params)
    if sc is scorer:  # the caller's own object
        if sc.is_fitted_for(tools):
            return sc
        sc = sc.clone()
    sc.fit(tools)
    if sc.n_tools_ != len(tools) or list(sc.tool_names_) != [t.name for t in tools]:
        raise RuntimeError(f"{type(sc).__name__}.fit did not index the {len(tools)} tools given")
    return sc


class Selector:
    """A scorer fitted once on a registry, answering selections and discovery searches.

    Parameters
    ----------
    tools : Registry or sequence of Tool
        The full registry, in the order that breaks ties.
    scorer : str, Scorer or callable
        A scorer name (``"default"``, ``"jaccard"``, ``"bm25"``, ``"tfidf"``,
        ``"embedding"``, ...), a :class:`~toolsel.scorers.base.Scorer`, or the article's
        per-tool hook ``(tool, query_tokens) -> float``. A scorer object is never modified:
        one already fitted on exactly these tools is used as it is, anything else is cloned
        and the clone fitted (:func:`fitted_scorer`). The
        default, ``"default"``, fuses BM25 and embedding evidence per clause of the request
        (:class:`~toolsel.scorers.fusion.DefaultScorer`); it held up on every registry style
        measured (README, "Which scorer?").
    top_k : int
        How many filtered tools to send besides always-include and pinned ones.
    always_include : iterable of str, optional
        Names always sent, outside the filter and outside ``top_k``. ``None`` (the default)
        takes the tools the registry marks ``always_include``; pass ``()`` for none.
    policy : str or Policy, optional
        How many filtered tools to send per query, instead of a fixed ``top_k``: a
        :class:`~toolsel.policies.Policy` (``Threshold(0.6)``, ``AdaptiveK(1, 10)``,
        ``TokenBudget(2000)``, ``TwoStage(2, k=8)``...) or its name. Fitted here as a clone
        (the caller's object is never modified). ``None`` (the default) sends the fixed
        ``top_k``; an explicit ``select(..., top_k=n)`` always sends the fixed ``n``.
    examples : sequence of Query, optional
        Labeled requests to learn from: the selector scores with a
        :class:`~toolsel.learn.LearnedScorer` fit on them on top of ``scorer`` (tools with no
        labeled request keep ``scorer``'s scores exactly; see ``docs/learning.md``).
    model : path, optional
        A model file written by ``toolsel fit``: the selector scores with it, fit on this
        registry (its blind scorer is the file's; ``scorer`` must be left out or name the
        same one). A tool whose text changed since the fit keeps its blind score, with a
        warning.
    **scorer_params
        Passed to the scorer's constructor when ``scorer`` is a name, checked by name: a
        misspelt one (``topk=5``) is a :class:`TypeError` suggesting ``top_k``.

    :meth:`select` (also :meth:`select_names`) returns the names to send, as
    :func:`select_tools` does; :meth:`select_definitions` returns the :class:`Tool` objects.

    Building a selector runs no evaluation. A single scorer (``"bm25"``, ``"embedding"``...)
    can fall far below ``"default"`` on some registries; with labeled requests of yours,
    ``toolsel.eval.scorer_warning.scorer_warning(selector, queries)`` checks the selector's
    scorer against ``"default"`` on them (one sweep of the two scorers) and issues a
    :class:`UserWarning` naming the gap when it is far below (the rule is in that module).
    """

    #: Selector's own keyword parameters (suggested when a scorer parameter is misspelt).
    _OWN_PARAMS = ("top_k", "always_include", "policy", "examples", "model")

    def __init__(self, tools: Sequence[Tool], scorer: str | Scorer | ScorerHook = "default", *,
                 top_k: int = 10, always_include: Iterable[str] | None = None,
                 policy: str | Any | None = None, examples: Sequence[Any] | None = None,
                 model: Any = None, **scorer_params: Any):
        if scorer_params and isinstance(scorer, str):
            check_params(scorer_class(scorer), scorer_params, also=self._OWN_PARAMS,
                         where="Selector")
        self.registry = tools if isinstance(tools, Registry) else Registry(tools)
        if not len(self.registry):
            raise ValueError("Selector needs at least one tool")
        if not isinstance(top_k, (int, np.integer)) or top_k < 0:
            raise ValueError(f"top_k must be a non-negative integer, got {top_k!r}")
        self.top_k = int(top_k)
        if always_include is None:
            always_include = [t.name for t in self.registry if t.always_include]
        if isinstance(always_include, str):
            always_include = [always_include]
        self.always_include = self.registry.check_names(always_include, what="always_include")
        if examples is not None and model is not None:
            raise ValueError("Selector takes examples= (labeled requests to learn from) or "
                             "model= (a model file), not both")
        if model is not None:
            from .learn.artifact import load_model
            self.scorer = load_model(model, self.registry)
            if scorer != "default" and scorer != self.scorer.base_name_:
                raise ValueError(f"the model file {model} learned on top of scorer "
                                 f"{self.scorer.base_name_!r}, not {scorer!r}; leave scorer out")
        elif examples is not None:
            from .learn.model import LearnedScorer
            base = fitted_scorer(scorer, self.registry, **scorer_params)
            self.scorer = LearnedScorer(base=base).fit(self.registry, examples)
        else:
            self.scorer = fitted_scorer(scorer, self.registry, **scorer_params)
        if policy is not None:
            from .policies import get_policy
            policy = get_policy(policy).clone().fit(self.registry)
        self.policy = policy
        self._always_mask = self._mask(self.always_include)
        # built once: Registry.names makes a new list per call, which costs more than
        # scoring a 10,000-tool registry
        self._names = tuple(self.registry.names)

    # -- helpers ------------------------------------------------------------------------------
    def _mask(self, names: Iterable[str]) -> np.ndarray:
        mask = np.zeros(len(self.registry), dtype=bool)
        for name in names:
            mask[self.registry.index(name)] = True
        return mask

    def _check_pinned(self, pinned: Iterable[str]) -> frozenset[str]:
        if isinstance(pinned, str):
            pinned = [pinned]
        pinned = frozenset(pinned)
        for name in pinned:
            if name not in self.registry:
                raise KeyError(f"pinned tool {name!r} is not in the registry"
                               f"{suggest_names(name, self.registry.names)}")
        return pinned

    @property
    def tools(self) -> Registry:
        return self.registry

    def scores(self, query: str) -> np.ndarray:
        """Score of every tool for ``query``, in registry order."""
        return self.scorer.score(query)

    # -- the pattern --------------------------------------------------------------------------
    def select(self, query: str, pinned: Iterable[str] = frozenset(), *,
               top_k: int | None = None) -> list[str]:
        """Names to send, in registry order: always-include, pinned, and the top-k of the rest.

        Same result as :func:`select_tools` with this selector's scorer. With a ``policy``
        (and no ``top_k`` given here) the policy decides how many of the rest to send.
        """
        use_policy = self.policy is not None and top_k is None
        k = self.top_k if top_k is None else top_k
        n = len(self.registry)
        if n <= k and not use_policy:
            return list(self._names)
        keep = self._always_mask.copy()
        pinned = self._check_pinned(pinned)
        if pinned:
            keep |= self._mask(pinned)
        if use_policy:
            chosen = self.policy.select(self.scores(query), ~keep)
        else:
            chosen = top_k_indices(self.scores(query), k, ~keep)
        mask = keep
        mask[chosen] = True
        names = self._names
        return [names[i] for i in np.flatnonzero(mask)]

    def select_names(self, query: str, pinned: Iterable[str] = frozenset(), *,
                     top_k: int | None = None) -> list[str]:
        """The names to send: :meth:`select` under a name that says what it returns."""
        return self.select(query, pinned, top_k=top_k)

    def select_definitions(self, query: str, pinned: Iterable[str] = frozenset(), *,
                           top_k: int | None = None) -> list[Tool]:
        """Like :meth:`select`, returning the :class:`Tool` objects (the definitions sent)."""
        return [self.registry[self.registry.index(n)] for n in self.select(query, pinned,
                                                                           top_k=top_k)]

    def rank(self, query: str, limit: int | None = None) -> list[tuple[Tool, float]]:
        """``(tool, score)`` pairs from best to worst over the whole registry."""
        scores = self.scores(query)
        order = rank_order(scores)
        if limit is not None:
            order = order[:limit]
        return [(self.registry[int(i)], float(scores[i])) for i in order]

    def search(self, query: str, limit: int = 5) -> list[Tool]:
        """Up to ``limit`` matching tools, best first: a ``discover`` call with a result limit.

        Which tools match at all is the scorer's no-match rule
        (:meth:`~toolsel.scorers.base.Scorer.score_and_match`); ties keep registry order.
        """
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        if not isinstance(query, str):
            raise TypeError(f"query is a {type(query).__name__}, expected str")
        scores, matches = self.scorer.score_and_match([query])
        return [self.registry[int(i)] for i in best_matches(scores[0], matches[0], limit)]

    def discover(self, query: str) -> Tool | None:
        """The best tool over the full registry, or ``None`` when no tool matches the query."""
        hits = self.search(query, limit=1)
        return hits[0] if hits else None

    def session(self, pinned: Iterable[str] = ()) -> Session:
        """A new conversation with its own pins."""
        return Session(self, pinned)

    def __repr__(self) -> str:
        policy = "" if self.policy is None else f", policy={self.policy!r}"
        return (f"Selector({self.registry!r}, scorer={self.scorer!r}, top_k={self.top_k}"
                f"{policy}, always_include={sorted(self.always_include)})")


class Session:
    """One conversation: selections include this conversation's pins; ``discover`` adds to them.

    Pins live on the session only, so two conversations never see each other's. Methods are
    safe to call from several threads.
    """

    def __init__(self, selector: Selector, pinned: Iterable[str] = ()):
        self.selector = selector
        self._lock = threading.Lock()
        self._pinned: list[str] = []
        for name in [pinned] if isinstance(pinned, str) else pinned:
            self.pin(name)

    @property
    def pinned(self) -> list[str]:
        """Pinned names, in the order they were pinned."""
        with self._lock:
            return list(self._pinned)

    def pin(self, name: str) -> None:
        """Keep ``name`` visible for the rest of this conversation."""
        self.selector._check_pinned([name])
        with self._lock:
            if name not in self._pinned:
                self._pinned.append(name)

    def select(self, query: str, *, top_k: int | None = None) -> list[str]:
        """What to send for this turn: the selector's choice with this session's pins."""
        return self.selector.select(query, self.pinned, top_k=top_k)

    def discover(self, query: str) -> Tool | None:
        """Search the full registry; pin and return the best tool, or ``None`` for no match."""
        hit = self.selector.discover(query)
        if hit is not None:
            self.pin(hit.name)
        return hit

    def __repr__(self) -> str:
        return f"Session(pinned={self.pinned})"

