"""The traffic log of ``toolsel serve``: each search and the tools the agent then called.

Opt-in (``toolsel serve --log FILE``). JSON Lines, its first line toolsel's mark for this log,
``// written by toolsel serve`` (every JSONL reader of toolsel skips it); then one record per
event, written as it happens, one ``write`` per line (a gateway killed at any point leaves
whole lines, at worst one unfinished last line, which the reader skips and names)::

    {"event": "start", "run": "3f2a...", "servers": ["mcp-time", "notes"], "tools": 5,
     "selector": "default+labels (model.json), top_k 10"}
    {"event": "search", "run": "3f2a...", "session": "default", "search": 1,
     "query": "what time is it in Tokyo", "sent": ["get_current_time", ...]}
    {"event": "call", "run": "3f2a...", "session": "default", "search": 1,
     "tool": "get_current_time", "ok": true}

``run`` is a random id per gateway start; ``search`` numbers the searches of one run; a call
names the last search of its session before it (``null`` when there was none).

The file: created when missing; when it exists, the gateway **appends** to it only if its
first line is that mark (a log an earlier ``toolsel serve`` wrote); anything else there (a
file toolsel did not write, another command's output, a symbolic link, a folder) is refused
before the gateway starts, ``--force`` or not. Its folder is judged with every link followed
(:func:`toolsel.io.refuse_never_write`); the name itself is never followed.

:func:`read_traffic` reads a log back as the requests ``toolsel label --from LOG`` offers: one
per search, with the tools called after it in its session (until that session's next
search, with a result that was not an error) proposed as its expected tools.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data import DataError, loads_json, read_text
from ..io import OutputError, jsonl_line, jsonl_lines, jsonl_mark, owned_by_me, \
    refuse_never_write, write_target

__all__ = ["LOG_MARK", "TrafficLog", "open_log", "is_traffic_log", "read_traffic",
           "TrafficRequest", "new_run_id"]

#: The first line of every traffic log (without its newline).
LOG_MARK = jsonl_mark("serve").rstrip("\n")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
#: The events of a log, each with the fields it must have (and their types).
EVENTS: dict[str, dict[str, tuple[type, ...]]] = {
    "start": {"run": (str,)},
    "search": {"run": (str,), "session": (str,), "search": (int,), "query": (str,),
               "sent": (list,)},
    "call": {"run": (str,), "session": (str,), "tool": (str,), "ok": (bool,)},
}


def new_run_id() -> str:
    """A random id for one gateway run (so two runs appended to one log never mix)."""
    return secrets.token_hex(6)


class TrafficLog:
    """An open traffic log: :meth:`write` appends one record as one line. Thread-safe."""

    def __init__(self, path: Path, fd: int, appended: bool, lines: int):
        self.path = path
        self.appended = appended
        #: lines already in the file when it was opened (0 for a new log)
        self.lines_before = lines
        self._fd = fd
        self._lock = threading.Lock()

    def write(self, record: Mapping[str, Any]) -> None:
        data = (jsonl_line(dict(record)) + "\n").encode("utf-8")
        with self._lock:
            if self._fd < 0:
                raise ValueError(f"{self.path}: the traffic log is closed")
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> TrafficLog:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _refuse(path: Path, why: str) -> OutputError:
    return OutputError(path, f"{why}; toolsel serve appends only to a traffic log it wrote "
                             f"(first line {LOG_MARK!r}) and never writes through a link: "
                             "give a new file or an earlier log of toolsel serve")


def _existing_log(path: Path, fd: int) -> int:
    """Check the file open at ``fd`` is a traffic log of this user; its number of lines.
    A last line without its newline (a gateway killed while writing) is ended first."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, "is not a regular file")
    if not owned_by_me(st):
        raise _refuse(path, "belongs to another user")
    with open(os.dup(fd), "rb", closefd=True) as fh:  # O_APPEND fd: reads from the start
        fh.seek(0)
        first = fh.readline()
        if first.rstrip(b"\r\n") != LOG_MARK.encode():
            raise _refuse(path, "exists and is not a traffic log of toolsel serve")
        fh.seek(0)
        data = fh.read()
    if data and not data.endswith(b"\n"):
        os.write(fd, b"\n")
    return data.count(b"\n")


