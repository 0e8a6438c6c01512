"""Importers: MCP / OpenAI / Anthropic / LangChain definitions into a validated registry."""

from __future__ import annotations

import json

import pytest

from conftest import DATA
from toolsel import DataError, Tool, load_queries, load_registry
from toolsel.cli import main
from toolsel.integrations.importers import (from_anthropic, from_langchain, from_mcp, from_openai,
                               import_files, merge_servers, write_registry)

EXAMPLES = DATA / "integrations"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "description": "City"}},
          "required": ["city"]}


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# -- one format each -------------------------------------------------------------------------

def test_openai_chat_and_responses_forms_give_the_same_tool():
    chat = {"type": "function", "function": {"name": "weather", "description": "Weather",
                                             "parameters": SCHEMA}}
    flat = {"type": "function", "name": "weather", "description": "Weather",
            "parameters": SCHEMA}
    a, b = from_openai([chat, flat])
    assert a == b == Tool("weather", "Weather", SCHEMA)


def test_openai_rejects_builtin_tools_and_mixed_forms():
    with pytest.raises(DataError, match="built-in") as err:
        from_openai([{"type": "web_search"}], path="tools.json")
    assert (err.value.path, err.value.location, err.value.field) == ("tools.json", "item 1",
                                                                     "type")
    mixed = {"type": "function", "name": "x", "function": {"name": "x", "description": "d"}}
    with pytest.raises(DataError, match="not both"):
        from_openai([mixed])


def test_openai_unknown_key_is_named():
    with pytest.raises(DataError) as err:
        from_openai([{"type": "function", "name": "w", "description": "d", "paramters": {}}])
    assert err.value.field == "paramters" and "tool 'w'" in err.value.location


def test_anthropic_keeps_extra_fields_as_metadata_and_rejects_server_tools():
    (tool,) = from_anthropic([{"name": "w", "description": "Weather", "input_schema": SCHEMA,
                               "cache_control": {"type": "ephemeral"}}])
    assert tool.parameters == SCHEMA and tool.metadata == {"cache_control": {"type": "ephemeral"}}
    with pytest.raises(DataError, match="server or client tool") as err:
        from_anthropic([{"type": "tool_search_tool_bm25_20251119",
                         "name": "tool_search_tool_bm25"}])
    assert err.value.field == "type"
    with pytest.raises(DataError) as err:
        from_anthropic([{"name": "w", "description": "Weather"}])
    assert err.value.field == "input_schema"


def test_mcp_keeps_annotations_title_and_server():
    (tool,) = from_mcp([{"name": "create_issue", "title": "Create issue",
                         "description": "Open an issue", "inputSchema": SCHEMA,
                         "annotations": {"readOnlyHint": False}}], server="github")
    assert tool.parameters == SCHEMA
    assert tool.metadata == {"server": "github", "title": "Create issue",
                             "annotations": {"readOnlyHint": False}}
    assert tool.domain == "github"


def test_mcp_missing_description_and_schema_are_named(tmp_path):
    with pytest.raises(DataError, match="allows tools without a description") as err:
        from_mcp([{"name": "x", "inputSchema": SCHEMA}], path="dump.json", strict=True)
    assert err.value.field == "description" and err.value.location == "item 1 (tool 'x')"
    with pytest.raises(DataError) as err:
        from_mcp([{"name": "x", "description": "d"}])
    assert err.value.field == "inputSchema"
    with pytest.raises(DataError) as err:
        from_mcp([{"name": "ok", "description": "d", "inputSchema": SCHEMA},
                  {"name": "bad", "description": "d", "inputSchema": {"type": "string"}}])
    assert err.value.location == "item 2 (tool 'bad')" and err.value.field == "inputSchema"


