"""Pages 00-06 without papermill: their tables from real data and scorers, their sentences
from those tables (checked against the CSVs they cite), and the sentences following the
tables when a table changes (a lead becomes a tie, misses become none, ...)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from toolsel import Registry, Tool, load_queries, load_registry
from toolsel.io import write_table
from toolsel.pages import default_scorer, escape_hatch, explorer, misses, overview
from toolsel.pages import recall_vs_payload as recall
from toolsel.pages import scale_benchmark
from toolsel.report import claims
from toolsel.report import markdown as md

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def bundled():
    reg = load_registry(DATA / "registry.json")
    return reg, load_queries(DATA / "queries.jsonl", reg)


def _checked(tmp_path: Path, tables, files, said) -> list[str]:
    """Write ``tables`` as the page does, log every sentence, and check each number against
    the CSV it cites; returns the problems (none expected)."""
    for name, frame in tables.items():
        write_table(frame, tmp_path / files[name], index=name == "counts")
    log = claims.ClaimLog(tmp_path)
    for c in said.values():
        for one in (c.values() if isinstance(c, dict) else [c]):
            log.add(one)
    return claims.check_claims(tmp_path)


# --------------------------------------------------------------------------------------------
# 00 overview


@pytest.fixture(scope="module")
def over(bundled):
    reg, qs = bundled
    return overview.overview_tables(reg, qs, ["jaccard", "bm25"], [10, 30], n_boot=200)


def test_overview_tables_and_sentences_agree(over, tmp_path):
    t = over
    assert t.k == 10 and list(t.headline["scorer"]) == ["jaccard", "bm25"]
    # the headline is the sweep's summary at K=10
    s = t.summary.set_index(["scorer", "top_k"])
    for r in t.headline.to_dict("records"):
        for col in ("R@k", "Complete@k", "payload_reduction"):
            assert r[col] == pytest.approx(s.loc[(r["scorer"], 10), col])
        assert r["R@k_low"] <= r["R@k"] <= r["R@k_high"]
    assert set(t.paired["top_k"]) == {10} and len(t.paired) == 1
    assert t.gaps is not None and set(t.gaps["scorer"]) == {"jaccard", "bm25"}
    assert list(t.scenario["n_tools_seen"]) == [2, 2, 3] and t.pinned == ("calculator",)
    said = overview.overview_sentences(t)
    assert not _checked(tmp_path, t, overview.FILES, said)
    assert said["scenario"].text == "2, 2, 3 tools on the successive turns"
    assert "30 labeled queries" in said["run"].text


def test_overview_leader_follows_the_table(over):
    """The headline's leader sentence: a lead whose paired interval excludes zero is
    "highest"; the same lead with an interval reaching zero is a tie; equal values share."""
    h, p = over.headline.copy(), over.paired.copy()
    p.loc[:, ["diff_low", "diff_high"]] = [0.05, 0.2]
    p.loc[:, ["a", "b"]] = ["bm25", "jaccard"]
    h.loc[h.scorer == "bm25", "R@k"] = 0.9
    h.loc[h.scorer == "jaccard", "R@k"] = 0.6
    lead = overview.leader(h, "R@k", "headline.csv", label="R@10", paired=p,
                           paired_source="paired.csv", paired_where={"top_k": 10}).text
    assert lead.startswith("bm25 has the highest R@10 (90.0%), 30.0 points above jaccard")
    p.loc[:, "diff_low"] = -0.01
    tie = overview.leader(h, "R@k", "headline.csv", label="R@10", paired=p,
                          paired_source="paired.csv", paired_where={"top_k": 10}).text
    assert "tie on R@10" in tie and "includes zero" in tie
    h.loc[:, "R@k"] = 0.75
    same = overview.leader(h, "R@k", "headline.csv", label="R@10").text
    assert same == "Every scorer has the same R@10: 75.0%."


def test_overview_skip_reasons(over, bundled):
    reg, qs = bundled
    assert overview.gap_skip_reason(over, ["jaccard"]) is None
    only = overview.overview_tables(reg, qs[:4], ["default"], [10], n_boot=50)
    assert only.gaps is None and only.paired is None
    assert "no scorer other than `default`" in overview.gap_skip_reason(only, ["default"])
    assert "card" not in overview.overview_sentences(only)
    assert overview.scenario_skip_reason(reg) is None
    other = Registry([Tool("weather_lookup", "current weather for a city"),
                      Tool("calculator", "evaluate a basic arithmetic expression")])
    assert "translate_text" in overview.scenario_skip_reason(other)


# --------------------------------------------------------------------------------------------
# 01 recall vs payload


def test_recall_tables_and_real_differences(bundled, tmp_path):
    reg, qs = bundled
    t = recall.recall_tables(reg, qs, ["jaccard", "bm25"], [1, 5, 10, 80], n_boot=200)
    assert t.ks == [1, 5, 10, 80] or t.dropped  # 80 > 61 candidates: kept once, sends all
    assert set(t.summary["top_k"]) == set(t.ks)
    said = recall.recall_sentences(t)
    assert not _checked(tmp_path, t, recall.FILES, said)
    # the sentence follows the paired table: no real difference, then one
    p = t.paired_recall.copy()
    p["verdict"] = "tie"
    none = recall.real_differences(p, "p.csv", n_queries=30, n_source="s.csv").text
    assert "no R@k difference excludes zero: every pair ties" in none
    p.loc[p.index[0], "verdict"] = "behind"
    some = recall.real_differences(p, "p.csv", n_queries=30, n_source="s.csv").text
    assert "these R@k differences exclude zero: K=" in some and " behind " in some


# --------------------------------------------------------------------------------------------
# 02 misses, and one always-include convention across 01, 02, 04 and the explorer


def test_misses_and_the_explorer_rank_the_same(bundled, tmp_path):
    reg, qs = bundled
    t = misses.miss_tables(reg, qs, ["jaccard", "bm25"], [10])
    bug = t.misses[(t.misses.scorer == "jaccard")
                   & (t.misses["query"] == "file a bug report on the backend repo")]
    assert list(bug["expected"]) == ["github_create_issue"] and list(bug["rank"]) == [14]
    said = misses.miss_sentences(t)
    assert not _checked(tmp_path, t, misses.FILES, said)
    assert said["per_scorer"]["jaccard"].text == \
        f"({int(t.counts.loc['jaccard', 'total'])} misses)"
    # the explorer page ranks with the same convention (what the page is given: none)
    from toolsel.report.explorer import explore
    views = [explore(reg, "file a bug report on the backend repo", s, top_k=10,
                     always_include=[]) for s in ("jaccard", "bm25")]
    sentence = explorer.rank_sentence(views, "github_create_issue", 10).text
    assert "jaccard ranks it 14 (not sent at K=10)" in sentence
    assert "bm25 ranks it" in sentence and "(sent)" in sentence


def test_mode_summary_follows_the_counts():
    counts = pd.DataFrame({"scorer": ["a", "b"], "same-domain confusion": [2, 1],
                           "vocabulary gap": [0, 0], "total": [2, 1]}).set_index("scorer")
    text = misses.mode_summary(counts, "c.csv", k=10).text
    assert "(fewest: b)" in text and "No scorer has a miss of kind vocabulary gap" in text
    counts.loc[:, ["same-domain confusion", "total"]] = 0
    assert misses.mode_summary(counts, "c.csv", k=10).text == \
        "No scorer missed a required tool at K=10."


def test_the_report_explorer_has_the_sweep_tables_numbers(bundled):
    """explorer.html of the project's report ranks with the pages' always-include set (none),
    not the registry's marks: its R@10 is summary.csv's (notebook 01) for every scorer. With
    the registry's marks (what it did before) the numbers differ."""
    from toolsel.report.explorer_data import explorer_data
    from toolsel.report.explorer_page import report_explorer_inputs
    reg, qs = bundled
    _, _, scorers, _, always = report_explorer_inputs(ROOT / "notebooks")
    assert always == []
    committed = pd.read_csv(ROOT / "reports" / "01_recall_vs_payload" / "summary.csv")
    committed = committed[committed.top_k == 10].set_index("scorer")["R@k"]
    names = [s for s in ("jaccard", "bm25", "tfidf") if s in committed.index]

    def r_at(data, k):
        out = {}
        for s in data["scorers"]:
            per = []
            for ranks in s["required"]:
                ranked = [r[0] for r in ranks if r[0] > 0]  # 0: always included
                if ranked:
                    per.append(sum(r <= k for r in ranked) / len(ranked))
            out[s["name"]] = sum(per) / len(per)
        return out

    ours = r_at(explorer_data(reg, qs, names, depth=12, always_include=always), 10)
    for name in names:
        assert ours[name] == pytest.approx(committed[name], abs=1e-6), name
    marked = r_at(explorer_data(reg, qs, names, depth=12), 10)
    assert any(abs(marked[n] - committed[n]) > 1e-6 for n in names)


