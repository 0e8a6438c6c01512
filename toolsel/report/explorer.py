"""An interactive explorer of one query against the registry, scorers side by side.

:func:`explore` is the computation (a ranked table of the whole registry with scores, what is
sent and its payload); :func:`build_explorer` wraps it in ipywidgets: choose the scorer,
indexed fields, top_k and always-include of each panel, type a query, and every panel updates.
The widgets are optional (``notebooks`` extra) and imported only by :func:`build_explorer`.
Fitted scorers are cached per (scorer, fields), so changing the query or K does not refit.

:func:`build_labeling_panel` is the notebook face of ``toolsel label``: type a request, tick
its tools in the registry ranked by the ``default`` scorer, append it to a labeled file, and
see each scorer's rank of it (the logic is :mod:`toolsel.tables.labeling`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import Registry, Tool
from ..eval.metrics import payload_chars, payload_reduction, payload_tokens
from ..ranking import rank_order
from ..scorers.base import Scorer, get_scorer
from ..selection import Selector
from ..text import FIELDS

__all__ = ["ExplorerView", "explore", "rankings_markdown", "Explorer", "build_explorer",
           "LabelingPanel", "build_labeling_panel"]


@dataclass
class ExplorerView:
    """One panel's result: the ranked registry and what would be sent."""

    query: str
    scorer: str
    fields: tuple[str, ...]
    top_k: int
    always_include: tuple[str, ...]
    ranking: pd.DataFrame
    """Every tool, best first: ``rank`` (among candidates; 0 for always-include), ``tool``,
    ``score``, ``sent``, ``always_include``, ``domain``."""
    sent: list[str]
    """Names sent, in registry order."""
    payload_chars: int
    payload_tokens: int
    payload_reduction: float
    fields_label: str = ""
    """What the scorer indexes, in words (for a fusion scorer such as ``default``, what each
    half indexes: its BM25 half counts name words twice and adds parameter names)."""

    @property
    def fields_text(self) -> str:
        return self.fields_label or ", ".join(self.fields)

    def to_html(self, max_rows: int = 20) -> str:
        """A compact HTML rendering: header line, then the top rows of the ranking."""
        always = (f" ({len(self.sent) - len(self.always_include)} by rank + "
                  f"{len(self.always_include)} always-include)" if self.always_include else "")
        head = (f"<b>{escape(self.scorer)}</b> (fields: {escape(self.fields_text)}), "
                f"top_k={self.top_k}: sends <b>{len(self.sent)}</b> tools{always}, "
                f"{self.payload_chars:,} chars / {self.payload_tokens:,} tokens "
                f"({100 * self.payload_reduction:.1f}% less than all tools)")
        rows = self.ranking.head(max_rows)
        body = "".join(
            f"<tr style='background:{'#e8f4e8' if r.sent else 'white'}'>"
            f"<td>{r.rank if r.rank else 'always'}</td><td>{escape(r.tool)}</td>"
            f"<td>{r.score:.3f}</td><td>{'sent' if r.sent else ''}</td></tr>"
            for r in rows.itertuples())
        return (f"<div>{head}<table><tr><th>rank</th><th>tool</th><th>score</th><th></th>"
                f"</tr>{body}</table></div>")


def _fitted(registry: Registry, scorer: str | Scorer, fields: Sequence[str] | None,
            cache: dict | None) -> Scorer:
    key = (scorer if isinstance(scorer, str) else id(scorer),
           None if fields is None else tuple(fields))
    if cache is not None and key in cache:
        return cache[key]
    if isinstance(scorer, str):
        sc = get_scorer(scorer) if fields is None else get_scorer(scorer, fields=tuple(fields))
    else:
        sc = scorer
        if sc.is_fitted_for(registry):  # a loaded model: fitted here, never refit blind
            return sc
    sc.fit(registry)
    if cache is not None:
        cache[key] = sc
    return sc


