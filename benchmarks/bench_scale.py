"""Selection latency, index build time and memory vs registry size, for every scorer.

    python benchmarks/bench_scale.py                       # 61, 1k, 4k, 10k tools (~4 min)
    python benchmarks/bench_scale.py --sizes 61,1000 --n-timed 100 --out /tmp/bench

Each (scorer, size) runs in its own Python process (so its peak resident memory is its own)
and prints one JSON row; this parent collects the rows, prints a table and writes
``<out>/scale.csv``, ``machine.json``, the latency-vs-tools plot (PNG + SVG) and
``README.md``. The 61-tool row uses ``data/registry.json`` and its queries; larger sizes use
``toolsel.synthetic`` (seed 0, 500 queries).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "reports" / "benchmarks"
SCORERS = ("jaccard", "bm25", "tfidf", "embedding", "naive")
# timed calls per configuration: the naive baseline and the embedding scorer are slow per call
N_TIMED = {"naive": 200, "embedding": 300}


def registry_and_queries(size: int):
    from toolsel import load_queries, load_registry
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    if size == 61:
        reg = load_registry(ROOT / "data" / "registry.json")
        queries = [q.query for q in load_queries(ROOT / "data" / "queries.jsonl", reg)]
    else:
        reg = synthetic_registry(size, seed=0)
        queries = [q.query for q in synthetic_queries(reg, 500, seed=0)]
    return reg, queries


def worker(args) -> None:
    from toolsel.tables.benchmark import measure_scale
    from toolsel.scorers.embedding import QUERY_CACHE
    QUERY_CACHE.maxsize = 0  # queries are cycled: time their encoding, not LRU cache hits
    reg, queries = registry_and_queries(args.size)
    row = measure_scale(reg, queries, args.scorer, top_k=args.top_k, n_timed=args.n_timed)
    print(json.dumps(row))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="61,1000,4000,10000")
    p.add_argument("--scorers", default=",".join(SCORERS))
    p.add_argument("--n-timed", type=int, default=1000, help="timed calls (lexical scorers)")
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--scorer", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0

    import pandas as pd

    from toolsel.report.benchmarks import write_report
    from toolsel.tables.benchmark import machine_info, scale_table
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    rows = []
    for scorer in args.scorers.split(","):
        for size in [int(s) for s in args.sizes.split(",")]:
            n = min(args.n_timed, N_TIMED.get(scorer, args.n_timed))
            cmd = [sys.executable, __file__, "--worker", "--scorer", scorer, "--size",
                   str(size), "--n-timed", str(n), "--top-k", str(args.top_k)]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
            if done.returncode:
                sys.stderr.write(done.stderr)
                raise SystemExit(f"worker failed: {' '.join(cmd)}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{scorer:>9} {size:>6} tools: build {row['build_s']:.3f} s, "
                  f"p50 {row['p50_ms']:.3f} ms, p95 {row['p95_ms']:.3f} ms, "
                  f"rss {row['maxrss_mb']:.0f} MB", flush=True)
    table = scale_table(rows)
    table.to_csv(out / "scale.csv", index=False, float_format="%.6g", lineterminator="\n")
    (out / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"wrote {write_report(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
