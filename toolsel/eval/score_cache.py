"""Score matrices a report run computes once and every page reads: one scoring of the
registry per scorer per query set.

``toolsel report`` runs its pages in separate kernels, several of which score the same
queries with the same scorers (the overview, recall-vs-payload, misses and policy pages all
sweep the compared scorers). While a report runs, the runner names a cache folder in
:data:`CACHE_ENV` (``OUT/.toolsel-scores``, :data:`CACHE_DIR`) and every kernel inherits it;
:func:`toolsel.eval.engine.score_matrix` (which :func:`~toolsel.eval.engine.rank_batches`,
hence every sweep, and :func:`toolsel.eval.crossfit.prepare` call) then asks this cache before
scoring. Outside a report (no variable), nothing is cached and nothing changes.

**An entry is the answer to one question, named by its content.** Its key is the SHA-256 of
the scorer's class and constructor parameters, every field of every tool in registry order,
the texts scored in order, whether the no-match rule was asked for, and the environment the
scores come from (:func:`environment_key`: the bytes of toolsel's own source files, every
installed package and version, Python's version). A changed description, query, parameter,
toolsel source file or library gives another key: a stale entry can never be read. Only
scorers registered by name (:func:`~toolsel.scorers.base.register_scorer`) whose parameters
are plain values are cached; a learned model, a hook or an object parameter is scored as
before.

**The same bytes cold or warm.** A miss is computed the one canonical way (the whole text
list, in blocks of :func:`canonical_block` rows, whoever asks and in whatever batches it
will read them), so a page reads the same floats whether it computed the entry, another page
did, or an earlier run did: outputs do not depend on the cache's state or on which page ran
first.

**Toolsel's own, never through a link.** The folder is a real folder of this user (made by the
first page that stores an entry, opened without following a link, checked to be the folder
judged: :func:`toolsel.io.open_folder`; removed when a whole run leaves it empty);
an entry is ``<key>.npz`` (the arrays, and the key itself as its mark) written atomically by
:func:`toolsel.io.write_bytes`, plus ``<key>.json``, a record authenticated with this user's
key (:func:`toolsel.io.sign_record`) holding the SHA-256 of the ``.npz`` bytes and the
arrays' shapes. An entry is read only when its record verifies and the file's bytes match
its digest; anything else (a copy, a planted or damaged file, a link) is not used and the
scores are computed again. Two kernels asking for the same entry at once: the second waits
on a per-entry ``flock`` (released by the kernel if the holder dies) and reads what the first
wrote. :func:`prune` (the runner, after the pages) removes the entries the run did not use.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import re
import stat
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..io import (NOFOLLOW, OutputError, open_folder, owned_by_me, read_record, sign_record,
                  write_bytes, write_text)

__all__ = ["CACHE_ENV", "CACHE_DIR", "MAX_CELLS", "ScoreCache", "ScoreCacheWarning",
           "active_cache", "environment_key", "scorer_config", "entry_key", "prune",
           "canonical_block"]

#: The environment variable naming the cache folder of the running report.
CACHE_ENV = "TOOLSEL_SCORE_CACHE"
#: The cache folder's name inside a report folder.
CACHE_DIR = ".toolsel-scores"
#: Largest matrix cached (queries x tools); larger ones are scored batch by batch as before.
MAX_CELLS = 1 << 24
#: Scores (queries x tools) of one canonical scoring block: 64 queries at 4,000 tools.
BLOCK_CELLS = 64 * 4000
#: Queries of one canonical block at most.
BLOCK_ROWS = 64
_KIND = "toolsel score cache entry"
#: File times come from the kernel's coarse clock: an entry read just after ``before`` may
#: carry a time a few milliseconds earlier, so :func:`prune` keeps anything this close to it.
_SLACK_S = 1.0
_KEY = re.compile(r"^[0-9a-f]{64}$")
_PLAIN = (str, int, float, bool, type(None))


class ScoreCacheWarning(UserWarning):
    """The report's score cache cannot be used (scores are computed as without it)."""


