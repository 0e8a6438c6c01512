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
  (:func:`toolsel.tables.replication.is_article_benchmark`) and print a one-line note instead.

A run writes into ``OUT/.toolsel-staging/`` and swaps the finished set in (:func:`_commit`):
a killed run leaves the previous set whole, and its leftovers are cleaned (or, if it was
killed while swapping, the swap finished) at the start of the next run.

The README, the index and the pages' navigation are pure functions of the files present: no
dates, no timings, sorted listings; rerunning on the same code and data rewrites them byte
for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..io import write_text

__all__ = ["NOTEBOOK_GLOB", "DATA_PARAMS", "DEFAULT_NEEDS", "find_notebooks", "notebook_title",
           "notebook_needs", "notebook_parameters", "UserData", "check_user_data",
           "distinct_top_k", "headline_k", "notebook_plan", "execute_notebook", "export_html",
           "headline_table", "render_readme", "write_readme", "NotebookRun",
           "generate_reports", "STAGING", "page_title", "notebook_summary", "page_headings",
           "link_pages", "render_index", "write_index"]

NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def find_notebooks(notebooks_dir: str | Path, only: Iterable[str] | None = None) -> list[Path]:
    """Source notebooks ``NN_slug.ipynb``, sorted; ``only`` keeps those whose NN is listed."""
    nb_dir = Path(notebooks_dir)
    if not nb_dir.is_dir():
        raise FileNotFoundError(f"notebooks folder not found: {nb_dir}")
    found = sorted(nb_dir.glob(NOTEBOOK_GLOB))
    if only is not None:
        wanted = {str(o).strip().zfill(2) for o in only}
        found = [p for p in found if p.name[:2] in wanted]
        missing = wanted - {p.name[:2] for p in found}
        if missing:
            raise FileNotFoundError(f"no notebook numbered {', '.join(sorted(missing))} in "
                                    f"{nb_dir} (expected names like 01_slug.ipynb)")
    return found


def notebook_title(path: str | Path) -> str:
    """The text of the first markdown heading of a notebook, else its slug."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        m = _HEADING.search(src)
        if m:
            return m.group(1).strip()
    return path.stem.split("_", 1)[-1].replace("_", " ")


# --------------------------------------------------------------------------------------------
# the notebook convention

#: Data parameters a notebook may take, as paths (``runs`` is a folder, the others files).
DATA_PARAMS = ("registry", "queries", "requests", "conversations", "runs")
#: What a notebook without ``toolsel`` metadata needs.
DEFAULT_NEEDS = ("registry", "queries")


def _read_nb(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def notebook_needs(path: str | Path) -> tuple[str, ...]:
    """The data parameters a notebook cannot run without (its ``toolsel.needs`` metadata)."""
    meta = _read_nb(Path(path)).get("metadata", {}).get("toolsel")
    if meta is None or "needs" not in meta:
        return DEFAULT_NEEDS
    needs = meta["needs"]
    bad = [n for n in needs if n not in DATA_PARAMS] if isinstance(needs, list) else [needs]
    if bad:
        raise ValueError(f"{Path(path).name}: metadata toolsel.needs has {bad!r}; expected a "
                         f"list of {', '.join(DATA_PARAMS)}")
    return tuple(needs)


def notebook_parameters(path: str | Path) -> dict[str, str]:
    """The names the notebook's ``parameters`` cell declares, with their annotated types."""
    import papermill as pm
    return {name: p.get("inferred_type_name", "None")
            for name, p in pm.inspect_notebook(str(path)).items()}


@dataclass(frozen=True)
class UserData:
    """A user's data for the suite: absolute paths, and optional scorers and cut-offs."""

    registry: Path
    queries: Path | None = None
    requests: Path | None = None
    conversations: Path | None = None
    runs: Path | None = None
    scorers: tuple[str, ...] | None = None
    top_k: tuple[int, ...] | None = None

    def given(self) -> dict[str, Path]:
        """The data parameters given, name → path."""
        return {n: getattr(self, n) for n in DATA_PARAMS if getattr(self, n) is not None}


