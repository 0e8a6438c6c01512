"""Encode a large registry's tool texts once into the embedding cache, spread over processes.

Fitting an ``embedding`` or ``default`` scorer encodes every tool text the on-disk cache
(:mod:`toolsel.scorers.embedding_cache`) does not hold yet; at tens of thousands of tools with
long descriptions that is most of a sweep's time. :func:`prime_cache` does it ahead, in
chunks handed to ``joblib`` worker processes (``n_jobs``; joblib comes with scikit-learn), with
a progress bar showing throughput; every later fit on those texts reads the cache.

Each worker loads its own copy of the model and runs it on ``threads`` ONNX threads (default
1), so ``n_jobs`` workers use ``n_jobs`` cores without oversubscribing them. On one machine
that helps when the model's own threading leaves cores idle; on two cores it is mostly the
same speed as one process (see ``benchmarks/bench_44k.py``).

**Past one machine.** ``prime_cache`` only hands chunks to joblib, so a cluster engine with a
joblib backend runs it unchanged: with Ray, ``from ray.util.joblib import register_ray;
register_ray()`` then ``with joblib.parallel_backend("ray"): prime_cache(...)``; with Dask,
``from dask.distributed import Client; client = Client(...)`` then ``with
joblib.parallel_backend("dask"): prime_cache(...)``. The workers must have toolsel installed;
the vectors come back to the calling process, which writes them into its cache (point
``cache_dir`` at shared storage to share it). Neither engine is a toolsel dependency.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..data import Tool
from ..text import tool_text

__all__ = ["encode_parallel", "prime_cache"]

_WORKER_ENCODERS: dict[tuple[str, int | None], Any] = {}


def _worker_encoder(model: str, threads: int | None):
    key = (model, threads)
    enc = _WORKER_ENCODERS.get(key)
    if enc is None:
        from .embedding import DEFAULT_MODEL, OnnxMiniLM, load_encoder, resolve_model
        spec = resolve_model(model)
        default = resolve_model(DEFAULT_MODEL)
        if threads and spec is not None and default is not None and spec.name == default.name:
            enc = OnnxMiniLM(threads=threads)  # the default model, on a bounded thread count
        else:
            enc = load_encoder(model)
        _WORKER_ENCODERS[key] = enc
    return enc


def _encode_chunk(model: str, texts: list[str], batch_size: int,
                  threads: int | None) -> np.ndarray:
    return np.asarray(_worker_encoder(model, threads).encode(texts, batch_size=batch_size),
                      dtype=np.float32)


def encode_parallel(texts: Sequence[str], *, model: str | None = None, n_jobs: int = 2,
                    chunk_size: int = 256, batch_size: int = 64, threads: int | None = 1,
                    progress: bool = False) -> np.ndarray:
    """Vectors of ``texts`` (rows in order), encoded in chunks by ``n_jobs`` joblib workers.

    ``n_jobs=1`` encodes in this process (no workers). ``threads``: ONNX threads per worker
    (``None``: the runtime's default, all cores). ``progress`` shows a bar with texts/s.
    """
    from .embedding import DEFAULT_MODEL
    model = DEFAULT_MODEL if model is None else model
    texts = list(texts)
    if not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a positive integer or -1 (all cores), got {n_jobs!r}")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size!r}")
    chunks = [texts[i:i + chunk_size] for i in range(0, len(texts), chunk_size)]
    from tqdm.auto import tqdm
    bar = tqdm(total=len(texts), desc="encoding tool texts", unit="text", disable=not progress)
    parts: list[np.ndarray] = []
    try:
        if n_jobs == 1:
            for c in chunks:
                parts.append(_encode_chunk(model, c, batch_size, None))
                bar.update(len(c))
        else:
            from joblib import Parallel, delayed
            run = Parallel(n_jobs=n_jobs, return_as="generator")
            for c, vecs in zip(chunks, run(delayed(_encode_chunk)(model, c, batch_size, threads)
                                           for c in chunks)):
                parts.append(vecs)
                bar.update(len(c))
    finally:
        bar.close()
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.concatenate(parts)


def prime_cache(tools: Iterable[Tool], *, model: str | None = None,
                fields: Sequence[str] | None = None, n_jobs: int = 2, chunk_size: int = 256,
                batch_size: int = 64, threads: int | None = 1, cache_dir: str | None = None,
                progress: bool = True, windows: int | None = None) -> dict[str, Any]:
    """Encode every tool text the cache lacks, so an ``embedding`` (or ``default``) fit on
    ``tools`` with the same ``model``, ``fields``, ``windows`` and ``cache_dir`` encodes
    nothing.

    ``fields`` default to the embedding scorer's (also ``default``'s semantic fields);
    ``windows`` adds the windows of long texts (:func:`~toolsel.scorers.embedding.text_windows`)
    that such a scorer encodes: pass ``windows=128`` to prime for ``default``, which reads
    texts over 128 word pieces in windows too (the ``embedding`` scorer does not, unless
    asked). Returns ``{"n_texts", "n_encoded", "seconds", "texts_per_s",
    "n_jobs"}``.
    """
    from ..text import field_text
    from .embedding import (DEFAULT_MODEL, EmbeddingScorer, counting_tokenizer, check_windows,
                            load_encoder, text_windows)
    from .embedding_cache import EmbeddingCache
    model = DEFAULT_MODEL if model is None else model
    check_windows(windows, "prime_cache")
    tools = list(tools)
    for i, t in enumerate(tools):
        if not isinstance(t, Tool):
            raise TypeError(f"prime_cache: item {i} is a {type(t).__name__}, expected a Tool")
    probe = EmbeddingScorer(model=model, fields=fields)
    texts = [tool_text(t, probe.fields_) for t in tools]
    encoder = load_encoder(model)
    if windows is not None:
        per_tool = text_windows(texts, [field_text(t, "name_words") for t in tools],
                                counting_tokenizer(encoder), windows)
        texts += [w for ws in per_tool for w in ws]
    cache = EmbeddingCache(encoder.model_id, cache_dir)
    t0 = time.perf_counter()

    def encode(todo: list[str]) -> np.ndarray:
        return encode_parallel(todo, model=model, n_jobs=n_jobs, chunk_size=chunk_size,
                               batch_size=batch_size, threads=threads, progress=progress)

    _, n_encoded = cache.get_or_encode(texts, encode, dim=getattr(encoder, "dim", None))
    seconds = time.perf_counter() - t0
    return {"n_texts": len(texts), "n_encoded": int(n_encoded), "seconds": seconds,
            "texts_per_s": (n_encoded / seconds) if seconds > 0 and n_encoded else 0.0,
            "n_jobs": n_jobs}
