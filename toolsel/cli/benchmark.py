"""``toolsel synthetic`` and ``toolsel benchmark``: large test registries, a quick speed check."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import (add_n_queries, add_queries, add_registry, add_scorers, add_top_k, command,
                     file_path)
from ..visible import visible


def _synthetic_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tools", type=int, required=True, help="registry size")
    add_n_queries(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--registry-out", type=file_path, required=True, help="registry JSONL to write")
    p.add_argument("--queries-out", type=file_path, help="queries JSONL to write (with --n-queries)")
    p.add_argument("--force", action="store_true",
                   help="replace the outputs even when the files there were not written by "
                        "toolsel, or are symbolic links (the links themselves are replaced)")


@command("synthetic", "write a deterministic synthetic registry (and labeled queries)",
         _synthetic_args)
def _synthetic(args: argparse.Namespace) -> int:
    from ..synthetic import queries_text, registry_text, synthetic_queries, synthetic_registry
    from ..io import check_output_file, has_mark, refuse_inputs, write_pair
    if args.n_queries and not args.queries_out:
        raise SystemExit("toolsel synthetic: --n-queries needs --queries-out")
    rules = {"force": args.force, "owned": has_mark}
    judged = check_output_file(args.registry_out, **rules)
    q_judged = check_output_file(args.queries_out, **rules) if args.queries_out else None
    refuse_inputs([("--registry-out", args.registry_out), ("--queries-out", args.queries_out)],
                  [])
    reg = synthetic_registry(args.tools, seed=args.seed)
    files = [(args.registry_out, registry_text(reg), judged)]
    qs = synthetic_queries(reg, args.n_queries, seed=args.seed) if args.n_queries else None
    if qs is not None:
        files.append((args.queries_out, queries_text(qs), q_judged))
    # both as one step: a killed run leaves the old pair or the new one (toolsel.io.write_pair)
    for line in write_pair(files, **rules):
        print(f"  {visible(line)}")
    servers = len({t.domain for t in reg})
    print(f"{visible(args.registry_out)}: {len(reg)} tools from {servers} servers (seed {args.seed})")
    if qs is not None:
        print(f"{visible(args.queries_out)}: {len(qs)} labeled queries")
    return 0


def _benchmark_args(p: argparse.ArgumentParser) -> None:
    add_registry(p)
    add_queries(p, required=False,
                help="labeled queries (JSONL); default: the tools' descriptions as queries")
    # the lexical scorers and the article's loop: what this quick in-process timing is for
    from ..scorers.base import compared_scorers
    add_scorers(p, [*compared_scorers(lexical=True), "naive"],
                help="comma-separated scorer names; 'naive' is the reference loop that "
                     "re-tokenizes every tool per call")
    add_top_k(p, [10], help="comma-separated cut-offs, each timed")
    p.add_argument("--n-timed", type=int, default=200, help="timed select calls per scorer")


@command("benchmark", "time index build and select latency on a registry, in this process "
                      "(the full benchmark is `make benchmark`)", _benchmark_args)
def _benchmark(args: argparse.Namespace) -> int:
    from ..tables.benchmark import measure_scale, scale_table
    from ..data import load_queries, load_registry
    reg = load_registry(args.registry)
    texts = ([q.query for q in load_queries(args.queries, reg)] if args.queries
             else [t.description for t in reg][:500])
    import pandas as pd
    table = pd.concat([scale_table([measure_scale(reg, texts, s, top_k=k, n_timed=args.n_timed,
                                                  trace_memory=False) for s in args.scorers])
                       .assign(top_k=k) for k in args.top_k], ignore_index=True)
    cols = [c for c in ("scorer", "n_tools", "build_s", "p50_ms", "p95_ms",
                        "speedup_vs_naive", "first_encode_s", "top_k") if c in table.columns]
    print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0
