"""Choosing a configuration on dev: the variant table, the pick, the paired differences."""

import math

import pandas as pd
import pytest

from toolsel import Query, Tool
from toolsel.eval.tuning import (choose, concat_tables, evaluate_variants, paired_differences,
                                 query_metrics)
from toolsel.scorers.fusion import FusionScorer

TOOLS = [
    Tool("weather_lookup", "current weather for a city"),
    Tool("stock_price", "latest stock price for a ticker"),
    Tool("translate_text", "translate text into another language"),
    Tool("calculator", "evaluate a basic arithmetic expression"),
    Tool("send_email", "send an email message"),
    Tool("create_event", "create a calendar event"),
]

QUERIES = [
    Query("d1", "weather in Paris", ("weather_lookup",), split="dev"),
    Query("d2", "translate this text to French", ("translate_text",), split="dev"),
    Query("d3", "send an email then create an event", ("send_email", "create_event"),
          split="dev"),
    Query("d4", "crunch some numbers", ("calculator",), split="dev"),
    Query("t1", "stock price of ACME", ("stock_price",), split="test"),
]


def lexical(**kw):
    return FusionScorer(semantic=None, **kw)


@pytest.fixture(scope="module")
def table():
    styles = {"a": (TOOLS, QUERIES), "b": (TOOLS[::-1], QUERIES)}
    return evaluate_variants(styles, {"base": lexical(), "jaccard": "jaccard"})


def test_table_rows_and_columns(table):
    assert list(table.columns) == ["style", "variant", "R@5", "Complete@10", "MRR", "n"]
    assert list(zip(table["style"], table["variant"])) == [
        ("a", "base"), ("a", "jaccard"), ("b", "base"), ("b", "jaccard")]
    assert set(table["n"]) == {4}  # dev only


def test_table_values_by_hand(table):
    # 6 tools: top 5 misses at most one tool. "crunch some numbers" shares no word with any
    # tool: every scorer scores it flat, so calculator keeps its registry rank.
    row = table[(table["style"] == "a") & (table["variant"] == "base")].iloc[0]
    assert row["Complete@10"] == 1.0  # 10 >= 6 tools: everything sent
    # d4: calculator 4th in registry order in style a -> rank 4 (flat scores, registry order)
    qm = query_metrics(table)
    d4 = qm[(qm["style"] == "a") & (qm["scorer"] == "base") & (qm["query_id"] == "d4")]
    assert d4["RR"].iloc[0] == pytest.approx(1 / 4)
    # the other three dev queries put a required tool first
    assert row["MRR"] == pytest.approx((1 + 1 + 1 + 1 / 4) / 4)


def test_split_none_scores_every_query():
    t = evaluate_variants({"a": (TOOLS, QUERIES)}, {"j": "jaccard"}, split=None)
    assert t["n"].tolist() == [5]


def test_needs_cut_offs_5_and_10():
    with pytest.raises(ValueError, match="10"):
        evaluate_variants({"a": (TOOLS, QUERIES)}, {"j": "jaccard"}, ks=(5,))


def test_unknown_split_names_the_style():
    qs = [q for q in QUERIES if q.split == "test"]
    with pytest.raises(ValueError, match="'a'"):
        evaluate_variants({"a": (TOOLS, qs)}, {"j": "jaccard"}, split="dev")


def _table(values):
    """A hand-made table: ``values[variant][style] = [(R@5, Complete@10) per query]``."""
    rows, qm = [], []
    for variant, per_style in values.items():
        for style, per_query in per_style.items():
            for i, (r5, c10) in enumerate(per_query):
                qm.append({"style": style, "scorer": variant, "top_k": 5, "query_id": f"q{i}",
                           "R@k": r5, "Complete@k": 0.0, "RR": 1.0})
                qm.append({"style": style, "scorer": variant, "top_k": 10, "query_id": f"q{i}",
                           "R@k": 1.0, "Complete@k": c10, "RR": 1.0})
            rows.append({"style": style, "variant": variant,
                         "R@5": sum(r for r, _ in per_query) / len(per_query),
                         "Complete@10": sum(c for _, c in per_query) / len(per_query),
                         "MRR": 1.0, "n": len(per_query)})
    table = pd.DataFrame(rows)
    table.attrs["query_metrics"] = pd.DataFrame(qm).to_dict("list")
    return table


