"""How long a full sweep takes on a large registry: 4 scorers x 6 top_k values.

    python benchmarks/bench_sweep.py                     # 4,000 tools x 1,000 and 2,000 queries
    python benchmarks/bench_sweep.py --tools 1000 --queries 200 --out /tmp/bench

Runs, each in its own process, with the embedding cache in a fresh temporary directory:
first 4,000 x 1,000 with a cold cache (every tool encoded), then 4,000 x 2,000 and
4,000 x 1,000 with the cache warm. Writes ``<out>/sweep.csv`` and refreshes ``README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "reports" / "benchmarks"


def worker(args) -> None:
    from toolsel.tables.benchmark import measure_sweep
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    reg = synthetic_registry(args.n_tools, seed=0)
    queries = synthetic_queries(reg, args.n_queries, seed=0)
    print(json.dumps(measure_sweep(reg, queries)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tools", type=int, default=4000)
    p.add_argument("--queries", default="1000,2000", help="query-set sizes (comma-separated)")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--n-tools", type=int, help=argparse.SUPPRESS)
    p.add_argument("--n-queries", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args)
        return 0

    import pandas as pd

    from toolsel.report.benchmarks import write_report
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [int(q) for q in args.queries.split(",")]
    plan = [(sizes[0], "cold")] + [(q, "warm") for q in sorted(sizes, reverse=True)]
    cache = tempfile.mkdtemp(prefix="toolsel-bench-cache-")
    rows = []
    try:
        env = dict(os.environ, TOOLSEL_CACHE=cache)
        for n_queries, state in plan:
            cmd = [sys.executable, __file__, "--worker", "--n-tools", str(args.tools),
                   "--n-queries", str(n_queries)]
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
            if done.returncode:
                sys.stderr.write(done.stderr)
                raise SystemExit(f"worker failed: {' '.join(cmd)}")
            row = {"cache": state, **json.loads(done.stdout.strip().splitlines()[-1])}
            rows.append(row)
            print(f"sweep {args.tools} tools x {n_queries} queries ({state} cache): "
                  f"{row['total_s']:.1f} s, peak rss {row['maxrss_mb']:.0f} MB", flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "sweep.csv", index=False, float_format="%.6g", lineterminator="\n")
    with pd.option_context("display.width", 200, "display.max_columns", 30):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"wrote {write_report(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
