"""The small helpers the report notebooks call instead of defining their own functions:
Markdown cells and wide tables (report.markdown), per-group Wilson rates (report.claims),
bundled-data detection (report.plan) and policy settings as spec strings (policies)."""

from __future__ import annotations

import math
import os

import pandas as pd
import pytest

from toolsel.eval.policies import default_grid
from toolsel.eval.sweep import sweep
from toolsel.policies import TopK, config_specs, parse_policy
from toolsel.report import markdown as md
from toolsel.report.plan import report_link, same_path

# --------------------------------------------------------------------------------------------
# wide_table: one measure as rows x columns (01's R@k per scorer and K, 07's R@n per n)


def test_wide_table_on_a_real_sweep(registry, queries):
    summary = sweep(registry, queries, ["jaccard", "bm25"], [1, 5, 10], progress=False).summary
    text = md.wide_table(summary, "R@k", rows="scorer", columns="top_k", fmt="{:.1%}",
                         column_label="K={}")
    lines = text.splitlines()
    assert lines[0] == "| scorer | K=1 | K=5 | K=10 |"
    assert lines[1] == "| :--- | ---: | ---: | ---: |"
    for line, scorer in zip(lines[2:], ["jaccard", "bm25"]):
        cells = [c.strip() for c in line.strip("|").split("|")]
        want = summary[summary.scorer == scorer].set_index("top_k")["R@k"]
        assert cells == [scorer] + [f"{want[k]:.1%}" for k in (1, 5, 10)]
    assert len(lines) == 4


def test_wide_table_keeps_first_seen_order_and_shows_gaps():
    frame = pd.DataFrame({"limit": [5, 5, 1, 1, 3], "scorer": ["b", "a", "b", "a", "b"],
                          "R@n": [0.5, 0.25, 0.125, 1.0, 0.75]})
    text = md.wide_table(frame, "R@n", rows="limit", columns="scorer", fmt="{:.1f}",
                         rows_label="n")
    assert text.splitlines() == ["| n | b | a |", "| ---: | ---: | ---: |",
                                 "| 5 | 0.5 | 0.2 |", "| 1 | 0.1 | 1.0 |", "| 3 | 0.8 | – |"]


def test_wide_table_errors_name_the_problem():
    frame = pd.DataFrame({"k": [1, 1], "s": ["a", "a"], "v": [0.1, 0.2]})
    with pytest.raises(ValueError, match="k=1, s='a' occurs 2 times"):
        md.wide_table(frame, "v", rows="k", columns="s", fmt="{}")
    with pytest.raises(KeyError, match="R@k"):
        md.wide_table(frame, "R@k", rows="k", columns="s", fmt="{}")


# --------------------------------------------------------------------------------------------
# cells


def test_list_text_reads_a_joined_cell():
    assert md.list_text("slack_send_dm;gmail_send") == "slack_send_dm, gmail_send"
    assert md.list_text("") == "–" and md.list_text(float("nan")) == "–"
    assert md.list_text(None) == "–" and md.list_text(["a", "b"]) == "a, b"
    words = ", ".join(f"w{i}" for i in range(10))
    assert md.list_text(words, sep=", ", limit=8) == ", ".join(
        f"w{i}" for i in range(8)) + " (+2 more)"
    assert md.list_text("a, b", sep=", ", limit=2) == "a, b"


def test_list_text_as_a_table_format_is_escaped():
    t = md.table(pd.DataFrame({"called": ["a_b;<x>", ""]}), {"called": md.list_text})
    assert t.splitlines()[2:] == [r"| a\_b, &lt;x&gt; |", "| – |"]


def test_yes_no_flags_with_gaps():
    assert [md.yes_no(v) for v in (True, 1.0, 0, False, None, math.nan)] == \
        ["yes", "yes", "no", "no", "–", "–"]
    assert md.yes_no(None, missing="n/a") == "n/a"
    # as a table format: a float flag column with a gap (table skips the format for NaN)
    t = md.table(pd.DataFrame({"recovered": [1.0, 0.0, math.nan]}), {"recovered": md.yes_no})
    assert t.splitlines()[2:] == ["| yes |", "| no |", "| – |"]


def test_name_list_escapes_and_bolds_siblings():
    assert md.name_list("slack_send_message;jira_*x", bold="slack_send_message") == \
        r"**slack\_send\_message**, jira\_\*x"
    assert md.name_list(["a", "b"], bold=["b", "c"]) == "a, **b**"
    assert md.name_list("a;b", bold=float("nan")) == "a, b"  # no sibling sent
    assert md.name_list("") == "–"


