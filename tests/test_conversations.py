"""Conversation loading and validation, the context detector, and replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsel import DataError, Registry, Selector
from toolsel.cli import main
from toolsel.datasets import Conversation, Turn, load_conversations
from toolsel.tables.conversations import (DISCOVER_TOOL, detector_agreement,
                                          looks_context_dependent, replay, replay_summary,
                                          replay_table)
from toolsel.eval.metrics import count_tokens, definition_json

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def four(tiny):
    return Registry(tiny)  # weather_lookup, stock_price, translate_text, calculator


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


GOOD = {"id": "c1", "title": "t", "split": "dev", "turns": [
    {"user": "what's the weather in Paris", "expected": ["weather_lookup"]},
    {"user": "same for Rome", "expected": ["weather_lookup"], "context_dependent": True,
     "search_terms": ["weather"]},
    {"user": "thanks", "expected": []}]}


def test_load_conversations(tmp_path, four):
    convs = load_conversations(write_jsonl(tmp_path / "c.jsonl", [GOOD]), four)
    (c,) = convs
    assert c.id == "c1" and c.split == "dev" and len(c.turns) == 3
    assert c.turns[1] == Turn("same for Rome", ("weather_lookup",), ("weather",), True)
    assert c.turns[2].expected == ()


@pytest.mark.parametrize("change, where, field, reason", [
    (lambda r: r["turns"][1].update(expected=["weather_lookp"]), "turn 2", "expected",
     "did you mean 'weather_lookup'"),
    (lambda r: r["turns"][0].pop("user"), "turn 1", "user", "missing"),
    (lambda r: r["turns"][2].pop("expected"), "turn 3", "expected", "missing"),
    (lambda r: r["turns"][1].update(context_dependent="yes"), "turn 2", "context_dependent",
     "true or false"),
    (lambda r: r["turns"][0].update(search_terms=[""]), "turn 1", "search_terms",
     "non-empty strings"),
    (lambda r: r["turns"][0].update(tools=["x"]), "turn 1", "tools", "unknown key"),
    (lambda r: r.update(turns=[]), "conversation 'c1'", "turns", "non-empty list"),
    (lambda r: r.update(split="train"), "conversation 'c1'", "split", "'dev' or 'test'"),
    (lambda r: r["turns"][1].update(expected=["calculator", "calculator"]), "turn 2",
     "expected", "twice"),
])
def test_loader_errors_name_file_line_conversation_turn_field(tmp_path, four, change, where,
                                                              field, reason):
    rec = json.loads(json.dumps(GOOD))
    change(rec)
    path = write_jsonl(tmp_path / "bad.jsonl", [{"id": "c0", "turns": [
        {"user": "hi", "expected": []}]}, rec])
    with pytest.raises(DataError) as err:
        load_conversations(path, four)
    msg = str(err.value)
    assert str(path) in msg and "line 2" in msg and where in msg
    assert err.value.field == field and reason in msg


def test_loader_duplicate_id_and_bad_json(tmp_path, four):
    path = write_jsonl(tmp_path / "dup.jsonl", [GOOD, GOOD])
    with pytest.raises(DataError, match=r"line 2.*duplicate conversation id 'c1'"):
        load_conversations(path, four)
    bad = tmp_path / "broken.jsonl"
    bad.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(DataError, match="line 2"):
        load_conversations(bad, four)


def test_conversation_file(registry):
    convs = load_conversations(DATA / "conversations.jsonl", registry)
    assert len(convs) >= 20
    assert all(3 <= len(c.turns) <= 6 for c in convs)
    texts = {t.user.lower() for c in convs for t in c.turns if t.context_dependent}
    assert {"same for bob", "yes, do it"} <= texts
    assert sum(t.context_dependent for c in convs for t in c.turns) >= 30
    assert {c.split for c in convs} == {"dev", "test"}


@pytest.mark.parametrize("text, dependent", [
    ("do it", True), ("same for Bob", True), ("and MSFT?", True), ("what about Portland", True),
    ("move it to done", True), ("email them both links", True),
    ("what's the weather in Lisbon today?", False),
    ("is it going to rain in Seattle this weekend?", False),
    ("send a DM to Alice saying the deploy is done", False),
])
def test_looks_context_dependent(text, dependent):
    assert looks_context_dependent(text) is dependent


ARTICLE = Conversation("a", (
    Turn("what's the weather in Paris", ("weather_lookup",)),
    Turn("I need to crunch some numbers but don't see a tool for that, can you check?",
         ("calculator",), ("arithmetic",)),
    Turn("translate hello to French", ("translate_text",)),
))


def test_replay_filtered_reproduces_the_article_scenario(four):
    sel = Selector(four, "jaccard", top_k=1, always_include=())
    rp = replay(ARTICLE, sel, "filtered", policy="latest")
    assert [(r.turn, r.step) for r in rp.requests] == [(1, 0), (2, 0), (2, 1), (3, 0)]
    assert rp.requests[0].tools == ("weather_lookup", "discover_tools")
    # turn 2: zero overlap with calculator, so one discover call with "arithmetic" pins it
    t2 = rp.turns[1]
    assert t2.visible_at_start == () and t2.discover_calls == 1
    assert t2.discovered == ("calculator",) and t2.available == ("calculator",)
    assert "calculator" in rp.requests[2].tools
    # turn 3: the model sees calculator, discover_tools and translate_text
    assert sorted(rp.requests[3].tools) == ["calculator", "discover_tools", "translate_text"]
    assert rp.turns[2].pins == 1
    # the history: 3 user turns, 1 discover call + result, 3 assistant messages
    assert len(rp.requests[3].messages) == 3 + 2 + 2
    assert json.loads(rp.requests[2].messages[-1]) == {"tool_result": {"found": ["calculator"]}}


def test_replay_eager_and_deferred(four):
    sel = Selector(four, "jaccard", top_k=1, always_include=())
    eager = replay(ARTICLE, sel, "eager")
    assert all(r.tools == tuple(four.names) for r in eager.requests)
    assert len(eager.requests) == 3 and all(t.discover_calls == 0 for t in eager.turns)
    deferred = replay(ARTICLE, sel, "deferred", discover_limit=1)
    assert {r.tools for r in deferred.requests} == {(DISCOVER_TOOL.name,)}
    # every turn needs one discover call; loaded definitions go into the history
    assert [t.discover_calls for t in deferred.turns] == [1, 1, 1]
    assert [t.pins for t in deferred.turns] == [1, 2, 3]
    result = json.loads(deferred.requests[1].messages[-1])["tool_result"]
    assert result[0]["name"] == "weather_lookup" and "parameters" in result[0]


def test_pins_do_not_leak_between_replays(four):
    sel = Selector(four, "jaccard", top_k=1, always_include=())
    replay(ARTICLE, sel, "filtered", policy="latest")
    again = replay(ARTICLE, sel, "filtered", policy="latest")
    assert again.turns[0].pins == 0


def test_context_policy_keeps_previous_tools_visible(four):
    conv = Conversation("p", (Turn("stock price of ACME", ("stock_price",)),
                              Turn("and for Globex?", ("stock_price",), (), True)))
    sel = Selector(four, "jaccard", top_k=1, always_include=())
    # "and for Globex?": weather and stock tie on "for"; registry order picks weather
    latest = replay(conv, sel, "filtered", policy="latest")
    assert latest.turns[1].visible_at_start == () and latest.turns[1].discover_calls == 1
    for policy in ("carry_if_dependent", "carry_if_labeled"):
        carry = replay(conv, sel, "filtered", policy=policy)
        assert carry.turns[1].carried and carry.turns[1].discover_calls == 0
        assert carry.turns[1].visible_at_start == ("stock_price",)
        assert carry.requests[1].tools == ("weather_lookup", "stock_price", "discover_tools")


def test_replay_rejects_bad_arguments(four):
    sel = Selector(four, "jaccard", top_k=1)
    with pytest.raises(ValueError, match="strategy"):
        replay(ARTICLE, sel, "lazy")
    with pytest.raises(ValueError, match="policy"):
        replay(ARTICLE, sel, policy="always")


def test_replay_table_and_summary(four):
    sel = Selector(four, "jaccard", top_k=1, always_include=())
    reps = [replay(ARTICLE, sel, s, policy="latest") for s in ("eager", "filtered")]
    table = replay_table(reps)
    f = table[table.strategy == "filtered"].set_index("turn")
    assert list(f["discover_calls"]) == [0, 1, 0]
    assert f.loc[2, "recovered"] == 1.0 and f.loc[2, "available_at_start"] == 0.0
    assert f.loc[2, "n_requests"] == 2
    summary = replay_summary(table).set_index("strategy")
    assert summary.loc["eager", "reduction"] == 0.0
    assert summary.loc["filtered", "discover_calls"] == 1
    assert summary.loc["filtered", "recovered"] == 1 and summary.loc["filtered", "available"] == 1
    tok = {t.name: count_tokens(definition_json(t)) for t in [*four, DISCOVER_TOOL]}
    assert summary.loc["eager", "tools_tokens"] == 3 * sum(tok[n] for n in four.names)
    # four tools and top_k=1: the discover tool and the extra request cost more than the
    # filter saves (weather is turn 2's top-1 too: it ties stock on "for" and "a")
    d, w, c, t = (tok["discover_tools"], tok["weather_lookup"], tok["calculator"],
                  tok["translate_text"])
    assert summary.loc["filtered", "tools_tokens"] == (w + d) + (w + d) + (w + c + d) + (t + c + d)
    assert summary.loc["filtered", "tools_tokens"] > summary.loc["eager", "tools_tokens"]


def test_conversations_cli(tmp_path, capsys):
    code = main(["conversations", "--registry", str(DATA / "registry.json"),
                 "--conversations", str(DATA / "conversations.jsonl"), "--scorer", "bm25",
                 "--split", "test", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "cache write x1.25" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cost_totals.csv", "replay_summary.csv", "requests_cost.csv", "turns.csv"]


def test_conversations_cli_reports_data_errors(tmp_path, capsys):
    bad = write_jsonl(tmp_path / "c.jsonl", [{"id": "x", "turns": [
        {"user": "hi", "expected": ["calculater"]}]}])
    code = main(["conversations", "--registry", str(DATA / "registry.json"),
                 "--conversations", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "turn 1" in err and "'calculator'" in err


def test_detector_agreement_counts():
    conv = Conversation("d", (Turn("send a DM to Alice saying hi", (), (), False),
                              Turn("same for Bob", (), (), True),
                              Turn("forward the total to accounting", (), (), True),
                              Turn("what's the weather in Lisbon today and tomorrow", (), (),
                                   False)))
    got = detector_agreement([conv])
    assert (got["true_pos"], got["false_pos"], got["false_neg"], got["true_neg"]) == (1, 0, 1, 2)
    assert got["precision"] == 1.0 and got["recall"] == 0.5
