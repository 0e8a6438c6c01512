"""The article's semantics (select_tools, discover) and the fitted Selector / Session."""

import threading

import pytest

from toolsel import DataError, Selector, Tool, discover, select_tools
from toolsel.selection import jaccard


def test_jaccard_by_hand(tiny):
    calc = tiny[3]  # tokens: calculator evaluate a basic arithmetic expression (6)
    assert jaccard(calc, {"evaluate", "an", "arithmetic", "expression"}) == 3 / 7
    assert jaccard(calc, set()) == 0.0
    assert jaccard(Tool("!!", "??"), {"x"}) == 0.0


def test_select_tools_registry_order_and_top_k(tiny):
    # "translate text to french": translate_text shares {translate, text} → best
    assert select_tools(tiny, "translate text to french", top_k=1) == ["translate_text"]
    got = select_tools(tiny, "stock price for a city", top_k=2)
    assert got == ["weather_lookup", "stock_price"]  # registry order, not score order


def test_select_tools_ties_keep_registry_order(tiny):
    # no token in common with any tool: all score 0, the first top_k in registry order win
    assert select_tools(tiny, "zzz", top_k=2) == ["weather_lookup", "stock_price"]


def test_select_tools_small_registry_is_a_no_op(tiny):
    assert select_tools(tiny, "anything", top_k=4) == [t.name for t in tiny]
    assert select_tools(tiny, "anything", top_k=10) == [t.name for t in tiny]


def test_always_include_and_pinned_sit_outside_k(tiny):
    got = select_tools(tiny, "weather in paris", top_k=1, always_include={"calculator"},
                       pinned={"stock_price"})
    assert got == ["weather_lookup", "stock_price", "calculator"]
    # an unknown name is ignored, as in the article
    assert select_tools(tiny, "weather", top_k=1, pinned={"nope"}) == ["weather_lookup"]


def test_pinned_tool_survives_an_unrelated_turn(tiny):
    got = select_tools(tiny, "translate hello to french", top_k=1, pinned={"calculator"})
    assert "calculator" in got and "translate_text" in got and len(got) == 2


def test_discover(tiny):
    assert discover(tiny, "evaluate an arithmetic expression").name == "calculator"
    assert discover(tiny, "I need to crunch some numbers") is None  # no overlap: no match
    assert discover([], "anything") is None


def test_custom_scorer_hook(tiny):
    def by_length(tool, query_tokens):
        assert isinstance(query_tokens, set)
        return len(tool.description)
    assert select_tools(tiny, "x", top_k=1, scorer=by_length) == ["calculator"]
    assert discover(tiny, "x", scorer=by_length).name == "calculator"


@pytest.mark.parametrize("top_k", [1, 3, 5, 10, 20, 30, 61])
def test_selector_matches_select_tools_on_the_benchmark(registry, queries, top_k):
    sel = Selector(registry, "jaccard", top_k=top_k, always_include=())
    always = {"read_file", "write_file"}
    sel_ai = Selector(registry, "jaccard", top_k=top_k, always_include=always)
    for q in queries:
        assert sel.select(q.query) == select_tools(registry, q.query, top_k=top_k)
        assert sel_ai.select(q.query, pinned={"calculator"}) == select_tools(
            registry, q.query, top_k=top_k, always_include=always, pinned={"calculator"})
        want = discover(registry, q.query)
        got = sel.discover(q.query)
        assert (got and got.name) == (want and want.name)


def test_selector_accepts_the_hook(tiny):
    sel = Selector(tiny, jaccard, top_k=1, always_include=())
    assert sel.select("translate text") == ["translate_text"]


def test_selector_defaults_to_marked_always_include(registry):
    sel = Selector(registry, "bm25", top_k=3)
    got = sel.select("weather in paris")
    assert registry.always_include <= set(got) and len(got) == 3 + len(registry.always_include)


def test_selector_errors(tiny):
    with pytest.raises(DataError, match="always_include 'calculater' is not a tool in the "
                                        "registry; did you mean 'calculator'"):
        Selector(tiny, "bm25", top_k=1, always_include=["calculater"])
    sel = Selector(tiny, "bm25", top_k=1)
    with pytest.raises(KeyError, match="pinned tool 'nope'"):
        sel.select("x", pinned={"nope"})
    with pytest.raises(ValueError, match="unknown scorer 'bm26'"):
        Selector(tiny, "bm26")
    with pytest.raises(ValueError, match="top_k"):
        Selector(tiny, top_k=-1)


def test_search_returns_only_matches_best_first(tiny):
    sel = Selector(tiny, "jaccard", top_k=1)
    hits = sel.search("city ticker", limit=3)
    assert [t.name for t in hits] == ["weather_lookup", "stock_price"]
    assert sel.search("zzz") == []


def test_sessions_pin_discoveries_and_never_share_them(tiny):
    sel = Selector(tiny, "jaccard", top_k=1, always_include=())
    a, b = sel.session(), sel.session()
    assert a.discover("evaluate an arithmetic expression").name == "calculator"
    assert a.pinned == ["calculator"] and b.pinned == []
    assert a.select("translate hello to french") == ["translate_text", "calculator"]
    assert b.select("translate hello to french") == ["translate_text"]
    assert a.discover("crunch some numbers") is None and a.pinned == ["calculator"]


def test_sessions_are_thread_safe(tiny):
    sel = Selector(tiny, "bm25", top_k=1, always_include=())
    sessions = [sel.session() for _ in range(8)]
    queries = ["weather city", "stock ticker", "translate language", "arithmetic expression"]

    def work(i):
        for _ in range(50):
            sessions[i].discover(queries[i % 4])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = ["weather_lookup", "stock_price", "translate_text", "calculator"]
    assert [s.pinned for s in sessions] == [[want[i % 4]] for i in range(8)]
