"""Priming the embedding cache over joblib worker processes (toolsel.scorers.parallel)."""

import numpy as np
import pytest

from toolsel.scorers.embedding import EmbeddingScorer, load_encoder
from toolsel.scorers.parallel import encode_parallel, prime_cache


def test_prime_cache_then_fit_encodes_nothing(registry, tmp_path):
    tools = list(registry)[:12]
    info = prime_cache(tools, n_jobs=2, chunk_size=5, cache_dir=str(tmp_path), progress=False)
    assert info["n_texts"] == 12 and info["n_encoded"] == 12 and info["texts_per_s"] > 0
    fitted = EmbeddingScorer(cache_dir=str(tmp_path)).fit(tools)
    assert fitted.n_encoded_ == 0  # every vector came from the primed cache
    direct = load_encoder().encode(fitted.texts_)
    # worker processes run the same model on one thread each: the same vectors
    np.testing.assert_allclose(fitted.vectors_, direct, atol=1e-5)
    # priming again encodes nothing; one more tool encodes one text
    assert prime_cache(tools, n_jobs=1, cache_dir=str(tmp_path), progress=False)[
        "n_encoded"] == 0
    more = list(registry)[:13]
    assert prime_cache(more, n_jobs=1, cache_dir=str(tmp_path), progress=False)[
        "n_encoded"] == 1


def test_encode_parallel_keeps_order_and_checks_arguments():
    texts = [f"send a message number {i}" for i in range(7)]
    one = encode_parallel(texts, n_jobs=1, chunk_size=3)
    two = encode_parallel(texts, n_jobs=2, chunk_size=3)
    assert one.shape == (7, 384)
    np.testing.assert_allclose(one, two, atol=1e-5)
    with pytest.raises(ValueError, match="n_jobs must be"):
        encode_parallel(texts, n_jobs=0)
    with pytest.raises(ValueError, match="chunk_size must be"):
        encode_parallel(texts, chunk_size=0)
    with pytest.raises(TypeError, match="item 0 is a str"):
        prime_cache(["not a tool"])
