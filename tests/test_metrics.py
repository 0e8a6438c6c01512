"""Hand-computed cases for every metric, edge cases included."""

import math

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
