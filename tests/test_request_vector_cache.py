"""Request vectors in the on-disk embedding cache (inside ``persist_request_vectors``), with the
real MiniLM encoder wrapped to count the texts it is asked to encode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from toolsel import get_scorer, load_queries, load_registry
from toolsel.scorers import embedding as embedding_module
from toolsel.scorers.embedding import QUERY_CACHE, load_encoder, persist_request_vectors
from toolsel.scorers.embedding_cache import EmbeddingCacheWarning
from toolsel.tables.check import run_check

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

# A fresh encode may batch a text with other texts than the first one did; onnxruntime then
# sums the padded batch in another order, so its float32 vectors agree to about 1e-7, not
# bit for bit. Vectors read back from the cache must be bit-identical to the ones written.
ATOL = 1e-6

REQUEST = "check the weather in Paris, then send a direct message to alice on slack"
SPANS_A = [(0, 26), (33, 72)]   # "check the weather in Paris" | "send a direct message ..."
SPANS_B = [(0, 72)]


class CountingEncoder:
    """The real encoder, recording every text it is asked to encode (whole or by spans)."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.model_id = encoder.model_id
        self.dim = encoder.dim
        self.texts: list[str] = []
        self.span_calls: list[tuple[str, tuple]] = []

    def encode(self, texts, *, batch_size=64):
        self.texts.extend(texts)
        return self.encoder.encode(texts, batch_size=batch_size)

    def encode_spans(self, texts, spans, *, batch_size=64):
        self.span_calls.extend((t, tuple(map(tuple, s))) for t, s in zip(texts, spans))
        return self.encoder.encode_spans(texts, spans, batch_size=batch_size)

    def reset(self):
        self.texts.clear()
        self.span_calls.clear()


@pytest.fixture
def counting(monkeypatch):
    enc = CountingEncoder(load_encoder())
    monkeypatch.setattr(embedding_module, "load_encoder", lambda model: enc)
    return enc


@pytest.fixture(autouse=True)
def fresh_process_cache():
    """Each test (and each simulated second run) starts without the process LRU."""
    QUERY_CACHE.clear()
    yield
    QUERY_CACHE.clear()


@pytest.fixture
def tools():
    return list(load_registry(DATA / "registry.json"))[:20]


def _files(root: Path, kind: str) -> list[Path]:
    return sorted(p for d in (root / "embeddings").glob(f"*--{kind}") for p in d.glob("*.npz"))


