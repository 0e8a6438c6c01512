"""Hand-computed cases for every metric, edge cases included."""

import math

import numpy as np
import pytest

from toolsel import Tool
from toolsel.eval.metrics import (average_precision, complete_at_k, count_tokens, evaluate,
                                  mean_metrics, ndcg_at_k, payload_chars, payload_json_chars,
                                  payload_reduction, payload_tokens, recall_at_k,
                                  reciprocal_rank, success_at_k, tool_costs)


def test_single_required_tool():
    assert recall_at_k([3], 3) == 1.0 and recall_at_k([4], 3) == 0.0
    assert success_at_k([3], 3) == 1.0 and complete_at_k([3], 3) == 1.0
    assert reciprocal_rank([4]) == 0.25


def test_several_required_tools():
    ranks = [1, 4, 9]  # 2 of 3 within k=5
    assert recall_at_k(ranks, 5) == pytest.approx(2 / 3)
    assert success_at_k(ranks, 5) == 1.0
    assert complete_at_k(ranks, 5) == 0.0 and complete_at_k(ranks, 9) == 1.0
    assert reciprocal_rank([4, 2]) == 0.5
    assert recall_at_k(ranks, 100) == 1.0  # k larger than the registry


def test_zero_relevant_policy_is_nan():
    for fn in (lambda r: recall_at_k(r, 1), lambda r: success_at_k(r, 1),
               lambda r: complete_at_k(r, 1), reciprocal_rank):
        assert math.isnan(fn([]))


def test_bad_arguments():
    with pytest.raises(ValueError, match="1-based"):
        recall_at_k([0], 1)
    with pytest.raises(ValueError, match="k must be >= 1"):
        recall_at_k([1], 0)


def test_payload():
    tools = [Tool("ab", "cde"), Tool("f", "gh", {"type": "object", "properties": {}})]
    assert payload_chars(tools) == 8
    assert payload_json_chars(tools[:1]) == len(
        '{"name":"ab","description":"cde","parameters":{"type":"object","properties":{}}}')
    assert payload_reduction(2, 8) == 0.75 and payload_reduction(0, 0) == 0.0
    assert count_tokens("hello world") == 2  # cl100k_base: "hello", " world"
    assert payload_tokens([Tool("hello", "world")]) == 2
    costs = tool_costs(tools)
    assert costs.total()["chars"] == 8 and costs.total([1])["chars"] == 3
    assert costs.total()["json_tokens"] == payload_tokens(tools, json_definition=True)


def test_evaluate_sent_reads_the_top_k_definitions_at_what_was_sent():
    from toolsel.eval.metrics import evaluate, evaluate_sent
    # queries needing 2, 1, 0 and 3 tools; 1, 1, 0 and 3 of them sent
    out = evaluate_sent([1, 1, 0, 3], [2, 1, 0, 3])
    assert list(out) == ["R@sent", "Success@sent", "Complete@sent"]
    np.testing.assert_array_equal(out["R@sent"], [0.5, 1.0, np.nan, 1.0])
    np.testing.assert_array_equal(out["Success@sent"], [1.0, 1.0, np.nan, 1.0])
    np.testing.assert_array_equal(out["Complete@sent"], [0.0, 1.0, np.nan, 1.0])
    # the same numbers as R@k/Complete@k when what was sent is a top-k prefix
    ranks = [[1, 7], [2], [], [1, 2, 3]]
    at3 = evaluate(ranks, [3])
    found = [sum(r <= 3 for r in q) for q in ranks]
    sent = evaluate_sent(found, [len(q) for q in ranks])
    np.testing.assert_array_equal(sent["R@sent"], at3["R@k"][:, 0])
    np.testing.assert_array_equal(sent["Complete@sent"], at3["Complete@k"][:, 0])
    with pytest.raises(ValueError, match="between 0 and n_required"):
        evaluate_sent([2], [1])


# -- NDCG@k and AP ---------------------------------------------------------------------------

