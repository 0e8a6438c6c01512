"""A 5-scorer sweep at ToolRet's size (about 44,000 tools): encode, index, latency, memory.

The registry is synthetic (``toolsel.synthetic``) with long descriptions (about 530
characters: each description repeated with its parameter descriptions) and 3-6-clause
requests, built as in ``benchmarks/bench_memory.py``. Each phase runs in its own process and
reports its own peak resident memory (``ru_maxrss``):

1. ``encode``: every tool text (and the windows ``default`` reads of a long one) encoded
   into a fresh embedding cache (a temporary folder this script creates and removes) by
   :func:`toolsel.scorers.parallel.prime_cache`, once per ``--jobs`` value (joblib worker processes; ``1`` encodes in the process itself);
2. ``index+latency``: each scorer fitted on the registry (tool vectors from that cache), then
   ``Selector.select`` timed on ``--latency-calls`` requests (p50/p95 ms);
3. ``sweep``: the 5-scorer sweep (``jaccard, bm25, tfidf, embedding, default`` × top_k
   1, 3, 5, 10, 20, 30) over ``--queries`` requests, warm cache: wall time and peak memory.

A full run at 44,000 tools takes long on two shared cores (encoding dominates). With
``--extrapolate-to N`` the rows measured at ``--tools`` are also written scaled to ``N``
tools, labeled ``extrapolated``: times of encoding and indexing linearly in the number of
tools, per-request latency linearly (every request scores every tool), memory as the measured
interpreter-and-model base plus the measured growth above it scaled linearly. They are
estimates, not measurements.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_44k.py --tools 10000 \\
        --extrapolate-to 44000 --out reports/benchmarks/scale_44k.csv

With ``--cache-dir`` the embedding cache is a folder that outlives the run: encode once
(``--phases encode --cache-dir DIR --progress``, the bar showing texts/s), then measure the
other phases as often as needed without encoding again (``--phases index,sweep --cache-dir
DIR``); ``--combine`` joins the two outputs into one table. The N-tool registry is the first N
tools of a larger one, so a 44,000-tool cache serves every smaller size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SCORERS = ("jaccard", "bm25", "tfidf", "embedding", "default")


def _data(n_tools: int, n_queries: int):
    sys.path.insert(0, str(HERE))
    from bench_memory import _data as data
    return data(n_tools, n_queries)


def _maxrss_mb() -> float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child_encode(n_tools: int, n_queries: int, jobs: int, progress: bool) -> dict:
    from toolsel.scorers.fusion import DefaultScorer
    from toolsel.scorers.parallel import prime_cache
    reg, _ = _data(n_tools, n_queries)
    base = _maxrss_mb()
    # what ``default`` reads: whole texts, and texts over 128 word pieces in windows too
    # (``DefaultScorer(windows=128)``), so its fit in the next phase encodes nothing
    info = prime_cache(reg, n_jobs=jobs, progress=progress,
                       windows=DefaultScorer().windows)
    return {"phase": "encode", "scorer": "embedding", "n_jobs": jobs,
            "seconds": info["seconds"], "texts_per_s": info["texts_per_s"],
            "n_encoded": info["n_encoded"], "base_mb": base, "peak_mb": _maxrss_mb()}


def _child_index(n_tools: int, n_queries: int, scorer: str, calls: int) -> dict:
    import time

    import numpy as np

    from toolsel import Selector
    from toolsel.tables.benchmark import latencies_ms
    reg, queries = _data(n_tools, n_queries)
    if scorer in ("embedding", "default"):
        from toolsel.scorers.embedding import load_encoder
        load_encoder()  # model load is not indexing
    base = _maxrss_mb()
    t0 = time.perf_counter()
    sel = Selector(reg, scorer, top_k=10, always_include=())
    fit_s = time.perf_counter() - t0
    texts = [q.query for q in queries[:max(calls // 2, 10)]]
    ms = latencies_ms(lambda q: sel.select(q), texts, n=calls)
    return {"phase": "index+latency", "scorer": scorer, "seconds": fit_s,
            "p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95)),
            "base_mb": base, "peak_mb": _maxrss_mb()}


def _child_sweep(n_tools: int, n_queries: int) -> dict:
    import time

    from toolsel.eval.sweep import sweep
    from toolsel.scorers.embedding import load_encoder
    reg, queries = _data(n_tools, n_queries)
    load_encoder()
    base = _maxrss_mb()
    t0 = time.perf_counter()
    result = sweep(reg, queries, list(SCORERS), [1, 3, 5, 10, 20, 30], progress=False)
    return {"phase": "sweep", "scorer": ",".join(SCORERS), "seconds": time.perf_counter() - t0,
            "rows": len(result.query_metrics), "base_mb": base, "peak_mb": _maxrss_mb(),
            **{f"{k}_fit_s": v["fit_s"] for k, v in result.timings.items()},
            **{f"{k}_score_s": v["score_s"] for k, v in result.timings.items()}}


def _run(args: list[str], env: dict) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], env=env, check=True,
                         stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


#: Columns extrapolated by a straight line in the number of tools.
LINEAR = ("seconds", "p50_ms", "p95_ms", "peak_mb", "base_mb")


def extrapolate(rows: pd.DataFrame, n_to: int) -> pd.DataFrame:
    """Per phase × scorer × n_jobs, a least-squares line ``a + b * n_tools`` through the
    measured sizes, evaluated at ``n_to`` (see the module docstring). Encoding time is
    ``n_to`` divided by the pooled throughput (all texts over all seconds at that
    ``n_jobs``), since its rate, not a fixed part, is what the sizes share."""
    sizes = sorted(set(rows["n_tools"]))
    if len(sizes) < 2:
        raise ValueError("extrapolating needs measurements at two or more --tools sizes")
    keys = ["phase", "scorer", "n_jobs"]
    out = []
    for _, g in rows.fillna({"n_jobs": 0}).groupby(keys, sort=False):
        row = g.iloc[-1].copy()
        x = g["n_tools"].to_numpy(float)
        cols = [c for c in g.columns if c in LINEAR or c.endswith(("_fit_s", "_score_s"))]
        if row["phase"] == "encode":
            cols.remove("seconds")  # from the pooled throughput, below
        flat = []
        for c in cols:
            y = g[c].to_numpy(float)
            if pd.isna(y).any():
                continue
            b, a = np.polyfit(x, y, 1)
            if b < 0:  # noise larger than growth: no estimate rather than a wrong one
                row[c] = np.nan
                flat.append(c)
            else:
                row[c] = a + b * n_to
        row["note"] = (f"no estimate for {', '.join(flat)}: measured values fall with size "
                       "(their noise, from the machine's load or the allocator, exceeds their growth)") if flat else ""
        if row["phase"] == "encode":
            rate = g["n_encoded"].sum() / g["seconds"].sum()
            row["texts_per_s"] = rate
            row["seconds"] = n_to / rate
            row["n_encoded"] = n_to
        row["n_tools"] = n_to
        row["kind"] = ("extrapolated (line through "
                       + ", ".join(f"{n:,}" for n in sizes) + " tools)")
        out.append(row)
    return pd.DataFrame(out).replace({"n_jobs": {0: np.nan}})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", default="44000", help="comma-separated registry sizes")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--jobs", default="1,2", help="comma-separated n_jobs for encoding")
    ap.add_argument("--latency-calls", type=int, default=100)
    ap.add_argument("--extrapolate-to", type=int, default=None)
    ap.add_argument("--phases", default="encode,index,sweep")
    ap.add_argument("--cache-dir", type=Path, default=None,
                    help="a persistent embedding cache folder (created if missing, never "
                         "removed): the encode phase fills what it lacks, so a later run "
                         "encodes nothing; without it each run encodes into a temporary folder")
    ap.add_argument("--progress", action="store_true",
                    help="show the encode progress bar (texts/s) even when stderr is not a "
                         "terminal (a log file)")
    ap.add_argument("--out", type=Path, help="CSV file to write")
    ap.add_argument("--combine", nargs="+", type=Path, metavar="CSV",
                    help="instead of measuring: join the measured rows of these earlier "
                         "outputs (then --extrapolate-to, --out)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.combine:
        table = pd.concat([pd.read_csv(p) for p in args.combine], ignore_index=True)
        table = table[table["kind"] == "measured"].sort_values("n_tools", kind="stable")
        _finish(table.reset_index(drop=True), args)
        return
    if args.child:
        kind, *rest = args.child
        n_tools, n_queries = int(rest[0]), int(rest[1])
        if kind == "encode":
            row = _child_encode(n_tools, n_queries, int(rest[2]), rest[3] == "1")
        elif kind == "index":
            row = _child_index(n_tools, n_queries, rest[2], int(rest[3]))
        else:
            row = _child_sweep(n_tools, n_queries)
        print(json.dumps(row))
        return

    phases = args.phases.split(",")
    jobs = [int(j) for j in args.jobs.split(",")]
    rows = []
    failed = None
    root = Path(tempfile.mkdtemp(prefix="toolsel-bench44k-"))
    try:
        for n_tools in [int(n) for n in args.tools.split(",")]:
            common = [str(n_tools), str(args.queries)]
            extra = {"kind": "measured", "n_tools": n_tools, "n_queries": args.queries}
            warm = None
            for j in jobs if "encode" in phases else []:
                # a cold cache per run, unless a persistent one is given
                cache = args.cache_dir or root / f"cache-{n_tools}-jobs{j}"
                env = {**os.environ, "TOOLSEL_CACHE": str(cache)}
                bar = "1" if args.progress or sys.stderr.isatty() else "0"
                rows.append({**extra, **_run(["encode", *common, str(j), bar], env),
                             "load_avg_1m": round(os.getloadavg()[0], 2)})
                print(rows[-1], flush=True)
                warm = warm or cache
            env = {**os.environ, "TOOLSEL_CACHE": str(args.cache_dir or warm
                                                      or root / f"cache-{n_tools}")}
            if "index" in phases:
                for s in SCORERS:
                    rows.append({**extra, **_run(["index", *common, s,
                                                  str(args.latency_calls)], env),
                                 "load_avg_1m": round(os.getloadavg()[0], 2)})
                    print(rows[-1], flush=True)
            if "sweep" in phases:
                rows.append({**extra, **_run(["sweep", *common], env),
                             "load_avg_1m": round(os.getloadavg()[0], 2)})
                print(rows[-1], flush=True)
    except subprocess.CalledProcessError as exc:  # a half-hour encode is not thrown away
        failed = exc
        print(f"phase failed ({' '.join(exc.cmd[3:])}): writing the {len(rows)} rows measured "
              "so far", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    table = pd.DataFrame(rows)
    table["cpus"] = os.cpu_count()
    table["python"] = platform.python_version()
    _finish(table, args)
    if failed is not None:
        raise SystemExit(1)


def _finish(table: pd.DataFrame, args) -> None:
    if args.extrapolate_to:
        table = pd.concat([table, extrapolate(table, args.extrapolate_to)], ignore_index=True)
    pd.set_option("display.width", 250, "display.max_columns", 40)
    print(table.round(2).to_string(index=False))
    if args.out:
        from toolsel.io import write_table
        write_table(table, args.out, float_format="%.3f")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
