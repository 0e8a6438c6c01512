"""default's fast scoring path gives the scores of its plain definition.

The scoring path of :class:`~toolsel.scorers.fusion.FusionScorer` was rewritten for speed
(the cosines of a request's segments in one pass over the tool vectors, normalisation and the
max over segments in place, clause spans found without a regex per clause). These tests hold it to the definition written
the plain way: per segment, each signal rescaled by :func:`normalize_scores`, weighted 0.4/0.6
and summed; per tool, the best segment, the whole request with its bonus. The comparison of
two revisions' selections on the six sets is ``benchmarks/bench_default_exact.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolsel import load_queries, load_registry
from toolsel.ranking import top_k_indices
from toolsel.scorers.embedding import cosines
from toolsel.scorers.fusion import (DefaultScorer, _find_words, locate_clauses, _weighted_normalized,
                                    normalize_scores, split_clauses)

DATA = Path(__file__).resolve().parents[1] / "data"


def _regex_locate(query, clauses):
    """Clause spans as fusion found them before: one compiled pattern per clause."""
    if not clauses:
        return None
    spans, pos = [], 0
    for c in clauses:
        words = c.split()
        if not words:
            return None
        m = re.compile(r"\s+".join(map(re.escape, words))).search(query, pos)
        if m is None:
            return None
        spans.append((m.start(), m.end()))
        pos = m.end()
    return spans


_CHARS = st.sampled_from(list("ab.,!") + [" ", "\t", "\n", "\u00a0", "\u2003", "\x1c"])


@settings(max_examples=400, deadline=None)
@given(text=st.text(_CHARS, max_size=30),
       words=st.lists(st.text(st.sampled_from(list("ab.,!")), min_size=1, max_size=3),
                      min_size=1, max_size=3),
       pos=st.integers(0, 30))
@example(text="ab a b", words=["a", "b"], pos=0)        # no gap: not a match
@example(text="aa \u00a0\tb", words=["a", "b"], pos=0)  # any whitespace run; a later start
@example(text="a b a  b", words=["a", "b"], pos=1)      # from pos on
@example(text="a ba", words=["a", "b"], pos=0)          # a word may end inside a longer one
def test_find_words_is_the_regex_search(text, words, pos):
    m = re.compile(r"\s+".join(map(re.escape, words))).search(text, pos)
    assert _find_words(text, words, pos) == (None if m is None else (m.start(), m.end()))


def test_locate_finds_the_regex_spans_on_every_bundled_request():
    texts = [q.query for path in sorted((DATA / "styles").glob("*/queries.jsonl"))
             for q in load_queries(path, load_registry(path.parent / "registry.json"))]
    reg = load_registry(DATA / "registry.json")
    texts += [q.query for q in load_queries(DATA / "requests.jsonl", reg)]
    assert len(texts) > 700
    for q in texts:
        for text in (q, q.replace(" ", " \n\t"), f"{q}  {q}"):
            clauses = split_clauses(text)
            assert locate_clauses(text, clauses) == _regex_locate(text, clauses), text
            assert locate_clauses(text, clauses[::-1]) == _regex_locate(text, clauses[::-1]), text


def test_weighted_normalized_is_weight_times_normalize_scores_bit_for_bit():
    rng = np.random.default_rng(0)
    rows = rng.random((6, 500))
    rows[1] = 0.25                    # flat: no evidence
    rows[2, 20:] = 0.0                # sparse, as a BM25 row
    rows[3] = -rows[3]
    rows[4, 7] = rows[4].max() * 3    # one tool far ahead
    for w in (0.4, 0.6, 1.0):
        np.testing.assert_array_equal(_weighted_normalized(rows, w),
                                      np.full(len(rows), w)[:, None] * normalize_scores(rows))
    before = rows.copy()
    _weighted_normalized(rows, 0.5)
    np.testing.assert_array_equal(rows, before)  # the signal's raw scores are left alone


def test_cosines_are_the_einsum_of_before_and_agree_with_a_float64_product():
    rng = np.random.default_rng(1)
    tools = rng.standard_normal((3000, 384)).astype(np.float32)
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    for n in (1, 7, 16, 17, 64):  # numpy's loop up to 16 rows, BLAS above
        q = rng.standard_normal((n, 384)).astype(np.float32)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        got = cosines(q, tools)
        assert got.dtype == np.float64 and got.shape == (n, 3000) and got.flags.c_contiguous
        np.testing.assert_allclose(got, q.astype(np.float64) @ tools.astype(np.float64).T,
                                   rtol=0, atol=1e-6)
        if n <= 16:  # bit for bit what the row-by-row loop gave
            np.testing.assert_array_equal(got, np.einsum("qd,td->qt", q, tools))


def _plain_default(scorer: DefaultScorer, query: str) -> np.ndarray:
    """default's scores of ``query`` from its definition, in float64 throughout."""
    (_, lex), (_, sem) = scorer.signals_
    segs = scorer.segments(query)
    lexical = lex.score_many([scorer._lexical_text(s) for s in segs])
    spans = locate_clauses(query, segs[1:])
    vecs = (sem.encode_queries(segs) if spans is None
            else sem.encode_in_context([query], [spans])[0])
    semantic = vecs.astype(np.float64) @ sem.vectors_.astype(np.float64).T
    fused = 0.4 * normalize_scores(lexical) + 0.6 * normalize_scores(semantic)
    return np.maximum(fused[0] + scorer.whole_bonus, fused[1:].max(axis=0, initial=-np.inf))


@pytest.mark.parametrize("style", ["api", "openapi"])
def test_default_scores_are_its_definition_on_real_requests(style):
    reg = load_registry(DATA / "styles" / style / "registry.json")
    queries = [q.query for q in load_queries(DATA / "styles" / style / "queries.jsonl", reg)
               if q.split == "dev"]
    scorer = DefaultScorer().fit(reg)
    plain = np.vstack([_plain_default(scorer, q) for q in queries])
    one = np.vstack([scorer.score(q) for q in queries])   # Selector.select's path
    many = scorer.score_many(queries)                     # a sweep's path
    assert any(len(scorer.segments(q)) > 2 for q in queries)
    for got in (one, many):
        np.testing.assert_allclose(got, plain, rtol=0, atol=1e-5)
        for a, b in zip(got, plain):
            for k in (1, 5, 10, 30):
                chosen, expected = top_k_indices(a, k), top_k_indices(b, k)
                if not np.array_equal(chosen, expected):
                    # only a near-tie at the cut may differ
                    kth = np.sort(b)[::-1][k - 1]
                    assert np.abs(b[np.setxor1d(chosen, expected)] - kth).max() < 1e-5
