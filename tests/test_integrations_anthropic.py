"""Anthropic tool search: the built ``tools`` array, the client-side search, checked offline
against the SDK's own types and request code (a mock transport: nothing leaves the process)."""

from __future__ import annotations

import json

import pytest

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

from toolsel import Tool  # noqa: E402
from toolsel.integrations.anthropic import (SEARCH_TOOLS, ToolSearchError,  # noqa: E402
                                            ToolSearchHandler, build_tools, check_tools,
                                            sdk_type_for, validate_tool_result,
                                            validate_tools)

ARTICLE = [Tool("weather_lookup", "Get the current weather for a city"),
           Tool("stock_price", "Get the latest stock price for a ticker symbol"),
           Tool("translate_text", "Translate text into another language"),
           Tool("calculator", "Evaluate a basic arithmetic expression")]


def test_search_tool_types_are_the_sdks():
    from anthropic.types import (ToolSearchToolBm25_20251119Param,
                                 ToolSearchToolRegex20251119Param)
    for variant, cls in (("bm25", ToolSearchToolBm25_20251119Param),
                         ("regex", ToolSearchToolRegex20251119Param)):
        spec = SEARCH_TOOLS[variant]
        hints = cls.__annotations__
        assert spec["type"] in hints["type"].__forward_arg__  # the Literal the SDK declares
        assert spec["name"] in hints["name"].__forward_arg__
        assert sdk_type_for(spec) is cls


def test_build_tools_defers_all_but_search_always_include_and_selected(registry):
    tools = build_tools(registry, selected=["slack_send_dm", "github_create_issue"])
    assert tools[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    loaded = [t["name"] for t in tools if not t.get("defer_loading")]
    assert loaded == ["tool_search_tool_bm25", "read_file", "write_file", "list_directory",
                      "todo_write", "slack_send_dm", "github_create_issue"]
    assert len(tools) == len(registry) + 1
    assert sum(bool(t.get("defer_loading")) for t in tools) == len(registry) - 6
    assert all(t["defer_loading"] is True for t in tools if "defer_loading" in t)
    regex = build_tools(registry, search="regex", always_include=())
    assert regex[0]["type"] == "tool_search_tool_regex_20251119"
    assert [t["name"] for t in regex if not t.get("defer_loading")] == ["tool_search_tool_regex"]


def test_refuses_what_the_api_rejects(registry):
    with pytest.raises(ToolSearchError, match="deferred"):
        build_tools(registry, cache_control={"github_create_pr": {"type": "ephemeral"}})
    ok = build_tools(registry, cache_control={"read_file": {"type": "ephemeral"}})
    assert next(t for t in ok if t["name"] == "read_file")["cache_control"] == {
        "type": "ephemeral"}
    search = {**SEARCH_TOOLS["bm25"], "defer_loading": True}
    with pytest.raises(ToolSearchError, match="every tool is deferred"):
        check_tools([search, {"name": "a", "input_schema": {"type": "object"},
                              "defer_loading": True}])
    with pytest.raises(ToolSearchError, match="no search tool"):
        check_tools([{"name": "a", "input_schema": {"type": "object"}},
                     {"name": "b", "input_schema": {"type": "object"}, "defer_loading": True}])
    with pytest.raises(ToolSearchError, match="not in the registry; did you mean"):
        build_tools(registry, selected=["slack_send_dms"])
    with pytest.raises(ToolSearchError, match="already has a tool named"):
        build_tools([Tool("search_tools", "x"), Tool("b", "y")], search="custom")


def test_validation_uses_the_sdk_types():
    with pytest.raises(ToolSearchError, match="not in the SDK's ToolParam"):
        validate_tools([SEARCH_TOOLS["bm25"], {"name": "a", "input_schema": {"type": "object"},
                                               "deferred": True}])
    with pytest.raises(ToolSearchError, match="'defer_loading'.*ToolParam"):
        validate_tools([SEARCH_TOOLS["bm25"], {"name": "a", "input_schema": {"type": "object"},
                                               "defer_loading": "yes"}])
    with pytest.raises(ToolSearchError, match="ToolSearchToolRegex20251119Param"):
        validate_tools([{"type": "tool_search_tool_regex_20251119",
                         "name": "tool_search_tool_bm25"}])


def test_custom_search_returns_tool_references_to_deferred_tools(registry):
    tools = build_tools(registry, search="custom")
    handler = ToolSearchHandler(registry, tools, scorer="bm25", limit=3)
    result = handler({"type": "tool_use", "id": "toolu_1", "name": "search_tools",
                      "input": {"query": "create an issue in github"}})
    validate_tool_result(result)
    names = [c["tool_name"] for c in result["content"]]
    assert result["tool_use_id"] == "toolu_1" and len(names) == 3
    assert names[0] == "github_create_issue"
    assert all(c["type"] == "tool_reference" for c in result["content"])
    deferred = {t["name"] for t in tools if t.get("defer_loading")}
    assert set(names) <= deferred
    # always-include tools are loaded already: a search never returns them
    assert "read_file" not in handler.search("read a file", limit=50)
    none = handler({"id": "toolu_2", "name": "search_tools", "input": {"query": "zzzz qqqq"}})
    assert none["content"][0]["type"] == "text"
    validate_tool_result(none)
    bad = handler({"id": "toolu_3", "name": "search_tools", "input": {}})
    assert bad["is_error"] is True


def _mock_client(responses, seen):
    def handle(request):
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json=responses.pop(0))
    return anthropic.Anthropic(api_key="offline-test",
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
                               max_retries=0)