def check_user_data(data: UserData) -> dict[str, object]:
    """Load and validate everything in ``data`` before any notebook runs.

    Returns the loaded objects by parameter name. Raises :class:`~toolsel.data.DataError`
    (a file's problem, with its path and line) or ``ValueError`` (an unknown scorer, a bad
    cut-off): one line each, for the CLI to print.
    """
    from ..data import DataError, load_queries, load_registry, suggest_names
    from ..scorers.base import available_scorers
    for name, path in data.given().items():
        folder = name == "runs"
        if not path.exists():
            raise DataError(f"--{name}: no such {'folder or file' if folder else 'file'}",
                            path=path)
        if not folder and not path.is_file():
            raise DataError(f"--{name}: not a file", path=path)
    if data.scorers is not None:
        known = available_scorers()
        if not data.scorers:
            raise ValueError("--scorers: give at least one scorer")
        for sc in data.scorers:
            if sc not in known:
                raise ValueError(f"--scorers: unknown scorer {sc!r}"
                                 f"{suggest_names(sc, known)}; available: {', '.join(known)}")
    if data.top_k is not None:
        if not data.top_k or any(not isinstance(k, int) or isinstance(k, bool) or k < 1
                                 for k in data.top_k):
            raise ValueError(f"--top-k: expected integers >= 1, got {list(data.top_k)!r}")
    loaded: dict[str, object] = {}
    reg = loaded["registry"] = load_registry(data.registry)
    if not len(reg):
        raise DataError("the registry has no tools", path=data.registry)
    for name in ("queries", "requests"):
        if getattr(data, name) is not None:
            loaded[name] = load_queries(getattr(data, name), reg)
            if not loaded[name]:
                raise DataError(f"--{name}: no labeled queries in the file",
                                path=getattr(data, name))
    if data.conversations is not None:
        from ..datasets import load_conversations
        loaded["conversations"] = load_conversations(data.conversations, reg)
    if data.runs is not None:
        from ..tables.runs import load_runs
        loaded["runs"] = load_runs(data.runs, registry=reg)
    return loaded


def distinct_top_k(top_k: Iterable[int], n_candidates: int) -> tuple[list[int], list[int]]:
    """Cut-offs that send different tool sets: ``(kept, dropped)``, both sorted.

    A registry with ``n_candidates`` tools competing for K (always-include tools excluded)
    sends all of them at every K >= ``n_candidates``: the smallest such K is kept (the
    "every tool" row), the larger ones are dropped rather than reported as duplicate rows.
    """
    from ..eval.sweep import effective_top_k  # one rule, shared with the sweep
    return effective_top_k(top_k, n_candidates)


def top_k_note(kept: Sequence[int], dropped: Sequence[int], n_candidates: int) -> str:
    """One line saying which cut-offs send every tool, or ``""`` when none does."""
    full = [k for k in kept if k >= n_candidates]
    if not full:
        return ""
    note = (f"K={full[0]} sends every one of the {n_candidates} candidate tools (payload "
            "reduction 0 besides always-include)")
    if dropped:
        note += (f"; K={', '.join(map(str, dropped))} would send the same and "
                 f"{'is' if len(dropped) == 1 else 'are'} not repeated")
    return note + "."


def headline_k(top_k: Iterable[int], n_candidates: int | None = None, prefer: int = 10) -> int:
    """The one cut-off a single-K section shows: ``prefer`` if given, else the largest K that
    still filters (below ``n_candidates``), else the smallest."""
    ks = sorted(set(int(k) for k in top_k))
    if not ks:
        raise ValueError("no cut-off given")
    if prefer in ks and (n_candidates is None or prefer < n_candidates):
        return prefer
    filtering = [k for k in ks if n_candidates is None or k < n_candidates]
    return filtering[-1] if filtering else ks[0]


@dataclass
class PlannedNotebook:
    """A notebook as the runner will run it: parameters to pass, or why it is skipped."""

    source: Path
    parameters: dict = field(default_factory=dict)
    skip: str | None = None


def _missing_flag(name: str) -> str:
    return f"no --{name} {'folder' if name == 'runs' else 'file'}"


def notebook_plan(notebooks: Sequence[Path], data: UserData | None) -> list[PlannedNotebook]:
    """What to pass each notebook, or the one-line reason it is skipped on ``data``.

    ``data=None``: the project's own reports, every notebook with its defaults.
    """
    if data is None:
        return [PlannedNotebook(Path(nb)) for nb in notebooks]
    given = data.given()
    plan = []
    for nb in notebooks:
        nb = Path(nb)
        needs = notebook_needs(nb)
        if not needs:
            plan.append(PlannedNotebook(nb, skip="reports on the project's own data only"))
            continue
        missing = [n for n in needs if n not in given]
        if missing:
            plan.append(PlannedNotebook(nb, skip=", ".join(_missing_flag(n) for n in missing)))
            continue
        declared = notebook_parameters(nb)
        params: dict = {n: (str(given[n]) if n in given else "")
                        for n in DATA_PARAMS if n in declared}
        if data.scorers is not None and "scorers" in declared:
            params["scorers"] = list(data.scorers)
        if data.top_k is not None and "top_k" in declared:
            params["top_k"] = (list(data.top_k) if "list" in declared["top_k"]
                               else headline_k(data.top_k))
        plan.append(PlannedNotebook(nb, params))
    return plan


def _scrub(path: Path, replace: dict[str, str] | None = None) -> None:
    """Drop run timestamps and durations that papermill and the kernel write into a notebook.

    ``replace`` maps strings (a staging folder's paths) to what the notebook should show.
    """
    text = path.read_text(encoding="utf-8")
    for old, new in (replace or {}).items():
        text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    nb = json.loads(text)
    pm = nb.get("metadata", {}).get("papermill", {})
    for key in ("start_time", "end_time", "duration", "input_path", "output_path"):
        pm.pop(key, None)
    for cell in nb.get("cells", []):
        meta = cell.get("metadata", {})
        meta.pop("execution", None)
        if "injected-parameters" in meta.get("tags", []):
            cell["id"] = "injected-parameters"  # papermill draws a random id each run
        cpm = meta.get("papermill")
        if isinstance(cpm, dict):
            for key in ("start_time", "end_time", "duration"):
                cpm.pop(key, None)
    nb = _renumber_widgets(nb)
    # pandas Styler draws a random table id ("T_1a2b3") per render
    seen: dict[str, str] = {}
    text = _STYLER_ID.sub(lambda m: seen.setdefault(m.group(0), f"T_toolsel{len(seen) + 1}"),
                          json.dumps(nb, ensure_ascii=False))
    # reprs of objects without a display form carry their memory address
    text = _ADDRESS.sub(r"<\1>", text)
    nb = json.loads(text)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


_WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_MODEL_REF = re.compile(r"IPY_MODEL_([0-9a-f]{32})")
_STYLER_ID = re.compile(r"(?<![0-9A-Za-z])T_[0-9a-f]{5}(?![0-9a-f])")
_ADDRESS = re.compile(r"<([A-Za-z_][^<>\n]*?) at 0x[0-9a-f]+>")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _renumber_widgets(nb: dict) -> dict:
    """Replace ipywidgets' random model ids with ids numbered in widget-tree order.

    ipywidgets draws a uuid4 per widget on every run; numbering them from the displayed
    widgets down through their ``IPY_MODEL_`` references makes reruns byte-identical.
    """
    state = nb.get("metadata", {}).get("widgets", {}).get(_WIDGET_STATE, {}).get("state")
    if not state:
        return nb
    queue = [out.get("data", {}).get(_WIDGET_MIME, {}).get("model_id")
             for cell in nb.get("cells", []) for out in cell.get("outputs", [])]
    order: list[str] = []
    while queue:
        mid = queue.pop(0)
        if not mid or mid in order or mid not in state:
            continue
        order.append(mid)
        queue.extend(_MODEL_REF.findall(json.dumps(state[mid], sort_keys=True)))
    rest = sorted((m for m in state if m not in order),
                  key=lambda m: _MODEL_REF.sub("", json.dumps(state[m], sort_keys=True)))
    mapping = {old: f"{i + 1:032x}" for i, old in enumerate(order + rest)}
    text = json.dumps(nb, ensure_ascii=False)
    text = re.sub(r"[0-9a-f]{32}", lambda m: mapping.get(m.group(0), m.group(0)), text)
    nb = json.loads(text)
    wstate = nb["metadata"]["widgets"][_WIDGET_STATE]
    wstate["state"] = dict(sorted(wstate["state"].items()))
    return nb


def execute_notebook(source: str | Path, executed: str | Path, out_dir: str | Path, *,
                     parameters: dict | None = None, kernel: str = "python3",
                     cwd: str | Path | None = None, shown_out_dir: str | Path | None = None
                     ) -> Path:
    """Run ``source`` with papermill into ``executed``; its ``out_dir`` parameter is set.

    ``out_dir`` is passed relative to ``cwd`` (default: the notebook's folder) so executed
    notebooks carry no absolute paths; the executed copy then names it relative to its own
    folder, so that running it again from there writes beside it. ``shown_out_dir``: where
    the outputs will finally live (a staging run writes elsewhere first); the executed
    notebook names that folder.
    Raises papermill's execution error if a cell fails (the partly executed notebook is
    still written).
    """
    import papermill as pm
    source, executed = Path(source), Path(executed)
    cwd = Path(cwd) if cwd is not None else source.parent
    rel = os.path.relpath(Path(out_dir).resolve(), cwd.resolve())
    params = {"out_dir": rel}
    params.update(parameters or {})
    # the executed copy names out_dir relative to its own folder, so re-running it from there
    # writes beside it (and not into a folder relative to notebooks/)
    shown = Path(shown_out_dir if shown_out_dir is not None else out_dir).resolve()
    home = shown.parent / os.path.relpath(executed.parent.resolve(), Path(out_dir).resolve().parent)
    replace = {f'out_dir = "{rel}"': f'out_dir = "{os.path.relpath(shown, home.resolve())}"'}
    if shown_out_dir is not None:
        replace.update({rel: os.path.relpath(shown, cwd.resolve()),
                        str(Path(out_dir).resolve()): str(shown)})
    executed.parent.mkdir(parents=True, exist_ok=True)
    try:
        pm.execute_notebook(str(source), str(executed), parameters=params, kernel_name=kernel,
                            cwd=str(cwd), progress_bar=False, log_output=False)
    finally:
        if executed.exists():
            _scrub(executed, replace)
    return executed


