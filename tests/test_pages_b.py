"""Pages 07-12 without papermill: each page module's tables and sentences on real data (the
bundled files, a bundled style with its split removed, and MCP dumps imported as a user does),
with real scorers; every sentence's numbers read back from the CSVs it cites."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from test_claims import bundled_only_sentences
from toolsel import load_queries, load_registry
from toolsel.datasets import load_conversations, load_repairs, load_style
from toolsel.io import write_table
from toolsel.pages import page_module
from toolsel.report import claims

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
MCP = ROOT / "tests" / "data" / "mcp"


def _shown(tmp: Path, tables, files: dict, said, *, has_split: bool, bundled: bool = True
           ) -> str:
    """Write ``tables`` as the notebook does, record ``said`` (name -> Claim), and return the
    sentences' text once the claims check found every number in the CSVs it cites; on data
    other than the bundled data, no sentence names what only the bundled data has."""
    for name, table in tables:
        path = tmp / files[name]
        path.parent.mkdir(parents=True, exist_ok=True)
        write_table(table, path)
    log = claims.ClaimLog(tmp)
    texts = [log.add(c) for c in said.values()]
    assert claims.check_claims(tmp) == []
    if not bundled:
        assert bundled_only_sentences(texts, has_split=has_split) == []
    return "\n".join(texts)


def _without_split(queries):
    return [dataclasses.replace(q, split=None) for q in queries]


def _mcp_registry(tmp: Path):
    from toolsel.cli import main
    path = tmp / "mcp_registry.json"
    assert main(["import", "--from", "mcp", *map(str, sorted(MCP.glob("*.json"))),
                 "--out", str(path)]) == 0
    reg = load_registry(path)
    return reg, load_queries(MCP / "queries.jsonl", reg)


@pytest.mark.parametrize("number", ["07", "08", "09", "10", "11", "12"])
def test_pages_07_to_12_are_registered(number):
    assert page_module(number).FILES


# --------------------------------------------------------------------------------------------
# 07 discovery


def test_discovery_on_the_bundled_test_split(tmp_path):
    from toolsel.pages.discovery import FILES, discovery_sentences, discovery_tables, split_note
    reg = load_registry(DATA / "registry.json")
    requests = load_queries(DATA / "requests.jsonl", reg)
    t = discovery_tables(reg, requests, ["bm25"], [1, 5, 10], [1, 5, 10], "test")
    n_test = sum(q.split == "test" for q in requests)
    assert t.split == "test" and t.follows_rule
    assert t.per_request["query_id"].nunique() == n_test
    assert (t.per_request["Complete@k"].fillna(0) <= t.per_request["R@k"].fillna(0)).all()
    text = _shown(tmp_path, t.items(), FILES, discovery_sentences(t), has_split=True)
    assert f"this report uses the **test** split: {n_test} requests." in text
    at5 = t.by_category[t.by_category.top_k == 5]
    lowest = at5.loc[at5["Complete@k"].idxmin(), "category"]
    assert f"bm25: lowest <code>{lowest}</code>" in text
    assert "**test** requests" in split_note(t)


def test_discovery_without_a_split_says_every_request_and_no_test(tmp_path):
    from toolsel.pages.discovery import FILES, discovery_sentences, discovery_tables, split_note
    reg = load_registry(DATA / "registry.json")
    requests = _without_split(load_queries(DATA / "requests.jsonl", reg))
    t = discovery_tables(reg, requests, ["bm25"], [1, 5, 10], [1, 5, 10], "test")
    assert t.split == "all" and t.per_request["query_id"].nunique() == len(requests)
    text = _shown(tmp_path, t.items(), FILES, discovery_sentences(t), has_split=False,
                  bundled=False)
    assert "this report uses every request." in text and "**Reading (every request).**" in text
    assert "no `split` field" in split_note(t)


def test_discovery_on_an_imported_mcp_registry(tmp_path):
    from toolsel.pages.discovery import FILES, discovery_sentences, discovery_tables
    reg, queries = _mcp_registry(tmp_path)
    t = discovery_tables(reg, queries, ["bm25", "jaccard"], [1, 3, 5], [1, 3], "test")
    assert t.split == "all" and t.noise_terms is None
    _shown(tmp_path / "page", t.items(), FILES, discovery_sentences(t), has_split=False,
           bundled=False)


# --------------------------------------------------------------------------------------------
# 08 conversations


def test_conversations_replay_and_the_reading_follows_the_signs(tmp_path):
    from toolsel.pages.conversations import (FILES, conversation_sentences,
                                             conversation_tables)
    reg = load_registry(DATA / "registry.json")
    convs = load_conversations(DATA / "conversations.jsonl", reg)
    t = conversation_tables(reg, convs, scorer="bm25", top_k=10, policy="carry_if_dependent")
    assert t.split == "test"
    assert set(t.totals["strategy"]) == {"eager", "filtered", "deferred"}
    # eager is always available: Wilson's interval over the turns, not a collapsed [100, 100]
    eager = t.ci.loc[("eager ", "available")]
    assert eager["mean"] == 1.0 and eager["low"] < 1.0
    said = conversation_sentences(t)
    text = _shown(tmp_path, t.items(), FILES, said, has_split=True)
    vs = t.versus.set_index("strategy")
    filtered = "the filtered strategy sends"
    if vs.loc["filtered", "fewer_tokens"] > 0 and vs.loc["filtered", "extra_cost"] > 0:
        assert "fewer input tokens than eager but costs" in text
    # a table where filtering is also cheaper: the words change with the sign
    t.versus.loc[t.versus["strategy"] == "filtered", ["cost_vs_eager", "extra_cost"]] = [0.5, -0.5]
    cheaper = conversation_sentences(t)["reading"].text
    assert filtered in cheaper and "but costs" not in cheaper.split(";")[0]
    assert "and costs 50% of eager's cost" in cheaper


def test_conversations_without_a_split_replay_every_conversation(tmp_path):
    from toolsel.pages.conversations import (FILES, conversation_sentences,
                                             conversation_tables)
    reg = load_registry(DATA / "registry.json")
    convs = [dataclasses.replace(c, split=None)
             for c in load_conversations(DATA / "conversations.jsonl", reg)][:4]
    t = conversation_tables(reg, convs, scorer="bm25", top_k=5, policy="latest")
    assert t.split == "all" and int(t.data["n_conversations"].iloc[0]) == 4
    text = _shown(tmp_path, t.items(), FILES, conversation_sentences(t), has_split=False,
                  bundled=False)
    assert "this report replays every conversation" in text


# --------------------------------------------------------------------------------------------
# 09 description repair


def test_description_repair_on_the_bundled_split(tmp_path):
    from toolsel.pages.description_repair import FILES, repair_sentences, repair_tables
    reg = load_registry(DATA / "registry.json")
    t = repair_tables(reg, load_queries(DATA / "requests.jsonl", reg),
                      load_repairs(DATA / "repairs" / "descriptions_v2.json", reg),
                      ["bm25-okapi", "bm25"], hint_scorer="bm25-okapi", top_k=5,
                      replication=load_queries(DATA / "queries.jsonl", reg),
                      held_name="replication")
    assert list(t.suites) == ["dev", "test", "replication"] and not t.unmotivated
    assert t.leaks.empty
    said = repair_sentences(t)
    text = _shown(tmp_path, t.items(), FILES, said, has_split=True)
    assert "On the held-back **test** split, test: Complete@5" in text
    assert "30 replication queries" in said["sizes"].text
    # the count of test changes whose interval excludes zero is what the table says
    test = t.gain[t.gain["suite"] == "test"]
    if not test["excludes_zero"].any():
        assert "these changes tie with none" in said["every_scorer"].text


def test_description_repair_without_a_split_is_in_sample_and_never_says_dev(tmp_path):
    from toolsel.pages.description_repair import FILES, repair_sentences, repair_tables
    reg = load_registry(DATA / "registry.json")
    requests = _without_split(load_queries(DATA / "requests.jsonl", reg))[:60]
    t = repair_tables(reg, requests, load_repairs(DATA / "repairs" / "descriptions_v2.json", reg),
                      ["bm25"], hint_scorer="bm25", top_k=5)
    assert list(t.suites) == ["all"] and t.held_back == []
    said = repair_sentences(t)
    text = _shown(tmp_path, t.items(), FILES, said, has_split=False, bundled=False)
    assert "in-sample" in said["reading"].text and "on every request" in said["misses"].text
    assert "every_scorer" not in said and "dev" not in text


def test_description_repair_on_an_mcp_registry_without_a_patch(tmp_path):
    from toolsel.pages.description_repair import FILES, repair_sentences, repair_tables
    reg, queries = _mcp_registry(tmp_path)
    t = repair_tables(reg, queries, None, ["bm25"], hint_scorer="bm25", top_k=3)
    assert t.patch is None and t.gain is None
    said = repair_sentences(t)
    assert set(said) == {"sizes", "misses"}
    _shown(tmp_path / "page", t.items(), FILES, said, has_split=False, bundled=False)


def test_repair_change_quotes_the_row_and_says_when_there_is_none(tmp_path):
    from toolsel.pages.description_repair import repair_change
    import pandas as pd
    gain = pd.DataFrame([{"suite": "dev", "scorer": "bm25", "v1": 0.5, "v2": 0.625,
                          "gain": 0.125, "gain_low": 0.0, "gain_high": 0.25, "found": 1,
                          "lost": 0, "queries_fixed": 1, "queries_broken": 0, "n": 8}])
    write_table(gain, tmp_path / "g.csv")
    c = repair_change(gain, "g.csv", suite="dev", scorer="bm25", metric="Complete@5")
    assert c.text == ("dev: Complete@5 50.0% → 62.5% (+12.5 points [+0.0, +25.0]; 1 tool found, "
                      "0 lost, 1 request fixed, 0 broken; 8 requests)")
    claims.ClaimLog(tmp_path).add(c)
    assert claims.check_claims(tmp_path) == []
    assert repair_change(gain, "g.csv", suite="test", scorer="bm25").text.startswith(
        "No test result for")


# --------------------------------------------------------------------------------------------
# 10 integrations, 11 recorded runs


def test_integrations_tables_on_imported_mcp_dumps(tmp_path):
    from toolsel.pages.integrations import (FILES, imported_sentence, imported_table,
                                            search_sentence, search_table)
    reg, _ = _mcp_registry(tmp_path)
    merged = imported_table(reg)
    assert list(merged["name"]) == list(reg.names)
    assert merged["server"].notna().all() and merged["server"].nunique() == len(
        list(MCP.glob("*.json")))
    found = search_table({"content": [{"type": "tool_reference", "tool_name": n}
                                      for n in list(reg.names)[:2]]})
    _shown(tmp_path / "page", [("imported", merged), ("search", found)], FILES,
           {"i": imported_sentence(merged, "[registry.json](x/registry.json)"),
            "s": search_sentence(found)}, has_split=False, bundled=False)


def test_recorded_runs_on_the_bundled_recording(tmp_path):
    from toolsel.pages.recorded_runs import (FILES, rates_with_interval, run_sentences,
                                             run_tables, stage_tables)
    t = run_tables(DATA / "runs", load_registry(DATA / "registry.json"))
    discovery, cost = stage_tables(t.report)
    row = discovery.set_index("run").loc["deferred"]
    assert row["required found"] == "6/7" and row["complete [95%]"] == "4/5, 80% [38, 96]"
    assert list(cost["run"]) == list(discovery["run"])
    said = run_sentences(t)
    _shown(tmp_path, [("data", t.data), ("searches", t.report.searches),
                      ("compare", t.report.compare)], FILES, said, has_split=False)
    # a run is one task under one configuration: the stages table's tasks add up to them
    assert int(t.report.stages["tasks"].sum()) == int(t.data["n_runs"].iloc[0])
    assert said["data"].text == (f"{int(t.data['n_runs'].iloc[0])} runs of "
                                 f"{int(t.data['n_tasks'].iloc[0])} labeled tasks, "
                                 f"{int(t.data['n_requests'].iloc[0])} requests.")
    cmp = t.report.compare
    assert (f"{int(cmp['success_eager'].sum())} succeed eager and "
            f"{int(cmp['success_deferred'].sum())} deferred") in said["compare"].text
    assert rates_with_interval(t.report.tasks, "run", "success", ["nobody"]) == ["0/0, –"]


# --------------------------------------------------------------------------------------------
# 12 selection policies: "beats" only where the paired interval excludes zero


def _policies(styles, *, has_split=True):
    from toolsel.pages.selection_policies import policy_tables
    data = {s: load_style(s, DATA / "styles") for s in styles}
    if not has_split:
        data = {s: (reg, _without_split(qs)) for s, (reg, qs) in data.items()}
    return policy_tables(data, has_split=has_split, n_boot=500)


def test_a_policy_beats_top_k_only_where_its_gain_interval_is_above_zero(tmp_path):
    from toolsel.pages.selection_policies import FILES, verdict_sentence
    t = _policies(["api", "plugin"])
    comp = t.comparable
    won = comp[comp["beats"]]
    assert (won["gain_low"] > 0).all() and (won["best_policy"] != "top_k").all()
    # a point that dominates on the means with an interval including zero is a tie
    tied = comp[(comp["best_policy"] != "top_k") & (comp["gain_low"] <= 0)]
    assert len(tied) and not tied["beats"].any()
    sv = t.style_verdict.set_index("style")
    for style in ("api", "plugin"):
        beats = bool(won["style"].eq(style).any())
        assert sv.loc[style, "beats_top_k"] == beats
        assert sv.loc[style, "ties_top_k"] == (not beats and bool(
            t.verdict.loc[t.verdict["style"] == style, "dominates"].any()))
    said = {"verdict": verdict_sentence(t.style_verdict, t.verdict, in_sample=False)}
    text = _shown(tmp_path, t.items(), FILES, said, has_split=True)
    n_beats, n_ties = int(sv["beats_top_k"].sum()), int(sv["ties_top_k"].sum())
    assert f"beats it on **{n_beats} of 2** styles" in text
    assert f"a policy only ties it on {n_ties}" in text


def test_the_verdict_becomes_a_tie_when_the_interval_includes_zero(tmp_path):
    from toolsel.pages.selection_policies import verdict_sentence
    t = _policies(["api"])
    sv, v = t.style_verdict.copy(), t.verdict.copy()
    # the tables as they read where the dev-chosen gain is ahead on test
    v.loc[v.index[0], "beats"] = True
    sv["beats_top_k"], sv["ties_top_k"] = True, False
    before = verdict_sentence(sv, v, in_sample=False).text
    assert "A policy other than fixed top-K **beats** it on this style" in before
    # the same tables with the winning gain's interval reaching zero
    v["beats"] = False
    sv["beats_top_k"], sv["ties_top_k"] = False, True
    after = verdict_sentence(sv, v, in_sample=False).text
    assert "No policy other than fixed top-K beats it on this style" in after
    assert "a policy only ties it" in after and "of 1" not in after and "1 more" not in after


def test_policies_without_a_split_get_a_seeded_split_by_group(tmp_path):
    """A file without a split is not chosen and reported on the same requests: the page deals
    whole request groups to dev and test with a fixed seed, and sizes.csv says so."""
    from toolsel.learn.groups import request_groups, seeded_split
    from toolsel.pages.selection_policies import FILES, verdict_sentence
    t = _policies(["api"], has_split=False)
    s = t.sizes.iloc[0]
    assert s["split"].startswith("seeded") and t.split_kind == "seeded"
    reg, qs = load_style("api", DATA / "styles")
    assert s["dev requests"] + s["test requests"] == len(qs)
    assert abs(s["dev requests"] - s["test requests"]) <= max(
        1, int(pd.Series(request_groups(qs)).value_counts().max()))
    # no group straddles the split, and the split is the same on every run
    plain = _without_split(qs)
    split = seeded_split(plain)
    groups = request_groups(plain)
    assert all(len({sp for sp, g2 in zip(split, groups) if g2 == g}) == 1 for g in set(groups))
    assert split == seeded_split(plain)
    # settings chosen on the seeded dev part, the gain tested on its test part
    assert (t.comparable["chosen_on"] == "dev").all()
    said = {"verdict": verdict_sentence(t.style_verdict, t.verdict, in_sample=False,
                                        seeded=True, unit=("registry", "registries"))}
    text = _shown(tmp_path, t.items(), FILES, said, has_split=True, bundled=False)
    assert "seeded split" in text and "on this registry" in text
    assert "chosen and measured on the same requests" not in text