def canonical_block(n_tools: int) -> int:
    """Queries scored per block when an entry is computed: the same for every caller."""
    return max(1, min(BLOCK_ROWS, BLOCK_CELLS // max(int(n_tools), 1)))


_ENV_KEY: list[str] = []


def environment_key() -> str:
    """A digest of what scores depend on besides their inputs: toolsel's source files (path
    and bytes), every installed distribution with its version, and Python's version
    (computed once per process)."""
    if _ENV_KEY:
        return _ENV_KEY[0]
    from importlib import metadata
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    dists = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()
                    if d.metadata["Name"]})
    h.update("\n".join(dists).encode("utf-8"))
    h.update(sys.version.encode("utf-8"))
    _ENV_KEY.append(h.hexdigest())
    return _ENV_KEY[0]


def _plain(value) -> bool:
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def scorer_config(scorer) -> dict | None:
    """The scorer's class and parameters, when they say everything its scores depend on (a
    scorer registered by name with plain parameters), else ``None`` (not cached)."""
    from ..scorers.base import Scorer, available_scorers, scorer_class
    if not isinstance(scorer, Scorer) or scorer.name not in available_scorers() or \
            scorer_class(scorer.name) is not type(scorer):
        return None
    params = scorer.get_params()
    if not _plain(params):
        return None
    cls = type(scorer)
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "name": scorer.name,
            "params": params}


def _tool_record(tool) -> list:
    return [tool.name, tool.description, tool.parameters, dict(tool.metadata)] \
        if not dataclasses.is_dataclass(tool) else \
        [getattr(tool, f.name) for f in dataclasses.fields(tool)]


def _jsonable(value):
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    return repr(value)


def entry_key(config: Mapping, tools: Iterable, texts: Sequence[str], *,
              matches: bool) -> str:
    """The entry's name: SHA-256 of the scorer ``config``, every tool, the texts, the
    no-match flag and :func:`environment_key`."""
    h = hashlib.sha256()

    def put(value) -> None:
        data = json.dumps(value, sort_keys=True, ensure_ascii=False, default=_jsonable)
        h.update(data.encode("utf-8", "surrogatepass") + b"\0")

    put({"environment": environment_key(), "scorer": config, "matches": bool(matches)})
    for t in tools:
        put(_tool_record(t))
    h.update(b"texts\0")
    for text in texts:
        put(text)
    return h.hexdigest()


def _npz_bytes(arrays: Mapping[str, np.ndarray], key: str) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, key=np.frombuffer(key.encode("ascii"), dtype=np.uint8), **arrays)
    return buf.getvalue()


def _is_record(data: bytes) -> bool:
    """Whether existing bytes at ``<key>.json`` are an entry's record (replaceable)."""
    try:
        return json.loads(data.decode("utf-8")).get("kind") == _KIND
    except (ValueError, AttributeError):
        return False


def _marked(key: str) -> Callable[[bytes], bool]:
    """Whether existing bytes at ``<key>.npz`` are an entry of that key (replaceable)."""
    def owned(data: bytes) -> bool:
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                return "key" in z.files and bytes(z["key"]) == key.encode("ascii")
        except Exception:  # noqa: BLE001 - anything unreadable is not an entry
            return False
    return owned


