"""The report's figures, from the sweep's tables: one function per figure, each returning a Figure.

All figures label their axes with units, carry a legend, and mark the cut-off K at each
point. :func:`save_figure` writes PNG and SVG reproducibly (fixed SVG hash salt, no date
metadata), so rerunning a notebook rewrites identical files. matplotlib is imported lazily:
it is an optional (``notebooks``) dependency.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # for the annotation only: report reads tables, never the reverse
    from ..tables.runs import RunsReport

__all__ = ["setup_style", "save_figure", "bound_figure", "shorten", "MAX_LABEL_CHARS",
           "MAX_FIGURE_INCHES", "plain_log_axis", "k_axis", "reduction_axis", "dodge_order",
           "REDUCTION_TICKS", "plot_metric_vs_payload", "plot_recall_vs_payload",
           "plot_complete_vs_payload", "plot_failure_modes", "plot_escape_hatch",
           "plot_noise_curve", "plot_multi_tool", "pyplot", "scorer_color", "SCORER_COLORS",
           "CACHE_COLORS", "CACHE_LABELS", "plot_latency_vs_tools",
           "plot_style_comparison", "plot_conversation_requests", "plot_cost",
           "plot_cost_split"]

#: Stable colours per scorer name (others cycle through the default palette).
SCORER_COLORS = {"jaccard": "#d62728", "bm25": "#1f77b4", "tfidf": "#2ca02c",
                 "embedding": "#9467bd", "fusion": "#ff7f0e", "default": "#ff7f0e"}

#: One colour per input component, the same in every cost figure (notebooks 08 and 11).
CACHE_COLORS = {"uncached": "#d62728", "cache_write": "#ff7f0e", "cache_read": "#2ca02c"}
#: Their legend labels.
CACHE_LABELS = {"uncached": "uncached input", "cache_write": "cache write",
                "cache_read": "cache read"}

_MARKERS = "osD^vP*X"


#: Longest line of text a figure shows (tool names, categories, titles from data): longer
#: lines end in an ellipsis, so one odd label cannot blow up a figure.
MAX_LABEL_CHARS = 150
#: Largest figure (inches, before ``bbox_inches="tight"`` trims or grows it to its text).
MAX_FIGURE_INCHES = (24.0, 24.0)


def pyplot():
    """``matplotlib.pyplot``, with a clear error when the notebooks extra is missing.

    Text is never parsed as math (``text.parse_math`` off): a ``$`` in a category or title
    from the data is shown as typed, not read as mathtext (which fails on ``$x_{$``)."""
    try:
        import matplotlib
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - installed with the notebooks extra
        raise ImportError("figures need matplotlib: pip install 'toolsel[notebooks]'") from None
    matplotlib.rcParams["text.parse_math"] = False
    return plt


def shorten(text: object, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` with every line cut to ``limit`` characters (an ellipsis marks the cut)."""
    return "\n".join(line if len(line) <= limit else line[:limit - 1] + "…"
                      for line in str(text).split("\n"))


def bound_figure(fig) -> None:
    """Make a figure safe to draw whatever the data: no text parsed as math, every text
    line at most :data:`MAX_LABEL_CHARS`, the size at most :data:`MAX_FIGURE_INCHES`."""
    from matplotlib.text import Text
    from matplotlib.ticker import FixedFormatter, FuncFormatter
    for ax in fig.axes:  # tick labels are redrawn from their formatter: shorten them there
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            if isinstance(fmt, FixedFormatter):
                fmt.seq = [shorten(s) for s in fmt.seq]
            elif isinstance(fmt, FuncFormatter) and not getattr(fmt.func, "_short", False):
                def short(x, pos=None, func=fmt.func):
                    return shorten(func(x, pos))
                short._short = True
                fmt.func = short
    for artist in fig.findobj(Text):
        artist.set_parse_math(False)
        text = artist.get_text()
        if text and max(map(len, text.split("\n"))) > MAX_LABEL_CHARS:
            artist.set_text(shorten(text))
    w, h = fig.get_size_inches()
    fig.set_size_inches(min(w, MAX_FIGURE_INCHES[0]), min(h, MAX_FIGURE_INCHES[1]))


def plain_log_axis(axis) -> None:
    """Label a log-scale axis (``ax.xaxis``/``ax.yaxis``) at each power of ten with a plain
    number ("1,000", "0.1"). matplotlib's default log labels are mathtext
    (``$\\mathdefault{10^{2}}$``), shown raw since text is never parsed as math here."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    def label(value, _pos):
        if not np.isfinite(value) or value <= 0:
            return ""
        if value >= 1:
            return f"{value:,.0f}"
        return f"{value:.{int(-np.floor(np.log10(value) + 1e-9))}f}"

    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(label))
    axis.set_minor_formatter(NullFormatter())


def setup_style() -> None:
    """Reproducible SVG output and a readable default size; no text parsed as math."""
    import matplotlib
    matplotlib.rcParams["text.parse_math"] = False
    matplotlib.rcParams["svg.hashsalt"] = "toolsel"
    matplotlib.rcParams["figure.dpi"] = 100
    matplotlib.rcParams["savefig.dpi"] = 120
    matplotlib.rcParams["axes.grid"] = True
    matplotlib.rcParams["grid.alpha"] = 0.3


def save_figure(fig, out_dir: str | Path, name: str, *, alt: str | None = None) -> list[Path]:
    """Write ``name.png`` and ``name.svg`` into ``out_dir``; return the paths.

    ``alt``: what the figure shows, in words. The figure is then displayed here with it as
    its alternative text (the HTML export puts it in the image's ``alt``) and closed, so the
    notebook does not display it a second time.
    """
    import matplotlib
    matplotlib.rcParams["svg.hashsalt"] = "toolsel"
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    bound_figure(fig)
    fig.savefig(png, bbox_inches="tight", metadata={"Software": None})
    fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    if alt is not None:
        show_figure(png, alt)
        pyplot().close(fig)
    return [png, svg]


def show_figure(png: str | Path, alt: str) -> None:
    """Display a PNG file in the notebook with ``alt`` as its alternative text."""
    import base64

    from IPython.display import display
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    display({"image/png": data, "text/plain": f"[figure: {alt}]"}, raw=True,
            metadata={"image/png": {"alt": alt}})


def scorer_color(scorer: str, i: int) -> str | None:
    """The scorer's fixed colour, so a scorer looks the same in every figure."""
    return SCORER_COLORS.get(scorer, f"C{i % 10}")


def interval_method(metric: str) -> str:
    """The name of the interval the reports draw for ``metric``: Wilson's for a yes-or-no
    outcome per request (``Complete@k``, ``Success@k``), a bootstrap otherwise (see
    :func:`toolsel.eval.stats.mean_intervals`)."""
    from ..eval.stats import BINARY_METRICS
    family = metric.split("@")[0] + "@k" if "@" in metric else metric  # Complete@10: Complete@k
    return "Wilson" if family in BINARY_METRICS else "bootstrap"


#: Payload reductions (%) the x axis of :func:`plot_metric_vs_payload` may mark.
REDUCTION_TICKS = (0, 50, 75, 90, 95, 98, 99, 99.5, 99.8, 99.9, 99.95, 99.98, 99.99)


def reduction_axis(ax) -> None:
    """Put payload reduction (%) on ``ax``'s x axis on a log scale of the share still sent
    (100 − reduction): K=1, 3, 5 send 1–10% of a registry and crowd at the right end of a
    linear axis; on this one each doubling of what is sent is the same width."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    def forward(x):
        return -np.log10(np.clip(100.0 - np.asarray(x, float), 1e-4, None))

    def inverse(y):
        return 100.0 - 10.0 ** (-np.asarray(y, float))

    ax.set_xscale("function", functions=(forward, inverse))
    ax.xaxis.set_major_locator(FixedLocator(REDUCTION_TICKS))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())


def dodge_order(xs: Sequence[np.ndarray]) -> list[int]:
    """The left-to-right order in which :func:`plot_metric_vs_payload` sets curves apart:
    by how far right of the other curves' points at the same K each curve's points lie on
    average (``xs[i]`` in display units, one value per K, the same Ks for every curve), so the
    shift goes the way the points already lean; ties keep the given order."""
    table = np.array([np.asarray(x, float) for x in xs])
    lean = np.nanmean(table - np.nanmean(table, axis=0), axis=1) if table.size else []
    return sorted(range(len(xs)), key=lambda i: (round(float(lean[i]), 6), i))


def plot_metric_vs_payload(summary: pd.DataFrame, metric: str = "R@k", *,
                           intervals: pd.DataFrame | None = None,
                           scorers: Sequence[str] | None = None,
                           payload: str = "payload_reduction", title: str | None = None,
                           annotate: Sequence[str] | None = None, dodge: float = 6.0, ax=None):
    """A curve per scorer: ``metric`` (%) against payload reduction (%), each point a cut-off K.

    ``summary`` is a sweep summary (``scorer, top_k, <metric>, payload_reduction``).
    ``intervals`` (from :func:`toolsel.eval.stats.mean_intervals`) adds 95% error bars.
    The x axis is :func:`reduction_axis` (log scale of the share sent). The scorers' points of
    one K lie almost on one x: each curve is shifted sideways by a multiple of ``dodge``
    points (:func:`dodge_order`), so no two error bars overprint; the legend says so. K is
    written above the axes over the points of the first scorer in ``annotate`` (default:
    every scorer's mean position), a K too close to one already written left out
    (:func:`k_axis`); the legend sits outside the axes, right of them.
    """
    plt = pyplot()
    for col in ("scorer", "top_k", metric, payload):
        if col not in summary.columns:
            raise KeyError(f"summary has no column {col!r}")
    names = list(dict.fromkeys(summary["scorer"])) if scorers is None else list(scorers)
    if ax is None:
        fig, ax = plt.subplots(figsize=(9.5, 5.5))
    else:
        fig = ax.figure
    reduction_axis(ax)
    curves = [_payload_curve(summary, name, metric, payload, intervals) for name in names]
    for _, _, x, _, low, high in curves:  # shifted curves do not count for autoscaling
        ax.update_datalim(np.column_stack([np.r_[x, x], np.r_[low, high]]))
    ax.autoscale_view()
    ks = sorted({int(k) for c in curves for k in c[1]})
    at_k = [[dict(zip(c[1], c[2])).get(k, np.nan) for k in ks] for c in curves]
    _draw_dodged(ax, curves, at_k, dodge, intervals is not None)
    _payload_labels(ax, metric, names, intervals is not None, dodge, title)
    fig.tight_layout()
    first = next((c for c in curves if annotate and c[0] == annotate[0]), None)
    k_axis(ax, *((list(first[2]), list(first[1])) if first is not None
                 else ([float(np.nanmean(col)) for col in np.array(at_k).T], ks)))
    return fig


def _payload_labels(ax, metric: str, names: Sequence[str], bars: bool, dodge: float,
                    title: str | None) -> None:
    """Axis labels, title and the legend (outside, right, in the order of ``names``) of
    :func:`plot_metric_vs_payload`."""
    handles, labels = ax.get_legend_handles_labels()
    order_back = [labels.index(n) for n in names]  # the legend in the caller's order
    ax.set_xlabel("payload reduction vs sending all tools (%, name + description chars; "
                  "log scale of the share still sent)")
    ax.set_ylabel(f"{metric} (% of queries)" if metric != "R@k"
                  else "R@k: required tools sent (%)")
    ax.set_ylim(0, 105)
    ax.legend([handles[j] for j in order_back], [labels[j] for j in order_back],
              title=_payload_legend_title(metric, bars,
                                          dodge if len(names) > 1 else None),
              loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=9,
              title_fontsize=8.5, alignment="left")
    ax.set_title(title or f"{metric} against payload reduction, one point per cut-off K",
                 pad=18)


def _draw_dodged(ax, curves, at_k, dodge: float, bars: bool) -> None:
    """Draw each curve of :func:`plot_metric_vs_payload` shifted sideways by its rank in
    :func:`dodge_order` times ``dodge`` points (centred on no shift)."""
    from matplotlib.transforms import offset_copy
    shown = [ax.transData.transform(np.column_stack([v, np.zeros(len(v))]))[:, 0]
             for v in at_k]
    order = dodge_order(shown)
    for rank, i in enumerate(order):
        name, _, x, y, low, high = curves[i]
        shift = offset_copy(ax.transData, fig=ax.figure,
                            x=(rank - (len(order) - 1) / 2) * dodge, y=0, units="points")
        ax.errorbar(x, y, yerr=[y - low, high - y] if bars else None, transform=shift,
                    color=scorer_color(name, i), marker=_MARKERS[i % len(_MARKERS)],
                    markersize=5.5, linewidth=1.6, capsize=2, elinewidth=0.8, alpha=0.95,
                    label=name, zorder=2 + rank)


def _payload_curve(summary: pd.DataFrame, name: str, metric: str, payload: str,
                   intervals: pd.DataFrame | None):
    """``(name, ks, x, y, low, high)`` of one scorer's curve, in %, K ascending (``low`` and
    ``high`` are ``y`` without intervals)."""
    g = summary[summary["scorer"] == name].sort_values("top_k")
    x, y = 100 * g[payload].to_numpy(float), 100 * g[metric].to_numpy(float)
    low = high = y
    if intervals is not None:
        iv = (intervals[(intervals["scorer"] == name) & (intervals["metric"] == metric)]
              .set_index("top_k").reindex(g["top_k"]))
        low, high = 100 * iv["low"].to_numpy(float), 100 * iv["high"].to_numpy(float)
    return name, list(g["top_k"]), x, y, low, high


def _payload_legend_title(metric: str, bars: bool, dodge: float | None) -> str:
    """The legend title of :func:`plot_metric_vs_payload`: the interval drawn, and the
    sideways shift of the curves (``dodge`` points, ``None`` for a single curve)."""
    title = "scorer\n(bars: 95% CI, Wilson's\nfor a 0/1 rate,\nbootstrap otherwise)" \
        if bars else "scorer"
    if dodge is not None:
        title += f"\ncurves set {dodge:g} pt apart\nsideways so bars do\nnot overprint"
    return title


def k_axis(ax, xs: Sequence[float], ks: Sequence[int], *, gap: float = 4.0) -> list:
    """Write each cut-off ``K=k`` just above ``ax``'s frame at data ``x``; a label whose box
    (measured by the renderer, after the figure's layout) would come within ``gap`` points of
    one already written is left out, the smallest x first. Returns the labels kept."""
    from matplotlib.transforms import blended_transform_factory
    fig = ax.figure
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    where = blended_transform_factory(ax.transData, ax.transAxes)
    pad = gap * fig.dpi / 72.0
    kept, last = [], None
    for x, k in sorted(zip((float(v) for v in xs), ks)):
        if not np.isfinite(x):
            continue
        label = ax.annotate(f"K={int(k)}", (x, 1.0), xycoords=where, xytext=(0, 2.5),
                            textcoords="offset points", ha="center", va="bottom", fontsize=8,
                            annotation_clip=False)
        box = label.get_window_extent(renderer)
        if last is not None and box.x0 < last.x1 + pad:
            label.remove()
            continue
        kept.append(label)
        last = box
    return kept


def plot_recall_vs_payload(summary: pd.DataFrame, **kwargs):
    """R@k against payload reduction (see :func:`plot_metric_vs_payload`)."""
    return plot_metric_vs_payload(summary, "R@k", **kwargs)


def plot_complete_vs_payload(summary: pd.DataFrame, **kwargs):
    """Complete@k against payload reduction (see :func:`plot_metric_vs_payload`)."""
    return plot_metric_vs_payload(summary, "Complete@k", **kwargs)


def plot_failure_modes(counts: pd.DataFrame, *, top_k: int | None = None, ax=None):
    """Grouped bars: misses per scorer (rows of ``counts``) and failure mode (its columns).

    ``counts`` is :func:`toolsel.tables.failure_modes.mode_counts` output; a ``total`` column is
    ignored.
    """
    plt = pyplot()

    data = counts.drop(columns=[c for c in ("total",) if c in counts.columns])
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 4.8))
    else:
        fig = ax.figure
    n_modes = data.shape[1]
    width = 0.8 / max(n_modes, 1)
    x = np.arange(len(data))
    mode_colors = ["#e377c2", "#bcbd22", "#17becf", "#7f7f7f", "#8c564b"]
    for j, mode in enumerate(data.columns):
        vals = data[mode].to_numpy(int)
        bars = ax.bar(x + (j - (n_modes - 1) / 2) * width, vals, width, label=mode,
                      color=mode_colors[j % len(mode_colors)])
        ax.bar_label(bars, labels=[str(v) if v else "" for v in vals], fontsize=8, padding=1)
    ax.set_xticks(x, [str(i) for i in data.index])
    ax.set_xlabel("scorer")
    ax.set_ylabel("misses (required tools not sent)")
    ax.set_title("Misses by failure mode" + (f" at K={top_k}" if top_k is not None else ""))
    ax.legend(title="failure mode")
    ax.grid(axis="x", visible=False)
    fig.tight_layout()
    return fig


def plot_escape_hatch(summary: pd.DataFrame, *, ax=None):
    """Per scorer: misses, and how many one ``discover`` call recovers in each variant.

    ``summary`` is :attr:`toolsel.tables.scenario.EscapeHatch.summary`, optionally with a
    ``recovered_content_words`` column (the call made with the query's content words).
    """
    plt = pyplot()

    cols = [("misses", "misses at K", "#7f7f7f")]
    cols += [(c, label, color) for c, label, color in (
        ("recovered_literal", "recovered: literal query", "#d62728"),
        ("recovered_literal_unseen", "recovered: literal query, unseen tools only", "#ff7f0e"),
        ("recovered_content_words", "recovered: content words of the query (no labels)",
         "#1f77b4"),
        ("recovered_search_term", "recovered: labeler's search term (upper bound)", "#2ca02c"))
        if c in summary.columns]
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 4.8))
    else:
        fig = ax.figure
    x = np.arange(len(summary))
    width = 0.8 / len(cols)
    for j, (col, label, color) in enumerate(cols):
        vals = summary[col].to_numpy(int)
        bars = ax.bar(x + (j - (len(cols) - 1) / 2) * width, vals, width, label=label,
                      color=color)
        ax.bar_label(bars, fontsize=8, padding=1)
    k = summary["top_k"].iloc[0] if len(summary) else None
    ax.set_xticks(x, summary["scorer"].tolist())
    ax.set_xlabel("scorer (filter and discover use the same one)")
    ax.set_ylabel("required tools (count)")
    ax.set_title(f"What one discover call recovers at K={k}")
    ax.legend(loc="upper right", fontsize=8.5)
    ax.grid(axis="x", visible=False)
    fig.tight_layout()
    return fig


def plot_noise_curve(summary: pd.DataFrame, *, ax=None, recall: str = "R@n"):
    """Share of required tools found against irrelevant definitions loaded, one line per scorer;
    each point is a result limit ``n``.

    When ``summary`` has ``<recall>_low`` and ``<recall>_high`` columns (the page's 95%
    intervals), each line carries its interval as a band. The smallest and largest ``n`` are
    labeled once, on the line with the highest recall (every line runs the same way: left =
    smallest ``n``), each label placed clear of the markers
    (:func:`toolsel.report.placement.place_labels`); the legend sits right of the axes.
    """
    from .placement import place_labels
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(8.5, 4.5))
    fig = ax.figure
    bands = {f"{recall}_low", f"{recall}_high"} <= set(summary.columns)
    lines = list(summary.groupby("scorer", sort=False))
    for i, (label, g) in enumerate(lines):
        g = g.sort_values("limit")
        color = scorer_color(label, i)
        ax.plot(g["irrelevant"], g[recall], marker="o", ms=5, label=label, color=color,
                zorder=3)
        if bands:
            ax.fill_between(g["irrelevant"], g[f"{recall}_low"], g[f"{recall}_high"],
                            color=color, alpha=0.12, linewidth=0, zorder=1)
    lo, hi = (int(summary["limit"].min()), int(summary["limit"].max())) if len(summary) \
        else (1, 1)
    ax.set_xlabel("irrelevant tool definitions loaded per request (mean count)")
    ax.set_ylabel(f"{recall}: share of required tools found (fraction)")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    ax.legend(title="scorer" + ("\n(bands: 95% bootstrap\nCI, Wilson's where\nit is a point)"
                                if bands else ""), loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8, title_fontsize=8,
              alignment="left")
    ax.set_title(f"Search result limit n = {lo}..{hi} (left to right on each line): "
                 "recall vs loaded noise", fontsize=10)
    fig.tight_layout()
    if lines:
        top = max(lines, key=lambda kv: kv[1][recall].max())[1].sort_values("limit")
        ends = top.iloc[[0, -1]] if len(top) > 1 else top
        place_labels(ax, list(zip(ends["irrelevant"], ends[recall])),
                     [f"n={int(n)}" for n in ends["limit"]], fontsize=8, fontweight="bold")
    return fig


def _group_interval(intervals: pd.DataFrame | None, by: str, scorer: str, metric: str,
                    groups: Sequence[str], means: Sequence[float]):
    """``yerr`` of ``metric`` for one scorer's bars (``None`` without intervals for it)."""
    if intervals is None:
        return None
    iv = intervals[intervals["scorer"] == scorer]
    if "metric" in iv.columns:
        iv = iv[iv["metric"] == metric]
    elif metric != "Complete@k":  # a table without a metric column holds Complete@k's
        return None
    if iv.empty:
        return None
    iv = iv.set_index(iv[by].astype(str))
    lo = np.array([iv["low"].get(k, np.nan) for k in groups], dtype=float)
    hi = np.array([iv["high"].get(k, np.nan) for k in groups], dtype=float)
    m = np.asarray(means, dtype=float)
    return np.nan_to_num([np.clip(m - lo, 0, None), np.clip(hi - m, 0, None)])


def plot_multi_tool(summary: pd.DataFrame, *, by: str = "category", top_k: int = 5, ax=None,
                    intervals: pd.DataFrame | None = None):
    """Grouped bars: ``R@k`` (light) and ``Complete@k`` (dark) per group, one color per scorer.

    Each scorer's light bar holds its dark bar on its right-hand part, so each has room for its
    own error bar: ``intervals`` (columns ``by, scorer, metric, low, high``; without a
    ``metric`` column, the rows are ``Complete@k``'s) draws the 95% interval of each metric on
    its bar. Group labels carry ``n`` (the ``n_requests`` column) when present. The legend
    sits below the axes, never over the bars.
    """
    plt = pyplot()
    data = summary[summary["top_k"] == top_k]
    groups = list(dict.fromkeys(data[by].astype(str)))
    scorers = list(dict.fromkeys(data["scorer"]))
    if ax is None:
        width = min(max(7.5, 1.3 * len(groups)), MAX_FIGURE_INCHES[0])
        _, ax = plt.subplots(figsize=(width, 5))
    width = 0.8 / max(len(scorers), 1)
    x = np.arange(len(groups))
    bar_style = {"capsize": 1.5, "error_kw": {"elinewidth": 0.7, "ecolor": "#333333"}}
    shown = set()
    for j, s in enumerate(scorers):
        g = data[data["scorer"] == s].set_index(data[data["scorer"] == s][by].astype(str))
        r = [g["R@k"].get(k, np.nan) for k in groups]
        c = [g["Complete@k"].get(k, np.nan) for k in groups]
        pos = x - 0.4 + width * (j + 0.5)
        color = scorer_color(s, j)
        r_err = _group_interval(intervals, by, s, "R@k", groups, r)
        c_err = _group_interval(intervals, by, s, "Complete@k", groups, c)
        shown |= {m for m, e in (("R@k", r_err), ("Complete@k", c_err)) if e is not None}
        ax.bar(pos, r, width, color=color, alpha=0.35)
        if r_err is not None:  # on the light part left of the dark bar
            ax.errorbar(pos - 0.3 * width, r, yerr=r_err, fmt="none", capsize=1.5,
                        elinewidth=0.7, ecolor="#777777")
        ax.bar(pos + 0.2 * width, c, width * 0.6, color=color, label=s, yerr=c_err,
               **bar_style)
    names = groups
    if "n_requests" in data.columns:
        n = data.groupby(data[by].astype(str), sort=False)["n_requests"].max()
        names = [f"{g}\n(n={int(n[g])})" for g in groups]
    ax.set_xticks(x, names, rotation=0 if len(groups) <= 6 else 20,
                  ha="center" if len(groups) <= 6 else "right", fontsize=8)
    ax.set_ylabel(f"R@{top_k} (light) and Complete@{top_k} (dark):\nmean over requests "
                  "(fraction)")
    ax.set_xlabel(by.replace("_", " ") + " (n = requests)")
    ax.set_ylim(0, 1.05)
    bars = {"R@k": f"grey bars: R@{top_k}, 95% CI (Wilson's for a 0/1 rate, bootstrap otherwise)",
            "Complete@k": f"black bars: Complete@{top_k}, 95% "
                          f"{interval_method('Complete@k')} CI"}
    ax.legend(title="scorer" + ("".join(f"\n{bars[m]}" for m in ("R@k", "Complete@k")
                                        if m in shown)),
              fontsize=8, title_fontsize=8, loc="upper center",
              bbox_to_anchor=(0.5, -0.2), ncol=len(scorers), frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"Per-request recall vs completeness at top_k={top_k}")
    return ax.figure


#: Stable colours and markers per selection policy (toolsel.policies names).
POLICY_STYLES = {"top_k": ("#444444", "o"), "threshold": ("#1f77b4", "s"),
                 "adaptive_k": ("#ff7f0e", "D"), "token_budget": ("#2ca02c", "^"),
                 "two_stage": ("#9467bd", "v")}


def _k_points(points: pd.DataFrame, x: str, y: str) -> list[tuple[tuple[float, float], str]]:
    """The top-K points of one policy line and their labels, smallest K first."""
    rows = points.sort_values("param", kind="stable").to_dict("records")  # names like R@sent
    return [((float(r[x]), 100 * float(r[y])), f"K={int(r['param'])}") for r in rows]


def _draw_policy(ax, p: pd.DataFrame, x: str, y: str, policy: str, i: int) -> str:
    """One policy's line on a frontier panel: its points, a black ring on the Pareto-best
    ones with their interval when ``p`` has ``<y>_low`` and ``<y>_high``. Returns its colour."""
    color, marker = POLICY_STYLES.get(policy, (f"C{i % 10}", _MARKERS[i % 8]))
    ax.plot(p[x], 100 * p[y], marker=marker, color=color, ms=4, lw=1, alpha=0.85,
            label=policy)
    if "pareto" not in p.columns:
        return color
    best = p[p["pareto"].astype(bool)]
    ax.scatter(best[x], 100 * best[y], s=70, facecolors="none", edgecolors="black",
               linewidths=1.2, zorder=5)
    if {f"{y}_low", f"{y}_high"} <= set(best.columns) and len(best):
        ax.errorbar(best[x], 100 * best[y],
                    yerr=[100 * (best[y] - best[f"{y}_low"]).clip(lower=0),
                          100 * (best[f"{y}_high"] - best[y]).clip(lower=0)],
                    fmt="none", ecolor=color, elinewidth=0.8, capsize=2, alpha=0.8, zorder=4)
    return color


def plot_policy_frontier(summary: pd.DataFrame, *, x: str = "payload_tokens", y: str = "R@sent",
                         by: str | None = "style", log_x: bool = True, axes=None):
    """Recall against payload for every selection policy, one panel per ``by`` group.

    ``summary`` is :func:`toolsel.eval.policies.summarize_policies` output marked by
    :func:`toolsel.eval.policies.frontier` (a boolean ``pareto`` column). Each policy family
    is a line through its configurations (ordered by payload); Pareto-best points get a black
    ring, with its 95% interval when the summary has ``<y>_low`` and ``<y>_high`` columns;
    fixed top-K points are labeled with their K, each label placed by
    :func:`toolsel.report.placement.place_labels` clear of every marker, error bar and other
    label of its panel (a K with no free place is left unlabeled). ``x`` defaults to the mean
    tokens sent (log scale): on large registries every policy's payload reduction is above 99%.
    """
    from .placement import place_labels
    plt = pyplot()
    for col in ("policy", "config", x, y):
        if col not in summary.columns:
            raise KeyError(f"summary has no column {col!r}")
    groups = [(None, summary)] if by is None else list(summary.groupby(by, sort=False))
    if axes is None:
        ncols = min(len(groups), 3)
        nrows = -(-len(groups) // ncols)
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.8 * nrows),
                                 squeeze=False)
        axes = list(axes.ravel())
        for ax in axes[len(groups):]:
            ax.set_visible(False)
    else:
        axes = list(np.atleast_1d(axes).ravel())
        fig = axes[0].figure
    to_label = []
    for ax, (name, g) in zip(axes, groups):
        for i, (policy, p) in enumerate(g.groupby("policy", sort=False)):
            color = _draw_policy(ax, p.sort_values([x, y], kind="stable"), x, y, policy, i)
            if policy == "top_k" and "param" in p.columns:
                to_label.append((ax, _k_points(p, x, y), color))
        if log_x:
            ax.set_xscale("log")
            plain_log_axis(ax.xaxis)
        ax.set_xlabel(("mean tokens sent per request (JSON definitions" if x == "payload_tokens"
                       else x + " (") + (", log scale)" if log_x else ")"))
        ax.set_ylabel(f"{y} (% of required tools sent)" if y == "R@sent" else f"{y} (%)")
        if name is not None:
            ax.set_title(str(name))
    handles, labels = axes[0].get_legend_handles_labels()
    handles.append(plt.Line2D([], [], ls="none", marker="o", mfc="none", mec="black", ms=8))
    with_bars = {f"{y}_low", f"{y}_high"} <= set(summary.columns)
    labels.append("Pareto-best" + (" (bars: 95% CI, Wilson's for a 0/1 rate, bootstrap otherwise)"
                                   if with_bars else ""))
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8,
               bbox_to_anchor=(0.5, 1.0), frameon=False)
    fig.tight_layout()
    for ax, marks, color in to_label:  # once the layout is final: placing measures the page
        place_labels(ax, [xy for xy, _ in marks], [t for _, t in marks], fontsize=7.5,
                     color=color)
    return fig


# ------------------------------------------------------------------------------------------
# figures of the scale benchmark, the style comparison, and multi-turn input cost


def plot_latency_vs_tools(scale: pd.DataFrame, *, ax=None, targets: bool = True,
                          extra: pd.DataFrame | None = None,
                          extra_label: str = "{scorer} (separate benchmark)"):
    """Median ``select`` latency (ms) against registry size, log-log, one line per scorer.

    Error bars span p50 to p95. Dashed lines mark the 1 ms (lexical) and 15 ms (embedding)
    targets. ``extra`` (columns ``scorer, n_tools, p50_ms, p95_ms``, e.g. the committed
    ``default_latency.csv``) adds the rows of scorers the scale table lacks as separate
    markers, labeled with ``extra_label``, so a scorer measured elsewhere is not mistaken for a
    point of the same sweep.
    """
    from ..tables.benchmark import SCALE_SCORERS
    setup_style()
    plt = pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(8.5, 4.5))
    else:
        fig = ax.figure
    for i, scorer in enumerate([s for s in SCALE_SCORERS if s in set(scale.scorer)]):
        d = scale[scale.scorer == scorer].sort_values("n_tools")
        label = "naive loop (select_tools + jaccard hook)" if scorer == "naive" else scorer
        color = "#7f7f7f" if scorer == "naive" else SCORER_COLORS.get(scorer, f"C{i}")
        ax.errorbar(d.n_tools, d.p50_ms, yerr=[np.zeros(len(d)), d.p95_ms - d.p50_ms],
                    marker="o", capsize=3, label=label, color=color,
                    linestyle="--" if scorer == "naive" else "-")
    if extra is not None and len(extra):
        for scorer, d in extra[~extra.scorer.isin(set(scale.scorer))].groupby("scorer",
                                                                              sort=False):
            ax.errorbar(d.n_tools, d.p50_ms, yerr=[np.zeros(len(d)), d.p95_ms - d.p50_ms],
                        marker="*", markersize=12, capsize=3, linestyle="none",
                        color=SCORER_COLORS.get(scorer, "k"),
                        label=extra_label.format(scorer=scorer))
    if targets:
        ax.axhline(1.0, color="k", linestyle=":", linewidth=1, label="target: lexical 1 ms")
        ax.axhline(15.0, color="#9467bd", linestyle=":", linewidth=1,
                   label="target: embedding 15 ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_axis(ax.xaxis)
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("registry size (tools, log scale)")
    ax.set_ylabel("one selection call, median (ms, log scale)")
    ax.set_title("Selection latency vs registry size (bars: p50 to p95)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: no overlap
    return fig


def plot_style_comparison(summary: pd.DataFrame, metrics: Sequence[str] | None = None, *,
                          scorers: Sequence[str] | None = None,
                          ylabel: str = "mean over test requests (fraction, 95% CI)"):
    """One panel per metric (default: :data:`toolsel.tables.compare_styles.METRICS`): a bar per
    style × scorer with its 95% interval.

    Style names are slanted so that long ones do not run into each other.
    """
    from ..tables.compare_styles import METRICS
    plt = pyplot()
    metrics = tuple(METRICS) if metrics is None else metrics
    styles = list(dict.fromkeys(summary["style"]))
    names = list(dict.fromkeys(summary["scorer"])) if scorers is None else list(scorers)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), sharey=True,
                             squeeze=False)
    width = 0.8 / len(names)
    x = np.arange(len(styles))
    for ax, metric in zip(axes[0], metrics):
        part = summary[summary["metric"] == metric].set_index(["style", "scorer"])
        for i, name in enumerate(names):
            rows = [part.loc[(s, name)] for s in styles]
            mean = np.array([r["mean"] for r in rows])
            err = np.array([[m - r["low"] for m, r in zip(mean, rows)],
                            [r["high"] - m for m, r in zip(mean, rows)]])
            ax.bar(x + (i - (len(names) - 1) / 2) * width, mean, width, yerr=err, capsize=2,
                   label=name, color=SCORER_COLORS.get(name, f"C{i}"),
                   edgecolor="black" if name == "default" else None)
        ax.set_xticks(x, styles, rotation=30, ha="right", rotation_mode="anchor")
        ax.set_xlabel("registry style")
        ax.set_title(f"{metric} (bars: 95% {interval_method(metric)} CI)", fontsize=10)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout()
    fig.legend(handles, labels, loc="lower center", ncol=len(names), fontsize=8,
               bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig


def plot_conversation_requests(table: pd.DataFrame, conversation_id: str, *, axes=None,
                               title: str | None = None):
    """One panel per strategy: each request's input tokens stacked by cache treatment.

    Each panel's title gives the conversation's cost under that strategy, in base-input-token
    equivalents (:mod:`toolsel.tables.cost`). The figure is titled with the conversation (``title``, default its id); the legend sits
    below the panels. Colours are :data:`toolsel.report.plots.CACHE_COLORS`.
    """
    plt = pyplot()
    conv = table[table["conversation_id"] == conversation_id]
    groups = list(conv.groupby(["strategy", "policy"], sort=False))
    if axes is None:
        _, axes = plt.subplots(1, len(groups), figsize=(4 * len(groups), 3.8), sharey=True,
                               squeeze=False)
        axes = axes[0]
    for ax, ((strategy, policy), g) in zip(axes, groups):
        x = np.arange(len(g))
        bottom = np.zeros(len(g))
        for col, color in CACHE_COLORS.items():
            vals = g[col].to_numpy(dtype=float)
            ax.bar(x, vals, 0.7, bottom=bottom, color=color, label=CACHE_LABELS[col])
            bottom += vals
        ax.set_xticks(x, [f"t{t}" + (f".{s}" if s else "") for t, s in zip(g["turn"], g["step"])],
                      fontsize=7)
        ax.set_xlabel("request (turn.discover step)")
        ax.set_title(f"{strategy} {policy}".strip() + f"\ncost: {g['cost'].sum():,.0f} "
                     "base-input-token equivalents", fontsize=8.5)
    axes[0].set_ylabel("input tokens per request (tokens)")
    fig = axes[0].figure
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8,
               bbox_to_anchor=(0.5, -0.08), frameon=False)
    fig.suptitle(title or f"Conversation {conversation_id}: input tokens of every request",
                 fontsize=10)
    fig.tight_layout()
    return fig


def plot_cost(totals: pd.DataFrame, *, ax=None, label: str = "strategy"):
    """Stacked bars of uncached / cache-write / cache-read tokens per strategy, with the cost
    (base-token equivalents) as markers on a second axis."""
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4.5))
    names = [f"{r['strategy']}\n{r['policy']}" if r.get("policy") else r["strategy"]
             for _, r in totals.iterrows()] if label == "strategy" else list(totals[label])
    x = np.arange(len(totals))
    bottom = np.zeros(len(totals))
    for col, color in CACHE_COLORS.items():
        vals = totals[col].to_numpy(dtype=float) / 1000
        ax.bar(x, vals, 0.6, bottom=bottom, color=color, label=CACHE_LABELS[col])
        bottom += vals
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("input tokens over all conversations (thousands)")
    ax.set_xlabel("strategy")
    ax2 = ax.twinx()
    ax2.plot(x, totals["cost"].to_numpy(dtype=float) / 1000, "kD", label="cost")
    ax2.set_ylabel("cost (thousand base-input-token equivalents)")
    ax2.set_ylim(0, None)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15),
              ncol=len(l1) + len(l2), frameon=False)
    ax.set_title("Input tokens by cache treatment, and their cost")
    return ax.figure


