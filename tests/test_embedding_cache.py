"""The on-disk embedding cache, with the real MiniLM encoder (wrapped to count its calls)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from toolsel import Tool, get_scorer
from toolsel.scorers import embedding as embedding_module
from toolsel.scorers.embedding import load_encoder
from toolsel.scorers.embedding_cache import (MAX_SHARDS, EmbeddingCache, EmbeddingCacheWarning,
                                             cache_root, text_hash)


class CountingEncoder:
    """The real encoder, recording every text it is asked to encode."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.model_id = encoder.model_id
        self.dim = encoder.dim
        self.calls: list[list[str]] = []

    def encode(self, texts, *, batch_size=64):
        self.calls.append(list(texts))
        return self.encoder.encode(texts, batch_size=batch_size)

    @property
    def n_texts(self) -> int:
        return sum(len(c) for c in self.calls)


@pytest.fixture
def counting(monkeypatch):
    enc = CountingEncoder(load_encoder())
    monkeypatch.setattr(embedding_module, "load_encoder", lambda model: enc)
    return enc


@pytest.fixture
def tools(registry):
    return list(registry)[:20]


def test_second_fit_encodes_nothing_and_gives_the_same_vectors(tools, tmp_path, counting):
    first = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    assert first.n_encoded_ == len(tools) and counting.n_texts == len(tools)
    files = list((tmp_path / "embeddings").rglob("*"))
    # no temporary file left: one shard and the index naming it
    assert sorted(p.name[-4:] for p in files if p.is_file()) == [".npz", "json"]
    second = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    assert second.n_encoded_ == 0 and counting.n_texts == len(tools)  # no new encoder call
    np.testing.assert_array_equal(second.vectors_, first.vectors_)
    plain = get_scorer("embedding", cache=False).fit(tools)
    np.testing.assert_allclose(second.vectors_, plain.vectors_, atol=1e-6)
    q = "send a message to the team channel"
    np.testing.assert_array_equal(second.score(q), first.score(q))


def test_changed_text_reencodes_only_that_text(tools, tmp_path, counting):
    get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    edited = list(tools)
    edited[3] = dataclasses.replace(tools[3], description=tools[3].description + " Fast.")
    counting.calls.clear()
    scorer = get_scorer("embedding", cache_dir=tmp_path).fit(edited)
    assert scorer.n_encoded_ == 1
    assert counting.calls == [[scorer.texts_[3]]]
    fresh = get_scorer("embedding", cache=False).fit([edited[3]]).vectors_[0]
    np.testing.assert_allclose(scorer.vectors_[3], fresh, atol=1e-6)
    # the other rows are the cached ones; registry order is kept
    again = get_scorer("embedding", cache_dir=tmp_path).fit(edited[::-1])
    np.testing.assert_array_equal(again.vectors_, scorer.vectors_[::-1])


def test_duplicate_texts_are_encoded_once(tmp_path, counting):
    tools = [Tool("a", "same words"), Tool("b", "same words")]
    s = get_scorer("embedding", fields=["description"], cache_dir=tmp_path).fit(tools)
    assert counting.calls == [["same words"]]
    np.testing.assert_array_equal(s.vectors_[0], s.vectors_[1])


def test_cache_false_writes_nothing(tools, tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEL_CACHE", str(tmp_path))
    get_scorer("embedding", cache=False).fit(tools)
    assert not any(tmp_path.iterdir())


def test_cache_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEL_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    assert cache_root(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("TOOLSEL_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "toolsel"
    cache = EmbeddingCache("org/model name", tmp_path)
    assert cache.directory == tmp_path / "embeddings" / "org--model--name"


def _corrupt_bitflip(path):
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # inside the vectors: only the zip CRC can tell
    path.write_bytes(bytes(raw))


def _corrupt_truncate(path):
    path.write_bytes(path.read_bytes()[:100])


def _corrupt_garbage(path):
    path.write_bytes(b"not a zip file at all")


@pytest.mark.parametrize("corrupt", [_corrupt_bitflip, _corrupt_truncate, _corrupt_garbage])
def test_corrupted_file_is_reported_and_reencoded(tools, tmp_path, counting, corrupt):
    good = get_scorer("embedding", cache_dir=tmp_path).fit(tools).vectors_
    (shard,) = (tmp_path / "embeddings").rglob("*.npz")
    corrupt(shard)
    counting.calls.clear()
    with pytest.warns(EmbeddingCacheWarning, match=f"{shard.name} (is corrupted|was changed after toolsel wrote it)"):
        again = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    assert again.n_encoded_ == len(tools) and counting.n_texts == len(tools)
    np.testing.assert_allclose(again.vectors_, good, atol=1e-6)
    # the changed file is left alone (it may be a user's), the re-encoded vectors are cached
    assert get_scorer("embedding", cache_dir=tmp_path).fit(tools).n_encoded_ == 0


def test_inconsistent_shard_is_rejected(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    cache.store(["x", "y"], np.ones((2, 4), dtype=np.float32))
    assert set(cache.load(dim=4)) == {text_hash("x"), text_hash("y")}
    with pytest.warns(EmbeddingCacheWarning, match="4 dimensions, the model gives 3"):
        assert cache.load(dim=3) == {}
    other = EmbeddingCache("m", tmp_path)
    path = other._write(np.zeros((2, 32), np.uint8), np.full((2, 4), np.nan, np.float32))
    with pytest.warns(EmbeddingCacheWarning, match="non-finite"):
        assert other.load() == {}
    assert not path.exists()
    # a shard of another model moved into this model's directory: not in its index, so
    # neither used nor removed
    stranger = EmbeddingCache("n", tmp_path)
    p = stranger.store(["z"], np.ones((1, 4), np.float32))
    p.rename(cache.directory / p.name)
    with pytest.warns(EmbeddingCacheWarning, match="index does not name.*left alone"):
        assert cache.load() == {}
    assert (cache.directory / p.name).exists()


def test_many_shards_are_merged(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    for i in range(MAX_SHARDS + 1):
        cache.store([f"t{i}"], np.full((1, 3), i, dtype=np.float32))
    assert len(list(cache.directory.glob("*.npz"))) == 1
    table = cache.load(dim=3)
    assert len(table) == MAX_SHARDS + 1
    assert table[text_hash("t7")].tolist() == [7, 7, 7]
    vecs, n = cache.get_or_encode(["t2", "t9"], lambda texts: pytest.fail("encoded"))
    assert n == 0 and vecs[:, 0].tolist() == [2, 9]


def test_unwritable_cache_dir_warns_and_still_fits(tools, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    with pytest.warns(EmbeddingCacheWarning, match="could not write"):
        s = get_scorer("embedding", cache_dir=blocker).fit(tools)
    assert s.vectors_.shape == (len(tools), 384) and s.n_encoded_ == len(tools)