def open_log(path: str | os.PathLike) -> TrafficLog:
    """Open ``path`` as the traffic log: create it (with its mark line) or append to an
    earlier traffic log (see the module docstring); :class:`OutputError` naming the file for
    anything else."""
    shown = Path(path)
    refuse_never_write(shown, file=True)
    real = write_target(shown)
    if real.name in ("", ".", ".."):
        raise OutputError(shown, "names a folder; give a file name for the log")
    flags = os.O_APPEND | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags | os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        created = True
    except FileExistsError:
        created = False
    except OSError as exc:
        raise OutputError(shown, f"cannot create the log: {exc.strerror or exc}") from None
    if created:
        os.write(fd, (LOG_MARK + "\n").encode())
        return TrafficLog(shown, fd, appended=False, lines=0)
    if os.path.islink(real):
        raise _refuse(shown, f"is a symbolic link (to {os.readlink(real)})")
    try:
        fd = os.open(real, flags | os.O_RDWR)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refuse(shown, "is a symbolic link") from None
        if exc.errno == errno.EISDIR:
            raise _refuse(shown, "is a folder") from None
        raise OutputError(shown, f"cannot open the log: {exc.strerror or exc}") from None
    try:
        lines = _existing_log(shown, fd)
    except BaseException:
        os.close(fd)
        raise
    return TrafficLog(shown, fd, appended=True, lines=lines)


# --------------------------------------------------------------------------------------------
# reading a log back


def is_traffic_log(text: str) -> bool:
    """Whether ``text`` (a file's content) is a traffic log: its first line is the mark."""
    return text.lstrip("\ufeff").split("\n", 1)[0].rstrip("\r") == LOG_MARK


@dataclass(frozen=True)
class TrafficRequest:
    """One search of a log: its request text, the tools called after it in its session with
    a result that is not an error (in the order first called), those whose every call after
    it was an error (``failed``), and where it is (``"line N"``)."""

    query: str
    called: tuple[str, ...]
    location: str
    session: str
    run: str
    failed: tuple[str, ...] = ()


def _check_record(rec: Any, path: Path, loc: str) -> dict:
    if not isinstance(rec, dict):
        raise DataError(f"expected an object, got {type(rec).__name__}", path=path,
                        location=loc)
    event = rec.get("event")
    if event not in EVENTS:
        raise DataError(f"unknown event {event!r}; a traffic log has "
                        f"{', '.join(map(repr, EVENTS))}", path=path, location=loc,
                        field="event")
    for key, kinds in EVENTS[event].items():
        value = rec.get(key)
        if not isinstance(value, kinds) or (kinds == (int,) and isinstance(value, bool)):
            raise DataError(f"expected a {kinds[0].__name__}", path=path, location=loc,
                            field=key)
    return rec


def read_traffic(path: str | os.PathLike) -> tuple[list[TrafficRequest], list[str]]:
    """The searches of a traffic log, each with the tools then called, and notes (a last
    line left unfinished, calls before any search). Raises :class:`DataError` naming the
    file, the line and the field for a bad record."""
    path = Path(path)
    text = read_text(path)
    if not is_traffic_log(text):
        raise DataError(f"not a traffic log of toolsel serve (its first line is not "
                        f"{LOG_MARK!r})", path=path)
    lines = list(jsonl_lines(text))[1:]
    notes: list[str] = []
    searches: list[tuple[str, str, str, str]] = []  # (key, query, loc, session)
    called: dict[str, dict[str, bool]] = {}  # search -> tool -> any call of it succeeded
    last: dict[tuple[str, str], str] = {}  # (run, session) -> key of its last search
    for n, (lineno, line) in enumerate(lines):
        if not line.strip():
            continue
        loc = f"line {lineno}"
        try:
            rec = loads_json(line)
        except ValueError as exc:
            if all(not x.strip() for _, x in lines[n + 1:]):
                notes.append(f"{path}, {loc}: an unfinished last line (the gateway was "
                             "stopped while writing it): skipped")
                continue
            raise DataError(f"invalid JSON: {getattr(exc, 'msg', exc)}", path=path,
                            location=loc) from None
        rec = _check_record(rec, path, loc)
        if rec["event"] == "search":
            key = f"{rec['run']}/{rec['search']}"
            searches.append((key, rec["query"], loc, rec["session"]))
            called[key] = {}
            last[(rec["run"], rec["session"])] = key
        elif rec["event"] == "call":
            key = last.get((rec["run"], rec["session"]))
            if key is None:
                notes.append(f"{path}, {loc}: a call of {rec['tool']!r} before any search "
                             "of its session: nothing to propose it for")
            else:
                calls = called[key]
                calls[rec["tool"]] = calls.get(rec["tool"], False) or rec["ok"]
    out = [TrafficRequest(q, tuple(t for t, ok in called[key].items() if ok), loc, session,
                          key.split("/")[0], tuple(t for t, ok in called[key].items() if not ok))
           for key, q, loc, session in searches]
    return out, notes
