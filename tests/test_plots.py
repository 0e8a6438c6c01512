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
    assert _k_labels(fig) == ["K=30", "K=10", "K=1"]  # above the frame, largest K left
    plt.close(fig)
    fig = plot_complete_vs_payload(summary, annotate=["bm25"])
    assert _k_labels(fig) == ["K=30", "K=10", "K=1"] and "Complete@k" in fig.axes[0].get_ylabel()
    plt.close(fig)


def _k_labels(fig):
    """The K labels written above the frame (in the axes' top margin), left to right."""
    fig.canvas.draw()
    ax = fig.axes[0]
    frame = ax.get_window_extent()
    above = [t for t in ax.texts if t.get_window_extent().y0 >= frame.y1]
    assert above == list(ax.texts)
    return [t.get_text() for t in sorted(above, key=lambda t: t.get_window_extent().x0)]


def test_k_labels_never_overlap():
    """Cut-offs whose payloads nearly coincide (every K from 1 to 30: on the log axis of the
    share sent, K=28, 29, 30 lie a few pixels apart): the labels kept above the frame never
    overlap one another, and the largest K is always marked."""
    import matplotlib.pyplot as plt
    ks = list(range(1, 31))
    rows = [{"scorer": "bm25", "top_k": k, "R@k": min(1.0, 0.3 + k / 40),
             "payload_reduction": 1 - k / 400} for k in ks]
    fig = plot_recall_vs_payload(pd.DataFrame(rows))
    fig.canvas.draw()
    labels = list(fig.axes[0].texts)
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


# --------------------------------------------------------------------------------------------
# Labels, legends and error bars clear of the data, on pages 01 and 12 built from real data:
# boxes measured by matplotlib's renderer in display coordinates.


def _marker_boxes(ax):
    """Display boxes of every marker of ``ax`` (line markers, error-bar caps, scatter rings)."""
    from matplotlib.collections import PathCollection
    from matplotlib.transforms import Bbox
    px = ax.figure.dpi / 72
    boxes = []
    for line in ax.get_lines():
        if line.get_marker() in (None, "", " ", "None", "none"):
            continue
        half = (line.get_markersize() + line.get_markeredgewidth()) / 2 * px
        for x, y in line.get_transform().transform(line.get_xydata()):
            boxes.append(Bbox([[x - half, y - half], [x + half, y + half]]))
    for coll in ax.collections:
        if isinstance(coll, PathCollection):
            half = (max(coll.get_sizes()) ** 0.5 + max(coll.get_linewidths())) / 2 * px
            for x, y in coll.get_offset_transform().transform(coll.get_offsets()):
                boxes.append(Bbox([[x - half, y - half], [x + half, y + half]]))
    return boxes


def _bar_boxes(ax):
    """``(collection index, display box)`` of every error-bar segment of ``ax``."""
    from matplotlib.collections import LineCollection
    from matplotlib.transforms import Bbox
    px = ax.figure.dpi / 72
    out = []
    for i, coll in enumerate(c for c in ax.collections if isinstance(c, LineCollection)):
        pad = max(coll.get_linewidths()) / 2 * px
        for seg in coll.get_segments():
            xy = coll.get_transform().transform(seg)
            out.append((i, Bbox([xy.min(axis=0) - pad, xy.max(axis=0) + pad])))
    return out


def _overlaps(boxes, others):
    return [(a, b) for a in boxes for b in others if a.overlaps(b)]


def _legend_clear(fig, renderer):
    """Every legend of ``fig`` (of an axes, or of the figure) clear of every marker and error
    bar of every axes."""
    for ax in fig.axes:
        marks = _marker_boxes(ax) + [b for _, b in _bar_boxes(ax)]
        for legend in [ax.get_legend(), *fig.legends]:
            if legend is not None and ax.get_visible():
                box = legend.get_window_extent(renderer)
                assert not _overlaps([box], marks), "the legend covers a point or a bar"


def _labels_clear(fig, renderer, *, labels_expected: int):
    """Every label (text) of every axes clear of every marker, error bar and other label.
    Returns the labels' texts."""
    from matplotlib.text import Text
    texts = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        marks = _marker_boxes(ax) + [b for _, b in _bar_boxes(ax)]
        labels = [Text.get_window_extent(t, renderer) for t in ax.texts]  # text, not leader
        assert not _overlaps(labels, marks), [t.get_text() for t in ax.texts]
        assert not [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]
                    if a.overlaps(b)]
        texts += [t.get_text() for t in ax.texts]
    assert len(texts) >= labels_expected, f"labels drawn as texts of the axes: {texts}"
    return texts


