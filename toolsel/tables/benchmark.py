"""Measuring how selection scales with registry size: latency, build time, memory, sweeps.

The long runs are scripts (``benchmarks/bench_scale.py``, ``benchmarks/bench_sweep.py``) that
call :func:`measure_scale` and :func:`measure_sweep` once per configuration, each in its own
process so that peak resident memory is that configuration's alone. This module holds what
those scripts and the scale notebook share: the measurements, the tables and the figure.

Timings are wall-clock on the machine that ran them, so benchmark tables are not
byte-reproducible and are never part of ``make report``; the naive baseline is measured in
the same process as the indexed selector so their ratio is fair.

The *naive* baseline is the article's algorithm as written: :func:`toolsel.select_tools` with
the :func:`toolsel.jaccard` hook, which re-tokenizes every tool on every call.
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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data import Query, Registry
from ..selection import Selector, jaccard, select_tools

__all__ = ["SCALE_SCORERS", "TARGETS", "latencies_ms", "measure_scale", "measure_sweep",
           "scale_table", "targets_table", "plot_latency_vs_tools", "machine_info",
           "peak_rss_mb"]

#: The scorers the scale benchmark measures, plus the naive baseline.
SCALE_SCORERS = ("jaccard", "bm25", "tfidf", "embedding", "naive")

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
                  scorers: Sequence[str] = ("jaccard", "bm25", "tfidf", "embedding"),
                  top_k: Sequence[int] = (1, 3, 5, 10, 20, 30)) -> dict[str, Any]:
    """Wall time of one :func:`toolsel.eval.sweep.sweep` (fits included), per-scorer parts, peak RSS.

    The embedding model is loaded before the clock starts (a process loads it once); whether
    tool vectors come from the cache is up to the caller's cache directory.
    """
    from ..eval.sweep import sweep
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


def plot_latency_vs_tools(scale: pd.DataFrame, *, ax=None, targets: bool = True,
                          extra: pd.DataFrame | None = None,
                          extra_label: str = "{scorer} (separate benchmark)"):
    """Median ``select`` latency (ms) against registry size, log-log, one line per scorer.

    Error bars span p50 to p95. Dashed lines mark the 1 ms (lexical) and 15 ms (embedding)
    targets. ``extra`` (columns ``scorer, n_tools, p50_ms, p95_ms``, e.g. the committed
    ``default_latency.csv``) adds the rows of scorers the scale table lacks as separate
    markers, labeled with ``extra_label``, so a scorer measured elsewhere is not mistaken for a
    point of the same sweep.
    """
    from ..report.plots import SCORER_COLORS, pyplot, setup_style
    setup_style()
    plt = pyplot()
    if ax is None:
        fig, ax = plt.subplots(figsize=(8.5, 4.5))
    else:
        fig = ax.figure
    for i, scorer in enumerate([s for s in SCALE_SCORERS if s in set(scale.scorer)]):
        d = scale[scale.scorer == scorer].sort_values("n_tools")
        label = "naive (article's select_tools + jaccard)" if scorer == "naive" else scorer
        color = "#7f7f7f" if scorer == "naive" else SCORER_COLORS.get(scorer, f"C{i}")
        ax.errorbar(d.n_tools, d.p50_ms, yerr=[np.zeros(len(d)), d.p95_ms - d.p50_ms],
                    marker="o", capsize=3, label=label, color=color,
                    linestyle="--" if scorer == "naive" else "-")
    if extra is not None and len(extra):
        for scorer, d in extra[~extra.scorer.isin(set(scale.scorer))].groupby("scorer",
                                                                              sort=False):
            ax.errorbar(d.n_tools, d.p50_ms, yerr=[np.zeros(len(d)), d.p95_ms - d.p50_ms],
                        marker="*", markersize=12, capsize=3, linestyle="none",
                        color=SCORER_COLORS.get(scorer, "k"),
                        label=extra_label.format(scorer=scorer))
    if targets:
        ax.axhline(1.0, color="k", linestyle=":", linewidth=1, label="target: lexical 1 ms")
        ax.axhline(15.0, color="#9467bd", linestyle=":", linewidth=1,
                   label="target: embedding 15 ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("registry size (tools, log scale)")
    ax.set_ylabel("Selector.select latency, median (ms, log scale)")
    ax.set_title("Selection latency vs registry size (bars: p50 to p95)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: no overlap
    return fig


def _md(df: pd.DataFrame, floatfmt: str = "{:.3g}") -> str:
    """A pandas table as GitHub markdown (no extra dependency)."""
    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else floatfmt.format(v)
        if v is None:
            return ""
        return str(v)
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    sep = "| " + " | ".join("---" for _ in df.columns) + " |"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body])


SCALE_COLUMNS = ["scorer", "n_tools", "build_s", "p50_ms", "p95_ms", "speedup_vs_naive",
                 "speedup_interleaved", "index_mb", "traced_peak_mb", "maxrss_mb",
                 "first_encode_s", "cached_load_s", "model_load_s"]


def _notes(scale: pd.DataFrame, sweeps: pd.DataFrame | None) -> list[str]:
    """Plain-language observations computed from the tables."""
    notes = []
    lo, hi = scale.n_tools.min(), scale.n_tools.max()
    p50 = scale.pivot_table(index="scorer", columns="n_tools", values="p50_ms")
    if lo in p50.columns and hi in p50.columns:
        growth = (p50[hi] / p50[lo]).dropna()
        lexical = [s for s in ("jaccard", "bm25", "tfidf") if s in growth.index]
        if lexical and "naive" in growth.index:
            notes.append(
                f"- From {lo:,} to {hi:,} tools ({hi / lo:.0f}x), the naive loop's median "
                f"grows {growth['naive']:.0f}x (linear in the registry: it tokenizes every "
                f"tool per call); the indexed lexical selectors' grows "
                f"{min(growth[lexical]):.1f}-{max(growth[lexical]):.1f}x: a fixed per-call cost "
                "(tokenizing the query, Python calls) dominates, and the part that grows is a "
                "few vectorized passes over the registry (adding the query terms' rows, the "
                "partition).")
    naive = scale[scale.scorer == "naive"].set_index("n_tools")
    if "speedup_interleaved" in naive.columns and hi in naive.index:
        notes.append(f"- Timed call by call in one process, the indexed `jaccard` selector is "
                     f"{naive.loc[hi, 'speedup_interleaved']:.0f}x faster than the naive loop at "
                     f"{hi:,} tools (lower than the separate-process ratio, probably because "
                     "alternating with the naive loop evicts the index from the CPU caches).")
    if "load_avg_1m" in scale.columns:
        loads = pd.concat([scale.load_avg_1m] + ([sweeps.load_avg_1m] if sweeps is not None
                                                  and "load_avg_1m" in sweeps else []))
        notes.append(f"- The machine was shared while measuring (1-minute load average "
                     f"{loads.min():.1f}-{loads.max():.1f} on {os.cpu_count()} CPUs), which "
                     "inflates p95s and the embedding timings most (ONNX uses both cores).")
    return notes


def write_report(out_dir: str | os.PathLike) -> Path:
    """The latency plot and ``README.md`` of ``out_dir`` from its ``scale.csv``/``sweep.csv``."""
    import json
    out = Path(out_dir)
    scale_path, sweep_path = out / "scale.csv", out / "sweep.csv"
    scale = scale_table(pd.read_csv(scale_path)) if scale_path.exists() else None
    sweeps = pd.read_csv(sweep_path) if sweep_path.exists() else None
    machine = json.loads((out / "machine.json").read_text()) if (out / "machine.json").exists() \
        else machine_info()
    lines = ["# Scale benchmark", "",
             "Generated by `make benchmark` (`benchmarks/bench_scale.py`, "
             "`benchmarks/bench_sweep.py`); not part of `make report`: timings vary from run "
             "to run and machine to machine.", "",
             "Machine: " + ", ".join(f"{k} {v}" for k, v in machine.items()) + ".", "",
             "Registries: `data/registry.json` (61 tools, its 30 queries) and deterministic "
             "synthetic registries from `toolsel.synthetic` (1,000 / 4,000 / 10,000 tools from "
             "many made-up servers, seed 0, 500 queries). top_k = 10, always-include = the "
             "registry's filesystem core. Latency is one full `Selector.select` call (scoring, "
             "top-k, names); for `embedding` it includes encoding the query. The naive "
             "baseline is the article's `select_tools` with the `jaccard` hook (it re-tokenizes "
             "every tool on every call), timed call by call against the indexed `jaccard` "
             "selector in the same process (their selections are checked equal): "
             "`speedup_interleaved` on the naive rows is that ratio of medians; "
             "`speedup_vs_naive` = naive p50 / scorer p50 at the same size. Each "
             "configuration runs in its own process: `maxrss_mb` is that process's peak resident memory (interpreter, "
             "libraries and, for `embedding`, the ONNX model included); `traced_peak_mb` is "
             "the Python-allocated peak of building the index and answering 20 queries "
             "(tracemalloc; ONNX runtime memory is not traced).", ""]
    if scale is not None:
        cols = [c for c in SCALE_COLUMNS if c in scale.columns]
        fig = plot_latency_vs_tools(scale)
        from ..report.plots import save_figure
        save_figure(fig, out, "latency_vs_tools")
        lines += ["## Select latency, build time and memory", "",
                  "![latency vs registry size](latency_vs_tools.png)", "",
                  _md(scale[cols]), ""]
    if sweeps is not None:
        lines += ["## Sweeps", "",
                  "`toolsel.eval.sweep` with 4 scorers (jaccard, bm25, tfidf, embedding) × 6 top_k "
                  "values (1, 3, 5, 10, 20, 30) on a synthetic registry; fitting included, the "
                  "embedding model loaded beforehand. `cache=cold`: tool vectors encoded "
                  "(fresh cache directory); `warm`: read from the cache. Query vectors are "
                  "always encoded.", "", _md(sweeps), ""]
    if scale is not None:
        lines += ["## Targets (issue 4)", "", _md(targets_table(scale, sweeps)), ""]
        lines += ["## Reading the numbers", "", *_notes(scale, sweeps), ""]
    path = out / "README.md"
    path.write_text("\n".join(lines))
    return path
