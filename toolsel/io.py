"""Writing output files: atomic files, a run's files swapped in as one set, one writer at a time.

The one place where toolsel writes data outputs (tables, registries, JSON). The guarantees:

- **Resolve, then judge.** Every destination is judged on its real path: every symbolic link
  followed first, then ``..`` (``lnk/../toolsel/x`` is judged where the kernel would write it,
  not where the text points). A single file's real path is its folder's real path plus its own
  name, never followed (:func:`write_target`).
- **Atomic files, never through a link** (:func:`write_text`, :func:`write_table`,
  :func:`write_json`, :func:`write_registry`, :func:`write_bytes`): the target's folder is
  opened (``O_DIRECTORY|O_NOFOLLOW``) and checked to be the folder judged (``/proc/self/fd``;
  the ``judged`` path :func:`check_output_file` returned, when given); a temporary file with
  a unique name is created in it (``O_CREAT|O_EXCL|O_NOFOLLOW``, relative to that
  descriptor) and renamed over the name (``renameat``: a link there is replaced, never
  followed). A reader sees the old file or the new one. Files are created like ``open()``
  creates them: mode ``0o666`` minus the user's umask.
- **A command never replaces what it did not write, nor what it reads.** At the name, a
  symbolic link is refused unless ``force`` (then the link itself is replaced); anything but a
  regular file is refused; an existing file is replaced only when its content carries
  toolsel's mark in its own format (:func:`has_mark`: a last ``<!-- written by toolsel ... -->``
  line in Markdown, a JUnit ``<property name="written_by">``, a registry's
  ``_meta.written_by``, a first ``// written by toolsel ...`` line in JSONL, which every
  reader skips; a model's ``format``, a baseline that parses) or with ``force``. Checked
  before any work (:func:`check_output_file`) and again on the descriptor as the file is
  replaced. No output may be one of the command's inputs or another output: same real path
  or same (device, inode) (:func:`refuse_inputs`, one helper for every command).
- **Updating a user's file** (``toolsel label`` appends to the labeled file it reads):
  :func:`maintained_file`. A link there is followed only to an existing, non-empty regular
  file of the running user, whose content the command then validates as its kind (a labeled
  file); the real file is judged (:func:`refuse_never_write`), read through one descriptor,
  and rewritten in its own folder only if it is still the file read (``expect``: device and
  inode). So a committed link can make ``label`` create nothing elsewhere (a dangling link, a
  link to a missing ``~/.profile``) and replace nothing it could not read as labels
  (``~/.bashrc``) or that belongs to another user.
- **Whole sets** (:func:`write_set`): a run's files (``summary.csv``, ``query_metrics.csv``,
  ...) are written into a staging folder beside ``out_dir`` and swapped in with one atomic
  ``rename`` (Linux ``renameat2(RENAME_EXCHANGE)`` when the folder exists), through the
  descriptor of the output's folder, checked again just before the rename
  (:func:`still_at`): a folder moved or a link put on its way meanwhile fails the run and
  nothing is written where the path now leads. Staging folders are private (0o700) while
  they are filled. A reader, or a
  run killed at any point, sees the old complete set or the new complete set, never a mix.
  Other files already in ``out_dir`` are carried over (hard links). Leftovers of a killed
  run are removed by the next run, recognized only by what that run recorded: a journal
  beside the folder (``.NAME.toolsel-journal-ID``) naming the random ID of its
  ``.NAME.staging-ID``/``.NAME.old-ID`` folders (for a name too long to carry these
  suffixes within 255 bytes, ``NAME`` is its first bytes and a digest: :func:`side_stem`).

  When the folder cannot be swapped as a whole (it holds sub-folders, is or contains the
  current directory, is a mount point, is another user's, or its parent is not writable) the
  set is staged in ``out_dir/.toolsel-staging-ID``, marked complete by one rename, then moved
  in file by file; a run killed during that last step is completed (rolled forward) by the
  next one. That folder is private (:func:`make_private_dir`): a record inside it names the
  plain names the set removes; only such a folder is rolled forward or dropped.
- **Bookkeeping only toolsel can write.** A record that can make toolsel move or delete
  anything (a journal, a private folder's record) is accepted only when the record and its
  folder are real entries (no links, ``lstat``) owned by the running user, and its HMAC-SHA256
  over its canonical JSON (which names the folder's real path, device and inode) verifies
  under this user's secret: 32 random bytes in ``record-key`` (mode 0600) in toolsel's state
  folder (:func:`state_dir`: ``$TOOLSEL_STATE``, else ``$XDG_STATE_HOME/toolsel``, else
  ``~/.local/state/toolsel``; mode 0700), created atomically the first time a record is
  written and refused if another user owns it or others can read it. Copying a folder's
  device and inode into a record (``stat`` shows them), a record planted by another user in a
  shared folder, a link, a copy: all left alone, never followed.
- **Pairs** (:func:`write_pair`): a registry and its labeled queries are committed as one
  step through an authenticated journal (temporary files named before they exist, a rename
  of the journal as the commit point, then the renames); the next run rolls a killed run
  forward or back first (:func:`recover_pair`), so its temporary files never outlive it.
- **Files read back**: one JSONL writer (:func:`jsonl_line`; U+2028, U+2029, U+0085 escaped)
  and reader (:func:`jsonl_lines`, newline the only separator) for every JSONL file.
- **Places never written** (:func:`refuse_never_write`): ``/``, the home folder and its
  ancestors, toolsel's state folder, ``/dev``, ``/proc``, ``/sys``, any toolsel checkout and
  its source folders, judged on real paths; and no output through a link another user put
  in a shared sticky folder (:func:`shared_folder_link`, the kernel's protected_symlinks
  rule, which resolving paths in Python would otherwise bypass).
- **One writer per folder**: :func:`write_set` holds an exclusive lock on the folder's parent
  (``flock``, released by the kernel even when the process is killed) while it stages and
  swaps. A second writer waits up to ``timeout`` seconds (default :data:`LOCK_TIMEOUT`), then
  raises :class:`OutputError` naming the folder.

:func:`check_output_dir` and :func:`check_output_file` check a destination *before* any
computation starts, so a bad ``--out`` fails in a second, not after the sweep.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .jsonl import dumps as _dumps
from .jsonl import jsonl_line, jsonl_lines, jsonl_text

__all__ = ["OutputError", "write_bytes", "write_text", "write_table", "write_json",
           "write_jsonl", "write_registry", "write_set", "check_output_dir",
           "check_output_file", "folder_lock", "recover_set", "link_tree", "BUILD_PREFIX",
           "jsonl_line", "jsonl_text", "jsonl_lines", "write_target", "refuse_never_write",
           "maintained_file", "refuse_inputs", "has_mark", "jsonl_mark", "state_dir",
           "make_private_dir", "is_private_dir", "write_pair", "recover_pair", "read_regular",
           "LOCK_TIMEOUT", "FLOAT_FORMAT"]

#: Floats in every CSV table: 6 decimals, so tables regenerate byte-identically.
FLOAT_FORMAT = "%.6f"
#: Seconds :func:`write_set` waits for another process writing the same folder.
LOCK_TIMEOUT = 120.0
#: Temporary files older than this (seconds) beside a target are a killed writer's leftovers.
_STALE_TMP_S = 600.0
_IN_PLACE_STAGING = ".toolsel-staging-"
_IN_PLACE_COMMIT = ".toolsel-commit-"
#: Private build folders (``OUT/.toolsel-build-*``) a long run fills before its set is
#: written: never carried over into a new set.
BUILD_PREFIX = ".toolsel-build-"


class OutputError(OSError):
    """An output file or folder cannot be written (and why), or another process is writing it."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return self.args[0]


# --------------------------------------------------------------------------------------------
# single files


#: Longest name of a folder entry, in bytes (most file systems' limit).
NAME_MAX = 255
#: What the longest side name adds to its stem: ``.`` + ``.toolsel-paircommit-`` + a token.
_SIDE_ROOM = 1 + 20 + 12


def side_stem(name: str) -> str:
    """The stem of the temporary, staging, old and journal names toolsel puts beside ``name``
    (``.STEM.TOKEN.tmp``, ``.STEM.toolsel-journal-TOKEN``, ...): ``name`` itself, or, when
    ``name`` is too long to carry such a suffix within :data:`NAME_MAX` bytes, its first bytes,
    ``~`` and 16 hex digits of its SHA-256. The same on every run, so a later run recognizes
    what a killed one left beside the same name."""
    raw = os.fsencode(name)
    if len(raw) + _SIDE_ROOM <= NAME_MAX:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:16]
    head = raw[:NAME_MAX - _SIDE_ROOM - 17]
    for cut in range(4):  # never half a character: the name also goes into journals (JSON)
        try:
            return head[:len(head) - cut].decode(sys.getfilesystemencoding()) + "~" + digest
        except UnicodeDecodeError:
            continue
    return "~" + digest


