"""Recorded runs: every figure of the hand-written set, and malformed transcripts."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
from pathlib import Path

import pytest

from toolsel.cli import main
from toolsel.data import DataError, load_registry
from toolsel.tables.runs import evaluate_runs, format_stage_table, load_runs

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "data" / "runs"


@pytest.fixture(scope="module")
def registry():
    return load_registry(ROOT / "data" / "registry.json")


@pytest.fixture(scope="module")
def report(registry):
    return evaluate_runs(load_runs(RUNS, registry=registry))


def _task(report, task_id, run):
    rows = report.tasks[(report.tasks["task_id"] == task_id) & (report.tasks["run"] == run)]
    assert len(rows) == 1
    return rows.iloc[0]


def _stage(report, run):
    return report.stages.set_index("run").loc[run]


# --------------------------------------------------------------------------------------------
# the hand-written set


def test_transcripts_match_their_scripts():
    spec = importlib.util.spec_from_file_location("write_transcripts",
                                                  RUNS / "write_transcripts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (RUNS / "transcripts.jsonl").read_text(encoding="utf-8") == module.render()


def test_runs_are_grouped_by_task_and_run(registry):
    runset = load_runs(RUNS, registry=registry)
    assert [(r.task_id, r.run) for r in runset.runs] == [
        ("r01", "eager"), ("r01", "deferred"), ("r02", "eager"), ("r02", "deferred"),
        ("r03", "eager"), ("r03", "deferred"), ("r04", "deferred"), ("r05", "client-search"),
        ("r06", "deferred")]
    assert [len(r.exchanges) for r in runset.runs] == [2, 2, 2, 2, 4, 3, 2, 6, 3]
    r04 = runset.runs[6]
    # the searches repeat in the history of the second request: counted once
    assert [s.query for s in r04.searches] == ["divide numbers", "arithmetic"]
    assert r04.mode == "deferred" and runset.runs[0].mode == "eager"
    assert "write_file" in r04.visible and "calculator" in r04.deferred


def test_discovery_per_task(report):
    r03 = _task(report, "r03", "deferred")
    assert (r03["n_deferred_required"], r03["n_discovered_required"]) == (3, 2)
    assert r03["discovery_recall"] == pytest.approx(2 / 3)
    assert r03["undiscovered"] == "slack_send_message" and not r03["all_available"]
    # write_file is always visible: reported apart, not counted as discovered
    r06 = _task(report, "r06", "deferred")
    assert r06["visible_required"] == "write_file"
    assert (r06["n_deferred_required"], r06["n_discovered_required"]) == (1, 1)
    # eager runs have nothing deferred: no recall, everything available
    r01e = _task(report, "r01", "eager")
    assert math.isnan(r01e["discovery_recall"]) and r01e["all_available"]
    assert r01e["visible_required"] == "github_create_issue"


def test_empty_search_is_a_miss_when_a_relevant_tool_existed(report):
    r04 = _task(report, "r04", "deferred")
    assert (r04["searches"], r04["empty_searches"], r04["empty_search_misses"]) == (2, 1, 1)
    assert r04["discovery_recall"] == 1.0 and r04["diagnosis"] == "ok"
    rows = report.searches[report.searches["task_id"] == "r04"]
    assert rows["empty_miss"].tolist() == [True, False]
    assert rows["new_required"].tolist() == ["", "calculator"]


def test_selection_given_discovery_and_diagnoses(report):
    diagnoses = {(t, r): d for t, r, d in zip(report.tasks["task_id"], report.tasks["run"],
                                              report.tasks["diagnosis"])}
    assert diagnoses == {
        ("r01", "eager"): "ok", ("r01", "deferred"): "ok",
        ("r02", "eager"): "ok", ("r02", "deferred"): "selection miss",
        ("r03", "eager"): "ok", ("r03", "deferred"): "discovery miss",
        ("r04", "deferred"): "ok", ("r05", "client-search"): "ok", ("r06", "deferred"): "ok"}
    r02 = _task(report, "r02", "deferred")
    assert r02["all_available"] and not r02["selection_correct"]
    assert (r02["right_calls"], r02["wrong_calls"]) == (0, 1)
    assert "called jira_add_comment(" in r02["evidence"]
    assert "never called jira_transition_issue (loaded by search 'jira issue status " \
           "transition')" in r02["evidence"]
    r03 = _task(report, "r03", "deferred")
    assert "slack_send_message never returned by 2 search(es)" in r03["evidence"]
    assert "'share link with team' -> [drive_share_file, linear_create_issue" in r03["evidence"]


def test_client_side_search(report):
    r05 = _task(report, "r05", "client-search")
    assert (r05["server_searches"], r05["client_searches"]) == (0, 2)
    assert r05["references_loaded"] == 6 and r05["distinct_loaded"] == 4
    assert r05["loaded_noise"] == 2          # slack_send_message, slack_add_reaction
    assert r05["called"] == "translate_text;slack_send_dm" and r05["client_calls"] == 2
    assert r05["discovery_recall"] == 1.0 and r05["success"]


def test_three_stage_figures(report):
    d = _stage(report, "deferred")
    assert d["tasks"] == 5
    assert d["discovery_recall"] == pytest.approx((1 + 1 + 2 / 3 + 1 + 1) / 5)
    assert (d["discovered_required"], d["deferred_required"]) == (6, 7)
    assert d["all_available"] == pytest.approx(0.8)
    assert d["empty_search_misses"] == 1
    assert d["tasks_available"] == 4
    assert d["selection_given_discovery"] == pytest.approx(0.75)
    assert d["wrong_operation_rate"] == pytest.approx(1 / 5)
    assert d["success"] == pytest.approx(0.6)
    assert (d["requests"], d["searches"], d["references_loaded"], d["client_calls"]) == \
        (12, 7, 25, 7)
    e = _stage(report, "eager")
    assert e["tasks"] == 3 and math.isnan(e["discovery_recall"])
    assert (e["all_available"], e["selection_given_discovery"], e["success"]) == (1, 1, 1)
    assert (e["requests"], e["searches"], e["client_calls"]) == (8, 0, 5)
    c = _stage(report, "client-search")
    assert (c["tasks"], c["searches"], c["references_loaded"]) == (1, 2, 6)
    assert report.stages["run"].tolist() == ["eager", "client-search", "deferred"]
    table = format_stage_table(report.stages)
    assert "selection given discovery" in table and "93%" in table and "6/7" in table


def _raw_usage():
    sums: dict[tuple[str, str], dict[str, int]] = {}
    for line in (RUNS / "transcripts.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        s = sums.setdefault((rec["task_id"], rec["run"]), {})
        for k, v in rec["response"]["usage"].items():
            s[k] = s.get(k, 0) + v
    return sums


def test_cost_sums_every_request(report):
    raw = _raw_usage()
    for _, row in report.tasks.iterrows():
        u = raw[(row["task_id"], row["run"])]
        assert row["input_uncached"] == u["input_tokens"]
        assert row["cache_write"] == u["cache_creation_input_tokens"]
        assert row["cache_read"] == u["cache_read_input_tokens"]
        assert row["input_total"] == (u["input_tokens"] + u["cache_creation_input_tokens"]
                                      + u["cache_read_input_tokens"])
        assert row["output_tokens"] == u["output_tokens"]
        # the cache model: one write per task, every later request reads the same prefix
        assert row["cache_read"] == row["cache_write"] * (row["n_requests"] - 1)
    d = _stage(report, "deferred")
    assert d["input_total"] == report.tasks.loc[report.tasks["run"] == "deferred",
                                                "input_total"].sum()


def test_eager_and_deferred_side_by_side(report):
    cmp = report.compare
    assert cmp["task_id"].tolist() == ["r01", "r02", "r03"]
    assert (cmp["input_total_deferred"] < cmp["input_total_eager"]).all()
    # deferral moves tokens out of the cached prefix into uncached loads
    assert (cmp["input_uncached_deferred"] > cmp["input_uncached_eager"]).all()
    assert (cmp["cache_write_deferred"] < cmp["cache_write_eager"]).all()
    assert cmp["success_eager"].tolist() == [True, True, True]
    assert cmp["success_deferred"].tolist() == [True, False, False]
    r01 = cmp.iloc[0]
    assert r01["input_change"] == pytest.approx(
        r01["input_total_deferred"] / r01["input_total_eager"] - 1)


def test_write_is_deterministic(report, tmp_path):
    paths = report.write(tmp_path / "a")
    assert [p.name for p in paths] == ["stages.csv", "tasks.csv", "searches.csv",
                                       "compare.csv", "cost.csv"]
    again = evaluate_runs(load_runs(RUNS)).write(tmp_path / "b")
    for p, q in zip(paths, again):
        assert p.read_bytes() == q.read_bytes()
    assert not list((tmp_path / "a").glob(".*tmp"))


def test_cli_prints_the_table_and_writes(tmp_path, capsys):
    rc = main(["runs", str(RUNS), "--registry", str(ROOT / "data" / "registry.json"),
               "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "discovery" in out and "selection given discovery" in out and "cost" in out
    assert "r03      deferred       discovery miss" in out
    assert (tmp_path / "stages.csv").exists()


# --------------------------------------------------------------------------------------------
# malformed transcripts

TOOLS = [
    {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    {"name": "read_file", "description": "Read a file.",
     "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "calculator", "description": "Evaluate arithmetic.", "defer_loading": True,
     "input_schema": {"type": "object", "properties": {"expression": {"type": "string"}}}},
]
USAGE = {"input_tokens": 120, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 900,
         "output_tokens": 40}


def _exchange():
    return {"task_id": "t1", "expected": ["calculator"], "query": "what's 2+2",
            "request": {"model": "m", "max_tokens": 100, "tools": copy.deepcopy(TOOLS),
                        "messages": [{"role": "user", "content": "what's 2+2"}]},
            "response": {"type": "message", "role": "assistant", "stop_reason": "tool_use",
                         "usage": dict(USAGE), "content": [
                             {"type": "server_tool_use", "id": "srvtoolu_1",
                              "name": "tool_search_tool_bm25", "input": {"query": "math"}},
                             {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1",
                              "content": {"type": "tool_search_tool_search_result",
                                          "tool_references": [{"type": "tool_reference",
                                                               "tool_name": "calculator"}]}},
                             {"type": "tool_use", "id": "toolu_1", "name": "calculator",
                              "input": {"expression": "2+2"}}]}}


def _followup(first):
    second = copy.deepcopy(first)
    second["request"]["messages"] += [
        {"role": "assistant", "content": first["response"]["content"]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "4"}]}]
    second["response"]["content"] = [{"type": "text", "text": "4"}]
    second["response"]["stop_reason"] = "end_turn"
    return second


def _write(tmp_path, *records) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_inline_labels_and_a_minimal_run(tmp_path):
    first = _exchange()
    report = evaluate_runs(load_runs(_write(tmp_path, first, _followup(first))))
    row = report.tasks.iloc[0]
    assert (row["run"], row["discovery_recall"], row["diagnosis"]) == ("deferred", 1.0, "ok")
    assert (row["searches"], row["client_calls"], row["n_requests"]) == (1, 1, 2)
    assert (row["input_uncached"], row["cache_read"], row["output_tokens"]) == (240, 1800, 80)


def _error(tmp_path, *records) -> DataError:
    with pytest.raises(DataError) as info:
        load_runs(_write(tmp_path, *records))
    return info.value


def test_unknown_block_type(tmp_path):
    rec = _exchange()
    rec["response"]["content"].insert(1, {"type": "web_search_tool_result", "content": []})
    err = _error(tmp_path, rec)
    assert err.path.endswith("run.jsonl") and err.location == "line 1, response.content[1]"
    assert err.field == "type" and "unknown content block type 'web_search_tool_result'" in \
        str(err)


def test_tool_result_for_a_server_tool_id(tmp_path):
    first = _exchange()
    second = _followup(first)
    second["request"]["messages"][-1]["content"].append(
        {"type": "tool_result", "tool_use_id": "srvtoolu_1", "content": "calculator"})
    err = _error(tmp_path, first, second)
    assert err.location == "line 2, request.messages[2].content[1]"
    assert err.field == "tool_use_id" and "server_tool_use of 'tool_search_tool_bm25'" in \
        str(err)


def test_missing_usage(tmp_path):
    rec = _exchange()
    del rec["response"]["usage"]
    err = _error(tmp_path, rec)
    assert (err.location, err.field) == ("line 1, response", "usage")


def test_bad_usage_count(tmp_path):
    rec = _exchange()
    rec["response"]["usage"]["output_tokens"] = -3
    err = _error(tmp_path, rec)
    assert err.location == "line 1, response.usage" and err.field == "output_tokens"


def test_null_cache_fields_mean_zero(tmp_path):
    rec = _exchange()
    rec["response"]["usage"]["cache_read_input_tokens"] = None
    row = evaluate_runs(load_runs(_write(tmp_path, rec))).tasks.iloc[0]
    assert row["cache_read"] == 0


def test_reference_to_an_undefined_tool(tmp_path):
    rec = _exchange()
    refs = rec["response"]["content"][1]["content"]["tool_references"]
    refs.append({"type": "tool_reference", "tool_name": "calculater"})
    err = _error(tmp_path, rec)
    assert err.location == "line 1, response.content[1].content.tool_references[1]"
    assert err.field == "tool_name" and "'calculater'" in str(err)


def test_search_result_without_its_call(tmp_path):
    rec = _exchange()
    del rec["response"]["content"][0]
    err = _error(tmp_path, rec)
    assert err.field == "tool_use_id" and "no server_tool_use" in str(err)


def test_call_to_a_deferred_tool_never_loaded(tmp_path):
    rec = _exchange()
    del rec["response"]["content"][0:2]
    err = _error(tmp_path, rec)
    assert err.location == "line 1, response.content[0]" and err.field == "name"
    assert "before any search returned a tool_reference" in str(err)


def test_deferred_search_tool(tmp_path):
    rec = _exchange()
    rec["request"]["tools"][0]["defer_loading"] = True
    err = _error(tmp_path, rec)
    assert err.location == "line 1, request.tools[0]" and err.field == "defer_loading"


def test_missing_label(tmp_path):
    rec = _exchange()
    del rec["expected"]
    err = _error(tmp_path, rec)
    assert err.field == "task_id" and "task 't1' has no label" in str(err)


def test_inline_label_disagreeing_with_the_label_file(tmp_path):
    (tmp_path / "tasks.jsonl").write_text(
        json.dumps({"id": "t1", "query": "what's 2+2", "expected": ["read_file"]}) + "\n")
    err = _error(tmp_path, _exchange())
    assert err.field == "expected" and "disagrees" in str(err)


def test_label_naming_a_tool_outside_the_registry(tmp_path, registry):
    rec = _exchange()
    rec["expected"] = ["calculater"]
    with pytest.raises(DataError, match="did you mean 'calculator'"):
        load_runs(_write(tmp_path, rec), registry=registry)


@pytest.mark.skipif(importlib.util.find_spec("anthropic") is None,
                    reason="the anthropic SDK is optional")
def test_sdk_types_check_block_shapes(tmp_path):
    rec = _exchange()
    rec["response"]["content"][0]["name"] = "tool_search_tool_fuzzy"
    err = _error(tmp_path, rec)
    assert err.location == "line 1, response.content[0]" and err.field == "name"
    assert "anthropic SDK's ServerToolUseBlock" in str(err)


def test_cli_reports_malformed_input(tmp_path, capsys):
    rec = _exchange()
    del rec["response"]["usage"]
    path = _write(tmp_path, rec)
    rc = main(["runs", str(path), "--registry", str(ROOT / "data" / "registry.json")])
    assert rc == 2
    assert "line 1, response: field 'usage': missing" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="figures need the notebooks extra")
def test_cost_split_figure(report):
    import matplotlib
    matplotlib.use("Agg")
    from toolsel.report.plots import plot_cost_split
    ax = plot_cost_split(report)
    assert "tokens" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "uncached input", "cache write", "cache read"]
    # one stacked bar per task x run: its length is the run's whole input
    widths = {}
    for patch in ax.patches:
        y = round(patch.get_y(), 6)
        widths[y] = widths.get(y, 0) + patch.get_width()
    assert sorted(widths.values()) == sorted(report.tasks["input_total"].astype(float))
    matplotlib.pyplot.close(ax.figure)


def test_plain_json_without_the_sdk():
    """The loader needs no anthropic SDK: the same figures with the import blocked."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['anthropic'] = None\n"
            "from toolsel.tables.runs import load_runs, evaluate_runs\n"
            "from toolsel.integrations.anthropic_runs import _sdk_types\n"
            f"r = evaluate_runs(load_runs({str(RUNS)!r}))\n"
            "assert _sdk_types() == {}\n"
            "print(r.stages.to_csv(index=False))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    here = evaluate_runs(load_runs(RUNS)).stages.to_csv(index=False)
    assert out.strip() == here.strip()
