"""What reaches the terminal: control characters from data shown, never obeyed.

A tool description, a query or a file name can hold escape sequences (``\\x1b[2J`` clears
the screen, ``\\x1b]52;...`` writes the clipboard). Every line a command prints goes through
:class:`SafeStream`, which shows C0/C1 control characters (except tab, newline and carriage
return, which progress lines use) and lone surrogates (bytes of a non-UTF-8 argument or
file name) as visible escapes.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator

__all__ = ["neutralize", "SafeStream", "safe_terminal", "check_argv"]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(m: re.Match) -> str:
    ch = m.group(0)
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def neutralize(text: str) -> str:
    """``text`` with control characters (but tab, newline, carriage return) and lone
    surrogates written as visible ``\\xNN`` escapes."""
    return _CONTROL.sub(_escape, text)


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
