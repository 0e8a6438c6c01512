"""An on-disk cache of text embeddings, keyed by model and by the SHA-256 of each text.

Vectors live in shard files ``<cache root>/embeddings/<model id>/<shard>.npz``, each holding
``hashes`` (``(n, 32)`` uint8: the SHA-256 digests of the texts), ``vectors`` (``(n, dim)``
float32) and the ``model`` id. A fit looks every tool text up, encodes only the misses and
writes them as new shards (one per :data:`CHECKPOINT_TEXTS` texts, each stored as soon as it
is encoded: a killed cold fit keeps what it encoded and the next fit resumes after it), so
re-fitting an unchanged registry encodes nothing and a registry with one edited tool encodes
one text. A long cold encode shows texts encoded, rate and time left on a terminal.

The cache root is ``cache_dir`` when given, else ``$TOOLSEL_CACHE``, else
``$XDG_CACHE_HOME/toolsel`` (``~/.cache/toolsel``).

**The cache is toolsel's own** (issue 35):

- *Never through a link.* When the root, its ``embeddings/`` or the model folder is a symbolic
  link (or one of the two folders is another user's), the cache is not used: one
  :class:`EmbeddingCacheWarning` line says so, the vectors are encoded and nothing is read,
  written or removed there. A root no toolsel command writes (a toolsel checkout or its source
  folders, the home folder: :func:`toolsel.io.refuse_never_write`) is refused with
  :class:`toolsel.io.OutputError` (one line, exit 2 in the CLI). The model folder is opened
  once (no link followed, checked to be the folder judged) and every file is read, written
  and removed through that descriptor.
- *An index only toolsel can write.* Each model folder holds ``.toolsel-index-<key id>.json`` (one per user key), an
  authenticated record (HMAC under the user's key in :func:`toolsel.io.state_dir`, naming the
  folder's real path, device and inode, and the model) that lists each shard toolsel wrote
  there with its file's device and inode and the SHA-256 of its content (hashes and vectors).
  Only shards it names are read; any other ``.npz`` there (an older toolsel's cache, a copy,
  a user's file) is left alone and not used, said once.
- *Verified on read, rebuilt when they fail.* A shard whose content does not match its
  digest (permuted vectors under the right text hashes, a flipped bit), or that fails a check
  (shapes, dtype, model id, finite values), is reported with an :class:`EmbeddingCacheWarning`
  naming the file and its texts encoded again; it is removed only when it is toolsel's: its
  content is what the index records, or it is still the very file toolsel wrote (the device,
  inode and ctime its index records: disk damage). A file
  changed since, or another file put at an indexed name, is not used and left alone (said
  once, then marked in the index and skipped). Vectors are never taken from a file that
  failed a check.
- *One writer at a time, readers never see half a state.* Writers hold an exclusive ``flock``
  on the model folder, readers a shared one; a shard is written to a temporary file
  (``.<random>.npz.part``: never matches ``*.npz``), recorded in the index, then linked to a
  name nothing holds (never replacing a file), so several processes can fit into one cache
  at once without losing shards. Files are created with the user's umask.

A cache folder copied, moved or restored (a CI cache) with its index stays warm as long as
the record key in the state folder is the same (keep ``~/.local/state/toolsel`` in the CI
cache too): its shards are read when their content matches the digests, then recorded with
their new identities. A cache written by a toolsel before the index existed is not used (its shards cannot be
proven toolsel's); the first fit encodes again and caches under the index.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import secrets
import stat
import time
import warnings
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..io import (NOFOLLOW, OutputError, file_identity, open_folder, owned_by_me, plain_name,
                  read_record, record_key, refuse_never_write, sign_record)
from ..jsonl import dumps as _dumps

__all__ = ["EmbeddingCache", "EmbeddingCacheWarning", "cache_root", "text_hash"]

#: Merge the shards into one when a model directory holds more than this many.
MAX_SHARDS = 16
#: Texts encoded between two checkpoints of a cold fit (each chunk is stored as a shard as
#: soon as it is encoded, so an interrupted encode resumes where it stopped).
CHECKPOINT_TEXTS = 1024
#: A cold encode of at least this many texts shows progress on a terminal.
PROGRESS_TEXTS = 2048


@contextlib.contextmanager
def _progress(total: int, what: str = "tool texts"):
    """A progress bar for encoding ``total`` texts (texts encoded, rate, time left) on stderr,
    shown only on a terminal and for long encodes."""
    import sys
    show = total >= PROGRESS_TEXTS and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a core dependency
        show = False
    if not show:
        class _Quiet:
            def update(self, n):
                pass
        yield _Quiet()
        return
    with tqdm(total=total, desc=f"encoding {what}", unit="text", file=sys.stderr,
              dynamic_ncols=True) as bar:
        yield bar


class EmbeddingCacheWarning(UserWarning):
    """A cache file was unreadable or inconsistent and has been discarded, or the cache is
    not used (a link, another user's folder, files toolsel did not write)."""


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache root: ``cache_dir``, ``$TOOLSEL_CACHE`` or ``~/.cache/toolsel``."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("TOOLSEL_CACHE")
    if env:  # a relative path is the caller's: resolved against the current folder now
        return Path(env).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "toolsel"


def text_hash(text: str) -> bytes:
    """The 32-byte SHA-256 digest of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def _safe_dirname(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "--", model_id).strip(".") or "model"


#: The index of a model folder: an authenticated record (:mod:`toolsel.io`) naming each shard
#: toolsel wrote there, its file (device, inode) and the SHA-256 of its content.
INDEX_PREFIX = ".toolsel-index-"


def index_name(create: bool = False) -> str | None:
    """The index file of this user's key: ``.toolsel-index-<key id>.json`` (several keys, e.g.
    a reset state folder or a test suite's, never overwrite each other's index); ``None``
    when there is no key yet (and ``create`` is false)."""
    key = record_key(create)
    if key is None:
        return None
    import hmac
    ident = hmac.new(key, b"toolsel embedding cache index", hashlib.sha256).hexdigest()[:16]
    return f"{INDEX_PREFIX}{ident}.json"


def _indexed_elsewhere(dfd: int, ours: str | None) -> set[str]:
    """Shard names other index files there name (other keys'): not used, not reported."""
    names: set[str] = set()
    with contextlib.suppress(OSError):
        for entry in os.listdir(dfd):
            if not entry.startswith(INDEX_PREFIX) or entry == ours:
                continue
            with contextlib.suppress(OSError, ValueError, RecursionError, AttributeError):
                fd = os.open(entry, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
                             dir_fd=dfd)
                with os.fdopen(fd, "rb") as fh:
                    names |= set(json.loads(fh.read(1 << 20))["shards"])
    return names
_INDEX_KIND = "toolsel embedding cache index"
_PART = re.compile(r"\.[0-9a-f]{12}\.npz\.part")
#: Folders whose "not used" warning this process already gave (one line per folder).
_WARNED: set[tuple[str, str]] = set()


def _warn_once(key: str, kind: str, message: str) -> None:
    if (key, kind) in _WARNED:
        return
    _WARNED.add((key, kind))
    warnings.warn(message, EmbeddingCacheWarning, stacklevel=4)


def _file_id(st: os.stat_result) -> list[int]:
    """What says a shard is still the file toolsel wrote: device, inode, ctime (ns)."""
    return [st.st_dev, st.st_ino, st.st_ctime_ns]


def _lock(fd: int, exclusive: bool) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock (one writer at a time there)
        return
    fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


class EmbeddingCache:
    """Vectors of one model, stored as shards in one directory.

    Parameters
    ----------
    model_id : str
        Identifies the encoder; vectors of different models never mix.
    cache_dir : path, optional
        The cache root (see :func:`cache_root`); vectors go to ``<root>/embeddings/<model>/``.
    """

    def __init__(self, model_id: str, cache_dir: str | os.PathLike | None = None):
        self.model_id = str(model_id)
        self.root = cache_root(cache_dir)
        self.directory = self.root / "embeddings" / _safe_dirname(self.model_id)

    def __repr__(self) -> str:
        return f"EmbeddingCache({self.model_id!r}, directory={str(self.directory)!r})"

    # -- the folder: toolsel's own, never through a link ----------------------------------

    def _not_usable(self) -> str | None:
        """Why the cache folders may not be used (a link, another user's folder), or ``None``.
        Raises :class:`~toolsel.io.OutputError` for a root no command writes (a toolsel
        checkout or its source folders, the home folder)."""
        refuse_never_write(self.root)
        for p in (self.root, self.root / "embeddings", self.directory):
            try:
                st = os.lstat(p)
            except OSError:
                return None  # missing (made when first written) or not reachable
            if stat.S_ISLNK(st.st_mode):
                try:
                    to = os.readlink(p)
                except OSError:
                    to = "?"
                return (f"{p} is a symbolic link (to {to}); toolsel never reads or writes its "
                        "cache through a link")
            if p != self.root and stat.S_ISDIR(st.st_mode) and not owned_by_me(st):
                return f"{p} is another user's folder"
        return None

    @contextlib.contextmanager
    def _folder(self, *, create: bool, exclusive: bool):
        """``(descriptor, real path)`` of the model folder, locked (shared to read, exclusive
        to change it), or ``None`` when there is none or it may not be used (said once)."""
        why = self._not_usable()
        if why is not None:
            _warn_once(str(self.directory), "unusable",
                       f"embedding cache not used: {why}; the vectors are encoded but not "
                       "cached (set TOOLSEL_CACHE to a real folder of yours to cache them)")
            yield None
            return
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
            for p in (self.root / "embeddings", self.directory):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(p, 0o777)
            why = self._not_usable()  # made by someone else meanwhile, as a link
            if why is not None:
                raise OSError(errno.ELOOP, why)
        else:
            try:
                if not stat.S_ISDIR(os.lstat(self.directory).st_mode):
                    yield None
                    return
            except OSError:
                yield None
                return
        real = Path(os.path.realpath(self.directory))
        dfd = open_folder(self.directory, real)
        try:
            st = os.lstat(self.directory)  # still the folder opened, not a link put there since
            if not stat.S_ISDIR(st.st_mode) or file_identity(st) != file_identity(os.fstat(dfd)):
                raise OSError(errno.ELOOP, f"{self.directory} was replaced while it was opened")
            _lock(dfd, exclusive)
            yield dfd, real
        finally:
            os.close(dfd)  # (releases the lock)

    def _index(self, dfd: int, real: Path, *, bound: list | None = None) -> dict[str, dict]:
        """The shards this folder's authenticated index names (``{}`` when there is none, or
        it is not a record toolsel wrote, under this user's key, for this model).

        ``bound`` (a list) gets whether the record names this very folder (real path, device,
        inode): an index restored from a CI cache or moved with its folder names another, so
        its shards are read (each checked against its digest) but their files' identities
        are not trusted to remove anything until they are verified and recorded again."""
        try:
            name = index_name()
        except OutputError:
            return {}
        data = read_record(real / name, _INDEX_KIND) if name else None
        if data is None or data.get("model") != self.model_id or \
                not isinstance(data.get("shards"), dict):
            return {}
        if bound is not None:
            bound.append(data.get("dir") == file_identity(os.fstat(dfd)) and
                         data.get("in") == str(real.parent))
        return {name: entry for name, entry in data["shards"].items()
                if plain_name(name) and name.endswith(".npz") and isinstance(entry, dict)
                and isinstance(entry.get("sha256"), str) and isinstance(entry.get("file"), list)}

    def _save_index(self, dfd: int, real: Path, shards: dict[str, dict]) -> None:
        data = sign_record({"kind": _INDEX_KIND, "dir": file_identity(os.fstat(dfd)),
                      "in": str(real.parent), "model": self.model_id, "shards": shards})
        body = (_dumps(data) + "\n").encode("utf-8")
        fd, tmp = self._temp(dfd, ".json.part")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(body)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, index_name(create=True), src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise

    @staticmethod
    def _temp(dfd: int, suffix: str) -> tuple[int, str]:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | getattr(os, "O_BINARY", 0)
        for _ in range(100):
            name = f".{secrets.token_hex(6)}{suffix}"
            try:
                return os.open(name, flags, 0o666, dir_fd=dfd), name  # mode 0o666 - umask
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "could not create a unique temporary file")

    # -- shards ---------------------------------------------------------------------------

    def _shards(self) -> list[Path]:
        """The shard files the index names (and that exist)."""
        with self._folder(create=False, exclusive=False) as f:
            if f is None:
                return []
            dfd, real = f
            names = set(os.listdir(dfd))
            return sorted(self.directory / n for n, e in self._index(dfd, real).items()
                          if n in names and not e.get("left"))

    def _read_shard(self, dfd: int, name: str, entry: dict, dim: int | None, bound: bool):
        """``(hashes, vectors, new identity or None)`` for a shard whose content matches the
        digest the index records; ``None`` when missing. Else ``(kind, why)``: ``corrupted``
        (toolsel's content that fails a check, or the very file toolsel wrote, same device,
        inode and ctime, now damaged: removed), ``changed`` (that file, changed since: left
        alone), ``foreign`` (another file at the name: left alone)."""
        try:
            fd = os.open(name, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
                         dir_fd=dfd)
        except FileNotFoundError:  # merged away by another process meanwhile: not corrupt
            return None
        except OSError as exc:
            return ("foreign", "") if exc.errno == errno.ELOOP else \
                ("changed", f"{type(exc).__name__}: {exc}")
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return ("foreign", "")
            raw = fh.read()
        same = bound and _file_id(st) == entry["file"]
        if hashlib.sha256(raw).hexdigest() != entry["sha256"]:
            why = "its content does not match the digest the cache's index holds for it"
            if same:
                return "corrupted", why
            if bound and file_identity(st) == entry["file"][:2]:
                return "changed", why
            return "foreign", ""
        # the content is what toolsel wrote (its digest is in the authenticated index)
        shard = self._check_content(raw, dim)
        if isinstance(shard, str):
            return "corrupted", shard
        return shard[0], shard[1], (None if same else _file_id(st))

    def _check_content(self, raw: bytes, dim: int | None):
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                hashes = z["hashes"]
                vectors = z["vectors"]
                model = str(z["model"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            return f"{type(exc).__name__}: {exc}"
        if hashes.dtype != np.uint8 or hashes.ndim != 2 or hashes.shape[1] != 32:
            return f"'hashes' has dtype {hashes.dtype} and shape {hashes.shape}"
        if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != len(hashes):
            return (f"'vectors' has dtype {vectors.dtype} and shape {vectors.shape} "
                    f"for {len(hashes)} hashes")
        if dim is not None and vectors.shape[1] != dim:
            return f"vectors have {vectors.shape[1]} dimensions, the model gives {dim}"
        if model != self.model_id:
            return f"it holds vectors of model {model!r}, not {self.model_id!r}"
        if not np.isfinite(vectors).all():
            return "it holds non-finite values"
        return hashes, vectors

    def _read_all(self, dfd: int, real: Path, index: dict[str, dict], dim: int | None,
                  bound: bool):
        """Every verified vector of the indexed shards, the bad entries and the entries to
        record again (verified shards whose file identity the index does not hold yet)."""
        table: dict[bytes, np.ndarray] = {}
        bad: list[tuple[str, dict, str, str]] = []
        rebind: list[tuple[str, dict, list]] = []
        foreign = []
        for name in sorted(index):
            if index[name].get("left"):  # a file that changed after toolsel wrote it: said
                continue
            shard = self._read_shard(dfd, name, index[name], dim, bound)
            if shard is None:
                continue
            if isinstance(shard[0], str):
                bad.append((name, index[name], *shard))
                if shard[0] == "foreign":
                    foreign.append(name)
            else:
                table.update(zip(map(bytes, shard[0]), shard[1]))
                if shard[2] is not None:
                    rebind.append((name, index[name], shard[2]))
        with contextlib.suppress(OSError):
            elsewhere = _indexed_elsewhere(dfd, index_name())
            foreign += [n for n in os.listdir(dfd) if n.endswith(".npz") and
                        not n.startswith(".") and n not in index and n not in elsewhere]
        if foreign:
            _warn_once(str(real), "foreign",
                       f"embedding cache folder {real} holds {len(foreign)} .npz file(s) its "
                       f"index does not name as toolsel's (e.g. {sorted(foreign)[0]}; an older "
                       "toolsel's cache, a copy, or not toolsel's): left alone and not used (remove "
                       "them to reclaim the space)")
        for name, _, kind, problem in bad:
            if kind == "corrupted":
                warnings.warn(f"embedding cache file {real / name} is corrupted ({problem}); it "
                              "is removed and its texts will be encoded again",
                              EmbeddingCacheWarning, stacklevel=5)
            elif kind == "changed":
                warnings.warn(f"embedding cache file {real / name} was changed after toolsel "
                              f"wrote it ({problem}): not used and left alone (remove it if it "
                              "is not yours); its texts will be encoded again",
                              EmbeddingCacheWarning, stacklevel=5)
        return table, bad, rebind

    def _drop(self, dfd: int, real: Path, bad: list[tuple[str, dict, str, str]],
              rebind: list[tuple[str, dict, list]] = ()) -> None:
        """Deal with the entries still indexed as read (exclusive lock held): a corrupted
        file that is toolsel's (:meth:`_is_ours`) is removed; any other file there is left
        alone and marked ``left`` (never read again, said once); a verified shard whose file
        the index did not hold (a restored or moved cache) is recorded with its identity, and
        the index bound to this folder."""
        index = self._index(dfd, real)
        for name, entry, new_id in rebind:
            if index.get(name) == entry:
                index[name] = {**entry, "file": new_id}
        for name, entry, kind, _ in bad:
            if index.get(name) != entry:
                continue
            if kind == "corrupted" and self._is_ours(dfd, name, entry):
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dfd)
                del index[name]
            else:
                index[name] = {**entry, "left": True}
        self._save_index(dfd, real, index)

    @staticmethod
    def _is_ours(dfd: int, name: str, entry: dict) -> bool:
        """The file at ``name`` is toolsel's: the very file this cache wrote (device, inode
        and ctime as recorded), or one whose content is what the index records (a restored
        copy). A file put there in its place, or changed since, is not."""
        try:
            fd = os.open(name, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0),
                         dir_fd=dfd)
        except OSError:
            return False
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return False
            if _file_id(st) == entry["file"]:
                return True
            return hashlib.sha256(fh.read()).hexdigest() == entry["sha256"]

    def load(self, dim: int | None = None) -> dict[bytes, np.ndarray]:
        """Every cached vector of this model, ``{sha256 digest: vector}``: only from shards
        the folder's authenticated index names, each checked against its recorded digest."""
        refuse_never_write(self.root)  # a root no command writes: refused, not bypassed
        try:
            with self._folder(create=False, exclusive=False) as f:
                if f is None:
                    return {}
                dfd, real = f
                bound: list = []
                index = self._index(dfd, real, bound=bound)
                table, bad, rebind = self._read_all(dfd, real, index, dim,
                                                    bool(bound and bound[0]))
        except OSError as exc:  # an unreadable cache must not stop a fit
            warnings.warn(f"could not read the embedding cache in {self.directory} ({exc}); "
                          "its texts are encoded", EmbeddingCacheWarning, stacklevel=2)
            return {}
        if bad or rebind:
            with contextlib.suppress(OSError), self._folder(create=False, exclusive=True) as f:
                if f is not None:
                    self._drop(*f, bad, rebind)
        return table

    def _write_locked(self, dfd: int, real: Path, hashes: np.ndarray,
                      vectors: np.ndarray) -> Path:
        buf = io.BytesIO()
        np.savez(buf, hashes=hashes, vectors=vectors, model=np.asarray(self.model_id))
        raw = buf.getvalue()
        fd, tmp = self._temp(dfd, ".npz.part")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
                index = self._index(dfd, real)
                present = set(os.listdir(dfd))
                index = {n: e for n, e in index.items() if n in present}  # vanished: dropped
                base = hashlib.sha256(hashes.tobytes()).hexdigest()[:32]
                name = f"{base}.npz"
                while name in present:  # never replaces a file, ours or not
                    name = f"{base}-{secrets.token_hex(4)}.npz"
                # published under a name nothing holds, then recorded with its final ctime (a
                # run killed between the two leaves a file no index names: left alone)
                os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
                os.unlink(tmp, dir_fd=dfd)
                st = os.fstat(fh.fileno())
            index[name] = {"sha256": hashlib.sha256(raw).hexdigest(), "file": _file_id(st),
                           "n": int(len(hashes))}
            self._save_index(dfd, real, index)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        return self.directory / name

    def _write(self, hashes: np.ndarray, vectors: np.ndarray) -> Path:
        with self._folder(create=True, exclusive=True) as f:
            if f is None:
                raise OSError(errno.EPERM, "the cache folder may not be used")
            return self._write_locked(*f, hashes, vectors)

    def store(self, texts: Sequence[str], vectors: np.ndarray) -> Path | None:
        """Add ``vectors`` of ``texts`` as one shard (merging shards when there are many)."""
        if not len(texts):
            return None
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        hashes = np.frombuffer(b"".join(text_hash(t) for t in texts),
                               dtype=np.uint8).reshape(len(texts), 32)
        if self._not_usable() is not None:
            with self._folder(create=False, exclusive=False):  # says why, once
                return None
        try:
            path = self._write(hashes, vectors)
        except OSError as exc:  # a read-only or full disk must not stop a fit
            if isinstance(exc, OutputError) and "never writes there" in str(exc):
                raise
            warnings.warn(f"could not write the embedding cache in {self.directory} ({exc}); "
                          "the vectors are used but not cached", EmbeddingCacheWarning,
                          stacklevel=3)
            return None
        if len(self._shards()) > MAX_SHARDS:
            try:
                self.compact()
            except OSError as exc:
                warnings.warn(f"could not merge the embedding cache shards in "
                              f"{self.directory} ({exc})", EmbeddingCacheWarning, stacklevel=3)
        return path

    def compact(self) -> Path | None:
        """Merge every shard of this model into one."""
        with self._folder(create=False, exclusive=True) as f:
            if f is None:
                return None
            dfd, real = f
            bound: list = []
            index = self._index(dfd, real, bound=bound)
            table, bad, rebind = self._read_all(dfd, real, index, None,
                                                bool(bound and bound[0]))
            if bad or rebind:
                self._drop(dfd, real, bad, rebind)
            if not table:
                return None
            keys = sorted(table)
            hashes = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
            merged = self._write_locked(dfd, real, hashes, np.stack([table[k] for k in keys]))
            index = self._index(dfd, real)
            for name, entry in list(index.items()):  # only shards this cache wrote
                if name == merged.name or entry.get("left"):
                    continue
                if self._is_ours(dfd, name, entry):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=dfd)
                del index[name]
            self._save_index(dfd, real, index)
            now = time.time()
            for part in os.listdir(dfd):  # a killed writer's leftovers (our names only)
                if not (_PART.fullmatch(part) or re.fullmatch(r"\.[0-9a-f]{12}\.json\.part",
                                                              part)):
                    continue
                with contextlib.suppress(OSError):
                    st = os.stat(part, dir_fd=dfd, follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and owned_by_me(st) and now - st.st_mtime > 600:
                        os.unlink(part, dir_fd=dfd)
            return merged

    def clear(self) -> None:
        """Remove every cached vector of this model (only the shards this cache wrote)."""
        with self._folder(create=False, exclusive=True) as f:
            if f is None:
                return
            dfd, real = f
            index = self._index(dfd, real)
            for name, entry in list(index.items()):
                if entry.get("left"):
                    continue
                if self._is_ours(dfd, name, entry):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=dfd)
                del index[name]
            self._save_index(dfd, real, index)

    def lookup(self, texts: Sequence[str], dim: int | None = None) -> list[np.ndarray | None]:
        """The cached vector of each text, ``None`` where there is none (nothing is encoded)."""
        table = self.load(dim)
        return [table.get(text_hash(t)) for t in texts]

    def get_or_encode(self, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray],
                      *, dim: int | None = None,
                      what: str = "tool texts") -> tuple[np.ndarray, int]:
        """Vectors for ``texts`` (rows in order), encoding only those not cached.

        ``encode`` takes a list of texts and returns their float32 vectors; ``dim``, when
        known, is checked against every cached shard; ``what`` names the texts on the
        progress bar. Returns the vectors and how many texts were encoded.
        """
        table = self.load(dim)
        digests = [text_hash(t) for t in texts]
        missing: dict[bytes, str] = {}
        for d, t in zip(digests, texts):
            if d not in table and d not in missing:
                missing[d] = t
        if missing:
            todo = list(missing.values())
            keys = list(missing)
            with _progress(len(todo), what) as bar:
                for start in range(0, len(todo), CHECKPOINT_TEXTS):
                    part = todo[start:start + CHECKPOINT_TEXTS]
                    fresh = np.asarray(encode(part), dtype=np.float32)
                    if fresh.shape[0] != len(part):
                        raise ValueError(f"the encoder returned {fresh.shape[0]} vectors for "
                                         f"{len(part)} texts")
                    # a checkpoint: a fit killed later keeps these and resumes after them
                    self.store(part, fresh)
                    table.update(zip(keys[start:start + len(part)], fresh))
                    bar.update(len(part))
        if not digests:
            return np.zeros((0, 0), dtype=np.float32), 0
        return np.stack([table[d] for d in digests]), len(missing)
