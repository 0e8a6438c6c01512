"""What every report notebook does first, in one call: :func:`setup`.

Reproducible figures (:func:`toolsel.report.plots.setup_style`: fixed SVG hash salt, sizes),
pandas display options, and the notebook's output folder. Tables are then written with
:func:`toolsel.io.write_table` (atomic, ``\\n`` line ends, 6-decimal floats unless told
otherwise), the one CSV writer of every notebook.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["setup"]


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
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out