def test_mcp_sdk_objects_and_its_own_dump_round_trip(tmp_path):
    mcp_types = pytest.importorskip("mcp.types")
    sdk_tool = mcp_types.Tool(name="search_issues", description="Search issues",
                              input_schema=SCHEMA,
                              annotations=mcp_types.ToolAnnotations(read_only_hint=True))
    (from_objects,) = from_mcp([sdk_tool], server="gh")
    # a tools/list result dumped as the SDK sends it on the wire
    wire = mcp_types.ListToolsResult(tools=[sdk_tool]).model_dump(mode="json", by_alias=True,
                                                                  exclude_none=True)
    path = _write(tmp_path, "gh.json", wire)
    (from_file,) = import_files([path], "mcp")
    assert from_objects == from_file
    assert from_file.metadata["annotations"] == {"readOnlyHint": True}


def test_mcp_sdk_validation_names_the_field():
    pytest.importorskip("mcp.types")
    with pytest.raises(DataError, match="not a valid MCP tool") as err:
        from_mcp([{"name": "x", "description": "d", "inputSchema": SCHEMA,
                   "annotations": {"readOnlyHint": "yes please"}}])
    assert err.value.field == "annotations.readOnlyHint"


def test_langchain_tools_use_the_schema_langchain_sends():
    lc_tools = pytest.importorskip("langchain_core.tools")

    @lc_tools.tool
    def weather_lookup(city: str) -> str:
        """Get the current weather for a city."""
        return city

    (tool,) = from_langchain([weather_lookup])
    assert tool.name == "weather_lookup"
    assert tool.description == "Get the current weather for a city."
    assert list(tool.parameters["properties"]) == ["city"]
    assert tool.parameters["required"] == ["city"]


# -- merging ---------------------------------------------------------------------------------

def test_merge_qualifies_only_clashing_names_on_every_server():
    gh = [Tool("create_issue", "GitHub issue"), Tool("merge_pr", "Merge")]
    lin = [Tool("create_issue", "Linear issue"), Tool("list_cycles", "Cycles")]
    reg = merge_servers([("github", gh), ("linear", lin)])
    assert reg.names == ["github__create_issue", "merge_pr", "linear__create_issue",
                         "list_cycles"]
    assert reg.get("linear__create_issue").metadata == {"original_name": "create_issue",
                                                        "server": "linear"}


def test_merge_errors():
    with pytest.raises(DataError, match="given twice"):
        merge_servers([("a", [Tool("x", "d")]), ("a", [Tool("y", "d")])])
    with pytest.raises(DataError, match="within server 'a'"):
        merge_servers([("a", [Tool("x", "d"), Tool("x", "e")])])
    with pytest.raises(DataError, match="collides"):
        merge_servers([("a", [Tool("x", "d"), Tool("b__x", "d")]), ("b", [Tool("x", "e")])])


def test_import_files_reads_the_shipped_examples():
    reg = import_files([EXAMPLES / "mcp_github.json", EXAMPLES / "mcp_linear.json"], "mcp")
    assert len(reg) == 9
    assert {t.metadata["server"] for t in reg} == {"github", "linear"}  # "server" key, serverInfo
    assert "github__create_issue" in reg and "linear__search_issues" in reg
    assert "create_pull_request" in reg
    openai = import_files([EXAMPLES / "openai_tools.json"], "openai")
    anthropic = import_files([EXAMPLES / "anthropic_tools.json"], "anthropic")
    assert [(t.name, t.description, t.parameters) for t in openai] == \
        [(t.name, t.description, t.parameters) for t in anthropic]


def test_import_files_errors_name_the_file(tmp_path):
    bad = _write(tmp_path, "bad.json", {"tools": [{"name": "x", "description": "d",
                                                   "inputSchema": {"type": "array"}}]})
    with pytest.raises(DataError) as err:
        import_files([bad], "mcp")
    assert err.value.path == str(bad) and err.value.field == "inputSchema"
    with pytest.raises(DataError, match="file not found"):
        import_files([tmp_path / "missing.json"], "mcp")
    with pytest.raises(ValueError, match="one per file"):
        import_files([bad, bad], "mcp", servers=["a"])
    dup = _write(tmp_path, "dup.json", [{"name": "x", "description": "d", "input_schema": SCHEMA},
                                        {"name": "x", "description": "e", "input_schema": SCHEMA}])
    with pytest.raises(DataError, match="duplicate") as err:
        import_files([dup], "anthropic")
    assert err.value.path == str(dup)


