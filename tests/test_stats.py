"""The one rule of inference (toolsel.eval.inference) and the tables built with it
(toolsel.eval.stats), on hand-checkable per-query tables; and a scan of the package so that no
other module computes a p-value, a sign test or its own verdict."""

import ast
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import toolsel
from toolsel.eval import inference
from toolsel.eval.inference import (family_level, mean_interval, paired_difference, pairs_in,
                                    resamples, verdict, wilson_interval)
from toolsel.eval.stats import intervals_by_group, mean_intervals, paired_comparison


def table(values: dict[str, list[float]], k: int = 1) -> pd.DataFrame:
    rows = []
    for scorer, vals in values.items():
        for i, v in enumerate(vals):
            rows.append({"scorer": scorer, "top_k": k, "query_id": f"q{i}", "R@k": v,
                         "Complete@k": v})
    return pd.DataFrame(rows)


def test_family_level_is_bonferroni_and_pairs_count_every_pair():
    assert family_level(1) == pytest.approx(0.95)
    assert family_level(10) == pytest.approx(0.995)
    assert pairs_in(5) == 10 and pairs_in(2) == 1 and pairs_in(1) == 1
    with pytest.raises(ValueError, match="at least one"):
        family_level(0)
    # 20 resamples beyond each end: 2,000 suffice at 95%, a family of 10 needs 8,000
    assert resamples(0.95) == 2000 and resamples(0.995) == 8000


def test_verdict_words():
    assert verdict(0.01, 0.2) == "ahead"
    assert verdict(-0.2, -0.01) == "behind"
    assert verdict(0.0, 0.2) == "tie"  # an interval reaching zero does not exclude it
    assert verdict(-0.1, 0.1) == "tie"
    assert verdict(float("nan"), 1.0) == "tie"


def test_wilson_by_hand():
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(27, 30)
    assert (round(low, 3), round(high, 3)) == (0.744, 0.965)
    assert math.isnan(wilson_interval(0, 0)[0])


def test_a_rate_gets_wilson_whatever_the_metric_is_called():
    # 27 of 30 as R@k or as Complete@k: one interval (the README once showed two)
    r = mean_interval([1.0] * 27 + [0.0] * 3)
    assert r["method"] == "wilson"
    assert (r["low"], r["high"]) == wilson_interval(27, 30)
    frac = mean_interval([1.0] * 26 + [0.5] + [0.0] * 3)
    assert frac["method"] == "bootstrap"


def test_grouped_rate_resamples_groups_and_a_constant_one_gets_wilson_over_groups():
    values = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    r = mean_interval(values, groups=[0, 0, 1, 1, 2, 3])
    assert r["method"] == "bootstrap" and r["n_groups"] == 4
    const = mean_interval([1.0] * 6, groups=[0, 0, 1, 1, 2, 2])
    assert const["method"] == "wilson" and (const["low"], const["high"]) == wilson_interval(3, 3)


def test_paired_difference_is_the_same_whichever_table_asks():
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 2, 40).astype(float), rng.integers(0, 2, 40).astype(float)
    one = paired_difference(a, b, family=10)
    two = paired_difference(b, a, family=10)
    # the same resamples: b − a is exactly the mirror of a − b
    assert one["low"] == pytest.approx(-two["high"]) and one["high"] == pytest.approx(-two["low"])
    assert one["level"] == pytest.approx(0.995)
    wider = paired_difference(a, b, family=1)
    assert wider["high"] - wider["low"] <= one["high"] - one["low"]


def test_paired_difference_clusters_whole_groups():
    a = np.array([1.0] * 6 + [0.0] * 6)
    b = np.zeros(12)
    apart = paired_difference(a, b)
    together = paired_difference(a, b, groups=[0] * 6 + [1] * 6)
    assert apart["n_groups"] == 12 and together["n_groups"] == 2
    # two groups: a resample can draw the all-zero group twice, so zero stays inside
    assert apart["verdict"] == "ahead" and together["verdict"] == "tie"


def test_constant_metric_interval_and_columns():
    iv = mean_intervals(table({"a": [1.0] * 5, "b": [0.0] * 5}), n_boot=200)
    a = iv[(iv.scorer == "a") & (iv.metric == "R@k")].iloc[0]
    assert (a["mean"], a["high"], a["n_queries"]) == (1.0, 1.0, 5)
    assert a["low"] == pytest.approx(wilson_interval(5, 5)[0])  # a rate: never a point
    assert list(iv.columns) == ["scorer", "top_k", "metric", "mean", "low", "high",
                                "n_queries", "method"]


def test_interval_is_reproducible_and_drops_nan():
    rng = np.random.default_rng(1)
    qm = table({"a": list(rng.random(30))})
    iv1, iv2 = mean_intervals(qm, n_boot=500, seed=3), mean_intervals(qm, n_boot=500, seed=3)
    pd.testing.assert_frame_equal(iv1, iv2)
    assert iv1.iloc[0]["low"] < iv1.iloc[0]["mean"] < iv1.iloc[0]["high"]
    iv = mean_intervals(table({"a": [1.0, float("nan"), 0.0, 1.0]}), n_boot=100)
    assert iv.iloc[0]["n_queries"] == 3 and iv.iloc[0]["mean"] == pytest.approx(2 / 3)