def explore(registry: Sequence[Tool], query: str, scorer: str | Scorer = "bm25", *,
            fields: Sequence[str] | None = None, top_k: int = 10,
            always_include: Iterable[str] | None = None, label: str | None = None,
            _cache: dict | None = None) -> ExplorerView:
    """Score ``query`` against the registry and show the ranking and what is sent.

    ``fields=None`` uses the scorer's default fields. Ties go to the earlier tool.
    ``always_include=None`` takes the tools the registry marks ``always_include`` (sent
    outside ``top_k``, as :class:`~toolsel.selection.Selector` does); pass ``()`` for none.
    A fitted scorer object (a model loaded from a ``toolsel fit`` file) is used as it is;
    ``label`` names its panel.
    """
    from .explorer_data import scorer_fields
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    if always_include is None:
        always_include = reg.always_include
    always = tuple(sorted(reg.check_names(always_include, what="always_include"),
                          key=reg.index))
    sc = _fitted(reg, scorer, fields, _cache)
    selector = Selector(reg, sc, top_k=top_k, always_include=always)
    sent = selector.select(query)
    scores = sc.score(query)
    always_mask = np.zeros(len(reg), dtype=bool)
    always_mask[[reg.index(n) for n in always]] = True
    order = list(rank_order(scores, ~always_mask)) + list(np.flatnonzero(always_mask))
    sent_set = set(sent)
    rows = []
    for pos, i in enumerate(order, start=1):
        t = reg[int(i)]
        rows.append({"rank": 0 if always_mask[i] else pos, "tool": t.name,
                     "score": float(scores[i]), "sent": t.name in sent_set,
                     "always_include": bool(always_mask[i]), "domain": t.domain or ""})
    tools_sent = [reg.get(n) for n in sent]
    chars = payload_chars(tools_sent)
    label = label or (scorer if isinstance(scorer, str) else sc.name)
    return ExplorerView(query, label, tuple(sc.fields_), top_k, always, pd.DataFrame(rows),
                        sent, chars, payload_tokens(tools_sent),
                        payload_reduction(chars, payload_chars(reg)),
                        scorer_fields(getattr(sc, "base_", sc)))


def resolve_scorers(registry: Registry, scorers: Sequence[str]) -> tuple[list[str], dict]:
    """Panel labels for ``scorers`` and the loaded models among them.

    Each entry is a scorer name, or the path of a model file written by ``toolsel fit``: that
    model is loaded on ``registry`` (:func:`toolsel.learn.artifact.load_model`) and its panel
    is labeled ``<base>+labels``. Returns ``(labels, {label: model})``; an entry that is
    neither is a ``ValueError`` naming it and the scorers available.
    """
    from ..eval.crossfit import learned_label
    from ..learn.artifact import is_model_file, load_model
    from ..scorers.base import available_scorers
    known = available_scorers()
    labels, models = [], {}
    for entry in scorers:
        if entry in known:
            labels.append(entry)
        elif Path(entry).expanduser().is_file() and is_model_file(Path(entry).expanduser()):
            model = load_model(Path(entry).expanduser(), registry)
            labels.append(learned_label(model.base_name_))
            models[labels[-1]] = model
        else:
            raise ValueError(f"scorers: {entry!r} is neither a scorer ({', '.join(known)}) "
                             "nor a model file written by `toolsel fit`")
    return labels, models


def rankings_markdown(views: Sequence[ExplorerView], rows: int = 15,
                      highlight: str | None = None) -> str:
    """Panels as static Markdown: the top ``rows`` of each ranking side by side, then what
    each panel sends and costs (a page without a kernel shows this instead of the widgets).

    One row per rank among the candidate tools; per panel the tool (✓ when sent, in bold when
    it is ``highlight``) and its score. Always-include tools are named below the table. Every
    name is escaped.
    """
    from . import markdown as md
    header = ["rank"]
    for v in views:
        header += [f"{v.scorer}: tool", f"{v.scorer}: score"]
    lines = ["| " + " | ".join(md.escape(h) for h in header) + " |",
             "| " + " | ".join(["---:"] + [":---", "---:"] * len(views)) + " |"]
    ranked = [v.ranking[v.ranking["rank"] > 0].reset_index(drop=True) for v in views]
    n = min(rows, max((len(r) for r in ranked), default=0))
    for i in range(n):
        cells = [str(i + 1)]
        for r in ranked:
            if i >= len(r):
                cells += ["", ""]
                continue
            row = r.iloc[i]
            name = md.code(row["tool"])
            if highlight is not None and row["tool"] == highlight:
                name = f"**{name}**"
            cells += [name + (" ✓" if row["sent"] else ""), f"{row['score']:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")
    out = "\n".join(lines)
    out += ("\n\n✓ = sent" + (f"; {md.code(highlight)} in bold" if highlight else "")
            + f". The first {n} of {max((len(r) for r in ranked), default=0)} candidate tools.")
    summary = ["| scorer | fields | top_k | tools sent | payload chars | payload tokens | "
               "payload reduction |", "| :--- | :--- | ---: | ---: | ---: | ---: | ---: |"]
    for v in views:
        summary.append(f"| {md.escape(v.scorer)} | {md.escape(v.fields_text)} | "
                       f"{v.top_k} | {len(v.sent)} | {v.payload_chars:,} | "
                       f"{v.payload_tokens:,} | {100 * v.payload_reduction:.1f}% |")
    out += "\n\n" + "\n".join(summary)
    always = sorted({n for v in views for n in v.always_include})
    if always:
        out += ("\n\nAlways sent, outside top_k: " + ", ".join(md.code(a) for a in always)
                + ".")
    return out


