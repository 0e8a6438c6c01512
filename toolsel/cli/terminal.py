"""What reaches the terminal: control characters from data shown, never obeyed.

A tool description, a query or a file name can hold escape sequences (``\\x1b[2J`` clears
the screen, ``\\x1b]52;...`` writes the clipboard), a carriage return that lets the rest of
a line overwrite it, or a bidirectional override that reverses it. Two layers, one escaping
function (:func:`toolsel.visible.visible`):

- every path, id, tool name, note or error a command puts into a line is passed through
  ``visible`` where it is interpolated, so a newline or tab in data shows as ``\\n``/``\\t``
  and cannot start a line of its own;
- every write then goes through :class:`SafeStream`, which shows the same characters as
  escapes (control, bidi and line-separator characters, lone surrogates) except the tabs
  and newlines of the command's own lines, and a carriage return that starts what is
  written (how a progress bar redraws its line): what a missed interpolation lets through
  can still not act on the terminal.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from ..visible import visible

__all__ = ["neutralize", "SafeStream", "safe_terminal", "check_argv"]

def neutralize(text: str) -> str:
    """``text`` as the terminal shows it: :func:`toolsel.visible.visible` but tab, newline,
    and one carriage return at the very start (a progress bar redrawing its line)."""
    if text.startswith("\r"):
        return "\r" + visible(text[1:], keep="\t\n")
    return visible(text, keep="\t\n")


class SafeStream:
    """A text stream passing every write through :func:`neutralize`."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(neutralize(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def safe_terminal() -> Iterator[None]:
    """Route ``sys.stdout`` and ``sys.stderr`` through :class:`SafeStream` while the block runs."""
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = old


def check_argv(argv: list[str]) -> None:
    """Refuse an argument that is not valid UTF-8 (it reaches Python as lone surrogates),
    naming it with its bytes escaped."""
    for i, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"argument {i} ({neutralize(arg)!s}) is not valid UTF-8; give "
                             "paths and text in UTF-8") from None
