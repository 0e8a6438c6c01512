"""``toolsel serve``: the MCP SDK's own client against the gateway over stdio and streamable
HTTP, in front of MCP servers that really run (the notes server written with the SDK in
tests/mcp_servers, mcp-server-time from PyPI): searches, forwarded calls, errors passed on,
pins per conversation, an upstream killed mid-session, and the traffic log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT
from mcp_servers import PY, child_env, notes_command, notes_over_http, time_command

mcp = pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")
pytestmark = pytest.mark.slow

from mcp import Client, MCPError, StdioServerParameters  # noqa: E402


def _serve_params(*args, cwd=None) -> StdioServerParameters:
    """How an MCP client starts the gateway: a command and its arguments."""
    return StdioServerParameters(command=PY, args=["-m", "toolsel.cli", "serve", *map(str, args)],
                                 env=child_env(), cwd=str(cwd) if cwd else None)


def _names(result) -> list[str]:
    return [t["name"] for t in result.structured_content["tools"]]


async def _direct(command: str, tool: str, arguments: dict):
    """The same call made straight to the server, without the gateway."""
    import shlex
    argv = shlex.split(command)
    async with Client(StdioServerParameters(command=argv[0], args=argv[1:])) as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
        return listed, await c.call_tool(tool, arguments)


def test_search_and_forwarded_calls_over_stdio(tmp_path):
    log = tmp_path / "traffic.jsonl"

    async def main():
        params = _serve_params(time_command(), notes_command("--test-tools"), "--scorers",
                               "bm25", "--top-k", "2", "--log", log)
        async with Client(params) as c:
            assert c.server_info.name == "toolsel"
            assert [t.name for t in (await c.list_tools()).tools] == ["search_tools",
                                                                      "call_tool"]
            found = await c.call_tool("search_tools", {"query": "what time is it in Tokyo"})
            assert not found.is_error
            assert json.loads(found.content[0].text) == found.structured_content
            assert _names(found) == ["get_current_time", "convert_time"]
            listed, direct = await _direct(time_command(), "get_current_time",
                                           {"timezone": "Asia/Tokyo"})
            sent = found.structured_content["tools"][0]
            # the full definition, as the server lists it
            assert sent == listed["get_current_time"].model_dump(mode="json", by_alias=True,
                                                                 exclude_none=True)
            got = await c.call_tool("call_tool", {"name": "get_current_time",
                                                  "arguments": {"timezone": "Asia/Tokyo"}})
            assert not got.is_error
            assert got.structured_content["timezone"] == "Asia/Tokyo"
            assert set(got.structured_content) == set(direct.structured_content)
            assert got.structured_content["day_of_week"] in (
                direct.structured_content["day_of_week"], got.structured_content["day_of_week"])
            # state lives in the upstream process the gateway keeps
            await c.call_tool("call_tool", {"name": "add_note", "arguments": {
                "title": "standup", "text": "move it to ten"}})
            hits = await c.call_tool("call_tool", {"name": "search_notes",
                                                   "arguments": {"words": "ten"}})
            assert hits.structured_content == {"result": ["standup"]}
            # the upstream's error result, as it is
            _, direct_fail = await _direct(notes_command("--test-tools"), "fail",
                                           {"message": "boom"})
            failed = await c.call_tool("call_tool", {"name": "fail",
                                                     "arguments": {"message": "boom"}})
            assert failed.is_error and failed.content == direct_fail.content
            # the upstream's MCP error, as the same MCP error
            with pytest.raises(MCPError) as err:
                await c.call_tool("call_tool", {"name": "protocol_error", "arguments": {
                    "code": -32010, "message": "quota exceeded"}})
            assert (err.value.code, err.value.message, err.value.data) == (
                -32010, "quota exceeded", {"from": "notes"})
            # a name no server has: an error result naming it, and the gateway goes on
            wrong = await c.call_tool("call_tool", {"name": "add_notes", "arguments": {}})
            assert wrong.is_error and "no tool named 'add_notes'" in wrong.content[0].text
            assert "add_note" in wrong.content[0].text
            bad = await c.call_tool("search_tools", {"query": "  "})
            assert bad.is_error and "'query'" in bad.content[0].text

    anyio.run(main)
    lines = log.read_text().splitlines()
    assert lines[0] == "// written by toolsel serve"
    records = [json.loads(x) for x in lines[1:]]
    assert records[0]["event"] == "start" and records[0]["servers"] == ["mcp-time", "notes"]
    assert records[1] == {"event": "search", "session": "default", "search": 1,
                          "query": "what time is it in Tokyo",
                          "sent": ["get_current_time", "convert_time"],
                          "run": records[0]["run"]}
    calls = [(r["tool"], r["ok"]) for r in records if r["event"] == "call"]
    assert calls == [("get_current_time", True), ("add_note", True), ("search_notes", True),
                     ("fail", False), ("protocol_error", False)]
    assert all(r["search"] == 1 for r in records if r["event"] == "call")


def test_pins_are_per_conversation_and_always_include_is_always_sent(tmp_path):
    async def main():
        params = _serve_params(time_command(), notes_command("--test-tools"), "--scorers",
                               "bm25", "--top-k", "1", "--always-include", "server_pid")
        async with Client(params) as c:
            first = await c.call_tool("search_tools", {"query": "save a note about lunch",
                                                       "session": "a"})
            assert _names(first) == ["add_note", "server_pid"]
            await c.call_tool("call_tool", {"name": "add_note", "session": "a", "arguments": {
                "title": "lunch", "text": "noon"}})
            a = await c.call_tool("search_tools", {"query": "time in Paris", "session": "a"})
            b = await c.call_tool("search_tools", {"query": "time in Paris", "session": "b"})
            assert a.structured_content["pinned"] == ["add_note"]
            assert "add_note" in _names(a) and "add_note" not in _names(b)
            assert b.structured_content["pinned"] == []
            assert "server_pid" in _names(a) and "server_pid" in _names(b)

    anyio.run(main)


def _start_http_gateway(*args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([PY, "-m", "toolsel.cli", "serve", "--transport", "http", "--port",
                             "0", *map(str, args)], stderr=subprocess.PIPE, text=True, cwd=cwd,
                            env=env)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("listening on "):
            return proc, line.split()[-1], seen
    raise AssertionError("the gateway did not start: " + "".join(seen))


def test_streamable_http_gateway_in_front_of_an_http_and_a_stdio_server(tmp_path):
    with notes_over_http("--name", "web") as (notes_url, _):
        proc, url, seen = _start_http_gateway(notes_url, time_command(), "--scorers", "bm25",
                                              "--top-k", "2", cwd=tmp_path)
        try:
            assert any(f"{notes_url}: web: 3 tools over streamable HTTP" in s for s in seen)

            async def main():
                async with Client(url) as c:
                    found = await c.call_tool("search_tools", {"query": "delete the note"})
                    assert "delete_note" in _names(found)
                    await c.call_tool("call_tool", {"name": "add_note", "arguments": {
                        "title": "a", "text": "b"}})
                    gone = await c.call_tool("call_tool", {"name": "delete_note",
                                                           "arguments": {"title": "a"}})
                    assert not gone.is_error and "deleted note 'a'" in gone.content[0].text
                    got = await c.call_tool("call_tool", {"name": "get_current_time",
                                                          "arguments": {"timezone": "UTC"}})
                    assert got.structured_content["timezone"] == "UTC"

            anyio.run(main)
        finally:
            proc.send_signal(signal.SIGINT)  # Ctrl-C: the CLI's quiet exit, status 130
            rest = proc.stderr.read()
            proc.wait(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in rest


async def _kill_upstream(c) -> int:
    """Kill the notes server behind the gateway ``c`` (SIGKILL) and wait until it is gone."""
    pid = (await c.call_tool("call_tool", {"name": "server_pid"})).structured_content["result"]
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):  # reaped by the gateway's SDK transport, or gone
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        if open(f"/proc/{pid}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.05)
    return pid


def test_an_upstream_killed_mid_session_is_started_again_on_the_next_call(tmp_path):
    async def main():
        params = _serve_params(notes_command("--test-tools"), time_command(), "--scorers",
                               "bm25")
        async with Client(params) as c:
            first = await _kill_upstream(c)
            # the call that finds it gone is an error result (it is never sent twice: a tool
            # may have acted before its server died) ...
            lost = await c.call_tool("call_tool", {"name": "add_note", "arguments": {
                "title": "x", "text": "y"}})
            assert lost.is_error and "its connection closed" in lost.content[0].text
            assert "the next call of its tools starts it again" in lost.content[0].text
            # ... and the next call of its tools starts the server again and goes through
            done = await c.call_tool("call_tool", {"name": "add_note", "arguments": {
                "title": "x", "text": "y"}})
            assert not done.is_error, done.content[0].text
            again = await c.call_tool("call_tool", {"name": "server_pid"})
            assert not again.is_error and again.structured_content["result"] != first
            found = await c.call_tool("search_tools", {"query": "what time is it"})
            assert not found.is_error and "get_current_time" in _names(found)

    anyio.run(main)


def test_an_upstream_that_cannot_start_again_is_named_and_the_gateway_stays_up(tmp_path):
    once = tmp_path / "started"

    async def main():
        params = _serve_params(notes_command("--test-tools", "--start-once", str(once)),
                               time_command(), "--scorers", "bm25")
        async with Client(params) as c:
            await _kill_upstream(c)
            lost = await c.call_tool("call_tool", {"name": "add_note", "arguments": {
                "title": "x", "text": "y"}})
            assert lost.is_error and "its connection closed" in lost.content[0].text
            down = await c.call_tool("call_tool", {"name": "add_note", "arguments": {
                "title": "x", "text": "y"}})
            assert down.is_error
            text = down.content[0].text
            assert text.startswith("server 'notes' (") and "is not answering" in text
            assert "started once already" in text  # why the new start failed, from its stderr
            assert "starts it again (at most once every 30 s" in text
            assert "the other servers' tools still work" in text
            # within 30 s no new start is tried: the same answer, at once
            t0 = time.monotonic()
            again = await c.call_tool("call_tool", {"name": "search_notes",
                                                    "arguments": {"words": "x"}})
            assert again.is_error and "server 'notes'" in again.content[0].text
            assert time.monotonic() - t0 < 5
            # the gateway is up: searches and the other server's calls work
            found = await c.call_tool("search_tools", {"query": "what time is it"})
            assert not found.is_error and "get_current_time" in _names(found)
            ok = await c.call_tool("call_tool", {"name": "get_current_time",
                                                 "arguments": {"timezone": "UTC"}})
            assert not ok.is_error

    anyio.run(main)


def _run_cli(*args, cwd, timeout=120):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([PY, "-m", "toolsel.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_the_log_appends_only_to_its_own_earlier_log(tmp_path):
    log = tmp_path / "traffic.jsonl"

    async def once(query):
        async with Client(_serve_params(notes_command(), "--scorers", "bm25", "--log", log)) as c:
            await c.call_tool("search_tools", {"query": query})

    anyio.run(once, "add a note")
    anyio.run(once, "find my notes")
    lines = log.read_text().splitlines()
    assert lines.count("// written by toolsel serve") == 1 and lines[0].startswith("//")
    records = [json.loads(x) for x in lines[1:]]
    assert [r["event"] for r in records] == ["start", "search", "start", "search"]
    assert records[0]["run"] != records[2]["run"]
    # a file toolsel serve did not write: refused before any server starts, left as it was
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes\n")
    other = tmp_path / "queries.jsonl"
    other.write_text("// written by toolsel import\n{}\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    for target in (mine, other, link):
        before = target.read_bytes()
        proc = _run_cli("serve", notes_command(), "--log", target, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert str(target.name) in proc.stderr and "toolsel serve appends only" in proc.stderr
        assert "notes: 3 tools" not in proc.stderr
        assert target.read_bytes() == before


def test_bad_selection_arguments_fail_before_any_server_starts(tmp_path):
    (tmp_path / "m.json").write_text("{}")
    for args, said in ((["--scorers", "nope"], "nope"),
                       (["--top-k", "3,5"], "one K"),
                       (["--scorers", "bm25,tfidf"], "one scorer"),
                       (["--policy", "threshold:wrong=1"], "threshold:wrong=1"),
                       (["--model", "m.json"], "m.json")):
        proc = _run_cli("serve", notes_command(), *args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert said in proc.stderr and "notes: 3 tools" not in proc.stderr