class Explorer:
    """Explorer panels (one per scorer) over one registry and one query box (see
    :func:`build_explorer`).

    ``widget`` is the ipywidgets container to display; :meth:`update` recomputes every panel
    (the widgets call it on every change) and returns their :class:`ExplorerView`.
    """

    def __init__(self, registry: Registry, scorers: Sequence[str], query: str, top_k: int,
                 always_include: Sequence[str]):
        import ipywidgets as w
        from ..scorers.base import available_scorers
        self.registry = registry
        self._cache: dict = {}
        self.views: list[ExplorerView] = []
        scorers, self.models = resolve_scorers(registry, scorers)
        names = available_scorers() + list(self.models)
        self.query = w.Text(value=query, description="query", continuous_update=False,
                            layout=w.Layout(width="95%"))
        self.panels = []
        for scorer in scorers:
            panel = {
                "scorer": w.Dropdown(options=names, value=scorer, description="scorer"),
                "fields": w.SelectMultiple(options=list(FIELDS), value=(),
                                           description="fields", rows=len(FIELDS)),
                # a K at or past the registry size sends every tool; the slider must still
                # hold it, or a 9-tool registry would silently show K=9 for a requested 10
                "top_k": w.IntSlider(value=top_k, min=1, max=max(len(registry), top_k),
                                     description="top_k", continuous_update=False),
                "always": w.SelectMultiple(options=registry.names,
                                           value=tuple(always_include),
                                           description="always", rows=4),
                "out": w.HTML(),
            }
            self.panels.append(panel)
        for panel in self.panels:
            for key in ("scorer", "fields", "top_k", "always"):
                panel[key].observe(lambda _change: self.update(), names="value")
        self.query.observe(lambda _change: self.update(), names="value")
        width = f"{100 // max(1, len(self.panels))}%"
        columns = [w.VBox([p["scorer"], p["fields"], p["top_k"], p["always"], p["out"]],
                          layout=w.Layout(width=width)) for p in self.panels]
        hint = w.HTML("<i>fields: none selected = the scorer's defaults</i>")
        self.widget = w.VBox([self.query, hint, w.HBox(columns)])

    def update(self) -> list[ExplorerView]:
        """Recompute every panel from the current widget values; return the views."""
        views = []
        for panel in self.panels:
            fields = tuple(panel["fields"].value) or None
            name = panel["scorer"].value
            view = explore(self.registry, self.query.value, self.models.get(name, name),
                           fields=fields, top_k=panel["top_k"].value,
                           always_include=panel["always"].value, label=name,
                           _cache=self._cache)
            panel["out"].value = view.to_html()
            views.append(view)
        self.views = views
        return views


