"""Words on a user's pages (issue 38): the helpers that choose them, on small hand-made data.

The pages run end to end on an imported MCP registry in ``tests/test_user_pages_prose.py``;
here each helper is checked where it can fail: page 04's example comes from the user's data,
page 05's grown registry and its tables, page 01's top-axis sentence, and the one word and
count for a registry's servers (``toolsel validate``, page 00's ``data.csv``).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from toolsel import Query, Tool
from toolsel.cli import main
from toolsel.data import Registry, count_servers, servers, servers_text
from toolsel.pages import explorer, recall_vs_payload, scale_benchmark
from toolsel.report import claims
from toolsel.synthetic import grown_registry, synthetic_registry
from toolsel.tables.replication import benchmark_facts

USER = Registry([
    Tool("maps_weather", "根据城市名称查询天气预报。", metadata={"server": "amap"}),
    Tool("search", "", metadata={"server": "amap"}),
    Tool("add_note", "Add a note to the notebook.", metadata={"server": "notes"}),
    Tool("list_notes", "List notes. " * 40, metadata={"server": "notes"}),
])


# -- page 04: the example -------------------------------------------------------------------

def test_04_default_example_is_the_bundled_one_only_on_the_bundled_registry():
    q, e = explorer.DEFAULT_QUERY, explorer.DEFAULT_EXPECTED
    mine = Registry([*USER, Tool("github_create_issue", "Open an issue on GitHub.")])
    assert explorer.shown_query(mine, [], q, e, bundled=True) == (q, e, None)
    # a user's registry holding a tool of that name still gets an example of its own
    query, expected, note = explorer.shown_query(mine, [], q, e)
    assert (query, expected) == ("根据城市名称查询天气预报。", "maps_weather")
    assert "github_create_issue" not in note and "maps_weather" in note


def test_04_example_is_the_users_first_short_labeled_query():
    long = Query("q0", "describe this image: " + "iVBORw0KGgo" * 40, ("maps_weather",))
    short = Query("q1", "add a note and list them", ("add_note", "list_notes"))
    query, expected, note = explorer.shown_query(
        USER, [long, short], explorer.DEFAULT_QUERY, explorer.DEFAULT_EXPECTED)
    assert (query, expected) == (short.query, "add_note")
    assert "at most 200 characters" in note and "github" not in note
    query, expected, note = explorer.shown_query(
        USER, [short], explorer.DEFAULT_QUERY, explorer.DEFAULT_EXPECTED)
    assert (query, expected) == (short.query, "add_note") and "first labeled query" in note


def test_04_the_callers_own_example_is_kept_or_said_missing():
    assert explorer.shown_query(USER, [], "weather in Paris", "maps_weather") == (
        "weather in Paris", "maps_weather", None)
    query, expected, note = explorer.shown_query(USER, [], "weather in Paris", "nope")
    assert "This registry has no <code>nope</code>" in note and expected == "maps_weather"


# -- page 05: the registry grown tenfold ----------------------------------------------------

def test_grown_registry_keeps_the_users_tools_first_and_skips_clashing_names():
    clash = Registry([Tool(t.name, "mine") for t in list(
        synthetic_registry(40, seed=0, core=False))[:3]])
    grown = grown_registry(clash, 10)
    assert len(grown) == 30 and list(grown)[:3] == list(clash)
    assert len({t.name for t in grown}) == 30
    assert all(t.description != "mine" for t in list(grown)[3:])
    assert grown_registry(USER, 1) is not USER and list(grown_registry(USER, 1)) == list(USER)
    # the same call gives the same tools (its synthetic part is seeded)
    assert [t.name for t in grown_registry(USER, 10)] == [t.name for t in
                                                          grown_registry(USER, 10)]
    with pytest.raises(ValueError):
        grown_registry(USER, 0)


def test_05_tables_and_sentence_on_a_users_registry(tmp_path):
    grown = grown_registry(USER, 10)
    sizes = scale_benchmark.given_registry_table(USER, ["add a note"], "queries", grown=grown)
    assert list(sizes["registry"]) == ["as given", "grown 10×"]
    assert list(sizes["tools"]) == [4, 40] and list(sizes["synthetic tools added"]) == [0, 36]
    assert not any("ms" in c or "(s)" in c for c in sizes.columns)  # no timing in the table
    sizes.to_csv(tmp_path / scale_benchmark.FILES["given"], index=False)
    said = scale_benchmark.given_registry_sentence(sizes)
    assert said.text.startswith("Selection latency measured on this registry (4 tools) and on "
                                "it grown to 40 tools: its own tools, then 36 synthetic ones")
    assert "committed benchmark" not in said.text
    log = claims.ClaimLog(tmp_path)
    log.add(said)
    assert claims.check_claims(tmp_path) == []
    one = scale_benchmark.given_registry_table(USER, ["x"], "queries")
    assert scale_benchmark.given_registry_sentence(one).text == (
        "Selection latency measured on this registry (4 tools).")


def test_05_timing_table_keeps_each_registry_with_its_naive_loop():
    rows = [{"scorer": s, "n_tools": n, "build_s": 0.1, "p50_ms": p, "p95_ms": 2 * p}
            for n, ps in ((4, (1.0, 2.0)), (40, (1.0, 8.0))) for s, p in zip(("bm25", "naive"),
                                                                             ps)]
    table = scale_benchmark.timing_table(rows, ["as given"] * 2 + ["grown 10×"] * 2)
    assert list(table["registry"]) == ["as given", "as given", "grown 10×", "grown 10×"]
    assert list(table["× faster than naive"].fillna(-1)) == [2.0, -1, 8.0, -1]


def test_the_scale_figure_names_the_naive_loop_as_such():
    from toolsel.report.plots import plot_latency_vs_tools
    scale = pd.DataFrame([{"scorer": s, "n_tools": n, "p50_ms": 1.0, "p95_ms": 2.0}
                          for s in ("bm25", "naive") for n in (10, 100)])
    ax = plot_latency_vs_tools(scale).axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert "naive loop (select_tools + jaccard hook)" in labels
    assert "Selector.select" not in ax.get_ylabel() and "article" not in " ".join(labels)


# -- page 01: the top axis ------------------------------------------------------------------

def test_01_k_marks_measure_how_far_the_other_points_lie(tmp_path):
    # bm25's K=20 point sits where jaccard's K=30 point is marked (issue 38's BFCL case)
    summary = pd.DataFrame([
        {"scorer": "jaccard", "top_k": 20, "payload_reduction": 0.60},
        {"scorer": "jaccard", "top_k": 30, "payload_reduction": 0.40},
        {"scorer": "bm25", "top_k": 20, "payload_reduction": 0.41},
        {"scorer": "bm25", "top_k": 30, "payload_reduction": 0.35},
    ])
    marks = recall_vs_payload.k_marks(summary)
    assert list(marks["farthest"]) == ["bm25", "bm25"]
    assert marks["gap"].round(6).tolist() == [0.19, 0.05]
    marks.to_csv(tmp_path / "k_marks.csv", index=False)
    said = recall_vs_payload.k_mark_sentence(marks, "jaccard")
    assert "close by" not in said.text
    assert said.text.endswith("lie up to 19.0 points of payload reduction from its mark "
                              "(K=20, <code>bm25</code>).")
    claims.ClaimLog(tmp_path).add(said)
    assert claims.check_claims(tmp_path) == []
    alone = recall_vs_payload.k_marks(summary[summary.scorer == "jaccard"])
    assert recall_vs_payload.k_mark_sentence(alone, "jaccard").text == (
        "K is written above the frame at the points of <code>jaccard</code>.")


# -- one word for a registry's servers ------------------------------------------------------

def test_servers_are_counted_from_server_or_domain_metadata():
    assert servers(USER) == ["amap", "notes"] and count_servers(USER) == 2
    bundled_style = Registry([Tool("a", "x", metadata={"domain": "slack"}),
                              Tool("b", "y", metadata={"domain": "github"}), Tool("c", "z")])
    assert count_servers(bundled_style) == 2
    assert count_servers([Tool("f", "g")]) == 0
    assert servers_text(1) == "1 server" and servers_text(1200) == "1,200 servers"
    facts = benchmark_facts(USER, [])
    assert facts["n_servers"] == 2 and "n_domains" not in facts


def test_validate_says_servers_for_an_imported_mcp_registry(tmp_path, capsys):
    dump = tmp_path / "tools.json"
    dump.write_text(json.dumps([
        {"name": "maps", "tools": [{"name": "weather", "description": "天气",
                                    "inputSchema": {"type": "object"}}]},
        {"name": "notes", "tools": [{"name": "add", "description": "Add a note.",
                                     "inputSchema": {"type": "object"}}]}],
        ensure_ascii=False), encoding="utf-8")
    reg = tmp_path / "reg.json"
    assert main(["import", "--from", "mcp", str(dump), "--out", str(reg)]) == 0
    capsys.readouterr()
    assert main(["validate", "--registry", str(reg)]) == 0
    out = capsys.readouterr().out
    assert ": 2 tools, 2 servers, " in out and "domain" not in out
