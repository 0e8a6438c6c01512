"""``toolsel discovery``: multi-tool recall and recall vs loaded noise on a labeled split."""

from __future__ import annotations

import argparse

from .common import (add_out, add_queries, add_registry, add_scorers, add_split, add_top_k,
                     command, int_list)
from ..data import load_queries, load_registry
from ..visible import visible


_FILES = ("per_request.csv", "by_category.csv", "by_n_required.csv", "noise_per_request.csv",
          "noise.csv")


def _args(p: argparse.ArgumentParser) -> None:
    from ..scorers.base import compared_scorers
    add_registry(p)
    add_queries(p, help="labeled requests (JSONL)")
    add_scorers(p, compared_scorers())
    add_top_k(p, [1, 3, 5, 10], help="comma-separated filter cut-offs")
    p.add_argument("--limits", type=int_list, default=list(range(1, 11)),
                   help="discover/search result limits (default 1..10)")
    add_split(p, help="which split to report")
    p.add_argument("--query-field", choices=["query", "search_term"], default="query",
                   help="search with the request text or its search_term (noise curve)")
    add_out(p)


@command("discovery", "multi-tool R@k vs Complete@k by category, and recall vs loaded noise",
         _args)
def _run(args: argparse.Namespace) -> int:
    from ..datasets import filter_split
    from ..tables.discovery import (multi_tool_metrics, noise_curve, summarize_noise,
                                    summarize_requests)
    from ..io import check_output_dir, write_set
    if args.out:
        check_output_dir(args.out, _FILES)
    reg = load_registry(args.registry)
    queries = filter_split(load_queries(args.queries, reg), args.split)
    per_request = multi_tool_metrics(reg, queries, args.scorers, args.top_k)
    by_cat = summarize_requests(per_request, "category")
    by_n = summarize_requests(per_request, "n_required")
    curve = noise_curve(reg, queries, args.scorers, args.limits, query_field=args.query_field)
    noise = summarize_noise(curve)
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    k = 5 if 5 in args.top_k else args.top_k[0]
    print(f"split={args.split}: {len(queries)} requests; always-include required tools are "
          "counted apart (n_always_required), never in R@k")
    print(f"\nby number of filtered required tools, top_k={k}:")
    print(by_n[by_n["top_k"] == k].to_string(**fmt))
    print(f"\nby category, top_k={k}:")
    print(by_cat[by_cat["top_k"] == k][["scorer", "category", "n_requests", "R@k",
                                         "Complete@k"]].to_string(**fmt))
    print("\nrecall vs loaded noise (search limit n):")
    print(noise[["scorer", "limit", "R@n", "Complete@n", "irrelevant",
                 "irrelevant_tokens"]].to_string(**fmt))
    if args.out:
        tables = (per_request, by_cat, by_n, curve, noise)
        write_set(args.out, dict(zip(_FILES, tables)))
        print(f"\nwrote {len(tables)} tables to {visible(args.out)}")
    return 0
