"""The sweep on a hand-checked registry, on the benchmark (the article's misses), and the CLI."""

import math

import pandas as pd
import pytest

from toolsel import JaccardScorer, Query, Tool, load_queries, load_registry
from toolsel.eval.sweep import SweepResult, sweep
from toolsel.cli import main
from toolsel.eval.policies import default_grid, evaluate_policies, frontier, summarize_policies
from toolsel.eval.sweep import POLICY_COLUMNS
from toolsel.policies import AdaptiveK, Threshold, TokenBudget, TopK, TwoStage


@pytest.fixture
def four():
    return [Tool("weather_lookup", "current weather for a city"),
            Tool("stock_price", "latest stock price for a ticker"),
            Tool("translate_text", "translate text into another language"),
            Tool("calculator", "evaluate a basic arithmetic expression")]


def test_sweep_by_hand(four):
    qs = [Query("a", "translate this text", ("translate_text",)),
          Query("b", "zzz", ("calculator",)),  # all scores 0: calculator is last, rank 4
          Query("c", "weather and stock", ("weather_lookup", "stock_price"))]
    res = sweep(four, qs, ["jaccard"], [1, 2, 3], progress=False)
    qm = res.query_metrics.set_index(["top_k", "query_id"])
    assert qm.loc[(1, "a"), "R@k"] == 1.0 and qm.loc[(1, "b"), "RR"] == 0.25
    assert qm.loc[(1, "c"), "R@k"] == 0.5 and qm.loc[(1, "c"), "Complete@k"] == 0.0
    assert qm.loc[(2, "c"), "Complete@k"] == 1.0
    s = res.summary.set_index("top_k")
    assert s.loc[1, "R@k"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert s.loc[3, "Success@k"] == pytest.approx(2 / 3)
    assert s.loc[1, "MRR"] == pytest.approx((1 + 0.25 + 1) / 3)
    total = sum(len(t.name) + len(t.description) for t in four)
    assert res.unfiltered["chars"] == total
    # query b at k=1 sends the first tool in registry order (all ties)
    assert qm.loc[(1, "b"), "payload_chars"] == len("weather_lookup") + len(four[0].description)
    miss = res.misses[(res.misses.top_k == 1) & (res.misses.query_id == "b")].iloc[0]
    assert miss.expected == "calculator" and miss["rank"] == 4
    assert miss.sent_instead == "weather_lookup"
    pq = res.per_query.set_index(["query_id", "tool"])
    assert pq.loc[("c", "stock_price"), "rank"] == 2


def test_sweep_ndcg_and_map_by_hand_graded_and_binary(four):
    # "weather and stock": jaccard ranks weather_lookup 1, stock_price 2 (both share one token)
    qs = [Query("c", "weather and stock", ("weather_lookup", "stock_price")),
          Query("g", "weather and stock", ("weather_lookup", "stock_price"),
                grades={"stock_price": 3}),
          Query("b", "zzz", ("calculator",))]  # rank 4 of 4
    res = sweep(four, qs, ["jaccard"], [1, 2], progress=False)
    qm = res.query_metrics.set_index(["top_k", "query_id"])
    assert qm.loc[(1, "c"), "NDCG@k"] == pytest.approx(1.0)  # the ideal top 1 has one hit too
    assert qm.loc[(2, "c"), "NDCG@k"] == pytest.approx(1.0) and qm.loc[(2, "c"), "AP"] == 1.0
    # graded: grade 1 at rank 1, grade 3 at rank 2 against the ideal 3 then 1
    assert qm.loc[(1, "g"), "NDCG@k"] == pytest.approx(1 / 3)
    assert qm.loc[(2, "g"), "NDCG@k"] == pytest.approx(
        (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert qm.loc[(2, "g"), "AP"] == 1.0  # AP is binary
    assert qm.loc[(2, "b"), "NDCG@k"] == 0.0 and qm.loc[(2, "b"), "AP"] == 0.25
    s = res.summary.set_index("top_k")
    assert s.loc[2, "NDCG@k"] == pytest.approx(qm.xs(2)["NDCG@k"].mean())
    assert s.loc[1, "MAP"] == s.loc[2, "MAP"] == pytest.approx((1 + 1 + 0.25) / 3)


def test_always_include_never_inflates_recall(four):
    qs = [Query("a", "zzz", ("calculator", "weather_lookup")),
          Query("b", "zzz", ("calculator",))]
    res = sweep(four, qs, ["jaccard"], [1], always_include=["calculator"], progress=False)
    qm = res.query_metrics.set_index("query_id")
    # weather_lookup is the only filtered requirement; it ranks first among 3 candidates
    assert qm.loc["a", "R@k"] == 1.0 and qm.loc["a", "n_always_required"] == 1
    assert math.isnan(qm.loc["b", "R@k"])  # nothing left to find: excluded
    assert res.summary.loc[0, "n_queries"] == 1
    pq = res.per_query.set_index(["query_id", "tool"])
    assert bool(pq.loc[("a", "calculator"), "always_include"])
    # always-include payload is sent every turn
    assert qm.loc["a", "payload_chars"] == (len("calculator") + len(four[3].description)
                                            + len("weather_lookup") + len(four[0].description))


def test_article_misses_reproduce_with_jaccard_at_10(registry, queries):
    res = sweep(registry, queries, ["jaccard"], [10, 30], progress=False)
    m = res.misses[res.misses.top_k == 10].set_index("query")
    bug = m.loc["file a bug report on the backend repo"]
    assert bug.expected == "github_create_issue" and "github_create_pr" in bug.sent_instead
    jira = m.loc["mark this jira ticket as in progress"]
    assert jira.expected == "jira_transition_issue" and "jira_create_issue" in jira.sent_instead
    calc = m.loc["what's 340 divided by 12"]
    # zero overlap with "evaluate a basic arithmetic expression": ranked last of the ties
    assert calc.expected == "calculator" and calc["rank"] > 30
    s = res.summary.set_index("top_k")
    assert 0.80 < s.loc[10, "payload_reduction"] < 0.88  # the article: 84%


def test_sweep_input_errors(four):
    qs = [Query("a", "x", ("calculator",))]
    with pytest.raises(ValueError, match="top_k"):
        sweep(four, qs, ["jaccard"], [0])
    with pytest.raises(KeyError, match="'nope'"):
        sweep(four, [Query("a", "x", ("nope",))], ["jaccard"])
    with pytest.raises(ValueError, match="unique"):
        sweep(four, qs, ["bm25", "bm25"])


def test_cli_sweep_and_validate(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["validate", "--registry", "data/registry.json", "--queries",
                 "data/queries.jsonl", "--conversations", "data/conversations.jsonl"]) == 0
    printed = capsys.readouterr().out
    assert "61 tools" in printed and "conversations" in printed
    assert main(["sweep", "--registry", "data/registry.json", "--queries", "data/queries.jsonl",
                 "--scorers", "jaccard,bm25", "--top-k", "5,10", "--out", str(out),
                 "--no-progress"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns[:11]) == ["scorer", "top_k", "R@k", "Success@k", "Complete@k",
                                          "MRR", "NDCG@k", "MAP", "payload_chars",
                                          "payload_reduction", "n_queries"]
    printed = capsys.readouterr().out
    assert "NDCG@k" in printed and "MAP" in printed
    assert len(summary) == 4
    for name in ("per_query.csv", "misses.csv", "query_metrics.csv"):
        assert (out / name).stat().st_size > 0
    first = (out / "summary.csv").read_bytes()
    main(["sweep", "--registry", "data/registry.json", "--queries", "data/queries.jsonl",
          "--scorers", "jaccard,bm25", "--top-k", "5,10", "--out", str(out), "--no-progress"])
    assert (out / "summary.csv").read_bytes() == first  # byte-identical rerun


def test_cli_reports_bad_input(tmp_path, capsys):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "q1", "query": "x", "expected": ["calculater"]}\n')
    assert main(["validate", "--registry", "data/registry.json", "--queries", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 1" in err and "'expected'" in err and "did you mean 'calculator'" in err


def test_committed_sweep_tables_are_current(tmp_path):
    """`make report` writes reports/sweep/ with exactly this command: the committed tables must
    be what the current code and data produce (rerun `make report` and commit otherwise)."""
    from conftest import ROOT
    assert main(["sweep", "--registry", str(ROOT / "data/registry.json"), "--queries",
                 str(ROOT / "data/queries.jsonl"), "--out", str(tmp_path), "--no-progress",
                 "--no-timings"]) == 0
    for name in ("summary.csv", "query_metrics.csv", "per_query.csv", "misses.csv"):
        committed = ROOT / "reports" / "sweep" / name
        assert (tmp_path / name).read_bytes() == committed.read_bytes(), (
            f"{committed} is stale: run `make report` and commit reports/")
    assert not (tmp_path / "policies.csv").exists()


# -- selection policies in the sweep -----------------------------------------------------------

STYLES = {"article": ("data/registry.json", "data/queries.jsonl", ()),
          "article-always": ("data/registry.json", "data/queries.jsonl", "marked"),
          "api": ("data/styles/api/registry.json", "data/styles/api/queries.jsonl", ())}


@pytest.mark.parametrize("style", list(STYLES))
def test_sweep_policies_are_evaluate_policies_and_top_k_matches_the_summary(style):
    from conftest import ROOT
    reg_path, q_path, always = STYLES[style]
    reg = load_registry(ROOT / reg_path)
    queries = load_queries(ROOT / q_path, reg)
    always = sorted(reg.always_include) if always == "marked" else []
    policies = [TopK(5), Threshold(1.0, max_k=10), AdaptiveK(1, 8, rule="knee"),
                TokenBudget(600), TwoStage(2, k=5)]
    res = sweep(reg, queries, ["bm25", "jaccard"], [3, 5, 10], always_include=always,
                progress=False, policies=policies)
    table = res.policies
    assert list(table.columns) == POLICY_COLUMNS
    assert list(table["scorer"]) == ["bm25"] * 5 + ["jaccard"] * 5
    assert not hasattr(policies[3], "costs_")  # the caller's policies are fitted as clones
    for scorer in ("bm25", "jaccard"):
        rows = table[table["scorer"] == scorer].drop(columns="scorer").reset_index(drop=True)
        alone = frontier(summarize_policies(evaluate_policies(
            reg, queries, scorer, policies, always_include=always)))
        alone = alone.rename(columns={"payload_tokens": "payload_json_tokens",
                                      "payload_reduction": "payload_json_tokens_reduction"})
        pd.testing.assert_frame_equal(rows, alone[rows.columns])
        # TopK(5) sends what top_k=5 sends: same recall, and its payload is the summary's
        # JSON-definition tokens (payload_reduction: of the registry's JSON tokens)
        top = rows.set_index("config").loc["TopK(k=5)"]
        at5 = res.summary.set_index(["scorer", "top_k"]).loc[(scorer, 5)]
        assert top["R@sent"] == pytest.approx(at5["R@k"], abs=1e-12)
        assert top["Complete@sent"] == pytest.approx(at5["Complete@k"], abs=1e-12)
        assert top["n_queries"] == at5["n_queries"] and top["n_sent"] == 5
        assert top["payload_json_tokens"] == pytest.approx(at5["payload_json_tokens"],
                                                           abs=1e-9)
        assert top["payload_json_tokens_reduction"] == pytest.approx(
            1 - at5["payload_json_tokens"] / res.unfiltered["json_tokens"], abs=1e-12)


def test_sweep_fits_each_scorer_once_with_policies(registry, queries):
    class CountingJaccard(JaccardScorer):
        fits = 0

        def _fit(self, tools):
            type(self).fits += 1
            super()._fit(tools)

    res = sweep(registry, queries, {"j": CountingJaccard()}, [5], progress=False,
                policies=[TopK(5), "adaptive_k"])
    assert CountingJaccard.fits == 1
    assert set(res.policies["config"]) == {"TopK(k=5)", repr(AdaptiveK())}
    assert "policies_s" in res.timings["j"]


def test_sweep_policies_leave_every_other_table_as_it_was(registry, queries, tmp_path):
    plain = sweep(registry, queries, ["bm25"], [3, 5], progress=False)
    assert plain.policies is None and plain.files == SweepResult.FILES
    written = plain.write(tmp_path / "plain")
    assert sorted(p.name for p in (tmp_path / "plain").iterdir()) == sorted(SweepResult.FILES)
    assert [p.name for p in written] == list(SweepResult.FILES)
    both = sweep(registry, queries, ["bm25"], [3, 5], progress=False,
                 policies=["threshold:min_score=1.5,max_k=10", "top_k:k=3"])
    assert both.files == (*SweepResult.FILES, "policies.csv")
    both.write(tmp_path / "both")
    assert sorted(p.name for p in (tmp_path / "both").iterdir()) == sorted(both.files)
    for name in SweepResult.FILES:
        assert (tmp_path / "both" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    back = pd.read_csv(tmp_path / "both" / "policies.csv")
    assert list(back.columns) == POLICY_COLUMNS and len(back) == 2
    # a sweep without policies into that folder drops the earlier sweep's policies.csv
    plain.write(tmp_path / "both")
    assert sorted(p.name for p in (tmp_path / "both").iterdir()) == sorted(SweepResult.FILES)


def test_sweep_policy_input_errors(four):
    qs = [Query("a", "x", ("calculator",))]
    with pytest.raises(ValueError, match="listed twice: TopK"):
        sweep(four, qs, ["jaccard"], [1], policies=["top_k:k=3", TopK(3)])
    with pytest.raises(ValueError, match="'threshold:nope=1'.*nope"):
        sweep(four, qs, ["jaccard"], [1], policies=["threshold:nope=1"])
    # one spec string is one policy, not a list of characters
    res = sweep(four, qs, ["jaccard"], [1], progress=False, policies="top_k:k=2")
    assert list(res.policies["config"]) == ["TopK(k=2)"]


def _sweep_argv(out, *extra):
    return ["sweep", "--registry", "data/registry.json", "--queries", "data/queries.jsonl",
            "--scorers", "jaccard,bm25", "--top-k", "3,5", "--out", str(out), "--no-progress",
            "--no-timings", *extra]


def test_cli_sweep_with_policies(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(_sweep_argv(out, "--policy", "threshold:min_score=0.5",
                            "--policy", "top_k:k=3")) == 0
    printed = capsys.readouterr().out
    pol = pd.read_csv(out / "policies.csv")
    assert list(pol.columns) == POLICY_COLUMNS
    assert pol.groupby("scorer").size().to_dict() == {"jaccard": 2, "bm25": 2}
    assert set(pol["config"]) == {repr(Threshold(0.5)), "TopK(k=3)"}
    summary = pd.read_csv(out / "summary.csv").set_index(["scorer", "top_k"])
    for r in pol[pol["config"] == "TopK(k=3)"].to_dict("records"):
        assert r["R@sent"] == summary.loc[(r["scorer"], 3), "R@k"]
    # spec strings, as --policy takes them, not Python reprs
    assert "threshold:min_score=0.5,min_k=1,max_k=20,scale=relative" in printed
    assert "Threshold(" not in printed and "pareto" in printed
    assert set(pol["param_name"]) == {"min_score", "k"}
    assert str(out / "policies.csv") in printed.splitlines()[-1]


def test_cli_sweep_merges_settings_that_select_identically(tmp_path, capsys):
    out = tmp_path / "out"
    # far above every relative score but the best's 1.0: each sends min_k=1, like top_k:k=1
    assert main(_sweep_argv(out, "--scorers", "bm25", "--policy", "threshold:min_score=1.5",
                            "--policy", "threshold:min_score=2", "--policy", "top_k:k=1",
                            "--policy", "threshold:min_score=0.5")) == 0
    printed = capsys.readouterr().out
    rows = [line for line in printed.splitlines() if line.strip().startswith("bm25 ")
            and ("threshold:" in line or "top_k:" in line)]
    assert len(rows) == 3  # the two thresholds above 1 merged; top_k is another family
    merged = next(r for r in rows if "min_score=1.5" in r)
    assert merged.split()[-1] == "2" and "min_score=2," not in printed.split("n_settings")[1]
    assert "1 settings that select the same" in printed
    assert len(pd.read_csv(out / "policies.csv")) == 4  # the table keeps every setting


def test_cli_sweep_default_policy_grid(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(_sweep_argv(out, "--scorers", "bm25", "--policies", "default",
                            "--policy", "top_k:k=7")) == 0
    pol = pd.read_csv(out / "policies.csv")
    assert len(pol) == len(default_grid()) + 1 and pol["config"].iloc[-1] == "TopK(k=7)"
    assert "Pareto-best" in capsys.readouterr().out


@pytest.mark.parametrize("spec, part", [("threshold:nope=1", "nope"), ("wat", "unknown policy"),
                                        ("threshold:min_score", "is not key=value")])
def test_cli_sweep_bad_policy_spec_fails_first(tmp_path, capsys, spec, part):
    out = tmp_path / "out"
    assert main(_sweep_argv(out, "--policy", "top_k:k=3", "--policy", spec)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("toolsel sweep: error: ")
    assert repr(spec) in lines[0] and part in lines[0]
    assert not out.exists()


def test_sweep_blocks_shrink_on_large_registries_with_the_same_tables(monkeypatch):
    """Past MAX_BLOCK_CELLS scores a block holds fewer queries; every table is unchanged."""
    import toolsel.eval.sweep as sweep_module
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    reg = synthetic_registry(1000, seed=0)
    qs = synthetic_queries(reg, 40, seed=1)
    whole = sweep(reg, qs, ["jaccard", "bm25", "tfidf"], [1, 5, 10], progress=False)
    monkeypatch.setattr(sweep_module, "MAX_BLOCK_CELLS", 3 * len(reg))  # 3 queries a block
    blocked = sweep(reg, qs, ["jaccard", "bm25", "tfidf"], [1, 5, 10], progress=False)
    for name in ("summary", "query_metrics", "per_query", "misses"):
        pd.testing.assert_frame_equal(getattr(blocked, name), getattr(whole, name))