def test_write_registry_is_atomic_and_round_trips(tmp_path):
    reg = import_files([EXAMPLES / "mcp_github.json", EXAMPLES / "mcp_linear.json"], "mcp")
    out = write_registry(reg, tmp_path / "sub" / "reg.json")
    assert list(load_registry(out)) == list(reg)
    assert [p.name for p in out.parent.iterdir()] == ["reg.json"]  # no temp file left behind

    class Unserializable(Tool):
        def to_record(self):
            return {"name": self.name, "description": self.description, "x": object()}

    before = out.read_bytes()
    with pytest.raises(TypeError):
        write_registry([Unserializable("a", "b")], out)
    assert out.read_bytes() == before  # the old registry survives a failed write
    assert [p.name for p in out.parent.iterdir()] == ["reg.json"]


# -- the command: import, then evaluate ------------------------------------------------------

def test_cli_import_then_sweep(tmp_path, capsys):
    reg = tmp_path / "reg.json"
    assert main(["import", "--from", "mcp", str(EXAMPLES / "mcp_github.json"),
                 str(EXAMPLES / "mcp_linear.json"), "--out", str(reg)]) == 0
    out = capsys.readouterr().out
    assert "9 tools" in out and "github__create_issue" in out
    queries = load_queries(EXAMPLES / "queries.jsonl", load_registry(reg))
    assert len(queries) == 8
    assert main(["sweep", "--registry", str(reg), "--queries", str(EXAMPLES / "queries.jsonl"),
                 "--scorers", "jaccard,bm25", "--top-k", "1,3", "--out", str(tmp_path / "sw"),
                 "--no-progress"]) == 0
    summary = (tmp_path / "sw" / "summary.csv").read_text()
    assert summary.count("\n") == 5  # header + 2 scorers x 2 cut-offs


