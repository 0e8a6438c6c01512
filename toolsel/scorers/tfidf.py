"""TF-IDF cosine similarity, with scikit-learn's ``TfidfVectorizer``."""

from __future__ import annotations

import functools

import math
from collections.abc import Sequence

import numpy as np

from .base import LexicalScorer, register_scorer

__all__ = ["TfidfScorer"]


@register_scorer("tfidf", compare=30)
class TfidfScorer(LexicalScorer):
    """Cosine between L2-normalised TF-IDF vectors of the query and of each tool.

    Tokenization defaults (chosen on the dev splits of six sets by
    ``benchmarks/tune_tokenization.py``, table ``reports/benchmarks/tokenization.csv``):
    identifiers not split beyond the ``name_words`` field, stop words dropped from requests,
    Snowball stemming. ``tokenizer="words", stop_words=None, stem=None`` is the tokenization
    before that choice (scikit-learn's ``TfidfVectorizer`` over :func:`~toolsel.text.split_identifier`).
    ``backoff=True`` was evaluated the same way and not chosen
    (``reports/benchmarks/tokenization_dev_ranking.csv``).

    Parameters
    ----------
    sublinear_tf : bool
        Use ``1 + log(tf)``; passed to scikit-learn.
    ngram_range : tuple of int
        Word n-grams to index; ``(1, 2)`` adds bigrams.
    fields, tokenizer, stop_words, stem, backoff
        See :class:`~toolsel.scorers.base.LexicalScorer`.
    """

    def __init__(self, *, sublinear_tf: bool = True, ngram_range: tuple[int, int] = (1, 1),
                 fields: Sequence[str] | None = None, tokenizer: str | None = "article",
                 stop_words: str | None = "query", stem: str | None = "snowball",
                 backoff: bool = False):
        super().__init__(fields=fields, tokenizer=tokenizer, stop_words=stop_words, stem=stem,
                         backoff=backoff)
        self.sublinear_tf = sublinear_tf
        self.ngram_range = ngram_range

    def _analyzer(self, query: bool = False, tokens=None):
        # a partial of a module-level function, not a closure, so a fitted scorer pickles
        lo, hi = self.ngram_range
        if tokens is None:
            tokens = self._query_tokens if query else self._tokens
        return functools.partial(_ngrams, tokens=tokens, lo=lo, hi=hi)

    def _fit(self, tools) -> None:
        self.vectorizer_, x = self._vectorize(self._analyzer())
        self.matrix_ = None if x is None else x.T.tocsr()  # term × tool
        self.vocabulary_ = {} if x is None else self.vectorizer_.vocabulary_
        self.backoff_vocabulary_ = self.backoff_idf_ = self.backoff_matrix_ = None
        if not self.backoff_:
            return
        if self.tokenizer_.stop_words == "query":
            # tool texts keep their stop words: the content index is the stop-words-kept one
            if x is not None:
                self.backoff_vocabulary_, self.backoff_idf_, self.backoff_matrix_ = \
                    self.vocabulary_, self.vectorizer_.idf_, self.matrix_
            return
        full, x = self._vectorize(self._analyzer(
            tokens=self.tokenizer_.keeping_stop_words().document))
        if x is not None:
            self.backoff_vocabulary_, self.backoff_matrix_ = \
                self._backoff_index(full.vocabulary_, x.T.tocsr())
            self.backoff_idf_ = full.idf_[[full.vocabulary_[t]
                                           for t in self.backoff_vocabulary_]]

    def _vectorize(self, analyzer):
        from sklearn.feature_extraction.text import TfidfVectorizer
        vectorizer = TfidfVectorizer(analyzer=analyzer, sublinear_tf=self.sublinear_tf,
                                     norm="l2", dtype=np.float64)
        try:
            return vectorizer, vectorizer.fit_transform(self.texts_)
        except ValueError:  # every tool text is empty of tokens
            return None, None

    def _content_match(self, query: str) -> bool:
        # the analyzer _score_many reads the query with (as a tool text unless stop words
        # are dropped from requests only)
        vocab = self.vocabulary_
        analyzer = self._analyzer(query=self.tokenizer_.stop_words == "query")
        return any(t in vocab for t in analyzer(query))

    def _row(self, terms: list[str], vocab: dict[str, int], idf: np.ndarray,
             matrix) -> np.ndarray | None:
        # the query's TF-IDF row as scikit-learn's transform computes it (columns sorted,
        # log(tf) + 1, times idf, divided by the L2 norm summed in column order), without its
        # per-call validation overhead; tests check the values are identical. None when no
        # term is known.
        counts: dict[int, int] = {}
        for tok in terms:
            j = vocab.get(tok)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        if not counts:
            return None
        cols = np.asarray(sorted(counts), dtype=np.int64)
        vals = np.asarray([counts[j] for j in cols], dtype=np.float64)
        if self.sublinear_tf:
            np.log(vals, vals)
            vals += 1.0
        vals *= idf[cols]
        norm = 0.0
        for v in vals.tolist():
            norm += v * v
        vals /= math.sqrt(norm)
        return self._accumulate(dict(zip(cols.tolist(), vals.tolist())), matrix)

    def _backed_off(self, query: str) -> np.ndarray:
        if self.backoff_matrix_ is not None:
            terms = self._analyzer(tokens=self.tokenizer_.keeping_stop_words().query)(query)
            row = self._row(terms, self.backoff_vocabulary_, self.backoff_idf_,
                            self.backoff_matrix_)
            if row is not None:
                return row
        return np.zeros(self.n_tools_)

    def _score_one(self, query: str) -> np.ndarray:
        row = None
        if self.vectorizer_ is not None:
            row = self._row(self._analyzer(query=True)(query), self.vectorizer_.vocabulary_,
                            self.vectorizer_.idf_, self.matrix_)
        if row is None:
            return self._backed_off(query)
        return row

    def _score_many(self, queries: list[str]) -> np.ndarray:
        if self.vectorizer_ is None:
            return np.vstack([self._backed_off(q) for q in queries])
        if self.tokenizer_.stop_words == "query":
            q = self._query_tfidf(queries)
        else:  # queries are tokenized as tool texts are
            q = self.vectorizer_.transform(queries)
        out = (q @ self.matrix_).toarray()
        if self.backoff_matrix_ is not None:
            for i in np.flatnonzero(np.diff(q.indptr) == 0):  # no content term known
                out[i] = self._backed_off(queries[i])
        return out

    def _query_tfidf(self, queries: list[str]):
        # scikit-learn's transform (counts, 1 + log(tf), times idf, L2 norm) over the query
        # analyzer's terms, which drops stop words the tool texts keep
        from sklearn.feature_extraction.text import CountVectorizer
        counts = CountVectorizer(analyzer=self._analyzer(query=True),
                                 vocabulary=self.vectorizer_.vocabulary_,
                                 dtype=np.float64).transform(queries)
        if self.sublinear_tf:
            np.log(counts.data, counts.data)
            counts.data += 1.0
        counts = (counts @ _diag(self.vectorizer_.idf_)).tocsr()
        counts.sort_indices()
        # each row divided by its L2 norm summed in column order, as _score_one does
        for i in range(counts.shape[0]):
            row = counts.data[counts.indptr[i]:counts.indptr[i + 1]]
            norm = 0.0
            for v in row.tolist():
                norm += v * v
            if norm > 0:
                row /= math.sqrt(norm)
        return counts


def _ngrams(text: str, *, tokens, lo: int, hi: int) -> list[str]:
    toks = tokens(text)
    if hi == 1:
        return toks
    return [" ".join(toks[i:i + n]) for n in range(lo, hi + 1)
            for i in range(len(toks) - n + 1)]


def _diag(values: np.ndarray):
    from scipy import sparse
    return sparse.diags(values, offsets=0, format="csr")