def test_ndcg_by_hand_binary():
    # ranks 1 and 3: DCG@3 = 1/log2(2) + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3)
    assert ndcg_at_k([1, 3], 3) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([1, 3], 1) == 1.0  # the ideal top 1 holds one required tool too
    assert ndcg_at_k([1, 3], 2) == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([2], 1) == 0.0
    assert ndcg_at_k([2], 5) == pytest.approx(1 / math.log2(3))
    assert ndcg_at_k([4, 9], 100) == pytest.approx(  # k past the registry
        (1 / math.log2(5) + 1 / math.log2(10)) / (1 + 1 / math.log2(3)))


def test_ndcg_by_hand_graded():
    # grade 3 at rank 2, grade 1 at rank 1: DCG = 3/log2(3) + 1; ideal = 3 + 1/log2(3)
    assert ndcg_at_k([2, 1], 2, gains=[3, 1]) == pytest.approx(
        (3 / math.log2(3) + 1) / (3 + 1 / math.log2(3)))
    assert ndcg_at_k([1, 2], 2, gains=[3, 1]) == 1.0
    # equal gains are the binary case
    assert ndcg_at_k([2, 5], 5, gains=[2, 2]) == pytest.approx(ndcg_at_k([2, 5], 5))


def test_average_precision_by_hand():
    assert average_precision([1, 3]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision([3, 1]) == pytest.approx((1 / 1 + 2 / 3) / 2)  # order of the list
    assert average_precision([2]) == 0.5
    # a required tool never ranked adds 0 but counts in the denominator
    out = evaluate([[2, 5]], [1], n_required=[3])
    assert out["AP"][0] == pytest.approx((1 / 2 + 2 / 5) / 3)


def test_ndcg_ap_edge_cases():
    assert math.isnan(ndcg_at_k([], 3)) and math.isnan(average_precision([]))
    out = evaluate([[50], [1]], [1, 10], n_required=[1, 2])
    assert out["NDCG@k"][0].tolist() == [0.0, 0.0] and out["AP"][0] == 1 / 50
    # n_required beyond the rank list: the unranked tool is in the ideal ranking (gain 1)
    assert out["NDCG@k"][1].tolist() == [1.0, pytest.approx(1 / (1 + 1 / math.log2(3)))]
    assert out["AP"][1] == 0.5
    with pytest.raises(ValueError, match="gains"):
        ndcg_at_k([1, 2], 3, gains=[1])
    with pytest.raises(ValueError, match="> 0"):
        ndcg_at_k([1], 3, gains=[0])


def test_mean_metrics_has_ndcg_and_map():
    out = mean_metrics(evaluate([[1], [2], []], [1, 2]), k_index=1)
    assert out["NDCG@k"] == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert out["MAP"] == pytest.approx(0.75) and out["n_queries"] == 2


def _random_run(rng, n_queries, graded):
    qrels, run, rank_lists, gain_lists = {}, {}, [], []
    for qi in range(n_queries):
        n_docs = int(rng.integers(2, 40))
        docs = [f"d{j}" for j in range(n_docs)]
        scores = rng.permutation(n_docs).astype(float)  # distinct: no tie-breaking ambiguity
        n_rel = int(rng.integers(1, min(5, n_docs) + 1))
        rel = list(rng.choice(n_docs, n_rel, replace=False))
        grades = [int(rng.integers(1, 4)) if graded else 1 for _ in rel]
        qid = f"q{qi}"
        qrels[qid] = {docs[j]: g for j, g in zip(rel, grades)}
        run[qid] = {docs[j]: float(scores[j]) for j in range(n_docs)}
        order = np.argsort(-scores, kind="stable")
        rank = np.empty(n_docs, int)
        rank[order] = np.arange(1, n_docs + 1)
        rank_lists.append(rank[rel])
        gain_lists.append(grades)
    return qrels, run, rank_lists, gain_lists


@pytest.mark.parametrize("graded", [False, True])
def test_ndcg_and_ap_agree_with_ir_measures(graded):
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, nDCG
    rng = np.random.default_rng(1 if graded else 2)
    ks = [1, 3, 5, 10]
    qrels, run, rank_lists, gain_lists = _random_run(rng, 300, graded)
    ours = evaluate(rank_lists, ks, gains=gain_lists)
    measures = [nDCG @ k for k in ks] + [AP]
    theirs = {(m.query_id, str(m.measure)): m.value
              for m in ir_measures.iter_calc(measures, qrels, run)}
    for qi in range(len(rank_lists)):
        qid = f"q{qi}"
        for j, k in enumerate(ks):
            assert ours["NDCG@k"][qi, j] == pytest.approx(theirs[(qid, f"nDCG@{k}")])
        assert ours["AP"][qi] == pytest.approx(theirs[(qid, "AP")])
    means = {str(m): v for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()}
    assert np.nanmean(ours["AP"]) == pytest.approx(means["AP"])
    assert np.nanmean(ours["NDCG@k"][:, 3]) == pytest.approx(means["nDCG@10"])


def test_the_metric_table_is_what_evaluate_the_sweep_and_check_read():
    from toolsel.eval.metrics import METRICS, binary_metrics, evaluate, metric_aliases
    from toolsel.eval.stats import BINARY_METRICS
    from toolsel.eval.sweep import SUMMARY_COLUMNS
    from toolsel.tables.check import cutoff_metrics, parse_thresholds
    got = evaluate([[1, 3], [2]], [1, 2])
    assert list(got) == list(METRICS)  # one entry per metric, in the table's order
    assert [m.mean for m in METRICS.values()] == SUMMARY_COLUMNS[2:8]
    assert BINARY_METRICS == binary_metrics() == ("Success@k", "Complete@k")
    assert metric_aliases() == {"recall": "R", "mrr": "MRR", "rr": "MRR"}
    assert cutoff_metrics() == ["R", "Success", "Complete", "NDCG"]
    # a name check accepts because the table says so, an alias included
    assert [t.name for t in parse_thresholds("recall@5=0.5,mrr=0.2")] == ["R@5", "MRR"]
    # hand-computed: query 1 finds 1 of 2 by k=1 (R 0.5, Success 1, Complete 0), RR 1
    assert got["R@k"][0].tolist() == [0.5, 0.5] and got["Complete@k"][1].tolist() == [0.0, 1.0]
    assert got["RR"].tolist() == [1.0, 0.5]


def test_a_metric_added_to_the_table_reaches_evaluate_sweep_and_check(tmp_path, monkeypatch,
                                                                      capsys):
    """A new metric is one Metric entry: evaluate computes it, `toolsel sweep` writes its
    mean in summary.csv, and `toolsel check --min` takes its name and aliases."""
    import pandas as pd

    from toolsel.cli import main
    from toolsel.eval import metrics

    def precision(c):
        return c.hits / c.kk[None, :]

    monkeypatch.setitem(metrics.METRICS, "P@k",
                        metrics.Metric("P@k", "P@k", precision, aliases=("precision",)))
    # two queries: one required tool at rank 1; two at ranks 2 and 7
    got = metrics.evaluate([[1], [2, 7]], [1, 5])["P@k"]
    assert got.tolist() == [[1.0, 0.2], [0.0, 0.2]]
    out = tmp_path / "sweep"
    assert main(["sweep", "--registry", "data/registry.json", "--queries", "data/queries.jsonl",
                 "--scorers", "bm25", "--top-k", "5", "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv")
    per_query = pd.read_csv(out / "query_metrics.csv")
    assert "P@k" in summary.columns and 0 < summary["P@k"].iloc[0] < 1
    assert summary["P@k"].iloc[0] == pytest.approx(per_query["P@k"].mean(), abs=1e-6)
    capsys.readouterr()
    check = ["check", "--registry", "data/registry.json", "--queries", "data/queries.jsonl",
             "--scorers", "bm25", "--top-k", "5", "--min"]
    assert main([*check, f"precision@5={summary['P@k'].iloc[0] - 0.01:.3f}"]) == 0
    assert main([*check, "P@5=0.9"]) == 1
    assert "P@5" in capsys.readouterr().out
