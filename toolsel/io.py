"""Writing output files: atomic files, a run's files swapped in as one set, one writer at a time.

The one place where toolsel writes data outputs (tables, registries, JSON). Three guarantees:

- **Atomic files** (:func:`write_text`, :func:`write_table`, :func:`write_json`,
  :func:`write_registry`): each file is written to a temporary file with a unique name in the
  target's folder, then renamed over the target. A reader sees the old file or the new one,
  never half of one; two writers never share a temporary file. Files are created like
  ``open()`` creates them: mode ``0o666`` minus the user's umask (not ``0o600``).
- **Whole sets** (:func:`write_set`): a run's files (``summary.csv``, ``query_metrics.csv``,
  ...) are written into a staging folder beside ``out_dir`` and swapped in with one atomic
  ``rename`` (Linux ``renameat2(RENAME_EXCHANGE)`` when the folder exists). A reader, or a
  run killed at any point, sees the old complete set or the new complete set, never a mix.
  Other files already in ``out_dir`` are carried over (hard links). Leftovers of a killed
  run (``.NAME.staging-*`` beside the folder) are removed by the next run.

  When the folder cannot be swapped as a whole (it holds sub-folders, is or contains the
  current directory, is a mount point, or its parent is not writable) the set is staged in
  ``out_dir/.toolsel-staging-*``, marked complete by one rename, then moved in file by file;
  a run killed during that last step is completed (rolled forward) by the next one.
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
import json
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["OutputError", "write_bytes", "write_text", "write_table", "write_json",
           "write_jsonl", "write_registry", "write_set", "check_output_dir",
           "check_output_file", "folder_lock", "recover_set", "link_tree", "BUILD_PREFIX",
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


def _token() -> str:
    return secrets.token_hex(6)


def create_unique(directory: Path, prefix: str, suffix: str) -> tuple[int, Path]:
    """Create a new file with a unique name, mode 0o666 minus umask (unlike mkstemp's 0o600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        path = directory / f"{prefix}{_token()}{suffix}"
        try:
            return os.open(path, flags, 0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "could not create a unique temporary file", str(directory))


def _remove_stale_temps(path: Path) -> None:
    """Remove temporary files of ``path`` that a killed writer left (older than 10 minutes)."""
    now = time.time()
    with contextlib.suppress(OSError):
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                if now - tmp.stat().st_mtime > _STALE_TMP_S:
                    tmp.unlink()


def _atomic_write(path: str | os.PathLike, write: Callable[[Any], None], *,
                  text: bool, keep_mode: bool = False) -> Path:
    path = Path(path)
    check_output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = create_unique(path.parent, f".{path.name}.", ".tmp")
    try:
        with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text
              else os.fdopen(fd, "wb")) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if keep_mode and path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _remove_stale_temps(path)
    return path


def write_bytes(data: bytes, path: str | os.PathLike, *, keep_mode: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring).

    ``keep_mode``: a file rewritten in place (a user's labeled file) keeps its permissions
    instead of taking the umask's.
    """
    return _atomic_write(path, lambda fh: fh.write(data), text=False, keep_mode=keep_mode)


def write_text(text: str | Iterable[str], path: str | os.PathLike) -> Path:
    """Write ``text`` (a string, or an iterable of strings written in turn) atomically, UTF-8."""
    def write(fh):
        if isinstance(text, str):
            fh.write(text)
        else:
            fh.writelines(text)
    return _atomic_write(path, write, text=True)


def write_table(df, path: str | os.PathLike, *, float_format: str | None = FLOAT_FORMAT,
                index: bool = False) -> Path:
    """Write a DataFrame as CSV atomically: no index, 6-decimal floats, ``\\n`` line ends.

    ``float_format=None`` writes floats as pandas does (shortest round-trip); ``index=True``
    writes the index as the first column(s)."""
    return _atomic_write(path, lambda fh: df.to_csv(fh, index=index, float_format=float_format,
                                                    lineterminator="\n"), text=True)


def _dumps(value: Any, **kwargs: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, **kwargs)
    except ValueError as exc:  # NaN/Infinity: not JSON, and no loader reads it back
        raise ValueError("cannot write NaN or Infinity: they are not JSON values and no JSON "
                         f"reader takes them back ({exc}); use null or a number") from None


def write_json(value: Any, path: str | os.PathLike, *, indent: int | None = 2) -> Path:
    """Write ``value`` as strict JSON (NaN or Infinity raise :class:`ValueError`) atomically."""
    text = _dumps(value, indent=indent) + "\n"
    return write_text(text, path)


def write_jsonl(records: Iterable[Any], path: str | os.PathLike) -> Path:
    """Write one strict-JSON record a line, atomically."""
    text = "".join(_dumps(r) + "\n" for r in records)
    return write_text(text, path)


def write_registry(tools: Iterable[Any], path: str | os.PathLike, *,
                   jsonl: bool | None = None) -> Path:
    """Write tools (``Tool.to_record()``) as a JSON array, or JSONL when ``jsonl`` (default:
    when ``path`` ends in ``.jsonl``/``.ndjson``), that ``load_registry`` reads back."""
    path = Path(path)
    records = [t.to_record() for t in tools]
    if jsonl is None:
        jsonl = path.suffix.lower() in (".jsonl", ".ndjson")
    return write_jsonl(records, path) if jsonl else write_json(records, path)


# --------------------------------------------------------------------------------------------
# checking destinations before the work starts


def _first_existing(path: Path) -> Path:
    p = path
    while not p.exists() and not p.is_symlink() and p != p.parent:
        p = p.parent
    return p


def _check_creatable(path: Path, what: str) -> None:
    """``path`` does not exist: its first existing ancestor must be a writable folder."""
    base = _first_existing(path.parent)
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


def check_output_file(path: str | os.PathLike) -> Path:
    """Check that ``path`` can be written as a file (not a folder; its folder writable)."""
    path = Path(path)
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


def _plain_write(path: Path, write: Callable[[Any], Any], *, text: bool = True) -> None:
    """Write a new file (inside a private staging folder: no temporary name needed)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0),
                 0o666)
    with (os.fdopen(fd, "w", encoding="utf-8", newline="") if text else os.fdopen(fd, "wb")) as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


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