def export_html(executed: str | Path, html: str | Path) -> Path:
    """Export an executed notebook to HTML with the code hidden (outputs and markdown only).

    Markdown cells and HTML/Markdown/SVG outputs are sanitized
    (:func:`~toolsel.report.html.sanitize_html`): no script or event handler from the data
    can run in the page; JavaScript outputs are dropped. Widgets still render.

    The page's ``<title>`` is the notebook's first heading (plain text); empty navigation
    blocks at the top and bottom of its content are filled by :func:`link_pages` (back to
    the index, previous/next report, contents), with CSS keeping tables and images within
    the page width.
    """
    import nbformat
    from nbconvert import HTMLExporter

    from .html import fill_image_alt, sanitize_html
    from .offline import strip_scripts
    from html import escape
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, sanitize_html=True,
                            filters={"clean_html": sanitize_html})
    nb = nbformat.read(str(executed), as_version=4)
    nb.metadata.pop("title", None)  # the page title is the notebook's first heading
    title = page_title(executed)
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = fill_image_alt(body, nb)  # the figures' own alt text (save_figure(alt=...))
    # nbconvert draws a uuid4 per widget output element: number them for identical reruns
    seen: dict[str, str] = {}
    body = _UUID.sub(lambda m: seen.setdefault(m.group(0), f"widget-output-{len(seen) + 1}"),
                     body)
    # navigation blocks, filled by link_pages once the set of pages is known
    start, end = _main_part(body)
    body = (body[:start] + "\n" + _NAV_START + _NAV_END + body[start:end] + _FOOT_START
            + _FOOT_END + "\n" + body[end:])
    body = _TITLE_TAG.sub(lambda _m: f"<title>{escape(title)}</title>", body, count=1)
    body = body.replace("</head>", _PAGE_CSS + "</head>", 1)
    body = strip_scripts(body)  # no require.js/MathJax/widget CDN scripts: works offline
    html = Path(html)
    html.write_text(body, encoding="utf-8")
    return html


# --------------------------------------------------------------------------------------------
# reports/README.md


def _pct(v: float) -> str:
    return "" if pd.isna(v) else f"{100 * v:.1f}%"


def headline_table(reports_dir: str | Path, top_k: int = 10) -> tuple[str, str] | None:
    """The headline markdown table and where it came from, or ``None`` if no summary exists.

    Reads ``01_*/summary.csv`` (with ``01_*/intervals.csv`` for 95% intervals when present),
    else ``sweep/summary.csv``. One row per scorer at ``top_k`` (or, when it was not swept or
    sends every tool, the largest K swept that still filters).
    """
    parts = _headline_parts(reports_dir, top_k)
    if parts is None:
        return None
    from . import markdown as md
    header, rows, src, n = parts
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * len(header)) + " |"]
    lines += ["| " + " | ".join([md.escape(r[0])] + r[1:]) + " |" for r in rows]
    return "\n".join(lines), f"`{src}`, {n} queries"


def _links(paths: Sequence[Path], base: Path) -> str:
    return ", ".join(f"[{p.name}]({p.relative_to(base).as_posix()})" for p in paths)


def render_readme(reports_dir: str | Path, notebooks: Sequence[Path]) -> str:
    """The text of ``reports/README.md`` for these source notebooks and the files present."""
    rep = Path(reports_dir)
    out = ["# toolsel reports", "",
           "Generated by `toolsel report` (run by `make report`): every notebook in "
           "`notebooks/` executed with papermill, exported to HTML with the code hidden, with "
           "its figures (PNG and SVG) and tables (CSV). Do not edit anything here by hand; "
           "change the package, data or notebooks and regenerate.", ""]
    from .explorer_page import explorer_links
    out += explorer_links(rep, "md")
    head = headline_table(rep)
    if head is not None:
        table, src = head
        out += ["## Headline", "", f"Recall against payload on the labeled set (from {src}; "
                "payload = name + description characters sent per query, reduction against "
                "sending every tool).", "", table, ""]
        fig = sorted(rep.glob("01_*/recall_vs_payload.png"))
        if fig:
            out += [f"![R@k against payload reduction]({fig[0].relative_to(rep).as_posix()})",
                    ""]
    out += ["## Notebooks", ""]
    seen_dirs = set()
    for nb in notebooks:
        stem = nb.stem
        title = notebook_title(nb)
        out.append(f"### {stem[:2]} · {title}")
        out.append("")
        links = []
        if (rep / f"{stem}.html").exists():
            links.append(f"[report (HTML)]({stem}.html)")
        if (rep / f"{stem}.ipynb").exists():
            links.append(f"[executed notebook]({stem}.ipynb)")
        source = f"source: [`notebooks/{nb.name}`](../notebooks/{nb.name})"
        if nb.with_suffix(".py").exists():
            source += f" ([py](../notebooks/{stem}.py))"
        links.append(source)
        out.append(" · ".join(links))
        art = rep / stem
        seen_dirs.add(art.name)
        if art.is_dir():
            pngs = sorted(art.rglob("*.png"))
            csvs = sorted(art.rglob("*.csv"))
            if pngs:
                figs = [f"[{p.stem}]({p.relative_to(rep).as_posix()})"
                        + (f" ([svg]({p.with_suffix('.svg').relative_to(rep).as_posix()}))"
                           if p.with_suffix(".svg").exists() else "") for p in pngs]
                out += ["", "Figures: " + ", ".join(figs)]
            if csvs:
                out += ["", "Tables: " + _links(csvs, rep)]
        out.append("")
    others = sorted(d for d in rep.iterdir() if d.is_dir() and d.name not in seen_dirs
                    and not d.name.startswith(".") and any(d.rglob("*.csv")))
    if others:
        out += ["## Other tables", ""]
        for d in others:
            out.append(f"- `{d.name}/`: " + _links(sorted(d.rglob("*.csv")), rep))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def write_readme(reports_dir: str | Path, notebooks: Sequence[Path]) -> Path:
    """Write ``reports/README.md`` (see :func:`render_readme`)."""
    Path(reports_dir).mkdir(parents=True, exist_ok=True)  # rendering lists it
    return write_text(render_readme(reports_dir, notebooks), Path(reports_dir) / "README.md")


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
    from .explorer_page import write_report_explorer
    write_report_explorer(rep, nb_dir, data)  # explorer.html, before the index links it
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


