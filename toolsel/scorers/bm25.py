"""Okapi BM25, scoring exactly as rank-bm25's ``BM25Okapi`` (its idf floor included)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from ..text import STEM_MARK
from .base import LexicalScorer, register_scorer

__all__ = ["Bm25Scorer", "Bm25OkapiScorer"]


@register_scorer("bm25", compare=20)
class Bm25Scorer(LexicalScorer):
    """BM25 over the tool fields.

    Defaults (chosen on the dev splits of six sets by ``benchmarks/tune_tokenization.py``,
    table ``reports/benchmarks/tokenization.csv``): identifiers not split beyond the
    ``name_words`` field (``tokenizer="article"``), stop words dropped from requests and tool
    texts, Snowball stemming, Lucene's idf. ``Bm25Scorer(tokenizer="words", stop_words=None,
    stem=None, idf="okapi")`` is the parity mode: it scores exactly as
    ``rank_bm25.BM25Okapi`` on the same tokens (the tokenization before this choice).
    ``backoff=True`` (stop words score a request whose content words match no tool) was
    evaluated the same way and not chosen (``reports/benchmarks/tokenization_dev_ranking.csv``).

    Parameters
    ----------
    k1, b : float
        Term-frequency saturation and length normalisation (rank-bm25's defaults).
    epsilon : float
        Terms in more than half the tools get a negative idf; as in rank-bm25 it is replaced
        by ``epsilon`` times the mean idf (``idf="okapi"`` only).
    idf : {"okapi", "lucene"}
        ``"okapi"``: rank-bm25's ``log((N - df + 0.5) / (df + 0.5))`` with the floor above
        (parity with ``rank_bm25.BM25Okapi``); ``"lucene"``: ``log(1 + (N - df + 0.5) /
        (df + 0.5))``, never negative, so a term in most tools weighs little instead of
        ``epsilon`` times the mean (Lucene's and bm25s's idf).
    stem_weight : float
        With ``stem="snowball+exact"``, the weight of a stem term's BM25 score against a
        word's (1: a word spelled as in the tool counts twice as much as a shared stem;
        0.5: three times); ignored otherwise.
    fields, tokenizer, stop_words, stem, backoff
        See :class:`~toolsel.scorers.base.LexicalScorer`.

    Notes
    -----
    Fitting precomputes every tool's per-term BM25 weight into a sparse term × tool matrix,
    so a query (repeated terms counted, as rank-bm25 does) is one sparse product.
    """

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 idf: str = "lucene", fields: Sequence[str] | None = None,
                 tokenizer: str | None = "article", stop_words: str | None = "both",
                 stem: str | None = "snowball", backoff: bool = False,
                 stem_weight: float = 1.0):
        super().__init__(fields=fields, tokenizer=tokenizer, stop_words=stop_words, stem=stem,
                         backoff=backoff)
        self.stem_weight = stem_weight
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self.idf = idf

    def _fit(self, tools) -> None:
        if self.idf not in ("okapi", "lucene"):
            raise ValueError(f"{type(self).__name__}: idf must be 'okapi' or 'lucene', got "
                             f"{self.idf!r}")
        if isinstance(self.stem_weight, bool) or not isinstance(self.stem_weight, (int, float)) \
                or not 0 < self.stem_weight <= 1:
            raise ValueError(f"{type(self).__name__}: stem_weight must be a number in (0, 1], "
                             f"got {self.stem_weight!r}")
        docs = [self._tokens(text) for text in self.texts_]
        self.vocabulary_, self.idf_, self.avgdl_, self.matrix_ = self._index(docs)
        self.backoff_vocabulary_ = self.backoff_matrix_ = None
        if self.backoff_ and self.tokenizer_.stop_words == "query":
            # tool texts keep their stop words: the content index is the stop-words-kept one
            self.backoff_vocabulary_, self.backoff_matrix_ = self.vocabulary_, self.matrix_
        elif self.backoff_:
            full = self.tokenizer_.keeping_stop_words()
            vocab, _, _, matrix = self._index([full.document(t) for t in self.texts_])
            self.backoff_vocabulary_, self.backoff_matrix_ = self._backoff_index(vocab, matrix)

    def _index(self, docs: list[list[str]]):
        """Vocabulary, idf, mean length and the term × tool BM25 weights of ``docs``."""
        vocabulary, tf = self._build_vocab(docs)
        n = len(docs)
        doc_len = np.asarray([len(d) for d in docs], dtype=np.float64)
        avgdl = doc_len.mean()
        df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        # rank-bm25's idf, computed the same way (math.log per term) for bit-level parity
        if self.idf == "lucene":
            idf = np.log1p((n - df + 0.5) / (df + 0.5))
        else:
            idf = np.asarray([math.log(n - f + 0.5) - math.log(f + 0.5) for f in df])
        if self.idf == "okapi" and len(vocabulary):
            eps = self.epsilon * (idf.sum() / len(idf))
            idf[idf < 0] = eps
        norm = self.k1 * (1 - self.b + self.b * doc_len / avgdl) if avgdl > 0 else \
            np.full(n, self.k1)
        w = tf.copy()
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        f = tf.data
        w.data = idf[tf.indices] * (f * (self.k1 + 1) / (f + norm[rows]))
        if self.tokenizer_.stem == "snowball+exact" and self.stem_weight != 1:
            stem = np.asarray([t.startswith(STEM_MARK) for t in vocabulary], dtype=bool)
            w.data[stem[w.indices]] *= self.stem_weight
        return vocabulary, idf, avgdl, w.T.tocsr()  # term × tool

    def _backed_off(self, query: str) -> np.ndarray:
        terms, _ = self._query_terms(query, binary=False, backoff=True)
        return self._accumulate(terms, self.backoff_matrix_)

    def _score_one(self, query: str) -> np.ndarray:
        terms, _ = self._query_terms(query, binary=False)
        if not terms and self.backoff_matrix_ is not None:
            return self._backed_off(query)
        return self._accumulate(terms, self.matrix_)

    def _score_many(self, queries: list[str]) -> np.ndarray:
        q, _ = self._query_matrix(queries, binary=False)
        out = (q @ self.matrix_).toarray()
        if self.backoff_matrix_ is not None:
            for i in np.flatnonzero(np.diff(q.indptr) == 0):  # no content term known
                out[i] = self._backed_off(queries[i])
        return out


@register_scorer("bm25-okapi")
class Bm25OkapiScorer(Bm25Scorer):
    """``bm25`` in its ``rank_bm25`` parity mode, by name: words tokens (identifiers split), no
    stop words, no stemming, rank-bm25's Okapi idf with its floor.

    The tokenization ``bm25`` had before ``benchmarks/tune_tokenization.py`` chose its
    defaults; what the bundled description repairs (``data/repairs``) were chosen with.
    """

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25,
                 idf: str = "okapi", fields: Sequence[str] | None = None,
                 tokenizer: str | None = "words", stop_words: str | None = None,
                 stem: str | None = None, backoff: bool = False, stem_weight: float = 1.0):
        super().__init__(k1=k1, b=b, epsilon=epsilon, idf=idf, fields=fields,
                         tokenizer=tokenizer, stop_words=stop_words, stem=stem,
                         backoff=backoff, stem_weight=stem_weight)
