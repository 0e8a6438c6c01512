"""The ranking engine, the metrics defined once, and the two bugs one engine fixed."""

import numpy as np
import pytest

from toolsel import Selector, Tool, get_scorer, load_queries, load_registry
from toolsel.eval.sweep import sweep
from toolsel.data import Query
from toolsel.tables.discovery import noise_curve
from toolsel.eval.engine import Candidates, query_ranks, rank_batches, scorer_items
from toolsel.eval.metrics import (complete_at_k, evaluate, recall_at_k, reciprocal_rank,
                                  success_at_k)
from toolsel.ranking import ranks_of
from toolsel.selection import fitted_scorer

A = [Tool("a_mail", "send an email message"), Tool("a_weather", "weather forecast for a city"),
     Tool("a_stock", "stock price for a ticker")]
B = [Tool("b_translate", "translate text into a language"),
     Tool("b_calc", "arithmetic calculator"), Tool("b_calendar", "calendar meeting event")]


# -- bug 1: a scorer object shared between registries -------------------------------------------

@pytest.mark.parametrize("name", ["bm25", "jaccard", "tfidf"])
def test_shared_scorer_never_answers_from_another_registry(name):
    shared = get_scorer(name)
    sa = Selector(A, shared, top_k=1, always_include=())
    sb = Selector(B, shared, top_k=1, always_include=())  # same tool count as A
    assert sa.select("weather in Paris") == ["a_weather"]
    assert sb.select("translate hello into French") == ["b_translate"]
    assert sb.discover("arithmetic").name == "b_calc"
    assert not shared.is_fitted()  # the caller's object was never fitted in place


def test_a_fitted_scorer_is_reused_only_for_the_same_tools():
    fitted = get_scorer("bm25").fit(A)
    assert fitted_scorer(fitted, A) is fitted  # same registry: shared, not refitted
    other = fitted_scorer(fitted, B)
    assert other is not fitted and other.tool_names_ == [t.name for t in B]
    assert fitted.tool_names_ == [t.name for t in A]  # untouched
    edited = [A[0], Tool("a_weather", "air quality index"), A[2]]  # same names, new text
    assert fitted_scorer(fitted, edited) is not fitted


def test_sweep_and_discovery_never_refit_the_callers_scorer(registry, queries):
    mine = get_scorer("bm25").fit(A)
    sweep(registry, queries[:5], {"mine": mine}, [1, 5], progress=False)
    noise_curve(registry, queries[:5], {"mine": mine}, [1, 3])
    assert mine.tool_names_ == [t.name for t in A]


# -- bug 2: discover with the default scorer on a request sharing nothing --------------------

@pytest.fixture(scope="module")
def workspace():
    return load_registry("data/registry.json")


@pytest.mark.parametrize("name", ["default", "fusion", "embedding", "bm25", "tfidf", "jaccard"])
def test_discover_finds_nothing_for_nonsense(workspace, name):
    chat = Selector(workspace, name, top_k=5).session()
    for nonsense in ("zzzz qqqq", "asdf jkl", "xyzzy plugh"):
        assert chat.discover(nonsense) is None
        assert chat.selector.search(nonsense, limit=5) == []
    assert chat.pinned == []  # nothing pinned for the rest of the conversation


def test_default_discover_still_finds_the_escape_hatch_tool(workspace):
    chat = Selector(workspace, "default", top_k=5).session()
    hit = chat.discover("I need to crunch some numbers but don't see a tool for that, can you "
                        "check?")
    assert hit is not None and hit.name == "calculator" and chat.pinned == ["calculator"]


def test_search_returns_only_matching_tools_best_first(workspace):
    sel = Selector(workspace, "default", top_k=5)
    scores, matches = sel.scorer.score_and_match(["file a bug report on the backend repo"])
    hits = sel.search("file a bug report on the backend repo", limit=10)
    idx = [workspace.index(t.name) for t in hits]
    assert all(matches[0, i] for i in idx)
    assert list(scores[0, idx]) == sorted(scores[0, idx], reverse=True)


# -- the engine ------------------------------------------------------------------------------