class ScoreCache:
    """The cache folder of one report (see the module docstring)."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(os.path.realpath(folder))

    def __repr__(self) -> str:
        return f"ScoreCache({str(self.folder)!r})"

    def _open(self, create: bool = True) -> int:
        if create:
            try:  # never through a link: mkdir does not follow one at its name
                os.mkdir(self.folder, 0o777)
            except FileExistsError:
                pass
            except OSError as exc:
                raise OutputError(self.folder, f"cannot be made ({exc.strerror})") from None
        dfd = open_folder(self.folder, self.folder)
        if not owned_by_me(os.fstat(dfd)):
            os.close(dfd)
            raise OutputError(self.folder, "is another user's folder")
        return dfd

    def get_or_compute(self, key: str, compute: Callable[[], Mapping[str, np.ndarray]]
                       ) -> dict[str, np.ndarray]:
        """The arrays of entry ``key``: read when a verified entry exists, else computed by
        ``compute()`` and stored (one computer at a time per key). A folder that cannot be
        used (gone, a link, another user's) computes without storing, with one warning."""
        if not _KEY.match(key):
            raise ValueError(f"not an entry key: {key!r}")
        try:
            dfd = self._open()
        except OutputError as exc:
            _warn(f"score cache {exc}: not used")
            return dict(compute())
        try:
            lock = os.open(f"{key}.lock", os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600,
                           dir_fd=dfd)
        except OSError as exc:
            os.close(dfd)
            _warn(f"score cache {self.folder}: cannot lock an entry ({exc.strerror}): not used")
            return dict(compute())
        try:
            import fcntl
            fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
            hit = self._read(dfd, key)
            if hit is not None:
                os.utime(f"{key}.json", dir_fd=dfd, follow_symlinks=False)
                return hit
            arrays = {k: np.ascontiguousarray(v) for k, v in compute().items()}
            self._write(key, arrays)
            return arrays
        finally:
            os.close(lock)
            os.close(dfd)

    def _read(self, dfd: int, key: str) -> dict[str, np.ndarray] | None:
        record = read_record(self.folder / f"{key}.json", _KIND)
        if record is None or record.get("key") != key:
            return None
        try:
            fd = os.open(f"{key}.npz", os.O_RDONLY | NOFOLLOW, dir_fd=dfd)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or not owned_by_me(st):
                return None
            data = fh.read()
        if hashlib.sha256(data).hexdigest() != record.get("sha256"):
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                arrays = {name: z[name] for name in z.files if name != "key"}
        except Exception:  # noqa: BLE001 - a damaged entry is computed again
            return None
        shapes = record.get("arrays")
        if not isinstance(shapes, dict) or set(shapes) != set(arrays) or any(
                [list(a.shape), str(a.dtype)] != shapes[n] for n, a in arrays.items()):
            return None
        return arrays

    def _write(self, key: str, arrays: Mapping[str, np.ndarray]) -> None:
        data = _npz_bytes(arrays, key)
        try:
            write_bytes(data, self.folder / f"{key}.npz", owned=_marked(key))
            record = sign_record({"kind": _KIND, "key": key,
                                  "sha256": hashlib.sha256(data).hexdigest(),
                                  "arrays": {n: [list(a.shape), str(a.dtype)]
                                             for n, a in arrays.items()}})
            write_text(json.dumps(record, sort_keys=True) + "\n", self.folder / f"{key}.json",
                       owned=_is_record)
        except OutputError as exc:  # a file of someone else's at the name: leave it
            _warn(f"score cache: {exc}; this entry is not stored")


def _warn(message: str) -> None:
    warnings.warn(message, ScoreCacheWarning, stacklevel=3)


def active_cache() -> ScoreCache | None:
    """The running report's cache (:data:`CACHE_ENV`), or ``None`` outside a report."""
    folder = os.environ.get(CACHE_ENV)
    return ScoreCache(folder) if folder else None


def prune(folder: str | os.PathLike, before: float) -> int:
    """Remove the entries of the cache ``folder`` last written or read before ``before``
    (a time stamp: the run's start), and their lock files. Only entries whose record verifies
    are removed (with their ``.npz``); nothing else in the folder is touched. Returns how many
    entries went."""
    cache = ScoreCache(folder)
    if not cache.folder.is_dir():
        return 0
    try:
        dfd = cache._open(create=False)
    except OutputError:
        return 0
    gone = 0
    try:
        for name in sorted(os.listdir(dfd)):
            key, _, ext = name.partition(".")
            if ext != "json" or not _KEY.match(key):
                continue
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            record = read_record(cache.folder / name, _KIND)
            if record is None or record.get("key") != key or st.st_mtime >= before - _SLACK_S:
                continue
            for part in (f"{key}.npz", f"{key}.lock", name):
                try:
                    if stat.S_ISREG(os.stat(part, dir_fd=dfd, follow_symlinks=False).st_mode):
                        os.unlink(part, dir_fd=dfd)
                except FileNotFoundError:
                    pass
            gone += 1
        empty = not os.listdir(dfd)
    finally:
        os.close(dfd)
    if empty:  # a report that scored nothing leaves no folder behind
        with contextlib.suppress(OSError):
            os.rmdir(cache.folder)
    return gone
