"""Figures: labeled axes with units, a legend, K marked; files that regenerate identically."""

import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from toolsel.tables.failure_modes import MODES  # noqa: E402
from toolsel.report.plots import (plot_complete_vs_payload, plot_escape_hatch,  # noqa: E402
                           plot_failure_modes, plot_recall_vs_payload, save_figure,
                           setup_style)


@pytest.fixture
def summary():
    rows = []
    for scorer, base in (("jaccard", 0.3), ("bm25", 0.4)):
        for k, red in ((1, 0.98), (10, 0.84), (30, 0.52)):
            r = min(1.0, base + k / 50)
            rows.append({"scorer": scorer, "top_k": k, "R@k": r, "Complete@k": r - 0.02,
                         "payload_reduction": red})
    return pd.DataFrame(rows)


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_recall_figure_has_units_legend_and_k(summary):
    import matplotlib.pyplot as plt
    fig = plot_recall_vs_payload(summary)
    ax = fig.axes[0]
    assert "%" in ax.get_xlabel() and "payload" in ax.get_xlabel()
    assert "%" in ax.get_ylabel()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["jaccard", "bm25"]
    assert _texts(ax) == [] and _k_labels(fig) == ["K=30", "K=10", "K=1"]  # on a top axis
    plt.close(fig)
    fig = plot_complete_vs_payload(summary, annotate=["bm25"])
    assert _k_labels(fig) == ["K=30", "K=10", "K=1"] and "Complete@k" in fig.axes[0].get_ylabel()
    plt.close(fig)


def _k_labels(fig):
    fig.canvas.draw()
    top = fig.axes[0].child_axes[0]
    return [t.get_text() for t in top.get_xticklabels()]


def test_k_labels_never_overlap():
    """Cut-offs whose payloads nearly coincide (K=1..5 on a big registry): the labels kept on
    the top axis never overlap one another, and the largest K is always marked."""
    import matplotlib.pyplot as plt
    ks = [1, 2, 3, 4, 5, 10, 20, 30]
    rows = [{"scorer": "bm25", "top_k": k, "R@k": min(1.0, 0.3 + k / 40),
             "payload_reduction": 1 - k / 400} for k in ks]
    fig = plot_recall_vs_payload(pd.DataFrame(rows))
    fig.canvas.draw()
    top = fig.axes[0].child_axes[0]
    labels = [t for t in top.get_xticklabels() if t.get_text()]
    boxes = sorted((t.get_window_extent() for t in labels), key=lambda b: b.x0)
    assert len(boxes) >= 3 and all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:]))
    shown = [t.get_text() for t in labels]
    assert "K=30" in shown and len(shown) < len(ks)
    plt.close(fig)


def test_error_bars_from_intervals(summary):
    import matplotlib.pyplot as plt
    iv = summary.assign(metric="R@k", mean=summary["R@k"], low=summary["R@k"] - 0.1,
                        high=summary["R@k"] + 0.1)
    fig = plot_recall_vs_payload(summary, intervals=iv)
    assert "95%" in fig.axes[0].get_legend().get_title().get_text()
    plt.close(fig)


def test_missing_column_is_named(summary):
    with pytest.raises(KeyError, match="payload_reduction"):
        plot_recall_vs_payload(summary.drop(columns="payload_reduction"))


def test_failure_mode_and_escape_hatch_charts():
    import matplotlib.pyplot as plt
    counts = pd.DataFrame([[2, 1, 0, 0, 3], [0, 1, 1, 0, 2]], index=["jaccard", "bm25"],
                          columns=[*MODES, "total"])
    fig = plot_failure_modes(counts, top_k=10)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(MODES)
    assert "K=10" in ax.get_title() and ax.get_ylabel().startswith("misses")
    plt.close(fig)
    s = pd.DataFrame([{"scorer": "jaccard", "top_k": 10, "misses": 4, "recovered_literal": 0,
                       "recovered_literal_unseen": 1, "recovered_search_term": 3}])
    fig = plot_escape_hatch(s)
    assert len(fig.axes[0].get_legend().get_texts()) == 4
    plt.close(fig)


