"""Multi-tool metrics, recall vs loaded noise, the split rule, and the labeled request file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from toolsel import Query, Tool, load_queries
from toolsel.cli import main
from toolsel.report.plots import plot_multi_tool, plot_noise_curve
from toolsel.datasets import assign_splits, filter_split
from toolsel.tables.discovery import (multi_tool_metrics, noise_curve, summarize_noise,
                                      summarize_requests)
from toolsel.eval.metrics import count_tokens, definition_json

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def small():
    """The tiny registry plus an always-include file tool."""
    return [
        Tool("read_file", "read a file from the workspace", metadata={"always_include": True}),
        Tool("weather_lookup", "current weather for a city"),
        Tool("stock_price", "latest stock price for a ticker"),
        Tool("translate_text", "translate text into another language"),
        Tool("calculator", "evaluate a basic arithmetic expression"),
    ]


def test_assign_splits_alternates_within_each_category():
    recs = [{"category": "a"}, {"category": "a"}, {"category": "b"}, {"category": "a"},
            {"category": "b"}, {}]
    assert assign_splits(recs) == ["dev", "test", "dev", "dev", "test", "dev"]


def test_filter_split():
    qs = [Query("1", "x", ("calculator",), split="dev"), Query("2", "y", ("calculator",),
                                                                split="test")]
    assert [q.id for q in filter_split(qs, "test")] == ["2"]
    assert len(filter_split(qs, "all")) == 2 and len(filter_split(qs, None)) == 2
    with pytest.raises(ValueError, match="split"):
        filter_split(qs, "train")


def test_multi_tool_metrics_hand_computed(small):
    # query tokens {weather, and, stock, price}: Jaccard stock_price 2/8 > weather_lookup 1/9
    qs = [Query("m", "weather and stock price", ("weather_lookup", "stock_price", "read_file"),
                category="multi"),
          Query("f", "read the notes", ("read_file",), category="fs")]
    pr = multi_tool_metrics(small, qs, ["jaccard"], [1, 2])
    m1 = pr[(pr.query_id == "m") & (pr.top_k == 1)].iloc[0]
    assert (m1["n_required"], m1["n_always_required"], m1["n_expected"]) == (2, 1, 3)
    assert m1["R@k"] == 0.5 and m1["Complete@k"] == 0.0 and m1["Success@k"] == 1.0
    m2 = pr[(pr.query_id == "m") & (pr.top_k == 2)].iloc[0]
    assert m2["R@k"] == 1.0 and m2["Complete@k"] == 1.0
    f1 = pr[(pr.query_id == "f") & (pr.top_k == 1)].iloc[0]
    assert f1["n_required"] == 0 and math.isnan(f1["R@k"])
    by_cat = summarize_requests(pr, "category")
    fs = by_cat[(by_cat.category == "fs") & (by_cat.top_k == 1)].iloc[0]
    assert fs["n_requests"] == 0 and fs["n_always_only"] == 1 and fs["n_always_required"] == 1
    overall = summarize_requests(pr, [])
    row = overall[overall.top_k == 1].iloc[0]
    assert row["n_requests"] == 1 and row["R@k"] == 0.5 and row["gap"] == 0.5
    by_n = summarize_requests(pr, "n_required")
    assert list(by_n[by_n.top_k == 1]["n_required"]) == [0, 2]


def test_noise_curve_hand_computed(small):
    # "price for a city": weather 3/7 ties stock 3/7 (registry order: weather first),
    # calculator 1/9, translate 0 (never returned: only scores above zero are)
    qs = [Query("n", "price for a city", ("stock_price",))]
    curve = noise_curve(small, qs, ["jaccard"], [1, 2, 3, 4])
    got = curve.set_index("limit")
    assert list(got["loaded"]) == [1, 2, 3, 3]
    assert list(got["found"]) == [0, 1, 1, 1]
    assert list(got["irrelevant"]) == [1, 1, 2, 2]
    tok = {t.name: count_tokens(definition_json(t)) for t in small}
    assert got.loc[1, "irrelevant_tokens"] == tok["weather_lookup"]
    assert got.loc[3, "irrelevant_tokens"] == tok["weather_lookup"] + tok["calculator"]
    assert got.loc[3, "loaded_tokens"] == (tok["weather_lookup"] + tok["stock_price"]
                                           + tok["calculator"])
    summary = summarize_noise(curve)
    assert list(summary["R@n"]) == [0.0, 1.0, 1.0, 1.0]
    assert summary.loc[2, "precision"] == pytest.approx(1 / 3)


def test_noise_curve_never_loads_always_include(small):
    qs = [Query("r", "read a file", ("read_file", "calculator"))]
    curve = noise_curve(small, qs, ["jaccard"], [5])
    row = curve.iloc[0]
    # read_file (best match, always-include) is not searched; weather, stock and calculator
    # share the token "a"; translate shares none
    assert row["n_required"] == 1 and row["found"] == 1
    assert row["loaded"] == 3 and row["irrelevant"] == 2


def test_noise_curve_search_term(small):
    qs = [Query("s", "I need to crunch some numbers", ("calculator",),
                search_term="arithmetic expression")]
    by_text = noise_curve(small, qs, ["jaccard"], [1]).iloc[0]
    by_term = noise_curve(small, qs, ["jaccard"], [1], query_field="search_term").iloc[0]
    assert by_text["found"] == 0 and by_term["found"] == 1
    with pytest.raises(ValueError, match="query_field"):
        noise_curve(small, qs, ["jaccard"], [1], query_field="name")


def test_request_file(registry, queries):
    reqs = load_queries(DATA / "requests.jsonl", registry)
    assert len(reqs) >= 150
    assert not {q.id for q in reqs} & {q.id for q in queries}
    multi = [q for q in reqs if 2 <= len(q.expected) <= 4]
    assert len(multi) >= 50 and max(len(q.expected) for q in reqs) <= 4
    cats = {q.category for q in reqs}
    assert None not in cats and {"multi_within", "multi_cross", "far_wording",
                                 "rare_operation", "neighbor_domain",
                                 "short_generic"} <= cats
    assert all(q.search_term for q in reqs)
    # the split is the documented fixed rule, so it can't drift towards a scorer
    assert [q.split for q in reqs] == assign_splits(reqs)
    for cat in cats:
        splits = [q.split for q in reqs if q.category == cat]
        assert abs(splits.count("dev") - splits.count("test")) <= 1
    neighbors = {t.split(":")[1] for q in reqs for t in q.tags if t.startswith("neighbor:")}
    assert neighbors == {"issues", "messages", "documents", "meetings"}


def test_discovery_cli(tmp_path, capsys):
    code = main(["discovery", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "requests.jsonl"), "--scorers", "jaccard", "--top-k", "5",
                 "--limits", "1,2", "--split", "test", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "split=test" in out and "counted apart" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "by_category.csv", "by_n_required.csv", "noise.csv", "noise_per_request.csv",
        "per_request.csv"]


def test_discovery_cli_bad_scorer(capsys):
    code = main(["discovery", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "requests.jsonl"), "--scorers", "nope"])
    assert code == 2 and "nope" in capsys.readouterr().err


def test_plots_have_labeled_axes(small):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    qs = [Query("m", "weather and stock price", ("weather_lookup", "stock_price"),
                category="multi"), Query("s", "stock price", ("stock_price",), category="one")]
    by_cat = summarize_requests(multi_tool_metrics(small, qs, ["jaccard"], [1]), "category")
    ax = plot_multi_tool(by_cat, top_k=1).axes[0]
    assert ax.get_ylabel() and ax.get_xlabel().startswith("category") and ax.get_legend()
    noise = summarize_noise(noise_curve(small, qs, ["jaccard"], [1, 2]))
    ax = plot_noise_curve(noise).axes[0]
    assert "irrelevant" in ax.get_xlabel() and "R@n" in ax.get_ylabel() and ax.get_legend()
    matplotlib.pyplot.close("all")
