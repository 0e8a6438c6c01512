"""Fusion of lexical and embedding evidence: the ``fusion`` family and the ``default`` scorer.

No single scorer wins on every kind of registry. Term matching (BM25 over split names,
descriptions and parameter names) is precise where tools are API endpoints whose requests
name the things the schema names; sentence embeddings win where tools are marketing blurbs a
user paraphrases. And a single query vector cannot cover a request that needs several
unrelated tools. :class:`FusionScorer` answers all three without labels:

1. **Segments.** The request is split into clauses (:func:`split_clauses`: sentences, ``;``,
   and conjunctions such as "and", "then", "also" that start a new request). The whole
   request is always kept as one segment too. The encoder reads the whole request once; a
   clause's vector is the mean of its tokens' output vectors from that pass, so a clause is
   read in the context of the request and costs no extra encoder call.
2. **Two signals per segment.** BM25 with field weighting (name words counted twice, then
   description and parameter names, stop words dropped from the query) and embedding cosine.
3. **Per-segment normalisation.** Each signal is rescaled over the registry so that its mean
   tool scores 0 and its best tool scores 1 (a signal with no spread, e.g. no query word in
   any tool, contributes 0).
4. **Weights.** The normalised signals are averaged with fixed prior weights (0.4 lexical,
   0.6 semantic) and summed: a tool both signals put first scores 1, a flat signal (no
   query word in any tool) adds nothing, so the score says how much evidence agrees.
   ``weights="auto"``
   instead weights each signal by how sharply it singles out a few tools
   (:func:`informativeness`); on the dev splits it did no better than the fixed prior, so
   it is an option, not the default (see ``notebooks/06_default_scorer``).
5. **Segments combined by max.** A tool's score is its best score over the segments, so each
   clause's best tools rise to the top together instead of being averaged away; a small
   bonus for the whole request keeps single-intent ranking unchanged.

Scores are deterministic; ties keep registry order (as every ranking in toolsel does).

No-match rule: fused scores are relative (the mean tool scores 0), so they cannot say that
nothing matches. A request matches nothing unless some tool shares a content word with it or
its best embedding cosine (in some segment) passes the embedding scorer's gate; then a tool
matches when it shares a content word or its cosine reaches the embedding scorer's floor
(:class:`~toolsel.scorers.embedding.EmbeddingScorer`, Notes). A request sharing nothing with
any tool ("zzzz qqqq") therefore discovers nothing.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..text import LEXICAL_STOP_WORDS, STOP_WORD_MODES, tokenize
from .base import LexicalScorer, Scorer, get_scorer, register_scorer
from .embedding import cosines

__all__ = ["FusionScorer", "DefaultScorer", "split_clauses", "normalize_scores",
           "informativeness", "STOP_WORDS"]

#: English function words dropped from the query before term matching: they carry no
#: evidence about which tool is meant, but BM25's idf floor lets them add noise in long,
#: chatty requests. The same set as :data:`toolsel.text.LEXICAL_STOP_WORDS` (the shared core
#: plus contractions and reflexives); clause splitting counts content words with it.
STOP_WORDS = LEXICAL_STOP_WORDS

# sentence ends and semicolons always split; commas and these words split only when each
# side keeps enough content to stand alone as a request
_HARD = re.compile(r"(?<=[.!?;])\s+|\n+")
_SOFT = re.compile(r"(,\s*|\s+(?:and then|and also|and|then|also|plus|as well as|after that|"
                   r"afterwards|before that)\s+)", re.IGNORECASE)
_LEADING = re.compile(r"^(?:and then|and also|and|then|also|plus|so|but)\s+", re.IGNORECASE)
_MIN_CONTENT = 2  # content words a clause needs to count as its own request


def _content(text: str) -> list[str]:
    return [t for t in tokenize(text) if t not in STOP_WORDS]


def split_clauses(query: str, *, min_content: int = _MIN_CONTENT,
                  conjunctions: bool = True) -> list[str]:
    """The clauses of a request, each with at least ``min_content`` non-stop words.

    Splits at sentence ends and semicolons, then (unless ``conjunctions`` is false) at commas
    and joining words ("and", "then", "also", "plus", ...). A fragment too short to be a
    request on its own ("and Bob") is merged into the clause before it, so "rock and roll"
    stays together. Returns ``[query]`` when nothing splits.

    >>> split_clauses("Find flights to Rome, and book a hotel near the Colosseum")
    ['Find flights to Rome', 'book a hotel near the Colosseum']
    """
    clauses: list[str] = []
    for sentence in _HARD.split(query.strip()):
        if not sentence.strip():
            continue
        # text, separator, text, separator, ...
        pieces = _SOFT.split(sentence) if conjunctions else [sentence]
        merged: list[str] = []
        for j in range(0, len(pieces), 2):
            part = pieces[j].strip()
            if not part:
                continue
            if merged and (len(_content(part)) < min_content
                           or len(_content(merged[-1])) < min_content):
                merged[-1] = f"{merged[-1]}{pieces[j - 1]}{part}"  # keep the joining word
            else:
                merged.append(part)
        merged = [_LEADING.sub("", m) for m in merged]
        clauses.extend(merged)
    # a short leading sentence ("Hi!") joins the next one
    out: list[str] = []
    for c in clauses:
        if out and len(_content(out[-1])) < min_content:
            out[-1] = f"{out[-1]} {c}"
        else:
            out.append(c)
    return out or [query]


def locate_clauses(query: str, clauses: Sequence[str]) -> list[tuple[int, int]] | None:
    """Character spans of ``clauses`` in ``query``, in order; ``None`` when there are none or
    one cannot be found (whitespace may differ: :func:`split_clauses` joins with a space)."""
    if not clauses:
        return None
    spans, pos = [], 0
    for c in clauses:
        words = c.split()
        if not words:
            return None
        span = _find_words(query, words, pos)
        if span is None:
            return None
        spans.append(span)
        pos = span[1]
    return spans


def _find_words(text: str, words: Sequence[str], pos: int) -> tuple[int, int] | None:
    """The first span of ``text`` at or after ``pos`` spelling ``words`` separated by
    whitespace: what ``re.search(r"\\s+".join(map(re.escape, words)), text, pos)`` finds,
    without compiling a pattern per clause (that took about 0.3 ms a clause).

    Exact because a word never starts with whitespace: ``\\s+`` can only take the whole run
    of whitespace after a word (``str.isspace`` and ``\\s`` agree on ``str``).
    """
    first, n = words[0], len(text)
    start = text.find(first, pos)
    while start >= 0:
        end = start + len(first)
        for w in words[1:]:
            gap = end
            while gap < n and text[gap].isspace():
                gap += 1
            if gap == end or not text.startswith(w, gap):
                break
            end = gap + len(w)
        else:
            return start, end
        start = text.find(first, start + 1)
    return None


def normalize_scores(scores: np.ndarray) -> np.ndarray:
    """Rescale each row so the mean tool scores 0 and the best scores 1 (flat rows → 0)."""
    scores = np.asarray(scores, dtype=np.float64)
    mean = scores.mean(axis=-1, keepdims=True)
    top = scores.max(axis=-1, keepdims=True)
    span = top - mean
    out = np.zeros_like(scores)
    np.divide(scores - mean, span, out=out, where=span > 1e-12)
    return out


def _weighted_normalized(scores: np.ndarray, weight: float) -> np.ndarray:
    """``weight * normalize_scores(scores)``, bit for bit, in one new array.

    The same operations in the same order (subtract the row mean, divide by the row's span,
    multiply by the weight) done in place, so a (segments x tools) block is allocated once
    instead of four times; ``scores`` is not modified.
    """
    scores = np.asarray(scores, dtype=np.float64)  # (rows, tools)
    mean = scores.mean(axis=1, keepdims=True)
    span = scores.max(axis=1, keepdims=True) - mean
    out = scores - mean
    spread = span > 1e-12
    np.divide(out, span, out=out, where=spread)
    out[~spread[:, 0]] = 0.0  # a flat row: no evidence
    out *= weight
    return out


def informativeness(normalized: np.ndarray, k: int) -> np.ndarray:
    """Per row, ``1 - (k-th best normalised score)``: near 1 when few tools stand out.

    ``normalized`` comes from :func:`normalize_scores`; a row of zeros (no evidence) gets 0.
    """
    normalized = np.atleast_2d(normalized)
    n = normalized.shape[1]
    k = min(max(int(k), 1), n)
    kth = np.partition(normalized, n - k, axis=1)[:, n - k]
    weight = np.clip(1.0 - kth, 0.0, 1.0)
    weight[normalized.max(axis=1) <= 0] = 0.0
    return weight


@register_scorer("fusion")
class FusionScorer(Scorer):
    """Lexical + embedding evidence, per clause, weighted by how informative each signal is.

    Parameters
    ----------
    lexical, semantic : str
        Names of the two scorers fused (``"bm25"`` and ``"embedding"``); ``None`` drops one.
    lexical_fields, semantic_fields : sequence of str
        Fields each signal indexes. A field listed twice counts twice: the default lexical
        fields count name words double (field weighting, as in BM25F).
    weights : (float, float) or "auto"
        Lexical and semantic weights of the normalised signals; ``"auto"`` weights each
        signal per segment by :func:`informativeness`.
    k : int
        The rank whose score measures how flat a signal is (for ``weights="auto"``).
    clauses : bool or "sentences"
        Score each clause of a multi-part request too (:func:`split_clauses`) and keep each
        tool's best segment score; ``"sentences"`` splits only at sentence ends and
        semicolons (not at commas and "and"/"then"); ``False`` scores the whole request only.
    clause_vectors : "in_context" or "separate"
        How the semantic signal gets a clause's vector: ``"in_context"`` pools the clause's
        tokens from the whole request's one encoder pass (with an encoder that can, the
        default MiniLM; others encode each clause), ``"separate"`` encodes each clause on its
        own (one more encoder call per clause).
    whole_bonus : float
        Added to the whole request's fused score before taking the max over segments, so a
        single-intent request ranks as if it were not split.
    stop_words : {"query", "both", None}
        Stop words of the lexical signal (:class:`~toolsel.text.Tokenizer`): dropped from
        the query, from query and tool texts, or kept. ``True`` means ``"query"`` and
        ``False`` means ``None`` (the boolean this parameter used to be).
    stem : {"snowball", "snowball+exact", None}
        Snowball stemming of the lexical signal's terms (``"+exact"``: each word kept as
        written beside its stem, so an exact match counts more), or none.
    stem_weight : float or None
        With ``stem="snowball+exact"``, the weight of a stem term against a word
        (:class:`~toolsel.scorers.bm25.Bm25Scorer`; ``None``: its default); ignored by a
        lexical scorer without one.
    backoff : bool
        When the request's content words match no tool, the lexical signal scores its stop
        words instead (:class:`~toolsel.scorers.base.LexicalScorer`); the no-match rule is
        unchanged. Ignored by a lexical scorer without the option.
    tokenizer : {"article", "tool_words", "words"} or None
        Name splitting of the lexical signal (:class:`~toolsel.text.Tokenizer`; ``None``:
        the lexical scorer's own default). The default fields already split names
        (``name_words``, ``param_names``); ``"article"`` reads the rest (descriptions, the
        request) lowercased without splitting, so a brand typed ``SkyCast`` matches
        ``skycast``; ``"tool_words"`` (the setting before ``benchmarks/tune_tokenization.py``
        chose ``"article"`` on dev) also splits camelCase in descriptions.
    idf : {"okapi", "lucene"} or None
        The idf of a BM25 lexical signal (:class:`~toolsel.scorers.bm25.Bm25Scorer`;
        ``None``: its default); ignored by a lexical scorer without one.
    model : str or tuple of str
        Embedding model (see :class:`~toolsel.scorers.embedding.EmbeddingScorer`); a tuple
        of names makes the semantic signal an ensemble: each encoder's cosines are
        normalised per segment like any signal and averaged (each gets an equal share of the
        semantic weight), and the no-match rule reads the first encoder's cosines.
    windows, window_pooling : int or None, str
        Long tool texts as several vectors in the semantic signal (passed to
        :class:`~toolsel.scorers.embedding.EmbeddingScorer`; ``None``: one vector per tool):
        a text over ``windows`` word pieces is also read in windows of that size, and with
        ``"mean"`` a tool scores the mean cosine over its text's and its windows' vectors. A
        text that fits in one window scores as with ``None``.
    fields : sequence of str
        When given, both signals index these fields instead of their own lists.

    Notes
    -----
    Cost of one request of S segments: one encoder pass over the whole request, one pass over
    the tool vectors giving the S cosines of every tool, S BM25 rows, and a few elementwise
    passes over the S x n_tools scores (normalising, weighting, the max over segments).
    ``benchmarks/bench_default_profile.py`` times each stage
    (``reports/benchmarks/default_profile.csv``).
    """

    default_fields = ("name_words", "description")
    #: When the embedding model cannot be loaded: raise (False) or warn and go lexical-only.
    _lexical_fallback = False

    def __init__(self, *, lexical: str | None = "bm25", semantic: str | None = "embedding",
                 lexical_fields: Sequence[str] = ("name_words", "name_words", "description",
                                                  "param_names"),
                 semantic_fields: Sequence[str] = ("name_words", "description"),
                 weights: tuple[float, float] | str = (0.4, 0.6), k: int = 10,
                 clauses: bool | str = True, clause_vectors: str = "in_context",
                 whole_bonus: float = 0.1, stop_words: str | bool | None = "query",
                 stem: str | None = None, tokenizer: str | None = "article",
                 idf: str | None = "okapi", stem_weight: float | None = None,
                 backoff: bool = False, model: str | tuple[str, ...] | None = None,
                 windows: int | None = 128, window_pooling: str = "mean",
                 fields: Sequence[str] | None = None):
        super().__init__(fields=fields)
        self.lexical = lexical
        self.semantic = semantic
        self.lexical_fields = lexical_fields
        self.semantic_fields = semantic_fields
        self.weights = weights
        self.k = k
        self.clauses = clauses
        self.clause_vectors = clause_vectors
        self.whole_bonus = whole_bonus
        self.stop_words = stop_words
        self.stem = stem
        self.tokenizer = tokenizer
        self.idf = idf
        self.stem_weight = stem_weight
        self.backoff = backoff
        self.model = model
        self.windows = windows
        self.window_pooling = window_pooling

    def _stop_mode(self) -> str | None:
        mode = self.stop_words
        if isinstance(mode, bool):
            mode = "query" if mode else None
        if mode not in STOP_WORD_MODES:
            raise ValueError(f"{type(self).__name__}: stop_words must be one of "
                             f"{list(STOP_WORD_MODES)} (or True/False), got "
                             f"{self.stop_words!r}")
        return mode

    def _fit(self, tools) -> None:
        self._check_fusion_params()
        self.signals_: list[tuple[str, Scorer]] = []
        if self.lexical is not None:
            self._fit_lexical(tools)
        if self.semantic is not None:
            self._fit_semantic(tools)

    def _check_fusion_params(self) -> None:
        """Refuse bad parameters before any model is loaded."""
        self._stop_mode()  # a bad value fails before any model is loaded
        if self.lexical is None and self.semantic is None:
            raise ValueError("FusionScorer needs at least one of lexical and semantic")
        if self.clauses not in (True, False, "sentences"):
            raise ValueError(f"clauses must be True, False or 'sentences', got "
                             f"{self.clauses!r}")
        if self.clause_vectors not in ("in_context", "separate"):
            raise ValueError(f"clause_vectors must be 'in_context' or 'separate', got "
                             f"{self.clause_vectors!r}")
        if self.weights != "auto":
            w = tuple(self.weights)  # type: ignore[arg-type]
            if len(w) != 2 or min(w) < 0 or sum(w) <= 0:
                raise ValueError(f"weights must be 'auto' or two non-negative floats, got "
                                 f"{self.weights!r}")

    def _fit_lexical(self, tools) -> None:
        """Fit the lexical signal and append it to ``signals_``."""
        fields = self.lexical_fields if self.fields is None else self.fields
        lex = get_scorer(self.lexical, fields=fields)
        # the lexical scorer tokenizes (stop words, stemming, name splitting); another
        # kind of scorer gets the request with stop words dropped (_lexical_text)
        self._prefilter_ = False
        if isinstance(lex, LexicalScorer):
            lex = get_scorer(self.lexical, **self._lexical_params(type(lex), fields))
        else:
            if self.stem is not None:
                raise ValueError(f"{type(self).__name__}: stem applies to a lexical "
                                 f"scorer; {self.lexical!r} is not one")
            self._prefilter_ = self._stop_mode() is not None
        self.signals_.append(("lexical", lex.fit(tools)))

    def _lexical_params(self, lex_type, fields) -> dict[str, Any]:
        """The parameters passed on to a lexical scorer of class ``lex_type``."""
        params = dict(fields=fields, stop_words=self._stop_mode(), stem=self.stem)
        if self.tokenizer is not None:
            params["tokenizer"] = self.tokenizer
        if self.idf is not None and "idf" in lex_type._param_names():
            params["idf"] = self.idf
        if self.stem_weight is not None and "stem_weight" in lex_type._param_names():
            params["stem_weight"] = self.stem_weight
        if "backoff" in lex_type._param_names():
            params["backoff"] = self.backoff
        return params

    def _fit_semantic(self, tools) -> None:
        """Fit the semantic signal of every model and append each to ``signals_`` (a missing
        model is skipped with a warning when a lexical fallback is allowed)."""
        for model in self._models():
            params: dict[str, Any] = {"fields": self.semantic_fields if self.fields is None
                                      else self.fields}
            if model is not None:
                params["model"] = model
            if self.windows is not None:  # long tool texts as several vectors
                params.update(windows=self.windows, window_pooling=self.window_pooling)
            try:
                semantic = get_scorer(self.semantic, **params).fit(tools)
            except (ImportError, OSError) as exc:  # model packages or files missing
                if not self._lexical_fallback or not self.signals_:
                    raise
                rest = f"{self.lexical!r} alone" if len(self.signals_) == 1 else \
                    f"the other {len(self.signals_)} signals"
                # stacklevel 4: this method, _fit, fit, then the caller of fit
                warnings.warn(f"{type(self).__name__}: the {self.semantic!r} signal"
                              f"{'' if model is None else f' of model {model!r}'} is "
                              f"unavailable ({exc}); scoring with {rest}",
                              RuntimeWarning, stacklevel=4)
            else:
                self.signals_.append(("semantic", semantic))

    def _models(self) -> list[str | None]:
        """The encoders of the semantic signal: ``[None]`` (the scorer's own default), one
        name, or the names of an ensemble."""
        if self.model is None or isinstance(self.model, str):
            return [self.model]
        models = list(self.model) if isinstance(self.model, (tuple, list)) else None
        if not models or not all(isinstance(m, str) and m for m in models) \
                or len(set(models)) != len(models):
            raise ValueError(f"{type(self).__name__}: model must be a model name or a tuple "
                             f"of distinct model names, got {self.model!r}")
        return models

    # -- scoring ----------------------------------------------------------------------------
    def segments(self, query: str) -> list[str]:
        """The texts scored for ``query``: the whole request first, then its clauses."""
        if not self.clauses:
            return [query]
        parts = split_clauses(query, conjunctions=self.clauses != "sentences")
        return [query] + parts if len(parts) > 1 else [query]

    def _lexical_text(self, text: str) -> str:
        if not getattr(self, "_prefilter_", False):
            return text
        kept = _content(text)
        return " ".join(kept)

    def _signal_scores(self, segs: list[list[str]]) -> list[tuple[str, Scorer, np.ndarray]]:
        """Each signal's raw scores of every segment text, the segments of all queries in
        order: ``[(kind, scorer, scores)]``."""
        texts = [s for ss in segs for s in ss]
        out = []
        for kind, scorer in self.signals_:
            if kind == "lexical":
                raw = scorer.score_many([self._lexical_text(t) for t in texts])
            elif self.clause_vectors == "in_context" and hasattr(scorer, "encode_in_context"):
                raw = self._in_context_scores(scorer, segs)
            else:
                raw = scorer.score_many(texts)
            out.append((kind, scorer, raw))
        return out

    def _in_context_scores(self, scorer, segs: list[list[str]]) -> np.ndarray:
        # whole requests in one encoder pass each, their clauses pooled from it
        spans = [locate_clauses(ss[0], ss[1:]) for ss in segs]
        single = [i for i, sp in enumerate(spans) if sp is None]
        multi = [i for i, sp in enumerate(spans) if sp is not None]
        rows: list[np.ndarray | None] = [None] * len(segs)
        if single:
            vecs = scorer.encode_queries([t for i in single for t in segs[i]])
            at = 0
            for i in single:
                rows[i] = vecs[at:at + len(segs[i])]
                at += len(segs[i])
        if multi:
            pooled = scorer.encode_in_context([segs[i][0] for i in multi],
                                              [spans[i] for i in multi])
            for i, v in zip(multi, pooled):
                rows[i] = v
        vecs = np.vstack(rows)
        pooled = getattr(scorer, "tool_cosines", None)  # a tool's windows pooled, if any
        return pooled(vecs) if pooled is not None else cosines(vecs, scorer.vectors_)

    def _fused(self, texts: list[str], signals) -> np.ndarray:
        """Fused, normalised scores of every segment text, shape ``(len(texts), n_tools)``.

        A weighted sum, not a weighted mean: a tool both signals put first scores 1, one only
        the semantic signal finds scores at most its weight. So the fused score keeps an
        absolute meaning (how much evidence agrees). ``signals``: :meth:`_signal_scores` of
        the segments ``texts`` come from.
        """
        total = None
        fixed = None if self.weights == "auto" else np.asarray(self.weights, dtype=np.float64)
        # an ensemble of encoders shares the semantic weight equally: its normalised
        # cosines are averaged
        count = {kind: sum(k == kind for k, _, _ in signals) for kind, _, _ in signals}
        for kind, _, raw in signals:
            if fixed is None:
                norm = normalize_scores(raw)
                w = informativeness(norm, self.k) / len(count) / count[kind]
                part = w[:, None] * norm
            else:
                part = _weighted_normalized(raw, fixed[0 if kind == "lexical" else 1]
                                            / fixed.sum() / count[kind])
            if total is None:
                total = part
            else:
                total += part
        return np.zeros((len(texts), self.n_tools_)) if total is None else total

    def _best_segment(self, segs: list[list[str]], fused: np.ndarray) -> np.ndarray:
        """Per query, each tool's best segment score (the whole request gets the bonus)."""
        out = np.empty((len(segs), self.n_tools_))
        row = 0
        for i, ss in enumerate(segs):
            # in place, row by row: the same values as block[1:].max(axis=0) (a max rounds
            # nothing) without a (segments x tools) temporary
            np.add(fused[row], self.whole_bonus, out=out[i])
            for r in range(row + 1, row + len(ss)):
                np.maximum(out[i], fused[r], out=out[i])
            row += len(ss)
        return out

    def _score_many(self, queries: list[str]) -> np.ndarray:
        segs = [self.segments(q) for q in queries]
        flat = [s for ss in segs for s in ss]
        return self._best_segment(segs, self._fused(flat, self._signal_scores(segs)))

    def _score_and_match_many(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
        # scores and the no-match rule from one pass over the signals
        segs = [self.segments(q) for q in queries]
        flat = [s for ss in segs for s in ss]
        signals = self._signal_scores(segs)
        scores = self._best_segment(segs, self._fused(flat, signals))
        return scores, self._matches_from(segs, flat, signals)

    def _matches_from(self, segs: list[list[str]], flat: list[str], signals) -> np.ndarray:
        # per tool: a shared content word, or a semantic match in some segment; per request:
        # nothing matches unless some tool shares a word or the semantic gate is passed
        n = len(segs)
        starts = np.cumsum([0] + [len(ss) for ss in segs[:-1]])
        per_tool = np.zeros((n, self.n_tools_), dtype=bool)
        gate = np.zeros(n, dtype=bool)
        semantic_seen = False
        for kind, scorer, raw in signals:
            if kind != "lexical":
                # an ensemble's no-match rule is its first encoder's (the thresholds are
                # calibrated per model)
                if semantic_seen:
                    continue
                semantic_seen = True
            if kind == "lexical":  # the whole request is each query's first segment
                whole = [self._lexical_text(flat[r]) for r in starts]
                m = scorer.match_scores(whole, raw[starts])
                per_tool |= m
                gate |= m.any(axis=1)
                continue
            floor = getattr(scorer, "MIN_SIMILARITY", None)
            bar = getattr(scorer, "GATE_SIMILARITY", None)
            if floor is None or bar is None:  # a semantic scorer with its own rule
                tool_m = scorer.match_scores(flat, raw)
                seg_gate = tool_m.any(axis=1)
            else:
                tool_m = raw >= floor
                seg_gate = raw.max(axis=1) >= bar
            for i, ss in enumerate(segs):
                rows = slice(starts[i], starts[i] + len(ss))
                per_tool[i] |= tool_m[rows].any(axis=0)
                gate[i] |= seg_gate[rows].any()
        return per_tool & gate[:, None]

@register_scorer("default", compare=50, fused=True)
class DefaultScorer(FusionScorer):
    """The scorer :class:`~toolsel.selection.Selector` uses unless told otherwise.

    :class:`FusionScorer` with its defaults: BM25 (name words ×2, description, parameter
    names) and MiniLM embeddings, normalised per segment, weighted 0.4/0.6, clause-aware.
    If the embedding model cannot be loaded (its packages removed from a slim install), it
    warns and scores with BM25 alone rather than failing. Chosen on the dev
    splits of three registry styles (``data/styles``); see the README's "Which scorer?".

    Re-checked on the dev splits of six sets (the five ``data/styles`` and
    ``data/requests.jsonl``) with ``benchmarks/tune_default.py``. Encoding each clause on its
    own (one encoder pass per clause, plus the whole request) took 38 ms p50 / 46 ms p95 at
    4,000 tools on 3-5-sentence requests, over the 30 ms target; so the knobs were tried from
    clauses read in context (``clause_vectors="in_context"``, one pass per request), one at a
    time: parameter names and/or descriptions in the embedded text, parameter descriptions in
    BM25, weights 0.5/0.5 and 0.3/0.7, splitting at sentences only or not at all,
    ``whole_bonus`` 0 and 0.1. The pick (best dev mean of R@5 and Complete@10 among variants
    losing at most one request's worth of either on any set against the configuration before,
    0.05 bonus with clauses encoded apart) was ``whole_bonus=0.1``: dev mean 0.902 vs 0.898,
    marketplace R@5 0.862 → 0.899, openapi Complete@10 0.731 → 0.761, one workspace request
    lost at Complete@10. BM25 over parameter descriptions scored 0.900 alone but lost 1.5
    requests' worth combined with the bonus; no splitting cost 1.5-3.7 points of dev R@5 on
    plugin, pooled, openapi and the workspace set.

    The lexical half's tokenization (name splitting, stop words, stemming) was chosen the same
    way by ``benchmarks/tune_tokenization.py`` (``reports/benchmarks/tokenization.csv``):
    ``tokenizer="article"``, request stop words, no stemming, rank-bm25's idf.
    Issue 23's second look (same script and rule) added two options, measured and left off:
    each word kept beside its Snowball stem with a stem term weighing half a word
    (``stem="snowball+exact", stem_weight=0.5``) was the rule's pick on dev
    (``reports/benchmarks/tokenization_dev_ranking.csv``), but on test it lost two openapi
    requests at Complete@10 and won none (``tokenization_paired.csv``, ``default: chosen -
    before``), beyond the one request per set the issue allows, so the default keeps no
    stemming; the stems matched sibling operations ("approval" / ``approvePurchaseOrder``),
    the failure to expect on API listings. The backoff to stop words (``backoff=True``)
    scored below the setting before on dev and is off.

    Long tool texts (``windows=128, window_pooling="mean"``) were chosen the same way by
    ``benchmarks/tune_default.py --study long_texts`` (``reports/benchmarks/long_texts.csv``,
    ``long_texts_dev_ranking.csv``, ``long_texts_paired.csv``), on the dev splits of the six
    sets and of their API-listing rewrites (``as_listing`` there: each tool's text opens with
    its service's list of endpoints, so what sets it apart comes after MiniLM's 256-word-piece
    truncation on the largest services), against one vector per tool, with latency timed on
    4,000 long-text tools. No bundled tool text is over 128 word pieces, so on the six sets
    themselves the scores are unchanged. Pooling windows by max or mean_max was slower than
    one vector per tool and over the 30 ms p95 bar there; mean pooling folds a tool's
    windows into one vector, so it costs no time per request, only encoding the windows
    when fitting (the table's ``encoded_vectors`` and ``cold_fit_s``).

    An ensemble of two encoders (``model=("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2")``)
    was measured with ``--study encoders`` (``reports/benchmarks/encoder_ensemble.csv``) and
    not chosen: it lost more than one request's worth on a dev set and was slower than
    MiniLM-L6 alone, over the p95 bar.
    """

    _lexical_fallback = True