def _token() -> str:
    return secrets.token_hex(6)


def create_unique(directory: Path, prefix: str, suffix: str) -> tuple[int, Path]:
    """Create a new file with a unique name, mode 0o666 minus umask (unlike mkstemp's 0o600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        path = directory / f"{prefix}{_token()}{suffix}"
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "could not create a unique temporary file", str(directory))


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_HAS_DIR_FD = os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd  # (replace too)


def _remove_stale_temps(dfd: int, name: str) -> None:
    """Remove temporary files of ``name`` that a killed writer left in the folder ``dfd``
    (exactly our temporary names, regular files of this user, older than 10 minutes)."""
    now = time.time()
    pattern = re.compile(rf"\.{re.escape(side_stem(name))}\.[0-9a-f]{{12}}\.tmp")
    with contextlib.suppress(OSError):
        for entry in os.listdir(dfd):
            if not pattern.fullmatch(entry):
                continue
            with contextlib.suppress(OSError):
                st = os.stat(entry, dir_fd=dfd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and owned_by_me(st) and now - st.st_mtime > _STALE_TMP_S:
                    os.unlink(entry, dir_fd=dfd)


def owned_by_me(st: os.stat_result) -> bool:
    """Owned by the user running toolsel (always true where there are no user ids)."""
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def write_target(path: str | os.PathLike) -> Path:
    """The path a single-file output really names: its folder with every link followed (and
    ``..`` after the links), then its own name, never followed (a link there is replaced by
    :func:`write_bytes` with ``force``, else refused). ``.``/``..`` as a last part: the
    folder it names."""
    path = Path(path)
    name = os.path.basename(os.fspath(path))
    if name in ("", ".", ".."):
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(os.path.dirname(os.fspath(path)) or ".")) / name


def maintained_file(path: str | os.PathLike) -> Path:
    """The real file a command that *updates* a user's file (``toolsel label`` appending to a
    labeled file) reads and rewrites: ``path`` itself, or the file a symbolic link there
    points to, which must then exist, be a non-empty regular file of this user, and (checked
    by the caller) hold valid content of its kind. The file is rewritten in its own folder,
    through that folder's descriptor, and only if it is still the file read
    (:func:`write_bytes` ``expect``). So a link never makes toolsel create a file elsewhere
    (a dangling link, or one to a missing ``~/.profile``, is refused), nor replace a file it
    could not read as its kind (``~/.bashrc`` is not a labeled file), nor another user's."""
    shown = Path(path)
    refuse_shared_folder_links(shown)
    if not shown.is_symlink():
        return shown
    real = Path(os.path.realpath(shown))
    try:
        st = os.stat(real, follow_symlinks=False)
    except OSError:
        st = None
    why = ("points to nothing" if st is None else
           "does not point to a regular file" if not stat.S_ISREG(st.st_mode) else
           "points to another user's file" if not owned_by_me(st) else
           "points to an empty file" if st.st_size == 0 else None)
    if why is not None:
        raise OutputError(shown, f"is a symbolic link that {why} ({real}); toolsel follows a "
                                 "link only to an existing file of yours that it updates: "
                                 "give the file itself")
    return real


def open_folder(shown: Path, real: Path) -> int:
    """A descriptor of the folder ``real`` (no link followed at its last part), checked to be
    the folder at that real path (``/proc/self/fd`` where there is one): a folder swapped for a
    link between the check and the write is refused."""
    try:
        try:
            dfd = os.open(real, os.O_RDONLY | _DIRECTORY | NOFOLLOW)
        except PermissionError:  # a folder one may write but not list: a path descriptor
            if not hasattr(os, "O_PATH"):
                raise
            dfd = os.open(real, os.O_PATH | _DIRECTORY | NOFOLLOW)
    except OSError as exc:
        raise OutputError(shown, f"cannot open its folder {real}: {exc.strerror or exc}") from None
    try:
        still_at(dfd, shown, real)
    except BaseException:
        os.close(dfd)
        raise
    return dfd


def still_at(dfd: int, shown: Path, real: Path) -> None:
    """Refuse (:class:`OutputError`) unless the folder open as ``dfd`` is still the folder at
    the real path ``real`` (``/proc/self/fd``, else device and inode): checked when it is
    opened and again just before a rename through it, so a folder moved, or a link put on its
    way, after the check leaves nothing written where the path now leads."""
    proc = f"/proc/self/fd/{dfd}"
    try:
        if os.path.exists(proc):
            ok = os.readlink(proc) == str(real)
        else:  # pragma: no cover - no /proc: the same folder by identity
            ok = file_identity(os.fstat(dfd)) == file_identity(os.stat(real,
                                                                        follow_symlinks=False))
        ok = ok and stat.S_ISDIR(os.fstat(dfd).st_mode)
    except OSError:
        ok = False
    if not ok:
        raise OutputError(shown, f"its folder {real} was replaced while it was written "
                                 "(moved, or a link put on its way: another program is "
                                 "changing it); nothing written there")


#: How much of an existing output is read to find toolsel's mark in it.
_MAX_MARK_READ = 64 << 20


