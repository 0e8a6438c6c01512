"""Markdown for report pages: data strings escaped, tables formatted, long tables cut.

Report notebooks display text built from data (tool names, requests, search terms). A string
such as ``#backend`` at the start of a line renders as a heading, ``|`` breaks a table and
``<x>`` vanishes as an HTML tag, so every data string goes through :func:`escape` before it
is put into Markdown. :func:`table` renders a DataFrame as a Markdown table (no row numbers,
formatted numbers, escaped cells) and shows only the top rows of a long table, with a link to
the CSV holding all of them. :func:`interval` formats a rate with its interval (``"62% [45, 78]"``).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Mapping
from numbers import Integral, Real

import pandas as pd

__all__ = ["escape", "code", "table", "interval", "interval_row", "interval_table", "pct"]

# Markdown punctuation that can change how a line renders; "$" starts math in Jupyter
_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$])")

Format = str | Callable[[object], str]


def escape(text: object) -> str:
    """``text`` as literal Markdown: HTML special characters (quotes too) as entities, Markdown
    punctuation backslash-escaped, newlines as spaces (so it stays on its line or cell).

    Safe in a paragraph and in a table cell: it renders as the characters it holds and can
    open no tag, link, emphasis, code span, math, heading, list or table column.
    """
    # punctuation first, entities second: escaping after html.escape would break "&#x27;"
    s = _PUNCT.sub(r"\\\1", re.sub(r"\s*[\r\n]+\s*", " ", str(text)))
    return html.escape(s, quote=True)


def code(text: object) -> str:
    """``text`` as inline code: a ``<code>`` element, HTML-escaped, ``|`` as an entity (a
    Markdown code span would still split a table cell at ``|``)."""
    s = html.escape(re.sub(r"\s*[\r\n]+\s*", " ", str(text)), quote=True)
    return "<code>" + s.replace("|", "&#124;") + "</code>"


_inline_code = code  # table() takes a ``code`` argument that shadows the function


def pct(value: float, digits: int = 0) -> str:
    """A fraction as a percentage (``0.625`` → ``"62%"``); NaN as an en dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{100 * value:.{digits}f}%"


def interval(mean: float, low: float, high: float, *, percent: bool = True,
             digits: int = 0) -> str:
    """A rate with its interval: ``"62% [45, 78]"`` (``percent=False``: ``"0.62 [0.45, 0.78]"``).

    One format for every interval of the reports: the bounds in brackets, comma-separated.
    """
    if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in (mean, low, high)):
        return "–"
    if percent:
        return f"{100 * mean:.{digits}f}% [{100 * low:.{digits}f}, {100 * high:.{digits}f}]"
    return f"{mean:.{digits or 2}f} [{low:.{digits or 2}f}, {high:.{digits or 2}f}]"


def interval_row(row, *, percent: bool = True, digits: int = 0) -> str:
    """:func:`interval` of a row with ``mean``, ``low`` and ``high`` (a row of
    :func:`toolsel.eval.stats.bootstrap_intervals`)."""
    return interval(row["mean"], row["low"], row["high"], percent=percent, digits=digits)


def interval_table(ci, by: str, metric: str, k: int, label: str):
    """One row per group of ``by``, one column per scorer: ``mean [low–high]`` of ``metric``
    at cut-off ``k``, and ``n`` (the group's queries); ``ci`` is
    :func:`toolsel.eval.stats.bootstrap_by_group` output. The cells are Markdown text."""
    import pandas as pd
    part = ci[(ci.top_k == k) & (ci.metric == metric)]
    rows = []
    for key, g in part.groupby(by, sort=False):
        row = {label: key, "n": int(g["n_queries"].iloc[0])}
        row.update({r.scorer: interval(r.mean, r.low, r.high) for r in g.itertuples()})
        rows.append(row)
    return pd.DataFrame(rows)


def _cell(value: object, fmt: Format | None) -> str:
    if fmt is not None and not (isinstance(value, float) and math.isnan(value)):
        text = fmt(value) if callable(fmt) else fmt.format(value)
        return escape(text) if callable(fmt) else text.replace("|", "\\|")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return f"{value:,}"
    if isinstance(value, Real):
        return f"{value:,.3f}"
    if isinstance(value, (list, tuple, set, frozenset)):
        return escape(", ".join(map(str, value)))
    return escape(value)


def table(df: pd.DataFrame, formats: Mapping[str, Format] | None = None, *,
          index: bool = False, max_rows: int | None = 15, link: str | None = None,
          align: Mapping[str, str] | None = None, code: Iterable[str] = (),
          raw: Iterable[str] = ()) -> str:
    """``df`` as a Markdown table with escaped cells and formatted numbers.

    Parameters
    ----------
    formats : mapping column → format
        A ``str.format`` pattern (``"{:.1%}"``, kept verbatim: write ``\\|`` nowhere) or a
        callable returning text (escaped). Other cells: integers with thousands separators,
        floats with 3 decimals, booleans yes/no, missing values "–", lists joined by commas.
    index : bool
        Show the index (its levels become the first columns); default hidden.
    max_rows : int or None
        Show at most this many rows, followed by a line saying how many there are and, when
        ``link`` is given, where the CSV with all of them is.
    link : str, optional
        Relative URL of the file holding the whole table (named "As CSV", "As JSON"... by
        its extension).
    align : mapping column → ``"left"`` / ``"right"``
        Default: numbers right, everything else left.
    code : columns shown as inline code (:func:`code`).
    raw : columns that already hold Markdown built by the caller from escaped parts
        (inserted as they are, on one line).
    """
    formats = dict(formats or {})
    align = dict(align or {})
    code_cols, raw_cols = set(code), set(raw)
    unknown = (code_cols | raw_cols) - {str(c) for c in df.columns}
    if unknown:
        raise KeyError(f"table: no column(s) {sorted(unknown)} in the frame")
    if index:
        df = df.reset_index()
    if isinstance(df.columns, pd.MultiIndex):
        df = df.copy()
        df.columns = [" ".join(str(p) for p in col if str(p)) for col in df.columns]
    n = len(df)
    shown = df if max_rows is None or n <= max_rows else df.head(max_rows)
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(escape(c) for c in cols) + " |"]
    seps = []
    for c, orig in zip(cols, df.columns):
        side = align.get(c) or ("right" if pd.api.types.is_numeric_dtype(df[orig])
                                and not pd.api.types.is_bool_dtype(df[orig]) else "left")
        seps.append("---:" if side == "right" else ":---")
    lines.append("| " + " | ".join(seps) + " |")
    for row in shown.itertuples(index=False):
        cells = []
        for c, v in zip(cols, row):
            if c in raw_cols:
                cells.append(re.sub(r"\s*[\r\n]+\s*", " ", str(v)))
            elif c in code_cols and not (isinstance(v, float) and math.isnan(v)):
                cells.append(_inline_code(v))
            else:
                cells.append(_cell(v, formats.get(c)))
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if len(shown) < n:
        text += f"\n\nThe first {len(shown)} of {n:,} rows"
        text += f"; all of them in [{escape(link.rsplit('/', 1)[-1])}]({link})." if link else "."
    elif link:
        kind = {"csv": "As CSV", "json": "As JSON", "jsonl": "As JSON Lines"}.get(
            link.rsplit(".", 1)[-1].lower(), "The file")
        text += f"\n\n{kind}: [{escape(link.rsplit('/', 1)[-1])}]({link})."
    return text