# --------------------------------------------------------------------------------------------
# the README of a report on a user's data


def render_user_readme(reports_dir: str | Path, runs: Sequence[NotebookRun],
                       data: UserData) -> str:
    """The text of ``OUT/README.md`` for a report on a user's data: what ran, what not, why."""
    from . import markdown as md
    rep = Path(reports_dir)
    out = ["# toolsel report on your data", "",
           "Generated by `toolsel report --registry ...`: the notebooks of the suite that "
           "your data supports, executed with papermill, exported to HTML with the code "
           "hidden, with their figures (PNG and SVG) and tables (CSV). Regenerate rather "
           "than edit.", "", "## Data", ""]
    for name, path in data.given().items():
        out.append(f"- {name}: {md.code(path)}")
    out.append(f"- scorers: {', '.join(map(md.escape, data.scorers)) if data.scorers else 'each notebook’s defaults'}")
    out.append(f"- top_k: {', '.join(map(str, data.top_k)) if data.top_k else 'each notebook’s defaults'}")
    out.append("")
    from .explorer_page import explorer_links
    out += explorer_links(rep, "md")
    head = headline_table(rep)
    if head is not None:
        table, src = head
        out += ["## Headline", "", f"Recall against payload (from {src}).", "", table, ""]
    ran = [r for r in runs if r.skipped is None]
    skipped = [r for r in runs if r.skipped is not None]
    out += ["## Notebooks run", ""]
    for r in ran:
        stem = r.source.stem
        links = []
        if (rep / f"{stem}.html").exists():
            links.append(f"[report (HTML)]({stem}.html)")
        if (rep / f"{stem}.ipynb").exists():
            links.append(f"[executed notebook]({stem}.ipynb)")
        status = f" — FAILED: {md.escape(r.error)}" if r.error else ""
        out.append(f"- **{stem}** {notebook_title(r.source)}{status}: "
                   + (" · ".join(links) or "no output"))
        art = rep / stem
        if art.is_dir():
            files = sorted(p for p in art.rglob("*") if p.suffix in (".csv", ".png"))
            if files:
                out.append("  - " + _links(files, rep))
    if not ran:
        out.append("- none")
    out += ["", "## Notebooks skipped", ""]
    out += [f"- {r.source.stem}: skipped, {md.escape(r.skipped)}" for r in skipped] or ["- none"]
    return "\n".join(out).rstrip("\n") + "\n"


def write_user_readme(reports_dir: str | Path, runs: Sequence[NotebookRun],
                      data: UserData) -> Path:
    """Write ``OUT/README.md`` for a user's data (see :func:`render_user_readme`)."""
    return write_text(render_user_readme(reports_dir, runs, data),
                      Path(reports_dir) / "README.md")


# --------------------------------------------------------------------------------------------
# pages: titles, navigation, and the entry page (index.html)

_MD_MARKUP = re.compile(r"[`*]|(?<!\w)_|_(?!\w)|\\(?=[^\w\s])")
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")
_PAGE_GLOB = "[0-9][0-9]_*.html"
_NAV_START, _NAV_END = "<!-- toolsel:nav -->", "<!-- /toolsel:nav -->"
_FOOT_START, _FOOT_END = "<!-- toolsel:foot -->", "<!-- /toolsel:foot -->"
_TITLE_TAG = re.compile(r"<title>(.*?)</title>", re.S)
_H2 = re.compile(r'<h2 id="([^"<>]+)"[^>]*>(.*?)</h2>', re.S)
_TAG = re.compile(r"<[^>]*>")

# page furniture: navigation bar, contents, and tables that stay within the page width
_PAGE_CSS = """<style type="text/css">
nav.toolsel-nav { font: 14px/1.5 system-ui, sans-serif; margin: 0 0 1.2em; padding: .6em 1em;
  border-bottom: 1px solid #ccc; background: #f6f8fa; }
nav.toolsel-nav a { color: #0550ae; text-decoration: none; }
nav.toolsel-nav a:hover { text-decoration: underline; }
nav.toolsel-nav .toolsel-pn { display: flex; justify-content: space-between; gap: 1em; }
nav.toolsel-nav ol { margin: .3em 0 0; padding-left: 1.4em; columns: 2; column-gap: 2em; }
nav.toolsel-foot { border-top: 1px solid #ccc; border-bottom: 0; margin: 2em 0 0; }
.jp-RenderedHTMLCommon table { max-width: 100%; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { overflow-wrap: break-word; }
.jp-RenderedHTMLCommon img { max-width: 100%; height: auto; }
</style>
"""


