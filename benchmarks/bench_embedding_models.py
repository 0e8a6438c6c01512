"""Offline embedding models compared: dev quality, per-query latency at 4,000 tools, load, size.

For every model of ``toolsel.scorers.embedding.MODELS`` whose packages are installed (the
others get a row saying which pip package is missing):

- ``install_mb``: size of the files of the model's own package(s) (shared runtime
  dependencies such as onnxruntime and tokenizers are not counted);
- ``load_s``: ``load_encoder(model)`` in a fresh process (imports included, median of 3);
- ``ms_per_query``: ``scorer.score(query)`` one request at a time on a synthetic registry of
  ``--tools`` tools, query-vector cache off (every request is encoded), mean over the timed
  requests, for the ``embedding`` scorer and for the ``default`` fusion scorer using the model;
- ``R@5`` and ``Complete@10`` of both scorers on the **dev** split of each style
  (``api``, ``plugin``, ``pooled``, ``marketplace``, ``openapi``) and of
  ``data/registry.json`` + ``data/requests.jsonl`` (``requests``). With a model that cannot
  pool clauses from one pass (all but MiniLM), ``default`` encodes each clause on its own.

``paraphrase-MiniLM-L3-v2`` (``toolsel[minilm-l3]``) runs with MiniLM-L6's tokenizer and,
like it, reads a request's clauses in context. With ``--long`` the ``default`` scorer is also
timed on 3-5-sentence requests at ``--tools`` tools (p50/p95 ms, the latency target's setting).

Timings depend on the machine and its load: they are printed and written with ``--out``, never
asserted in tests.

    .venv/bin/python benchmarks/bench_embedding_models.py --out /tmp/embedding_models.csv
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from toolsel import load_queries, load_registry
from toolsel.datasets import load_style
from toolsel.tables.compare_styles import compare_styles
from toolsel.scorers.embedding import MODELS, QUERY_CACHE, EmbeddingScorer
from toolsel.scorers.fusion import DefaultScorer
from toolsel.synthetic import synthetic_registry

ROOT = Path(__file__).resolve().parents[1]
STYLES = ("api", "plugin", "pooled", "marketplace", "openapi", "requests")


def long_latency(scorer, n_tools: int, calls: int) -> tuple[float, float]:
    """p50/p95 ms of ``scorer.score`` on 3-5-sentence requests at ``n_tools`` tools."""
    import numpy as np
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tune_default import long_requests

    from toolsel.tables.benchmark import latencies_ms
    queries, reg = long_requests(max(calls // 2, 20), n_tools)
    fitted = scorer.fit(reg)
    ms = latencies_ms(fitted.score, queries, n=calls)
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def dev_sets() -> dict:
    sets = {s: load_style(s, split="dev") for s in STYLES if s != "requests"}
    reg = load_registry(ROOT / "data" / "registry.json")
    sets["requests"] = (reg, [q for q in load_queries(ROOT / "data" / "requests.jsonl", reg)
                              if q.split == "dev"])
    return sets


def install_mb(packages) -> float:
    total = 0
    for name in packages:
        dist = importlib.metadata.distribution(name)
        total += sum(f.size or 0 for f in dist.files or [])
    return total / 2**20


def load_seconds(model: str, repeats: int = 3) -> float:
    code = ("import time; from toolsel.scorers.embedding import load_encoder; "
            "t = time.perf_counter(); load_encoder(%r); print(time.perf_counter() - t)" % model)
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, cwd=ROOT)
        runs.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(runs)


def style_queries(sets) -> list[str]:
    texts = [q.query for _, qs in sets.values() for q in qs]
    return list(dict.fromkeys(texts))  # distinct: nothing can come from a cache


def latency_ms(scorer, tools, queries, warmup: int = 5) -> float:
    scorer.fit(tools)
    for i in range(warmup):
        scorer.score(f"warm-up request number {i}")
    ms = []
    for q in queries:
        t = time.perf_counter()
        scorer.score(q)
        ms.append((time.perf_counter() - t) * 1000)
    return statistics.fmean(ms)


def installed(model) -> str | None:
    spec = MODELS[model]

    def missing(package: str) -> bool:
        try:
            importlib.metadata.distribution(package)
        except importlib.metadata.PackageNotFoundError:
            return True
        return False

    absent = [p for p in spec.packages if missing(p)]
    if absent:
        how = f"pip install {' '.join(absent)}"
        return f"not installed ({how})"
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--long", type=int, default=0,
                    help="time default on this many 3-5-sentence requests (0: skip)")
    ap.add_argument("--tools", type=int, default=4000)
    ap.add_argument("--queries", type=int, default=100, help="requests timed per scorer")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    sets = dev_sets()
    tools = synthetic_registry(args.tools, seed=0)
    timed = style_queries(sets)[: args.queries]
    print(f"{len(tools)} tools, {len(timed)} timed requests, {os.cpu_count()} CPUs; dev: "
          + ", ".join(f"{s} {len(qs)}" for s, (_, qs) in sets.items()), flush=True)
    rows = []
    cache_dir = tempfile.mkdtemp(prefix="toolsel-bench-models-")  # tool vectors, shared
    for model in args.models.split(","):
        spec = MODELS[model]
        base = {"model": model, "package": " + ".join(spec.packages)}
        problem = installed(model)
        if problem:
            rows.append({**base, "scorer": "-", "note": problem})
            print(model, problem, flush=True)
            continue
        base["install_mb"] = round(install_mb(spec.packages), 1)
        base["load_s"] = round(load_seconds(model), 2)
        scorers = {"embedding": EmbeddingScorer(model=model, cache_dir=cache_dir),
                   "default": DefaultScorer(model=model)}
        cmp = compare_styles(sets, {k: v.clone() for k, v in scorers.items()}, n_boot=10,
                             latency_queries=0)
        means = cmp.query_metrics.groupby(["scorer", "style"])[["R@5", "Complete@10"]].mean()
        QUERY_CACHE.maxsize, saved = 0, QUERY_CACHE.maxsize  # time encoding, not cache hits
        QUERY_CACHE.clear()
        try:
            for label, scorer in scorers.items():
                ms = latency_ms(scorer.clone(), tools, timed)
                row = {**base, "scorer": label, f"ms_per_query_{len(tools)}": round(ms, 2)}
                if args.long and label == "default":
                    p50, p95 = long_latency(scorer.clone(), args.tools, args.long)
                    row[f"long_p50_ms_{args.tools}"] = round(p50, 1)
                    row[f"long_p95_ms_{args.tools}"] = round(p95, 1)
                for style in sets:
                    for metric in ("R@5", "Complete@10"):
                        row[f"{style} {metric}"] = round(float(means.loc[(label, style),
                                                                         metric]), 3)
                rows.append(row)
                print(pd.DataFrame([row]).to_string(index=False), flush=True)
        finally:
            QUERY_CACHE.maxsize = saved
    table = pd.DataFrame(rows)
    print()
    print(table.to_string(index=False))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
