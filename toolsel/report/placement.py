"""Labels placed clear of what a figure draws: markers, error bars and other labels.

A label printed at a fixed offset from its point lands on a neighbour's marker or error bar
as soon as points crowd. :func:`place_labels` instead tries a short, fixed list of offsets
around each point (nearest first) and keeps the first whose text box, measured by the
renderer in display coordinates, touches no marker box, no error-bar segment, no label placed
before it and stays inside the axes; a label with no free offset is left out rather than
drawn over data. The order of offsets and points is fixed, so the same figure gets the same
labels on every run.

:func:`marker_boxes` and :func:`bar_boxes` are the obstacles, read from the artists already
drawn in an axes (call them after the layout is final: a later ``tight_layout`` moves points
relative to one another and to the labels).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["marker_boxes", "bar_boxes", "line_paths", "place_labels", "OFFSETS"]

#: Distances (points, from the point to the nearest edge of the label) tried in turn.
RINGS = (3.0, 6.0, 9.5, 13.0, 17.0, 22.0, 28.0)
#: From this distance on (points), a thin leader line joins the label to its point.
LEADER_FROM = 9.0
#: Directions tried at each distance, in order: right, below right, above right, left,
#: below left, above left, below, above; with the text alignment that puts the label's near
#: edge (or corner) at the offset.
DIRECTIONS = ((1, 0, "left", "center"), (1, -1, "left", "top"), (1, 1, "left", "bottom"),
              (-1, 0, "right", "center"), (-1, -1, "right", "top"),
              (-1, 1, "right", "bottom"), (0, -1, "center", "top"),
              (0, 1, "center", "bottom"))
#: Every candidate ``(dx, dy, ha, va)`` in points, in the order tried.
OFFSETS = tuple((dx * r / (np.sqrt(2) if dx and dy else 1.0),
                 dy * r / (np.sqrt(2) if dx and dy else 1.0), ha, va)
                for r in RINGS for dx, dy, ha, va in DIRECTIONS)

_NO_MARKER = (None, "", " ", "None", "none")


def _px(fig, points: float) -> float:
    return points * fig.dpi / 72.0


def _box(x0, y0, x1, y1):
    from matplotlib.transforms import Bbox
    return Bbox([[min(x0, x1), min(y0, y1)], [max(x0, x1), max(y0, y1)]])


def marker_boxes(ax) -> list:
    """Display boxes of every marker drawn in ``ax``: the markers of its lines (error-bar
    caps included) and of its scatter collections, each as wide as the marker plus its edge."""
    from matplotlib.collections import PathCollection
    fig = ax.figure
    boxes = []
    for line in ax.get_lines():
        if not line.get_visible() or line.get_marker() in _NO_MARKER:
            continue
        half = _px(fig, (line.get_markersize() + line.get_markeredgewidth()) / 2)
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), float))
        boxes += [_box(x - half, y - half, x + half, y + half)
                  for x, y in xy if np.isfinite(x) and np.isfinite(y)]
    for coll in ax.collections:
        if not coll.get_visible() or not isinstance(coll, PathCollection):
            continue
        sizes = np.sqrt(np.asarray(coll.get_sizes(), float))  # s is the area in points²
        widths = np.asarray(coll.get_linewidths(), float)
        xy = coll.get_offset_transform().transform(np.asarray(coll.get_offsets(), float))
        for i, (x, y) in enumerate(xy):
            if np.isfinite(x) and np.isfinite(y) and len(sizes):
                half = _px(fig, (sizes[i % len(sizes)]
                                 + (widths[i % len(widths)] if len(widths) else 0)) / 2)
                boxes.append(_box(x - half, y - half, x + half, y + half))
    return boxes


def bar_boxes(ax) -> list:
    """Display boxes of every error-bar segment drawn in ``ax`` (the line collections
    ``errorbar`` draws), each widened by its line width."""
    from matplotlib.collections import LineCollection
    fig = ax.figure
    boxes = []
    for coll in ax.collections:
        if not coll.get_visible() or not isinstance(coll, LineCollection):
            continue
        widths = np.asarray(coll.get_linewidths(), float)
        for i, seg in enumerate(coll.get_segments()):
            xy = coll.get_transform().transform(np.asarray(seg, float))
            xy = xy[np.isfinite(xy).all(axis=1)]
            if not len(xy):
                continue
            pad = _px(fig, (widths[i % len(widths)] if len(widths) else 1.0) / 2)
            boxes.append(_box(xy[:, 0].min() - pad, xy[:, 1].min() - pad,
                              xy[:, 0].max() + pad, xy[:, 1].max() + pad))
    return boxes


def line_paths(ax) -> list:
    """The display paths of the lines drawn in ``ax`` (the curves joining points): a label
    is moved off them when a free place exists, but may cross one when none does."""
    return [line.get_transform().transform_path(line.get_path()) for line in ax.get_lines()
            if line.get_visible() and line.get_linestyle() not in ("None", "", " ", "none")
            and len(line.get_xydata()) > 1]


def _free(box, blocked: Sequence, frame) -> bool:
    return (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
            and box.y1 <= frame.y1 and not any(box.overlaps(b) for b in blocked))


def place_labels(ax, points: Sequence[tuple[float, float]], texts: Sequence[str], *,
                 renderer=None, margin: float = 1.5, **text_kwargs) -> list:
    """Annotate each data point ``points[i]`` of ``ax`` with ``texts[i]``, clear of what is
    drawn; return the annotations placed (a label with no free place is left out).

    ``margin`` (points) is kept between a label and any marker, error bar or other label.
    ``text_kwargs`` go to :meth:`~matplotlib.axes.Axes.annotate` (``fontsize``, ``color``).
    Call it once the figure's layout is final; it draws the figure once to measure text.
    """
    from matplotlib.text import Text
    fig = ax.figure
    if renderer is None:
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
    pad = _px(fig, margin)
    marks = [b.padded(pad) for b in marker_boxes(ax)]
    blocked = marks + [b.padded(pad) for b in bar_boxes(ax)]
    paths = line_paths(ax)
    frame = ax.get_window_extent(renderer).padded(-1)
    placed = []
    for (x, y), text in zip(points, texts):
        label = ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 0),
                            **text_kwargs)
        best = _best_offset(label, renderer, blocked, frame, paths)
        if best is None:
            label.remove()
            continue
        label.remove()
        dx, dy, ha, va = best
        far = np.hypot(dx, dy) >= LEADER_FROM
        label = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy),
                            ha=ha, va=va, **text_kwargs,
                            **({"arrowprops": _leader(ax, (x, y), marks, text_kwargs)}
                               if far else {}))
        label.update_positions(renderer)
        blocked.append(Text.get_window_extent(label, renderer).padded(pad))
        placed.append(label)
    return placed


def _best_offset(label, renderer, blocked, frame, paths):
    """The first offset of :data:`OFFSETS` where ``label`` is free (:func:`_free`); a free
    offset at most one step farther that crosses no line is taken instead when the first
    crosses one. ``None`` when no offset is free."""
    from matplotlib.text import Text
    first = None
    for dx, dy, ha, va in OFFSETS:
        reach = np.hypot(dx, dy)
        if first is not None and reach > first[0] + 4.0:
            break
        label.set_position((dx, dy))
        label.set_horizontalalignment(ha)
        label.set_verticalalignment(va)
        label.update_positions(renderer)
        box = Text.get_window_extent(label, renderer)  # the text alone, not its leader line
        if not _free(box, blocked, frame):
            continue
        if not any(p.intersects_bbox(box, filled=False) for p in paths):
            return dx, dy, ha, va
        first = first or (reach, (dx, dy, ha, va))
    return None if first is None else first[1]


def _leader(ax, xy, marks, text_kwargs) -> dict:
    """A thin line from a label placed far from its point to just outside the point's own
    marker (the largest marker box around the point)."""
    x, y = ax.transData.transform(xy)
    own = [b for b in marks if b.contains(x, y)]
    reach = max((max(b.width, b.height) / 2 for b in own), default=0.0) * 72.0 / ax.figure.dpi
    return {"arrowstyle": "-", "lw": 0.5, "color": text_kwargs.get("color", "0.3"),
            "shrinkA": 0.5, "shrinkB": reach, "alpha": 0.8}
