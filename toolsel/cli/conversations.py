"""``toolsel conversations``: replay labeled conversations; availability, pins and cache cost."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import add_out, add_registry, add_scorers, add_split, add_top_k, command, csv_list
from ..data import load_registry
from ..visible import visible


def _args(p: argparse.ArgumentParser) -> None:
    from ..tables.conversations import POLICIES, STRATEGIES
    add_registry(p)
    p.add_argument("--conversations", required=True, type=Path, help="labeled conversations")
    add_scorers(p, alias=True, help="comma-separated scorers, each replayed")
    add_top_k(p, [10], help="comma-separated cut-offs of the filtered strategy, each replayed")
    p.add_argument("--strategies", type=csv_list, default=list(STRATEGIES),
                   help="comma-separated: eager, filtered, deferred")
    p.add_argument("--carry", choices=POLICIES, default="carry_if_dependent",
                   help="which earlier tools stay visible on a turn of the filtered strategy "
                        "(default: carry_if_dependent)")
    # the flag's name before --carry (--policy is a selection policy in `toolsel sweep`)
    p.add_argument("--policy", dest="carry", choices=POLICIES, help=argparse.SUPPRESS)
    add_split(p)
    p.add_argument("--min-cacheable", type=int, default=1024,
                   help="shortest prefix the cache stores, in tokens (default 1024)")
    p.add_argument("--cache-write", type=float, default=1.25,
                   help="price of a cache-write token relative to base input (default 1.25)")
    p.add_argument("--cache-read", type=float, default=0.1,
                   help="price of a cache-read token relative to base input (default 0.1)")
    add_out(p)


@command("conversations", "replay labeled conversations: availability, discover calls, pins, "
         "payload and prompt-cache-aware cost per strategy", _args)
def _run(args: argparse.Namespace) -> int:
    from ..datasets import load_conversations
    from ..tables.conversations import STRATEGIES, replay, replay_summary, replay_table
    from ..tables.cost import Prices, cost_table, cost_totals
    from ..io import check_output_dir, write_set
    from ..selection import Selector
    files = ("turns", "replay_summary", "requests_cost", "cost_totals")
    if args.out:  # judged where it really is (links followed), before any work
        check_output_dir(args.out, [f"{n}.csv" for n in files])
    bad = [s for s in args.strategies if s not in STRATEGIES]
    if bad:
        raise ValueError(f"unknown strategy {bad[0]!r}; choose from {', '.join(STRATEGIES)}")
    reg = load_registry(args.registry)
    convs = load_conversations(args.conversations, reg)
    if args.split != "all":
        convs = [c for c in convs if c.split == args.split]
        if not convs:
            raise ValueError(f"no conversations in split {args.split!r}")
    import pandas as pd
    fmt = {"float_format": lambda v: f"{v:.3f}", "index": False}
    print(f"{len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns; "
          f"carry={args.carry}")
    parts: dict[str, list] = {"turns": [], "summary": [], "costs": [], "totals": []}
    for scorer in args.scorers:
        for k in args.top_k:
            selector = Selector(reg, scorer, top_k=k)
            replays = [replay(c, selector, s, policy=args.carry) for s in args.strategies
                       for c in convs]
            turns = replay_table(replays)
            summary = replay_summary(turns)
            costs = cost_table(replays, prices=Prices(cache_write=args.cache_write,
                                                      cache_read=args.cache_read),
                               min_cacheable=args.min_cacheable)
            totals = cost_totals(costs)
            print(f"\nscorer {visible(scorer)}, top_k={k}:")
            print(summary.to_string(**fmt))
            print(f"input tokens and cost (cache write x{args.cache_write}, read "
                  f"x{args.cache_read}, min cacheable {args.min_cacheable} tokens):")
            print(totals.to_string(**fmt))
            for name, df in zip(parts, (turns, summary, costs, totals)):
                parts[name].append(df.assign(scorer=scorer, top_k=k))

    def stacked(name):
        df = pd.concat(parts[name], ignore_index=True)
        return df[["scorer", "top_k", *[c for c in df.columns if c not in ("scorer", "top_k")]]]
    turns, summary, costs, totals = map(stacked, parts)
    if args.out:
        write_set(args.out, {f"{name}.csv": df for name, df in
                             zip(files, (turns, summary, costs, totals))})
        print(f"\nwrote 4 tables to {visible(args.out)}")
    return 0