@pytest.fixture(scope="module")
def recall_page(registry, queries):
    from toolsel.pages import recall_vs_payload as page
    from toolsel.scorers.base import compared_scorers
    return page.recall_tables(registry, queries, list(compared_scorers()),
                              [1, 3, 5, 10, 20, 30], n_boot=200)


@pytest.mark.parametrize("metric", ["R@k", "Complete@k"])
def test_page_01_labels_legend_and_error_bars_are_clear(recall_page, metric):
    """Page 01's figures on the bundled data: the error bars of two scorers never overprint
    (at K = 1, 3, 5 their points share almost one payload), and the K labels and the legend
    touch no marker or error bar."""
    import matplotlib.pyplot as plt
    from toolsel.report.plots import plot_metric_vs_payload
    fig = plot_metric_vs_payload(recall_page.summary, metric, intervals=recall_page.intervals)
    for dpi in (100, 120):  # on screen, and as saved (savefig.dpi of setup_style)
        fig.set_dpi(dpi)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        bars = _bar_boxes(fig.axes[0])
        assert len({i for i, _ in bars}) == 5  # one error-bar set per scorer
        crossing = [(i, j) for n, (i, a) in enumerate(bars) for j, b in bars[n + 1:]
                    if i != j and a.overlaps(b)]
        assert not crossing, f"{len(crossing)} pairs of error bars of two scorers overprint"
        _legend_clear(fig, renderer)
        shown = _labels_clear(fig, renderer, labels_expected=4)
        assert {"K=1", "K=5", "K=30"} <= set(shown)
    # the check sees a legend put over the data (it can fail)
    fig.axes[0].legend(loc="center")
    fig.canvas.draw()
    with pytest.raises(AssertionError, match="legend covers"):
        _legend_clear(fig, fig.canvas.get_renderer())
    plt.close(fig)


@pytest.fixture(scope="module")
def policy_page():
    from toolsel.datasets import load_style
    from toolsel.pages.selection_policies import policy_tables
    from conftest import DATA
    data = {s: load_style(s, DATA / "styles") for s in ("api", "openapi")}
    return policy_tables(data, has_split=True, n_boot=200)


def test_page_12_k_labels_are_placed_clear_of_markers_and_error_bars(policy_page):
    """Page 12's frontier on two bundled styles (openapi's is the most crowded panel): every
    K label clear of every marker, error bar and other label, measured by the renderer; the
    figure's legend clear of the panels' points."""
    import matplotlib.pyplot as plt
    from toolsel.report.plots import plot_policy_frontier
    fig = plot_policy_frontier(policy_page.test, by="style")
    for dpi in (100, 120):  # on screen, and as saved (savefig.dpi of setup_style)
        fig.set_dpi(dpi)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        shown = _labels_clear(fig, renderer, labels_expected=12)
        assert "K=1" in shown
        _legend_clear(fig, renderer)
    plt.close(fig)


def test_page_07_figures_draw_every_interval_clear_of_their_labels(registry):
    """Page 07 on the bundled requests: the noise curve carries each line's 95% interval
    (a band per scorer, from the page's R@n_low / R@n_high) with its n labels clear of the
    markers; the multi-tool bars carry the intervals of both R@k and Complete@k."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection, PolyCollection
    from conftest import DATA
    from toolsel import load_queries
    from toolsel.pages.discovery import discovery_tables
    from toolsel.report.plots import plot_multi_tool, plot_noise_curve
    requests = load_queries(DATA / "requests.jsonl", registry)
    t = discovery_tables(registry, requests, ["jaccard", "bm25"], [1, 5], [1, 5, 10], "test")
    assert (t.noise["R@n_low"] <= t.noise["R@n"]).all()
    assert (t.noise["R@n"] <= t.noise["R@n_high"]).all()
    assert (t.noise["R@n_low"] < t.noise["R@n_high"]).all()  # never a collapsed point
    fig = plot_noise_curve(t.noise)
    ax = fig.axes[0]
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 2
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert sorted(_labels_clear(fig, renderer, labels_expected=2)) == ["n=1", "n=10"]
    _legend_clear(fig, renderer)
    assert "95%" in ax.get_legend().get_title().get_text()
    plt.close(fig)
    ci = t.ci_category[t.ci_category.top_k == t.k]
    fig = plot_multi_tool(t.by_category, top_k=t.k, intervals=ci)
    ax = fig.axes[0]
    n_groups = t.by_category["category"].nunique()
    bars = [c for c in ax.collections if isinstance(c, LineCollection)]
    assert sum(len(c.get_segments()) for c in bars) == 2 * 2 * n_groups  # 2 metrics × 2 scorers
    title = ax.get_legend().get_title().get_text()
    assert "R@5, 95% CI (Wilson's for a 0/1 rate" in title and "Complete@5, 95% Wilson" in title
    assert "fraction" in ax.get_ylabel()
    plt.close(fig)
