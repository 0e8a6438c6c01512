"""Measuring how selection scales with registry size: latency, build time, memory, sweeps.

The long runs are scripts (``benchmarks/bench_scale.py``, ``benchmarks/bench_sweep.py``) that
call :func:`measure_scale` and :func:`measure_sweep` once per configuration, each in its own
process so that peak resident memory is that configuration's alone. This module holds what
those scripts and the scale notebook share: the measurements and the tables (the figure and
the folder's README are :mod:`toolsel.report.plots` and :mod:`toolsel.report.benchmarks`).

Timings are wall-clock on the machine that ran them, so benchmark tables are not
byte-reproducible and are never part of ``make report``; the naive baseline is measured in
the same process as the indexed selector so their ratio is fair.

The *naive* baseline is the article's algorithm as written: :func:`toolsel.select_tools` with
the :func:`toolsel.selection.jaccard` hook, which re-tokenizes every tool on every call.
"""

from __future__ import annotations

import os
import platform
import resource
import shutil
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..scorers.base import compared_scorers
from ..data import Query, Registry
from ..selection import Selector, jaccard, select_tools

__all__ = ["SCALE_SCORERS", "TARGETS", "latencies_ms", "measure_scale", "measure_sweep",
           "scale_table", "targets_table", "machine_info",
           "peak_rss_mb"]

#: The scorers the scale benchmark measures, plus the naive baseline.
SCALE_SCORERS = (*compared_scorers(single=True), "naive")  # the registry of scorer names

