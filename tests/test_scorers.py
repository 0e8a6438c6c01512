"""One contract over every scorer, plus parity with the reference implementations."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from toolsel import (Bm25Scorer, JaccardScorer, Tool, available_scorers, check_scorer,
                     get_scorer)
from toolsel.selection import jaccard
from toolsel.text import tokenize, tool_text

ALL = ["jaccard", "bm25", "tfidf", "embedding", "default"]
#: every scorer: each registered name, and the article's hook wrapped as a scorer
CONTRACT = [*available_scorers(), "hook"]


def _make(name):
    return get_scorer(jaccard) if name == "hook" else get_scorer(name)


def test_every_builtin_is_registered():
    assert set(ALL) | {"fusion"} <= set(available_scorers())


@pytest.mark.parametrize("name", CONTRACT)
def test_scorer_contract(name, registry, queries):
    """check_scorer (the contract users run on their own scorer) holds for every scorer, on
    its own small registry and on the 61-tool registry with its 30 queries."""
    check_scorer(_make(name))
    check_scorer(_make(name), registry, [q.query for q in queries])
    # a query with no known word scores nothing above a query that matches
    scorer = _make(name).fit(registry)
    assert scorer.score("zzzz qqqq").max() <= scorer.score("weather forecast").max()


class _Broken(JaccardScorer):
    """A scorer that breaks one promise: fitting changes a parameter."""

    def _fit(self, tools):
        super()._fit(tools)
        self.tokenizer = "article"


class _Unstable(JaccardScorer):
    """A scorer whose single-query path disagrees with its batch path."""

    def _score_one(self, query):
        return self._score_many([query])[0] + 1.0


@pytest.mark.parametrize("scorer, promise", [
    (_Broken(), "fit\\(\\) changed a parameter"),
    (_Unstable(), "differs from its row of score_many"),
])
def test_check_scorer_names_the_broken_promise(scorer, promise):
    with pytest.raises(AssertionError, match=f"{type(scorer).__name__} breaks the scorer "
                       f"contract: .*{promise}"):
        check_scorer(scorer)
    with pytest.raises(AssertionError, match="unfitted"):
        check_scorer(JaccardScorer().fit([Tool("a", "b")]))


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


def test_scorer_parameters_are_checked_by_name():
    with pytest.raises(TypeError, match=r"'k' is not a parameter of scorer 'bm25' \(Bm25Scorer\); "
                                        r"did you mean 'k1'"):
        get_scorer("bm25", k=1.2)
    with pytest.raises(ValueError, match="unknown scorer 'bm2'.*did you mean 'bm25'"):
        get_scorer("bm2")


def test_selector_names_a_misspelt_parameter(registry):
    from toolsel import Selector
    with pytest.raises(TypeError, match=r"Selector: 'topk' is not a parameter of scorer 'bm25' "
                                        r"\(Bm25Scorer\); did you mean 'top_k'\?"):
        Selector(registry, "bm25", topk=5)
    sel = Selector(registry, "bm25", top_k=3, k1=1.2)
    assert sel.scorer.k1 == 1.2
    names = sel.select_names("file a bug report on the backend repo")
    assert names == sel.select("file a bug report on the backend repo")
    assert [t.name for t in sel.select_definitions("file a bug report on the backend repo")] \
        == names


def test_compared_scorers_come_from_the_registry_of_names():
    """The scorers every comparison runs are declared where each scorer registers, and the
    lists the sweep, labeling, the style comparison and the scale benchmark use are read
    from there (adding a compared scorer is its module and its tests)."""
    from toolsel.eval.sweep import DEFAULT_SCORERS
    from toolsel.scorers.base import available_scorers, compared_scorers, scorer_summary
    from toolsel.tables.benchmark import SCALE_SCORERS
    from toolsel.tables.compare_styles import SINGLE_SCORERS
    from toolsel.tables.labeling import LABEL_SCORERS
    assert compared_scorers() == ("jaccard", "bm25", "tfidf", "embedding", "default")
    assert DEFAULT_SCORERS == LABEL_SCORERS == compared_scorers()
    assert SINGLE_SCORERS == compared_scorers(single=True) == ("jaccard", "bm25", "tfidf",
                                                               "embedding")
    assert SCALE_SCORERS == (*SINGLE_SCORERS, "naive")
    assert compared_scorers(lexical=True) == ("jaccard", "bm25", "tfidf")
    assert set(compared_scorers()) < set(available_scorers())  # bm25-okapi: by name only
    assert "rank_bm25" in scorer_summary("bm25-okapi") and "``" not in scorer_summary("bm25")


def test_a_scorer_registered_at_runtime_is_run_where_users_see_scorers(tmp_path, monkeypatch,
                                                                       capsys):
    """Adding a scorer is its class with register_scorer: get_scorer builds it by name and,
    with ``compare=``, `toolsel sweep` runs it without being told (its default scorers are
    read from the registry when the command runs, not from a list)."""
    import numpy as np
    import pandas as pd

    from toolsel.cli import main
    from toolsel.scorers import base
    from toolsel.text import token_set
    monkeypatch.setattr(base, "_SCORERS", dict(base._SCORERS))
    monkeypatch.setattr(base, "_COMPARED", dict(base._COMPARED))

    @base.register_scorer("name-overlap", compare=99)
    class NameOverlapScorer(base.Scorer):
        """Query tokens found in the tool's name."""

        def _fit(self, tools):
            self.names_ = [token_set(t.name.replace("_", " ")) for t in tools]

        def _score_many(self, queries):
            return np.array([[len(token_set(q) & n) for n in self.names_] for q in queries],
                            dtype=float)

    assert base.compared_scorers()[-1] == "name-overlap"
    assert "name-overlap" not in base.compared_scorers(lexical=True)
    scorer = base.get_scorer("name-overlap").fit([Tool("slack_send_dm", "send a message")])
    assert scorer.score("send a slack dm").tolist() == [3.0]
    out = tmp_path / "sweep"
    assert main(["sweep", "--registry", "data/registry.json", "--queries", "data/queries.jsonl",
                 "--top-k", "5", "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary["scorer"].tolist() == list(base.compared_scorers())
    assert 0 < summary.set_index("scorer").loc["name-overlap", "R@k"] < 1