def _plain(markdown_text: str) -> str:
    """Markdown inline text as plain text: code ticks, emphasis and escapes dropped."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown_text)  # links: their text
    text = re.sub(r"<[^>]*>", "", text)  # inline HTML: a title is text
    return re.sub(r"\s+", " ", _MD_MARKUP.sub("", text)).strip()


def page_title(path: str | Path) -> str:
    """A notebook's title as plain text (its first heading without Markdown markup)."""
    return _plain(notebook_title(path))


def notebook_summary(path: str | Path) -> str:
    """One line saying what a notebook reports, as plain text.

    Its ``toolsel.summary`` metadata if set; else the part of its title after the first colon;
    else the first sentence of the paragraph under its title.
    """
    nb = _read_nb(Path(path))
    given = nb.get("metadata", {}).get("toolsel", {}).get("summary")
    if given:
        return _plain(str(given))
    title = page_title(path)
    if ":" in title:
        rest = title.split(":", 1)[1].strip()
        return rest[:1].upper() + rest[1:]
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        paras = [p for p in re.split(r"\n\s*\n", _HEADING.sub("", src)) if p.strip()]
        if paras:
            para = _plain(paras[0])
            m = _SENTENCE.match(para)
            return m.group(1) if m else para
    return ""


def _nav_html(index: str, prev: tuple[str, str] | None, nxt: tuple[str, str] | None,
              contents: Sequence[tuple[str, str]] = (), foot: bool = False) -> str:
    """The navigation bar: back to the index, previous/next report, the page's contents."""
    from html import escape

    def link(target: tuple[str, str] | None, arrow: str) -> str:
        if target is None:
            return "<span></span>"
        href, title = target
        label = f"← {escape(title)}" if arrow == "prev" else f"{escape(title)} →"
        return (f'<a href="{escape(href)}" rel="{arrow}" title="{escape(title)}">'
                f"{label}</a>")

    parts = [f'<nav class="toolsel-nav{" toolsel-foot" if foot else ""}">',
             f'<div class="toolsel-pn">{link(prev, "prev")}'
             f'<a href="{escape(index)}">All reports</a>{link(nxt, "next")}</div>']
    if contents:
        parts.append("<b>On this page</b><ol>" + "".join(
            f'<li><a href="#{escape(anchor)}">{escape(text)}</a></li>'
            for anchor, text in contents) + "</ol>")
    parts.append("</nav>")
    return "".join(parts)


def _main_part(page: str) -> tuple[int, int]:
    """Start and end of the page's ``<main>`` content (the only part holding notebook text;
    widget state, the one raw data block, comes after ``</main>``)."""
    start = page.find("<main>")
    end = page.rfind("</main>")
    if start < 0 or end < start:
        raise ValueError("not an nbconvert page: no <main> element")
    return start + len("<main>"), end


def page_headings(page: str) -> list[tuple[str, str]]:
    """The ``(id, text)`` of every second-level heading in a page's content, in order."""
    from html import unescape
    start, end = _main_part(page)
    body = page[start:end]
    for region in ((_NAV_START, _NAV_END), (_FOOT_START, _FOOT_END)):
        a, b = body.find(region[0]), body.find(region[1])
        if 0 <= a < b:
            body = body[:a] + body[b:]
    out = []
    for anchor, inner in _H2.findall(body):
        text = unescape(_TAG.sub("", re.sub(r'<a class="anchor-link".*?</a>', "", inner)))
        text = re.sub(r"\s+", " ", text).strip().rstrip("¶").strip()
        if text:
            out.append((unescape(anchor), text))
    return out


def link_pages(reports_dir: str | Path, index: str = "index.html") -> list[Path]:
    """Give every ``NN_slug.html`` in ``reports_dir`` its navigation: back to ``index``, the
    previous and next report present (by number), and a contents list of its headings.

    Rewrites only the navigation blocks :func:`export_html` left in each page (a pure
    function of the pages present: rerunning changes nothing). Returns the pages.
    """
    from html import unescape
    rep = Path(reports_dir)
    pages = sorted(p for p in rep.glob(_PAGE_GLOB) if ".failed" not in p.name)
    texts = {p: p.read_text(encoding="utf-8") for p in pages}
    titles = {}
    for p, text in texts.items():
        m = _TITLE_TAG.search(text)
        titles[p] = unescape(m.group(1)).strip() if m else p.stem
    for i, p in enumerate(pages):
        text = texts[p]
        if _NAV_START not in text:
            continue
        prev = (pages[i - 1].name, f"{pages[i - 1].stem[:2]} · {titles[pages[i - 1]]}") \
            if i > 0 else None
        nxt = (pages[i + 1].name, f"{pages[i + 1].stem[:2]} · {titles[pages[i + 1]]}") \
            if i + 1 < len(pages) else None
        new = text
        start, end = _main_part(new)
        head, body, tail = new[:start], new[start:end], new[end:]
        top = _nav_html(index, prev, nxt, page_headings(text))
        bottom = _nav_html(index, prev, nxt, foot=True)
        body = re.sub(re.escape(_NAV_START) + ".*?" + re.escape(_NAV_END),
                      lambda _m: _NAV_START + top + _NAV_END, body, count=1, flags=re.S)
        body = re.sub(re.escape(_FOOT_START) + ".*?" + re.escape(_FOOT_END),
                      lambda _m: _FOOT_START + bottom + _FOOT_END, body, count=1, flags=re.S)
        new = head + body + tail
        if new != text:
            write_text(new, p)
    return pages