#: The issue's targets: (what, column, limit, direction). Latencies in ms, times in s.
TARGETS = (
    ("jaccard select p50 at 10k (ms)", "p50_ms", "jaccard", 1.0, "<="),
    ("bm25 select p50 at 10k (ms)", "p50_ms", "bm25", 1.0, "<="),
    ("tfidf select p50 at 10k (ms)", "p50_ms", "tfidf", 1.0, "<="),
    ("jaccard speed-up vs naive at 10k (x)", "speedup_vs_naive", "jaccard", 30.0, ">="),
    ("bm25 speed-up vs naive at 10k (x)", "speedup_vs_naive", "bm25", 30.0, ">="),
    ("tfidf speed-up vs naive at 10k (x)", "speedup_vs_naive", "tfidf", 30.0, ">="),
    ("jaccard index build at 10k (s)", "build_s", "jaccard", 2.0, "<="),
    ("bm25 index build at 10k (s)", "build_s", "bm25", 2.0, "<="),
    ("tfidf index build at 10k (s)", "build_s", "tfidf", 2.0, "<="),
    ("embedding select p50 at 10k incl. query encoding (ms)", "p50_ms", "embedding", 15.0,
     "<="),
    ("embedding first encode of 10k tools (s)", "first_encode_s", "embedding", 120.0, "<="),
    ("embedding cached load of 10k tools (s)", "cached_load_s", "embedding", 1.0, "<="),
)


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (``ru_maxrss``)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on."""
    import scipy
    info = {"cpus": os.cpu_count(), "python": platform.python_version(),
            "machine": platform.machine(), "numpy": np.__version__, "scipy": scipy.__version__}
    try:  # other work on the machine slows every timing: say how busy it was
        info["load_avg_1m_at_start"] = round(os.getloadavg()[0], 2)
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return info


def latencies_ms(fn: Callable[[str], Any], queries: Sequence[str], *, n: int,
                 warmup: int = 10) -> np.ndarray:
    """Wall time of ``fn(query)`` in ms for ``n`` calls, cycling through ``queries``.

    The embedding scorer's query-vector cache is off meanwhile: cycled queries would
    otherwise be timed as cache hits, not encodes.
    """
    from ..scorers.embedding import QUERY_CACHE
    with QUERY_CACHE.disabled():
        for i in range(min(warmup, n)):
            fn(queries[i % len(queries)])
        out = np.empty(n)
        clock = time.perf_counter
        for i in range(n):
            q = queries[i % len(queries)]
            t0 = clock()
            fn(q)
            out[i] = (clock() - t0) * 1e3
    return out


def _index_mb(scorer) -> float:
    total = 0
    for attr in ("matrix_", "vectors_"):
        m = getattr(scorer, attr, None)
        if m is None:
            continue
        for part in ("data", "indices", "indptr"):
            if hasattr(m, part) and hasattr(getattr(m, part), "nbytes"):
                total += getattr(m, part).nbytes
        if isinstance(m, np.ndarray):
            total += m.nbytes
    return total / 2**20


def measure_scale(registry: Registry, queries: Sequence[str], scorer: str, *, top_k: int = 10,
                  n_timed: int = 300, trace_memory: bool = True,
                  cache_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """Build time, ``Selector.select`` latency and memory of one scorer on one registry.

    Parameters
    ----------
    registry, queries
        The registry and the query texts to cycle through.
    scorer : str
        A scorer name, or ``"naive"`` for the article's ``select_tools`` + ``jaccard`` hook;
        the naive row also times the indexed ``jaccard`` selector on the same queries,
        call by call, checks both select the same tools, and reports the ratio of medians
        (``speedup_interleaved``).
    n_timed : int
        Timed calls (after 10 warm-up calls).
    trace_memory : bool
        Measure the Python-allocated peak (``tracemalloc``) of building and querying in a
        separate, untimed pass.
    cache_dir : path, optional
        Embedding cache root for ``"embedding"``; default a fresh temporary directory (so
        the first fit really encodes), removed afterwards.

    Returns a flat dict (one row of the scale table). Call it in a fresh process for
    meaningful ``maxrss_mb``.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    queries = list(queries)
    always = sorted(reg.always_include)
    row: dict[str, Any] = {"scorer": scorer, "n_tools": len(reg), "top_k": top_k,
                           "n_timed": n_timed, "load_avg_1m": os.getloadavg()[0]}
    tmp = None
    try:
        if scorer == "embedding":
            from ..scorers.embedding import EmbeddingScorer, load_encoder
            if cache_dir is None:
                tmp = cache_dir = tempfile.mkdtemp(prefix="toolsel-bench-")
            t0 = time.perf_counter()
            load_encoder()
            row["model_load_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            cold = EmbeddingScorer(cache_dir=cache_dir).fit(reg)
            row["first_encode_s"] = time.perf_counter() - t0
            row["n_encoded"] = cold.n_encoded_
            del cold

            def build():
                return Selector(reg, EmbeddingScorer(cache_dir=cache_dir), top_k=top_k,
                                always_include=always)
        elif scorer == "naive":
            def build():
                return None
        else:
            from ..scorers.base import get_scorer
            get_scorer(scorer).fit(list(reg)[:2])  # imports (scipy, sklearn) are not build time

            def build():
                return Selector(reg, scorer, top_k=top_k, always_include=always)

        t0 = time.perf_counter()
        selector = build()
        # the naive loop has no index to build
        row["build_s"] = time.perf_counter() - t0 if selector is not None else float("nan")
        if scorer == "embedding":
            row["cached_load_s"] = row["build_s"]
            assert selector.scorer.n_encoded_ == 0
        if selector is not None:
            row["index_mb"] = _index_mb(selector.scorer)

        if scorer == "naive":
            tools = list(reg)
            fast = Selector(reg, "jaccard", top_k=top_k, always_include=always)
            naive_ms, fast_ms = np.empty(n_timed), np.empty(n_timed)
            clock = time.perf_counter
            for i in range(n_timed + 3):
                q = queries[i % len(queries)]
                t0 = clock()
                want = select_tools(tools, q, top_k=top_k, always_include=always,
                                    scorer=jaccard)
                t1 = clock()
                got = fast.select(q)
                t2 = clock()
                if got != want:
                    raise AssertionError(f"indexed jaccard differs from the naive one on {q!r}")
                if i >= 3:  # a few warm-up calls
                    naive_ms[i - 3], fast_ms[i - 3] = (t1 - t0) * 1e3, (t2 - t1) * 1e3
            ms = naive_ms
            row["jaccard_p50_ms_interleaved"] = float(np.median(fast_ms))
            row["speedup_interleaved"] = float(np.median(naive_ms) / np.median(fast_ms))
        else:
            ms = latencies_ms(selector.select, queries, n=n_timed)
        row["p50_ms"] = float(np.percentile(ms, 50))
        row["p95_ms"] = float(np.percentile(ms, 95))
        row["mean_ms"] = float(ms.mean())

        if trace_memory:
            del selector
            tracemalloc.start()
            try:
                sel = build()
                fn = (sel.select if sel is not None else
                      (lambda q: select_tools(list(reg), q, top_k=top_k,
                                              always_include=always)))
                for q in queries[:20]:
                    fn(q)
                row["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
            finally:
                tracemalloc.stop()
        row["maxrss_mb"] = peak_rss_mb()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return row


def measure_sweep(registry: Registry, queries: Sequence[Query], *,
                  scorers: Sequence[str] | None = None,
                  top_k: Sequence[int] = (1, 3, 5, 10, 20, 30)) -> dict[str, Any]:
    """Wall time of one :func:`toolsel.eval.sweep.sweep` (fits included), per-scorer parts, peak RSS.

    The embedding model is loaded before the clock starts (a process loads it once); whether
    tool vectors come from the cache is up to the caller's cache directory. ``scorers``:
    the registry's single compared scorers by default.
    """
    from ..eval.sweep import sweep
    scorers = compared_scorers(single=True) if scorers is None else scorers
    if "embedding" in scorers:
        from ..scorers.embedding import load_encoder
        load_encoder()
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    res = sweep(registry, queries, list(scorers), top_k, progress=False,
                always_include=registry.always_include)
    total = time.perf_counter() - t0
    row: dict[str, Any] = {"n_tools": len(registry), "n_queries": len(queries),
                           "n_scorers": len(scorers), "n_top_k": len(top_k), "total_s": total,
                           "load_avg_1m": load}
    for label, t in res.timings.items():
        row[f"{label}_fit_s"] = t["fit_s"]
        row[f"{label}_score_s"] = t["score_s"]
    row["maxrss_mb"] = peak_rss_mb()
    row["summary_rows"] = len(res.summary)
    return row


def scale_table(rows: Sequence[dict] | pd.DataFrame) -> pd.DataFrame:
    """The scale rows as a table sorted by scorer then size, with ``speedup_vs_naive``.

    ``speedup_vs_naive`` is the naive baseline's median latency at the same registry size
    (same benchmark run) divided by the scorer's median.
    """
    df = pd.DataFrame(rows).copy()
    order = {s: i for i, s in enumerate(SCALE_SCORERS)}
    df["_o"] = df["scorer"].map(lambda s: order.get(s, len(order)))
    df = df.sort_values(["_o", "n_tools"], kind="stable").drop(columns="_o")\
        .reset_index(drop=True)
    if (df.scorer == "naive").any():
        naive = df[df.scorer == "naive"].set_index("n_tools")["p50_ms"]
        ratio = naive.reindex(df.n_tools).to_numpy() / df.p50_ms.to_numpy()
        df["speedup_vs_naive"] = np.where(df.scorer == "naive", np.nan, ratio)
    return df


def targets_table(scale: pd.DataFrame, sweeps: pd.DataFrame | None = None, *,
                  n_tools: int = 10_000) -> pd.DataFrame:
    """Each target of the issue with the measured value and whether it is met."""
    rows = []
    big = scale[scale.n_tools == n_tools].set_index("scorer")
    naive = big.loc["naive", "p50_ms"] if "naive" in big.index else np.nan
    for what, col, scorer, limit, op in TARGETS:
        if col == "speedup_vs_naive":
            value = naive / big.loc[scorer, "p50_ms"] if scorer in big.index else np.nan
        else:
            value = big.loc[scorer, col] if scorer in big.index and col in big.columns \
                else np.nan
        rows.append({"target": what, "limit": f"{op} {limit:g}", "measured": value,
                     "met": bool(value <= limit if op == "<=" else value >= limit)
                     if pd.notna(value) else None})
    if sweeps is not None and len(sweeps):
        warm = sweeps[sweeps.cache == "warm"]
        for _, r in warm.iterrows():
            rows.append({"target": f"sweep {r.n_tools:,} tools x {r.n_queries:,} queries, "
                                   f"{r.n_scorers} scorers x {r.n_top_k} top_k, cached (s)",
                         "limit": "<= 60", "measured": r.total_s,
                         "met": bool(r.total_s <= 60) if r.n_queries >= 2000 else None})
    peak = max([scale["maxrss_mb"].max()] +
               ([sweeps["maxrss_mb"].max()] if sweeps is not None and len(sweeps) else []))
    rows.append({"target": "peak resident memory, any configuration (MB)", "limit": "<= 1024",
                 "measured": peak, "met": bool(peak <= 1024)})
    return pd.DataFrame(rows)


