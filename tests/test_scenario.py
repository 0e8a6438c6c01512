"""The article's escape-hatch scenario, and the escape-hatch analysis on a hand-checked set."""

import pytest

from toolsel import Query, Tool
from toolsel.eval.metrics import payload_chars
from toolsel.tables.scenario import (DISCOVER_TOOL, Turn, article_scenario, escape_hatch,
                              run_scenario, scenario_table)


def test_article_scenario_on_the_benchmark_registry(registry):
    turns = article_scenario(registry)
    assert [len(t.sent) for t in turns] == [2, 2, 3]
    assert turns[0].sent == ("discover_tools", "weather_lookup")
    assert turns[1].discovered == "calculator" and turns[1].requests == 2
    assert "available for the rest of this conversation" in turns[1].tool_result
    assert turns[2].sent == ("calculator", "discover_tools", "translate_text")
    assert [list(t.pinned) for t in turns] == [[], ["calculator"], ["calculator"]]
    table = scenario_table(turns)
    assert list(table["n_tools_seen"]) == [2, 2, 3]
    assert table.loc[2, "pinned_after"] == "calculator"


def test_article_scenario_on_the_tiny_tools(tiny):
    turns = article_scenario(tiny)
    assert [len(t.sent) for t in turns] == [2, 2, 3]
    assert list(turns[-1].pinned) == ["calculator"]


def test_payload_counts_every_request(tiny):
    turns = run_scenario(tiny, [Turn("weather", discover_query="arithmetic")], top_k=1)
    (t,) = turns
    first = payload_chars([tiny[0], DISCOVER_TOOL])
    assert t.payload_chars == first + first + payload_chars([tiny[3]])


def test_no_match_is_said_and_nothing_is_pinned(tiny):
    (t,) = run_scenario(tiny, [Turn("weather", discover_query="zzz")], top_k=1)
    assert t.discovered is None and t.pinned == ()
    assert "No tool matches" in t.tool_result


def test_discover_tool_name_clash_is_an_error(tiny):
    with pytest.raises(ValueError, match="discover_tools"):
        run_scenario([*tiny, Tool("discover_tools", "x")], [Turn("hi")])


def test_escape_hatch_by_hand(tiny):
    # tiny = weather_lookup, stock_price, translate_text, calculator; K=1
    qs = [Query("a", "translate text", ("translate_text",)),                # hit
          Query("b", "crunch numbers", ("calculator",), search_term="arithmetic"),
          Query("c", "latest weather", ("stock_price",), search_term="zzz")]
    h = escape_hatch(tiny, qs, ["jaccard"], top_k=1)
    m = h.misses.set_index("query_id")
    assert list(m.index) == ["b", "c"]
    # b: every score is 0, so weather_lookup is sent; the literal discover finds nothing
    assert m.loc["b", "rank"] == 4 and m.loc["b", "literal_hit"] == ""
    assert m.loc["b", "search_term_hit"] == "calculator" and m.loc["b", "search_term_recovered"]
    # c: 'latest' is in stock_price's text, 'weather' wins the filter; unseen search finds it
    assert m.loc["c", "literal_hit"] == "weather_lookup" and not m.loc["c", "literal_recovered"]
    assert m.loc["c", "literal_unseen_hit"] == "stock_price"
    assert m.loc["c", "literal_unseen_recovered"]
    assert m.loc["c", "search_term_hit"] == ""
    s = h.summary.iloc[0]
    assert (s.misses, s.queries_with_miss) == (2, 2)
    assert (s.recovered_literal, s.recovered_literal_unseen, s.recovered_search_term) == (0, 1, 1)
    assert s["Complete@k"] == pytest.approx(1 / 3)
    assert s.Complete_after_search_term == pytest.approx(2 / 3)
    d = payload_chars([DISCOVER_TOOL])
    w, st, tr, calc = (payload_chars([t]) for t in tiny)
    base = tr + w + w  # what the filter sends for a, b, c
    assert s.payload_chars == pytest.approx(base / 3)
    # search term: b makes a second request with calculator; c's search finds nothing
    assert s.payload_chars_search_term == pytest.approx(
        (base + 3 * d + (w + d + calc) + (w + d)) / 3)


def test_literal_discover_never_recovers_on_the_benchmark(registry, queries):
    h = escape_hatch(registry, queries, ["jaccard", "bm25"], top_k=10)
    assert (h.summary["recovered_literal"] == 0).all()
    j = h.summary.set_index("scorer").loc["jaccard"]
    assert j.misses == 16 and j.recovered_search_term == 9
    assert j.payload_reduction_search_term < j.payload_reduction


def test_escape_hatch_leaves_out_requests_needing_only_always_include_tools(tiny):
    # calculator is always-include: sent on every turn, so query b has nothing for the
    # filter to find and is left out of Complete@k (the metrics' zero-relevant policy), as
    # it is out of the sweep's; d needs it and a filtered tool, so it counts
    qs = [Query("a", "translate text", ("translate_text",)),                # hit
          Query("b", "crunch numbers", ("calculator",)),                    # always-include
          Query("c", "latest weather", ("stock_price",), search_term="zzz"),  # miss
          Query("d", "translate text", ("translate_text", "calculator"))]     # hit
    h = escape_hatch(tiny, qs, ["jaccard"], top_k=1, always_include=["calculator"])
    s = h.summary.iloc[0]
    assert s.n_queries == 3  # a, c, d
    assert list(h.misses["query_id"]) == ["c"]
    assert s["Complete@k"] == pytest.approx(2 / 3)
    # c's search term finds nothing; the unseen-only search with its words finds stock_price
    assert s.Complete_after_search_term == pytest.approx(2 / 3)
    assert s.Complete_after_literal_unseen == pytest.approx(1.0)
    # payload is still averaged over every query, b included
    w, st, tr, calc = (payload_chars([t]) for t in tiny)
    assert s.payload_chars == pytest.approx((calc + tr + calc + w + calc + w + calc + tr) / 4)


def test_escape_hatch_complete_at_k_is_the_sweeps(registry, queries):
    from toolsel.eval.sweep import sweep
    always = sorted(registry.always_include)
    # a request of the benchmark needs only always-include tools: the case this checks
    assert any(set(q.expected) <= set(always) for q in queries)
    h = escape_hatch(registry, queries, ["jaccard", "bm25"], top_k=5, always_include=always)
    sw = sweep(registry, queries, ["jaccard", "bm25"], [5], always_include=always,
               progress=False).summary.set_index("scorer")
    for _, row in h.summary.iterrows():
        assert row["Complete@k"] == pytest.approx(sw.loc[row.scorer, "Complete@k"])
        assert row["n_queries"] == sw.loc[row.scorer, "n_queries"]
        assert row["Complete_after_search_term"] >= row["Complete@k"]
