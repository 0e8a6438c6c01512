"""The report's score cache (toolsel.eval.score_cache): one scoring per scorer and query set,
read back only when every input is the same and the entry is toolsel's, unchanged."""

from __future__ import annotations

import dataclasses
import json
import os
import warnings

import numpy as np
import pytest

from toolsel.eval import score_cache as sc
from toolsel.eval.engine import Candidates, rank_batches, score_matrix
from toolsel.scorers.base import get_scorer
from toolsel.selection import fitted_scorer


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "scores"
    folder.mkdir()
    monkeypatch.setenv(sc.CACHE_ENV, str(folder))
    return folder


def _texts(queries):
    return [q.query for q in queries]


def _entries(folder):
    return sorted(p.name for p in folder.glob("*.npz"))


def test_no_report_running_means_nothing_cached(registry, queries, monkeypatch, tmp_path):
    monkeypatch.delenv(sc.CACHE_ENV, raising=False)
    bm25 = fitted_scorer("bm25", registry)
    scores, match = score_matrix(bm25, registry, _texts(queries))
    assert match is None
    np.testing.assert_array_equal(scores, bm25.score_many(_texts(queries)))
    assert sc.active_cache() is None


def test_a_miss_is_stored_and_a_second_scorer_object_reads_it(registry, queries, cache):
    texts = _texts(queries)
    first = score_matrix(fitted_scorer("bm25", registry), registry, texts)[0]
    assert len(_entries(cache)) == 1
    stored = (cache / _entries(cache)[0]).stat()
    again = score_matrix(fitted_scorer("bm25", registry), registry, texts)[0]
    assert again.tobytes() == first.tobytes()
    assert (cache / _entries(cache)[0]).stat().st_ino == stored.st_ino  # read, not rewritten
    np.testing.assert_allclose(first, fitted_scorer("bm25", registry).score_many(texts))


def test_matches_are_their_own_entry(registry, queries, cache):
    texts = _texts(queries)
    jac = fitted_scorer("jaccard", registry)
    scores, match = score_matrix(jac, registry, texts, matches=True)
    ref_scores, ref_match = jac.score_and_match(texts)
    np.testing.assert_array_equal(match, ref_match)
    np.testing.assert_array_equal(scores, ref_scores)
    assert score_matrix(jac, registry, texts)[1] is None
    assert len(_entries(cache)) == 2


def test_rank_batches_reads_the_cache_in_any_batch_size(registry, queries, cache):
    texts = _texts(queries)
    cands = Candidates.of(registry)
    bm25 = fitted_scorer("bm25", registry)
    a = [b.ranks for b in rank_batches(bm25, texts, cands, batch_size=7)]
    b = [b.ranks for b in rank_batches(fitted_scorer("bm25", registry), texts, cands,
                                       batch_size=64)]
    assert np.vstack(a).tobytes() == np.vstack(b).tobytes()
    assert len(_entries(cache)) == 1


def test_every_input_is_in_the_key(registry, queries):
    """A changed description, query text, order, scorer parameter or no-match flag: another
    entry; the same inputs: the same entry."""
    texts = _texts(queries)
    bm25 = sc.scorer_config(get_scorer("bm25"))
    key = sc.entry_key(bm25, registry, texts, matches=False)
    assert key == sc.entry_key(bm25, list(registry), list(texts), matches=False)
    edited = list(registry)
    edited[3] = dataclasses.replace(edited[3], description=edited[3].description + " x")
    tuned = sc.scorer_config(get_scorer("bm25", k1=1.7))
    others = {sc.entry_key(bm25, edited, texts, matches=False),
              sc.entry_key(bm25, registry, texts[:-1] + [texts[-1] + "?"], matches=False),
              sc.entry_key(bm25, registry, texts[::-1], matches=False),
              sc.entry_key(tuned, registry, texts, matches=False),
              sc.entry_key(sc.scorer_config(get_scorer("jaccard")), registry, texts,
                           matches=False),
              sc.entry_key(bm25, registry, texts, matches=True)}
    assert key not in others and len(others) == 6


def test_a_learned_model_or_a_hook_is_never_cached(registry, queries, cache):
    assert sc.scorer_config(get_scorer(lambda tool, tokens: 1.0)) is None

    class Mine(type(get_scorer("bm25"))):  # not registered under a name: not described
        pass
    assert sc.scorer_config(Mine()) is None
    hook = fitted_scorer(lambda tool, tokens: float(len(tokens & {"slack"})), registry)
    score_matrix(hook, registry, _texts(queries))
    assert _entries(cache) == []


def _one_entry(cache, registry, queries):
    texts = _texts(queries)
    ref = score_matrix(fitted_scorer("bm25", registry), registry, texts)[0]
    (name,) = _entries(cache)
    return texts, ref, cache / name, cache / name.replace(".npz", ".json")


