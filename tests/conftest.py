"""Shared fixtures: the real data files, and a tiny hand-checkable registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsel import Tool, load_queries, load_registry

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
_CACHE_TMP: str | None = None


def pytest_configure(config):
    """Tests never write into the user's cache or state: ``TOOLSEL_CACHE`` (and
    ``TOOLSEL_STATE`` inside it) points at a temporary folder
    for the whole run (subprocesses and kernels inherit it). The real model's vectors already
    in the user's cache are copied in (read, never written), so the suite need not re-encode
    them."""
    global _CACHE_TMP
    import os
    import shutil
    import tempfile

    import numpy as np

    from toolsel.scorers.embedding_cache import EmbeddingCache, _safe_dirname, cache_root
    real = cache_root()
    _CACHE_TMP = tempfile.mkdtemp(prefix="toolsel-test-cache-")
    os.environ["TOOLSEL_CACHE"] = _CACHE_TMP
    # likewise toolsel's state folder (the key of its bookkeeping records): never the user's
    os.environ["TOOLSEL_STATE"] = os.path.join(_CACHE_TMP, "state")
    src = real / "embeddings"
    if src.is_dir() and not src.is_symlink():
        # the user's vectors seed the suite's cache, written anew under the suite's own key
        # (the cache reads only shards its authenticated index names)
        for model in src.iterdir():
            if not model.is_dir() or model.is_symlink() or \
                    model.name.startswith(("fake", "counting")):
                continue
            for shard in sorted(model.glob("*.npz")):
                try:
                    with np.load(shard, allow_pickle=False) as z:
                        hashes, vectors, model_id = z["hashes"], z["vectors"], str(z["model"])
                    if _safe_dirname(model_id) == model.name and np.isfinite(vectors).all():
                        EmbeddingCache(model_id, _CACHE_TMP)._write(hashes, vectors)
                except Exception:  # a shard that does not read: the suite encodes its texts
                    continue
    # tests that import onnxruntime themselves (pytest.importorskip) bypass toolsel's own
    # import, which turns its telemetry store off: without this, the suite writes a device id
    # under ~/.cache/Microsoft (seen in a fresh HOME after `make test`)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def pytest_unconfigure(config):
    import shutil
    if _CACHE_TMP is not None:
        shutil.rmtree(_CACHE_TMP, ignore_errors=True)


@pytest.fixture(scope="session")
def registry():
    return load_registry(DATA / "registry.json")


@pytest.fixture(scope="session")
def queries(registry):
    return load_queries(DATA / "queries.jsonl", registry)


@pytest.fixture
def tiny():
    """Four tools whose Jaccard scores are easy to work out by hand."""
    return [
        Tool("weather_lookup", "current weather for a city"),
        Tool("stock_price", "latest stock price for a ticker"),
        Tool("translate_text", "translate text into another language"),
        Tool("calculator", "evaluate a basic arithmetic expression"),
    ]


def pytest_terminal_summary(terminalreporter):
    """One closing line when browser tests were skipped, with what to install (the skip reasons
    say it per test, but ``-ra``'s list is easy to miss at the end of a long run)."""
    skipped = [r for r in terminalreporter.stats.get("skipped", [])
               if "chromium" in str(getattr(r, "longrepr", "")).lower()]
    if skipped:
        terminalreporter.write_line(
            f"{len(skipped)} browser tests skipped: Chromium is not installed here; install it "
            "with `apt-get install --no-install-recommends chromium chromium-driver` "
            "(as root; CI's .ci/run does) and rerun", yellow=True, bold=True)


def snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every entry under ``root`` (but ``skip``): files by sha256 and mode, links by target,
    folders, pipes and sockets by mode: a sentinel tree hashed before and after a command."""
    import hashlib
    import os
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        if skip is not None and (d == skip or skip in d.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = d / name
            if skip is not None and p == skip:
                continue
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = f"dir:{p.stat().st_mode:o}"
            elif not p.is_file():  # a named pipe, a socket: never opened (it could block)
                out[rel] = f"special:{p.stat().st_mode:o}"
            else:
                digest = hashlib.sha256()
                with open(p, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
                out[rel] = f"{digest.hexdigest()}:{p.stat().st_mode:o}"
    return out


def refused(done, *words: str) -> str:
    """A command run (``subprocess.CompletedProcess``) exited 2 with one error line, no
    traceback, holding ``words``; that line."""
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err
