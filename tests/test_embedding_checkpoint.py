"""Issue 25, scale: a cold embedding fit checkpoints its vectors in chunks (an interrupted
encode resumes) and shows progress (texts encoded, rate, time left) on a terminal."""

from __future__ import annotations

import io

import numpy as np
import pytest

from toolsel.scorers import embedding_cache as ec


def _encoder(log: list[int], fail_after: int | None = None):
    """A deterministic 8-dimensional text encoder that counts what it encodes and can stop
    (as a Ctrl-C would) after ``fail_after`` calls."""
    def encode(texts):
        if fail_after is not None and len(log) >= fail_after:
            raise KeyboardInterrupt
        log.append(len(texts))
        rows = [np.frombuffer(ec.text_hash(t)[:8], dtype=np.uint8).astype(np.float32)
                for t in texts]
        return np.stack(rows)
    return encode


def test_an_interrupted_cold_fit_resumes_after_its_last_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(ec, "CHECKPOINT_TEXTS", 100)
    texts = [f"tool {i}: does thing number {i}" for i in range(350)]
    cache = ec.EmbeddingCache("counting-checkpoint", tmp_path)
    log: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        cache.get_or_encode(texts, _encoder(log, fail_after=2))
    assert log == [100, 100]  # two chunks encoded, then interrupted
    assert len(cache.load()) == 200  # ... and kept
    log.clear()
    vectors, n = ec.EmbeddingCache("counting-checkpoint", tmp_path).get_or_encode(
        texts, _encoder(log))
    assert n == 150 and log == [100, 50]  # only the rest is encoded
    expected = np.stack([_encoder([])([t])[0] for t in texts])
    np.testing.assert_array_equal(vectors, expected)


def test_a_long_cold_fit_shows_progress_on_a_terminal(tmp_path, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(ec, "CHECKPOINT_TEXTS", 500)
    monkeypatch.setattr(ec, "PROGRESS_TEXTS", 1000)
    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    texts = [f"text {i}" for i in range(1200)]
    ec.EmbeddingCache("counting-progress", tmp_path).get_or_encode(texts, _encoder([]))
    shown = err.getvalue()
    assert "encoding tool texts" in shown and "1200/1200" in shown and "text/s" in shown
    err.truncate(0)
    ec.EmbeddingCache("counting-progress", tmp_path / "b").get_or_encode(texts[:10],
                                                                        _encoder([]))
    assert err.getvalue() == ""  # a short encode stays quiet
