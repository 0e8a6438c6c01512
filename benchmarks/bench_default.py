"""Per-query latency of every scorer at 4,000 tools (the target for ``default``: < 30 ms).

One query at a time, as a selector serves a user turn: ``scorer.score(query)`` after a warm-up,
on a synthetic registry of ``--tools`` tools (``toolsel.synthetic``) and requests drawn from
the three evaluation styles (long, multi-part ones included, so clause splitting is paid
for). Prints a table and, with ``--out``, writes it as CSV (timings: not a report table).

    .venv/bin/python benchmarks/bench_default.py --tools 4000 --out /tmp/bench_default.csv
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import pandas as pd

from toolsel import get_scorer, load_queries, load_registry
from toolsel.synthetic import synthetic_registry

ROOT = Path(__file__).resolve().parents[1]


def style_queries(styles=("api", "plugin", "pooled"), min_sentences: int = 0) -> list[str]:
    """Requests of the given styles; with ``min_sentences``, only those of that many sentences
    or more (the issue-15 target is for 3-5-sentence requests: ``--styles marketplace
    --min-sentences 3``)."""
    import re
    texts = []
    for style in styles:
        d = ROOT / "data" / "styles" / style
        texts += [q.query for q in load_queries(d / "queries.jsonl",
                                                load_registry(d / "registry.json"))]
    if min_sentences:
        texts = [t for t in texts
                 if len(re.findall(r"[.!?](?:\s|$)", t.strip())) >= min_sentences]
    return texts


def bench(scorer_name: str, tools, queries: list[str], warmup: int = 5) -> dict:
    from toolsel.scorers.embedding import QUERY_CACHE
    QUERY_CACHE.maxsize = 0  # the warm-up requests are timed again: encode them, no LRU hit
    t0 = time.perf_counter()
    scorer = get_scorer(scorer_name).fit(tools)
    fit_s = time.perf_counter() - t0
    for q in queries[:warmup]:
        scorer.score(q)
    ms = []
    for q in queries:
        t = time.perf_counter()
        scorer.score(q)
        ms.append((time.perf_counter() - t) * 1000)
    ms.sort()
    return {"scorer": scorer_name, "n_tools": len(tools), "n_queries": len(queries),
            "fit_s": round(fit_s, 2), "mean_ms": round(statistics.fmean(ms), 2),
            "p50_ms": round(ms[len(ms) // 2], 2), "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2),
            "max_ms": round(ms[-1], 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", type=int, default=4000)
    ap.add_argument("--queries", type=int, default=200, help="requests timed (first N)")
    ap.add_argument("--scorers", default="jaccard,bm25,tfidf,embedding,default")
    ap.add_argument("--styles", default="api,plugin,pooled",
                    help="styles whose requests are timed (default: api,plugin,pooled)")
    ap.add_argument("--min-sentences", type=int, default=0,
                    help="time only requests of at least this many sentences")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    tools = synthetic_registry(args.tools, seed=0)
    queries = style_queries(args.styles.split(","), args.min_sentences)[: args.queries]
    print(f"{len(tools)} tools, {len(queries)} requests, {os.cpu_count()} CPUs")
    rows = [bench(name, tools, queries) for name in args.scorers.split(",")]
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
