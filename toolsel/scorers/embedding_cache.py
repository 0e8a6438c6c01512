"""An on-disk cache of text embeddings, keyed by model and by the SHA-256 of each text.

Vectors live in shard files ``<cache root>/embeddings/<model id>/<shard>.npz``, each holding
``hashes`` (``(n, 32)`` uint8: the SHA-256 digests of the texts), ``vectors`` (``(n, dim)``
float32) and the ``model`` id. A fit looks every tool text up, encodes only the misses and
writes them as new shards (one per :data:`CHECKPOINT_TEXTS` texts, each stored as soon as it
is encoded: a killed cold fit keeps what it encoded and the next fit resumes after it), so
re-fitting an unchanged registry encodes nothing and a registry with one edited tool encodes
one text. A long cold encode shows texts encoded, rate and time left on a terminal.

The cache root is ``cache_dir`` when given, else ``$TOOLSEL_CACHE``, else
``$XDG_CACHE_HOME/toolsel`` (``~/.cache/toolsel``). Shards are written to a temporary file
(``.<random>.npz.part``: it never matches the shard pattern ``*.npz``) and renamed, so readers,
in this process or another, never see half a file; several processes can fit into one cache
at once without losing shards. Files are created with the user's umask. A shard that cannot be read, or whose content does
not check out (zip CRC, shapes, dtype, model id, finite values), is reported with a
:class:`EmbeddingCacheWarning` naming the file and removed; its texts are simply encoded again.
Vectors are never taken from a file that failed a check.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
import warnings
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..io import create_unique

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
    """A cache file was unreadable or inconsistent and has been discarded."""


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
        self.directory = cache_root(cache_dir) / "embeddings" / _safe_dirname(self.model_id)

    def __repr__(self) -> str:
        return f"EmbeddingCache({self.model_id!r}, directory={str(self.directory)!r})"

    def _shards(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        # temporary files end in ".part": another process's half-written shard is never read
        return sorted(p for p in self.directory.glob("*.npz") if not p.name.startswith("."))

    def _read_shard(self, path: Path, dim: int | None):
        """``(hashes, vectors)`` of a shard, or ``None`` after warning if it fails a check."""
        try:
            with np.load(path, allow_pickle=False) as z:
                hashes = z["hashes"]
                vectors = z["vectors"]
                model = str(z["model"])
            problem = None
            if hashes.dtype != np.uint8 or hashes.ndim != 2 or hashes.shape[1] != 32:
                problem = f"'hashes' has dtype {hashes.dtype} and shape {hashes.shape}"
            elif vectors.dtype != np.float32 or vectors.ndim != 2 or \
                    len(vectors) != len(hashes):
                problem = (f"'vectors' has dtype {vectors.dtype} and shape {vectors.shape} "
                           f"for {len(hashes)} hashes")
            elif dim is not None and vectors.shape[1] != dim:
                problem = f"vectors have {vectors.shape[1]} dimensions, the model gives {dim}"
            elif model != self.model_id:
                problem = f"it holds vectors of model {model!r}, not {self.model_id!r}"
            elif not np.isfinite(vectors).all():
                problem = "it holds non-finite values"
        except FileNotFoundError:  # merged away by another process meanwhile: not corrupt
            return None
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            return hashes, vectors
        warnings.warn(f"embedding cache file {path} is corrupted ({problem}); it is removed and "
                      "its texts will be encoded again", EmbeddingCacheWarning, stacklevel=4)
        try:
            path.unlink()
        except OSError:
            pass
        return None

    def load(self, dim: int | None = None) -> dict[bytes, np.ndarray]:
        """Every cached vector of this model, ``{sha256 digest: vector}``."""
        table: dict[bytes, np.ndarray] = {}
        for path in self._shards():
            shard = self._read_shard(path, dim)
            if shard is None:
                continue
            hashes, vectors = shard
            table.update(zip(map(bytes, hashes), vectors))
        return table

    def _write(self, hashes: np.ndarray, vectors: np.ndarray) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(hashes.tobytes()).hexdigest()[:32]
        path = self.directory / f"{name}.npz"
        fd, tmp = create_unique(self.directory, ".", ".npz.part")  # mode 0o666 - umask
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, hashes=hashes, vectors=vectors, model=np.asarray(self.model_id))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)  # atomic publication: the shard is whole or absent
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def store(self, texts: Sequence[str], vectors: np.ndarray) -> Path | None:
        """Add ``vectors`` of ``texts`` as one shard (merging shards when there are many)."""
        if not len(texts):
            return None
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        hashes = np.frombuffer(b"".join(text_hash(t) for t in texts),
                               dtype=np.uint8).reshape(len(texts), 32)
        try:
            path = self._write(hashes, vectors)
        except OSError as exc:  # a read-only or full disk must not stop a fit
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
        shards = self._shards()
        table = self.load()
        if not table:
            return None
        keys = sorted(table)
        hashes = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32)
        merged = self._write(hashes, np.stack([table[k] for k in keys]))
        # only shards read above are removed: one another process added meanwhile stays
        for path in shards:
            if path != merged:
                path.unlink(missing_ok=True)
        now = time.time()
        for part in self.directory.glob(".*.npz.part"):  # a killed writer's leftovers
            with contextlib.suppress(OSError):
                if now - part.stat().st_mtime > 600:
                    part.unlink()
        return merged

    def clear(self) -> None:
        """Remove every cached vector of this model."""
        for path in self._shards():
            path.unlink(missing_ok=True)

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
