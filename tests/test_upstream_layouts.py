"""Upstream files as downloaded (issue 38): BFCL's data folder in one command, valid JSON of an
unknown shape named as such, server lists with nested tool lists. The fixtures are written by
the tests in the upstream shapes (quirks included) with made-up content, and imported through
the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from toolsel import load_queries, load_registry


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolsel.cli", *args], cwd=cwd,
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def _turn(text: str) -> list[list[dict]]:
    return [[{"role": "user", "content": text}]]


def _fn(name: str, description: str, **props: dict) -> dict:
    return {"name": name, "description": description,
            "parameters": {"type": "dict", "properties": props, "required": list(props)[:1]}}


# -- BFCL v4's data folder -------------------------------------------------------------------

def write_bfcl_folder(root: Path) -> Path:
    """A BFCL v4 data folder in upstream's layout: JSONL question files, possible_answer/,
    multi_turn_func_doc/, a pretty-printed format_sensitivity file, and the quirks."""
    data = root / "data"
    _jsonl(data / "BFCL_v4_simple_python.json", [
        {"id": "simple_python_0", "question": _turn("Area of a triangle of base 4 and height 3?"),
         "function": [_fn("geometry.triangle_area", "Area of a triangle.",
                          base={"type": "integer"}, height={"type": "float"})]},
        {"id": "simple_python_1", "question": _turn("Roll two dice for me."),
         "function": [_fn("dice.roll", "Roll dice.", count={"type": "integer"})]}])
    _jsonl(data / "BFCL_v4_simple_javascript.json", [
        # simple_javascript_23 upstream: a parameter whose type is the empty string
        {"id": "simple_javascript_23", "question": _turn("Debounce the save handler by 300 ms."),
         "function": [_fn("debounceHandler", "Wrap a handler in a debounce.",
                          handler={"type": "", "description": "the function to wrap"},
                          wait={"type": "integer"})]}])
    _jsonl(data / "BFCL_v4_multiple.json", [
        {"id": "multiple_0", "question": _turn("Convert 20 euros to yen."),
         "function": [_fn("currency.convert", "Convert an amount between currencies.",
                          amount={"type": "float"}),
                      _fn("currency.rates", "List exchange rates.", base={"type": "string"})]}])
    _jsonl(data / "BFCL_v4_live_irrelevance.json", [
        {"id": "live_irrelevance_0-0-0", "question": _turn("Tell me a joke."),
         "function": [_fn("get_stock", "Stock price of a ticker.", ticker={"type": "string"})]},
        # some live_irrelevance entries upstream offer no function at all
        {"id": "live_irrelevance_1-0-1", "question": _turn("hello?"), "function": []}])
    _jsonl(data / "BFCL_v4_multi_turn_base.json", [
        {"id": "multi_turn_base_0", "question": [_turn("List my files.")[0],
                                                 _turn("Now delete notes.txt")[0]],
         "initial_config": {"GorillaFileSystem": {"root": {}}},
         "path": ["GorillaFileSystem.ls"], "involved_classes": ["GorillaFileSystem"]}])
    _jsonl(data / "BFCL_v4_memory.json", [
        {"id": "memory_kv_0-customer-0", "question": _turn("Which city am I moving to?"),
         "involved_classes": ["MemoryAPI_kv"], "scenario": "customer"}])
    _jsonl(data / "BFCL_v4_web_search.json", [
        {"id": "web_search_0", "question": _turn("Who won the 1954 world cup?"),
         "involved_classes": ["WebSearchAPI"], "initial_config": {}}])
    # valid JSON, pretty-printed over several lines: not JSONL, not a list of entries
    (data / "BFCL_v4_format_sensitivity.json").write_text(json.dumps(
        {"simple_python": ["simple_python_0", "simple_python_1"], "multiple": ["multiple_0"]},
        indent=4) + "\n", encoding="utf-8")
    _jsonl(data / "multi_turn_func_doc" / "gorilla_file_system.json", [
        {"name": "ls", "description": "List the current folder.",
         "parameters": {"type": "dict", "properties": {}, "required": []},
         "response": {"type": "dict", "properties": {}}},
        {"name": "rm", "description": "Remove a file.",
         "parameters": {"type": "dict", "properties": {"file_name": {"type": "string"}},
                        "required": ["file_name"]}}])
    answers = data / "possible_answer"
    _jsonl(answers / "BFCL_v4_simple_python.json", [
        {"id": "simple_python_0",
         "ground_truth": [{"geometry.triangle_area": {"base": [4], "height": [3.0]}}]},
        {"id": "simple_python_1", "ground_truth": [{"dice.roll": {"count": [2]}}]}])
    _jsonl(answers / "BFCL_v4_simple_javascript.json", [
        {"id": "simple_javascript_23",
         "ground_truth": [{"debounceHandler": {"handler": ["save"], "wait": [300]}}]}])
    _jsonl(answers / "BFCL_v4_multiple.json", [
        {"id": "multiple_0", "ground_truth": [{"currency.convert": {"amount": [20.0]}}]}])
    _jsonl(answers / "BFCL_v4_multi_turn_base.json", [
        {"id": "multi_turn_base_0", "ground_truth": [["ls()"], ["rm(file_name='notes.txt')"]]}])
    _jsonl(answers / "BFCL_v4_memory.json", [
        {"id": "memory_kv_0-customer-0", "ground_truth": ["Lisbon"]}])
    _jsonl(answers / "BFCL_v4_web_search.json", [
        {"id": "web_search_0", "ground_truth": ["Germany"]}])
    return data


BFCL_LINES = {  # each file of the folder: the start of its one line
    "BFCL_v4_format_sensitivity.json": "bfcl format_sensitivity: skipped, valid JSON of another "
                                       "shape (an object with keys simple_python, multiple)",
    "BFCL_v4_live_irrelevance.json": "bfcl questions: 2 entries, 1 function docs, 0 with an "
                                     "answer, 1 with an empty function list",
    "BFCL_v4_memory.json": "bfcl memory: skipped, 1 entries: its entries name API classes",
    "BFCL_v4_multi_turn_base.json": "bfcl multi_turn_base: skipped, 1 entries: its entries "
                                    "name API classes",
    "BFCL_v4_multiple.json": "bfcl questions: 1 entries, 2 function docs, 1 with an answer",
    "BFCL_v4_simple_javascript.json": "bfcl questions: 1 entries, 1 function docs, 1 with an "
                                      "answer",
    "BFCL_v4_simple_python.json": "bfcl questions: 2 entries, 2 function docs, 2 with an answer",
    "BFCL_v4_web_search.json": "bfcl web_search: skipped, 1 entries: its entries name API "
                               "classes",
    "multi_turn_func_doc/gorilla_file_system.json": "bfcl gorilla_file_system: skipped, 2 "
                                                    "entries: function docs of BFCL's API "
                                                    "classes",
    "possible_answer/BFCL_v4_memory.json": "bfcl answers memory: skipped, 1 answers of text",
    "possible_answer/BFCL_v4_multi_turn_base.json": "bfcl answers multi_turn_base: skipped, "
                                                    "1 answers of text",
    "possible_answer/BFCL_v4_multiple.json": "bfcl answers: 1 answers",
    "possible_answer/BFCL_v4_simple_javascript.json": "bfcl answers: 1 answers",
    "possible_answer/BFCL_v4_simple_python.json": "bfcl answers: 2 answers",
    "possible_answer/BFCL_v4_web_search.json": "bfcl answers web_search: skipped, 1 answers "
                                               "of text",
}


@pytest.mark.parametrize("how", [["--from", "bfcl"], []])  # given, or detected
def test_bfcl_v4_folder_imports_with_one_command_one_line_per_file(tmp_path, how):
    write_bfcl_folder(tmp_path)
    proc = _cli("import", *how, "data/", "--out", "out/registry.json",
                "--queries-out", "out/queries.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    files = sorted(p.relative_to(tmp_path / "data").as_posix()
                   for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert files == sorted(BFCL_LINES)
    for rel, start in BFCL_LINES.items():  # every file: exactly one line, saying what it was
        mine = [line for line in lines if line.startswith(f"  data/{rel}: ")]
        assert len(mine) == 1 and mine[0].startswith(f"  data/{rel}: {start}"), (rel, mine)
    assert "Traceback" not in proc.stderr and "invalid JSON" not in proc.stdout + proc.stderr
    assert "type '' -> any (no type)" in proc.stderr  # the empty type, said once
    registry = load_registry(tmp_path / "out" / "registry.json")
    assert [t.name for t in registry] == [  # the files in the order of their paths
        "get_stock", "currency_convert", "currency_rates", "debounceHandler",
        "geometry_triangle_area", "dice_roll"]
    tools = {t.name: t for t in registry}
    handler = tools["debounceHandler"].parameters["properties"]["handler"]
    assert handler == {"description": "the function to wrap"}  # any value
    queries = {q.id: q for q in load_queries(tmp_path / "out" / "queries.jsonl", registry)}
    assert {k: q.expected for k, q in queries.items()} == {
        "multiple_0": ("currency_convert",), "simple_javascript_23": ("debounceHandler",),
        "simple_python_0": ("geometry_triangle_area",), "simple_python_1": ("dice_roll",)}
    assert "out/registry.json: 6 tools from 1 input(s)" in proc.stdout


def test_bfcl_folder_and_format_sensitivity_given_by_name(tmp_path):
    """The files given one by one, as the issue's user did: the pretty-printed file is
    skipped with its shape, the quirks import; a non-BFCL file of unknown shape is refused."""
    data = write_bfcl_folder(tmp_path)
    proc = _cli("import", "--from", "bfcl", "data/BFCL_v4_format_sensitivity.json",
                "data/BFCL_v4_live_irrelevance.json", "data/BFCL_v4_simple_javascript.json",
                "--out", "reg.json", "--queries-out", "q.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert ("data/BFCL_v4_format_sensitivity.json: bfcl format_sensitivity: skipped, valid "
            "JSON of another shape (an object with keys simple_python, multiple)") in proc.stdout
    assert "reg.json: 2 tools from 3 input(s)" in proc.stdout
    proc = _cli("import", "data/BFCL_v4_format_sensitivity.json",  # detected, too
                "data/BFCL_v4_simple_python.json", "--out", "reg1.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "bfcl format_sensitivity: skipped, valid JSON of another shape" in proc.stdout
    (data / "sensitivity_copy.json").write_text(
        (data / "BFCL_v4_format_sensitivity.json").read_text())
    proc = _cli("import", "--from", "bfcl", "data/sensitivity_copy.json", "--out", "r2.json",
                cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line == ("toolsel import: error: data/sensitivity_copy.json: valid JSON of an "
                    "unknown shape for BFCL: an object with keys simple_python, multiple; "
                    "expected BFCL entries (id, question, function) or answers (id, "
                    "ground_truth)")


def test_bfcl_folder_answers_without_question_are_a_note(tmp_path):
    data = write_bfcl_folder(tmp_path)
    _jsonl(data / "possible_answer" / "BFCL_v4_parallel.json", [
        {"id": "parallel_0", "ground_truth": [{"dice.roll": {"count": [1]}}]}])
    (data / "README.md").write_text("notes\n")
    proc = _cli("import", "data", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "  data/README.md: bfcl README: skipped, not a JSON file (.md)" in proc.stdout
    assert ("note: data/possible_answer/BFCL_v4_parallel.json: 1 answer(s) match no question "
            "of the folder (first: id 'parallel_0'); not used") in proc.stdout


def test_bfcl_folder_without_function_lists_is_an_error_writing_nothing(tmp_path):
    data = tmp_path / "data"
    _jsonl(data / "BFCL_v4_web_search.json", [
        {"id": "web_search_0", "question": _turn("?"), "involved_classes": ["WebSearchAPI"]}])
    proc = _cli("import", "--from", "bfcl", "data", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "reg.json").exists()
    assert "bfcl web_search: skipped" in proc.stdout
    assert proc.stderr.count("\n") == 1 and "no tools in the 1 input(s)" in proc.stderr


# -- valid JSON of an unknown shape ----------------------------------------------------------

@pytest.mark.parametrize("doc, shape", [
    ({"simple_python": [1, 2], "multiple": [3]}, "an object with keys simple_python, multiple"),
    ([{"a": 1, "b": 2}, {"c": 3}], "a list of 2 objects with keys a, b, c"),
    (["x", "y", "z"], "a list of 3 strings"),
])
def test_unknown_json_is_named_with_its_keys_and_the_known_formats(tmp_path, doc, shape):
    (tmp_path / "dump.json").write_text(json.dumps(doc, indent=2))
    proc = _cli("import", "dump.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "reg.json").exists()
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"toolsel import: error: dump.json: valid JSON of an unknown shape: "
                           f"{shape}; it is none of the known formats: beir (")
    for fmt in ("bfcl (", "toolbench (", "metatool (", "mcp (", "openai (", "anthropic ("):
        assert fmt in line
    assert "invalid JSON" not in line


def test_unknown_json_with_a_format_given(tmp_path):
    (tmp_path / "dump.json").write_text(json.dumps({"servers": "none", "v": 2}, indent=2))
    proc = _cli("import", "--from", "mcp", "dump.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("toolsel import: error: dump.json: valid JSON of an unknown shape "
                           "for --from mcp: an object with keys servers, v; the known formats: ")


# -- server lists with nested tool lists -----------------------------------------------------

LONG = "Plan a route between two places. " * 60  # about 2,000 characters


def _mcp_tool(name: str, description: str, **props: str) -> dict:
    return {"name": name, "description": description, "inputSchema": {
        "type": "object", "properties": {k: {"type": v} for k, v in props.items()}}}


def write_server_list(path: Path) -> Path:
    """A tools.json as an MCP benchmark publishes it: a list of servers, each with its
    catalog entry and ``tools.<server>.tools[]``; Chinese, long and empty descriptions."""
    doc = [
        {"name": "高德地图", "description": "地图与出行服务", "category": "出行",
         "config": {"mcpServers": {"amap-maps": {"command": "npx", "args": ["-y", "amap"]}}},
         "tools": {"amap-maps": {"tools": [
             _mcp_tool("maps_weather", "根据城市名称查询天气预报。", city="string"),
             _mcp_tool("maps_direction", LONG, origin="string", destination="string"),
             _mcp_tool("search", "", keywords="string")]}}},
        {"name": "Notes", "description": "Keep notes", "category": "Productivity",
         "config": {"mcpServers": {"notes": {"command": "uvx", "args": ["notes"]}}},
         "tools": {"notes": {"tools": [
             _mcp_tool("search", "Search notes by keyword.", q="string"),
             _mcp_tool("add_note", "Add a note.", text="string")]}}},
        {"name": "Broken", "description": "A server whose listing came back empty",
         "category": "Other", "tools": {"broken": {"tools": []}}},
        {"name": "Flaky", "description": "Its listing failed when the dump was made",
         "category": "Other", "tools": {"flaky": {"error": "listing timed out"}}},
    ]
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def test_server_list_with_nested_tool_lists_imports_as_downloaded(tmp_path):
    write_server_list(tmp_path / "tools.json")
    proc = _cli("import", "tools.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "  tools.json: mcp server list: 2 servers, 5 tools" in proc.stdout
    # the empty description: one warning for the file, naming the server
    assert proc.stderr.count("MCP tool(s) have no description") == 1
    assert "1 MCP tool(s) have no description: 'search' (server 'amap-maps')" in proc.stderr
    assert ("note: tools.json: server 'broken' (item 3, tools.broken) lists no tools: left "
            "out") in proc.stdout
    assert ("note: tools.json: server 'flaky' (item 4, tools.flaky) lists no tools: left "
            "out") in proc.stdout
    assert "2 clashing names qualified by server: amap-maps__search, notes__search" \
        in proc.stdout
    registry = load_registry(tmp_path / "reg.json")
    tools = {t.name: t for t in registry}
    assert list(tools) == ["maps_weather", "maps_direction", "amap-maps__search",
                           "notes__search", "add_note"]
    assert tools["maps_weather"].description == "根据城市名称查询天气预报。"
    assert tools["maps_direction"].description == LONG  # as written, whole
    assert tools["amap-maps__search"].metadata["description_fallback"] == "name"
    assert {t.metadata["server"] for t in registry} == {"amap-maps", "notes"}
    assert tools["maps_weather"].metadata["category"] == "出行"


@pytest.mark.parametrize("shape", ["servers", "by_name", "flat_list"])
def test_other_server_list_shapes(tmp_path, shape):
    github = [_mcp_tool("create_issue", "Open an issue.", title="string"),
              _mcp_tool("search", "Search code.", q="string")]
    slack = [_mcp_tool("send_message", "Post to a channel.", text="string"),
             _mcp_tool("search", "Search messages.", q="string")]
    doc = {"servers": {"servers": [{"name": "github", "tools": github},
                                   {"name": "slack", "tools": {"tools": slack}}]},
           "by_name": {"github": {"tools": github}, "slack": {"tools": slack}},
           "flat_list": [{"server_name": "github", "tools": github},
                         {"server_name": "slack", "tools": slack}]}[shape]
    (tmp_path / "servers.json").write_text(json.dumps(doc, indent=2))
    proc = _cli("import", "--from", "mcp", "servers.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "servers.json: mcp server list: 2 servers, 4 tools" in proc.stdout
    assert [t.name for t in load_registry(tmp_path / "reg.json")] == [
        "create_issue", "github__search", "send_message", "slack__search"]


def test_server_list_errors_name_the_server_and_tool(tmp_path):
    doc = {"servers": [{"name": "github", "tools": [{"name": "create_issue",
                                                     "description": "Open an issue."}]}]}
    (tmp_path / "servers.json").write_text(json.dumps(doc, indent=2))
    proc = _cli("import", "--from", "mcp", "servers.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.startswith("toolsel import: error: servers.json, server 'github' "
                           "(servers.item 1), item 1 (tool 'create_issue'): field "
                           "'inputSchema': ")
    proc = _cli("import", "servers.json", "--server", "gh", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "servers.json: field 'server': holds a list of 1 servers, each named in the " \
           "file; --server 'gh' cannot name them" in proc.stderr