def test_second_check_in_another_process_encodes_no_request(tmp_path, monkeypatch, counting):
    monkeypatch.setenv("TOOLSEL_CACHE", str(tmp_path))
    reg = load_registry(DATA / "registry.json")
    queries = load_queries(DATA / "requests.jsonl", reg)
    first = run_check(reg, queries, ["default"])
    n_tools = len(reg)
    # the first run encoded the tools and every request (clauses pooled from the request's pass)
    assert len(counting.texts) > n_tools and counting.span_calls
    assert _files(tmp_path, "requests") and _files(tmp_path, "spans")
    assert not list(tmp_path.rglob("*.part"))  # no temporary file left

    counting.reset()
    QUERY_CACHE.clear()  # what a new process starts with
    again = run_check(reg, queries, ["default"])
    assert counting.texts == [] and counting.span_calls == []
    assert again.runs["default"].requests == first.runs["default"].requests

    # a real second process: the encoder wrapped the same way there, the same cache root
    script = textwrap.dedent(f"""
        import json
        from toolsel import load_queries, load_registry
        from toolsel.scorers import embedding
        from toolsel.tables.check import run_check
        calls = []
        enc = embedding.load_encoder()
        real_encode, real_spans = enc.encode, enc.encode_spans
        enc.encode = lambda texts, **kw: calls.extend(texts) or real_encode(texts, **kw)
        enc.encode_spans = lambda texts, spans, **kw: (calls.extend(texts)
                                                       or real_spans(texts, spans, **kw))
        reg = load_registry({str(DATA / 'registry.json')!r})
        run = run_check(reg, load_queries({str(DATA / 'requests.jsonl')!r}, reg), ["default"])
        print(json.dumps({{"encoded": len(calls),
                          "ranks": [r.ranks for r in run.runs["default"].requests]}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=dict(os.environ, TOOLSEL_CACHE=str(tmp_path)), check=True)
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["encoded"] == 0
    assert out["ranks"] == [r.ranks for r in first.runs["default"].requests]


def test_cached_request_vectors_are_the_written_ones_and_match_a_fresh_encode(tools, tmp_path,
                                                                              counting):
    scorer = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    texts = ["send a message to the team channel", "what's 340 divided by 12"]
    with persist_request_vectors():
        plain = scorer.encode_queries(texts)
        pooled = scorer.encode_in_context([REQUEST], [SPANS_A])
        counting.reset()
        QUERY_CACHE.clear()
        plain_again = scorer.encode_queries(texts)
        pooled_again = scorer.encode_in_context([REQUEST], [SPANS_A])
    assert counting.texts == [] and counting.span_calls == []
    np.testing.assert_array_equal(plain_again, plain)
    np.testing.assert_array_equal(pooled_again[0], pooled[0])
    assert pooled_again[0].shape == (1 + len(SPANS_A), scorer.encoder_.dim)

    fresh = get_scorer("embedding", cache=False, query_cache=False).fit(tools)
    np.testing.assert_allclose(plain_again, fresh.encode_queries(texts), atol=ATOL)
    np.testing.assert_allclose(pooled_again[0],
                               fresh.encode_in_context([REQUEST], [SPANS_A])[0], atol=ATOL)


def test_other_spans_of_the_same_request_miss(tools, tmp_path, counting):
    scorer = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    with persist_request_vectors():
        a = scorer.encode_in_context([REQUEST], [SPANS_A])[0]
        QUERY_CACHE.clear()
        counting.reset()
        b = scorer.encode_in_context([REQUEST], [SPANS_B])[0]
        assert counting.span_calls == [(REQUEST, tuple(SPANS_B))]  # a miss: encoded again
        QUERY_CACHE.clear()
        counting.reset()
        a2 = scorer.encode_in_context([REQUEST], [SPANS_A])[0]
        b2 = scorer.encode_in_context([REQUEST], [SPANS_B])[0]
    assert counting.span_calls == []  # both splits now on disk, each under its own key
    assert b.shape == (2, scorer.encoder_.dim) and a.shape == (3, scorer.encoder_.dim)
    np.testing.assert_array_equal(a2, a)
    np.testing.assert_array_equal(b2, b)
    # the whole-request row agrees; the clause rows are the spans' own
    np.testing.assert_allclose(a[0], b[0], atol=ATOL)
    assert not np.allclose(a[1], b[1], atol=1e-3)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other model"])
def test_a_corrupted_entry_is_ignored_and_rewritten(tools, tmp_path, counting, damage):
    scorer = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    texts = ["send a message to the team channel"]
    with persist_request_vectors():
        plain = scorer.encode_queries(texts)
        pooled = scorer.encode_in_context([REQUEST], [SPANS_A])[0]
    for kind in ("requests", "spans"):
        [shard] = _files(tmp_path, kind)
        data = shard.read_bytes()
        if damage == "truncate":
            shard.write_bytes(data[:len(data) // 2])
        elif damage == "garbage":
            shard.write_bytes(b"\0" * len(data))
        else:  # a whole, valid file holding another model's vectors under this name
            with np.load(shard) as z:
                np.savez(shard, hashes=z["hashes"], vectors=z["vectors"],
                         model=np.asarray("some-other-model"))
    QUERY_CACHE.clear()
    counting.reset()
    with pytest.warns(EmbeddingCacheWarning, match="corrupted|changed after toolsel wrote it"), persist_request_vectors():
        plain_again = scorer.encode_queries(texts)
        pooled_again = scorer.encode_in_context([REQUEST], [SPANS_A])[0]
    assert counting.texts == texts and counting.span_calls == [(REQUEST, tuple(SPANS_A))]
    np.testing.assert_allclose(plain_again, plain, atol=ATOL)
    np.testing.assert_allclose(pooled_again, pooled, atol=ATOL)
    # rewritten: the next run reads them without warning and without encoding
    QUERY_CACHE.clear()
    counting.reset()
    import warnings
    with warnings.catch_warnings(), persist_request_vectors():
        warnings.simplefilter("error", EmbeddingCacheWarning)
        np.testing.assert_array_equal(scorer.encode_queries(texts), plain_again)
        np.testing.assert_array_equal(scorer.encode_in_context([REQUEST], [SPANS_A])[0],
                                      pooled_again)
    assert counting.texts == [] and counting.span_calls == []


def test_nothing_is_written_without_opting_in_or_with_cache_false(tools, tmp_path, counting):
    scorer = get_scorer("embedding", cache_dir=tmp_path).fit(tools)
    scorer.encode_queries(["send a message to the team channel"])
    scorer.encode_in_context([REQUEST], [SPANS_A])
    assert _files(tmp_path, "requests") == [] and _files(tmp_path, "spans") == []

    off = tmp_path / "off"
    uncached = get_scorer("embedding", cache=False, cache_dir=off).fit(tools)
    with persist_request_vectors():
        uncached.encode_queries(["send a message to the team channel"])
        uncached.encode_in_context([REQUEST], [SPANS_A])
    assert not off.exists()  # cache=False: not even the tool vectors


def test_check_can_leave_requests_off_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEL_CACHE", str(tmp_path))
    reg = load_registry(DATA / "registry.json")
    queries = load_queries(DATA / "requests.jsonl", reg)[:5]
    run_check(reg, queries, ["default"], cache_requests=False)
    assert _files(tmp_path, "requests") == [] and _files(tmp_path, "spans") == []
