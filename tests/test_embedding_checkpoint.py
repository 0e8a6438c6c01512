"""Issue 25, scale: a cold embedding fit checkpoints its vectors in chunks (an interrupted
encode resumes) and shows progress (texts encoded, rate, time left) on a terminal."""

from __future__ import annotations

import io

import numpy as np
import pytest

from toolsel.scorers import embedding_cache as ec


def _encoder(log: list[int], fail_after: int | None = None):
    """The default embedding model's encoder, counting what it encodes; it stops (as a Ctrl-C
    would) when asked for more after ``fail_after`` calls."""
    from toolsel.scorers.embedding import load_encoder
    model = load_encoder()

    def encode(texts):
        if fail_after is not None and len(log) >= fail_after:
            raise KeyboardInterrupt
        log.append(len(texts))
        return model.encode(list(texts))
    return encode


def test_an_interrupted_cold_fit_resumes_after_its_last_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setattr(ec, "CHECKPOINT_TEXTS", 10)
    texts = [f"tool {i}: send message number {i} to a channel" for i in range(35)]
    cache = ec.EmbeddingCache("checkpoint-test", tmp_path)
    log: list[int] = []
    with pytest.raises(KeyboardInterrupt):
        cache.get_or_encode(texts, _encoder(log, fail_after=2))
    assert log == [10, 10]  # two chunks encoded, then interrupted
    assert len(cache.load()) == 20  # ... and kept
    log.clear()
    vectors, n = ec.EmbeddingCache("checkpoint-test", tmp_path).get_or_encode(
        texts, _encoder(log))
    assert n == 15 and log == [10, 5]  # only the rest is encoded
    one_pass = _encoder([])(texts)
    np.testing.assert_allclose(vectors, one_pass, atol=1e-5)


def test_a_long_cold_fit_shows_progress_on_a_terminal(tmp_path, monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.setattr(ec, "CHECKPOINT_TEXTS", 10)
    monkeypatch.setattr(ec, "PROGRESS_TEXTS", 30)
    err = Tty()
    monkeypatch.setattr("sys.stderr", err)
    texts = [f"look up the weather in city number {i}" for i in range(35)]
    ec.EmbeddingCache("progress-test", tmp_path).get_or_encode(texts, _encoder([]))
    shown = err.getvalue()
    assert "encoding tool texts" in shown and "35/35" in shown and "text/s" in shown
    err.truncate(0)
    ec.EmbeddingCache("progress-test", tmp_path / "b").get_or_encode(texts[:10], _encoder([]))
    assert err.getvalue() == ""  # a short encode stays quiet
