"""Data strings into Markdown and HTML, safely: escaping for notebooks, sanitizing for export.

Tool names, descriptions and query text come from the user's files. Anything of theirs that a
notebook puts into ``Markdown(...)`` goes through :func:`escape_md` (prose, table cells) or
:func:`md_code` (a name shown as code); :func:`md_table` builds a whole table that way. The
HTML export then runs every Markdown cell and HTML output through :func:`sanitize_html`, so a
string a notebook forgot to escape shows as text, never as a live tag or handler.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable

import pandas as pd

__all__ = ["escape_md", "md_code", "md_table", "sanitize_html"]

# Markdown punctuation that can start emphasis, code, links, tables, math or (at a line
# start) headings and lists. `<`, `>` and `&` become entities instead (html.escape).
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]|#~$!])")
_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def escape_md(text: object) -> str:
    """``text`` as literal Markdown: one line, HTML entities for ``<>&"'``, punctuation escaped.

    Safe in a paragraph and in a table cell: it renders as the characters it holds and can
    open no tag, link, emphasis, code span, math or table column.
    """
    s = _LINE_BREAKS.sub(" ", str(text))
    return _MD_SPECIAL.sub(r"\\\1", _html.escape(s, quote=True))


def md_code(text: object) -> str:
    """``text`` shown as inline code (``<code>``), HTML-escaped; safe in a table cell."""
    s = _html.escape(_LINE_BREAKS.sub(" ", str(text)), quote=True)
    return "<code>" + s.replace("|", "&#124;") + "</code>"


def md_table(df: pd.DataFrame, *, code: Iterable[str] = (), raw: Iterable[str] = (),
             floatfmt: str = "{:.3f}") -> str:
    """A GitHub-flavoured Markdown table of ``df``, every header and cell escaped.

    ``code``: columns shown as inline code (:func:`md_code`). ``raw``: columns already
    Markdown, built by the caller from escaped parts (inserted as is). Floats use
    ``floatfmt``; missing values are empty cells.
    """
    code, raw = set(code), set(raw)
    unknown = (code | raw) - set(df.columns)
    if unknown:
        raise KeyError(f"md_table: no column(s) {sorted(unknown)} in the frame")

    def cell(col, v) -> str:
        if v is None or (isinstance(v, float) and pd.isna(v)):
            return ""
        if col in raw:
            return _LINE_BREAKS.sub(" ", str(v))
        if col in code:
            return md_code(v)
        if isinstance(v, float):
            v = floatfmt.format(v)
        return escape_md(v)

    lines = ["| " + " | ".join(escape_md(c) for c in df.columns) + " |",
             "| " + " | ".join("---" for _ in df.columns) + " |"]
    for row in df.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(cell(c, v) for c, v in zip(df.columns, row)) + " |")
    return "\n".join(lines)


# What rendered Markdown, pandas tables and matplotlib output use; no script, no handlers,
# no forms or frames. `style` elements stay (pandas Styler tables) with their CSS as text.
_TAGS = {"a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd",
         "del", "details", "div", "dl", "dt", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
         "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "s", "samp", "small", "span",
         "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
         "tr", "u", "ul", "style"}
_ATTRS = {"*": {"class", "id", "title", "style", "align"},
          "a": {"href", "name"}, "img": {"src", "alt", "width", "height"},
          "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan", "scope"},
          "col": {"span"}, "colgroup": {"span"}, "ol": {"start"}}


def sanitize_html(fragment: object) -> str:
    """``fragment`` with every script, event handler and ``javascript:`` URL removed (nh3).

    Keeps what reports show: headings, paragraphs, lists, tables (pandas and Markdown),
    images (``data:`` and relative URLs), code, inline styles.
    """
    import nh3
    text = fragment.decode() if isinstance(fragment, bytes) else str(fragment)
    attrs = {tag: set(v) for tag, v in _ATTRS.items()}
    return nh3.clean(text, tags=_TAGS, attributes=attrs, clean_content_tags={"script"},
                     url_schemes={"http", "https", "mailto", "data"}, link_rel=None,
                     strip_comments=True)
