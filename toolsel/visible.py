"""Characters from data shown, never obeyed: one function for every output channel.

A tool name, a request or a file name can hold characters that act instead of showing:
control characters (``\\r`` returns to the start of the line and lets the rest overwrite
what was printed, ``\\x1b[2J`` clears a terminal), bidirectional overrides and isolates
(U+202A-U+202E, U+2066-U+2069: U+202E shows the rest of the line reversed), and line
separators other than ``\\n`` (U+2028, U+2029, U+0085) that some readers take for a line end.
:func:`visible` writes each as a visible escape (``\\r``, ``\\x1b``, ``\\u202e``); the
terminal (:mod:`toolsel.cli.terminal`), the Markdown of reports and of ``check --summary``
(:mod:`toolsel.report.markdown`, and through it the HTML pages) and JUnit XML
(:mod:`toolsel.report.check_outputs`) all pass data through it.
"""

from __future__ import annotations

import re

__all__ = ["visible", "INVISIBLE"]

#: What :func:`visible` escapes: C0 and C1 control characters and DEL, the Arabic letter
#: mark, left-to-right and right-to-left marks, bidirectional embeddings, overrides and
#: isolates, the line and paragraph separators, and lone surrogates (bytes that were not
#: UTF-8).
INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                       "\u2028\u2029\ud800-\udfff]")
_NAMED = {"\r": "\\r", "\n": "\\n", "\t": "\\t"}


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: object, keep: str = "") -> str:
    """``text`` with every character of :data:`INVISIBLE` but those in ``keep`` (e.g.
    ``"\\t\\n"``) written as a visible escape: ``\\r``, ``\\t``, ``\\n``, ``\\xNN`` or
    ``\\uXXXX``."""
    text = str(text)
    return INVISIBLE.sub(lambda m: m.group(0) if m.group(0) in keep else _escape(m.group(0)),
                         text)
