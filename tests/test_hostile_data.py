"""Issue 25, "also found": text from data in figures and terminals, odd arguments, caches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from toolsel.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def _env(**extra) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1", **extra)


# --------------------------------------------------------------------------------------------
# figures: no mathtext from data, bounded labels and sizes


def test_dollar_text_and_huge_labels_draw_in_bounded_figures(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from toolsel.eval.cost import plot_conversation_requests
    from toolsel.report.plots import MAX_LABEL_CHARS, plot_multi_tool, save_figure
    cats = ["$\\frac{$", "$x_{$", "c" * 60_000]
    summary = pd.DataFrame([{"top_k": 5, "category": c, "scorer": s, "R@k": 0.5,
                             "Complete@k": 0.25, "n_requests": 3}
                            for c in cats for s in ("bm25", "$x_{$")])
    fig = plot_multi_tool(summary, by="category", top_k=5)
    png, _svg = save_figure(fig, tmp_path, "hostile")
    with Image.open(png) as im:
        w, h = im.size
    assert w * h < 20_000_000, (w, h)  # not 354 megapixels
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "$\\frac{$" in labels[0]  # shown as typed
    assert max(len(line) for lab in labels for line in lab.split("\n")) <= MAX_LABEL_CHARS
    assert labels[2].split("\n")[0].endswith("…")
    import matplotlib.pyplot as plt
    plt.close("all")
    # a conversation title from the data (notebook 08)
    table = pd.DataFrame([{"conversation_id": "$\\frac{$", "strategy": "$x_{$", "policy": "",
                           "turn": 1, "step": 0, "uncached": 10, "cache_write": 0,
                           "cache_read": 0, "cost": 10.0}])
    fig = plot_conversation_requests(table, "$\\frac{$")
    assert "$\\frac{$" in fig._suptitle.get_text()
    save_figure(fig, tmp_path, "conversation")
    plt.close("all")
