"""Regenerate ``reports/`` from the notebooks: execute, export HTML, write ``reports/README.md``.

For every ``notebooks/[0-9][0-9]_*.ipynb`` (found by glob, so a new notebook appears without
any change here):

1. execute it with papermill (kernel ``python3``, working directory ``notebooks/``) into
   ``reports/NN_slug.ipynb``, passing ``out_dir`` so its tables and figures land in
   ``reports/NN_slug/``; run timestamps are scrubbed from the executed copy;
2. export ``reports/NN_slug.html`` with the code hidden (nbconvert ``--no-input``);
3. write ``reports/README.md``: the headline table, then per notebook its title (the first
   markdown heading), links to the HTML and executed notebook, its figures and its CSVs.

The README is a pure function of the files present: no dates, no timings, sorted listings;
rerunning on the same code and data rewrites it byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["NOTEBOOK_GLOB", "find_notebooks", "notebook_title", "execute_notebook",
           "export_html", "headline_table", "render_readme", "write_readme", "NotebookRun",
           "generate_reports"]

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


def _scrub(path: Path) -> None:
    """Drop run timestamps and durations that papermill and the kernel write into a notebook."""
    nb = json.loads(path.read_text(encoding="utf-8"))
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
                     cwd: str | Path | None = None) -> Path:
    """Run ``source`` with papermill into ``executed``; its ``out_dir`` parameter is set.

    ``out_dir`` is passed relative to ``cwd`` (default: the notebook's folder) so executed
    notebooks carry no absolute paths. Raises papermill's execution error if a cell fails
    (the partly executed notebook is still written).
    """
    import papermill as pm
    source, executed = Path(source), Path(executed)
    cwd = Path(cwd) if cwd is not None else source.parent
    params = {"out_dir": os.path.relpath(Path(out_dir).resolve(), cwd.resolve())}
    params.update(parameters or {})
    executed.parent.mkdir(parents=True, exist_ok=True)
    try:
        pm.execute_notebook(str(source), str(executed), parameters=params, kernel_name=kernel,
                            cwd=str(cwd), progress_bar=False, log_output=False)
    finally:
        if executed.exists():
            _scrub(executed)
    return executed


def export_html(executed: str | Path, html: str | Path) -> Path:
    """Export an executed notebook to HTML with the code hidden (outputs and markdown only)."""
    import nbformat
    from nbconvert import HTMLExporter
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True,
                            exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nbformat.read(str(executed), as_version=4))
    # nbconvert draws a uuid4 per widget output element: number them for identical reruns
    seen: dict[str, str] = {}
    body = _UUID.sub(lambda m: seen.setdefault(m.group(0), f"widget-output-{len(seen) + 1}"),
                     body)
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
    else ``sweep/summary.csv``. One row per scorer at ``top_k`` (or the largest K swept).
    """
    rep = Path(reports_dir)
    candidates = sorted(rep.glob("01_*/summary.csv")) + [rep / "sweep" / "summary.csv"]
    src = next((p for p in candidates if p.exists()), None)
    if src is None:
        return None
    s = pd.read_csv(src)
    ks = sorted(s["top_k"].unique())
    k = top_k if top_k in ks else ks[-1]
    iv = None
    if (src.parent / "intervals.csv").exists():
        iv = pd.read_csv(src.parent / "intervals.csv")
    k_max = ks[-1]

    def ci(scorer: str, metric: str) -> str:
        if iv is None:
            return ""
        r = iv[(iv.scorer == scorer) & (iv.top_k == k) & (iv.metric == metric)]
        return "" if r.empty else f" [{_pct(r['low'].iloc[0])}, {_pct(r['high'].iloc[0])}]"

    head = (f"| scorer | R@{k} [95% CI] | Complete@{k} [95% CI] | MRR | payload chars @{k} | "
            f"payload reduction @{k} | R@{k_max} |")
    lines = [head, "| --- | --- | --- | --- | --- | --- | --- |"]
    for scorer in dict.fromkeys(s["scorer"]):
        g = s[s.scorer == scorer].set_index("top_k")
        r = g.loc[k]
        lines.append(f"| {scorer} | {_pct(r['R@k'])}{ci(scorer, 'R@k')} | "
                     f"{_pct(r['Complete@k'])}{ci(scorer, 'Complete@k')} | {r['MRR']:.3f} | "
                     f"{r['payload_chars']:,.0f} | {_pct(r['payload_reduction'])} | "
                     f"{_pct(g.loc[k_max, 'R@k'])} |")
    n = int(s["n_queries"].iloc[0])
    return "\n".join(lines), f"`{src.relative_to(rep).as_posix()}`, {n} queries"


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
    path = Path(reports_dir) / "README.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_readme(reports_dir, notebooks), encoding="utf-8")
    return path


@dataclass
class NotebookRun:
    """What happened to one notebook: its executed copy, HTML, seconds taken, error if any."""

    source: Path
    executed: Path
    html: Path | None
    seconds: float
    error: str | None = None


def generate_reports(notebooks_dir: str | Path = "notebooks", out_dir: str | Path = "reports",
                     *, only: Iterable[str] | None = None, html: bool = True,
                     kernel: str = "python3", on_done=None) -> list[NotebookRun]:
    """Execute the notebooks into ``out_dir``, export HTML, and rewrite the README.

    A failing notebook does not stop the others; its error is in the returned
    :class:`NotebookRun`. ``on_done(run)`` is called after each notebook (for progress).
    The README always lists every source notebook.
    """
    nb_dir = Path(notebooks_dir)
    rep = Path(out_dir)
    rep.mkdir(parents=True, exist_ok=True)
    runs = []
    for src in find_notebooks(nb_dir, only):
        t0 = time.perf_counter()
        executed = rep / src.name
        run = NotebookRun(src, executed, None, 0.0)
        try:
            execute_notebook(src, executed, rep / src.stem, kernel=kernel, cwd=nb_dir)
            if html:
                run.html = export_html(executed, rep / f"{src.stem}.html")
        except Exception as exc:  # report and go on with the other notebooks
            lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
            run.error = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
        run.seconds = time.perf_counter() - t0
        runs.append(run)
        if on_done is not None:
            on_done(run)
    write_readme(rep, find_notebooks(nb_dir))
    return runs