def plot_cost_split(report: RunsReport, ax=None):
    """Stacked bars of input tokens per task and run: uncached, cache write, cache read.

    Every request of the task is counted. Returns the matplotlib Axes.
    """
    plt = pyplot()

    df = report.tasks
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.45 * len(df) + 1.5))
    labels = [f"{t} · {r}" for t, r in zip(df["task_id"], df["run"])]
    y = np.arange(len(df))[::-1]
    left = np.zeros(len(df))
    parts = [("input_uncached", CACHE_LABELS["uncached"], CACHE_COLORS["uncached"]),
             ("cache_write", CACHE_LABELS["cache_write"], CACHE_COLORS["cache_write"]),
             ("cache_read", CACHE_LABELS["cache_read"], CACHE_COLORS["cache_read"])]
    for col, name, color in parts:
        values = df[col].to_numpy(dtype=float)
        ax.barh(y, values, left=left, color=color, label=name)
        left += values
    ax.set_yticks(y, labels)
    ax.set_xlabel("input tokens, summed over every request of the task (tokens)")
    ax.set_ylabel("task · run")
    # the legend sits right above the bars, under the title, whatever the number of rows
    ax.set_title("Where the input of each recorded run went", pad=24)
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, frameon=False,
              fontsize=8, borderaxespad=0.3)
    return ax
