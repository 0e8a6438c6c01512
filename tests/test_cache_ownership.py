"""Issue 35, item 5: the embedding cache is toolsel's own.

Never used through a link (a cache or model folder linked into a user's folder is bypassed with
one warning line and left byte-identical), never in a toolsel checkout's source folders, only
shards its authenticated index names are read or removed, and every shard is checked against
the digest its index records (permuted vectors under the right text hashes are re-encoded,
not used). Real CLI runs (``toolsel check --scorers embedding``) with a hashed sentinel tree.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import snapshot
from test_links_and_ownership import REG, QUERIES, World, refused
from toolsel.scorers.embedding_cache import (EmbeddingCache, EmbeddingCacheWarning,
                                             text_hash)

CHECK = ["check", "--registry", REG, "--queries", QUERIES, "--scorers", "embedding",
         "--min", "R@10=0.1"]


@pytest.fixture
def world(tmp_path):
    return World(tmp_path)


def _metrics(done) -> str:
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [ln for ln in done.stdout.splitlines() if ln.startswith("embedding: R@10")]
    return line.split(";")[0]  # the scores, not the timings


def _warm(world: World, cache: Path) -> tuple[str, list[Path]]:
    """A first run filling ``cache``: its metrics line and its model folders."""
    first = world.run(*CHECK, TOOLSEL_CACHE=str(cache))
    return _metrics(first), sorted((cache / "embeddings").iterdir())


def test_a_model_folder_linked_into_a_users_folder_is_never_written(world):
    """The reproduction: ~/.cache/toolsel/embeddings/<model> a link to a user folder holding
    a user's .npz: the run warns once, encodes, and leaves the user's folder as it was."""
    cache = world.root / "cache"
    metrics, folders = _warm(world, cache)
    disk = world.home / "bigdisk"
    disk.mkdir()
    for folder in folders:  # "moved to a bigger disk", with a user's own file beside
        shutil.move(str(folder), disk / folder.name)
        (disk / folder.name / "my_vectors.npz").write_bytes(b"a user's file, not a zip")
        os.symlink(disk / folder.name, folder)
    world.freeze()
    done = world.run(*CHECK, TOOLSEL_CACHE=str(cache))
    assert _metrics(done) == metrics
    assert world.changed() == []  # not a byte written, nothing removed, in HOME or elsewhere
    warned = [ln for ln in done.stderr.splitlines() if "embedding cache not used" in ln]
    assert len(warned) == len(folders) and all("symbolic link" in ln for ln in warned), \
        done.stderr
    assert "corrupted" not in done.stderr


@pytest.mark.parametrize("linked", ["root", "embeddings"])
def test_a_cache_root_or_embeddings_folder_that_is_a_link_is_bypassed(world, linked):
    real = world.home / "elsewhere"
    real.mkdir()
    (real / "embeddings").mkdir()
    (real / "embeddings" / "keep.npz").write_bytes(b"user data")
    if linked == "root":
        cache = world.root / "cache"
        os.symlink(real, cache)
    else:
        cache = world.root / "cache"
        cache.mkdir()
        os.symlink(real / "embeddings", cache / "embeddings")
    world.freeze()
    done = world.run(*CHECK, TOOLSEL_CACHE=str(cache))
    assert done.returncode == 0, done.stderr
    assert world.changed() == []
    assert done.stderr.count("embedding cache not used") == 2  # tools and requests: one each


def test_toolsel_cache_in_a_checkouts_source_folder_is_refused(world):
    world.freeze()
    for sub in ("toolsel/cache", "data", ".git/c", ""):
        done = world.run(*CHECK, TOOLSEL_CACHE=str(world.victim / sub))
        refused(done, "never writes there")
    assert world.changed() == []
    # its reports/ folder is fine (like any output folder)
    done = world.run(*CHECK, TOOLSEL_CACHE=str(world.victim / "reports" / "cache"))
    assert done.returncode == 0, done.stderr


def test_a_link_into_a_checkouts_source_folder_is_judged_where_it_leads(world):
    os.symlink(world.victim / "toolsel", world.work / "lnk")
    world.freeze()
    refused(world.run(*CHECK, TOOLSEL_CACHE=str(world.work / "lnk" / "cache")),
            "toolsel", "never writes there")
    refused(world.run(*CHECK, TOOLSEL_CACHE=str(world.work / "lnk" / ".." / "tests")),
            "never writes there")
    assert world.changed() == []


def _permute_in_place(path: Path) -> None:
    """Same text hashes, vectors shuffled between texts, written over the same file (inode)."""
    with np.load(path) as z:
        hashes, vectors, model = z["hashes"], z["vectors"], z["model"]
    order = np.roll(np.arange(len(vectors)), 1)
    with open(path, "r+b") as fh:  # the same inode: the index's digest must catch it
        np.savez(fh, hashes=hashes, vectors=vectors[order], model=model)
        fh.truncate()


def test_permuted_vectors_with_the_right_hashes_are_detected_and_reencoded(world):
    """The reproduction: shards with the right text hashes and permuted vectors dropped
    embedding R@1 to 0; now they fail their digest, are re-encoded and the scores hold."""
    cache = world.root / "cache"
    metrics, folders = _warm(world, cache)
    shards = [p for f in folders for p in f.glob("*.npz")]
    for shard in shards:
        _permute_in_place(shard)
    done = world.run(*CHECK, TOOLSEL_CACHE=str(cache))
    assert _metrics(done) == metrics
    assert done.stderr.count("was changed after toolsel wrote it (its content does not match "
                             "the digest") == len(shards), done.stderr
    assert all(s.exists() for s in shards)  # changed after toolsel wrote them: left alone
    # rebuilt: the next run reads them with no warning and the same scores
    again = world.run(*CHECK, TOOLSEL_CACHE=str(cache))
    assert _metrics(again) == metrics and "warning" not in again.stderr, again.stderr


def test_a_shard_replaced_by_another_file_is_neither_used_nor_removed(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    shard = cache.store(["a", "b"], np.eye(2, 4, dtype=np.float32))
    with np.load(shard) as z:
        hashes, vectors = z["hashes"], z["vectors"]
    shard.unlink()  # a new file (new inode) under the indexed name, permuted vectors
    np.savez(shard, hashes=hashes, vectors=vectors[::-1].copy(), model=np.asarray("m"))
    before = shard.read_bytes()
    with pytest.warns(EmbeddingCacheWarning, match="not used"):
        vecs, n = cache.get_or_encode(["a", "b"], lambda t: np.eye(2, 4, dtype=np.float32))
    assert n == 2 and vecs.tolist() == np.eye(2, 4).tolist()
    assert shard.read_bytes() == before  # not toolsel's file any more: left as it is


def test_a_users_npz_in_the_cache_folder_is_never_deleted(tmp_path):
    """Only entries the index names (same device and inode) are ever removed: a user's file,
    garbage or a valid-looking shard, stays through loads, stores, merges and clear()."""
    cache = EmbeddingCache("m", tmp_path)
    cache.store(["x"], np.ones((1, 3), np.float32))
    mine = {"garbage.npz": b"not a zip", "looks_valid.npz": None}
    for name, data in mine.items():
        if data is None:
            np.savez(cache.directory / name, hashes=np.zeros((1, 32), np.uint8),
                     vectors=np.full((1, 3), np.nan, np.float32), model=np.asarray("m"))
        else:
            (cache.directory / name).write_bytes(data)
    before = {n: (cache.directory / n).read_bytes() for n in mine}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert set(cache.load(3)) == {text_hash("x")}
        for i in range(20):  # past MAX_SHARDS: merged
            cache.store([f"t{i}"], np.ones((1, 3), np.float32))
        cache.compact()
        cache.clear()
    assert {n: (cache.directory / n).read_bytes() for n in mine} == before
    assert not [w for w in seen if "corrupted" in str(w.message)]
    assert cache.load(3) == {}


def test_a_restored_copy_stays_warm_and_a_forged_index_names_nothing(tmp_path):
    """A cache folder restored from a CI cache or moved to a bigger disk (other device and
    inodes, same user key) is read, every shard checked against its digest, and recorded
    anew; a permuted shard in the copy is neither used nor removed; an index whose MAC fails
    names nothing."""
    a = EmbeddingCache("m", tmp_path / "a")
    a.store(["x"], np.ones((1, 3), np.float32))
    a.store(["y"], np.full((1, 3), 2, np.float32))
    b_dir = tmp_path / "b" / "embeddings" / a.directory.name
    shutil.copytree(a.directory, b_dir)  # a copy: other folder and file identities
    (y_shard,) = [p for p in b_dir.glob("*.npz")
                  if np.load(p)["vectors"][0, 0] == 2]
    with np.load(y_shard) as z:
        hashes, model = z["hashes"], z["model"]
    np.savez(y_shard, hashes=hashes, vectors=np.full((1, 3), 9, np.float32), model=model)
    b = EmbeddingCache("m", tmp_path / "b")
    with pytest.warns(EmbeddingCacheWarning, match="left alone and not used"):
        vecs, n = b.get_or_encode(["x", "y"], lambda t: np.full((len(t), 3), 2, np.float32))
    assert n == 1 and vecs.tolist() == [[1, 1, 1], [2, 2, 2]]  # x warm, y re-encoded
    assert y_shard.exists()  # not provably toolsel's: kept
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, n = EmbeddingCache("m", tmp_path / "b").get_or_encode(
            ["x", "y"], lambda t: pytest.fail("encoded"))
    assert n == 0
    (index,) = a.directory.glob(".toolsel-index-*.json")
    record = json.loads(index.read_text())
    record["shards"] = {n: {**e, "sha256": "0" * 64} for n, e in record["shards"].items()}
    index.write_text(json.dumps(record))  # edited: the MAC fails
    before = snapshot(tmp_path)
    with pytest.warns(EmbeddingCacheWarning, match="left alone"):
        assert a.load(3) == {}
    assert snapshot(tmp_path) == before


def test_a_cache_of_an_older_toolsel_is_kept_and_not_used(tmp_path):
    """Shards with no index (written before the index existed) cannot be proven toolsel's:
    left alone, one warning, the texts encoded and cached under a new index."""
    cache = EmbeddingCache("m", tmp_path)
    cache.directory.mkdir(parents=True)
    old = cache.directory / "0123456789abcdef0123456789abcdef.npz"
    np.savez(old, hashes=np.frombuffer(text_hash("x"), np.uint8).reshape(1, 32),
             vectors=np.zeros((1, 3), np.float32), model=np.asarray("m"))
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        vecs, n = cache.get_or_encode(["x"], lambda t: np.ones((1, 3), np.float32))
    assert n == 1 and vecs.tolist() == [[1, 1, 1]] and old.exists()
    assert sum("left alone" in str(w.message) for w in seen) == 1
    _, n = EmbeddingCache("m", tmp_path).get_or_encode(["x"], lambda t: pytest.fail("encoded"))
    assert n == 0  # warm from now on


def test_a_warm_cache_stays_warm_and_is_read_once_per_fit(tmp_path):
    cache = EmbeddingCache("m", tmp_path)
    texts = [f"t{i}" for i in range(50)]
    enc = lambda t: np.arange(len(t) * 4, dtype=np.float32).reshape(len(t), 4)  # noqa: E731
    first, n1 = cache.get_or_encode(texts, enc)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again, n2 = EmbeddingCache("m", tmp_path).get_or_encode(
            texts, lambda t: pytest.fail("encoded"))
    assert n1 == 50 and n2 == 0 and np.array_equal(first, again)


def test_a_model_folder_of_another_kind_at_the_name_is_not_followed(tmp_path):
    """A file where the model folder goes: the fit goes on, with a warning, nothing replaced."""
    cache = EmbeddingCache("m", tmp_path)
    cache.directory.parent.mkdir(parents=True)
    cache.directory.write_text("not a folder")
    with pytest.warns(EmbeddingCacheWarning, match="could not write"):
        _, n = cache.get_or_encode(["x"], lambda t: np.ones((1, 3), np.float32))
    assert n == 1 and cache.directory.read_text() == "not a folder"


def test_two_keys_on_one_cache_never_overwrite_each_others_index(tmp_path, monkeypatch):
    """A reset state folder (a new key), or a test suite's own, beside an existing cache: each
    key keeps its own index; the other's shards are neither used nor removed, and the first
    key's cache is still warm afterwards."""
    monkeypatch.setenv("TOOLSEL_STATE", str(tmp_path / "state1"))
    EmbeddingCache("m", tmp_path / "c").store(["x"], np.ones((1, 3), np.float32))
    monkeypatch.setenv("TOOLSEL_STATE", str(tmp_path / "state2"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, n = EmbeddingCache("m", tmp_path / "c").get_or_encode(
            ["x"], lambda t: np.full((1, 3), 2, np.float32))
    assert n == 1  # not this key's: encoded (silently: another key's index names it)
    monkeypatch.setenv("TOOLSEL_STATE", str(tmp_path / "state1"))
    vecs, n = EmbeddingCache("m", tmp_path / "c").get_or_encode(
        ["x"], lambda t: pytest.fail("encoded"))
    assert n == 0 and vecs.tolist() == [[1, 1, 1]]
    assert len(list((tmp_path / "c" / "embeddings" / "m").glob(".toolsel-index-*.json"))) == 2
