"""What the notebooks show and how reports are made: plots, the explorer, the report runner.

The report package by job: :mod:`~toolsel.report.plan` (the notebook convention, a user's
data checked, what each notebook is passed), :mod:`~toolsel.report.cutoffs` (cut-off helpers
the notebooks import), :mod:`~toolsel.report.execute` (papermill, scrubbing, the HTML
export), :mod:`~toolsel.report.site` (index and navigation), :mod:`~toolsel.report.readme`
(the READMEs) and :mod:`~toolsel.report.runner` (a whole report into a folder).
``toolsel.report`` itself exposes the most used of them.
"""

from .execute import execute_notebook, export_html
from .plan import NOTEBOOK_GLOB, find_notebooks, notebook_title
from .readme import headline_table, render_readme, write_readme
from .runner import NotebookRun, generate_reports

__all__ = ["NOTEBOOK_GLOB", "find_notebooks", "notebook_title", "execute_notebook",
           "export_html", "headline_table", "render_readme", "write_readme", "NotebookRun",
           "generate_reports"]
