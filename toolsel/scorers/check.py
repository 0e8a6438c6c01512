"""The scorer contract as one function a user can run on their own scorer (like scikit-learn's
``check_estimator``): :func:`check_scorer`.

A scorer registered with :func:`~toolsel.scorers.base.register_scorer` is used by
:class:`~toolsel.selection.Selector`, the sweep and every table exactly like the built-in ones,
so it must keep the same promises: the constructor only stores parameters, ``fit`` returns
``self`` and learns attributes ending in ``_``, an unfitted scorer refuses to score, one query
scores as in a batch, scores are finite and deterministic, a fitted scorer pickles, the
no-match rule returns a boolean mask, and ties keep registry order. The package's own contract
test runs this function over every registered scorer.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import numpy as np

from ..data import Tool
from ..ranking import top_k_indices
from .base import NotFittedError, Scorer, get_scorer

__all__ = ["check_scorer", "CHECK_TOOLS", "CHECK_QUERIES"]

#: A small registry for the checks: two tools whose every field reads the same (only their
#: order differs, for the tie rule), and a few unrelated ones.
CHECK_TOOLS: tuple[Tool, ...] = (
    Tool("send_message", "send a message to a channel"),
    Tool("weather_forecast", "look up the weather forecast for a city"),
    Tool("send-message", "send a message to a channel"),
    Tool("stock_price", "latest price of a stock ticker"),
    Tool("calculator", "evaluate an arithmetic expression"),
    Tool("translate_text", "translate text into another language",
         {"type": "object", "properties": {"target_language": {"type": "string"}}}),
)
#: Queries for the checks (the first matches the twins of :data:`CHECK_TOOLS`).
CHECK_QUERIES: tuple[str, ...] = (
    "send a message to the channel", "weather forecast for Paris tomorrow",
    "what is AAPL trading at", "compute 340 divided by 12", "translate hello to French",
)


def _require(ok: bool, scorer: Scorer, what: str) -> None:
    # not `assert`: the checks must run under `python -O` too
    if not ok:
        raise AssertionError(f"{type(scorer).__name__} breaks the scorer contract: {what}")


def _raises(exc: type[BaseException], fn) -> bool:
    try:
        fn()
    except exc:
        return True
    return False


def check_scorer(scorer: Scorer | str, tools: Sequence[Tool] | None = None,
                 queries: Sequence[str] | None = None) -> None:
    """Run the scorer contract on an unfitted ``scorer`` (an instance or a registered name).

    Raises :class:`AssertionError` naming the first promise broken; returns ``None`` when all
    hold. ``tools`` and ``queries`` (defaults :data:`CHECK_TOOLS`, :data:`CHECK_QUERIES`)
    are what it is fitted on and scored with; the tie check always uses :data:`CHECK_TOOLS`.
    ``scorer`` itself is never fitted: the checks work on clones.
    """
    scorer = get_scorer(scorer)
    tools = list(CHECK_TOOLS if tools is None else tools)
    texts = list(CHECK_QUERIES if queries is None else queries)
    if not tools or not texts:
        raise ValueError("check_scorer needs at least one tool and one query")
    _require(not scorer.is_fitted(), scorer, "check_scorer takes an unfitted scorer")

    # parameters: the constructor only stores them; clone copies them and nothing else
    params = scorer.get_params()
    _require(type(scorer)(**params).get_params() == params, scorer,
             "constructing from get_params() gives other parameters")
    sc = scorer.clone()
    _require(type(sc) is type(scorer) and sc is not scorer and sc.get_params() == params,
             scorer, "clone() is not a new scorer with the same parameters")
    _require(not sc.is_fitted(), scorer, "a clone is fitted")
    _require(_raises(NotFittedError, lambda: sc.score(texts[0])), scorer,
             "score() before fit() does not raise NotFittedError")
    _require(_raises(ValueError, lambda: sc.clone().fit([])), scorer,
             "fit([]) does not raise ValueError")

    # fitting
    _require(sc.fit(tools) is sc, scorer, "fit() does not return self")
    _require(sc.get_params() == params, scorer, "fit() changed a parameter")
    _require(sc.is_fitted_for(tools), scorer, "not is_fitted_for() the tools it was fitted on")
    if len(tools) > 1:
        _require(not sc.is_fitted_for(tools[::-1]), scorer,
                 "is_fitted_for() a registry in another order")
    _require(not sc.clone().is_fitted(), scorer, "a clone of a fitted scorer is fitted")

    # scoring
    many = sc.score_many(texts)
    _require(many.shape == (len(texts), len(tools)) and many.dtype == np.float64, scorer,
             f"score_many() returned {many.shape} {many.dtype}, expected "
             f"({len(texts)}, {len(tools)}) float64")
    _require(bool(np.isfinite(many).all()), scorer, "a score is not finite")
    for i, t in enumerate(texts):
        one = sc.score(t)
        _require(one.shape == (len(tools),) and np.allclose(one, many[i], rtol=1e-5, atol=1e-6),
                 scorer, f"score({t!r}) differs from its row of score_many()")
    _require(np.array_equal(sc.score_many(texts), many), scorer,
             "score_many() is not deterministic")
    _require(sc.score_many([]).shape == (0, len(tools)), scorer,
             "score_many([]) is not an empty (0, n_tools) array")
    _require(_raises(TypeError, lambda: sc.score_many("one string")), scorer,
             "score_many() accepts a single string")

    # pickling and the no-match rule
    again = pickle.loads(pickle.dumps(sc))
    _require(again.get_params() == params and again.is_fitted_for(tools), scorer,
             "a pickled scorer comes back with other parameters or unfitted")
    _require(np.allclose(again.score_many(texts), many, rtol=1e-6, atol=1e-7), scorer,
             "a pickled scorer scores differently")
    scores, matches = sc.score_and_match(texts)
    _require(matches.dtype == bool and matches.shape == scores.shape, scorer,
             "score_and_match() does not return a boolean mask of the scores' shape")
    _require(np.array_equal(scores, many), scorer,
             "score_and_match() scores differ from score_many()")

    # ties: two tools that read the same score the same, and the selection's top-1 (the
    # ranking Selector uses) keeps the earlier one
    s = scorer.clone().fit(CHECK_TOOLS).score(CHECK_QUERIES[0])
    _require(s[0] == s[2], scorer, "two identical tools score differently")
    _require(top_k_indices(s, 1).tolist() == [0], scorer,
             "a tie does not go to the tool earlier in the registry")
