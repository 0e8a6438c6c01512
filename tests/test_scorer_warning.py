"""The single-scorer warning: a scorer far below ``default`` on the user's labeled requests."""

import warnings

import pandas as pd
import pytest

from toolsel import Selector
from toolsel.cli import main
from toolsel.datasets import load_style
from toolsel.eval.scorer_warning import MARGIN, gap_message, scorer_gaps, scorer_warning
from toolsel.eval.sweep import sweep


def _qm(a_values, b_values, k_list=(5, 10)):
    """A query-metrics frame of two scorers 'x' and 'default' with the given per-query R/Complete."""
    rows = []
    for k in k_list:
        for i, (a, b) in enumerate(zip(a_values, b_values)):
            rows.append({"scorer": "x", "top_k": k, "query_id": f"q{i}", "R@k": a,
                         "Complete@k": a, "RR": a})
            rows.append({"scorer": "default", "top_k": k, "query_id": f"q{i}", "R@k": b,
                         "Complete@k": b, "RR": b})
    return pd.DataFrame(rows)


def test_gap_message_needs_margin_and_an_interval_above_zero():
    # default finds 30 of 40 requests, x 10 of them: gap 0.5, interval well above zero
    qm = _qm([1.0] * 10 + [0.0] * 30, [1.0] * 30 + [0.0] * 10)
    gaps = scorer_gaps(qm, "x")
    assert list(gaps["metric"]) == ["R@5", "Complete@10"]
    assert gaps["gap"].tolist() == [0.5, 0.5] and (gaps["gap_low"] > 0).all()
    msg = gap_message(gaps)
    assert msg.startswith("warning: scorer 'x' is far below 'default' on these 40 labeled")
    assert "R@5 0.25 vs 0.75 (gap 0.50" in msg
    # a gap under the margin says nothing, however sure
    qm = _qm([1.0] * 74 + [0.0] * 6, [1.0] * 80)  # gap 0.075
    g = scorer_gaps(qm, "x")
    assert g["gap"].iloc[0] < MARGIN and g["gap_low"].iloc[0] > 0
    assert gap_message(g) is None
    assert gap_message(g, margin=0.05) is not None  # the margin is a parameter
    assert gap_message(scorer_gaps(_qm([1.0] * 54 + [0.0] * 6, [1.0] * 60), "x"))  # 0.10
    # the one rule alone decides (no sign test): 4 of 40 lost and none won, a resample
    # misses all four with chance 0.9**40 = 1.5% < 2.5%, so the interval lies above zero
    g = scorer_gaps(_qm([1.0] * 36 + [0.0] * 4, [1.0] * 40), "x")
    assert g["gap"].iloc[0] == pytest.approx(MARGIN) and (g["gap_low"] > 0).all()
    assert g["verdict"].tolist() == ["ahead", "ahead"] and (g["family"] == 1).all()
    assert list(g[["reference_wins", "scorer_wins"]].iloc[0]) == [4, 0]
    assert gap_message(g) is not None
    # 3 of 30 lost: 0.9**30 = 4.2% of resamples miss them all, the interval reaches zero
    g = scorer_gaps(_qm([1.0] * 27 + [0.0] * 3, [1.0] * 30), "x")
    assert g["gap"].iloc[0] == pytest.approx(MARGIN) and (g["verdict"] == "tie").all()
    assert gap_message(g) is None
    # a big gap on 3 requests: its interval includes zero, no warning
    qm = _qm([0.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    g = scorer_gaps(qm, "x")
    assert g["gap"].iloc[0] >= MARGIN and g["gap_low"].iloc[0] <= 0
    assert gap_message(g) is None
    # x better than default: never a warning
    assert gap_message(scorer_gaps(_qm([1.0] * 20, [0.0] * 20), "x")) is None


def test_scorer_gaps_input_errors():
    qm = _qm([1.0], [1.0])
    with pytest.raises(ValueError, match="scorer 'y' is not in the sweep"):
        scorer_gaps(qm, "y")
    with pytest.raises(ValueError, match="both 'default'"):
        scorer_gaps(qm, "default")
    with pytest.raises(ValueError, match="no top_k=10"):
        scorer_gaps(_qm([1.0], [1.0], k_list=(5,)), "x")


def test_scorer_warning_on_a_real_style():
    """The plugin style (brand names, paraphrased blurbs): the article's Jaccard is far below
    default on its own labeled requests; default compared with itself says nothing."""
    reg, queries = load_style("plugin")
    msg = scorer_warning(reg, queries, "jaccard")
    assert msg is not None and "'jaccard' is far below 'default'" in msg
    assert f"{len(queries)} labeled requests" in msg
    # the message's figures are the sweep's
    qm = sweep(reg, queries, ["jaccard", "default"], top_k=(5, 10), progress=False).query_metrics
    r5 = qm[(qm["scorer"] == "jaccard") & (qm["top_k"] == 5)]["R@k"].mean()
    assert f"R@5 {r5:.2f} vs" in msg
    assert scorer_warning(reg, queries, "default") is None
    sel = Selector(reg, "jaccard", always_include=())
    with pytest.warns(UserWarning, match="far below 'default'"):
        assert scorer_warning(sel, queries) == msg
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scorer_warning(Selector(reg, "default", always_include=()), queries) is None


def test_cli_sweep_prints_the_warning(tmp_path, capsys):
    base = "data/styles/plugin/"
    assert main(["sweep", "--registry", base + "registry.json", "--queries",
                 base + "queries.jsonl", "--scorers", "jaccard,default", "--top-k", "5,10",
                 "--out", str(tmp_path / "out"), "--no-progress", "--no-timings"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("warning: scorer")]
    assert len(lines) == 1 and "'jaccard' is far below 'default'" in lines[0]
    # without cut-offs 5 and 10 the check is skipped, and says so
    assert main(["sweep", "--registry", base + "registry.json", "--queries",
                 base + "queries.jsonl", "--scorers", "jaccard,default", "--top-k", "3",
                 "--out", str(tmp_path / "out3"), "--no-progress", "--no-timings"]) == 0
    assert "needs cut-offs 5 and 10" in capsys.readouterr().out


def test_gap_table_every_scorer_with_the_rule_per_row():
    from toolsel.eval.scorer_warning import GAP_COLUMNS, gap_table
    qm = pd.concat([_qm([1.0] * 10 + [0.0] * 30, [1.0] * 30 + [0.0] * 10),
                    _qm([1.0] * 30 + [0.0] * 10, [1.0] * 30 + [0.0] * 10).assign(
                        scorer=lambda d: d["scorer"].replace({"x": "y"})).query(
                        "scorer == 'y'")], ignore_index=True)
    g = gap_table(qm)
    assert list(g.columns) == GAP_COLUMNS
    assert list(g["scorer"]) == ["x", "x", "y", "y"]
    assert g["far"].tolist() == [True, True, False, False]
    assert g.loc[0, ["reference_wins", "scorer_wins"]].tolist() == [20, 0]
    assert (g["margin"] == MARGIN).all() and (g["alpha"] == 0.05).all()
    # the same rows as scorer_gaps, one scorer at a time
    pd.testing.assert_frame_equal(g.iloc[:2, :14].reset_index(drop=True), scorer_gaps(qm, "x"))
    assert gap_table(qm, ["y"])["scorer"].unique().tolist() == ["y"]
    # only the reference: an empty table with the columns
    assert gap_table(qm[qm["scorer"] == "default"]).empty
    with pytest.raises(ValueError, match="reference scorer 'bm25' is not in the table"):
        gap_table(qm, reference="bm25")
    # a comparison's table (one column per metric, grouped by style) gives the same gaps
    wide = qm[qm["top_k"] == 5][["scorer", "query_id", "R@k"]].rename(columns={"R@k": "R@5"})
    wide["Complete@10"] = qm[qm["top_k"] == 10]["Complete@k"].to_numpy()
    two = pd.concat([wide.assign(style="a"), wide.assign(style="b")], ignore_index=True)
    by = gap_table(two, by="style")
    assert list(by.columns) == ["style", *GAP_COLUMNS] and len(by) == 8
    pd.testing.assert_frame_equal(by[by["style"] == "a"].drop(columns="style")
                                  .reset_index(drop=True), g)


@pytest.mark.slow
def test_overview_page_warns_on_a_real_style_and_not_on_a_small_set(tmp_path):
    """Notebook 00 on the openapi style (every request): jaccard, bm25, tfidf and embedding are
    far below default, said on the page, the index card and in scorer_gaps.csv; on 8 of its
    requests, intervals are wide and the page says no scorer is shown far below."""
    import json

    import papermill as pm

    from toolsel.report import claims
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    src = root / "data" / "styles" / "openapi"
    lines = [ln for ln in (src / "queries.jsonl").read_text().splitlines() if ln.strip()]
    small = tmp_path / "small.jsonl"
    small.write_text("\n".join(lines[:8]) + "\n")
    for name, queries, far in (("all", src / "queries.jsonl",
                                ["jaccard", "bm25", "tfidf", "embedding"]),
                               ("small", small, [])):
        page = tmp_path / name / "00_overview"
        executed = tmp_path / name / "00.ipynb"
        executed.parent.mkdir()
        pm.execute_notebook(str(root / "notebooks" / "00_overview.ipynb"), str(executed),
                            parameters={"registry": str(src / "registry.json"),
                                        "queries": str(queries), "out_dir": str(page)},
                            kernel_name="python3", cwd=str(root / "notebooks"),
                            progress_bar=False)
        problems = claims.check_claims(page) + claims.uncovered_numbers(executed, page)
        assert not problems, "\n".join(problems)
        gaps = pd.read_csv(page / "scorer_gaps.csv")
        assert sorted(gaps.loc[gaps["far"], "scorer"].unique()) == sorted(far)
        shown = "\n".join("".join(o["data"]["text/markdown"])
                          for c in json.loads(executed.read_text())["cells"]
                          for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))
        summary = claims.page_summary(page)
        if far:
            assert "**Warning:** On these 132 labeled queries" in shown
            assert all(f"<code>{s}</code> R@5" in shown for s in far)
            assert "Warning: jaccard, bm25, tfidf and embedding are far below default" in summary
        else:
            assert "Warning" not in shown and "Warning" not in summary
            assert "On these 8 labeled queries, no single scorer is shown far below" in shown