def test_paired_comparison_verdicts_and_family():
    qm = table({"good": [1.0] * 20, "bad": [0.0] * 20, "same": [1.0] * 20})
    pc = paired_comparison(qm, "R@k", n_boot=200)
    assert list(zip(pc.a, pc.b)) == [("good", "bad"), ("good", "same"), ("bad", "same")]
    gb = pc.iloc[0]
    assert (gb.a_wins, gb.b_wins, gb.ties) == (20, 0, 0)
    assert gb["diff"] == 1.0 and gb.verdict == "ahead" and gb.family == 3
    assert pc.iloc[1].verdict == "tie" and pc.iloc[2].verdict == "behind"
    # one pair compared alone keeps the family of every pair of the table
    alone = paired_comparison(qm, "R@k", scorers=["good", "bad"], n_boot=200).iloc[0]
    assert alone.family == 3 and alone.diff_low == gb.diff_low


def test_paired_comparison_one_query_apart_ties():
    qm = table({"a": [1.0] * 10, "b": [1.0] * 9 + [0.0]})
    r = paired_comparison(qm, "R@k", n_boot=200).iloc[0]
    assert (r.a_wins, r.b_wins) == (1, 0) and r.verdict == "tie"
    assert r["diff"] == pytest.approx(0.1)


def test_paired_comparison_errors():
    qm = table({"a": [1.0], "b": [0.0]})
    with pytest.raises(ValueError, match="at least two"):
        paired_comparison(qm, scorers=["a"])
    with pytest.raises(ValueError, match="not in the table"):
        paired_comparison(qm, scorers=["a", "zzz"])
    with pytest.raises(ValueError, match="top_k"):
        paired_comparison(qm, top_k=[5])
    with pytest.raises(KeyError, match="MRR"):
        paired_comparison(qm, "MRR")


def test_on_the_benchmark_embedding_is_ahead_of_jaccard_at_10(registry, queries):
    from toolsel.eval.sweep import sweep
    res = sweep(registry, queries, ["jaccard", "embedding"], [10], progress=False)
    r = paired_comparison(res.query_metrics, "R@k").iloc[0]
    assert r.b_wins > r.a_wins and r.verdict == "behind"


def test_intervals_by_group_is_mean_intervals_per_group():
    from toolsel.report.markdown import interval_table
    qm = pd.DataFrame({"scorer": "s", "top_k": 5, "query_id": list("abcdef"),
                       "category": ["x", "x", "y", "y", "y", "x"],
                       "n_required": [1, 2, 1, 0, 1, 1],
                       "R@k": [1.0, 0.5, 0.0, float("nan"), 1.0, 1.0],
                       "Complete@k": [1.0, 0.0, 0.0, float("nan"), 1.0, 1.0]})
    got = intervals_by_group(qm, "category", n_boot=300)
    assert list(dict.fromkeys(got["category"])) == ["x", "y"]
    for cat in ("x", "y"):
        part = qm[(qm.category == cat) & (qm.n_required > 0)]
        want = mean_intervals(part, n_boot=300)
        pd.testing.assert_frame_equal(got[got.category == cat].drop(columns="category")
                                      .reset_index(drop=True), want)
    shown = interval_table(got, "category", "Complete@k", 5, "category")
    assert list(shown.columns) == ["category", "n", "s"]
    assert shown["n"].tolist() == [3, 2]
    assert intervals_by_group(qm.iloc[:0], "category").empty


# --------------------------------------------------------------------------------------------
# one module owns inference

ROOT = Path(toolsel.__file__).resolve().parent.parent
SCANNED = [*sorted((ROOT / "toolsel").rglob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py")),
           *sorted((ROOT / "notebooks").glob("*.py"))]
OWNER = ROOT / "toolsel" / "eval" / "inference.py"
#: Names that compute a test or a p-value (scipy.stats and statsmodels hold many more; any
#: import from them is flagged).
TEST_NAMES = {"binomtest", "binom_test", "ttest_rel", "ttest_ind", "wilcoxon", "mannwhitneyu",
              "chi2_contingency", "fisher_exact", "mcnemar", "sign_test", "holm",
              "multipletests", "norm", "t", "ppf"}


def _offences(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (
                node.module.startswith(("scipy.stats", "statsmodels"))
                or (node.module == "scipy" and any(a.name == "stats" for a in node.names))):
            out.append(f"line {node.lineno}: imports from {node.module}")
        elif isinstance(node, ast.Import) and any(
                a.name.startswith(("scipy.stats", "statsmodels")) for a in node.names):
            out.append(f"line {node.lineno}: imports scipy.stats/statsmodels")
        elif isinstance(node, ast.FunctionDef) and node.name in TEST_NAMES | {
                "sign_test", "p_value", "pvalue", "holm"}:
            out.append(f"line {node.lineno}: defines {node.name}()")
        elif isinstance(node, ast.Attribute) and node.attr in ("pvalue", "binomtest"):
            out.append(f"line {node.lineno}: uses .{node.attr}")
        elif isinstance(node, ast.Constant) and node.value in ("p_value", "p_holm"):
            out.append(f"line {node.lineno}: a {node.value!r} column")
    return out


@pytest.mark.parametrize("path", [p for p in SCANNED if p != OWNER],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_but_inference_tests_or_computes_p_values(path):
    assert _offences(path) == [], (
        f"{path.relative_to(ROOT)} computes inference of its own; call toolsel.eval.inference")


def test_the_scan_finds_an_offence(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from scipy.stats import binomtest\n\ndef sign_test(w, l):\n"
                   "    return binomtest(w, w + l).pvalue\n")
    found = _offences(bad)
    assert len(found) == 3, found


def test_the_rule_is_stated_once_and_the_readme_repeats_it(tmp_path):
    from toolsel.report.readme import render_readme
    assert "Bonferroni" in inference.__doc__ and "Bonferroni" in inference.RULE
    text = render_readme(tmp_path, [])
    assert inference.RULE in text
