"""The LangChain middleware, through the real ``create_agent`` loop with a scripted model."""

from __future__ import annotations

import importlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

import toolsel.integrations.langchain as lc_module  # noqa: E402
from toolsel import Selector, Tool  # noqa: E402
from toolsel.integrations.langchain import PINNED_KEY, ToolSelectionMiddleware  # noqa: E402
from toolsel.integrations.langchain_scenario import (ARTICLE_SCRIPT, ARTICLE_TURNS,  # noqa: E402
                                                     ScriptedChatModel, article_tools,
                                                     run_article_scenario)


def _agent(script, *, checkpointer=None, tools=None, **middleware_kw):
    tools = tools or article_tools()
    model = ScriptedChatModel(script=script)
    kw = {"scorer": "jaccard", "top_k": 1, "always_include": (), **middleware_kw}
    middleware = ToolSelectionMiddleware(article_tools(), **kw)
    agent = create_agent(model, tools=tools, middleware=[middleware],
                         checkpointer=checkpointer or InMemorySaver())
    return agent, model


def _ask(agent, thread, text):
    return agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})


def test_article_scenario_2_2_3_tools_and_pinned_calculator():
    run = run_article_scenario()
    a_first = [c for c in run.first_calls() if c["thread"] == "A"]
    assert [c["n_tools"] for c in a_first] == [2, 2, 3]
    assert a_first[0]["tools"] == ["discover_tools", "weather_lookup"]
    assert "calculator" not in a_first[1]["tools"]  # zero overlap: the filter cannot find it
    assert a_first[2]["tools"] == ["calculator", "discover_tools", "translate_text"]
    # within turn 2, the call after discover_tools already sees the calculator
    after_discover = [c for c in run.calls if c["thread"] == "A" and c["turn"] == 2][1]
    assert after_discover["after_tool"] and "calculator" in after_discover["tools"]
    found = [m for m in run.messages["A"] if isinstance(m, ToolMessage)][1]
    assert found.name == "discover_tools"
    assert "calculator" in found.text and "rest of this conversation" in found.text
    assert run.pinned == {"A": ["calculator"], "B": []}
    # B asked what A asked in turn 3, after A's pin: it never saw the calculator
    b_calls = [c for c in run.calls if c["thread"] == "B"]
    assert b_calls and all(c["tools"] == ["discover_tools", "translate_text"] for c in b_calls)


def test_pins_live_in_checkpointed_state_not_in_the_middleware():
    saver = InMemorySaver()
    agent, _ = _agent(ARTICLE_SCRIPT, checkpointer=saver)
    _ask(agent, "t1", ARTICLE_TURNS[0])
    _ask(agent, "t1", ARTICLE_TURNS[1])
    # a fresh middleware and agent on the same checkpointer: the pin comes from the thread
    agent2, model2 = _agent(ARTICLE_SCRIPT, checkpointer=saver)
    out = _ask(agent2, "t1", ARTICLE_TURNS[2])
    assert out[PINNED_KEY] == ["calculator"]
    assert model2.calls[0]["tools"] == ["calculator", "discover_tools", "translate_text"]
    fresh = _ask(agent2, "t2", ARTICLE_TURNS[2])
    assert fresh.get(PINNED_KEY, []) == []
    assert model2.calls[-1]["tools"] == ["discover_tools", "translate_text"]


def test_two_threads_in_parallel_never_share_pins():
    agent, model = _agent(ARTICLE_SCRIPT)
    a_pinned = threading.Event()
    b_turns = ["translate goodbye to German", "what does AAPL trade at"]

    def thread_a():
        _ask(agent, "A", ARTICLE_TURNS[0])
        _ask(agent, "A", ARTICLE_TURNS[1])
        a_pinned.set()
        return _ask(agent, "A", ARTICLE_TURNS[2])

    def thread_b():
        assert a_pinned.wait(timeout=60)
        return [_ask(agent, "B", text) for text in b_turns]

    with ThreadPoolExecutor(max_workers=2) as pool:
        fa, fb = pool.submit(thread_a), pool.submit(thread_b)
        a_out, b_out = fa.result(), fb.result()
    assert a_out[PINNED_KEY] == ["calculator"]
    assert all(out.get(PINNED_KEY, []) == [] for out in b_out)
    state = agent.get_state({"configurable": {"thread_id": "B"}}).values
    assert state.get(PINNED_KEY, []) == []
    b_calls = [c for c in model.calls if c["query"] in b_turns]
    assert len(b_calls) == 2 and all("calculator" not in c["tools"] for c in b_calls)
    assert all(len(c["tools"]) == 2 for c in b_calls)


