"""Executing a notebook with papermill and exporting it to HTML; run timestamps, random
ids and memory addresses scrubbed so reruns are byte-identical."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from .plan import SHOWN_OUT_DIR_ENV
from .site import (FOOT_END, FOOT_START, NAV_END, NAV_START, PAGE_CSS, TITLE_TAG,
                   main_part, page_title)

__all__ = ["execute_notebook", "export_html", "json_spellings"]


def json_spellings(value: str) -> list[str]:
    """How ``value`` can stand inside a notebook's JSON text: as JSON writes it raw (papermill
    keeps non-ASCII characters: the metadata's parameters), ASCII-escaped, and as papermill's
    injected parameters cell spells it (a Python literal escaped with ``unicode_escape``:
    ``"r\\xe9"``). One for an ASCII value; the order is the same for every value."""
    literal = value.encode("unicode_escape").decode("ascii")
    return [json.dumps(value, ensure_ascii=False)[1:-1], json.dumps(value)[1:-1],
            json.dumps(literal)[1:-1]]


def _scrub(path: Path, replace: dict[str, str] | None = None,
           out_dir: str | None = None) -> None:
    """Drop run timestamps and durations that papermill and the kernel write into a notebook.

    ``replace`` maps strings (a staging folder's paths) to what the notebook should show;
    ``out_dir``, when given, is the ``out_dir`` papermill's metadata records (as the injected
    parameters cell shows it: relative to the executed notebook).
    """
    text = path.read_text(encoding="utf-8")
    for old, new in (replace or {}).items():
        for a, b in dict.fromkeys(zip(json_spellings(old), json_spellings(new))):  # each once
            text = text.replace(a, b)
    nb = json.loads(text)
    pm = nb.get("metadata", {}).get("papermill", {})
    for key in ("start_time", "end_time", "duration", "input_path", "output_path"):
        pm.pop(key, None)
    if out_dir is not None and "out_dir" in pm.get("parameters", {}):
        pm["parameters"]["out_dir"] = out_dir
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
    notebooks carry no absolute paths. ``shown_out_dir``: where the outputs will finally
    live (a staging run writes elsewhere first); the executed notebook names that folder.
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
    shown_rel = os.path.relpath(shown, home.resolve())
    replace = {f'out_dir = "{rel}"': f'out_dir = "{shown_rel}"'}
    if shown_out_dir is not None:
        replace.update({rel: os.path.relpath(shown, cwd.resolve()),
                        str(Path(out_dir).resolve()): str(shown)})
    # a user's data files, passed as absolute paths, are shown relative to the executed
    # notebook's folder: the page reads the same from any folder or machine
    data = {v for v in (parameters or {}).values()
            if isinstance(v, str) and os.path.isabs(v) and os.path.exists(v)}
    for path in sorted(data, key=len, reverse=True):
        replace.setdefault(path, os.path.relpath(path, home.resolve()))
    executed.parent.mkdir(parents=True, exist_ok=True)
    # the kernel inherits this: report_link relates paths to the page's final folder
    saved = os.environ.get(SHOWN_OUT_DIR_ENV)
    os.environ[SHOWN_OUT_DIR_ENV] = f"{Path(out_dir).resolve()}{os.pathsep}{shown}"
    try:
        # the kernel app's own log (e.g. "[IPKernelApp] WARNING | Kernel is running
        # over TCP without encryption", about a local socket) is not the user's business;
        # the notebook's warnings and errors still reach its outputs
        pm.execute_notebook(str(source), str(executed), parameters=params, kernel_name=kernel,
                            cwd=str(cwd), progress_bar=False, log_output=False,
                            extra_arguments=["--IPKernelApp.log_level=CRITICAL"])
    finally:
        if saved is None:
            os.environ.pop(SHOWN_OUT_DIR_ENV, None)
        else:
            os.environ[SHOWN_OUT_DIR_ENV] = saved
        if executed.exists():
            _scrub(executed, replace, shown_rel)
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
    start, end = main_part(body)
    body = (body[:start] + "\n" + NAV_START + NAV_END + body[start:end] + FOOT_START
            + FOOT_END + "\n" + body[end:])
    body = TITLE_TAG.sub(lambda _m: f"<title>{escape(title)}</title>", body, count=1)
    body = body.replace("</head>", PAGE_CSS + "</head>", 1)
    body = strip_scripts(body)  # no require.js/MathJax/widget CDN scripts: works offline
    html = Path(html)
    html.write_text(body, encoding="utf-8")
    return html