def test_saved_files_are_reproducible(summary, tmp_path):
    import matplotlib.pyplot as plt
    setup_style()
    out = []
    for run in ("a", "b"):
        fig = plot_recall_vs_payload(summary)
        out.append(save_figure(fig, tmp_path / run, "fig"))
        plt.close(fig)
    for p1, p2 in zip(*out):
        assert p1.read_bytes() == p2.read_bytes(), p1.name
    assert [p.suffix for p in out[0]] == [".png", ".svg"]


def test_cost_figures_of_pages_08_and_11_share_the_cache_colours():
    import inspect

    from toolsel.report.plots import (CACHE_COLORS, plot_conversation_requests, plot_cost,
                                      plot_cost_split)
    for fn in (plot_conversation_requests, plot_cost, plot_cost_split):
        # no colour literal of their own: all read CACHE_COLORS
        src = inspect.getsource(fn)
        assert "CACHE_COLORS" in src
        assert not any(c in src for c in CACHE_COLORS.values())


def test_markdown_escapes_data_and_formats_tables():
    import pandas as pd
    from toolsel.report import markdown as md
    assert md.escape("#backend") == "\\#backend"
    assert md.escape("what's") == "what&#x27;s"  # an entity is never broken by escaping
    assert md.escape("a|b <x> *y*") == "a\\|b &lt;x&gt; \\*y\\*"
    assert md.code("a`b|c") == "<code>a`b&#124;c</code>"
    df = pd.DataFrame({"tool": ["#x", "y|z"], "n": [1234, 5], "r": [0.5, 0.25]})
    text = md.table(df, {"r": "{:.0%}"}, max_rows=1, link="d/t.csv")
    assert text.splitlines()[0] == "| tool | n | r |"
    assert "| \\#x | 1,234 | 50% |" in text and "y\\|z" not in text
    assert "The first 1 of 2 rows; all of them in [t\\.csv](d/t.csv)." in text
    assert md.interval(0.5, 0.25, 0.75) == "50% [25, 75]"


def test_policy_frontier_labels_top_k_points(registry, queries):
    pytest.importorskip("matplotlib")
    from toolsel.eval.policies import evaluate_policies, frontier, summarize_policies
    from toolsel.report.plots import plot_policy_frontier
    from toolsel.policies import parse_policy
    specs = ["top_k:k=1", "top_k:k=5", "threshold:min_score=0.5"]
    per_query = evaluate_policies(registry, queries, "bm25", [parse_policy(s) for s in specs])
    summary = frontier(summarize_policies(per_query))
    fig = plot_policy_frontier(summary, by=None)
    ax = fig.axes[0]
    assert sorted(t.get_text() for t in ax.texts) == ["K=1", "K=5"]
    assert ax.get_ylabel().startswith("R@sent")
    import matplotlib.pyplot as plt
    plt.close(fig)


def test_log_axes_label_powers_of_ten_as_plain_numbers(tmp_path):
    """matplotlib's log labels are mathtext; with math parsing off they showed as
    $\\mathdefault{10^{2}}$ (05's latency and 12's frontier figures)."""
    import pandas as pd
    from toolsel.report.plots import plain_log_axis, plot_latency_vs_tools, pyplot
    scale = pd.DataFrame({"scorer": ["jaccard"] * 3 + ["naive"] * 3,
                          "n_tools": [61, 1000, 10000] * 2,
                          "p50_ms": [0.02, 0.03, 0.08, 0.2, 3.0, 35.0],
                          "p95_ms": [0.03, 0.04, 0.1, 0.3, 4.0, 40.0]})
    fig = plot_latency_vs_tools(scale)
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()
              if t.get_text()]
    assert labels and not any("mathdefault" in t or "$" in t for t in labels), labels
    assert "1,000" in labels and "10,000" in labels and "0.1" in labels
    plt = pyplot()
    _, ax2 = plt.subplots()
    ax2.plot([0.001, 1, 100], [1, 2, 3])
    ax2.set_xscale("log")
    plain_log_axis(ax2.xaxis)
    ax2.figure.canvas.draw()
    shown = [t.get_text() for t in ax2.get_xticklabels() if t.get_text()]
    assert {"0.001", "1", "100"} <= set(shown), shown
    plt.close("all")