def _existing(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _read_at(dfd: int, name: str) -> bytes | None:
    """The content of the regular file ``name`` in ``dfd`` (no link followed; ``None`` if it
    is larger than :data:`_MAX_MARK_READ` or cannot be read)."""
    try:
        fd = os.open(name, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(_MAX_MARK_READ + 1)
    return None if len(data) > _MAX_MARK_READ else data


def read_regular(path: str | os.PathLike) -> bytes | None:
    """The content of the regular file at ``path`` (no link followed at its name, never a
    pipe or a device, which could block or never end), or ``None`` (missing, not a regular
    file, unreadable, or larger than 64 MB)."""
    path = Path(path)
    try:
        dfd = os.open(os.path.dirname(os.fspath(path)) or ".", os.O_RDONLY | _DIRECTORY)
    except OSError:
        return None
    try:
        return _read_at(dfd, path.name)
    finally:
        os.close(dfd)


def _judge_existing(shown: Path, dfd: int, name: str, *, force: bool,
                    owned: Callable[[bytes], bool] | None,
                    expect: tuple[int, int] | None = None) -> os.stat_result | None:
    """Refuse replacing what is at ``name`` (in the folder ``dfd``) unless it may be:

    - a symbolic link: never written through; replaced itself only with ``force``;
    - anything but a regular file (a folder, a FIFO, a device): always refused;
    - a regular file whose content ``owned`` does not recognize as toolsel's: ``force``;
    - ``expect`` (device, inode): the file must still be the one read before.
    """
    st = _existing(dfd, name)
    if st is None:
        if expect is not None:
            raise OutputError(shown, "was removed while it was being updated; nothing written")
        return None
    if stat.S_ISLNK(st.st_mode):
        if not force:
            try:
                to = os.readlink(name, dir_fd=dfd)
            except OSError:
                to = "?"
            raise OutputError(shown, f"is a symbolic link (to {to}); toolsel never writes "
                                     "through a link: remove it or choose another file (--force "
                                     "replaces the link itself, not what it points to)")
        return None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(shown, "is a folder; give a file name for the output")
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(shown, "is not a regular file (a device, FIFO or socket); toolsel "
                                 "writes only regular files: choose another file")
    if expect is not None and file_identity(st) != list(expect):
        raise OutputError(shown, "was replaced by another file while it was being updated; "
                                 "nothing written: check it and run again")
    if owned is not None and not force:
        data = _read_at(dfd, name)
        if data is None or not owned(data):
            raise OutputError(shown, "exists and was not written by toolsel (it holds no mark "
                                     "of this command's output); refusing to overwrite it: "
                                     "choose another file, or pass --force to replace it")
    return st


@contextlib.contextmanager
def naming(shown: str | os.PathLike) -> Iterator[None]:
    """Turn an OS error that names no file (a full disk, a quota, an I/O error while
    writing) into an :class:`OutputError` naming ``shown``."""
    try:
        yield
    except OutputError:
        raise
    except OSError as exc:
        if exc.filename is not None or not exc.strerror:
            raise
        raise OutputError(shown, f"cannot be written: {exc.strerror}; nothing replaced") \
            from None


def _atomic_write(path: str | os.PathLike, write: Callable[[Any], None], *,
                  text: bool, keep_mode: bool = False, force: bool = False,
                  owned: Callable[[bytes], bool] | None = None,
                  judged: str | os.PathLike | None = None,
                  expect: tuple[int, int] | None = None) -> Path:
    """Write a file through its folder's descriptor: a temporary file created there (no link
    followed), renamed over the name (a link there is replaced, not followed)."""
    with naming(path):
        return _atomic_write_named(path, write, text=text, keep_mode=keep_mode, force=force,
                                   owned=owned, judged=judged, expect=expect)


def _atomic_write_named(path: str | os.PathLike, write: Callable[[Any], None], *,
                        text: bool, keep_mode: bool = False, force: bool = False,
                        owned: Callable[[bytes], bool] | None = None,
                        judged: str | os.PathLike | None = None,
                        expect: tuple[int, int] | None = None) -> Path:
    shown = Path(path)
    name = os.path.basename(os.fspath(shown))
    if name in ("", ".", ".."):
        raise OutputError(shown, "names a folder; give a file name for the output")
    parent = Path(os.path.dirname(os.fspath(shown)) or ".")
    if not parent.exists() and not parent.is_symlink():
        _check_creatable(shown, "file")
        parent.mkdir(parents=True, exist_ok=True)
    real = write_target(shown)
    if judged is not None and Path(judged) != real:
        raise OutputError(shown, f"now leads to {real}, not to {judged} where it was checked "
                                 "(a link on its way changed); nothing written")
    if not _HAS_DIR_FD:  # pragma: no cover - no *at() calls: the plain path
        return _atomic_write_plain(shown, real, write, text=text, keep_mode=keep_mode)
    dfd = open_folder(shown, real.parent)
    try:
        st = _judge_existing(shown, dfd, name, force=force, owned=owned, expect=expect)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_BINARY", 0)
        for _ in range(100):
            tmp = f".{side_stem(name)}.{_token()}.tmp"
            try:
                fd = os.open(tmp, flags, 0o666, dir_fd=dfd)
                break
            except FileExistsError:
                continue
        else:  # pragma: no cover
            raise FileExistsError(errno.EEXIST, "could not create a unique temporary file",
                                  str(real.parent))
        try:
            with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text
                  else os.fdopen(fd, "wb")) as fh:
                write(fh)
                fh.flush()
                if keep_mode and st is not None and stat.S_ISREG(st.st_mode):
                    os.fchmod(fh.fileno(), st.st_mode & 0o7777)
                os.fsync(fh.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        _remove_stale_temps(dfd, name)
    finally:
        os.close(dfd)
    return shown


def _atomic_write_plain(shown: Path, real: Path, write, *, text: bool,
                        keep_mode: bool) -> Path:  # pragma: no cover - Windows
    if real.is_symlink():
        raise OutputError(shown, "is a symbolic link; toolsel never writes through a link")
    fd, tmp = create_unique(real.parent, f".{side_stem(real.name)}.", ".tmp")
    try:
        with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text
              else os.fdopen(fd, "wb")) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if keep_mode and real.exists():
            os.chmod(tmp, real.stat().st_mode & 0o7777)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return shown


def write_bytes(data: bytes, path: str | os.PathLike, *, keep_mode: bool = False,
                **rules: Any) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring).

    ``keep_mode``: a file rewritten in place (a user's labeled file) keeps its permissions
    instead of taking the umask's. ``rules`` (every writer takes them): ``force`` (replace a
    link there, or a file ``owned`` does not recognize), ``owned(content) -> bool`` (the
    existing file is this command's output: :func:`has_mark`), ``judged`` (the real path
    :func:`check_output_file` returned: the write goes there or nowhere), ``expect``
    (``(st_dev, st_ino)`` the file must still have).
    """
    return _atomic_write(path, lambda fh: fh.write(data), text=False, keep_mode=keep_mode,
                         **rules)


def write_text(text: str | Iterable[str], path: str | os.PathLike, **rules: Any) -> Path:
    """Write ``text`` (a string, or an iterable of strings written in turn) atomically, UTF-8."""
    def write(fh):
        if isinstance(text, str):
            fh.write(text)
        else:
            fh.writelines(text)
    return _atomic_write(path, write, text=True, **rules)


def write_table(df, path: str | os.PathLike, *, float_format: str | None = FLOAT_FORMAT,
                index: bool = False, **rules: Any) -> Path:
    """Write a DataFrame as CSV atomically: no index, 6-decimal floats, ``\\n`` line ends.

    ``float_format=None`` writes floats as pandas does (shortest round-trip); ``index=True``
    writes the index as the first column(s)."""
    return _atomic_write(path, lambda fh: df.to_csv(fh, index=index, float_format=float_format,
                                                    lineterminator="\n"), text=True, **rules)


def write_json(value: Any, path: str | os.PathLike, *, indent: int | None = 2,
               **rules: Any) -> Path:
    """Write ``value`` as strict JSON (NaN or Infinity raise :class:`ValueError`) atomically."""
    text = _dumps(value, indent=indent) + "\n"
    return write_text(text, path, **rules)


def write_jsonl(records: Iterable[Any], path: str | os.PathLike, **rules: Any) -> Path:
    """Write one strict-JSON record a line (:func:`jsonl_line`), atomically."""
    return write_text(jsonl_text(records), path, **rules)


def write_registry(tools: Iterable[Any], path: str | os.PathLike, *,
                   jsonl: bool | None = None, **rules: Any) -> Path:
    """Write tools (``Tool.to_record()``) as a JSON array, or JSONL when ``jsonl`` (default:
    when ``path`` ends in ``.jsonl``/``.ndjson``), that ``load_registry`` reads back."""
    path = Path(path)
    records = [t.to_record() for t in tools]
    if jsonl is None:
        jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    return write_jsonl(records, path, **rules) if jsonl else write_json(records, path, **rules)


# --------------------------------------------------------------------------------------------
# marks: what toolsel wrote says so in its own format


#: The mark of a JSONL file toolsel writes: a first line its readers skip (``//`` comment).
JSONL_MARK = "// written by toolsel"
#: The mark of a JSON document toolsel writes (a registry's ``_meta``, a model's ``format``).
JSON_MARK_KEY = "written_by"
#: The last line of a Markdown file toolsel writes (an HTML comment: not rendered).
MARKDOWN_MARK = "<!-- written by toolsel"


def jsonl_mark(command: str) -> str:
    """The first line of a JSONL file ``toolsel COMMAND`` writes."""
    return f"{JSONL_MARK} {command}\n"


def has_mark(data: bytes) -> bool:
    """Whether ``data`` (an existing output's content) carries toolsel's mark in one of its
    formats: a first ``// written by toolsel`` line (JSONL), a ``"written_by": "toolsel``
    pair (a JSON document's metadata, a JUnit ``<property>``), or a last line
    ``<!-- written by toolsel ... -->`` (Markdown)."""
    head = data[:4096].lstrip(b"\xef\xbb\xbf")
    if head.startswith(JSONL_MARK.encode()):
        return True
    if re.search(rb'"written_by":\s*"toolsel[ "]', head) or \
            re.search(rb'name="written_by" value="toolsel[ "]', data[:1 << 20]):
        return True
    tail = data.rstrip()[-200:]
    last = tail.rsplit(b"\n", 1)[-1]
    return last.startswith(MARKDOWN_MARK.encode()) and last.endswith(b"-->")


# --------------------------------------------------------------------------------------------
# checking destinations before the work starts


#: The folders of a toolsel checkout no command writes into (its ``reports/`` is written).
CHECKOUT_SOURCES = ("toolsel", "data", "tests", "notebooks", "benchmarks", ".git")
_PROJECT_NAME = re.compile(r"""^\s*name\s*=\s*["']toolsel["']""", re.MULTILINE)


def is_toolsel_checkout(folder: str | os.PathLike) -> bool:
    """``folder`` is a toolsel source checkout, found by its files (any copy, not only the
    one running): a ``pyproject.toml`` naming the project ``toolsel`` and
    ``toolsel/__init__.py``."""
    folder = Path(folder)
    try:
        if not (folder / "toolsel" / "__init__.py").is_file():
            return False
        return bool(_PROJECT_NAME.search((folder / "pyproject.toml").read_text(
            encoding="utf-8", errors="replace")[:200_000]))
    except OSError:
        return False


def _real(path: Path) -> Path:
    """``path`` with every link followed, then ``..`` (as the kernel does: ``lnk/..`` is the
    folder holding the link's target, not the folder holding the link), the missing rest as
    given."""
    return Path(os.path.realpath(path))


def refuse_never_write(path: str | os.PathLike, *, file: bool = False,
                       data_ok: bool = False) -> Path:
    """Refuse a destination no toolsel command ever writes, ``--force`` or not; return its
    real path. Raises :class:`OutputError` (one line).

    The one check every writing command makes (``report``, ``sweep``, ``import``,
    ``explore``, ``label``, ``check``, ``runs``, ``synthetic``). A folder output (``file``
    false) may not be ``/``, the home folder or one of its ancestors. No output goes into a
    toolsel checkout (found by its files, :func:`is_toolsel_checkout`) itself or into its
    source folders (:data:`CHECKOUT_SOURCES`); its ``reports/`` (and any other folder) is
    fine. A file output may not go into ``/`` or an ancestor of the home folder.
    ``data_ok``: a labeled file or a baseline may live in a checkout's ``data/`` (``toolsel
    label`` and ``make check CHECK_ARGS=--update-baseline`` maintain the project's own).
    """
    shown = Path(path)
    refuse_shared_folder_links(shown)
    # a file: its folder with links followed, its own name never followed (a link there is
    # replaced or refused, never written through); a folder: every link followed
    real = write_target(shown) if file else _real(shown)
    folder = real.parent if file else real
    home = _real(Path(os.path.expanduser("~")))
    what = "file" if file else "folder"
    _refuse_system_and_state(shown, folder, what)
    if folder == Path(folder.anchor) or folder in home.parents or (not file and folder == home):
        place = "the root folder" if folder == Path(folder.anchor) else (
            "the home folder" if folder == home else f"{folder}, which holds the home folder")
        raise OutputError(shown, f"is {'in ' if file else ''}{place}; toolsel never writes "
                                 f"there (--force or not): give a {what} of its own")
    for root in (folder, *folder.parents):
        if not is_toolsel_checkout(root):
            continue
        rel = folder.relative_to(root).parts
        if not rel:
            raise OutputError(shown, f"is {'in ' if file else ''}the toolsel checkout {root} "
                                     "itself; toolsel never writes there (--force or not): "
                                     f"give a {what} of its own (the project's reports go to "
                                     "reports/)")
        if rel[0] in CHECKOUT_SOURCES and not (data_ok and file and rel[0] == "data"):
            raise OutputError(shown, f"is inside the source folder {rel[0]}/ of the toolsel "
                                     f"checkout {root}; toolsel never writes there (--force "
                                     f"or not): choose another {what}")
    return real


#: Folders of the system's devices and kernel files (Linux): never an output's folder.
SYSTEM_FOLDERS = ("/dev", "/proc", "/sys")


def _refuse_system_and_state(shown: Path, folder: Path, what: str) -> None:
    """Refuse an output in ``/dev`` itself, under ``/proc`` or ``/sys`` (``--summary
    /dev/stdout --force`` would replace the link ``/dev/stdout``), or in toolsel's state
    folder (its record key)."""
    if sys.platform.startswith("linux"):
        dev, *kernel = (Path(p) for p in SYSTEM_FOLDERS)
        if folder == dev or any(folder == k or k in folder.parents for k in kernel):
            raise OutputError(shown, f"is in {folder}, a folder of the system's devices or "
                                     "kernel files; toolsel never writes there (--force or "
                                     f"not): give a {what} of its own")
    state = _real(state_dir())
    if folder == state or state in folder.parents:
        raise OutputError(shown, f"is in toolsel's state folder {state} (its record key); "
                                 f"toolsel never writes there (--force or not): give a {what} "
                                 "of its own")


def _shared_folder(st: os.stat_result) -> bool:
    return bool(st.st_mode & stat.S_ISVTX and st.st_mode & stat.S_IWOTH)


def shared_folder_link(path: str | os.PathLike) -> tuple[Path, int] | None:
    """The first symbolic link on the way to ``path`` (followed as the kernel follows them,
    ``..`` after the link) that sits in a shared folder (sticky and writable by everyone, such
    as ``/tmp``) and belongs neither to the running user nor to that folder's owner, with its
    owner's uid; ``None`` when there is none (or no user ids here).

    Such a link is what the kernel refuses to follow with ``fs.protected_symlinks``: another
    user may have put it there (``/tmp/report -> /etc/cron.d``) to steer a write. toolsel
    resolves paths itself before judging them, so it makes the same refusal itself."""
    if not hasattr(os, "geteuid"):  # pragma: no cover
        return None
    todo = list(reversed(Path(os.path.join(os.getcwd(), os.fspath(path))).parts))
    current, hops = Path("/"), 0
    while todo:
        part = todo.pop()
        if part in ("/", "", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        nxt = current / part
        try:
            st = os.lstat(nxt)
        except OSError:  # the rest does not exist: nothing more to follow
            return None
        if not stat.S_ISLNK(st.st_mode):
            current = nxt
            continue
        hops += 1
        try:
            folder = os.stat(current)
            target = os.readlink(nxt)
        except OSError:
            return None
        if _shared_folder(folder) and st.st_uid not in (os.geteuid(), folder.st_uid):
            return nxt, st.st_uid
        if hops > 40:  # a loop: the kernel stops there too
            return None
        if os.path.isabs(target):
            current = Path("/")
        todo.extend(reversed(Path(target).parts))
    return None


def refuse_shared_folder_links(path: Path) -> None:
    """Refuse (:class:`OutputError`) a path leading through :func:`shared_folder_link`."""
    found = shared_folder_link(path)
    if found is not None:
        link, uid = found
        raise OutputError(path, f"leads through {link}, a symbolic link of another user (uid "
                                f"{uid}) in a shared folder (sticky, writable by everyone); "
                                "toolsel never writes through it (the kernel's "
                                "protected_symlinks refuses it too): give the real path")


def _first_existing(path: Path) -> Path:
    p = path
    while not p.exists() and not p.is_symlink() and p != p.parent:
        p = p.parent
    return p


def _check_creatable(path: Path, what: str) -> None:
    """``path`` does not exist: its first existing ancestor must be a writable folder."""
    base = _first_existing(path.parent)
    if base.is_symlink() and not base.exists():
        raise OutputError(path, f"cannot create the {what}: {base} is a symbolic link that "
                                f"leads nowhere (to {os.readlink(base)}: missing, or a loop)")
    if not base.is_dir():
        raise OutputError(path, f"cannot create the {what}: {base} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise OutputError(path, f"cannot create the {what}: folder {base} is not writable")


def check_output_dir(path: str | os.PathLike, names: Iterable[str] = ()) -> Path:
    """Check that ``path`` can be used as an output folder for files ``names``; return it.

    Raises :class:`OutputError` (one line: the path and why) when ``path`` is a file, is not
    writable, cannot be created, or when one of ``names`` inside it is a folder.
    """
    path = Path(path)
    refuse_never_write(path)
    if path.exists():
        if not path.is_dir():
            raise OutputError(path, "exists and is not a folder; give a folder for the output")
        if not os.access(path, os.W_OK | os.X_OK):
            raise OutputError(path, "output folder is not writable")
        for name in names:
            target = path / name
            if target.is_dir():
                raise OutputError(target, "is a folder, where the output file goes; remove "
                                          "it or choose another output folder")
    else:
        if path.is_symlink():
            raise OutputError(path, "is a broken symbolic link")
        _check_creatable(path, "output folder")
    return path


def check_output_file(path: str | os.PathLike, *, data_ok: bool = False, force: bool = False,
                      owned: Callable[[bytes], bool] | None = None,
                      inputs: Iterable[tuple[str, Any]] = ()) -> Path:
    """Check that ``path`` can be written as a file, before any work; return its real path
    (:func:`write_target`: pass it as ``judged`` to the writer).

    Refused (:class:`OutputError`, one line): a place no command writes
    (:func:`refuse_never_write`; ``data_ok`` as there), a folder, a folder that is not
    writable, a symbolic link (unless ``force``: the link itself is then replaced), something
    other than a regular file, an existing file ``owned`` does not recognize as this command's
    output (unless ``force``), and a file that is one of ``inputs`` (``(flag, path)`` pairs:
    :func:`refuse_inputs`).
    """
    path = Path(path)
    if os.path.basename(os.fspath(path)) in ("", ".", ".."):
        raise OutputError(path, "names a folder; give a file name for the output")
    real = refuse_never_write(path, file=True, data_ok=data_ok)
    if real.parent.is_dir():
        dfd = open_folder(path, real.parent)
        try:
            _judge_existing(path, dfd, real.name, force=force, owned=owned)
        finally:
            os.close(dfd)
    _check_file(path)
    refuse_inputs([("", path)], inputs)
    return real


def _ids(path: Path) -> set:
    """Everything that says which file ``path`` is: its real path (links followed), the real
    path of the name itself (not followed), and the (device, inode) of both."""
    out = {("path", str(_real(path))), ("path", str(write_target(path)))}
    for follow in (True, False):
        with contextlib.suppress(OSError, ValueError):
            st = os.stat(path, follow_symlinks=follow)
            if not stat.S_ISLNK(st.st_mode):
                out.add(("inode", st.st_dev, st.st_ino))
    return out


def refuse_inputs(outputs: Iterable[tuple[str, Any]], inputs: Iterable[tuple[str, Any]]) -> None:
    """Refuse an output file that is one of the command's inputs, or another of its outputs:
    the same real path, or the same (device, inode) (a hard link, a link). ``outputs`` and
    ``inputs`` are ``(flag, path)`` pairs (a ``None`` path is skipped). One helper for every
    command (``fit``, ``check``, ``import``, ``synthetic``): a command never replaces what it
    reads."""
    outs = [(flag, Path(p)) for flag, p in outputs if p is not None]
    ins = [(flag, Path(p)) for flag, p in inputs if p is not None]
    seen = [(flag, p, _ids(p), "reads") for flag, p in ins]
    for flag, p in outs:
        ids = _ids(p)
        for other_flag, other, other_ids, verb in seen:
            if ids & other_ids:
                what = f"{other_flag} {other}" if other_flag else str(other)
                raise OutputError(p, f"is also {what}, which this command {verb}; a command "
                                     "never replaces its own input or writes two outputs to "
                                     "one file: give another file")
        seen.append((flag, p, ids, "writes"))


def _check_file(path: Path) -> Path:
    if path.is_dir():
        raise OutputError(path, "is a folder; give a file name for the output")
    if path.parent.exists():
        if not path.parent.is_dir():
            raise OutputError(path, f"{path.parent} is a file, not a folder")
        if not os.access(path.parent, os.W_OK | os.X_OK):
            raise OutputError(path, f"folder {path.parent} is not writable")
    else:
        _check_creatable(path, "file")
    return path


# --------------------------------------------------------------------------------------------
# the lock


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, *, timeout: float | None = None,
                what: str | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (its file descriptor) while the block runs.

    POSIX ``flock``: the kernel releases it when the process exits, even on ``SIGKILL``, so
    a killed writer never blocks the next one. Waits up to ``timeout`` seconds (default
    :data:`LOCK_TIMEOUT`), then raises :class:`OutputError` about ``what``.
    """
    timeout = LOCK_TIMEOUT if timeout is None else timeout
    folder = Path(folder)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: a lock file instead
        yield from _lock_file(folder, timeout, what)
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.01
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise OutputError(what or folder, "another process is writing it (waited "
                                      f"{timeout:.0f} s); wait for it to finish or choose "
                                      "another output folder") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _lock_file(folder: Path, timeout: float, what) -> Iterator[None]:  # pragma: no cover
    import msvcrt
    fd = os.open(folder / ".toolsel.lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise OutputError(what or folder, "another process is writing it") from None
                time.sleep(0.1)
        try:
            yield
        finally:
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------
# whole sets


Writer = Callable[[Path], Any]


def _as_writer(value: Any) -> Writer:
    """A callable writing ``value`` to a path: DataFrame → CSV, str → text, bytes, else JSON."""
    if callable(value):
        return value
    if hasattr(value, "to_csv"):
        return lambda p: _plain_write(p, lambda fh: value.to_csv(
            fh, index=False, float_format=FLOAT_FORMAT, lineterminator="\n"))
    if isinstance(value, bytes):
        return lambda p: _plain_write(p, lambda fh: fh.write(value), text=False)
    if isinstance(value, str):
        return lambda p: _plain_write(p, lambda fh: fh.write(value))
    text = _dumps(value, indent=2) + "\n"
    return lambda p: _plain_write(p, lambda fh: fh.write(text))


def _plain_write(path: Path, write: Callable[[Any], Any], *, text: bool = True,
                 dir_fd: int | None = None) -> None:
    """Write a new file (inside a private staging folder: no temporary name needed). It must
    not exist (``O_EXCL``, no link followed): whatever is found there was not staged by this
    run, and nothing is ever written through it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW |
                 getattr(os, "O_BINARY", 0), 0o666, dir_fd=dir_fd)
    with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text else os.fdopen(fd, "wb")) as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())


def _exchange_at(dfd: int, a: str, b: str) -> bool:
    """Swap the entries ``a`` and ``b`` of the folder ``dfd`` atomically (Linux
    ``renameat2(RENAME_EXCHANGE)``, through the descriptor); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    rename_exchange = 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(dfd, os.fsencode(a), dfd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), a, None, b)


def _rmtree_at(dfd: int, name: str) -> None:
    """Remove the folder ``name`` of the folder ``dfd`` and all it holds, never following a
    link (a link or file there is left alone)."""
    st = _existing(dfd, name)
    if st is not None and stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dfd, ignore_errors=True)


def _swappable(out: Path, carry_folders: bool = False) -> bool:
    """True when ``out`` can be replaced as a whole folder (see the module docstring)."""
    parent = out.parent
    if out == parent or not os.access(parent, os.W_OK | os.X_OK):
        return False
    if not out.exists():
        return True
    try:
        st = os.stat(out)
        if st.st_dev != os.stat(parent).st_dev:  # a mount point
            return False
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return False  # another user's folder: keep it (and its owner), write inside it
        cwd = Path.cwd().resolve()
    except OSError:
        return False
    if cwd == out or out in cwd.parents:
        return False
    if carry_folders:
        return True
    with os.scandir(out) as it:
        return not any(e.is_dir(follow_symlinks=False) for e in it)


# Folders and journals a write leaves when killed are recognized by what this run recorded,
# never by their names alone: anyone who can put a file into an output folder (a cloned
# repository's committed reports/, a shared folder) can name one like ours, and can copy a
# folder's device and inode numbers into a record (``stat`` shows them). So a record that can
# make toolsel move or delete anything is accepted only when (a) it and its folder are
# regular entries (no links) owned by the user running toolsel and (b) it carries an
# HMAC-SHA256, over its canonical JSON (which names the folder's real path, device and
# inode), under a secret only this user can read (:func:`state_dir`). Anything else is
# left alone.

#: The record inside a private folder (:func:`make_private_dir`).
_MARKER = ".toolsel-private.json"
_MARKER_KIND = "toolsel private folder"
_JOURNAL_KIND = "toolsel set journal"
_MAX_RECORD = 1 << 20
_KEY_NAME = "record-key"
_KEY_BYTES = 32


def state_dir() -> Path:
    """toolsel's own state folder: ``$TOOLSEL_STATE``, else ``$XDG_STATE_HOME/toolsel``, else
    ``~/.local/state/toolsel``. It holds the secret that authenticates toolsel's bookkeeping
    records (created on first need: when a record is written, never when one is read)."""
    env = os.environ.get("TOOLSEL_STATE")
    if env:
        return Path(os.path.abspath(os.path.expanduser(env)))
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(os.path.expanduser(xdg)) if xdg and os.path.isabs(os.path.expanduser(xdg)) \
        else Path(os.path.expanduser("~")) / ".local" / "state"
    return base / "toolsel"


def private_state(create: bool) -> Path | None:
    """The state folder, checked: a real folder (not a link) of this user that no one else can
    enter (mode 0700). Created (0700) when ``create``; ``None`` if missing."""
    folder = state_dir()
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        if not create:
            return None
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or not owned_by_me(st) or \
            (hasattr(os, "getuid") and st.st_mode & 0o077):
        raise OutputError(folder, "toolsel's state folder must be a folder (not a link) of "
                                  "yours that only you can open (chmod 700); fix it or set "
                                  "TOOLSEL_STATE to another folder")
    return folder


def _read_key(folder: Path) -> bytes | None:
    path = folder / _KEY_NAME
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise OutputError(path, f"cannot read toolsel's record key: {exc.strerror or exc}") \
            from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read(_KEY_BYTES + 1)
    if not stat.S_ISREG(st.st_mode) or not owned_by_me(st) or \
            (hasattr(os, "getuid") and st.st_mode & 0o077) or len(data) != _KEY_BYTES:
        raise OutputError(path, "toolsel's record key must be a 32-byte file of yours that "
                                "only you can read (chmod 600); remove it (a new one is made)")
    return data


def record_key(create: bool) -> bytes | None:
    """This user's secret for bookkeeping records; made (atomically: written under a unique
    name, then linked to its name) when ``create`` and missing. ``None``: no key yet (so no
    record can be valid)."""
    folder = private_state(create)
    if folder is None:
        return None
    key = _read_key(folder)
    if key is not None or not create:
        return key
    tmp = folder / f".{_KEY_NAME}.{_token()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(_KEY_BYTES))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use its
            os.link(tmp, folder / _KEY_NAME)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return _read_key(folder)


def _mac(key: bytes, data: Mapping[str, Any]) -> str:
    body = json.dumps({k: v for k, v in data.items() if k != "mac"}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, body.encode("ascii"), hashlib.sha256).hexdigest()


def sign_record(data: dict) -> dict:
    key = record_key(create=True)
    return {**data, "mac": _mac(key, data)}


def file_identity(st: os.stat_result) -> list[int]:
    return [st.st_dev, st.st_ino]


def read_record(path: Path, kind: str) -> dict | None:
    """The authenticated JSON record of the regular file ``path`` (never through a link, owned
    by this user, its ``mac`` valid under this user's key) if its ``kind`` is ``kind``;
    ``None`` for anything else (missing, a link, another user's, malformed, forged)."""
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or not owned_by_me(st):
                return None
            data = json.loads(fh.read(_MAX_RECORD).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("kind") != kind:
        return None
    try:
        key = record_key(create=False)
    except OutputError:
        return None
    mac = data.get("mac")
    if key is None or not isinstance(mac, str) or \
            not hmac.compare_digest(mac, _mac(key, data)):
        return None
    return data


def make_private_dir(path: str | os.PathLike, *, dir_fd: int | None = None,
                     **record: Any) -> Path:
    """Create the folder ``path`` marked as this run's: a record inside it names the real path
    of the folder holding it, its device and inode (and ``record``), authenticated with this
    user's key. With ``dir_fd`` (a descriptor of ``path``'s folder, already checked) the
    folder and its record are made through it, no path looked up again.
    :func:`private_dir_record` recognizes it later; a copy, a clone, a link, another user's
    folder or a folder merely named like it is not recognized."""
    path = Path(path)
    # private (0o700) whatever the umask: no one else can add to what it holds
    if dir_fd is None:
        os.mkdir(path, 0o700)
        made = os.lstat(path)
    else:
        os.mkdir(path.name, 0o700, dir_fd=dir_fd)
        made = os.stat(path.name, dir_fd=dir_fd, follow_symlinks=False)
    data = sign_record({"kind": _MARKER_KIND, "dir": file_identity(made),
                  "in": str(_real(path.parent)), **record})
    if dir_fd is None:
        _plain_write(path / _MARKER, lambda fh: fh.write(_dumps(data) + "\n"))
        return path
    sfd = os.open(path.name, os.O_RDONLY | _DIRECTORY | NOFOLLOW, dir_fd=dir_fd)
    try:
        if file_identity(os.fstat(sfd)) != data["dir"]:
            raise OutputError(path, "was replaced as it was made; nothing written")
        _plain_write(Path(_MARKER), lambda fh: fh.write(_dumps(data) + "\n"), dir_fd=sfd)
    finally:
        os.close(sfd)
    return path


def private_dir_record(path: str | os.PathLike) -> dict | None:
    """The record of a folder :func:`make_private_dir` made (a real folder of this user, not a
    link, whose authenticated record names this very folder), else ``None``."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or not owned_by_me(st):
        return None
    data = read_record(path / _MARKER, _MARKER_KIND)
    if data is None or data.get("dir") != file_identity(st) or \
            data.get("in") != str(_real(path.parent)):
        return None
    return data


def is_private_dir(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder a toolsel run made for itself (:func:`make_private_dir`)."""
    return private_dir_record(path) is not None


def plain_name(name: Any) -> bool:
    """A name of one entry of a folder: no separator, not ``.``/``..``, no NUL."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name \
        and "\\" not in name and "\0" not in name


def _journal_path(out: Path, token: str) -> Path:
    return out.parent / f".{side_stem(out.name)}.toolsel-journal-{token}"


def _write_journal(out: Path, token: str) -> Path:
    """Record, beside ``out``, the id of the set this run swaps in (lock held): the only way
    the next run recognizes this run's staging and old folders."""
    old = file_identity(os.lstat(out)) if out.exists() else None
    data = sign_record({"kind": _JOURNAL_KIND, "id": token, "out": out.name,
                  "parent": file_identity(os.stat(out.parent)), "parent_path": str(_real(out.parent)),
                  "old": old})
    path = _journal_path(out, token)
    _atomic_write(path, lambda fh: fh.write(_dumps(data) + "\n"), text=True, judged=path)
    return path


def _journals(out: Path) -> list[tuple[Path, dict]]:
    """This folder's valid journals: records of sets swapped in beside ``out``."""
    parent = out.parent
    try:
        parent_id = file_identity(os.stat(parent))
        names = os.listdir(parent)
    except OSError:
        return []
    prefix = f".{side_stem(out.name)}.toolsel-journal-"
    found = []
    for name in names:
        if not name.startswith(prefix):
            continue
        data = read_record(parent / name, _JOURNAL_KIND)
        if data is None or data.get("id") != name[len(prefix):] or \
                not plain_name(data.get("id")) or data.get("out") != out.name or \
                data.get("parent") != parent_id or data.get("parent_path") != str(_real(parent)):
            continue  # not ours: left alone
        found.append((parent / name, data))
    return found


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _recover(out: Path) -> None:
    """Clean up (or finish) what a killed :func:`write_set` left for ``out``; lock held.

    Only what a journal of this folder names (beside it, :func:`_write_journal`) or a private
    folder of this run's making (inside it, :func:`make_private_dir`) is touched; a folder
    merely named like ours, or a link, is left alone."""
    journals = _journals(out)
    if journals:
        dfd = open_folder(out, out.parent)
        try:
            for journal, data in journals:
                _recover_swap(dfd, out.name, journal.name, data)
        finally:
            os.close(dfd)
    if _is_folder(out):  # (another user's folder too: a report updates it in place)
        for name in sorted(os.listdir(out)):
            d = out / name
            if name.startswith(_IN_PLACE_COMMIT):  # complete set, partly moved: finish it
                record = private_dir_record(d)
                if record is not None and record.get("id") == name[len(_IN_PLACE_COMMIT):]:
                    _roll_forward(d, out, record)
            elif name.startswith(_IN_PLACE_STAGING):  # incomplete set: drop it
                record = private_dir_record(d)
                if record is not None and record.get("id") == name[len(_IN_PLACE_STAGING):]:
                    shutil.rmtree(d, ignore_errors=True)


def _recover_swap(dfd: int, out: str, journal: str, data: Mapping[str, Any]) -> None:
    """What one journal of the folder ``dfd`` names, through that descriptor: the old set put
    back when the run was killed between the two renames of the fallback swap, then its
    staging and old folders (real folders of this user) removed, then the journal."""
    token = data["id"]
    staging, old = f".{side_stem(out)}.staging-{token}", f".{side_stem(out)}.old-{token}"
    ost = _existing(dfd, old)
    if _existing(dfd, out) is None and ost is not None and stat.S_ISDIR(ost.st_mode) and \
            owned_by_me(ost) and data.get("old") == file_identity(ost):
        os.rename(old, out, src_dir_fd=dfd, dst_dir_fd=dfd)
    for leftover in (staging, old):
        st = _existing(dfd, leftover)
        if st is not None and owned_by_me(st):
            _rmtree_at(dfd, leftover)
    with contextlib.suppress(OSError):
        os.unlink(journal, dir_fd=dfd)


def recover_set(out_dir: str | os.PathLike, *, timeout: float | None = None) -> None:
    """Finish or undo what a killed :func:`write_set` left for ``out_dir`` (its lock held)."""
    out = Path(os.path.realpath(out_dir))
    if not out.parent.is_dir():
        return
    with folder_lock(out.parent, timeout=timeout, what=out):
        _recover(out)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=False)


def write_set(out_dir: str | os.PathLike, files: Mapping[str, Any], *,
              timeout: float | None = None, remove: Iterable[str] = (),
              finish: Callable[[Path], Any] | None = None, carry_folders: bool = False,
              in_place: bool = False) -> list[Path]:
    """Write a run's files into ``out_dir`` as one set (see the module docstring).

    Parameters
    ----------
    out_dir : path
        The output folder (created if missing).
    files : mapping ``{name: content}``
        Content is a DataFrame (CSV with :data:`FLOAT_FORMAT`), ``str``, ``bytes``, a
        JSON-ready value, or a callable ``write(path)`` that creates the file (or a folder)
        at ``path``.
    timeout : float, optional
        Seconds to wait for another process writing the same folder.
    remove : names
        Entries of ``out_dir`` the new set drops (a previous run's outputs).
    finish : callable ``finish(staging)``, optional
        Called once the new set is staged (with, when the folder is swapped whole, every
        entry carried over): it may add or rewrite entries (an index of the set), which
        become visible with the rest.
    carry_folders : bool
        Sub-folders of ``out_dir`` do not prevent swapping the folder whole: they are carried
        over as trees of hard links (a report folder holding other tools' outputs).
    in_place : bool
        Never swap the folder itself (a folder the caller does not own): the staged entries
        are moved in one by one, rolled forward by the next run if killed.

    Returns the final paths, in the order of ``files``.
    """
    out = Path(out_dir)
    names = list(files)
    remove = [r for r in remove if r not in files]
    for name in [*names, *remove]:
        if not name or Path(name).name != name or name.startswith("."):
            raise ValueError(f"file names in a set are plain names, got {name!r}")
    if not carry_folders:
        check_output_dir(out, names)
    else:
        check_output_dir(out)
    out = Path(os.path.realpath(out))  # a symlinked folder: write into its target
    out.parent.mkdir(parents=True, exist_ok=True)
    with naming(out), folder_lock(out.parent, timeout=timeout, what=out):
        _recover(out)
        if not in_place and _swappable(out, carry_folders):
            _swap_in(out, files, remove, finish)
        else:
            _move_in(out, files, remove, finish)
    return [out / name for name in names]


def _stage(folder: Path, files: Mapping[str, Any]) -> None:
    for name, value in files.items():
        _as_writer(value)(folder / name)


def link_tree(src: Path, dst: Path) -> None:
    """``dst`` becomes a copy of the tree ``src`` made of hard links (copies where the file
    system refuses links); symbolic links are copied as links."""
    if src.is_dir() and not src.is_symlink():
        os.mkdir(dst)
        shutil.copymode(src, dst)
        with os.scandir(src) as it:
            for entry in it:
                link_tree(Path(entry.path), dst / entry.name)
    else:
        _link_or_copy(src, dst)


def _swap_in(out: Path, files: Mapping[str, Any], remove: Iterable[str] = (),
             finish: Callable[[Path], Any] | None = None) -> None:
    """Stage the set beside ``out`` and swap it in, every rename through the descriptor of
    ``out``'s folder (opened and checked once, re-checked just before the swap): a folder
    moved, or a link put on its way, meanwhile fails the run and leaves nothing written where
    the path now leads."""
    dfd = open_folder(out, out.parent)
    try:
        token = _token()
        journal = _write_journal(out, token)
        name = f".{side_stem(out.name)}.staging-{token}"
        os.mkdir(name, 0o700, dir_fd=dfd)  # no one else can add to it while it is filled
        staging = out.parent / name
        try:
            _stage(staging, files)
            at = _existing(dfd, out.name)
            if at is not None and stat.S_ISDIR(at.st_mode):
                skip = set(files) | set(remove)
                with os.scandir(out) as it:
                    for entry in it:
                        # every entry is carried over but this run's private folders (a build)
                        if entry.name not in skip and not is_private_dir(entry.path):
                            link_tree(Path(entry.path), staging / entry.name)
            if finish is not None:
                finish(staging)
            # the folder's mode: the old folder's, else a new folder's (0o777 minus umask)
            _chmod_at(dfd, name, stat.S_IMODE(at.st_mode) if at is not None and
                      stat.S_ISDIR(at.st_mode) else 0o777 & ~_umask())
            name = _swap_at(dfd, out, name, token)  # from here ``name`` is the old set
        except BaseException:
            _rmtree_at(dfd, name)
            with contextlib.suppress(OSError):
                os.unlink(journal.name, dir_fd=dfd)
            raise
        _rmtree_at(dfd, name)
        os.unlink(journal.name, dir_fd=dfd)
    finally:
        os.close(dfd)


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _chmod_at(dfd: int, name: str, mode: int) -> None:
    """Set the mode of the folder ``name`` of the folder ``dfd`` (no link followed)."""
    fd = os.open(name, os.O_RDONLY | _DIRECTORY | NOFOLLOW, dir_fd=dfd)
    try:
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _swap_at(dfd: int, out: Path, staging: str, token: str) -> str:
    """Put the folder ``staging`` of the folder ``dfd`` at ``out``'s name, once ``dfd`` is
    checked to still be ``out``'s folder and ``staging`` and ``out`` real folders; return the
    name the old set now has (to be removed)."""
    still_at(dfd, out, out.parent)
    st = _existing(dfd, staging)
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise OutputError(out, f"its staging folder {staging} was replaced while the set was "
                               "written; nothing written")
    at = _existing(dfd, out.name)
    if at is None:
        os.rename(staging, out.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        return staging
    if not stat.S_ISDIR(at.st_mode):
        raise OutputError(out, "is no longer a folder (something replaced it while the set "
                               "was written); nothing written")
    if _exchange_at(dfd, staging, out.name):
        return staging
    old = f".{side_stem(out.name)}.old-{token}"
    os.rename(out.name, old, src_dir_fd=dfd, dst_dir_fd=dfd)  # a kill here: undone (_recover)
    try:
        os.rename(staging, out.name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        os.rename(old, out.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        raise
    return old


#: In an in-place commit folder: entries replaced, deleted once every entry is in place.
_TRASH = ".replaced"


def _move_in(out: Path, files: Mapping[str, Any], remove: Iterable[str] = (),
             finish: Callable[[Path], Any] | None = None) -> None:
    """Stage the set in ``out/.toolsel-staging-ID`` and move it in entry by entry, every
    rename through ``out``'s descriptor (opened and checked once, re-checked just before the
    commit): ``out`` moved, or a link put on its way, meanwhile fails the run and leaves
    nothing written where the path now leads."""
    out.mkdir(parents=True, exist_ok=True)
    ofd = open_folder(out, out)
    try:
        token = _token()
        name = f"{_IN_PLACE_STAGING}{token}"
        staging = out / name
        # the names the set removes are in the folder's own record: nothing else is read back
        make_private_dir(staging, id=token, remove=sorted(remove), dir_fd=ofd)
        record = {"remove": sorted(remove),
                  "dir": file_identity(os.stat(name, dir_fd=ofd, follow_symlinks=False))}
        commit = f"{_IN_PLACE_COMMIT}{token}"
        try:
            _stage(staging, files)
            if finish is not None:
                finish(staging)
            still_at(ofd, out, out)
            # the set is complete: from here a killed run is rolled forward
            os.rename(name, commit, src_dir_fd=ofd, dst_dir_fd=ofd)
        except BaseException:
            _rmtree_at(ofd, name)
            raise
        _roll_forward_at(ofd, commit, record)
    finally:
        os.close(ofd)


def _roll_forward(commit: Path, out: Path, record: Mapping[str, Any]) -> None:
    """:func:`_roll_forward_at` on the folder ``out`` (opened and checked)."""
    ofd = open_folder(out, out)
    try:
        _roll_forward_at(ofd, commit.name, record)
    finally:
        os.close(ofd)


def _roll_forward_at(ofd: int, commit: str, record: Mapping[str, Any]) -> None:
    """Move the complete in-place set ``commit`` (an entry of the folder ``ofd``) into that
    folder (idempotent: a killed move is finished by calling it again), every step through
    descriptors (no path looked up twice, no link followed): each entry replaces its
    namesake (a replaced folder goes to the commit folder's trash first), then the record's
    removals go: plain names of the folder's entries (anything else is ignored), never one
    the set itself brought. A commit folder that is not the one recorded (device and inode)
    is left alone."""
    try:
        cfd = os.open(commit, os.O_RDONLY | _DIRECTORY | NOFOLLOW, dir_fd=ofd)
    except OSError:
        return
    try:
        if "dir" in record and file_identity(os.fstat(cfd)) != record["dir"]:
            return
        if _existing(cfd, _TRASH) is None:
            os.mkdir(_TRASH, dir_fd=cfd)
        tfd = os.open(_TRASH, os.O_RDONLY | _DIRECTORY | NOFOLLOW, dir_fd=cfd)
        try:
            brought = set()
            for name in sorted(os.listdir(cfd)):
                if name in (_TRASH, _MARKER):
                    continue
                brought.add(name)
                _to_trash(ofd, tfd, name, folders_only=True)
                os.replace(name, name, src_dir_fd=cfd, dst_dir_fd=ofd)
            removals = record.get("remove")
            for name in removals if isinstance(removals, list) else []:
                if plain_name(name) and name not in brought and \
                        not name.startswith((_IN_PLACE_COMMIT, _IN_PLACE_STAGING)):
                    _to_trash(ofd, tfd, name, folders_only=False)
        finally:
            os.close(tfd)
    finally:
        os.close(cfd)
    _rmtree_at(ofd, commit)


def _to_trash(ofd: int, tfd: int, name: str, *, folders_only: bool) -> None:
    """The entry ``name`` of the folder ``ofd`` out of the way: a folder moved into the trash
    ``tfd`` (replacing a namesake left there by a killed run), anything else removed unless
    ``folders_only``."""
    st = _existing(ofd, name)
    if st is None:
        return
    if stat.S_ISDIR(st.st_mode):
        _rmtree_at(tfd, name)
        os.rename(name, name, src_dir_fd=ofd, dst_dir_fd=tfd)
    elif not folders_only:
        os.unlink(name, dir_fd=ofd)


# --------------------------------------------------------------------------------------------
# pairs of files committed as one step (a registry and its labeled queries)

_PAIR_KIND = "toolsel pair journal"
_PAIR_WRITING = ".toolsel-pair-"
_PAIR_COMMIT = ".toolsel-paircommit-"


def _pair_journal_names(out: Path) -> re.Pattern:
    return re.compile(rf"\.{re.escape(side_stem(out.name))}({re.escape(_PAIR_WRITING)}|"
                      rf"{re.escape(_PAIR_COMMIT)})([0-9a-f]{{12}})")


def _fsync_dir(dfd: int) -> None:
    with contextlib.suppress(OSError):
        os.fsync(dfd)


def _pair_entries(data: Mapping[str, Any]) -> list[tuple[Path, str, str]] | None:
    """The (folder, name, temporary name) of each file a pair journal names, checked."""
    files = data.get("files")
    if not isinstance(files, list) or not files:
        return None
    out = []
    for entry in files:
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)
                and plain_name(entry[1]) and plain_name(entry[2])
                and entry[2] == f".{side_stem(entry[1])}.{data['id']}.tmp"):
            return None
        folder = Path(entry[0])
        try:
            if file_identity(os.stat(folder)) != entry[3] or str(_real(folder)) != entry[0]:
                continue  # that folder is gone or another now: nothing to do there
        except OSError:
            continue
        out.append((folder, entry[1], entry[2]))
    return out


def recover_pair(out: str | os.PathLike) -> list[str]:
    """Finish or undo what a killed :func:`write_pair` left beside ``out`` (the first file of
    the pair; the caller holds the folders' locks). Returns one line per thing done.

    Only a journal that is a regular file of this user whose authenticated record names this
    folder (real path, device, inode) and its own id is followed: a journal of a run killed
    before its commit (``.OUT.toolsel-pair-ID``) has its temporary files removed (the old
    pair stays); one killed during its commit (``.OUT.toolsel-paircommit-ID``) has the rest of
    its temporary files renamed in (the new pair). An empty file of this user with a
    journal's exact name (a run killed between creating its journal and writing it) is
    removed; anything else is left alone."""
    out = write_target(out)
    parent = out.parent
    done: list[str] = []
    try:
        names = os.listdir(parent)
        parent_id = file_identity(os.stat(parent))
    except OSError:
        return done
    pattern = _pair_journal_names(out)
    for name in sorted(names):
        m = pattern.fullmatch(name)
        if m:
            _recover_journal(out, parent / name, m, parent_id, done)
    return done


def _recover_journal(out: Path, path: Path, m, parent_id: list[int], done: list[str]) -> None:
    """One journal of :func:`recover_pair`: followed only when it is this user's and its
    authenticated record names this folder and its own id (see there)."""
    token = m.group(2)
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode) and owned_by_me(st) and st.st_size == 0 and \
            m.group(1) == _PAIR_WRITING:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return
    data = read_record(path, _PAIR_KIND)
    if data is None or data.get("id") != token or data.get("parent") != parent_id or \
            data.get("parent_path") != str(_real(out.parent)) or data.get("out") != out.name:
        return  # not ours: left alone
    entries = _pair_entries(data)
    if entries is None:
        return
    commit = m.group(1) == _PAIR_COMMIT
    for folder, target, tmp in entries:
        _recover_entry(folder, target, tmp, commit, done)
    with contextlib.suppress(OSError):
        os.unlink(path)


def _recover_entry(folder: Path, target: str, tmp: str, commit: bool, done: list[str]) -> None:
    """One file of a killed pair: its temporary file renamed in (``commit``) or removed."""
    try:
        dfd = open_folder(folder / target, folder)
    except OutputError:
        return
    try:
        tst = _existing(dfd, tmp)
        if tst is None or not stat.S_ISREG(tst.st_mode) or not owned_by_me(tst):
            return
        at = _existing(dfd, target)
        if commit and (at is None or stat.S_ISREG(at.st_mode)):
            os.replace(tmp, target, src_dir_fd=dfd, dst_dir_fd=dfd)
            done.append(f"{folder / target}: completed from a run killed while it "
                        "replaced the pair")
        else:
            os.unlink(tmp, dir_fd=dfd)
            done.append(f"{folder / tmp}: removed (a killed run's temporary file)")
        _fsync_dir(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write_pair(files: Iterable[tuple[str | os.PathLike, str | bytes, str | os.PathLike]], *,
               force: bool = False, owned: Callable[[bytes], bool] | None = None,
               timeout: float | None = None) -> list[str]:
    """Write several files (a registry and its labeled queries) as one step: a run killed at
    any point leaves the old files or the new ones once the next run (or
    :func:`recover_pair`) has looked, and its temporary files are gone after that run.

    ``files``: ``(path, content, judged)`` triples, ``judged`` the real path
    :func:`check_output_file` returned. Under the lock of every folder (taken in a fixed
    order; a concurrent writer of the same files waits), the first file's folder is first
    recovered (:func:`recover_pair`); then an authenticated journal beside the first file
    (``.NAME.toolsel-pair-ID``) names every temporary file before any is made; each content
    is written to its temporary file in its folder (through the folder's descriptor, no link
    followed) and synced; the journal is renamed to ``.NAME.toolsel-paircommit-ID`` (the
    commit point); each temporary file is renamed over its name; the journal is removed.
    Each existing file is judged as :func:`write_bytes` does (``force``, ``owned``). Returns
    the lines of what recovery did."""
    files = [(Path(p), c.encode("utf-8") if isinstance(c, str) else c, Path(j))
             for p, c, j in files]
    reals = []
    for shown, _, judged in files:
        real = write_target(shown)
        if real != judged:
            raise OutputError(shown, f"now leads to {real}, not to {judged} where it was "
                                     "checked (a link on its way changed); nothing written")
        reals.append(real)
    for real in reals:
        real.parent.mkdir(parents=True, exist_ok=True)
    folders = sorted({r.parent for r in reals}, key=str)
    token = _token()
    first = reals[0]
    journal = first.parent / f".{side_stem(first.name)}{_PAIR_WRITING}{token}"
    committed = first.parent / f".{side_stem(first.name)}{_PAIR_COMMIT}{token}"
    with contextlib.ExitStack() as stack:
        stack.enter_context(naming(files[0][0]))
        for folder in folders:
            stack.enter_context(folder_lock(folder, timeout=timeout, what=folder))
        notes = recover_pair(first)
        dfds = []
        try:
            for (shown, _, _), real in zip(files, reals):
                dfd = open_folder(shown, real.parent)
                dfds.append(dfd)
                _judge_existing(shown, dfd, real.name, force=force, owned=owned)
            record = sign_record({"kind": _PAIR_KIND, "id": token, "out": first.name,
                            "parent": file_identity(os.stat(first.parent)),
                            "parent_path": str(_real(first.parent)),
                            "files": [[str(r.parent), r.name, f".{side_stem(r.name)}.{token}.tmp",
                                       file_identity(os.fstat(d))] for r, d in zip(reals, dfds)]})
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_BINARY", 0)
            jfd = os.open(journal.name, flags, 0o600, dir_fd=dfds[0])
            with os.fdopen(jfd, "wb") as fh:  # one write: a kill leaves it empty or whole
                fh.write((_dumps(record) + "\n").encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            temps = []
            try:
                for (_, content, _), real, dfd in zip(files, reals, dfds):
                    tmp = f".{side_stem(real.name)}.{token}.tmp"
                    fd = os.open(tmp, flags, 0o666, dir_fd=dfd)
                    temps.append((dfd, tmp, real.name))
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(content)
                        fh.flush()
                        os.fsync(fh.fileno())
                os.rename(journal.name, committed.name, src_dir_fd=dfds[0],
                          dst_dir_fd=dfds[0])  # the commit point
                _fsync_dir(dfds[0])
            except BaseException:
                for dfd, tmp, _ in temps:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp, dir_fd=dfd)
                with contextlib.suppress(OSError):
                    os.unlink(journal.name, dir_fd=dfds[0])
                raise
            for dfd, tmp, name in temps:
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                _fsync_dir(dfd)
            os.unlink(committed.name, dir_fd=dfds[0])
            for dfd, (_, name) in zip(dfds, [(r.parent, r.name) for r in reals]):
                _remove_stale_temps(dfd, name)
        finally:
            for dfd in dfds:
                os.close(dfd)
    return notes
