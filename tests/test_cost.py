"""The prefix-cache model and cost, on hand-computed requests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from toolsel import Registry, Selector
from toolsel.datasets import Conversation, Turn
from toolsel.tables.conversations import replay
from toolsel.report.plots import plot_conversation_requests, plot_cost
from toolsel.tables.cost import (Block, CacheUsage, Prices, cost_sensitivity, cost_table, cost_totals,
                                 fewer_tokens_cost_more, prefix_cache_usage, request_blocks)
from toolsel.eval.metrics import count_tokens

DATA = Path(__file__).resolve().parents[1] / "data"

TOK = {"T1": 600, "T2": 500, "T3": 400, "S": 100, "U1": 50, "A1": 10, "U2": 30, "A2": 10,
       "U3": 20}


def request(tools, messages):
    """Blocks as request_blocks lays them out: tools, system (breakpoint), messages (the last
    one a breakpoint)."""
    blocks = [Block(t, TOK[t]) for t in tools] + [Block("S", TOK["S"], True)]
    return blocks + [Block(m, TOK[m], i == len(messages) - 1) for i, m in enumerate(messages)]


# a three-turn conversation; each turn appends the previous answer and a new user message
TURNS = [["U1"], ["U1", "A1", "U2"], ["U1", "A1", "U2", "A2", "U3"]]


def test_eager_three_turns_by_hand():
    reqs = [request(["T1", "T2"], m) for m in TURNS]
    usage = prefix_cache_usage(reqs, min_cacheable=1024)
    # request 1: 1250 tokens, all written (breakpoints at 1200 and 1250)
    # request 2: reads request 1's whole prompt (1250), writes A1 + U2 (40)
    # request 3: reads request 2's whole prompt (1290), writes A2 + U3 (30)
    assert usage == [CacheUsage(0, 1250, 0), CacheUsage(0, 40, 1250), CacheUsage(0, 30, 1290)]
    cost = sum(Prices().cost(u.uncached, u.cache_write, u.cache_read) for u in usage)
    assert cost == pytest.approx(1320 * 1.25 + 2540 * 0.1)  # 1904


def test_filtered_three_turns_by_hand_fewer_tokens_cost_more():
    tools = [["T1", "T3"], ["T2", "T3"], ["T1", "T3"]]
    reqs = [request(t, m) for t, m in zip(tools, TURNS)]
    usage = prefix_cache_usage(reqs, min_cacheable=1024)
    # request 2 changes the tools: nothing matches; its tools+system prefix (1000) is below
    # the minimum, so only the whole prompt (1090) is written.
    # request 3 has request 1's tools again: request 1's whole prompt (1150) is read.
    assert usage == [CacheUsage(0, 1150, 0), CacheUsage(0, 1090, 0), CacheUsage(0, 70, 1150)]
    tokens = sum(u.total for u in usage)
    cost = sum(Prices().cost(u.uncached, u.cache_write, u.cache_read) for u in usage)
    assert tokens == 3460 < 1250 + 1290 + 1320
    assert cost == pytest.approx(2310 * 1.25 + 1150 * 0.1) and cost > 1904


def test_short_prompts_are_not_cached():
    reqs = [request(["T3"], m) for m in TURNS]  # 550, 590, 620 tokens
    usage = prefix_cache_usage(reqs, min_cacheable=1024)
    assert usage == [CacheUsage(550, 0, 0), CacheUsage(590, 0, 0), CacheUsage(620, 0, 0)]
    # with no minimum, the same requests cache like the eager ones
    usage = prefix_cache_usage(reqs, min_cacheable=0)
    assert usage == [CacheUsage(0, 550, 0), CacheUsage(0, 40, 550), CacheUsage(0, 30, 590)]


def test_prices():
    assert Prices().cost(1000, 100, 1000) == pytest.approx(1000 + 125 + 100)
    assert Prices(cache_write=2.0, cache_read=0.5).cost(0, 10, 10) == pytest.approx(25)
    assert Prices(input=3.0).cost(1, 1, 1) == pytest.approx(3 + 3.75 + 0.3)


def test_request_blocks_counts_exact_tokens():
    blocks = request_blocks(["a"], ["hello there", "general kenobi"], "be brief",
                            count_tokens, lambda n: '{"name":"a"}')
    assert [b.tokens for b in blocks] == [count_tokens('{"name":"a"}'), count_tokens("be brief"),
                                          count_tokens("hello there"),
                                          count_tokens("general kenobi")]
    assert [b.breakpoint for b in blocks] == [False, True, False, True]


def test_cost_table_on_a_replay(tiny):
    reg = Registry(tiny)
    conv = Conversation("c", (Turn("weather in Paris", ("weather_lookup",)),
                              Turn("and the stock price of ACME", ("stock_price",)),
                              Turn("translate hello to French", ("translate_text",))))
    sel = Selector(reg, "jaccard", top_k=1, always_include=())
    reps = [replay(conv, sel, s, policy="latest") for s in ("eager", "filtered", "deferred")]
    table = cost_table(reps, system_prompt="be brief", min_cacheable=0)
    assert (table["input_tokens"] == table["tools_tokens"] + table["system_tokens"]
            + table["message_tokens"]).all()
    assert (table["input_tokens"] == table["uncached"] + table["cache_write"]
            + table["cache_read"]).all()
    eager = table[table.strategy == "eager"].reset_index(drop=True)
    # with a stable prefix, each request reads the whole previous request
    assert list(eager["cache_read"][1:]) == list(eager["input_tokens"][:-1])
    deferred = table[table.strategy == "deferred"].reset_index(drop=True)
    assert list(deferred["cache_read"][1:]) == list(deferred["input_tokens"][:-1])
    filtered = table[table.strategy == "filtered"]
    assert (filtered["cache_read"] == 0).all()  # the top-1 changes every turn
    totals = cost_totals(table).set_index("strategy")
    assert totals.loc["eager", "n_requests"] == 3
    assert totals.loc["eager", "cost"] == pytest.approx(
        1.25 * totals.loc["eager", "cache_write"] + 0.1 * totals.loc["eager", "cache_read"])


def test_fewer_tokens_cost_more_table():
    rows = [("c1", "eager", 1000, 300.0), ("c1", "filtered", 400, 500.0),
            ("c2", "eager", 1000, 300.0), ("c2", "filtered", 400, 200.0)]
    table = pd.DataFrame([{"conversation_id": c, "strategy": s, "policy": "",
                           "input_tokens": t, "tools_tokens": 0, "uncached": 0,
                           "cache_write": 0, "cache_read": 0, "cost": cost,
                           "cost_no_cache": t} for c, s, t, cost in rows])
    out = fewer_tokens_cost_more(table)
    assert list(out["conversation_id"]) == ["c1"]
    assert out.iloc[0]["token_saving"] == pytest.approx(0.6)
    assert out.iloc[0]["extra_cost"] == pytest.approx(500 / 300 - 1)


def test_cost_sensitivity_and_plots(tiny):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    reg = Registry(tiny)
    conv = Conversation("c", (Turn("weather in Paris", ("weather_lookup",)),
                              Turn("translate hello to French", ("translate_text",))))
    sel = Selector(reg, "jaccard", top_k=1, always_include=())
    reps = [replay(conv, sel, s, policy="latest") for s in ("eager", "filtered", "deferred")]
    sens = cost_sensitivity(reps, prices=[Prices(), Prices(cache_write=2.0)],
                            min_cacheable=[0, 10_000])
    assert len(sens) == 2 * 2 * 3
    assert (sens.loc[sens.strategy == "eager", "cost_vs_eager"] == 1).all()
    # nothing reaches 10,000 tokens: no caching, cost equals the token count
    never = sens[sens.min_cacheable == 10_000]
    assert (never["cost"] == never["input_tokens"]).all()
    table = cost_table(reps, min_cacheable=0)
    fig = plot_cost(cost_totals(table))
    assert "tokens" in fig.axes[0].get_ylabel() and fig.axes[0].get_legend() is not None
    fig = plot_conversation_requests(table, "c")
    assert len(fig.axes) == 3 and "tokens" in fig.axes[0].get_ylabel()
    matplotlib.pyplot.close("all")
