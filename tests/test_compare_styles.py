"""The style registries (valid, split, multi-tool heavy) and the style comparison tables."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from toolsel import get_scorer
from toolsel.report.plots import plot_style_comparison
from toolsel.datasets import STYLES, load_style, load_styles
from toolsel.tables.compare_styles import compare_styles, versus_best
from toolsel.ranking import ranks_of

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("style", STYLES)
def test_style_data_is_valid_split_and_multi_tool_heavy(style):
    registry, queries = load_style(style)  # validates every label against the registry
    assert len(registry) >= 100 and 60 <= len(queries) <= 150
    assert {q.split for q in queries} == {"dev", "test"}
    multi = [q for q in queries if len(q.expected) > 1]
    assert len(multi) >= 0.3 * len(queries)
    assert all(2 <= len(q.expected) <= 4 for q in multi)
    assert all("multi" in q.tags for q in multi)
    assert len({q.query for q in queries}) == len(queries)


def test_plugin_style_has_no_parameters_and_api_style_has_schemas():
    plugin, _ = load_style("plugin")
    api, _ = load_style("api")
    assert all(t.parameters is None for t in plugin)
    assert all(t.parameters and t.parameters["type"] == "object" for t in api)


def test_pooled_registry_is_what_the_build_script_writes():
    spec = importlib.util.spec_from_file_location("build_pooled",
                                                  ROOT / "data/styles/build_pooled.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    written = json.loads((ROOT / "data/styles/pooled/registry.json").read_text())
    assert written == mod.build()
    names = {t["name"] for t in written}
    for src in mod.SOURCES:  # every source tool is in the pool
        assert {t["name"] for t in json.loads(src.read_text())} <= names


def test_load_style_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no style 'nope'.*api, plugin, pooled"):
        load_style("nope")
    with pytest.raises(ValueError, match="split must be"):
        load_style("api", split="train")


@pytest.fixture(scope="module")
def small():
    styles = {s: (reg, qs[:12]) for s, (reg, qs) in load_styles(("api", "plugin")).items()}
    return styles, compare_styles(styles, ["jaccard", "bm25"], n_boot=300,
                                  latency_queries=2)


def test_compare_styles_metrics_match_the_ranks(small):
    styles, comp = small
    reg, queries = styles["api"]
    scores = get_scorer("bm25").fit(reg).score_many([q.query for q in queries])
    qm = comp.query_metrics
    got = qm[(qm["style"] == "api") & (qm["scorer"] == "bm25")].set_index("query_id")
    for q, s in zip(queries, scores):
        ranks = ranks_of(s, [reg.index(t) for t in q.expected])
        row = got.loc[q.id]
        assert row["R@5"] == pytest.approx(np.mean(ranks <= 5))
        assert row["Complete@10"] == float(np.all(ranks <= 10))
        assert row["MRR"] == pytest.approx(1 / ranks.min())


def test_compare_styles_summary_and_table(small):
    _, comp = small
    s = comp.summary
    assert list(s.columns) == ["style", "scorer", "metric", "mean", "low", "high", "n_queries"]
    assert len(s) == 2 * 2 * 3 and (s["n_queries"] == 12).all()
    assert ((s["low"] <= s["mean"] + 1e-12) & (s["mean"] <= s["high"] + 1e-12)).all()
    qm = comp.query_metrics
    mean = qm[(qm["style"] == "plugin") & (qm["scorer"] == "jaccard")]["R@5"].mean()
    row = s[(s["style"] == "plugin") & (s["scorer"] == "jaccard") & (s["metric"] == "R@5")]
    assert row["mean"].item() == pytest.approx(mean)
    table = comp.table()
    assert list(table[["style", "scorer"]].itertuples(index=False, name=None)) == [
        ("api", "jaccard"), ("api", "bm25"), ("plugin", "jaccard"), ("plugin", "bm25")]
    assert set(comp.latency["scorer"]) == {"jaccard", "bm25"}
    assert (comp.latency["ms_per_query"] >= 0).all()


def test_write_is_deterministic(small, tmp_path):
    _, comp = small
    first = [p.read_bytes() for p in comp.write(tmp_path / "a")]
    second = [p.read_bytes() for p in comp.write(tmp_path / "b")]
    assert first == second and b"ms_per_query" not in b"".join(first)


def test_versus_best_identifies_a_worse_candidate():
    # on all plugin-style requests, the article's Jaccard is far below BM25: not a match
    comp = compare_styles(load_styles(("plugin",), split=None), ["jaccard", "bm25"],
                          n_boot=500, latency_queries=0)
    v = versus_best(comp, candidate="jaccard", singles=("bm25",), n_boot=500)
    assert set(v["metric"]) == {"R@5", "Complete@10", "MRR"}
    assert (v["best_single"] == "bm25").all() and (v["diff"] < 0).all()
    assert not v["matches"].any()
    # the best single scorer compared with itself matches, with a zero difference
    same = versus_best(comp, candidate="bm25", singles=("jaccard", "bm25"), n_boot=100)
    assert same["matches"].all() and (same["diff"] == 0).all()


def test_plot_style_comparison(small):
    _, comp = small
    fig = plot_style_comparison(comp.summary)
    axes = fig.axes
    # each panel names its interval: Wilson's for the yes-or-no Complete@10
    assert [ax.get_title() for ax in axes] == ["R@5 (bars: 95% bootstrap CI)",
                                               "Complete@10 (bars: 95% Wilson CI)",
                                               "MRR (bars: 95% bootstrap CI)"]
    assert axes[0].get_ylabel() and all(ax.get_xlabel() == "registry style" for ax in axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["jaccard", "bm25"]


def test_readme_which_scorer_block_is_rendered_from_the_committed_tables():
    from toolsel.pages.which_scorer import (README_MARKERS, SCORER_PAGE, relink,
                                             which_scorer_from_reports)
    readme = (ROOT / SCORER_PAGE).read_text(encoding="utf-8")
    start, end = README_MARKERS
    block = readme.split(start, 1)[1].split(end, 1)[0]
    # regenerate with: python -c "from toolsel.pages.which_scorer import \
    #   update_readme_which_scorer; update_readme_which_scorer()"
    assert block == "\n" + relink(which_scorer_from_reports(ROOT), SCORER_PAGE) + "\n"
    assert "](../reports/06_default_scorer/" in block  # links relative to docs/


def test_relink_makes_root_links_relative_to_the_page():
    from toolsel.pages.which_scorer import relink
    text = "[a](reports/x.csv), [b](https://e.org/y), [c](#here), [`d`](data/README.md#s)"
    assert relink(text, "docs/scorers.md") == ("[a](../reports/x.csv), [b](https://e.org/y), "
                                               "[c](#here), [`d`](../data/README.md#s)")
    assert relink(text, "README.md") == text


def test_which_scorer_markdown_rounds_from_the_table_and_reads_the_paired_intervals():
    import pandas as pd
    from toolsel.pages.which_scorer import which_scorer_markdown
    table = pd.DataFrame([
        {"style": "s", "scorer": "bm25", "R@5": 0.5, "R@5_low": 0.4, "R@5_high": 0.6,
         "n_queries": 9},
        {"style": "s", "scorer": "embedding", "R@5": 0.886905, "R@5_low": 0.821429,
         "R@5_high": 0.946429, "n_queries": 9},
        {"style": "s", "scorer": "default", "R@5": 0.9, "R@5_low": 0.85, "R@5_high": 0.95,
         "n_queries": 9}])
    versus = pd.DataFrame([{"style": "s", "metric": "R@5", "best_single": "embedding",
                            "candidate": "default", "diff": 0.013, "diff_low": -0.02,
                            "diff_high": 0.05},
                           {"style": "s", "metric": "MRR", "best_single": "embedding",
                            "candidate": "default", "diff": 0.05, "diff_low": 0.01,
                            "diff_high": 0.09}])
    text = which_scorer_markdown(table, versus, n_tools={"s": 12})
    assert "| s (12, 9) | bm25 | 0.50 |" in text
    assert "| embedding | 0.89 [0.82, 0.95] |" in text  # 0.946 rounds to 0.95
    assert "| **default** | **0.90** [0.85, 0.95] |" in text
    # the verdicts are the one rule's, read from the intervals (a table without a verdict
    # column, as written before the rule, gets the same words)
    assert "it is ahead on s MRR; behind nowhere; it ties everywhere else" in text
    assert "in-sample" in text  # no chosen_on column: the pick is not said to be on dev


def test_project_report_brings_the_readme_block_in_step(tmp_path):
    import shutil

    from toolsel.cli.report import _update_which_scorer
    from toolsel.pages.which_scorer import README_MARKERS, relink, which_scorer_from_reports
    (tmp_path / "data").symlink_to(ROOT / "data")
    for sub in ("06_default_scorer", "benchmarks"):
        shutil.copytree(ROOT / "reports" / sub, tmp_path / "reports" / sub)
    start, end = README_MARKERS
    (tmp_path / "docs").mkdir()
    readme = tmp_path / "docs" / "scorers.md"
    readme.write_text(f"# x\n{start}\nstale\n{end}\ntail\n", encoding="utf-8")
    _update_which_scorer(tmp_path / "reports")
    rendered = relink(which_scorer_from_reports(tmp_path), "docs/scorers.md")
    assert readme.read_text(encoding="utf-8") == f"# x\n{start}\n{rendered}\n{end}\ntail\n"
    # a report written anywhere else (a user's --out) leaves the README alone
    readme.write_text(f"{start}\nstale\n{end}\n", encoding="utf-8")
    shutil.copytree(tmp_path / "reports", tmp_path / "elsewhere")
    _update_which_scorer(tmp_path / "elsewhere")
    assert "stale" in readme.read_text(encoding="utf-8")
