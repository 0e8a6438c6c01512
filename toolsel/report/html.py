"""Data strings into Markdown and HTML, safely: escaping for notebooks, sanitizing for export.

Tool names, descriptions and query text come from the user's files. Anything of theirs that a
notebook puts into ``Markdown(...)`` goes through :func:`toolsel.report.markdown.escape` (prose,
table cells) or :func:`toolsel.report.markdown.code` (a name shown as code); :func:`md_table`
builds a whole table that way. The
HTML export then runs every Markdown cell and HTML output through :func:`sanitize_html`, so a
string a notebook forgot to escape shows as text, never as a live tag or handler.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from . import markdown

__all__ = ["md_table", "sanitize_html", "fill_image_alt", "NO_ALT"]

#: The alternative text nbconvert gives an image that has none.
NO_ALT = "No description has been provided for this image"


def fill_image_alt(page: str, nb) -> str:
    """``page`` (nbconvert HTML of ``nb``) with each output image's alternative text taken from
    its output metadata (``{"image/png": {"alt": ...}}``, set by
    :func:`toolsel.report.plots.save_figure`) instead of nbconvert's placeholder.

    nbconvert's lab template ignores that metadata and writes :data:`NO_ALT` on every output
    image, in output order: the placeholders are matched to the PNG outputs in that order
    (left as they are if the counts differ).
    """
    import html as _html
    import re as _re
    alts = []
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            if "image/png" in out.get("data", {}):
                meta = out.get("metadata", {}).get("image/png", {})
                alts.append(meta.get("alt") if isinstance(meta, dict) else None)
    placeholder = f'alt="{NO_ALT}"'
    if page.count(placeholder) != len(alts):
        return page
    it = iter(alts)

    def repl(_m):
        alt = next(it)
        return f'alt="{_html.escape(alt, quote=True)}"' if alt else placeholder
    return _re.sub(_re.escape(placeholder), repl, page)



def md_table(df: pd.DataFrame, *, code: Iterable[str] = (), raw: Iterable[str] = (),
             floatfmt: str = "{:.3f}") -> str:
    """Every row of ``df`` as a Markdown table: :func:`toolsel.report.markdown.table` with
    ``floatfmt`` for float columns and no row limit."""
    floats = {str(c): floatfmt for c in df.columns
              if pd.api.types.is_float_dtype(df[c]) and str(c) not in set(code) | set(raw)}
    return markdown.table(df, floats, max_rows=None, code=code, raw=raw)


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