def test_choose_best_mean_and_loss_constraint():
    t = _table({
        "today": {"x": [(1, 1), (0, 0)], "y": [(1, 1), (1, 1)]},      # score 0.75
        "greedy": {"x": [(1, 1), (1, 1)], "y": [(1, 1), (0, 1)]},     # 0.9375, y R@5 -0.5
        "safe": {"x": [(1, 1), (1, 0)], "y": [(1, 1), (1, 1)]},       # 0.875, no loss
    })
    free = choose(t, "today")
    assert free.variant == "greedy"
    assert free.ranking["variant"].tolist() == ["greedy", "safe", "today"]
    assert free.ranking.set_index("variant").loc["greedy", "worst_loss"] == pytest.approx(0.5)
    held = choose(t, "today", max_loss=0.01)
    assert held.variant == "safe"
    d = held.differences.set_index(["style", "metric"])
    assert d.loc[("x", "R@5"), "diff"] == pytest.approx(0.5)
    assert d.loc[("x", "Complete@10"), "diff"] == pytest.approx(0.0)
    assert d.loc[("y", "R@5"), "diff"] == 0.0
    assert (d["a"] == "safe").all() and (d["b"] == "today").all()


def test_choose_loss_budget_in_queries_and_candidates():
    t = _table({
        "today": {"x": [(1, 1), (0, 0)], "y": [(1, 1), (1, 1)]},
        "greedy": {"x": [(1, 1), (1, 1)], "y": [(1, 1), (0, 1)]},     # loses 1 of y's 2 queries
        "safe": {"x": [(1, 1), (1, 0)], "y": [(1, 1), (1, 1)]},
    })
    r = choose(t, "today").ranking.set_index("variant")
    assert r.loc["greedy", "worst_loss_queries"] == pytest.approx(1.0)  # 0.5 x 2 queries
    assert r.loc["safe", "worst_loss_queries"] == 0.0
    assert choose(t, "today", max_loss_queries=1).variant == "greedy"
    assert choose(t, "today", max_loss_queries=0.5).variant == "safe"
    # both budgets apply together
    assert choose(t, "today", max_loss_queries=1, max_loss=0.01).variant == "safe"
    # the baseline can be left out of the candidates (e.g. it misses a latency target)
    assert choose(t, "today", candidates=["safe", "today"]).variant == "safe"
    weak = _table({"today": {"x": [(1, 1)]}, "worse": {"x": [(0, 0)]}})
    assert choose(weak, "today").variant == "today"
    with pytest.raises(ValueError, match="no candidate variant is within the loss budget"):
        choose(weak, "today", max_loss_queries=0.5, candidates=["worse"])
    with pytest.raises(ValueError, match="no candidate is a variant"):
        choose(weak, "today", candidates=["nope"])


def test_choose_tie_keeps_table_order_and_baseline_can_win():
    t = _table({"today": {"x": [(1, 1)]}, "same": {"x": [(1, 1)]}})
    c = choose(t, "today")
    assert c.variant == "today"
    assert c.differences["diff"].tolist() == [0.0, 0.0]


def test_choose_errors():
    t = _table({"today": {"x": [(1, 1)]}})
    with pytest.raises(ValueError, match="baseline 'nope'"):
        choose(t, "nope")
    bare = t.copy()
    bare.attrs = {}  # as after a CSV round trip
    with pytest.raises(ValueError, match="per-query"):
        choose(bare, "today")


def test_concat_tables_keeps_per_query_values(table):
    other = evaluate_variants({"a": (TOOLS, QUERIES), "b": (TOOLS[::-1], QUERIES)},
                              {"off": lexical(clauses=False)})
    both = concat_tables([table, other])
    assert list(zip(both["style"], both["variant"])) == [
        ("a", "base"), ("a", "jaccard"), ("a", "off"), ("b", "base"), ("b", "jaccard"),
        ("b", "off")]
    assert set(query_metrics(both)["scorer"]) == {"base", "jaccard", "off"}
    c = choose(both, "base")
    assert c.variant in {"base", "jaccard", "off"}


def test_paired_differences_against_itself_is_zero(table):
    d = paired_differences(query_metrics(table), "base", "base")
    assert d["diff"].tolist() == [0.0] * 4 and not any(math.isnan(v) for v in d["mean_a"])