def _message(content, stop_reason):
    return {"id": "msg_x", "type": "message", "role": "assistant", "model": "claude-test",
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


def test_round_trip_through_the_sdks_request_code():
    """Two turns through ``client.messages.create``: the SDK parses our tools and our
    tool_result exactly as it would send them; a mock transport answers."""
    tools = build_tools(ARTICLE, selected=["weather_lookup"], always_include=(), search="custom")
    handler = ToolSearchHandler(ARTICLE, tools, scorer="jaccard")
    seen: list[dict] = []
    client = _mock_client([
        _message([{"type": "tool_use", "id": "toolu_9", "name": "search_tools",
                   "input": {"query": "arithmetic expression"}}], "tool_use"),
        _message([{"type": "text", "text": "340 / 12 is about 28.33"}], "end_turn"),
    ], seen)
    messages = [{"role": "user", "content": "I need to crunch some numbers"}]
    first = client.messages.create(model="claude-test", max_tokens=64, messages=messages,
                                   tools=tools)
    assert seen[0]["tools"] == tools
    (tool_use,) = [b for b in first.content if b.type == "tool_use"]
    result = handler(tool_use)  # the SDK's ToolUseBlock goes straight in
    assert result["content"] == [{"type": "tool_reference", "tool_name": "calculator"}]
    messages += [{"role": "assistant", "content": first.content},
                 {"role": "user", "content": [result]}]
    client.messages.create(model="claude-test", max_tokens=64, messages=messages, tools=tools)
    assert seen[1]["messages"][-1]["content"] == [result]
    assert seen[1]["tools"] == tools  # the tools list never changes: the prompt cache holds


def test_describe_tools_counts_loaded_and_deferred():
    from toolsel.integrations.anthropic import describe_tools
    tools = build_tools(ARTICLE, selected=["calculator"], always_include=())
    table = describe_tools(tools)
    assert list(table["name"]) == ["tool_search_tool_bm25", *[t.name for t in ARTICLE]]
    assert list(table["kind"]) == ["search", "custom", "custom", "custom", "custom"]
    assert list(table["deferred"]) == [False, True, True, True, False]
    assert table["definition_chars"].iloc[0] == len(
        '{"name":"tool_search_tool_bm25","type":"tool_search_tool_bm25_20251119"}')
