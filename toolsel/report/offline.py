"""Exported notebook pages that load nothing from the network.

nbconvert's ``lab`` template puts require.js and MathJax (``<script src="https://...">``) in
every page's ``<head>``, a script that loads the widget renderer from a CDN, and a Mermaid
loader that imports from a CDN. No report page uses math, Mermaid or a live widget (widgets
need a kernel; ``explorer.html`` is the offline explorer), and on a network that drops packets
the blocking ``<head>`` scripts hold the first paint. :func:`strip_scripts` removes every
executable ``<script>`` element (inline or remote) and every ``<link>`` to a remote resource;
data blocks (``<script type="application/json">``, ``application/vnd.jupyter.*``) stay, inert.
:func:`remote_references` lists what a page would still fetch (for tests and checks).
"""

from __future__ import annotations

import re

__all__ = ["strip_scripts", "remote_references"]

_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]+)""", re.I)
_REMOTE_LINK = re.compile(r"""<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?//[^>]*>""", re.I)
_DATA_TYPES = ("application/json", "application/ld+json")
_REF = re.compile(
    r"""<(script|link|img|iframe|source|video|audio|embed|object)\b[^>]*?\b(src|href|data)\s*=\s*["']?\s*((?:https?:)?//[^"'\s>]+)"""
    r"""|@import\s+(?:url\()?\s*["']?((?:https?:)?//[^"')\s]+)"""
    r"""|url\(\s*["']?((?:https?:)?//[^"')\s]+)"""
    r"""|import\(\s*["']((?:https?:)?//[^"']+)""", re.I)


def _is_data(attrs: str) -> bool:
    m = _TYPE.search(attrs)
    if not m:
        return False
    kind = m.group(1).lower()
    return kind in _DATA_TYPES or kind.startswith("application/vnd.jupyter.")


def strip_scripts(page: str) -> str:
    """``page`` without executable scripts and remote ``<link>`` elements (data blocks kept)."""
    page = _SCRIPT.sub(lambda m: m.group(0) if _is_data(m.group(1)) else "", page)
    return _REMOTE_LINK.sub("", page)


def remote_references(page: str) -> list[str]:
    """URLs a browser would fetch from the network for ``page``: ``src``/``href`` of scripts,
    stylesheets, images and frames, CSS ``@import``/``url()`` and script ``import()`` of an
    ``http(s)://`` or protocol-relative address. Links (``<a href>``) and the text of data
    blocks are not fetched and not listed."""
    out = []
    page = _SCRIPT.sub(lambda m: "" if _is_data(m.group(1)) else m.group(0), page)
    for m in _REF.finditer(page):
        url = next(g for g in m.groups()[2:] if g)
        out.append(url)
    return out