def test_cli_import_error_names_file_entry_and_field(tmp_path, capsys):
    bad = _write(tmp_path, "tools.json", [{"type": "function", "function": {
        "name": "w", "description": "d", "parameters": {"type": "object", "required": ["x"]}}}])
    assert main(["import", "--from", "openai", str(bad), "--out", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "tools.json, item 1 (tool 'w'): field 'parameters.required'" in err
    assert not (tmp_path / "r.json").exists()


def test_core_import_stays_light():
    """``import toolsel`` and the CLI (with ``toolsel import``) load no integration SDK."""
    import subprocess
    import sys
    code = ("import sys, toolsel, toolsel.cli, toolsel.cli.importers\n"
            "toolsel.cli.build_parser()\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('anthropic', 'langchain', 'langchain_core', 'langgraph', 'mcp'))\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_cli_server_names_per_file_qualify_openai_clashes(tmp_path, capsys):
    src = EXAMPLES / "openai_tools.json"
    reg = tmp_path / "reg.json"
    assert main(["import", "--from", "openai", str(src), str(src), "--server", "prod",
                 "--server", "staging", "--out", str(reg)]) == 0
    names = load_registry(reg).names
    assert names[:4] == ["prod__weather_lookup", "prod__stock_price", "prod__translate_text",
                         "prod__calculator"] and names[4] == "staging__weather_lookup"
    capsys.readouterr()
    assert main(["import", "--from", "openai", str(src), str(src), "--out", str(reg)]) == 2
    assert "given twice" in capsys.readouterr().err  # same stem: ask for --server


def test_a_jsonrpc_error_dump_is_named(tmp_path):
    path = _write(tmp_path, "err.json", {"jsonrpc": "2.0", "id": 1,
                                         "error": {"code": -32601, "message": "Method not found"}})
    with pytest.raises(DataError, match="JSON-RPC error response.*Method not found"):
        import_files([path], "mcp")


def test_a_partial_tools_list_page_is_refused(tmp_path):
    tool = {"name": "a", "description": "A.", "inputSchema": {"type": "object"}}
    paged = _write(tmp_path, "page1.json", {"jsonrpc": "2.0", "id": 1,
                                            "result": {"tools": [tool], "nextCursor": "p2"}})
    with pytest.raises(DataError) as err:
        import_files([paged], "mcp")
    assert err.value.field == "nextCursor" and "'p2'" in err.value.reason
    last = _write(tmp_path, "last.json", {"tools": [tool], "nextCursor": None})
    assert [t.name for t in import_files([last], "mcp")] == ["a"]


def test_tool_formats_are_one_table_read_by_import_and_detection(tmp_path):
    """A tool-file format is one entry of TOOL_FORMATS: its reader, how a record is
    recognised, and where a file's server name comes from; import_files, toolsel import and
    its detection read the table."""
    import json as _json
    from toolsel.integrations.importers import (FORMATS, TOOL_FORMATS, detect_tool_format,
                                                read_tool_file)
    from toolsel.integrations.sources import detect_format, import_formats
    assert FORMATS == tuple(TOOL_FORMATS) == ("mcp", "anthropic", "openai")
    assert list(import_formats())[-3:] == list(FORMATS)  # tried last, in table order
    records = {"mcp": {"name": "a", "description": "d", "inputSchema": {"type": "object"}},
               "anthropic": {"name": "a", "description": "d",
                             "input_schema": {"type": "object"}},
               "openai": {"type": "function", "function": {"name": "a", "description": "d",
                                                           "parameters": {"type": "object"}}}}
    for fmt, rec in records.items():
        assert detect_tool_format(rec) == fmt
        path = tmp_path / f"{fmt}.json"
        path.write_text(_json.dumps({"tools": [rec], "serverInfo": {"name": "srv"}}))
        assert detect_format(path) == fmt
        tools, server, located = read_tool_file(path, fmt, None)
        assert [t.name for t in tools] == ["a"] and len(located) == 1
        # the server: MCP's serverInfo, else the file's name; --server wins either way
        assert server == ("srv" if TOOL_FORMATS[fmt].server_in_file else fmt)
        assert read_tool_file(path, fmt, "given")[1] == "given"
    assert detect_tool_format({"name": "a"}) is None and detect_tool_format([1]) is None


def test_a_format_added_to_the_table_is_detected_and_read_by_toolsel_import(
        tmp_path, monkeypatch, capsys):
    """A new import format is one ImportFormat entry: once in IMPORT_FORMATS, ``toolsel
    import`` lists it under --from, detects it among the other formats' inputs and reads it
    into the registry it writes, in input order."""
    import csv as _csv
    import json as _json
    from toolsel.cli import main
    from toolsel.data import Tool, load_registry
    from toolsel.integrations import sources

    def read(inputs, out, **_):
        groups = []
        for i, path, server in inputs:
            with path.open(newline="") as fh:
                tools = [Tool(r["name"], r["description"]) for r in _csv.DictReader(fh)]
            out.read.append((path, f"name-csv: {len(tools)} tools"))
            groups.append((i, server or path.stem, tools, []))
        return groups

    fmt = sources.ImportFormat(
        "name-csv", lambda p: p.is_csv and p.path.read_text().startswith("name,description"),
        read, "a CSV of name,description rows")
    monkeypatch.setitem(sources.IMPORT_FORMATS, fmt.name, fmt)
    rows = tmp_path / "crm.csv"
    rows.write_text("name,description\ncrm_find_contact,find a contact by email\n"
                    "crm_log_call,log a phone call with a contact\n")
    mcp = tmp_path / "mcp.json"
    mcp.write_text(_json.dumps({"tools": [{"name": "read_file", "description": "read a file",
                                           "inputSchema": {"type": "object"}}]}))
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    assert "name-csv: a CSV of name,description rows" in " ".join(capsys.readouterr().out.split())
    assert sources.detect_format(rows) == "name-csv" and sources.detect_format(mcp) == "mcp"
    out = tmp_path / "registry.json"
    assert main(["import", str(rows), str(mcp), "--out", str(out)]) == 0
    assert "name-csv: 2 tools" in capsys.readouterr().out
    assert [t.name for t in load_registry(out)] == ["crm_find_contact", "crm_log_call",
                                                    "read_file"]
    monkeypatch.delitem(sources.IMPORT_FORMATS, fmt.name)
    with pytest.raises(DataError, match="a CSV file whose format cannot be told"):
        sources.detect_format(rows)