# --------------------------------------------------------------------------------------------
# 03 escape hatch


def test_escape_hatch_tables_and_sentence(bundled, tmp_path):
    reg, qs = bundled
    t = escape_hatch.hatch_tables(reg, qs, ["jaccard"], [10])
    row = t.summary.set_index("scorer").loc["jaccard"]
    assert int(row["misses"]) == 16 and int(row["recovered_literal"]) == 0
    assert list(t.words["scorer"]) == ["jaccard"] and t.has_search_terms
    said = escape_hatch.hatch_sentences(t)
    assert not _checked(tmp_path, t, escape_hatch.FILES, said)
    assert "With **jaccard** at K=10: 16 misses" in said["recovery"].text
    # no miss: nothing to recover
    clean = t.summary.assign(misses=0)
    assert "nothing for `discover` to recover" in escape_hatch.escape_hatch(
        clean, "s.csv", "jaccard", 10, 30).text
    # no search term in the query file: the call is not made
    text = escape_hatch.escape_hatch(t.summary, "s.csv", "jaccard", 10, 30,
                                     has_search_terms=False).text
    assert "gives no `search_term`" in text


# --------------------------------------------------------------------------------------------
# 05 scale


def test_scale_benchmark_sentences_follow_the_targets(tmp_path):
    bench = tmp_path / "bench"
    shutil.copytree(ROOT / "reports" / "benchmarks", bench)
    b = scale_benchmark.read_benchmark(bench, "bench")
    assert b is not None
    targets = scale_benchmark.targets(b)
    write_table(targets, tmp_path / "targets.csv")
    said = scale_benchmark.benchmark_sentences(b, targets, "README.md")
    log = claims.ClaimLog(tmp_path)
    for c in said.values():
        log.add(c)
    assert not claims.check_claims(tmp_path)
    machine = json.loads((bench / "machine.json").read_text())
    assert all(md.escape(f"{k} {v}") in said["machine"].text for k, v in machine.items())
    # a target missed: the sentence names it instead of "all met"
    missed = targets.copy()
    missed.loc[missed.index[0], "met"] = False
    text = scale_benchmark.benchmark_sentences(b, missed, "README.md")["targets"].text
    assert text.startswith("**Missed:** ")
    assert md.escape(missed.loc[missed.index[0], "target"]) in text
    (bench / "sweep.csv").unlink()
    assert scale_benchmark.read_benchmark(bench, "bench") is None