def build_explorer(registry: Sequence[Tool], scorers: Sequence[str] = ("jaccard", "bm25"), *,
                   query: str = "file a bug report on the backend repo", top_k: int = 10,
                   always_include: Iterable[str] | None = None) -> Explorer:
    """Build the explorer, one panel per scorer (call ``display(explorer.widget)`` in a
    notebook). A ``scorers`` entry may be a model file written by ``toolsel fit``
    (:func:`resolve_scorers`).

    ``always_include=None``: the tools the registry marks ``always_include``, as
    :class:`~toolsel.selection.Selector` sends them. Needs ipywidgets. Call
    :meth:`Explorer.update` once to fill the panels (it also runs on every widget change).
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    if always_include is None:
        always_include = reg.always_include
    always = sorted(reg.check_names(always_include, what="always_include"), key=reg.index)
    return Explorer(reg, list(scorers), query, top_k, always)


# --------------------------------------------------------------------------------------------
# labeling panel: extend a labeled query file from the notebook


def _html_table(df: pd.DataFrame) -> str:
    """A small HTML table of ``df`` with every cell escaped (data strings are user text)."""
    head = "".join(f"<th>{escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell(v) -> str:
    if isinstance(v, float):
        return "" if v != v else f"{v:.3f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    return str(v)


class LabelingPanel:
    """Add a labeled request to a query file: type it, tick the expected tools, append.

    The same steps as ``toolsel label`` (:mod:`toolsel.tables.labeling`): the registry ranked by
    ``scorer`` for the typed request, one checkbox per shown tool, a split (``rule`` = the
    documented rule when the file is split), an optional category, and an *append* button that
    validates and appends one line, then shows each scorer's rank of the expected tools.
    Usable headless: set ``request.value``, tick ``checks``, call :meth:`append`.
    """

    def __init__(self, registry: Registry, path, *, scorer: str = "default", top: int = 15,
                 scorers: Sequence[str] | None = None, ks: Sequence[int] | None = None,
                 embed_check: bool = True):
        import ipywidgets as w
        from ..tables.labeling import LABEL_KS, LABEL_SCORERS
        self.registry = registry
        self.path = path
        self.scorer = scorer
        self.top = top
        self.scorers = list(scorers or LABEL_SCORERS)
        self.ks = list(ks or LABEL_KS)
        self.embed_check = embed_check
        self._cache: dict = {}
        self.ranking: pd.DataFrame | None = None
        self.appended = None
        self.impact: pd.DataFrame | None = None
        self.request = w.Text(description="request", continuous_update=False,
                              layout=w.Layout(width="95%"))
        self.checks_box = w.VBox()
        self.checks: list = []
        self.split = w.Dropdown(options=["rule", "dev", "test"], value="rule",
                                description="split")
        self.category = w.Text(description="category")
        self.button = w.Button(description="append", button_style="primary")
        self.out = w.HTML()
        self.request.observe(lambda _change: self.rank(), names="value")
        self.button.on_click(lambda _b: self.append())
        self.widget = w.VBox([self.request, self.checks_box,
                              w.HBox([self.split, self.category, self.button]), self.out])

    def rank(self) -> pd.DataFrame | None:
        """Rank the registry for the typed request and show one checkbox per tool."""
        import ipywidgets as w
        from ..tables.labeling import rank_for_labeling
        text = self.request.value.strip()
        if not text:
            self.ranking, self.checks = None, []
            self.checks_box.children = ()
            return None
        self.ranking = rank_for_labeling(self.registry, text, self.scorer, top=self.top,
                                         _cache=self._cache)
        self.checks = [w.Checkbox(value=False, indent=False, layout=w.Layout(width="95%"),
                                  description=f"{r.n}. {r.tool}  ({r.score:.3f}) "
                                              f"{r.description[:80]}")
                       for r in self.ranking.itertuples()]
        self.checks_box.children = tuple(self.checks)
        self.out.value = (f"<i>ranked by {escape(self.scorer)}: tick the tools this request "
                          "needs, then append</i>")
        return self.ranking

    def picked(self) -> list[str]:
        """The ticked tools, in ranking order."""
        if self.ranking is None:
            return []
        return [t for t, c in zip(self.ranking["tool"], self.checks) if c.value]

    def append(self):
        """Validate and append the request with the ticked tools; show the impact table.

        Returns the new :class:`~toolsel.data.Query`, or ``None`` when nothing was appended
        (the reason is shown in the panel).
        """
        from ..data import DataError
        from ..datasets import read_labeled
        from ..tables.labeling import (append_query, file_ids, label_impact, near_duplicates,
                                       new_record)
        text = self.request.value.strip()
        expected = self.picked()
        if not text or not expected:
            self.out.value = "<b>Nothing appended:</b> type a request and tick its tools."
            return None
        try:
            existing = read_labeled(self.path, self.registry)
            split = None if self.split.value == "rule" else self.split.value
            record = new_record(text, expected, existing, self.registry, split=split,
                                category=self.category.value.strip() or None,
                                ids=file_ids(self.path))
            dups = near_duplicates(text, existing, embed=self.embed_check)
            query = append_query(self.path, record, self.registry)
        except DataError as exc:
            self.out.value = f"<b>Nothing appended:</b> {escape(str(exc))}"
            return None
        self.appended = query
        self.impact = label_impact(self.registry, text, expected, self.scorers, self.ks,
                                   _cache=self._cache)
        parts = [f"Appended <code>{escape(str(record['id']))}</code> "
                 f"&ldquo;{escape(text)}&rdquo; &rarr; {escape(', '.join(expected))}"
                 + (f" (split {escape(record['split'])})" if "split" in record else "")
                 + (f" (category {escape(record['category'])})" if "category" in record
                    else "")
                 + f" to {escape(str(self.path))}."]
        if not dups.empty:
            parts.append("<b>Near-duplicates already in the file:</b>"
                         + _html_table(dups[["id", "query", "expected", "token_jaccard",
                                             "cosine", "flagged_by"]]))
        parts.append("Rank of each expected tool (0 = always-include) and the K it is sent at:"
                     + _html_table(self.impact[["scorer", "tool", "rank", "found_at"]
                                               + [f"complete@{k}" for k in sorted(self.ks)]]))
        self.out.value = "<br>".join(parts)
        return query


def build_labeling_panel(registry: Sequence[Tool], path, *, scorer: str = "default",
                         top: int = 15, scorers: Sequence[str] | None = None,
                         ks: Sequence[int] | None = None,
                         embed_check: bool = True) -> LabelingPanel:
    """The labeling panel over ``registry`` appending to the JSONL file ``path``.

    Display ``panel.widget``. Needs ipywidgets.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    return LabelingPanel(reg, path, scorer=scorer, top=top, scorers=scorers, ks=ks,
                         embed_check=embed_check)
