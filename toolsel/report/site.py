"""The HTML site of a report folder: page titles and summaries, each page's navigation,
and the entry page (``index.html``)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..io import write_text
from .plan import HEADING, read_notebook, notebook_title
from .readme import headline_parts

if TYPE_CHECKING:
    from .plan import NotebookRun

__all__ = ["page_title", "notebook_summary", "page_headings", "link_pages", "render_index",
           "write_index"]

# --------------------------------------------------------------------------------------------
# pages: titles, navigation, and the entry page (index.html)

_MD_MARKUP = re.compile(r"[`*]|(?<!\w)_|_(?!\w)|\\(?=[^\w\s])")
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")
_PAGE_GLOB = "[0-9][0-9]_*.html"
NAV_START, NAV_END = "<!-- toolsel:nav -->", "<!-- /toolsel:nav -->"
FOOT_START, FOOT_END = "<!-- toolsel:foot -->", "<!-- /toolsel:foot -->"
TITLE_TAG = re.compile(r"<title>(.*?)</title>", re.S)
_H2 = re.compile(r'<h2 id="([^"<>]+)"[^>]*>(.*?)</h2>', re.S)
_TAG = re.compile(r"<[^>]*>")

# page furniture: navigation bar, contents, and tables that stay within the page width
PAGE_CSS = """<style type="text/css">
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
    nb = read_notebook(Path(path))
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
        paras = [p for p in re.split(r"\n\s*\n", HEADING.sub("", src)) if p.strip()]
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


def main_part(page: str) -> tuple[int, int]:
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
    start, end = main_part(page)
    body = page[start:end]
    for region in ((NAV_START, NAV_END), (FOOT_START, FOOT_END)):
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
        m = TITLE_TAG.search(text)
        titles[p] = unescape(m.group(1)).strip() if m else p.stem
    for i, p in enumerate(pages):
        text = texts[p]
        if NAV_START not in text:
            continue
        prev = (pages[i - 1].name, f"{pages[i - 1].stem[:2]} · {titles[pages[i - 1]]}") \
            if i > 0 else None
        nxt = (pages[i + 1].name, f"{pages[i + 1].stem[:2]} · {titles[pages[i + 1]]}") \
            if i + 1 < len(pages) else None
        new = text
        start, end = main_part(new)
        head, body, tail = new[:start], new[start:end], new[end:]
        top = _nav_html(index, prev, nxt, page_headings(text))
        bottom = _nav_html(index, prev, nxt, foot=True)
        body = re.sub(re.escape(NAV_START) + ".*?" + re.escape(NAV_END),
                      lambda _m: NAV_START + top + NAV_END, body, count=1, flags=re.S)
        body = re.sub(re.escape(FOOT_START) + ".*?" + re.escape(FOOT_END),
                      lambda _m: FOOT_START + bottom + FOOT_END, body, count=1, flags=re.S)
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
    out += _index_headline(rep)
    out += _index_figures(rep)
    out.append('<h2>Reports</h2><div class="cards">')
    skipped = []
    for nb in notebooks:
        run = by_stem.get(nb.stem)
        if run is not None and run.skipped is not None:
            skipped.append((nb.stem, page_title(nb), run.skipped))
            continue
        out.append(_index_card(rep, nb, run))
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


def _index_headline(rep: Path) -> list[str]:
    """The index's headline table (as in the README); none when the report has none."""
    from html import escape
    head = headline_parts(rep)
    if head is None:
        return []
    header, rows, src, n = head
    out = ["<h2>Headline</h2>",
           f'<p class="source">From <a href="{escape(src)}">{escape(src)}</a>, {n} '
           "queries: share of required tools sent (R@k) and of queries with every "
           "required tool sent (Complete@k), with 95% intervals where computed (as the "
           "report's intervals.csv says: a bootstrap over queries, Wilson's for "
           "Complete@k); MRR; NDCG@k (graded where the labels carry grades); payload = "
           "name + description characters sent per query, reduction against sending "
           "every tool.</p>", "<table><thead><tr>"
           + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + f"<td>{escape(row[0])}</td>"
                   + "".join(f'<td class="num">{escape(c)}</td>' for c in row[1:])
                   + "</tr>")
    out.append("</tbody></table>")
    return out


def _index_figures(rep: Path) -> list[str]:
    """The index's figures: recall vs payload (01) and per style (06), those present."""
    from html import escape
    figs = [(sorted(rep.glob("01_*/recall_vs_payload.png")),
             "R@k against payload reduction, one curve per scorer (notebook 01)"),
            (sorted(rep.glob("06_*/style_comparison.png")),
             "Each scorer per registry style (notebook 06)")]
    figs = [(found[0], caption) for found, caption in figs if found]
    if not figs:
        return []
    out = ['<h2>Figures</h2><div class="figs">']
    for path, caption in figs:
        rel = path.relative_to(rep).as_posix()
        out.append(f'<figure><a href="{escape(rel)}"><img src="{escape(rel)}" '
                   f'alt="{escape(caption)}"/></a><figcaption>{escape(caption)}'
                   "</figcaption></figure>")
    out.append("</div>")
    return out


def _card_links(rep: Path, stem: str) -> list[str]:
    """Links of a notebook's card: its HTML page, executed notebook and table folder, those
    that exist."""
    from html import escape
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
    return links


def _index_card(rep: Path, nb: Path, run: NotebookRun | None) -> str:
    """A notebook's card on the index: topic, summary, failure if its run failed, links."""
    from html import escape
    stem = nb.stem
    links = _card_links(rep, stem)
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
    return "".join(card)


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
