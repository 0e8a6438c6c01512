"""Run the notebook suite: the project's own ``reports/``, or a report on a user's data.

For every ``notebooks/[0-9][0-9]_*.ipynb`` (found by glob, so a new notebook appears without
any change here):

1. execute it with papermill (kernel ``python3``, working directory ``notebooks/``) into
   ``OUT/NN_slug.ipynb``, passing ``out_dir`` so its tables and figures land in
   ``OUT/NN_slug/``; run timestamps are scrubbed from the executed copy;
2. export ``OUT/NN_slug.html`` with the code hidden (nbconvert ``--no-input``), every
   Markdown cell and HTML output sanitized (:func:`toolsel.report.html.sanitize_html`);
3. write ``OUT/README.md``: the headline table, then per notebook its title (the first
   markdown heading), links to the HTML and executed notebook, its figures and its CSVs
   (and, for a user's data, which notebooks were skipped and why);
4. write ``OUT/index.html``, the entry page (:func:`render_index`: the headline table, the
   recall-vs-payload and per-style figures, a card per report, the notebooks skipped), and
   give every page its navigation (:func:`link_pages`: back to the index, previous/next
   report, the page's contents).

**The notebook convention** (every notebook follows it, so the runner can hand it a user's
data without knowing what it computes):

- its ``parameters`` cell takes its data as paths, with the bundled data as defaults:
  ``registry: str`` and, as relevant, ``queries``, ``requests``, ``conversations`` (files)
  and ``runs`` (a folder) — :data:`DATA_PARAMS`; plus ``scorers: list[str]``,
  ``top_k: list[int]`` and ``out_dir: str = "../reports/NN_slug"``;
- its notebook metadata says which of those it cannot run without:
  ``"toolsel": {"needs": ["registry", "queries"]}`` (jupytext keeps it in the ``.py``
  header). No ``toolsel`` metadata means :data:`DEFAULT_NEEDS`; ``"needs": []`` means the
  notebook reports on the project's own data only (skipped on a user's data);
- on a user's data (:class:`UserData`) the runner runs a notebook only when every need is
  given, and passes the absolute path of each data parameter the notebook declares, ``""``
  for one the user did not give (the notebook must then skip what uses it: it is not a
  need), and ``scorers``/``top_k`` when given (a notebook declaring ``top_k: int`` gets one
  cut-off, :func:`headline_k`). Sections tied to the article's data check for it
  (:func:`toolsel.eval.replication.is_article_benchmark`) and print a one-line note instead.

A run writes into ``OUT/.toolsel-staging/`` and swaps the finished set in (:func:`_commit`):
a killed run leaves the previous set whole, and its leftovers are cleaned (or, if it was
killed while swapping, the swap finished) at the start of the next run.

The README, the index and the pages' navigation are pure functions of the files present: no
dates, no timings, sorted listings; rerunning on the same code and data rewrites them byte
for byte.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .execute import execute_notebook, export_html
from .plan import PlannedNotebook, UserData, check_user_data, find_notebooks, notebook_plan
from .readme import write_readme, write_user_readme
from .site import write_index

__all__ = ["NotebookRun", "generate_reports", "STAGING"]


@dataclass
class NotebookRun:
    """What happened to one notebook: its executed copy, HTML, seconds taken, error if any.

    ``skipped``: why it did not run on the user's data (``executed`` then does not exist).
    """

    source: Path
    executed: Path
    html: Path | None
    seconds: float
    error: str | None = None
    skipped: str | None = None


# --------------------------------------------------------------------------------------------
# staging: a run's outputs replace the previous ones as a set

#: The folder under OUT that a run writes into before swapping its outputs in.
STAGING = ".toolsel-staging"
_COMMIT = ".commit"  # in the staging folder: the run finished; lists what to swap in/remove
_OLD = ".old"  # in the staging folder: replaced folders, deleted once the swap is done


def _commit(stage: Path, out: Path) -> None:
    """Swap the staged outputs into ``out`` following the staging folder's commit list.

    Idempotent: a swap killed half way is finished by calling this again (each entry is
    either still staged, or already in place).
    """
    entries = (stage / _COMMIT).read_text(encoding="utf-8").splitlines()
    old = stage / _OLD
    old.mkdir(exist_ok=True)
    for entry in entries:
        remove, name = entry.startswith("-"), entry.lstrip("-")
        new, dest = stage / name, out / name
        if remove or new.exists():
            if dest.is_dir() and not dest.is_symlink():
                trash = old / name
                if trash.exists():
                    shutil.rmtree(trash)
                os.replace(dest, trash)
            elif remove and dest.exists():
                dest.unlink()
        if not remove and new.exists():
            os.replace(new, dest)  # atomic per file; a folder lands whole
    shutil.rmtree(stage)


def _recover(out: Path) -> None:
    """Clean up after a killed run: finish its swap if it got that far, else drop its files."""
    stage = out / STAGING
    if (stage / _COMMIT).exists():
        _commit(stage, out)
    elif stage.exists():
        shutil.rmtree(stage)


def _run_one(planned: PlannedNotebook, stage: Path, out: Path, nb_dir: Path, *, html: bool,
             kernel: str) -> tuple[NotebookRun, list[str]]:
    """Execute one notebook into ``stage``; the run and its commit entries."""
    src = planned.source
    t0 = time.perf_counter()
    run = NotebookRun(src, out / src.name, None, 0.0)
    names = [src.name, f"{src.stem}.html", src.stem]
    entries: list[str] = []
    try:
        execute_notebook(src, stage / src.name, stage / src.stem, kernel=kernel, cwd=nb_dir,
                         parameters=planned.parameters, shown_out_dir=out / src.stem)
        if html:
            export_html(stage / src.name, stage / f"{src.stem}.html")
            run.html = out / f"{src.stem}.html"
        entries = [n if (stage / n).exists() else f"-{n}" for n in names]
        entries.append(f"-{src.stem}.failed.ipynb")
    except Exception as exc:  # report and go on with the other notebooks
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        run.error = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
        # the previous outputs stay; the failed notebook is kept beside them to debug
        failed = stage / f"{src.stem}.failed.ipynb"
        if (stage / src.name).exists():
            os.replace(stage / src.name, failed)
            entries = [failed.name]
            run.executed = out / failed.name
    run.seconds = time.perf_counter() - t0
    return run, entries


def generate_reports(notebooks_dir: str | Path = "notebooks", out_dir: str | Path = "reports",
                     *, only: Iterable[str] | None = None, html: bool = True,
                     kernel: str = "python3", on_done=None, data: UserData | None = None
                     ) -> list[NotebookRun]:
    """Execute the notebooks into ``out_dir``, export HTML, and rewrite the README.

    ``data=None`` regenerates the project's own reports (every notebook on its defaults).
    With a :class:`UserData` (checked first, :func:`check_user_data`), each notebook runs on
    it if its needs are given, else is skipped with a reason; notebooks' previous outputs
    not produced by this run are removed (the folder is the report of that data).

    A failing notebook does not stop the others; its error is in the returned
    :class:`NotebookRun` and its previous outputs stay. Outputs are swapped in as a set once
    every notebook has run. ``on_done(run)`` is called after each notebook (for progress).
    """
    nb_dir = Path(notebooks_dir)
    rep = Path(out_dir)
    notebooks = find_notebooks(nb_dir, only)
    if data is not None:
        check_user_data(data)
    plan = notebook_plan(notebooks, data)
    rep.mkdir(parents=True, exist_ok=True)
    _recover(rep)
    stage = rep / STAGING
    stage.mkdir()
    runs, entries = [], []
    for planned in plan:
        if planned.skip is not None:
            src = planned.source
            run = NotebookRun(src, rep / src.name, None, 0.0, skipped=planned.skip)
            entries += [f"-{src.name}", f"-{src.stem}.html", f"-{src.stem}",
                        f"-{src.stem}.failed.ipynb"]
        else:
            run, new = _run_one(planned, stage, rep, nb_dir, html=html, kernel=kernel)
            entries += new
        runs.append(run)
        if on_done is not None:
            on_done(run)
    if data is not None and only is None:  # a user's report: drop outputs of other notebooks
        ours = {p.source.stem for p in plan}
        entries += [f"-{p.name}" for p in sorted(rep.glob("[0-9][0-9]_*"))
                    if p.name.split(".")[0] not in ours]
    (stage / _COMMIT).write_text("\n".join(entries) + "\n", encoding="utf-8")
    _commit(stage, rep)
    if data is None:
        write_readme(rep, find_notebooks(nb_dir))
        write_index(rep, find_notebooks(nb_dir), runs=runs)
    else:
        write_user_readme(rep, runs, data)
        write_index(rep, [r.source for r in runs], runs=runs,
                    title="toolsel report on your data",
                    intro=_user_intro(data))
    return runs


def _user_intro(data: UserData) -> str:
    """The index page's intro for a report on a user's data (file names only, no paths)."""
    given = ", ".join(f"{name} {path.name}" for name, path in data.given().items())
    return ("The notebooks of the toolsel suite that this data supports, executed by toolsel "
            f"report on it ({given}; scorers: "
            + (", ".join(data.scorers) if data.scorers else "each notebook's defaults")
            + "; top_k: " + (", ".join(map(str, data.top_k)) if data.top_k
                             else "each notebook's defaults")
            + "). Each card links the page, its executed notebook and its tables (CSV); "
            "notebooks this data cannot feed are listed at the end with the reason.")
