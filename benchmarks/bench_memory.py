"""Peak memory of a sweep on a large registry with long texts and long multi-clause requests.

The registry is a synthetic one (``toolsel.synthetic``) whose descriptions are made long (each
tool's description repeated with its parameter descriptions, about 600 characters) and whose
requests chain 3-6 synthetic requests into one paragraph. Each configuration runs in its own
process and reports its peak resident memory (``ru_maxrss``), so one run's memory never
inflates the next.

    python benchmarks/bench_memory.py --tools 4000 --queries 1400 --out reports/benchmarks/memory.csv
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SCORERS = ("jaccard", "bm25", "tfidf", "embedding", "default")


def _data(n_tools: int, n_queries: int):
    from toolsel import Query, Registry, Tool
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    base = synthetic_registry(n_tools, seed=0)
    tools = []
    for t in base:
        props = (t.parameters or {}).get("properties", {})
        extra = " ".join(f"{k}: {v.get('description', k)}." for k, v in props.items())
        text = f"{t.description} {extra}".strip()
        desc = (text + " ") * max(1, 600 // max(len(text), 1))
        tools.append(Tool(t.name, desc.strip(), t.parameters, t.metadata))
    reg = Registry(tools)
    singles = synthetic_queries(base, n_queries * 4, seed=1)
    queries, i = [], 0
    for qi in range(n_queries):
        n = 3 + qi % 4
        part = singles[i:i + n]
        i += n
        text = " Then, ".join(q.query for q in part) + ". Thanks a lot for your help with this!"
        expected = tuple(dict.fromkeys(t for q in part for t in q.expected))
        queries.append(Query(f"m{qi}", text, expected))
    return reg, queries


def _child(n_tools: int, n_queries: int, scorers: list[str]) -> None:
    import resource
    import time

    from toolsel.eval.sweep import sweep
    reg, queries = _data(n_tools, n_queries)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    result = sweep(reg, queries, scorers, [1, 3, 5, 10, 20, 30], progress=False)
    out = {"tools": n_tools, "queries": n_queries, "scorers": ",".join(scorers),
           "mean_request_chars": round(sum(len(q.query) for q in queries) / len(queries)),
           "mean_description_chars": round(sum(len(t.description) for t in reg) / len(reg)),
           "data_mb": round(base, 1),
           "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           "seconds": round(time.perf_counter() - t0, 1),
           "rows": len(result.query_metrics)}
    print(json.dumps(out))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tools", type=int, default=4000)
    p.add_argument("--queries", type=int, default=1400)
    p.add_argument("--scorers", default=",".join(SCORERS))
    p.add_argument("--out", type=Path, help="CSV to write (one row per configuration)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    scorers = [s for s in args.scorers.split(",") if s]
    if args.child:
        _child(args.tools, args.queries, scorers)
        return 0
    rows = []
    for config in [scorers] + [[s] for s in scorers]:
        cmd = [sys.executable, __file__, "--child", "--tools", str(args.tools), "--queries",
               str(args.queries), "--scorers", ",".join(config)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
        row = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(row, flush=True)
    if args.out:
        import pandas as pd

        from toolsel.io import write_table
        write_table(pd.DataFrame(rows), args.out)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