def test_discover_without_a_match_pins_nothing():
    script = {"hmm": [{"name": "discover_tools", "args": {"query": "zzz qqq"}}]}
    agent, _ = _agent(script)
    out = _ask(agent, "x", "hmm")
    assert out.get(PINNED_KEY, []) == []
    reply = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
    assert reply.text.startswith("No tool matches 'zzz qqq'")


def test_tools_outside_the_registry_pass_through():
    @tool
    def get_time() -> str:
        """Current time"""
        return "12:00"

    agent, model = _agent({}, tools=[*article_tools(), get_time])
    _ask(agent, "x", "translate hello to French")
    assert model.calls[0]["tools"] == ["discover_tools", "get_time", "translate_text"]


def test_middleware_accepts_a_selector_and_rejects_name_clashes():
    sel = Selector([Tool("a", "alpha"), Tool("b", "beta")], "jaccard", top_k=1)
    mw = ToolSelectionMiddleware(selector=sel, search_limit=2)
    assert mw.selected_names("beta", pinned=["a", "not_a_tool"]) == ["a", "b"]
    with pytest.raises(ValueError, match="already has a tool named"):
        ToolSelectionMiddleware([Tool("discover_tools", "x")])
    with pytest.raises(TypeError):
        ToolSelectionMiddleware()


async def _ainvoke(agent, text):
    return await agent.ainvoke({"messages": [HumanMessage(text)]},
                               {"configurable": {"thread_id": "async"}})


def test_async_agent_path_filters_the_same_way():
    import asyncio
    agent, model = _agent(ARTICLE_SCRIPT)
    asyncio.run(_ainvoke(agent, ARTICLE_TURNS[1]))
    out = asyncio.run(_ainvoke(agent, ARTICLE_TURNS[2]))
    assert out[PINNED_KEY] == ["calculator"]
    assert model.calls[-2]["tools"] == ["calculator", "discover_tools", "translate_text"]


# -- the postponed-annotations pitfall -------------------------------------------------------

_TOOL_MODULE = '''{future}
from pydantic import BaseModel
from langchain_core.tools import StructuredTool


class Args(BaseModel):
    query: str


def make_discover_tool(pins):
    from langchain.tools import ToolRuntime  # local import, as in a factory or middleware

    def discover_tools(query: str, runtime: ToolRuntime) -> str:
        """Search the full registry."""
        pins.append("calculator")
        return f"calculator is now available (call {{runtime.tool_call_id}})"

    return StructuredTool.from_function(discover_tools, args_schema=Args)
'''


def _tool_module(tmp_path, monkeypatch, name, future):
    (tmp_path / f"{name}.py").write_text(_TOOL_MODULE.format(future=future))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


def test_postponed_annotations_pitfall(tmp_path, monkeypatch):
    """With ``from __future__ import annotations`` a closure's ``runtime: ToolRuntime`` is a
    string LangChain cannot resolve: the tool builds and its schema looks right, but the
    parameter is not recognized as injected and the agent cannot be built. The same code with
    live annotations works through the agent loop, and so does the middleware's tool."""
    script = {"crunch": [{"name": "discover_tools", "args": {"query": "math"}}]}

    broken = _tool_module(tmp_path, monkeypatch, "tools_postponed",
                          "from __future__ import annotations")
    pins: list[str] = []
    bad_tool = broken.make_discover_tool(pins)
    assert list(bad_tool.tool_call_schema.model_json_schema()["properties"]) == ["query"]
    assert bad_tool._injected_args_keys == frozenset()  # runtime would never be injected
    with pytest.raises(NameError, match="ToolRuntime"):
        create_agent(ScriptedChatModel(script=script), tools=[bad_tool])
    assert pins == []

    live = _tool_module(tmp_path, monkeypatch, "tools_live", "")
    good_tool = live.make_discover_tool(pins)
    assert good_tool._injected_args_keys == frozenset({"runtime"})
    out = create_agent(ScriptedChatModel(script=script), tools=[good_tool]).invoke(
        {"messages": [HumanMessage("crunch")]})
    reply = [m for m in out["messages"] if isinstance(m, ToolMessage)][0]
    assert reply.status == "success" and reply.text.startswith("calculator is now available")
    assert pins == ["calculator"]

    # the middleware's discover tool is built the same way (a closure with args_schema), in a
    # module kept free of postponed annotations: runtime is injected, never model-visible
    source = open(lc_module.__file__).read()
    assert "\nfrom __future__ import annotations" not in source
    mw_tool = ToolSelectionMiddleware(article_tools(), scorer="jaccard").tools[0]
    assert mw_tool._injected_args_keys == frozenset({"runtime"})
    assert list(mw_tool.tool_call_schema.model_json_schema()["properties"]) == ["query"]
