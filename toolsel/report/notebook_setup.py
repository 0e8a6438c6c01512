"""What every report notebook does first, in one call: :func:`setup`.

Reproducible figures (:func:`toolsel.report.plots.setup_style`: fixed SVG hash salt, sizes),
pandas display options, the notebook's output folder, and room in the kernel's query-vector
cache for every request of a labeled set (:data:`REPORT_QUERY_VECTORS`). Tables are then written with
:func:`toolsel.io.write_table` (atomic, ``\\n`` line ends, 6-decimal floats unless told
otherwise), the one CSV writer of every notebook.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["setup", "REPORT_QUERY_VECTORS"]

#: Entries the kernel's :data:`~toolsel.scorers.embedding.QUERY_CACHE` keeps during a report
#: (a live selector keeps 4,096). A page scores the same requests with several scorers and
#: variants (page 06's ablation: seven), each reading request and clause vectors: with 4,096
#: the 2,500 requests of the 1,600-tool benchmark case (8,347 entries, about 13 MB) evicted
#: one another and page 06 encoded them again, 64.6 s against 42.8 s with room for all.
REPORT_QUERY_VECTORS = 1 << 17


def setup(out_dir: str | Path, *, figures: bool = True, precision: int | None = 3,
          max_colwidth: int | None = None) -> Path:
    """Prepare a notebook run; return its output folder (created if missing).

    Parameters
    ----------
    out_dir : the notebook's ``out_dir`` parameter
    figures : set up matplotlib for reproducible figures (imports matplotlib)
    precision, max_colwidth : pandas display options (``None`` leaves pandas' default)
    """
    import pandas as pd
    if figures:
        from .plots import setup_style
        setup_style()
    if precision is not None:
        pd.set_option("display.precision", precision)
    if max_colwidth is not None:
        pd.set_option("display.max_colwidth", max_colwidth)
    from ..scorers.embedding import QUERY_CACHE
    QUERY_CACHE.maxsize = max(QUERY_CACHE.maxsize, REPORT_QUERY_VECTORS)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out
