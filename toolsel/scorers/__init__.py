"""Scorers: one protocol (:class:`Scorer`), one module per family, selectable by name."""

from .base import (HookScorer, LexicalScorer, NotFittedError, Scorer, available_scorers, get_scorer,
                   register_scorer)
from .bm25 import Bm25Scorer
from .embedding import EmbeddingScorer
from .fusion import DefaultScorer, FusionScorer
from .jaccard import JaccardScorer
from .tfidf import TfidfScorer

__all__ = ["Scorer", "LexicalScorer", "NotFittedError", "available_scorers", "get_scorer",
           "register_scorer", "JaccardScorer", "Bm25Scorer", "TfidfScorer", "EmbeddingScorer",
           "HookScorer", "FusionScorer", "DefaultScorer"]
