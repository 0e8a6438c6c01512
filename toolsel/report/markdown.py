"""Markdown for report pages: data strings escaped, tables formatted, long tables cut.

Report notebooks display text built from data (tool names, requests, search terms). A string
such as ``#backend`` at the start of a line renders as a heading, ``|`` breaks a table and
``<x>`` vanishes as an HTML tag, so every data string goes through :func:`escape` before it
is put into Markdown. :func:`table` renders a DataFrame as a Markdown table (no row numbers,
formatted numbers, escaped cells) and shows only the top rows of a long table, with a link to
the CSV holding all of them. :func:`interval` formats a rate with its interval (``"62% [45, 78]"``).

Cell helpers the report notebooks call instead of defining their own: :func:`wide_table` (one
measure as rows × columns, e.g. scorer × K), :func:`list_text` (a ``;``-joined cell as a
readable list, for ``table(formats=...)``), :func:`yes_no` (a flag, for the same),
:func:`name_list` (names as Markdown, some in bold) and :func:`code_hit` (a search result as
code, bold when it is the tool wanted).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Mapping
from numbers import Integral, Real

import pandas as pd

from ..visible import visible

__all__ = ["escape", "code", "table", "interval", "interval_row", "interval_table", "pct",
           "wide_table", "list_text", "name_list", "code_hit", "yes_no"]

# Markdown punctuation that can change how a line renders; "$" starts math in Jupyter
_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$])")

Format = str | Callable[[object], str]


def escape(text: object) -> str:
    """``text`` as literal Markdown: HTML special characters (quotes too) as entities, Markdown
    punctuation backslash-escaped, newlines as spaces (so it stays on its line or cell),
    other control, bidi and line-separator characters as visible escapes
    (:func:`toolsel.visible.visible`).

    Safe in a paragraph and in a table cell: it renders as the characters it holds and can
    open no tag, link, emphasis, code span, math, heading, list or table column.
    """
    # punctuation first, entities second: escaping after html.escape would break "&#x27;"
    s = _PUNCT.sub(r"\\\1", re.sub(r"\s*\n+\s*", " ", visible(text, keep="\t\n")))
    return html.escape(s, quote=True)


def code(text: object) -> str:
    """``text`` as inline code (an id, a tool name, a path): a ``<code>`` element,
    HTML-escaped, ``|`` as an entity (a Markdown code span would still split a table cell at
    ``|``), every control character, newlines and tabs included, as a visible escape
    (:func:`toolsel.visible.visible`: ``q01\\nfake`` shows as written)."""
    s = html.escape(visible(text), quote=True)
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


def rate_interval(successes: int, n: int, *, digits: int = 0) -> str:
    """A rate ``successes / n`` with its Wilson 95% interval: ``"3/5, 60% [23, 88]"``."""
    from ..eval.stats import wilson_interval
    if n == 0:
        return "0/0, –"
    low, high = wilson_interval(int(successes), int(n))
    return f"{successes}/{n}, " + interval(successes / n, low, high, digits=digits)


def interval_row(row, metric: str | None = None, *, percent: bool = True,
                 digits: int = 0) -> str:
    """:func:`interval` of a row with ``mean``, ``low`` and ``high`` (a row of
    :func:`toolsel.eval.stats.mean_intervals`), or, given ``metric``, with ``metric``,
    ``metric_low`` and ``metric_high`` (a wide row, as
    :func:`toolsel.tables.replication.headline_frame` gives: ``"R@k"``, ``"R@k_low"``, ...)."""
    if metric is None:
        return interval(row["mean"], row["low"], row["high"], percent=percent, digits=digits)
    return interval(row[metric], row[f"{metric}_low"], row[f"{metric}_high"],
                    percent=percent, digits=digits)


def interval_table(ci, by: str, metric: str, k: int, label: str):
    """One row per group of ``by``, one column per scorer: ``mean [low–high]`` of ``metric``
    at cut-off ``k``, and ``n`` (the group's queries); ``ci`` is
    :func:`toolsel.eval.stats.intervals_by_group` output. The cells are Markdown text."""
    import pandas as pd
    part = ci[(ci.top_k == k) & (ci.metric == metric)]
    rows = []
    for key, g in part.groupby(by, sort=False):
        row = {label: key, "n": int(g["n_queries"].iloc[0])}
        row.update({r.scorer: interval(r.mean, r.low, r.high) for r in g.itertuples()})
        rows.append(row)
    return pd.DataFrame(rows)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _items(value: object, sep: str) -> list[str]:
    """The items of a list cell: a ``sep``-joined string split, a list as it is; none when
    the cell is empty or missing."""
    if _missing(value):
        return []
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(v) for v in value]
    text = str(value)
    return text.split(sep) if text else []


def list_text(value: object, *, sep: str = ";", limit: int | None = None) -> str:
    """A list cell as plain text for reading: ``"a;b"`` → ``"a, b"``; ``"–"`` when empty.

    ``sep`` is how the cell joins its items (``";"`` in the tables' CSV columns); with
    ``limit``, only the first ``limit`` items are shown, followed by ``(+N more)``. Meant as a
    :func:`table` format (``formats={"called": list_text}``), which escapes the text.
    """
    items = _items(value, sep)
    if not items:
        return "–"
    if limit is not None and len(items) > limit:
        return ", ".join(items[:limit]) + f" (+{len(items) - limit} more)"
    return ", ".join(items)


def yes_no(value: object, *, missing: str = "–") -> str:
    """A flag as ``"yes"``/``"no"`` (``1.0``, ``True`` → yes; ``0``, ``False`` → no); ``None``
    and NaN as ``missing`` (e.g. ``"n/a"`` for a target that does not apply). A
    :func:`table` format for flag columns held as numbers or with gaps (a plain ``bool``
    column is shown as yes/no without one)."""
    if _missing(value):
        return missing
    return "yes" if value else "no"


def name_list(value: object, *, bold: object = (), sep: str = ";") -> str:
    """Names as Markdown, escaped and joined by ``", "``; those also in ``bold`` in bold.

    ``value`` and ``bold`` are lists or ``sep``-joined strings (a misses table's
    ``sent_instead`` and ``siblings_sent``); ``"–"`` when there is no name. For a
    :func:`table` column passed as ``raw``.
    """
    names = _items(value, sep)
    if not names:
        return "–"
    strong = set(_items(bold, sep))
    return ", ".join(f"**{escape(n)}**" if n in strong else escape(n) for n in names)


def code_hit(name: object, wanted: object) -> str:
    """A tool a search returned, as inline code, in bold when it is ``wanted``; ``"–"`` when
    the search returned nothing (an empty or missing name). For a ``raw`` :func:`table` column.
    """
    if _missing(name) or not str(name):
        return "–"
    return f"**{code(name)}**" if name == wanted else code(name)


def wide_table(frame: pd.DataFrame, value: str, *, rows: str, columns: str, fmt: Format,
               rows_label: str | None = None, column_label: str = "{}",
               max_rows: int | None = 15, link: str | None = None) -> str:
    """One measure of a long table as a Markdown table: a row per value of ``rows``, a
    column per value of ``columns`` (both in first-seen order), cells ``value`` formatted
    with ``fmt``.

    E.g. R@k per scorer and K: ``wide_table(summary, "R@k", rows="scorer",
    columns="top_k", fmt="{:.1%}", column_label="K={}")``. ``rows_label`` heads the first
    column (default ``rows``); ``column_label`` formats the other headers from the column
    values. A combination missing from ``frame`` shows as "–"; one given twice is an error.
    ``max_rows`` and ``link`` are :func:`table`'s.
    """
    missing = [c for c in (value, rows, columns) if c not in frame.columns]
    if missing:
        raise KeyError(f"wide_table: no column(s) {missing} in the frame")
    twice = frame.duplicated([rows, columns], keep=False)
    if twice.any():
        first = frame.loc[twice, [rows, columns]].iloc[0]
        r, c = (v.item() if hasattr(v, "item") else v for v in first)
        raise ValueError(f"wide_table: {rows}={r!r}, {columns}={c!r} occurs "
                         f"{int(twice.sum())} times; one {value} per cell expected")
    row_keys = list(dict.fromkeys(frame[rows]))
    col_keys = list(dict.fromkeys(frame[columns]))
    wide = frame.pivot(index=rows, columns=columns, values=value).reindex(
        index=row_keys, columns=col_keys)
    wide.columns = [column_label.format(c) for c in col_keys]
    wide = wide.rename_axis(rows_label or rows)
    return table(wide, {c: fmt for c in wide.columns}, index=True, max_rows=max_rows,
                 link=link)


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
        return _long(", ".join(map(str, value)))
    return _long(str(value))


#: A text cell longer than this (characters) shows its first :data:`CELL_PREVIEW` characters,
#: the whole text one click away (an HTML ``details`` element).
MAX_CELL = 200
CELL_PREVIEW = 120


def _long(text: str) -> str:
    """``text`` as a table cell: escaped; a long one as a preview with the whole text on
    demand, so one long request (a pasted document, an image as base64) does not make its
    table thousands of pixels wide."""
    if len(text) <= MAX_CELL:
        return escape(text)
    return (f"<details><summary>{escape(text[:CELL_PREVIEW])}… ({len(text):,} characters)"
            f"</summary>{escape(text)}</details>")


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
    df = _flat_frame(df, index)
    n = len(df)
    shown = df if max_rows is None or n <= max_rows else df.head(max_rows)
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(escape(c) for c in cols) + " |",
             "| " + " | ".join(_separators(df, cols, align)) + " |"]
    for row in shown.itertuples(index=False):
        cells = [_table_cell(v, c, formats, code_cols, raw_cols) for c, v in zip(cols, row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + _table_footer(len(shown), n, link)


def _flat_frame(df: pd.DataFrame, index: bool) -> pd.DataFrame:
    """``df`` with its index as columns (when ``index``) and multi-level column names joined
    by spaces."""
    if index:
        df = df.reset_index()
    if isinstance(df.columns, pd.MultiIndex):
        df = df.copy()
        df.columns = [" ".join(str(p) for p in col if str(p)) for col in df.columns]
    return df


def _separators(df: pd.DataFrame, cols: list[str], align: Mapping[str, str]) -> list[str]:
    """The alignment row's cells: ``align``'s side, else numbers right and the rest left."""
    seps = []
    for c, orig in zip(cols, df.columns):
        side = align.get(c) or ("right" if pd.api.types.is_numeric_dtype(df[orig])
                                and not pd.api.types.is_bool_dtype(df[orig]) else "left")
        seps.append("---:" if side == "right" else ":---")
    return seps


def _table_cell(v: object, c: str, formats: Mapping[str, Format], code_cols: set,
                raw_cols: set) -> str:
    """One cell of column ``c``: raw Markdown on one line, inline code, or formatted text."""
    if c in raw_cols:
        return re.sub(r"\s*[\r\n]+\s*", " ", str(v))
    if c in code_cols and not (isinstance(v, float) and math.isnan(v)):
        return _inline_code(v)
    return _cell(v, formats.get(c))


def _table_footer(n_shown: int, n: int, link: str | None) -> str:
    """What follows the table: how many rows were cut and where they all are, or the link."""
    text = ""
    if n_shown < n:
        text += f"\n\nThe first {n_shown} of {n:,} rows"
        text += f"; all of them in [{escape(link.rsplit('/', 1)[-1])}]({link})." if link else "."
    elif link:
        kind = {"csv": "As CSV", "json": "As JSON", "jsonl": "As JSON Lines"}.get(
            link.rsplit(".", 1)[-1].lower(), "The file")
        text += f"\n\n{kind}: [{escape(link.rsplit('/', 1)[-1])}]({link})."
    return text