def test_code_hit_marks_the_wanted_tool():
    assert md.code_hit("calculator", "calculator") == "**<code>calculator</code>**"
    assert md.code_hit("weather|x", "calculator") == "<code>weather&#124;x</code>"
    assert md.code_hit("", "calculator") == "–" and md.code_hit(None, "x") == "–"


def test_interval_row_of_a_wide_row():
    row = pd.Series({"R@k": 0.625, "R@k_low": 0.45, "R@k_high": 0.7849})
    assert md.interval_row(row, "R@k", digits=1) == "62.5% [45.0, 78.5]"
    assert md.interval_row(pd.Series({"mean": 0.5, "low": 0.25, "high": 0.75})) == \
        "50% [25, 75]"
    assert md.interval_row(pd.Series({"R@k": math.nan, "R@k_low": 0.1, "R@k_high": 0.2}),
                           "R@k") == "–"


# --------------------------------------------------------------------------------------------
# rates per group, bundled data, policy settings


def test_rates_with_interval_per_group():
    tasks = pd.DataFrame({"run": ["deferred"] * 5 + ["eager"] * 2,
                          "success": [1, 1, 0, 1, 0, 1, 1]})
    from toolsel.pages.recorded_runs import rates_with_interval
    got = rates_with_interval(tasks, "run", "success", ["deferred", "eager", "other"])
    assert got == [md.rate_interval(3, 5), md.rate_interval(2, 2), "0/0, –"]
    assert got[0] == "3/5, 60% [23, 88]"
    with pytest.raises(KeyError, match="'done'"):
        rates_with_interval(tasks, "run", "done", ["eager"])


def test_same_path(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "registry.json").write_text("[]")
    os.symlink(tmp_path / "data", tmp_path / "link")
    assert same_path(tmp_path / "data" / ".." / "data" / "registry.json",
                     str(tmp_path / "link" / "registry.json"))
    assert not same_path(tmp_path / "data" / "registry.json", tmp_path / "data")
    assert not same_path("", "") and not same_path(None, tmp_path)


def test_report_link_inside_the_report_and_outside(tmp_path):
    """A page cites and links a table inside its report relatively; a table outside (the
    project's benchmarks, read by a user's report written elsewhere) by its path relative to
    the page, with no link leaving the report folder; never by an absolute path."""
    report, project = tmp_path / "report", tmp_path / "project"
    page = report / "05_scale_benchmark"
    (report / "benchmarks").mkdir(parents=True)
    (project / "reports" / "benchmarks").mkdir(parents=True)
    assert report_link(report / "benchmarks", page) == ("../benchmarks", "benchmarks")
    # given as a path relative to elsewhere, with ".." in it
    assert report_link(page / ".." / "benchmarks", page) == ("../benchmarks", "benchmarks")
    bench = project / "reports" / "benchmarks"
    assert report_link(bench, page) == ("../../project/reports/benchmarks", None)
    # a sibling folder whose name starts like the report's is outside it
    (tmp_path / "report2").mkdir()
    assert report_link(tmp_path / "report2", page)[1] is None


def test_report_link_relates_to_the_final_folder_while_a_report_runs(tmp_path, monkeypatch):
    """A report executes a page into a build folder first; while it runs, the final folder is
    in SHOWN_OUT_DIR_ENV and the benchmark inside the final report is linked relatively (the
    committed 05 page named the build machine's absolute path before)."""
    from toolsel.report.plan import SHOWN_OUT_DIR_ENV
    report, build = tmp_path / "reports", tmp_path / ".build-x"
    (report / "benchmarks").mkdir(parents=True)
    page_build, page_final = build / "05_scale_benchmark", report / "05_scale_benchmark"
    page_build.mkdir(parents=True)
    assert report_link(report / "benchmarks", page_build) == (
        "../../reports/benchmarks", None)
    monkeypatch.setenv(SHOWN_OUT_DIR_ENV, f"{page_build}{os.pathsep}{page_final}")
    assert report_link(report / "benchmarks", page_build) == ("../benchmarks", "benchmarks")
    # another page's folder is not remapped
    assert report_link(report / "benchmarks", build / "other")[1] is None


def test_config_specs_round_trip_every_default_setting():
    grid = default_grid()
    configs = [repr(p) for p in grid]
    specs = config_specs(configs + [math.nan, "TopK(k=999)"], grid)
    assert specs[-1] == "TopK(k=999)" and math.isnan(specs[-2])  # not in the grid: as given
    for config, spec in zip(configs, specs):
        assert spec != config and repr(parse_policy(spec)) == config
    assert config_specs(["TopK(k=5)"], ["top_k:k=5"]) == ["top_k:k=5"]
    assert config_specs([repr(TopK(3))], [TopK(3)]) == ["top_k:k=3"]