def test_a_changed_entry_is_computed_again(registry, queries, cache):
    """Scores altered in the file (its record's digest no longer matches): not read; the
    entry is computed again and stored anew."""
    texts, ref, npz, _ = _one_entry(cache, registry, queries)
    with np.load(npz) as z:
        arrays = dict(z)
    arrays["scores"] = arrays["scores"] + 1.0
    with open(npz, "wb") as fh:
        np.savez(fh, **arrays)
    got = score_matrix(fitted_scorer("bm25", registry), registry, texts)[0]
    assert got.tobytes() == ref.tobytes()
    with np.load(npz) as z:
        assert z["scores"].tobytes() == ref.tobytes()


def test_a_forged_record_is_not_read(registry, queries, cache):
    """A record whose digest names other content, re-signed with no key: refused (its mac
    does not verify), the scores computed again."""
    texts, ref, npz, record = _one_entry(cache, registry, queries)
    bad = ref + 5.0
    import io
    buf = io.BytesIO()
    np.savez(buf, key=np.frombuffer(npz.stem.encode("ascii"), dtype=np.uint8), scores=bad)
    data = buf.getvalue()
    npz.write_bytes(data)
    rec = json.loads(record.read_text())
    import hashlib
    rec["sha256"] = hashlib.sha256(data).hexdigest()
    record.write_text(json.dumps(rec))
    got = score_matrix(fitted_scorer("bm25", registry), registry, texts)[0]
    assert got.tobytes() == ref.tobytes()


def test_a_linked_cache_folder_is_not_used(registry, queries, tmp_path, monkeypatch):
    real = tmp_path / "elsewhere"
    real.mkdir()
    link = tmp_path / "scores"
    link.symlink_to(real)
    monkeypatch.setenv(sc.CACHE_ENV, str(link))
    # the folder is judged after links are followed: its real path is where entries go
    cache = sc.active_cache()
    assert cache.folder == real.resolve()
    texts = _texts(queries)
    score_matrix(fitted_scorer("bm25", registry), registry, texts)
    assert len(_entries(real)) == 1


def test_a_link_at_an_entry_name_is_never_written_through(registry, queries, cache,
                                                          tmp_path):
    texts = _texts(queries)
    key = sc.entry_key(sc.scorer_config(get_scorer("bm25")), registry, texts, matches=False)
    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    (cache / f"{key}.npz").symlink_to(victim)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = score_matrix(fitted_scorer("bm25", registry), registry, texts)[0]
    assert victim.read_text() == "mine"
    assert (cache / f"{key}.npz").is_symlink()
    assert any(issubclass(w.category, sc.ScoreCacheWarning) for w in caught)
    np.testing.assert_allclose(got, fitted_scorer("bm25", registry).score_many(texts))


def test_prune_removes_only_entries_not_used_since(registry, queries, cache):
    texts = _texts(queries)
    score_matrix(fitted_scorer("bm25", registry), registry, texts)
    score_matrix(fitted_scorer("jaccard", registry), registry, texts)
    stranger = cache / ("0" * 64 + ".json")
    stranger.write_text("{}")
    old = 1_000_000_000
    for p in cache.glob("*.json"):
        os.utime(p, (old, old))
    import time
    start = time.time()
    score_matrix(fitted_scorer("bm25", registry), registry, texts)  # read: used by this run
    assert sc.prune(cache, start) == 1
    left = _entries(cache)
    assert len(left) == 1 and stranger.exists()
    assert score_matrix(fitted_scorer("bm25", registry), registry, texts)[0].shape == \
        (len(texts), len(registry))


def test_a_warm_entry_fits_nothing_and_a_sweep_reads_the_same(registry, queries, cache,
                                                               monkeypatch):
    """During a report a scorer is fitted only when its matrix is missing; a sweep with the
    cache gives the tables of a sweep without it."""
    from toolsel.eval.engine import OnDemand, scorer_for
    from toolsel.eval.sweep import sweep
    texts = _texts(queries)
    cands = Candidates.of(registry)
    cold = scorer_for("embedding", registry)
    assert isinstance(cold, OnDemand)
    first = np.vstack([b.ranks for b in rank_batches(cold, texts, cands)])
    assert cold.was_fitted
    warm = scorer_for("embedding", registry)
    again = np.vstack([b.ranks for b in rank_batches(warm, texts, cands)])
    assert not warm.was_fitted and again.tobytes() == first.tobytes()
    cached = sweep(registry, queries, ["jaccard", "bm25"], [1, 5, 10], progress=False)
    monkeypatch.delenv(sc.CACHE_ENV)
    plain = sweep(registry, queries, ["jaccard", "bm25"], [1, 5, 10], progress=False)
    assert cached.summary.equals(plain.summary)
    assert cached.per_query.equals(plain.per_query)