def test_engine_ranks_agree_with_selection_and_ranks_of(workspace):
    qs = load_queries("data/queries.jsonl", workspace)
    always = sorted(workspace.always_include, key=workspace.index)
    cands = Candidates.of(workspace, always)
    scorer = get_scorer("bm25").fit(workspace)
    texts = [q.query for q in qs]
    ranks = query_ranks(workspace, qs, scorer, always_include=always)
    for batch in rank_batches(scorer, texts, cands, batch_size=7):
        for b, qi in enumerate(range(batch.start, batch.stop)):
            req = cands.required(qs[qi])
            expect = ranks_of(batch.scores[b], req, ~cands.always)
            np.testing.assert_array_equal(ranks[qi], expect)
    sel = Selector(workspace, scorer, top_k=5, always_include=always)
    for q, r in zip(qs, ranks):
        sent = set(sel.select(q.query))
        for name, rank in zip([t for t in q.expected if t not in always], r):
            assert (name in sent) == (rank <= 5)


def test_scorer_items_checks_names_and_labels():
    with pytest.raises(ValueError, match="unknown scorer"):
        scorer_items(["bm25", "nope"])
    with pytest.raises(ValueError, match="unique"):
        scorer_items(["bm25", "bm25"])
    assert [k for k, _ in scorer_items({"x": "bm25", "y": get_scorer("bm25")})] == ["x", "y"]


def test_sweep_reports_cutoffs_past_the_registry_once():
    qs = [Query("q1", "weather in Paris", ("a_weather",))]
    result = sweep(A, qs, ["jaccard"], [1, 3, 5, 10], progress=False)
    assert list(result.summary["top_k"]) == [1, 3]
    assert result.notes and "5, 10" in result.notes[0]


# -- metrics, defined once -------------------------------------------------------------------

def test_metrics_by_hand():
    assert recall_at_k([1, 5, 12], 5) == pytest.approx(2 / 3)
    assert success_at_k([7, 9], 5) == 0.0 and complete_at_k([1, 5], 5) == 1.0
    assert reciprocal_rank([4, 2]) == 0.5
    out = evaluate([[1, 5, 12], [], [3]], [1, 5, 10])
    np.testing.assert_allclose(out["R@k"][0], [1 / 3, 2 / 3, 2 / 3])
    assert np.isnan(out["R@k"][1]).all() and np.isnan(out["RR"][1])  # zero-relevant: nan
    np.testing.assert_array_equal(out["Complete@k"][2], [0, 1, 1])


def test_metrics_agree_with_ir_measures_on_random_runs():
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import RR, R, Success
    rng = np.random.default_rng(0)
    ks = [1, 3, 5, 10]
    qrels, run, rank_lists = {}, {}, []
    for qi in range(300):
        n_docs = int(rng.integers(2, 40))
        docs = [f"d{j}" for j in range(n_docs)]
        scores = rng.permutation(n_docs).astype(float)  # distinct: no tie-breaking ambiguity
        n_rel = int(rng.integers(1, min(5, n_docs) + 1))
        rel = list(rng.choice(n_docs, n_rel, replace=False))
        qid = f"q{qi}"
        qrels[qid] = {docs[j]: 1 for j in rel}
        run[qid] = {docs[j]: float(scores[j]) for j in range(n_docs)}
        order = np.argsort(-scores, kind="stable")
        rank = np.empty(n_docs, int)
        rank[order] = np.arange(1, n_docs + 1)
        rank_lists.append(rank[rel])
    ours = evaluate(rank_lists, ks)
    measures = [R @ k for k in ks] + [Success @ k for k in ks] + [RR]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc(measures, qrels, run)}
    for qi in range(len(rank_lists)):
        qid = f"q{qi}"
        for j, k in enumerate(ks):
            assert ours["R@k"][qi, j] == pytest.approx(theirs[(qid, f"R@{k}")])
            assert ours["Success@k"][qi, j] == pytest.approx(theirs[(qid, f"Success@{k}")])
            # Complete@k has no ir-measures name: check it against its definition
            assert ours["Complete@k"][qi, j] == float(all(r <= k for r in rank_lists[qi]))
        assert ours["RR"][qi] == pytest.approx(theirs[(qid, "RR")])
