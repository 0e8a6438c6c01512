"""Ranking parity on large randomized registries: indexed fast paths vs straightforward code.

Registries of thousands of tools drawn from a small vocabulary, so many tools tie. Every fast
path (``Selector.select``/``search``/``discover``, ``ranks_of``, the sweep's ranks) must give
exactly what the article's ``select_tools``/``discover`` give with a per-tool hook computing the
same score (for BM25, the hook reads rank_bm25's ``get_scores``; for TF-IDF, scikit-learn's).
"""

from __future__ import annotations

import numpy as np
import pytest
from rank_bm25 import BM25Okapi
from sklearn.feature_extraction.text import TfidfVectorizer

from toolsel import Query, Selector, Tool, discover, get_scorer, select_tools
from toolsel.selection import jaccard
from toolsel.eval.sweep import sweep
from toolsel.ranking import ranks_of, top_k_indices
from toolsel.text import tokenize

VOCAB = [f"w{i}" for i in range(40)]


def random_registry(n: int, seed: int) -> list[Tool]:
    rng = np.random.default_rng(seed)
    tools = []
    for i in range(n):
        # names from the same vocabulary (plus a unique suffix) so names and descriptions tie
        name = f"{rng.choice(VOCAB)}_{rng.choice(VOCAB)}_{i}"
        desc = " ".join(rng.choice(VOCAB, size=int(rng.integers(1, 9))))
        tools.append(Tool(name, desc))
    return tools


def random_queries(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng([seed, 7])
    words = VOCAB + ["unknown", "zz"]
    out = [" ".join(rng.choice(words, size=int(rng.integers(1, 6)))) for _ in range(n)]
    return out + ["", "unknown zz", "w1 w1 w1 w2"]


def straightforward_search(tools, query, hook, limit):
    """Tools scoring above zero, best first, ties in registry order, by a full stable sort."""
    q = set(tokenize(query))
    scored = [(hook(t, q), i) for i, t in enumerate(tools)]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])
    return [tools[i] for _, i in ranked[:limit]]


def bm25_hook(ref: BM25Okapi, tools, query):
    scores = ref.get_scores(tokenize(query))
    pos = {t.name: i for i, t in enumerate(tools)}
    return lambda tool, _tokens: float(scores[pos[tool.name]])


def tfidf_hook(vec: TfidfVectorizer, matrix, tools, query):
    scores = (vec.transform([query]) @ matrix.T).toarray()[0]
    pos = {t.name: i for i, t in enumerate(tools)}
    return lambda tool, _tokens: float(scores[pos[tool.name]])


# seed 0 in the quick loop; a second randomized registry in the full suite
@pytest.fixture(scope="module", params=[0, pytest.param(1, marks=pytest.mark.slow)])
def case(request):
    seed = request.param
    tools = random_registry(3000, seed)
    return seed, tools, random_queries(60, seed)


def _hooks(name, tools, queries):
    """Per query: the reference hook for ``name``."""
    texts = [f"{t.name} {t.description}" for t in tools]
    if name == "jaccard":
        return [jaccard] * len(queries)
    if name == "bm25":
        ref = BM25Okapi([tokenize(x) for x in texts])
        return [bm25_hook(ref, tools, q) for q in queries]
    vec = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True, norm="l2")
    matrix = vec.fit_transform(texts)
    return [tfidf_hook(vec, matrix, tools, q) for q in queries]


SCORERS = {
    "jaccard": {},
    # the parity modes (the tokenization before the tuned defaults): the reference hooks
    # tokenize with the article's tokenizer and nothing else
    "bm25": {"fields": ["name", "description"], "tokenizer": "article", "stop_words": None,
             "stem": None, "idf": "okapi"},
    "tfidf": {"fields": ["name", "description"], "tokenizer": "article", "stop_words": None,
              "stem": None},
}


@pytest.mark.parametrize("name", list(SCORERS))
def test_selector_matches_select_tools(case, name):
    seed, tools, queries = case
    rng = np.random.default_rng(seed)
    names = [t.name for t in tools]
    always = list(rng.choice(names, size=5, replace=False))
    selector = Selector(tools, name, top_k=10, always_include=always, **SCORERS[name])
    hooks = _hooks(name, tools, queries)
    for n, (query, hook) in enumerate(zip(queries, hooks)):
        pinned = list(rng.choice(names, size=n % 3, replace=False))
        k = [1, 5, 10, 30][n % 4]
        got = selector.select(query, pinned, top_k=k)
        want = select_tools(tools, query, top_k=k, always_include=always, pinned=pinned,
                            scorer=hook)
        assert got == want, (name, query)
        limit = [1, 5, 10][n % 3]
        assert selector.search(query, limit) == straightforward_search(tools, query, hook, limit)
        assert selector.discover(query) == discover(tools, query, scorer=hook)


@pytest.mark.parametrize("name", list(SCORERS))
def test_scores_match_reference_and_single_equals_batch(case, name):
    seed, tools, queries = case
    scorer = get_scorer(name, **SCORERS[name]).fit(tools)
    many = scorer.score_many(queries)
    hooks = _hooks(name, tools, queries)
    for i, (query, hook) in enumerate(zip(queries, hooks)):
        one = scorer.score(query)
        np.testing.assert_array_equal(one, many[i])  # the single-query path, bit for bit
        q = set(tokenize(query))
        ref = np.asarray([hook(t, q) for t in tools])
        if name == "jaccard" or len(tokenize(query)) == len(q):
            np.testing.assert_array_equal(one, ref)  # no repeated query term: same arithmetic
        else:
            np.testing.assert_allclose(one, ref, rtol=1e-12, atol=1e-12)
        # ranks: the vectorized ranks_of against a full stable sort of the reference scores
        order = sorted(range(len(tools)), key=lambda j: -ref[j])
        targets = [0, len(tools) // 2, len(tools) - 1, int(np.argmax(ref))]
        want = [order.index(t) + 1 for t in targets]
        assert ranks_of(one, targets).tolist() == want


def test_sweep_ranks_match_selector(case):
    seed, tools, queries = case
    rng = np.random.default_rng(seed)
    labeled = [Query(f"q{i}", q, (tools[int(rng.integers(len(tools)))].name,))
               for i, q in enumerate(queries)]
    res = sweep(tools, labeled, ["jaccard", "bm25"], [1, 10], progress=False, batch_size=16)
    for label in ("jaccard", "bm25"):
        selector = Selector(tools, label, always_include=())
        pq = res.per_query[res.per_query.scorer == label]
        for q, (_, row) in zip(labeled, pq.iterrows()):
            scores = selector.scores(q.query)
            target = selector.registry.index(q.expected[0])
            assert row["rank"] == ranks_of(scores, [target])[0]
            assert row["hit@10"] == int(q.expected[0] in selector.select(q.query, top_k=10))


def test_top_k_indices_matches_a_full_sort():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 400))
        scores = rng.integers(0, 5, size=n).astype(float)  # heavy ties
        scores[rng.random(n) < 0.05] = np.nan
        scores[rng.random(n) < 0.05] = -np.inf
        cand = rng.random(n) < 0.8
        k = int(rng.integers(0, n + 2))
        clean = np.where(np.isnan(scores), -np.inf, scores)
        idx = [i for i in range(n) if cand[i]]
        want = sorted(sorted(idx, key=lambda i: -clean[i])[:k])
        assert top_k_indices(scores, k, cand).tolist() == want
