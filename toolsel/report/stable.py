"""Report files compared at a stated tolerance, because a float model's last digits are not
the same on every CPU.

The embedding encoder (onnxruntime) picks its kernels by the CPU's instruction set, so a cosine
computed on one machine can differ from another's in about the seventh significant digit
(seen: ``0.105349`` written on one machine, ``0.105348`` on another). Tables are written with
six decimals, so such a score can change its last written digit. Two files are *equal within
tolerance* when they are the same text but for numbers, and each pair of differing numbers is
within :data:`RTOL` of each other (relative) or :data:`ATOL` (absolute), or written with at
least :data:`MIN_SIG_LAST_DIGIT` significant digits and one unit apart in the last one (a value
rounded for display whose drift crossed a rounding boundary). A change a reader can
see (a rank, a count, a percentage shown with one decimal) is far above it.

:func:`keep_equal_files` lets a report run keep the previous bytes of a file whose new content
is equal within tolerance, so regenerating the reports on another machine of the same kind
leaves ``git status`` clean; the test suite compares committed tables with
:func:`equal_within_tolerance` for the same reason.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["RTOL", "ATOL", "MIN_SIG_LAST_DIGIT", "TEXT_SUFFIXES", "equal_within_tolerance", "differing_numbers",
           "keep_equal_files"]

#: Relative tolerance between two numbers at the same place of two files.
RTOL = 1e-4
#: Absolute tolerance (numbers near zero, e.g. a score of 0.000001 against 0.000002).
ATOL = 5e-6
#: A number written with at least this many significant digits may also differ by one unit in
#: its last digit (a rounding boundary crossed), whatever the relative tolerance.
MIN_SIG_LAST_DIGIT = 4
#: Files compared by their text; any other file (a PNG) must be byte-identical.
TEXT_SUFFIXES = frozenset({".csv", ".json", ".html", ".ipynb", ".md", ".svg", ".txt"})

_NUMBER = re.compile(rb"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _split(data: bytes) -> tuple[list[bytes], list[bytes]]:
    """The text between numbers, and the numbers, of ``data``."""
    return _NUMBER.split(data), _NUMBER.findall(data)


def differing_numbers(new: bytes, old: bytes, *, rtol: float = RTOL,
                      atol: float = ATOL) -> list[tuple[str, str]] | None:
    """The pairs of numbers that differ between ``new`` and ``old`` (all within tolerance), or
    ``None`` when the two are not equal within tolerance (other text differs, or a number by
    more than the tolerance)."""
    if new == old:
        return []
    text_new, nums_new = _split(new)
    text_old, nums_old = _split(old)
    if text_new != text_old or len(nums_new) != len(nums_old):
        return None
    pairs = []
    for a, b in zip(nums_new, nums_old):
        if a == b:
            continue
        x, y = float(a), float(b)
        if abs(x - y) > max(atol, rtol * max(abs(x), abs(y))) and not _last_digit(a, b):
            return None
        pairs.append((a.decode(), b.decode()))
    return pairs


def _digits(num: bytes) -> tuple[int, int] | None:
    """(significant digits, decimals) as ``num`` is written; ``None`` with an exponent."""
    if b"e" in num.lower():
        return None
    mantissa = num.lstrip(b"+-")
    decimals = len(mantissa.split(b".")[1]) if b"." in mantissa else 0
    return len(mantissa.replace(b".", b"").lstrip(b"0")), decimals


def _last_digit(a: bytes, b: bytes) -> bool:
    """Whether ``a`` and ``b``, written with the same decimals and at least
    :data:`MIN_SIG_LAST_DIGIT` significant digits, differ by one unit in their last digit: a
    value a CPU's drift moved across a rounding boundary (0.10535 written 0.1054 on one machine,
    0.1053 on another)."""
    da, db = _digits(a), _digits(b)
    if da is None or db is None or da[1] != db[1] or min(da[0], db[0]) < MIN_SIG_LAST_DIGIT:
        return False
    unit = 10 ** da[1]
    return abs(round(float(a) * unit) - round(float(b) * unit)) == 1


def equal_within_tolerance(new: bytes, old: bytes, *, rtol: float = RTOL,
                           atol: float = ATOL) -> bool:
    """Whether ``new`` and ``old`` are the same but for numbers within tolerance."""
    return differing_numbers(new, old, rtol=rtol, atol=atol) is not None


def _regular_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def keep_equal_files(built: str | os.PathLike, previous: str | os.PathLike) -> list[str]:
    """Give each text file under ``built`` the bytes of its counterpart under ``previous`` when
    the two are equal within tolerance but not byte-identical; returns those files (relative,
    POSIX).

    ``built`` is a folder (or one file) this run wrote; ``previous`` the same place in the
    previous output. Only regular files are read from ``previous`` (no link is followed) and
    only files in ``built`` are written.
    """
    built, previous = Path(built), Path(previous)
    if _regular_file(built):
        pairs, root = [(built, previous, built.name)], previous.parent
    elif built.is_dir() and not built.is_symlink():
        pairs, root = [], previous
        for d, _dirs, files in os.walk(built):
            for f in files:
                rel = (Path(d) / f).relative_to(built)
                pairs.append((built / rel, previous / rel, rel.as_posix()))
    else:
        return []
    kept = []
    for new, old, rel in pairs:
        if new.suffix.lower() not in TEXT_SUFFIXES or not _regular_file(new):
            continue
        # the previous file is read only where it really lies inside ``previous``
        if not _regular_file(old) or root.resolve() not in old.resolve().parents:
            continue
        new_bytes, old_bytes = new.read_bytes(), old.read_bytes()
        if new_bytes != old_bytes and equal_within_tolerance(new_bytes, old_bytes):
            new.write_bytes(old_bytes)
            kept.append(rel)
    return sorted(kept)
