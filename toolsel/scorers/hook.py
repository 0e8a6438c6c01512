"""Adapter for the article's per-tool scorer hook ``(tool, query_tokens) -> float``."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..data import Tool
from ..text import token_set
from .base import Scorer

__all__ = ["HookScorer"]


class HookScorer(Scorer):
    """Call ``fn(tool, query_tokens)`` for every tool; ``query_tokens`` is the query's token set.

    This is the article's extension point; it loops in Python, so it suits small registries
    and prototypes. For speed, write a :class:`~toolsel.scorers.base.Scorer`.
    """

    name = "hook"

    def __init__(self, fn: Callable[[Tool, set[str]], float]):
        super().__init__()
        self.fn = fn

    @classmethod
    def _param_names(cls) -> list[str]:
        return ["fn"]

    def _fit(self, tools) -> None:
        self.tools_ = list(tools)

    def _score_many(self, queries: list[str]) -> np.ndarray:
        out = np.empty((len(queries), self.n_tools_))
        for i, q in enumerate(queries):
            tokens = token_set(q)
            for j, tool in enumerate(self.tools_):
                out[i, j] = float(self.fn(tool, set(tokens)))
        return out