# --------------------------------------------------------------------------------------------
# 06 default scorer


@pytest.mark.slow
def test_default_scorer_tables_on_a_given_registry(tmp_path):
    """A user's registry with a split (a part of the api style): every table, every sentence
    checked against its CSV; the in-sample words when the file has no split."""
    src = DATA / "styles" / "api"
    lines = [ln for ln in (src / "queries.jsonl").read_text().splitlines() if ln.strip()]
    dev = [ln for ln in lines if '"dev"' in ln][:8]
    test = [ln for ln in lines if '"test"' in ln][:8]
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(dev + test) + "\n")
    d = default_scorer.page_data(str(src / "registry.json"), str(q), [], "", "test")
    assert not d.bundled and d.has_split and d.reported == "test requests"
    variants = {k: v for k, v in default_scorer.ablation_variants().items()
                if k in ("default", "no clauses", "clauses encoded apart", "lexical only",
                         "embedding only")}
    t = default_scorer.default_tables(d, ["bm25", "default"], n_boot=100, variants=variants)
    assert list(t.sizes["requests"]) == [8] and len(t.versus) == 3
    said = default_scorer.default_sentences(t, d)
    assert not _checked(tmp_path, t, default_scorer.FILES, said)
    assert "(test requests)" in said["run"].text
    # the verdict follows the paired interval
    vs = t.versus.copy().drop(columns="verdict")  # read back from the intervals
    vs.loc[:, ["diff", "diff_low", "diff_high"]] = [0.2, 0.1, 0.3]
    said = default_scorer.versus_best(vs, "v.csv").text
    assert "it is ahead on" in said and "behind nowhere" in said
    vs.loc[:, ["diff", "diff_low", "diff_high"]] = [0.1, -0.1, 0.3]
    assert "it is ahead on" not in default_scorer.versus_best(vs, "v.csv").text
    assert default_scorer.verdict_label("ahead") == "ahead (interval above zero)"
    assert default_scorer.verdict_label("tie") == "tie (interval includes zero)"
    nosplit = tmp_path / "nosplit.jsonl"
    nosplit.write_text("\n".join(json.dumps({k: v for k, v in json.loads(ln).items()
                                             if k != "split"}) for ln in dev) + "\n")
    d2 = default_scorer.page_data(str(src / "registry.json"), str(nosplit), [], "", "test")
    assert not d2.has_split and d2.split == "all"
    assert d2.reported.startswith("every request")


def test_a_warning_states_no_number_and_reaches_the_readme(tmp_path):
    log = claims.ClaimLog(tmp_path / "00_overview")
    with pytest.raises(ValueError, match="states no number"):
        log.warn(claims.Claim("Warning: 3 scorers are far below."))
    log.warn(claims.literal("Warning: {a} is far below {b}.", a="jaccard", b="default"))
    assert claims.page_warnings(tmp_path / "00_overview") == \
        ["Warning: jaccard is far below default."]
