"""TF-IDF cosine similarity, with scikit-learn's ``TfidfVectorizer``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import LexicalScorer, register_scorer

__all__ = ["TfidfScorer"]


@register_scorer("tfidf")
class TfidfScorer(LexicalScorer):
    """Cosine between L2-normalised TF-IDF vectors of the query and of each tool.

    Parameters
    ----------
    sublinear_tf : bool
        Use ``1 + log(tf)``; passed to scikit-learn.
    ngram_range : tuple of int
        Word n-grams to index; ``(1, 2)`` adds bigrams.
    fields, tokenizer
        See :class:`~toolsel.scorers.base.LexicalScorer`.
    """

    def __init__(self, *, sublinear_tf: bool = True, ngram_range: tuple[int, int] = (1, 1),
                 fields: Sequence[str] | None = None, tokenizer: str | None = None):
        super().__init__(fields=fields, tokenizer=tokenizer)
        self.sublinear_tf = sublinear_tf
        self.ngram_range = ngram_range

    def _analyzer(self):
        lo, hi = self.ngram_range
        tokens = self._tokens

        def analyze(text: str) -> list[str]:
            toks = tokens(text)
            if hi == 1:
                return toks
            return [" ".join(toks[i:i + n]) for n in range(lo, hi + 1)
                    for i in range(len(toks) - n + 1)]
        return analyze

    def _fit(self, tools) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer
        self.vectorizer_ = TfidfVectorizer(analyzer=self._analyzer(),
                                           sublinear_tf=self.sublinear_tf, norm="l2",
                                           dtype=np.float64)
        try:
            x = self.vectorizer_.fit_transform(self.texts_)
        except ValueError:  # every tool text is empty of tokens
            self.vectorizer_ = None
            x = None
        self.matrix_ = None if x is None else x.T.tocsr()  # term × tool

    def _score_many(self, queries: list[str]) -> np.ndarray:
        if self.vectorizer_ is None:
            return np.zeros((len(queries), self.n_tools_))
        q = self.vectorizer_.transform(queries)
        return (q @ self.matrix_).toarray()
