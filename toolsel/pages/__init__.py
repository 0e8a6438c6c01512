"""Report pages: one module per page, holding its tables and its words together.

A page module (``toolsel/pages/<slug>.py``, the page of notebook ``NN_<slug>``) has

- a pure function from the page's data (registry, labeled requests, ...) to its tables,
  plain DataFrames that the notebook writes as CSVs;
- a function from those tables to the page's sentences (:class:`toolsel.report.claims.Claim`:
  each number cites the CSV cell it is read from, and each sentence is chosen by a condition on
  the tables, so it stays true on any registry);
- ``skip_reason``-style functions saying, in one sentence, why a section cannot run on the data.

The notebook calls them, writes the tables, displays the sentences and draws the figures; its
Markdown cells say what is measured and how, never what came out. Pages are tested without
papermill on small data (``tests/test_pages.py``).

:data:`PAGES` is the one registry of pages: notebook number → module name. Adding a page is its
module here, its notebook ``notebooks/NN_<slug>.py`` (with the paired ``.ipynb``) and one entry.
"""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

__all__ = ["PAGES", "page_module"]

#: Notebook number → page module (``toolsel.pages.<module>``); the notebook is ``NN_<module>``.
PAGES: dict[str, str] = {
    "00": "overview",
    "01": "recall_vs_payload",
    "02": "misses",
    "03": "escape_hatch",
    "04": "explorer",
    "05": "scale_benchmark",
    "06": "default_scorer",
    "07": "discovery",
    "08": "conversations",
    "09": "description_repair",
    "10": "integrations",
    "11": "recorded_runs",
    "12": "selection_policies",
    "13": "labels",
}


def page_module(number: str) -> ModuleType:
    """The page module of notebook ``number`` (``"13"`` or ``"13_labels"``)."""
    key = str(number)[:2]
    if key not in PAGES:
        known = ", ".join(f"{n}_{m}" for n, m in sorted(PAGES.items()))
        raise KeyError(f"no page module for notebook {number!r}; known pages: {known}")
    return import_module(f"{__name__}.{PAGES[key]}")
