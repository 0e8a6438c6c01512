"""Public benchmark formats (BFCL, ToolBench, MetaTool, BEIR) and mixed imports, on hand-written
fixtures in tests/data/benchmarks/ (written from the formats' descriptions, no upstream file)."""

from __future__ import annotations

import json
import re
import warnings

import pandas as pd
import pytest

from conftest import DATA, ROOT
from toolsel import DataError, load_queries, load_registry
from toolsel.cli import main
from toolsel.integrations.benchmarks import (from_beir, from_bfcl, from_metatool, from_toolbench,
                                             toolbench_function_name, toolbench_standardize)
from toolsel.integrations.importers import from_openai
from toolsel.integrations.schemas import SchemaNormalizedWarning
from toolsel.integrations.sources import detect_format, import_sources

BENCH = ROOT / "tests" / "data" / "benchmarks"
BFCL = BENCH / "bfcl"
QUESTIONS = [BFCL / "BFCL_v3_simple.json", BFCL / "BFCL_v3_multiple.json",
             BFCL / "BFCL_v3_irrelevance.json"]


def _lines(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# -- BFCL ------------------------------------------------------------------------------------

def test_bfcl_pools_functions_and_pairs_answers():
    with pytest.warns(SchemaNormalizedWarning):
        got = from_bfcl(QUESTIONS)  # answers found in possible_answer/ beside each file
    names = [t.name for t in got.tools]
    assert names == ["calc_triangle_area", "math_factorial", "plot_points", "gallon_to_liter",
                     "solar_panel_output"]
    # seen twice with the long description, once with "Area of a triangle.": the long one
    assert got.resolved == ["calc_triangle_area"]
    assert got.tools[0].description.startswith("Compute the area")
    fact = got.tools[1]
    assert fact.metadata["bfcl_name"] == "math.factorial"
    plot = got.tools[2].parameters
    assert plot["type"] == "object"
    assert plot["properties"]["points"]["items"] == {"type": "array", "items": {"type": "number"}}
    assert plot["properties"]["style"]["type"] == "object"
    assert plot["properties"]["style"]["properties"]["width"]["type"] == "number"
    assert "type" not in plot["properties"]["extra"]  # 'any': no type
    assert "response" not in got.tools[2].parameters and "response" not in got.tools[2].metadata
    by_id = {q["id"]: q for q in got.queries}
    assert set(by_id) == {"simple_0", "simple_1", "simple_2", "multiple_0", "multiple_1"}
    assert by_id["simple_1"]["query"] == "What is 7 factorial?"  # the system message left out
    assert by_id["simple_1"]["expected"] == ["math_factorial"]
    assert by_id["multiple_0"]["expected"] == ["gallon_to_liter", "calc_triangle_area"]
    assert by_id["multiple_0"]["category"] == "multiple"


def test_bfcl_normalization_warns_once_per_kind_and_strict_refuses():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import_sources([BFCL / "BFCL_v3_simple.json"])
    texts = [str(w.message) for w in caught if w.category is SchemaNormalizedWarning]
    assert sum("'dict' -> 'object'" in t for t in texts) == 1
    assert any("'float' -> 'number': 2 place(s) in 1 tool(s)" in t for t in texts)
    assert any("'tuple' -> 'array'" in t for t in texts)
    assert any("key 'response' left out of 1 tool" in t for t in texts)
    with pytest.raises(DataError) as err:
        import_sources([BFCL / "BFCL_v3_simple.json"], strict=True)
    assert err.value.path.endswith("BFCL_v3_simple.json")
    assert err.value.field == "parameters.type" and "'dict'" in err.value.reason
    assert "line 1" in err.value.location


def test_bfcl_errors_name_file_line_and_field(tmp_path):
    q = _lines(tmp_path / "BFCL_v3_x.json", [
        {"id": "x_0", "question": [[{"role": "user", "content": "hi"}]],
         "function": [{"name": "a.b", "description": "d", "parameters": {"type": "dict"}}]}])
    bad_answer = _lines(tmp_path / "ans.json", [{"id": "x_0", "ground_truth": [{"c": {}}]}])
    with pytest.raises(DataError) as err:
        from_bfcl([q, bad_answer])
    assert (err.value.path, err.value.field) == (str(bad_answer), "ground_truth")
    assert "'c'" in err.value.reason and "a_b" in err.value.reason
    multi = _lines(tmp_path / "ans2.json", [{"id": "x_0", "ground_truth": [["cd(folder='x')"]]}])
    with pytest.raises(DataError, match="multi-turn"):
        from_bfcl([q, multi])
    no_fn = _lines(tmp_path / "BFCL_v3_y.json", [{"id": "y_0", "question": "hi"}])
    with pytest.raises(DataError) as err:
        from_bfcl([no_fn])
    assert err.value.location == "line 1 (id 'y_0')" and err.value.field == "function"


# BFCL as upstream ships it today (v4): one tiny hand-written file per category, in its layout
BFCL_V4 = BENCH / "bfcl_v4"
V4_SKIPPED = ["format_sensitivity", "memory", "multi_turn_base", "multi_turn_composite",
              "multi_turn_long_context", "multi_turn_miss_func", "multi_turn_miss_param",
              "web_search"]


@pytest.mark.parametrize("with_answers", [False, True])
def test_bfcl_v4_every_file_imports_and_skips_what_is_not_a_function_list(tmp_path, capsys,
                                                                          with_answers):
    questions = sorted(BFCL_V4.glob("BFCL_v4_*.json"))
    assert len(questions) == 21
    given = questions + (sorted((BFCL_V4 / "possible_answer").glob("*.json"))
                         if with_answers else [])
    reg, qs = tmp_path / "reg.json", tmp_path / "q.jsonl"
    # the format is detected from each file's content
    assert main(["import", *map(str, given), "--out", str(reg), "--queries-out", str(qs)]) == 0
    out, err = capsys.readouterr()
    for cat in V4_SKIPPED:  # one line per skipped file, question and answer alike
        assert sum(f"BFCL_v4_{cat}.json: bfcl {cat}: skipped, 1 entries: " in line
                   for line in out.splitlines()) == 1, cat
    skipped_answers = [line for line in out.splitlines() if "bfcl answers" in line
                       and "skipped" in line]
    # given: multi_turn_* (5), memory, web_search answer text; beside a skipped file: not read
    assert len(skipped_answers) == (7 if with_answers else 0)
    assert all("answers of text" in line for line in skipped_answers)
    assert "BFCL_v4_simple_java.json: bfcl questions: 2 entries, 2 function docs, " \
           "2 with an answer" in out
    assert "BFCL_v4_live_irrelevance.json: bfcl questions: 1 entries, 2 function docs, " \
           "0 with an answer" in out
    registry = load_registry(reg)
    queries = {q.id: q for q in load_queries(qs, registry)}
    assert len(registry) == 10
    tools = {t.name: t for t in registry}
    assert sorted(queries) == sorted([
        "simple_python_0", "simple_python_1", "simple_java_0", "simple_java_1",
        "simple_javascript_0", "multiple_0", "parallel_0", "parallel_multiple_0",
        "live_simple_0-0-0", "live_multiple_0-0-0", "live_parallel_0-0-0",
        "live_parallel_multiple_0-0-0"])
    assert queries["parallel_0"].expected == ("weather_forecast",)  # one tool called twice
    assert queries["live_parallel_multiple_0-0-0"].expected == ("play_music", "order_status")
    assert queries["live_simple_0-0-0"].query == "where is my order 8841?"
    # Java and JavaScript type names, mapped with the same warnings as Python's
    java = tools["CustomerSorter_sortNames"].parameters["properties"]
    assert java["names"] == {"type": "array", "description": "The customer names to sort.",
                             "items": {"type": "string"}}
    assert [java[k].get("type") for k in ("limit", "descending", "ignoreCase", "separator",
                                          "comparator")] == ["integer", "boolean", "boolean",
                                                             "string", None]
    store = tools["SessionStore_put"].parameters["properties"]
    assert {k: v.get("type") for k, v in store.items()} == {
        "sessionId": "integer", "attributes": "object", "timeoutMillis": "integer",
        "loadFactor": "number", "weight": "number", "flags": "integer", "priority": "integer",
        "tags": "array", "history": "array", "owner": "string"}
    js = tools["validateForm"].parameters["properties"]
    assert {k: v.get("type") for k, v in js.items()} == {
        "form": None, "rules": "object", "stopAtFirst": "boolean", "fields": "array",
        "threshold": "number", "retries": "integer", "nonce": "integer", "label": "string"}
    warned = [line for line in err.splitlines() if line.startswith("toolsel import: warning: ")]
    for mapped in ("'ArrayList' -> 'array'", "'HashMap' -> 'object'", "'String[]' -> 'array'",
                   "'char' -> 'string'", "'Bigint' -> 'integer'", "'short' -> 'integer'",
                   "'float' -> 'number'", "'dict' -> 'object'"):  # Python's the same way
        assert sum(mapped in line for line in warned) == 1, mapped


def test_bfcl_v4_java_types_refused_by_strict_and_generics_mapped(tmp_path):
    with pytest.raises(DataError) as err:
        import_sources([BFCL_V4 / "BFCL_v4_simple_java.json"], strict=True)
    assert err.value.path.endswith("BFCL_v4_simple_java.json")
    assert err.value.field == "parameters.type" and "'dict'" in err.value.reason
    doc = {"id": "simple_java_9", "question": [[{"role": "user", "content": "merge the maps"}]],
           "function": [{"name": "Maps.merge", "description": "Merge maps.", "parameters": {
               "type": "object", "properties": {
                   "maps": {"type": "ArrayList<HashMap<String, Integer>>"},
                   "into": {"type": "java.util.Map<String, Object>"},
                   "ids": {"type": "int[][]"}, "odd": {"type": "Widget"}}}}]}
    path = _lines(tmp_path / "BFCL_v4_simple_java.json", [doc])
    with pytest.raises(DataError) as err:  # a type name nothing maps is still refused, named
        from_bfcl([path])
    assert "Widget" in err.value.reason and err.value.field.endswith("odd.type")
    del doc["function"][0]["parameters"]["properties"]["odd"]
    _lines(path, [doc])
    with pytest.warns(SchemaNormalizedWarning):
        (tool,) = from_bfcl([path]).tools
    assert {k: v["type"] for k, v in tool.parameters["properties"].items()} == {
        "maps": "array", "into": "object", "ids": "array"}


def test_bfcl_v4_only_skipped_files_is_an_error_and_writes_nothing(tmp_path, capsys):
    reg = tmp_path / "reg.json"
    assert main(["import", str(BFCL_V4 / "BFCL_v4_multi_turn_base.json"),
                 str(BFCL_V4 / "BFCL_v4_web_search.json"), "--out", str(reg)]) == 2
    out, err = capsys.readouterr()
    assert "bfcl multi_turn_base: skipped" in out and "bfcl web_search: skipped" in out
    assert "no tools in the 2 input(s): each was skipped" in err
    assert not reg.exists()


def test_bfcl_v4_an_entry_without_functions_in_a_function_list_file_is_refused(tmp_path):
    good = json.loads((BFCL_V4 / "BFCL_v4_simple_python.json").read_text().splitlines()[0])
    path = _lines(tmp_path / "BFCL_v4_simple_python.json",
                  [good, {"id": "simple_python_1", "question": "hi"}])
    with pytest.raises(DataError) as err:  # only whole files of a non-list category are skipped
        from_bfcl([path])
    assert err.value.location == "line 2 (id 'simple_python_1')"
    assert err.value.field == "function"


# -- ToolBench -------------------------------------------------------------------------------

def test_toolbench_standardize_by_hand():
    assert toolbench_standardize("Get Forecast (v2)") == "get_forecast_v2"
    assert toolbench_standardize("  Trail-Finder!! ") == "trail_finder"
    assert toolbench_standardize("123 Geo") == "get_123_geo"
    assert toolbench_standardize("__x__y__") == "x_y"
    assert toolbench_function_name("Trail-Finder", "from") == "is_from_for_trail_finder"
    long = toolbench_function_name("t" * 40, "a" * 40)
    assert len(long) == 64 and long.endswith("_for_" + "t" * 40)  # the last 64 characters


def test_toolbench_names_parameters_and_queries():
    with pytest.warns(SchemaNormalizedWarning):
        got = from_toolbench([BENCH / "toolbench" / "G1_query.json"])
    tools = {t.name: t for t in got.tools}
    assert list(tools) == ["get_forecast_v2_for_weather_api_pro",
                           "air_quality_alerts_for_weather_api_pro",
                           "is_from_for_trail_finder", "reverse_geocode_for_get_123_geo"]
    aq = tools["air_quality_alerts_for_weather_api_pro"]
    assert aq.description == "Air Quality Alerts (Weather API Pro)"  # empty description
    assert aq.metadata["server"] == "weather_api_pro" and aq.metadata["category"] == "Weather"
    trail = tools["is_from_for_trail_finder"].parameters
    assert list(trail["properties"]) == ["is_id", "max_distance_km", "open"]
    assert trail["required"] == ["is_id"]
    assert trail["properties"]["open"] == {"type": "boolean", "description": "Only open trails",
                                           "example_value": True}
    when = tools["reverse_geocode_for_get_123_geo"].parameters["properties"]["when"]
    assert when["type"] == "string"  # DATE (YYYY-MM-DD)
    assert got.queries[0]["id"] == "101" and got.queries[0]["expected"] == [
        "get_forecast_v2_for_weather_api_pro", "air_quality_alerts_for_weather_api_pro"]
    assert got.queries[1]["expected"] == ["is_from_for_trail_finder"]


def test_toolbench_relevant_api_not_listed(tmp_path):
    doc = json.loads((BENCH / "toolbench" / "G1_query.json").read_text())
    doc[1]["relevant APIs"] = [["Trail-Finder", "to"]]
    path = tmp_path / "G9.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError) as err:
        from_toolbench([path])
    assert err.value.location == "item 2 (query_id '102')"
    assert err.value.field == "relevant APIs" and "'to'" in err.value.reason


# -- MetaTool --------------------------------------------------------------------------------

def test_metatool_descriptions_csv_and_json():
    mt = BENCH / "metatool"
    got = from_metatool([mt / "all_clean_data.csv", mt / "plugin_des.json",
                         mt / "multi_tool_query_golden.json"])
    assert [t.name for t in got.tools] == ["WeatherWizard", "RecipeBox", "FlightFinder",
                                           "StockSage"]
    assert [q["id"] for q in got.queries] == ["all_clean_data-1", "all_clean_data-2",
                                              "all_clean_data-3",
                                              "multi_tool_query_golden-1",
                                              "multi_tool_query_golden-2"]
    assert got.queries[3]["expected"] == ["FlightFinder", "WeatherWizard"]
    assert got.queries[3]["category"] == "multi"


def test_metatool_unknown_tool_is_named(tmp_path):
    csv = tmp_path / "q.csv"
    csv.write_text("Query,Tool\nrain?,WeatherWizard\nflights?,FlightFindr\n")
    with pytest.raises(DataError) as err:
        from_metatool([BENCH / "metatool" / "plugin_des.json", csv])
    assert (err.value.location, err.value.field) == ("line 3", "Tool")
    assert "did you mean 'FlightFinder'" in err.value.reason


# -- BEIR ------------------------------------------------------------------------------------

def test_beir_grades_splits_and_descriptions():
    got = from_beir(BENCH / "beir" / "toolret_mini")
    tools = {t.name: t for t in got.tools}
    assert tools["weather_current"].description.startswith("Get the current")  # title = id
    assert tools["weather_hourly"].description == (
        "Hourly forecast: Hour-by-hour forecast of temperature and rain for the next 48 hours.")
    assert tools["currency_convert"].description.startswith("Convert an amount")
    assert tools["calendar_create_event"].metadata["beir_metadata"] == {"source": "hand-written"}
    by_id = {q["id"]: q for q in got.queries}
    assert set(by_id) == {"q1", "q2", "q3"}  # q4 has no judgement
    assert by_id["q1"]["expected"] == ["weather_hourly", "weather_current"]  # translate: 0
    assert by_id["q1"]["grades"] == {"weather_hourly": 2, "weather_current": 1}
    assert "grades" not in by_id["q2"] and by_id["q2"]["split"] == "test"
    assert by_id["q3"]["split"] == "dev"
    assert got.notes and "1 queries" in got.notes[0]


def test_beir_errors(tmp_path):
    import shutil
    folder = tmp_path / "coll"
    shutil.copytree(BENCH / "beir" / "toolret_mini", folder)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tnope\t1\n")
    with pytest.raises(DataError) as err:
        from_beir(folder)
    assert err.value.path.endswith("test.tsv")
    assert (err.value.location, err.value.field) == ("line 2", "corpus-id")
    (folder / "qrels" / "test.tsv").write_text("q1\tweather_hourly\thigh\n")
    with pytest.raises(DataError, match="integer score") as err:
        from_beir(folder)
    (folder / "corpus.jsonl").unlink()
    with pytest.raises(DataError, match="missing corpus.jsonl"):
        from_beir(folder)


# -- detection, mixed imports, the command -----------------------------------------------------

@pytest.mark.parametrize("path, fmt", [
    (BFCL / "BFCL_v3_simple.json", "bfcl"),
    (BFCL / "possible_answer" / "BFCL_v3_simple.json", "bfcl"),
    (BENCH / "toolbench" / "G1_query.json", "toolbench"),
    (BENCH / "metatool" / "plugin_des.json", "metatool"),
    (BENCH / "metatool" / "all_clean_data.csv", "metatool"),
    (BENCH / "metatool" / "multi_tool_query_golden.json", "metatool"),
    (BENCH / "beir" / "toolret_mini", "beir"),
    (DATA / "integrations" / "mcp_github.json", "mcp"),
    (DATA / "integrations" / "mcp_linear.json", "mcp"),
    (DATA / "integrations" / "openai_tools.json", "openai"),
    (DATA / "integrations" / "anthropic_tools.json", "anthropic"),
])
def test_detect_format(path, fmt):
    assert detect_format(path) == fmt


def test_mixed_import_namespaces_clashes_and_rewrites_labels(tmp_path, capsys):
    clash = tmp_path / "helpers.json"
    clash.write_text(json.dumps([{"type": "function", "function": {
        "name": "translate", "description": "Translate a document file into another language.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]))
    reg, qs = tmp_path / "reg.json", tmp_path / "q.jsonl"
    assert main(["import", str(clash), str(BENCH / "beir" / "toolret_mini"),
                 str(BFCL / "BFCL_v3_simple.json"), str(DATA / "integrations" / "mcp_github.json"),
                 "--out", str(reg), "--queries-out", str(qs)]) == 0
    out = capsys.readouterr().out
    assert "helpers.json: openai: 1 tools" in out and "mcp_github.json: mcp: 5 tools" in out
    assert "beir qrels (test): 4 judgements, 1 scoring 0 dropped" in out
    assert "bfcl questions: 3 entries, 3 function docs, 3 with an answer" in out
    assert "1 clashing names" not in out and "2 clashing names qualified" in out
    registry = load_registry(reg)
    assert "helpers__translate" in registry and "toolret_mini__translate" in registry
    assert len(registry) == 1 + 5 + 3 + 5
    queries = {q.id: q for q in load_queries(qs, registry)}
    assert queries["q3"].expected == ("calendar_create_event", "toolret_mini__translate")
    assert queries["q1"].grades == {"weather_hourly": 2, "weather_current": 1}
    assert queries["simple_2"].expected == ("plot_points",)
    assert main(["sweep", "--registry", str(reg), "--queries", str(qs), "--scorers", "bm25",
                 "--top-k", "1,3", "--out", str(tmp_path / "sw"), "--no-progress"]) == 0
    summary = pd.read_csv(tmp_path / "sw" / "summary.csv")
    assert summary["NDCG@k"].notna().all() and summary["n_queries"].iloc[0] == 6


def test_from_per_input_and_bad_input_writes_nothing(tmp_path, capsys):
    reg, qs = tmp_path / "reg.json", tmp_path / "q.jsonl"
    # one --from per input: the CSV needs no guessing, the JSON object is metatool too
    assert main(["import", "--from", "metatool", "--from", "auto",
                 str(BENCH / "metatool" / "plugin_des.json"),
                 str(BENCH / "metatool" / "all_clean_data.csv"),
                 "--out", str(reg), "--queries-out", str(qs)]) == 0
    assert len(load_queries(qs, load_registry(reg))) == 3
    capsys.readouterr()
    bad = tmp_path / "bad.csv"
    bad.write_text("Query,Tool\nrain?,Nope\n")
    reg2, qs2 = tmp_path / "reg2.json", tmp_path / "q2.jsonl"
    assert main(["import", str(BENCH / "metatool" / "plugin_des.json"), str(bad),
                 "--out", str(reg2), "--queries-out", str(qs2)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv, line 2: field 'Tool'" in err
    assert not reg2.exists() and not qs2.exists()
    assert main(["import", "--from", "bfcl", "--from", "mcp", "--from", "beir",
                 str(BFCL / "BFCL_v3_simple.json"), "--out", str(reg2)]) == 2
    assert "3 --from formats for 1 inputs" in capsys.readouterr().err


def test_queries_not_written_without_queries_out(tmp_path, capsys):
    reg = tmp_path / "reg.json"
    assert main(["import", str(BENCH / "beir" / "toolret_mini"), "--out", str(reg)]) == 0
    assert "3 labeled queries (2 needing several tools, 1 with graded labels) not written: " \
           "add --queries-out FILE" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir()] == ["reg.json"]


def test_registry_validation_checks_nested_types(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps([{"name": "w", "description": "d", "parameters": {
        "type": "object", "properties": {"opts": {"type": "object", "properties": {
            "n": {"type": "float"}}}}}}]))
    with pytest.raises(DataError) as err:
        load_registry(path)
    assert err.value.field == "parameters.properties.opts.properties.n.type"
    assert "'float' is not a JSON Schema type" in err.value.reason
    path.write_text(json.dumps([{"name": "w", "description": "d", "parameters": {
        "type": "object", "properties": {"xs": {"type": "array", "items": 3}}}}]))
    with pytest.raises(DataError, match="'items' must be a schema") as err:
        load_registry(path)


def test_openai_unknown_keys_left_out_but_typos_refused():
    fn = {"type": "function", "name": "w", "description": "d", "response": {"type": "dict"},
          "parameters": {"type": "dict", "properties": {}}}
    with pytest.warns(SchemaNormalizedWarning, match="'response'"):
        (tool,) = from_openai([fn])
    assert tool.parameters == {"type": "object", "properties": {}} and not tool.metadata
    with pytest.raises(DataError, match="did you mean 'parameters'"):
        from_openai([{"type": "function", "name": "w", "description": "d", "paramters": {}}])


def test_normalizer_maps_every_level_and_counts():
    from toolsel.integrations.schemas import SchemaNormalizer
    norm = SchemaNormalizer()
    schema = {"type": "Dict", "properties": {
        "a": {"type": ["String", "None"]},
        "b": {"type": "list", "items": [{"type": "int"}, {"type": "bool"}]},
        "c": {"anyOf": [{"type": "float"}, {"type": "any"}]},
        "d": {"type": ["str", "any"]},
        "e": {"type": "object", "additionalProperties": {"type": "double"},
              "$defs": {"x": {"type": "tuple"}}}}}
    out = norm.schema(schema, tool="t")
    assert out["type"] == "object"
    assert out["properties"]["a"]["type"] == ["string", "null"]
    assert out["properties"]["b"] == {"type": "array", "items": [{"type": "integer"},
                                                                 {"type": "boolean"}]}
    assert out["properties"]["c"]["anyOf"] == [{"type": "number"}, {}]
    assert "type" not in out["properties"]["d"]  # any among the alternatives: any value
    assert out["properties"]["e"]["additionalProperties"] == {"type": "number"}
    assert out["properties"]["e"]["$defs"]["x"] == {"type": "array"}
    assert schema["type"] == "Dict"  # the input is not modified
    assert norm.changes[("type", "'Dict' -> 'object'")] == 1
    assert any("'any' -> any (no type): 2 place(s) in 1 tool(s)" in line
               for line in norm.summary())


def test_docs_name_only_real_bfcl_v4_files():
    """The import examples of docs/formats.md name files as BFCL ships them today (the v4
    names modeled by the fixtures), not retired v3 ones."""
    text = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\bBFCL_v\d+_[a-z_]+\.json", text))
    assert named and named <= {p.name for p in BFCL_V4.glob("BFCL_v4_*.json")}, named
