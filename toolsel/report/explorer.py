"""An interactive explorer of one query against the registry, two scorers side by side.

:func:`explore` is the computation (a ranked table of the whole registry with scores, what is
sent and its payload); :func:`build_explorer` wraps it in ipywidgets: choose the scorer,
indexed fields, top_k and always-include of each panel, type a query, and both panels update.
The widgets are optional (``notebooks`` extra) and imported only by :func:`build_explorer`.
Fitted scorers are cached per (scorer, fields), so changing the query or K does not refit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np
import pandas as pd

from ..data import Registry, Tool
from ..eval.metrics import payload_chars, payload_reduction, payload_tokens
from ..ranking import rank_order
from ..scorers.base import Scorer, get_scorer
from ..selection import Selector
from ..text import FIELDS

__all__ = ["ExplorerView", "explore", "Explorer", "build_explorer"]


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

    def to_html(self, max_rows: int = 20) -> str:
        """A compact HTML rendering: header line, then the top rows of the ranking."""
        head = (f"<b>{escape(self.scorer)}</b> (fields: {escape(', '.join(self.fields))}), "
                f"top_k={self.top_k}: sends <b>{len(self.sent)}</b> tools, "
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
    sc.fit(registry)
    if cache is not None:
        cache[key] = sc
    return sc


def explore(registry: Sequence[Tool], query: str, scorer: str | Scorer = "bm25", *,
            fields: Sequence[str] | None = None, top_k: int = 10,
            always_include: Iterable[str] = (), _cache: dict | None = None) -> ExplorerView:
    """Score ``query`` against the registry and show the ranking and what is sent.

    ``fields=None`` uses the scorer's default fields. Ties go to the earlier tool.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
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
    label = scorer if isinstance(scorer, str) else sc.name
    return ExplorerView(query, label, tuple(sc.fields_), top_k, always, pd.DataFrame(rows),
                        sent, chars, payload_tokens(tools_sent),
                        payload_reduction(chars, payload_chars(reg)))


class Explorer:
    """Two explorer panels over one registry and one query box (see :func:`build_explorer`).

    ``widget`` is the ipywidgets container to display; :meth:`update` recomputes both panels
    (the widgets call it on every change) and returns the two :class:`ExplorerView`.
    """

    def __init__(self, registry: Registry, scorers: Sequence[str], query: str, top_k: int,
                 always_include: Sequence[str]):
        import ipywidgets as w
        from ..scorers.base import available_scorers
        self.registry = registry
        self._cache: dict = {}
        self.views: list[ExplorerView] = []
        names = available_scorers()
        self.query = w.Text(value=query, description="query", continuous_update=False,
                            layout=w.Layout(width="95%"))
        self.panels = []
        for scorer in scorers:
            panel = {
                "scorer": w.Dropdown(options=names, value=scorer, description="scorer"),
                "fields": w.SelectMultiple(options=list(FIELDS), value=(),
                                           description="fields", rows=len(FIELDS)),
                "top_k": w.IntSlider(value=top_k, min=1, max=len(registry),
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
        columns = [w.VBox([p["scorer"], p["fields"], p["top_k"], p["always"], p["out"]],
                          layout=w.Layout(width="50%")) for p in self.panels]
        hint = w.HTML("<i>fields: none selected = the scorer's defaults</i>")
        self.widget = w.VBox([self.query, hint, w.HBox(columns)])

    def update(self) -> list[ExplorerView]:
        """Recompute every panel from the current widget values; return the views."""
        views = []
        for panel in self.panels:
            fields = tuple(panel["fields"].value) or None
            view = explore(self.registry, self.query.value, panel["scorer"].value,
                           fields=fields, top_k=panel["top_k"].value,
                           always_include=panel["always"].value, _cache=self._cache)
            panel["out"].value = view.to_html()
            views.append(view)
        self.views = views
        return views


def build_explorer(registry: Sequence[Tool], scorers: Sequence[str] = ("jaccard", "bm25"), *,
                   query: str = "file a bug report on the backend repo", top_k: int = 10,
                   always_include: Iterable[str] = ()) -> Explorer:
    """Build the two-panel explorer (call ``display(explorer.widget)`` in a notebook).

    Needs ipywidgets. Call :meth:`Explorer.update` once to fill the panels (it also runs on
    every widget change).
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    always = sorted(reg.check_names(always_include, what="always_include"), key=reg.index)
    return Explorer(reg, list(scorers), query, top_k, always)
