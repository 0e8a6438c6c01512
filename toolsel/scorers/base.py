"""The scorer protocol, shared by every scorer family, and the registry of scorer names.

A scorer follows the scikit-learn estimator pattern: the constructor only stores keyword
parameters; :meth:`Scorer.fit` learns an index from a registry into attributes ending in ``_``
and returns ``self``; :meth:`Scorer.score` scores one query against every tool and returns a
float array in registry order (higher is better); :meth:`Scorer.score_many` does the same for
many queries as one ``(n_queries, n_tools)`` array. Using an unfitted scorer raises
:class:`NotFittedError`.

Each scorer also owns its **no-match rule**: :meth:`Scorer.score_and_match` says, next to the
scores, which tools match the query at all. ``discover`` and every search return only
matching tools, so a request that shares nothing with any tool finds nothing instead of an
arbitrary tool. The base rule is "scores above zero" (term overlap for the lexical scorers,
the article's rule); the embedding and fusion scorers override it with a calibrated
similarity threshold.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from ..data import Tool, suggest_names
from ..text import SPLITTERS, Tokenizer, check_fields, token_set, tool_text

__all__ = ["Scorer", "LexicalScorer", "NotFittedError", "HookScorer", "register_scorer",
           "get_scorer", "available_scorers", "compared_scorers", "scorer_class", "scorer_summary",
           "check_params", "registry_fingerprint", "TOKENIZERS"]

_SCORERS: dict[str, type[Scorer]] = {}

#: Tokenizers a lexical scorer can use: the article's, or identifier-splitting.
TOKENIZERS: dict[str, Callable[[str], list[str]]] = dict(SPLITTERS)


class NotFittedError(RuntimeError):
    """A scorer was used before :meth:`Scorer.fit`."""


#: name → (place, fused) of the scorers every comparison runs unless told otherwise.
_COMPARED: dict[str, tuple[int, bool]] = {}


def register_scorer(name: str, *, compare: int | None = None, fused: bool = False):
    """Class decorator: make a scorer available by ``name`` to :func:`get_scorer`.

    ``compare``: the scorer's place among those every comparison runs by default (the sweep,
    the reports, labeling, the explorer: :func:`compared_scorers`); ``None`` for a scorer
    used only by name (a variant such as ``bm25-okapi``). ``fused``: it combines other
    scorers (left out of :func:`compared_scorers` ``(single=True)``). Adding a scorer is its
    module with this decorator, plus its tests; a built-in one is imported by
    ``toolsel/scorers/__init__.py``, which Python runs before any module of the package, so
    the table is full whatever module a caller imports (this module imports no family: no
    import circle).
    """
    def deco(cls: type[Scorer]) -> type[Scorer]:
        cls.name = name
        _SCORERS[name] = cls
        if compare is not None:
            _COMPARED[name] = (compare, fused)
        return cls
    return deco


def available_scorers() -> list[str]:
    """Names :func:`get_scorer` accepts."""
    return list(_SCORERS)


def compared_scorers(*, single: bool = False, lexical: bool = False) -> tuple[str, ...]:
    """The scorers every comparison runs unless told otherwise, in their registered order
    (``jaccard, bm25, tfidf, embedding, default``); ``single``: only those that are one
    scorer (not a fusion of others); ``lexical``: only term-matching ones
    (:class:`LexicalScorer`)."""
    return tuple(n for n, (_, fused) in sorted(_COMPARED.items(), key=lambda kv: kv[1][0])
                 if not (single and fused)
                 and not (lexical and not issubclass(_SCORERS[n], LexicalScorer)))


def scorer_class(name: str) -> type[Scorer]:
    """The scorer class registered as ``name``; a clear error naming the known ones."""
    try:
        return _SCORERS[name]
    except KeyError:
        raise ValueError(f"unknown scorer {name!r}; available: "
                         f"{', '.join(_SCORERS)}{suggest_names(name, list(_SCORERS))}") from None


def scorer_summary(name: str) -> str:
    """What the scorer registered as ``name`` is, in one paragraph (its docstring's first),
    as Markdown: for a report that names a scorer it must also define."""
    doc = inspect.getdoc(scorer_class(name)) or name
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "`")


def check_params(cls: type[Scorer], params: Iterable[str], *, also: Sequence[str] = (),
                 where: str | None = None) -> None:
    """Raise :class:`TypeError` for a name in ``params`` that ``cls``'s constructor does not take.

    The message names the scorer, the parameter, the closest names among the scorer's
    parameters and ``also`` (the caller's own keywords, e.g. ``Selector``'s ``top_k``), and
    every parameter the scorer takes.
    """
    known = cls._param_names()
    for name in params:
        if name not in known:
            label = f"scorer {cls.name!r} ({cls.__name__})" if cls.name != "base" \
                else cls.__name__
            head = f"{where}: " if where else ""
            also_text = f"{where or 'it'} takes {', '.join(also)}; " if also else ""
            raise TypeError(f"{head}{name!r} is not a parameter of {label}"
                            f"{suggest_names(name, [*also, *known])} ({also_text}the scorer takes "
                            f"{', '.join(known) or 'no parameters'})")


def get_scorer(scorer: str | Scorer | Callable[..., float], **params: Any) -> Scorer:
    """A new unfitted scorer from a name (``"bm25"``), or ``scorer`` itself if it is one.

    ``params`` go to the named scorer's constructor, checked by name first: a misspelt one
    (``topk``) is a :class:`TypeError` with a did-you-mean. A plain callable
    ``(tool, query_tokens) -> float`` (the article's hook) is wrapped in a
    :class:`HookScorer`.
    """
    if isinstance(scorer, Scorer):
        if params:
            raise TypeError("parameters go to get_scorer only with a scorer name")
        return scorer
    if isinstance(scorer, str):
        cls = scorer_class(scorer)
        check_params(cls, params)
        return cls(**params)
    if callable(scorer):
        check_params(HookScorer, params)
        return HookScorer(scorer, **params)
    raise TypeError(f"expected a scorer name, Scorer or callable, got {type(scorer).__name__}")


def registry_fingerprint(tools: Iterable[Tool]) -> str:
    """A digest of every tool's name, description and parameters, in order.

    Two registries with the same fingerprint index identically, so a scorer fitted on one can
    answer for the other; anything else (another order, one edited description) differs.
    """
    h = hashlib.blake2b(digest_size=16)
    for t in tools:
        h.update(json.dumps([t.name, t.description, t.parameters], sort_keys=True,
                            ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


class Scorer:
    """Base class: stores parameters, checks fitting, scores queries against every tool.

    Subclasses implement ``_fit(tools)`` and ``_score_many(queries) -> ndarray``.

    Parameters
    ----------
    fields : sequence of str
        Which parts of each tool to index (see :data:`toolsel.text.FIELDS`).
    """

    name: ClassVar[str] = "base"
    default_fields: ClassVar[tuple[str, ...]] = ("name_words", "description")
    #: fitted attributes that are rebuilt after unpickling instead of pickled (a model
    #: session, a lock); see :meth:`_restore`
    _transient: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, fields: Sequence[str] | None = None):
        self.fields = fields

    # -- parameters -------------------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values()
                if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters, as stored."""
        return {k: getattr(self, k) for k in self._param_names()}

    def clone(self) -> Scorer:
        """A new unfitted scorer with the same parameters."""
        return type(self)(**self.get_params())

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if v is not None)
        return f"{type(self).__name__}({params})"

    # -- fitting ----------------------------------------------------------------------------
    @property
    def fields_(self) -> tuple[str, ...]:
        return check_fields(self.default_fields if self.fields is None else self.fields)

    def fit(self, tools: Iterable[Tool]) -> Scorer:
        """Index ``tools`` (in registry order) and return ``self``."""
        tools = tuple(tools)
        if not tools:
            raise ValueError(f"{type(self).__name__}.fit: the registry has no tools")
        for i, t in enumerate(tools):
            if not isinstance(t, Tool):
                raise TypeError(f"{type(self).__name__}.fit: item {i} is a "
                                f"{type(t).__name__}, expected a Tool")
        fields = self.fields_
        self.fingerprint_ = registry_fingerprint(tools)
        self.tool_names_ = [t.name for t in tools]
        self.n_tools_ = len(tools)
        self.texts_ = [tool_text(t, fields) for t in tools]
        self._fit(tools)
        return self

    def _fit(self, tools: Sequence[Tool]) -> None:
        raise NotImplementedError

    # -- pickling: a fitted scorer travels to worker processes without its model session ---
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in self._transient:
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.is_fitted():
            self._restore()

    def _restore(self) -> None:
        """Rebuild :attr:`_transient` attributes after unpickling (default: nothing)."""

    def is_fitted(self) -> bool:
        return hasattr(self, "n_tools_")

    def is_fitted_for(self, tools: Iterable[Tool]) -> bool:
        """True when fitted on exactly ``tools``: same names, texts, parameters and order."""
        return self.is_fitted() and getattr(self, "fingerprint_", None) == \
            registry_fingerprint(tools)

    def _check_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError(f"{type(self).__name__} is not fitted: call fit(tools) first")

    # -- scoring ----------------------------------------------------------------------------
    def score(self, query: str) -> np.ndarray:
        """Scores of every tool for ``query``, shape ``(n_tools,)``, registry order."""
        self._check_fitted()
        if not isinstance(query, str):
            raise TypeError(f"query is a {type(query).__name__}, expected str")
        return np.asarray(self._score_one(query), dtype=np.float64)

    def _score_one(self, query: str) -> np.ndarray:
        # subclasses with a faster single-query path override this; it must give the same
        # values as _score_many (the selection of a query and its sweep rank must agree)
        return self._score_many([query])[0]

    def score_many(self, queries: Sequence[str]) -> np.ndarray:
        """Scores of every tool for each query, shape ``(n_queries, n_tools)``."""
        queries = self._checked_queries(queries)
        if not queries:
            return np.zeros((0, self.n_tools_))
        return np.asarray(self._score_many(queries), dtype=np.float64)

    def _checked_queries(self, queries: Sequence[str]) -> list[str]:
        self._check_fitted()
        if isinstance(queries, str):
            raise TypeError("score_many takes a sequence of queries; use score() for one")
        queries = list(queries)
        for i, q in enumerate(queries):
            if not isinstance(q, str):
                raise TypeError(f"query {i} is a {type(q).__name__}, expected str")
        return queries

    def _score_many(self, queries: list[str]) -> np.ndarray:
        raise NotImplementedError

    # -- the no-match rule ------------------------------------------------------------------
    def score_and_match(self, queries: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Scores of every tool for each query, and which tools match at all.

        Returns ``(scores, matches)``, both ``(n_queries, n_tools)``; ``matches`` is boolean.
        A search returns only matching tools; ``discover`` returns ``None`` when none match.
        """
        queries = self._checked_queries(queries)
        if not queries:
            return np.zeros((0, self.n_tools_)), np.zeros((0, self.n_tools_), dtype=bool)
        scores, matches = self._score_and_match_many(queries)
        scores = np.asarray(scores, dtype=np.float64)
        matches = np.asarray(matches, dtype=bool)
        if matches.shape != scores.shape:
            raise ValueError(f"{type(self).__name__}._match_many returned shape "
                             f"{matches.shape}, expected {scores.shape}")
        return scores, matches & ~np.isnan(scores)

    def matches(self, queries: Sequence[str]) -> np.ndarray:
        """Boolean ``(n_queries, n_tools)``: the tools each query matches at all."""
        return self.score_and_match(queries)[1]

    def match_scores(self, queries: Sequence[str], scores: np.ndarray) -> np.ndarray:
        """This scorer's no-match rule applied to ``scores`` it gave ``queries``: boolean
        ``(n_queries, n_tools)`` (what :meth:`score_and_match` returns beside the scores; a
        scorer that combines others, such as fusion, asks each this)."""
        queries = self._checked_queries(queries)
        return np.asarray(self._match_many(queries, np.asarray(scores, dtype=np.float64)),
                          dtype=bool)

    def _score_and_match_many(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
        # a scorer whose rule needs what scoring computed anyway overrides this, not both
        scores = np.asarray(self._score_many(queries), dtype=np.float64)
        return scores, self._match_many(queries, scores)

    def _match_many(self, queries: list[str], scores: np.ndarray) -> np.ndarray:
        # the article's rule: a tool matches when it scores above zero
        return scores > 0


class HookScorer(Scorer):
    """Call ``fn(tool, query_tokens)`` for every tool; ``query_tokens`` is the query's token set.

    This is the article's extension point; it loops in Python, so it suits small registries
    and prototypes. For speed, write a :class:`Scorer`.
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


class LexicalScorer(Scorer):
    """Base of the term-matching scorers: a tokenizer and a sparse term index.

    Parameters
    ----------
    fields : sequence of str
        Tool fields to index.
    tokenizer : {"words", "article"}
        Name splitting: ``"article"``: lowercase ``[a-z0-9]+`` runs; ``"words"``: the same
        after splitting snake_case/camelCase identifiers and letter-digit boundaries.
    stop_words : {"query", "both", None}
        Drop :data:`~toolsel.text.LEXICAL_STOP_WORDS` from the query, from query and tool
        texts, or nowhere.
    stem : {"snowball", "snowball+exact", None}
        Snowball English stemming of query and tool terms (PyStemmer); with ``"+exact"``
        each word is kept as written beside its stem; or none.
    backoff : bool
        Taken by ``bm25`` and ``tfidf``. When stop words are dropped and none of a request's
        content terms occurs in any tool, score the request as the same scorer with
        ``stop_words=None`` would (its stop words against tool texts that keep theirs),
        instead of giving every tool 0 and leaving the order to the registry: what search
        engines do with a query made only of common words. It orders tools only: such a
        request still matches no tool (:meth:`~Scorer.score_and_match`), so ``discover``
        finds nothing for it, as without the backoff.

    The tokenization parameters make one :class:`~toolsel.text.Tokenizer`, built and checked
    by :meth:`fit` (``tokenizer_``); a bad value is a ``ValueError`` naming the scorer and the
    parameter. ``stop_words=None, stem=None`` reproduce the tokenization these scorers had
    before the options existed (the ``rank_bm25`` parity mode of ``bm25``).
    """

    default_tokenizer: ClassVar[str] = "words"

    def __init__(self, *, fields: Sequence[str] | None = None, tokenizer: str | None = None,
                 stop_words: str | None = None, stem: str | None = None,
                 backoff: bool = False):
        super().__init__(fields=fields)
        self.tokenizer = tokenizer
        self.stop_words = stop_words
        self.stem = stem
        self.backoff = backoff

    def make_tokenizer(self) -> Tokenizer:
        """The :class:`~toolsel.text.Tokenizer` these parameters describe (checked)."""
        split = self.default_tokenizer if self.tokenizer is None else self.tokenizer
        try:
            return Tokenizer(split=split, stop_words=self.stop_words, stem=self.stem)
        except ValueError as exc:
            raise ValueError(f"{type(self).__name__}: {exc}") from None

    def fit(self, tools) -> Scorer:
        self.tokenizer_ = self.make_tokenizer()
        if self.backoff not in (True, False):
            raise ValueError(f"{type(self).__name__}: backoff must be True or False, got "
                             f"{self.backoff!r}")
        # without stop words dropped, the content terms are every term: nothing to back off to
        self.backoff_ = bool(self.backoff) and self.tokenizer_.stop_words is not None
        return super().fit(tools)

    def _tokens(self, text: str) -> list[str]:
        """Terms of a tool text."""
        return self.tokenizer_.document(text)

    def _query_tokens(self, text: str) -> list[str]:
        """Terms of a query."""
        return self.tokenizer_.query(text)

    def _build_vocab(self, docs: list[list[str]]):
        """Vocabulary (term → column, first-seen order) and a CSR count matrix."""
        from scipy import sparse
        vocab: dict[str, int] = {}
        indptr = [0]
        indices: list[int] = []
        data: list[int] = []
        for doc in docs:
            counts: dict[int, int] = {}
            for tok in doc:
                j = vocab.setdefault(tok, len(vocab))
                counts[j] = counts.get(j, 0) + 1
            indices.extend(counts)
            data.extend(counts.values())
            indptr.append(len(indices))
        matrix = sparse.csr_matrix((np.asarray(data, dtype=np.float64),
                                    np.asarray(indices, dtype=np.int64),
                                    np.asarray(indptr, dtype=np.int64)),
                                   shape=(len(docs), max(len(vocab), 1)))
        return vocab, matrix

    def _query_terms(self, query: str, *, binary: bool,
                     backoff: bool = False) -> tuple[dict[int, int], int]:
        """Known query terms ``{column: count}`` in first-seen order, and the token count;
        ``backoff``: the request read with stop words kept, against the backoff index."""
        if backoff:
            toks, vocab = self.tokenizer_.keeping_stop_words().query(query), \
                self.backoff_vocabulary_
        else:
            toks, vocab = self._query_tokens(query), self.vocabulary_
        if binary:
            toks = list(dict.fromkeys(toks))
        counts: dict[int, int] = {}
        for tok in toks:
            j = vocab.get(tok)
            if j is not None:
                counts[j] = counts.get(j, 0) + 1
        return counts, len(toks)

    # -- the backoff ------------------------------------------------------------------------
    def _content_match(self, query: str) -> bool:
        """Whether some content term of ``query`` occurs in some tool (the index knows it)."""
        vocab = self.vocabulary_
        return any(t in vocab for t in self._query_tokens(query))

    def _backoff_index(self, vocab: dict[str, int], matrix) -> tuple[dict[str, int], Any]:
        """The rows of a stop-words-kept term × tool index (``vocab``, ``matrix``) for the
        terms the content index lacks (stop words, and n-grams holding one).

        A request backs off only when none of its content terms is in the content index,
        so these rows are all of the stop-words-kept index it can reach: its scores are
        those of the same scorer with ``stop_words=None``.
        """
        keep = [(t, j) for t, j in vocab.items() if t not in self.vocabulary_]
        rows = np.asarray([j for _, j in keep], dtype=np.int64)
        return {t: i for i, (t, _) in enumerate(keep)}, matrix[rows]

    def _match_many(self, queries: list[str], scores: np.ndarray) -> np.ndarray:
        # the article's rule on content terms: a request scored by its backoff matches nothing
        out = scores > 0
        if getattr(self, "backoff_", False):
            for i, q in enumerate(queries):
                if out[i].any() and not self._content_match(q):
                    out[i] = False
        return out

    def _accumulate(self, terms: dict[int, float], matrix) -> np.ndarray:
        """``sum(weight * matrix[term])`` over ``terms`` as a dense ``(n_tools,)`` array.

        ``matrix`` is a CSR term × tool matrix. For the handful of terms of one query this
        gathers their rows and adds them with ``np.bincount``, without building a sparse query
        row; the additions happen in the same order as scipy's sparse product (the order of
        ``terms``), so the values are identical to the batch path's, bit for bit.
        """
        n = self.n_tools_
        if not terms:
            return np.zeros(n)
        ptr, ind, dat = matrix.indptr, matrix.indices, matrix.data
        if len(terms) == 1:
            (j, w), = terms.items()
            out = np.zeros(n)
            # a CSR row's columns are unique, so fancy-index += adds each value once
            out[ind[ptr[j]:ptr[j + 1]]] += dat[ptr[j]:ptr[j + 1]] * w
            return out
        cols = np.concatenate([ind[ptr[j]:ptr[j + 1]] for j in terms])
        vals = np.concatenate([dat[ptr[j]:ptr[j + 1]] * w for j, w in terms.items()])
        return np.bincount(cols, weights=vals, minlength=n)

    def _query_matrix(self, queries: list[str], *, binary: bool):
        """CSR ``(n_queries, vocab)`` of known query terms, and each query's token count."""
        from scipy import sparse
        indptr = [0]
        indices: list[int] = []
        data: list[float] = []
        n_tokens = np.zeros(len(queries))
        for i, q in enumerate(queries):
            counts, n_tokens[i] = self._query_terms(q, binary=binary)
            indices.extend(counts)
            data.extend(counts.values())
            indptr.append(len(indices))
        m = sparse.csr_matrix((np.asarray(data, dtype=np.float64),
                               np.asarray(indices, dtype=np.int64),
                               np.asarray(indptr, dtype=np.int64)),
                              shape=(len(queries), max(len(self.vocabulary_), 1)))
        return m, n_tokens
