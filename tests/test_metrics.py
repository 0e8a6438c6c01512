"""Hand-computed cases for every metric, edge cases included."""

import math

import numpy as np

import pytest

from toolsel import Tool
from toolsel.eval.metrics import (complete_at_k, count_tokens, payload_chars, payload_json_chars,
                             payload_reduction, payload_tokens, recall_at_k, reciprocal_rank,
                             success_at_k, tool_costs)


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