_INDEX_CSS = """
body { font: 15px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
  margin: 0 auto; max-width: 1100px; padding: 1.5em 2em 3em; }
h1 { font-size: 1.8em; margin: .2em 0 .4em; }
h2 { font-size: 1.3em; margin: 1.6em 0 .5em; border-bottom: 1px solid #d0d7de; padding-bottom: .2em; }
p.intro { max-width: 52em; }
a { color: #0550ae; text-decoration: none; } a:hover { text-decoration: underline; }
table { border-collapse: collapse; margin: .6em 0; max-width: 100%; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: .3em .6em; overflow-wrap: break-word; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.source { color: #57606a; font-size: .9em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #57606a; font-size: .9em; }
.figs { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1.5em; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: 1em; }
.card { border: 1px solid #d0d7de; border-radius: 6px; padding: .8em 1em; background: #fff; }
.card h3 { font-size: 1.05em; margin: 0 0 .3em; }
.card p { margin: .2em 0 .5em; color: #424a53; }
.card .links { font-size: .9em; }
.card.missing { background: #f6f8fa; color: #57606a; }
.failed { color: #cf222e; }
ul.skipped li { margin: .2em 0; }
"""


def _headline_parts(reports_dir: str | Path, top_k: int = 10):
    """The headline table as ``(header, rows, source, n_queries)`` of plain text cells, or
    ``None`` (see :func:`headline_table`)."""
    rep = Path(reports_dir)
    candidates = sorted(rep.glob("01_*/summary.csv")) + [rep / "sweep" / "summary.csv"]
    src = next((p for p in candidates if p.exists()), None)
    if src is None:
        return None
    s = pd.read_csv(src)
    ks = sorted(s["top_k"].unique())
    filtering = [x for x in ks if (s.loc[s.top_k == x, "payload_reduction"] > 0).any()]
    k = top_k if top_k in filtering else (filtering or ks)[-1]
    iv = None
    if (src.parent / "intervals.csv").exists():
        iv = pd.read_csv(src.parent / "intervals.csv")
    k_max = ks[-1]

    def ci(scorer: str, metric: str) -> str:
        if iv is None:
            return ""
        r = iv[(iv.scorer == scorer) & (iv.top_k == k) & (iv.metric == metric)]
        return "" if r.empty else (f" [{100 * r['low'].iloc[0]:.1f}, "
                                   f"{100 * r['high'].iloc[0]:.1f}]")

    header = ["scorer", f"R@{k} [95% CI]", f"Complete@{k} [95% CI]", "MRR",
              f"payload chars @{k}", f"payload reduction @{k}", f"R@{k_max}"]
    rows = []
    for scorer in dict.fromkeys(s["scorer"]):
        g = s[s.scorer == scorer].set_index("top_k")
        r = g.loc[k]
        rows.append([str(scorer), f"{_pct(r['R@k'])}{ci(scorer, 'R@k')}",
                     f"{_pct(r['Complete@k'])}{ci(scorer, 'Complete@k')}", f"{r['MRR']:.3f}",
                     f"{r['payload_chars']:,.0f}", _pct(r["payload_reduction"]),
                     _pct(g.loc[k_max, "R@k"])])
    return header, rows, src.relative_to(rep).as_posix(), int(s["n_queries"].iloc[0])


