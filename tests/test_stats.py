"""Bootstrap intervals and paired comparisons on hand-checkable per-query tables."""

import math

import numpy as np
import pandas as pd
import pytest

from toolsel.eval.stats import bootstrap_intervals, holm, paired_comparison, sign_test


def table(values: dict[str, list[float]], k: int = 1) -> pd.DataFrame:
    rows = []
    for scorer, vals in values.items():
        for i, v in enumerate(vals):
            rows.append({"scorer": scorer, "top_k": k, "query_id": f"q{i}", "R@k": v,
                         "Complete@k": v})
    return pd.DataFrame(rows)


def test_constant_metric_has_a_zero_width_interval():
    iv = bootstrap_intervals(table({"a": [1.0] * 5, "b": [0.0] * 5}), n_boot=200)
    a = iv[(iv.scorer == "a") & (iv.metric == "R@k")].iloc[0]
    assert (a["mean"], a["low"], a["high"], a["n_queries"]) == (1.0, 1.0, 1.0, 5)
    assert list(iv.columns) == ["scorer", "top_k", "metric", "mean", "low", "high", "n_queries"]


def test_interval_contains_mean_and_is_reproducible():
    rng = np.random.default_rng(1)
    qm = table({"a": list(rng.integers(0, 2, 30).astype(float))})
    iv1 = bootstrap_intervals(qm, n_boot=500, seed=3)
    iv2 = bootstrap_intervals(qm, n_boot=500, seed=3)
    pd.testing.assert_frame_equal(iv1, iv2)
    r = iv1.iloc[0]
    assert r["low"] < r["mean"] < r["high"]
    # a binomial proportion near 0.5 over 30 queries: the 95% interval is about ±18 points
    assert 0.25 < r["high"] - r["low"] < 0.45


def test_nan_queries_are_dropped():
    iv = bootstrap_intervals(table({"a": [1.0, float("nan"), 0.0, 1.0]}), n_boot=100)
    assert iv.iloc[0]["n_queries"] == 3
    assert iv.iloc[0]["mean"] == pytest.approx(2 / 3)


def test_sign_test_by_hand():
    # 6 wins, 0 losses: two-sided p = 2 * 0.5**6
    assert sign_test(6, 0) == pytest.approx(2 * 0.5 ** 6)
    assert sign_test(0, 0) == 1.0
    assert sign_test(3, 3) == pytest.approx(1.0)


def test_holm_by_hand():
    assert list(holm([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    assert list(holm([0.5, 0.9])) == pytest.approx([1.0, 1.0])


def test_paired_comparison_counts_wins_and_calls_big_differences_real():
    qm = table({"good": [1.0] * 20, "bad": [0.0] * 20, "same": [1.0] * 20})
    pc = paired_comparison(qm, "R@k", n_boot=200)
    assert list(zip(pc.a, pc.b)) == [("good", "bad"), ("good", "same"), ("bad", "same")]
    gb = pc.iloc[0]
    assert (gb.a_wins, gb.b_wins, gb.ties) == (20, 0, 0)
    assert gb["diff"] == 1.0 and gb.diff_low == 1.0 and gb.diff_high == 1.0
    assert gb.p_value == pytest.approx(2 * 0.5 ** 20) and bool(gb.real)
    gs = pc.iloc[1]
    assert gs.ties == 20 and gs.p_value == 1.0 and not gs.real
    assert gs.p_holm == 1.0


def test_paired_comparison_one_query_apart_is_not_real():
    qm = table({"a": [1.0] * 10, "b": [1.0] * 9 + [0.0]})
    r = paired_comparison(qm, "R@k", n_boot=200).iloc[0]
    assert (r.a_wins, r.b_wins) == (1, 0) and r.p_value == 1.0 and not r.real
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


def test_on_the_benchmark_embedding_beats_jaccard_at_10(registry, queries):
    from toolsel.eval.sweep import sweep
    res = sweep(registry, queries, ["jaccard", "embedding"], [10], progress=False)
    r = paired_comparison(res.query_metrics, "R@k").iloc[0]
    assert r.b_wins > r.a_wins and bool(r.real)
    assert not math.isnan(r.p_holm)


def test_bootstrap_by_group_is_bootstrap_intervals_per_group():
    import pandas as pd

    from toolsel.eval.stats import bootstrap_by_group, bootstrap_intervals
    from toolsel.report.markdown import interval_table
    qm = pd.DataFrame({"scorer": "s", "top_k": 5, "query_id": list("abcdef"),
                       "category": ["x", "x", "y", "y", "y", "x"],
                       "n_required": [1, 2, 1, 0, 1, 1],
                       "R@k": [1.0, 0.5, 0.0, float("nan"), 1.0, 1.0],
                       "Complete@k": [1.0, 0.0, 0.0, float("nan"), 1.0, 1.0]})
    got = bootstrap_by_group(qm, "category", n_boot=300)
    assert list(dict.fromkeys(got["category"])) == ["x", "y"]
    for cat in ("x", "y"):
        part = qm[(qm.category == cat) & (qm.n_required > 0)]
        want = bootstrap_intervals(part, n_boot=300)
        pd.testing.assert_frame_equal(got[got.category == cat].drop(columns="category")
                                      .reset_index(drop=True), want)
    shown = interval_table(got, "category", "Complete@k", 5, "category")
    assert list(shown.columns) == ["category", "n", "s"]
    assert shown["n"].tolist() == [3, 2]
    assert bootstrap_by_group(qm.iloc[:0], "category").empty
