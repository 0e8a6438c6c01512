"""One contract over every scorer, plus parity with the reference implementations."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from toolsel import (Bm25Scorer, JaccardScorer, NotFittedError, Tool, available_scorers,
                     get_scorer, jaccard)
from toolsel.text import tokenize, tool_text

ALL = ["jaccard", "bm25", "tfidf", "embedding", "default"]
#: every scorer: each registered name, and the article's hook wrapped as a scorer
CONTRACT = [*available_scorers(), "hook"]


def _make(name):
    return get_scorer(jaccard) if name == "hook" else get_scorer(name)


def test_every_builtin_is_registered():
    assert set(ALL) | {"fusion"} <= set(available_scorers())


@pytest.mark.parametrize("name", CONTRACT)
def test_estimator_contract(name, registry, queries, tmp_path):
    """scikit-learn discipline for every scorer: fit returns self, parameters round-trip,
    clones are equal and unfitted, a fitted scorer pickles, one query scores as in a batch,
    ties keep registry order, and the no-match rule returns a boolean mask."""
    import pickle
    scorer = _make(name)
    params = scorer.get_params()
    assert type(scorer)(**params).get_params() == params  # constructor only stores
    clone = scorer.clone()
    assert type(clone) is type(scorer) and clone.get_params() == params
    assert clone is not scorer and not clone.is_fitted()
    assert scorer.fit(registry) is scorer
    assert scorer.get_params() == params  # fitting never changes a parameter
    assert scorer.is_fitted_for(registry) and not scorer.clone().is_fitted()
    assert not scorer.is_fitted_for(list(registry)[::-1])
    texts = [q.query for q in queries[:8]]
    batch = scorer.score_many(texts)
    for i, t in enumerate(texts):
        np.testing.assert_allclose(scorer.score(t), batch[i], rtol=1e-6, atol=1e-7)
    again = pickle.loads(pickle.dumps(scorer))
    assert again.get_params() == params and again.is_fitted_for(registry)
    np.testing.assert_allclose(again.score_many(texts), batch, rtol=1e-6, atol=1e-7)
    scores, matches = scorer.score_and_match(texts)
    assert matches.dtype == bool and matches.shape == scores.shape
    np.testing.assert_array_equal(scores, batch)
    # ties: two identical tools score the same; a selection keeps the earlier one
    # two tools every field of which reads the same ("send message ..."): only order differs
    twins = [Tool("send_message", "send a message to a channel"),
             Tool("other_tool", "look up the weather forecast"),
             Tool("send-message", "send a message to a channel"),
             Tool("stock_price", "latest price of a stock ticker"),
             Tool("calculator", "evaluate an arithmetic expression"),
             Tool("translate_text", "translate text into another language")]
    from toolsel import Selector
    sel = Selector(twins, _make(name), top_k=1, always_include=())
    s = sel.scores("send a message to the channel")
    assert s[0] == s[2]
    assert sel.select("send a message to the channel") == ["send_message"]


@pytest.mark.parametrize("name", ALL)
def test_scorer_contract(name, registry, queries):
    scorer = get_scorer(name)
    assert scorer.get_params() == get_scorer(name).get_params()  # constructor only stores
    assert not scorer.is_fitted()
    with pytest.raises(NotFittedError, match="call fit"):
        scorer.score("weather")
    assert scorer.fit(registry) is scorer
    texts = [q.query for q in queries]
    many = scorer.score_many(texts)
    assert many.shape == (len(queries), len(registry)) and many.dtype == np.float64
    assert np.isfinite(many).all()
    one = scorer.score(texts[0])
    assert one.shape == (len(registry),)
    np.testing.assert_allclose(one, many[0], rtol=1e-5, atol=1e-6)
    assert scorer.score_many([]).shape == (0, len(registry))
    np.testing.assert_array_equal(scorer.score_many(texts), many)  # deterministic
    clone = scorer.clone()
    assert not clone.is_fitted() and clone.get_params() == scorer.get_params()
    with pytest.raises(TypeError):
        scorer.score_many("one string")
    with pytest.raises(ValueError, match="no tools"):
        get_scorer(name).fit([])
    # a query with no known word scores nothing above a query that matches
    assert scorer.score("zzzz qqqq").max() <= scorer.score("weather forecast").max()


@pytest.mark.parametrize("name", ALL)
def test_scorer_fields_change_the_index(name):
    # three tools: with two, BM25's idf of a term in one of them is log(1.5/1.5) = 0
    tools = [Tool("alpha", "zebra"), Tool("gamma", "pear"), Tool("beta", "apple",
             {"type": "object", "properties": {"zebraCount": {"type": "integer",
                                                              "description": "how many"}}})]
    by_desc = get_scorer(name, fields=["description"]).fit(tools).score("zebra")
    by_params = get_scorer(name, fields=["param_names"]).fit(tools).score("zebra")
    assert by_desc.argmax() == 0 and by_params.argmax() == 2
    with pytest.raises(ValueError, match="unknown field"):
        get_scorer(name, fields=["nope"]).fit(tools)


def test_jaccard_scores_exactly_as_the_article(registry, queries):
    scorer = JaccardScorer().fit(registry)
    for q in queries:
        ref = [jaccard(t, set(tokenize(q.query))) for t in registry]
        assert scorer.score(q.query).tolist() == ref  # bit-for-bit


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bm25_matches_rank_bm25(registry, queries, seed):
    # the parity mode: no stop words, no stemming, rank-bm25's idf
    parity = dict(stop_words=None, stem=None, idf="okapi")
    scorer = Bm25Scorer(fields=["name", "description"], tokenizer="article", **parity).fit(
        registry)
    corpus = [tokenize(tool_text(t)) for t in registry]
    ref = BM25Okapi(corpus)
    for q in queries:
        np.testing.assert_allclose(scorer.score(q.query), ref.get_scores(tokenize(q.query)),
                                   rtol=1e-12, atol=1e-12)
    # random corpora with heavy term overlap (negative idfs and the epsilon floor)
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(30)]
    tools = [Tool(f"t{i}", " ".join(rng.choice(words, rng.integers(1, 15))))
             for i in range(200)]
    scorer = Bm25Scorer(fields=["description"], tokenizer="article", k1=1.2, b=0.6,
                        epsilon=0.3, **parity).fit(tools)
    ref = BM25Okapi([t.description.split() for t in tools], k1=1.2, b=0.6, epsilon=0.3)
    for _ in range(20):
        query = list(rng.choice(words + ["unknown"], rng.integers(1, 6)))
        np.testing.assert_allclose(scorer.score(" ".join(query)), ref.get_scores(query),
                                   rtol=1e-12, atol=1e-12)


def test_embedding_scorer_is_semantic(registry):
    """The real MiniLM model, loaded offline: synonyms that share no token still match."""
    scorer = get_scorer("embedding").fit(registry)
    assert scorer.vectors_.shape == (61, 384)
    np.testing.assert_allclose(np.linalg.norm(scorer.vectors_, axis=1), 1, atol=1e-5)
    names = registry.names
    s = scorer.score("I need to crunch some numbers")
    assert names[int(s.argmax())] == "calculator"
    s = scorer.score("is it going to be sunny in Lisbon tomorrow")
    assert names[int(s.argmax())] in {"weather_lookup", "weather_forecast"}


def test_get_scorer_errors():
    with pytest.raises(ValueError, match="unknown scorer 'cosine'; available: "):
        get_scorer("cosine")
    with pytest.raises(TypeError):
        get_scorer(42)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_scorer("bm25", tokenizer="nltk").fit([Tool("a", "b")])