def _is_temp(name: str) -> bool:
    return name.startswith(".") and (name.endswith(".tmp") or name.startswith(
        (_IN_PLACE_STAGING, _IN_PLACE_COMMIT, BUILD_PREFIX)))


def _recover(out: Path) -> None:
    """Clean up (or finish) what a killed :func:`write_set` left for ``out``; lock held."""
    parent = out.parent
    prefix = f".{out.name}."
    olds = sorted(parent.glob(f"{prefix}old-*"), key=lambda p: p.stat().st_mtime)
    if not out.exists() and olds:
        # killed between the two renames of the fallback swap: put the old set back
        os.rename(olds[-1], out)
        olds = olds[:-1]
    for leftover in [*parent.glob(f"{prefix}staging-*"), *olds]:
        shutil.rmtree(leftover, ignore_errors=True)
    if out.is_dir():
        for d in out.glob(f"{_IN_PLACE_COMMIT}*"):  # complete set, partly moved: finish it
            _roll_forward(d, out)
        for d in out.glob(f"{_IN_PLACE_STAGING}*"):  # incomplete set: drop it
            shutil.rmtree(d, ignore_errors=True)


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
    with folder_lock(out.parent, timeout=timeout, what=out):
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
    staging = out.parent / f".{out.name}.staging-{_token()}"
    os.mkdir(staging, 0o777)
    try:
        _stage(staging, files)
        if out.exists():
            shutil.copymode(out, staging)
            skip = set(files) | set(remove)
            with os.scandir(out) as it:
                for entry in it:
                    if entry.name not in skip and not _is_temp(entry.name):
                        link_tree(Path(entry.path), staging / entry.name)
        if finish is not None:
            finish(staging)
        if not out.exists():
            os.rename(staging, out)
            return
        if not _exchange(staging, out):
            old = out.parent / f".{out.name}.old-{_token()}"
            os.rename(out, old)  # a kill here is undone by the next run (_recover)
            os.rename(staging, out)
            staging = old
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(staging, ignore_errors=True)  # now the old set


#: In an in-place commit folder: the names the set removes, one a line.
_REMOVE_LIST = ".remove"
#: In an in-place commit folder: entries replaced, deleted once every entry is in place.
_TRASH = ".replaced"


def _move_in(out: Path, files: Mapping[str, Any], remove: Iterable[str] = (),
             finish: Callable[[Path], Any] | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    token = _token()
    staging = out / f"{_IN_PLACE_STAGING}{token}"
    os.mkdir(staging, 0o777)
    try:
        _stage(staging, files)
        if finish is not None:
            finish(staging)
        (staging / _REMOVE_LIST).write_text("".join(f"{r}\n" for r in remove),
                                           encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    commit = out / f"{_IN_PLACE_COMMIT}{token}"
    os.rename(staging, commit)  # the set is complete: from here a killed run is rolled forward
    _roll_forward(commit, out)


def _roll_forward(commit: Path, out: Path) -> None:
    """Move a complete in-place set into ``out`` (idempotent: a killed move is finished by
    calling it again): each entry replaces its namesake (a replaced folder goes to the
    commit folder's trash first), then the listed removals go."""
    trash = commit / _TRASH
    trash.mkdir(exist_ok=True)
    removals = []
    if (commit / _REMOVE_LIST).exists():
        removals = (commit / _REMOVE_LIST).read_text(encoding="utf-8").split("\n")
    for entry in sorted(commit.iterdir()):
        if entry.name in (_TRASH, _REMOVE_LIST):
            continue
        dest = out / entry.name
        if dest.is_dir() and not dest.is_symlink():
            os.replace(dest, trash / entry.name)
        os.replace(entry, dest)
    for name in filter(None, removals):
        dest = out / name
        if dest.is_dir() and not dest.is_symlink():
            os.replace(dest, trash / name)
        elif dest.exists() or dest.is_symlink():
            dest.unlink()
    shutil.rmtree(commit, ignore_errors=True)
