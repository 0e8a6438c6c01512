"""The article's scorer: Jaccard overlap between query and tool token sets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import numpy as np

from .base import LexicalScorer, register_scorer

__all__ = ["JaccardScorer"]


@register_scorer("jaccard", compare=10)
class JaccardScorer(LexicalScorer):
    """``|Q ∩ T| / |Q ∪ T|`` over token sets; 0 when either set is empty.

    With the defaults (fields ``name`` + ``description``, the article's tokenizer) it scores
    exactly as the article's ``"{name} {description}"`` Jaccard, to the last bit. The index is a
    binary tool × term matrix; a query costs one sparse product.
    """

    default_fields: ClassVar[tuple[str, ...]] = ("name", "description")
    default_tokenizer: ClassVar[str] = "article"

    def __init__(self, *, fields: Sequence[str] | None = None, tokenizer: str | None = None,
                 stop_words: str | None = None, stem: str | None = None):
        super().__init__(fields=fields, tokenizer=tokenizer, stop_words=stop_words, stem=stem)

    def _fit(self, tools) -> None:
        docs = [set(self._tokens(text)) for text in self.texts_]
        self.vocabulary_, counts = self._build_vocab([list(d) for d in docs])
        self.matrix_ = counts.T.tocsr()  # term × tool, binary
        self.set_sizes_ = np.asarray([len(d) for d in docs], dtype=np.float64)

    def _score_one(self, query: str) -> np.ndarray:
        terms, q_size = self._query_terms(query, binary=True)
        inter = self._accumulate(terms, self.matrix_)
        union = q_size + self.set_sizes_ - inter
        out = np.zeros_like(inter)
        np.divide(inter, union, out=out, where=union > 0)
        return out

    def _score_many(self, queries: list[str]) -> np.ndarray:
        q, q_sizes = self._query_matrix(queries, binary=True)
        inter = (q @ self.matrix_).toarray()
        union = q_sizes[:, None] + self.set_sizes_[None, :] - inter
        out = np.zeros_like(inter)
        np.divide(inter, union, out=out, where=union > 0)
        return out
