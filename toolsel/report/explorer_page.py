"""``explorer.html``: one self-contained page to explore every labeled query, offline.

:func:`render_explorer` puts the data of :func:`toolsel.report.explorer_data.explorer_data`
into a page with the explorer's own script and style inlined (``toolsel/report/assets``,
shipped with the package): no network request, no kernel, no third-party code. The data sits
in a ``<script type="application/json">`` block with ``<``, ``>``, ``&`` and the two JavaScript
line separators written as ``\\u`` escapes, so no tool name or query can end the block; the
script inserts every data string with ``textContent``. A Content-Security-Policy allows only
the page's own inline script (by hash) and style, and no connection, frame or remote image.

:func:`write_explorer` loads a registry and labeled queries and writes the page;
:func:`write_report_explorer` is what ``toolsel report`` calls for a report folder.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import warnings
from collections.abc import Iterable
from html import escape
from importlib import resources
from pathlib import Path

from ..io import write_text
from .explorer_data import DEFAULT_DEPTH, explorer_data
from .plan import find_notebooks

__all__ = ["render_explorer", "write_explorer", "write_report_explorer", "embed_json",
           "explorer_links",
           "EXPLORER_PAGE", "report_explorer_inputs"]

#: The file name of the explorer in a report folder.
EXPLORER_PAGE = "explorer.html"
_MAX_DEPTH = 100


def _asset(name: str) -> str:
    return resources.files("toolsel.report").joinpath("assets", name).read_text(encoding="utf-8")


def embed_json(obj) -> str:
    """``obj`` as JSON safe inside an HTML ``<script>`` element (no ``</script>``, no ``<!--``,
    no U+2028/U+2029)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def render_explorer(data: dict) -> str:
    """The text of ``explorer.html`` for :func:`~toolsel.report.explorer_data.explorer_data`
    output."""
    script = _asset("explorer.js")
    css = _asset("explorer.css")
    if "</script" in script.lower() or "</style" in css.lower():
        raise ValueError("the explorer's assets must not close their own element")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    csp = ("default-src 'none'; script-src 'sha256-" + digest + "'; style-src 'unsafe-inline'; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    tools, queries, scorers = data["tools"], data["queries"], data["scorers"]
    n_tools, n_q = len(tools["name"]), len(queries["id"])
    always = [tools["name"][i] for i in data["always"]]
    title = data.get("title") or "toolsel explorer"
    source = data.get("source") or {}
    src = "; ".join(f"{k} {v}" for k, v in source.items())
    if always:
        many = len(always) != 1
        always_note = (f"{len(always)} tool{'s' if many else ''} {'are' if many else 'is'} "
                       f"always included ({', '.join(always)}): sent with every request "
                       "outside K, as toolsel's Selector sends them, and never ranked. Each column lists them under its header; the sent "
                       "counts and payloads include them; a required tool that is always "
                       "included is left out of R@K and Complete@K.")
    else:
        always_note = ("No tool is sent outside K: every tool competes for the K places, as "
                       "in the report's sweep tables (toolsel's Selector sends the tools a "
                       "registry marks \"always_include\": true outside K).")
    intro = (f"{n_q:,} labeled queries ranked against {n_tools:,} tools by "
             f"{len(scorers)} scorer{'s' if len(scorers) != 1 else ''} "
             f"({', '.join(s['name'] for s in scorers)}), computed by the toolsel package"
             + (f" from {src}" if src else "") + ". "
             f"Each scorer's top {data['depth']} candidates per query are kept with their "
             "scores, and the rank and score of every required tool however deep. Move K "
             "(1 to " f"{data['depth']}) or give a scorer a score threshold (the threshold "
             "policy on its relative scale: every candidate whose score, rescaled so the "
             "average candidate is 0 and the best 1, reaches the threshold, at least 1 and at "
             "most K) and the table and curve recompute R@K (share of required tools sent, mean "
             "over queries), Complete@K (share of queries with every required tool sent) and "
             "the payload (tokens of name + description, cl100k, summed over the tools "
             "sent) over the whole query set. A miss's failure mode and the query words a "
             "tool's text lacks follow toolsel.tables.failure_modes. This page makes no network "
             "request and needs no kernel.")
    body = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta http-equiv="Content-Security-Policy" content="{escape(csp)}"/>
<meta content="width=device-width, initial-scale=1.0" name="viewport"/>
<title>{escape(title)}</title>
<style>{css}</style>
</head>
<body>
<h1>{escape(title)}</h1>
<p class="intro">{escape(intro)}</p>
<p class="note-box" id="always-note">{escape(always_note)}</p>
<noscript><p class="note-box">This explorer draws with JavaScript (inline, in this file); with
scripts off only this text shows. The report's tables are in its CSV files.</p></noscript>
<div class="controls">
<label>K <input id="k" type="range" min="1" max="{data['depth']}" step="1"/>
<input id="k-num" type="number" min="1" max="{data['depth']}" step="1" aria-label="K"/></label>
<span>K = <b id="k-label"></b></span>
<label>scorer in detail <select id="focus"></select></label>
<label><input id="all-rows" type="checkbox"/> every kept rank (1 to {data['depth']})</label>
</div>
<div class="top">
<section class="scorer-table">
<h2>All {n_q:,} queries at this K</h2>
<div class="table-wrap">
<table id="summary"><thead><tr><th>scorer</th><th>indexes</th><th>score threshold</th>
<th>R@K</th><th>Complete@K</th><th>tools sent (mean)</th><th>payload tokens (mean)</th>
<th>reduction</th></tr></thead><tbody id="summary-body"></tbody></table>
</div>
<p class="note">R@K and Complete@K over the <span id="n-valid"></span> queries with a required
tool that is not always included; payload over every query, always-include tools included;
reduction against sending every tool. A score threshold is on the relative scale of
<code>threshold:min_score=T</code> (each query's scores rescaled so the average candidate is 0 and
the best 1; the same on every scorer; the table shows raw scores rounded to 4 significant
digits); empty = the fixed top K.</p>
</section>
<section class="curve-part">
<h2>Recall against payload, K = 1 to {data['depth']}</h2>
<div id="curve"></div>
<ul id="curve-legend" aria-label="legend"></ul>
<p class="note">One curve per scorer, each with its own color and dash pattern (curves that
coincide stay told apart); the dot is the current K, and the legend gives each scorer's R@K and
payload there.</p>
</section>
</div>
<div class="main">
<aside>
<h2>Queries</h2>
<div class="filters">
<input id="f-search" type="search" placeholder="search text, id or tool name"
 aria-label="search queries by text, id or required tool name"/>
<select id="f-split" aria-label="split"></select>
<label class="note">missed at K by <select id="f-missed" aria-label="missed by"></select></label>
<select id="f-mode" aria-label="failure mode"></select>
<input id="f-tool" list="tool-names" placeholder="required tool" aria-label="required tool"/>
<datalist id="tool-names"></datalist>
</div>
<div class="note" id="list-count"></div>
<ul id="query-list"></ul>
</aside>
<section>
<div class="query-head">
<div><span class="qid" id="query-id"></span> · split <span id="query-split"></span></div>
<div class="text" id="query-text"></div>
<div class="note">Required tools:</div>
<ul id="query-required"></ul>
</div>
<div id="columns"></div>
<p class="note">A row marked <span class="zero">score 0</span> is a tool sent although its score
is 0: it shares nothing the scorer sees with the query and takes one of the K places only by
registry order (ties keep registry order).</p>
<h2>What <span id="sent-scorer"></span> sends (<span id="sent-k"></span>)</h2>
<p><b id="sent-count"></b>, <b id="sent-tokens"></b> tokens of name + description
(<span id="sent-json"></span> tokens as JSON definitions, <span id="sent-chars"></span>
characters of name + description), in registry order:</p>
<ol id="sent-names"></ol>
</section>
</div>
<section id="tool-panel" role="dialog" aria-labelledby="tool-name" hidden>
<button type="button" id="close-tool" style="float:right">close</button>
<h2 id="tool-name"></h2>
<div class="note" id="tool-meta"></div>
<h3>Definition</h3>
<pre id="tool-def"></pre>
<h3>Scorers that miss it at this K</h3>
<ul id="tool-misses"></ul>
<h3>Query words its text lacks (the repair hint: each word counted once per scorer that
misses the tool for a query at this K)</h3>
<p id="tool-hint"></p>
<h3>Queries that need it (<span id="tool-nqueries"></span>)</h3>
<ul id="tool-queries"></ul>
</section>
<script type="application/json" id="explorer-data">{embed_json(data)}</script>
<script>{script}</script>
</body>
</html>
"""
    return body


def write_explorer(out: str | Path, registry: str | Path, queries: str | Path,
                   scorers: Iterable[str] | None = None,
                   *, depth: int = DEFAULT_DEPTH, title: str = "toolsel explorer",
                   always_include: Iterable[str] | None = None,
                   model: str | Path | None = None) -> Path:
    """Load ``registry`` and ``queries``, compute the explorer's data and write the page to
    ``out`` (a file path). Returns the path. ``model``: a ``toolsel fit`` file, shown as one
    more panel (``<base>+labels``) beside the blind scorers."""
    from ..data import load_queries, load_registry
    reg = load_registry(registry)
    qs = load_queries(queries, reg)
    if model is not None:
        from ..eval.crossfit import learned_label
        from ..learn.artifact import load_model
        learned = load_model(model, reg)
        from ..eval.sweep import DEFAULT_SCORERS
        names = list(scorers or DEFAULT_SCORERS)
        scorers = {**{n: n for n in names}, learned_label(learned.base_name_): learned}
    data = explorer_data(reg, qs, scorers, depth=depth, always_include=always_include,
                         title=title, source={"registry": Path(registry).name,
                                              "queries": Path(queries).name})
    return write_text(render_explorer(data), Path(out))


def report_explorer_inputs(notebooks_dir: str | Path, data=None
                           ) -> tuple[Path, Path, list[str], list[int], list[str]] | None:
    """``(registry, queries, scorers, top_k, always_include)`` the explorer of a report
    shows, or ``None``.

    On a user's data (a :class:`~toolsel.report.runner.UserData`): its registry and queries
    (``None`` without queries), its scorers and cut-offs when given. For the project's reports:
    the defaults of the first notebook whose parameters take ``registry`` and ``queries``
    (paths resolved against the notebooks folder), with its ``scorers``, ``top_k`` and
    ``always_include``. The always-include set is the pages' (none unless a page's parameter
    names some; the registry's own marks are not taken), so the explorer's R@K and Complete@K
    are those of the report's sweep tables.
    """
    from ..eval.sweep import DEFAULT_SCORERS, DEFAULT_TOP_K
    if data is not None:
        if data.queries is None:
            return None
        return (Path(data.registry), Path(data.queries),
                list(data.scorers or DEFAULT_SCORERS), list(data.top_k or DEFAULT_TOP_K), [])
    import papermill as pm

    nb_dir = Path(notebooks_dir)
    for nb in find_notebooks(nb_dir):
        params = pm.inspect_notebook(str(nb))
        if "registry" not in params or "queries" not in params:
            continue
        try:
            values = {n: ast.literal_eval(p["default"]) for n, p in params.items()
                      if n in ("registry", "queries", "scorers", "top_k", "always_include")}
        except (ValueError, SyntaxError):
            continue
        if not values.get("registry") or not values.get("queries"):
            continue
        top_k = values.get("top_k", DEFAULT_TOP_K)
        return ((nb_dir / values["registry"]).resolve(), (nb_dir / values["queries"]).resolve(),
                list(values.get("scorers") or DEFAULT_SCORERS),
                [top_k] if isinstance(top_k, int) else list(top_k),
                list(values.get("always_include") or []))
    return None


def write_report_explorer(out_dir: str | Path, notebooks_dir: str | Path, data=None
                          ) -> Path | None:
    """Write ``OUT/explorer.html`` for a report folder (what ``toolsel report`` calls).

    Depth: the largest cut-off of the report (at least :data:`DEFAULT_DEPTH`, at most 100).
    A report without labeled queries gets no explorer (``None``); a failure to build it is a
    warning, never a lost report. An existing ``explorer.html`` is replaced only by a
    finished page (written to a temporary file first).
    """
    inputs = report_explorer_inputs(notebooks_dir, data)
    page = Path(out_dir) / EXPLORER_PAGE
    if inputs is None:
        # a report on data without labeled queries: drop an explorer an earlier run wrote
        # (only ours: a page carrying the explorer's data block)
        if page.is_file() and 'id="explorer-data"' in page.read_text(encoding="utf-8",
                                                                     errors="replace"):
            page.unlink()
        return None
    registry, queries, scorers, top_k, always = inputs
    depth = min(_MAX_DEPTH, max([DEFAULT_DEPTH, *top_k]))
    title = "toolsel explorer" if data is None else "toolsel explorer: your data"
    try:
        return write_explorer(page, registry, queries, scorers, depth=depth, title=title,
                              always_include=always,
                              model=getattr(data, "model", None) if data is not None else None)
    except Exception as exc:  # the notebooks' report stands without the explorer
        warnings.warn(f"{EXPLORER_PAGE} not written: {type(exc).__name__}: {exc}",
                      RuntimeWarning, stacklevel=2)
        return None



def explorer_links(reports_dir: str | Path, kind: str = "md") -> list[str]:
    """Lines linking a report folder's ``explorer.html`` (none when it has none): Markdown
    (``kind="md"``, for README.md) or HTML (``"html"``, for index.html)."""
    if not (Path(reports_dir) / EXPLORER_PAGE).exists():
        return []
    what = ("every labeled query ranked by each scorer side by side, with K (and a score "
            "threshold) to move and R@K, Complete@K and payload recomputed for the whole "
            "query set; one self-contained page that works offline, without Jupyter.")
    if kind == "html":
        return ["<h2>Explore</h2>", f'<p class="intro"><a href="{EXPLORER_PAGE}"><b>Open the '
                f"explorer</b></a> ({EXPLORER_PAGE}): {escape(what)}</p>"]
    if kind == "md":
        return ["## Explore", "", f"[{EXPLORER_PAGE}]({EXPLORER_PAGE}): {what}", ""]
    raise ValueError(f"kind must be 'md' or 'html', got {kind!r}")
