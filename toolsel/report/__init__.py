"""What the notebooks show and how reports are made: plots, the explorer, the report runner.

``toolsel.report`` itself exposes the runner (:mod:`toolsel.report.runner`): execute the
notebooks with papermill, export HTML, write ``reports/README.md``.
"""

from .runner import (NOTEBOOK_GLOB, NotebookRun, execute_notebook, export_html, find_notebooks,
                     generate_reports, headline_table, notebook_title, render_readme,
                     write_readme)

__all__ = ["NOTEBOOK_GLOB", "find_notebooks", "notebook_title", "execute_notebook",
           "export_html", "headline_table", "render_readme", "write_readme", "NotebookRun",
           "generate_reports"]