def render_index(reports_dir: str | Path, notebooks: Sequence[Path], *,
                 runs: Sequence[NotebookRun] = (), title: str = "toolsel reports",
                 intro: str | None = None) -> str:
    """The text of ``index.html``: the entry page of a report folder.

    Title and intro; the headline table (as in the README); the recall-vs-payload figure (01)
    and the per-style chart (06) when present; a card per notebook (title, one-line summary,
    links to its HTML page, executed notebook and table folder, as far as they exist); the
    notebooks skipped on this data with their reason. One self-contained page (inline CSS,
    no script, no remote resource); every data string escaped; no dates.
    """
    from html import escape
    rep = Path(reports_dir)
    by_stem = {r.source.stem: r for r in runs}
    if intro is None:
        intro = ("How well dynamic tool selection keeps the tools an agent needs while "
                 "sending fewer of them: each scorer's recall (R@k, Complete@k) against the "
                 "payload sent, why the rest are missed, what the discover escape hatch "
                 "recovers, and how the picture holds on larger registries, whole "
                 "conversations and recorded runs. Every page below is a notebook executed "
                 "by toolsel report, with its tables as CSV.")
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8"/>',
           '<meta content="width=device-width, initial-scale=1.0" name="viewport"/>',
           f"<title>{escape(title)}</title>", f"<style>{_INDEX_CSS}</style>", "</head>",
           "<body>", f"<h1>{escape(title)}</h1>", f'<p class="intro">{escape(intro)}</p>']
    from .explorer_page import explorer_links
    out += explorer_links(rep, "html")
    head = _headline_parts(rep)
    if head is not None:
        header, rows, src, n = head
        out += ["<h2>Headline</h2>",
                f'<p class="source">From <a href="{escape(src)}">{escape(src)}</a>, {n} '
                "queries: share of required tools sent (R@k) and of queries with every "
                "required tool sent (Complete@k), with 95% intervals where computed (as the "
                "report's intervals.csv says: a bootstrap over queries, Wilson's for "
                "Complete@k); MRR; payload = name + description characters sent per "
                "query, reduction against sending every tool.</p>", "<table><thead><tr>"
                + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>"]
        for row in rows:
            out.append("<tr>" + f"<td>{escape(row[0])}</td>"
                       + "".join(f'<td class="num">{escape(c)}</td>' for c in row[1:])
                       + "</tr>")
        out.append("</tbody></table>")
    figs = [(sorted(rep.glob("01_*/recall_vs_payload.png")),
             "R@k against payload reduction, one curve per scorer (notebook 01)"),
            (sorted(rep.glob("06_*/style_comparison.png")),
             "Each scorer per registry style (notebook 06)")]
    figs = [(found[0], caption) for found, caption in figs if found]
    if figs:
        out.append('<h2>Figures</h2><div class="figs">')
        for path, caption in figs:
            rel = path.relative_to(rep).as_posix()
            out.append(f'<figure><a href="{escape(rel)}"><img src="{escape(rel)}" '
                       f'alt="{escape(caption)}"/></a><figcaption>{escape(caption)}'
                       "</figcaption></figure>")
        out.append("</div>")
    out.append('<h2>Reports</h2><div class="cards">')
    skipped = []
    for nb in notebooks:
        stem = nb.stem
        run = by_stem.get(stem)
        if run is not None and run.skipped is not None:
            skipped.append((stem, page_title(nb), run.skipped))
            continue
        links = []
        if (rep / f"{stem}.html").exists():
            links.append(f'<a href="{escape(stem)}.html">report</a>')
        if (rep / f"{stem}.ipynb").exists():
            links.append(f'<a href="{escape(stem)}.ipynb">executed notebook</a>')
        art = rep / stem
        if art.is_dir():
            n_csv = sum(1 for _ in art.rglob("*.csv"))
            if n_csv:
                links.append(f'<a href="{escape(stem)}/">{n_csv} table'
                             f'{"s" if n_csv != 1 else ""} (CSV)</a>')
        failed = run is not None and run.error
        full = page_title(nb)  # "Topic: what it shows": the card shows the topic
        heading = escape(f"{stem[:2]} · {full.split(':', 1)[0].strip() or full}")
        if (rep / f"{stem}.html").exists():
            heading = f'<a href="{escape(stem)}.html">{heading}</a>'
        card = [f'<div class="card{"" if links else " missing"}"><h3>{heading}</h3>',
                f"<p>{escape(_card_summary(rep / stem, nb))}</p>"]
        if failed:
            card.append(f'<p class="failed">This run failed: {escape(run.error)} (the '
                        "previous outputs, if any, are kept).</p>")
        card.append('<div class="links">' + (" · ".join(links) or "not generated yet")
                    + "</div></div>")
        out.append("".join(card))
    out.append("</div>")
    if skipped:
        out.append("<h2>Skipped on this data</h2><ul class=\"skipped\">")
        out += [f"<li><b>{escape(stem[:2])} · {escape(title_)}</b>: {escape(reason)}</li>"
                for stem, title_, reason in skipped]
        out.append("</ul>")
    others = [p for p in (rep / "README.md",) if p.exists()]
    if others:
        out.append('<p class="source">The same in Markdown: <a href="README.md">README.md</a>, '
                   "with every figure and table listed.</p>")
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"


def _card_summary(page_dir: Path, nb: Path) -> str:
    """What the page says ran on this data (:func:`toolsel.report.claims.page_summary`),
    else the notebook's own one-line summary."""
    from .claims import page_summary
    return page_summary(page_dir) or notebook_summary(nb)


def write_index(reports_dir: str | Path, notebooks: Sequence[Path], *,
                runs: Sequence[NotebookRun] = (), title: str = "toolsel reports",
                intro: str | None = None) -> Path:
    """Write ``index.html`` (:func:`render_index`) and link the pages to it
    (:func:`link_pages`)."""
    path = Path(reports_dir) / "index.html"
    path.parent.mkdir(parents=True, exist_ok=True)  # rendering lists it
    write_text(render_index(reports_dir, notebooks, runs=runs, title=title, intro=intro),
               path)
    link_pages(reports_dir, index=path.name)
    return path
