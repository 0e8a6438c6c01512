"""``toolsel label``: add one labeled request to a query file, and show what it changes.

Interactive by default (the request, then the expected tools picked by number from the
registry ranked by the ``default`` scorer, or by name, then a confirmation); scripts pass
``--query``, ``--expected`` and ``--yes``. The logic is :mod:`toolsel.tables.labeling`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import DEFAULT_SCORER, add_scorers, add_top_k, command, csv_list
from ..data import SPLITS, DataError, load_registry


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", required=True, type=Path)
    p.add_argument("--queries", required=True, type=Path,
                   help="the labeled JSONL file to append to (created if missing)")
    p.add_argument("--query", help="the request, as a user would type it (asked if omitted)")
    p.add_argument("--expected", type=csv_list,
                   help="comma-separated expected tool names (picked from a ranking if omitted)")
    p.add_argument("--split", choices=SPLITS[:2],
                   help="dev or test (default: the file's rule, alternate within category; "
                        "none if the file has no splits)")
    p.add_argument("--category", help="category label for breakdowns (and the split rule)")
    p.add_argument("--id", help="id of the new request (default: next in the file's pattern)")
    p.add_argument("--rank-by", default=DEFAULT_SCORER, metavar="SCORER",
                   help=f"scorer of the ranking to pick from (default: {DEFAULT_SCORER})")
    p.add_argument("--scorer", dest="rank_by", help=argparse.SUPPRESS)  # its name before
    p.add_argument("--top", type=int, default=15, help="tools shown to pick from (default 15)")
    from ..tables.labeling import LABEL_KS, LABEL_SCORERS
    add_scorers(p, LABEL_SCORERS, help="comma-separated scorers whose ranks of the new label "
                                       "are shown")
    add_top_k(p, LABEL_KS, help="comma-separated cut-offs of the impact table")
    p.add_argument("--no-embed-check", action="store_true",
                   help="near-duplicate check by tokens only (no embedding model)")
    p.add_argument("--yes", "-y", action="store_true", help="append without asking")


def _ask(prompt: str) -> str | None:
    """One line from stdin (``None`` at end of input)."""
    print(prompt, end="", flush=True)
    line = sys.stdin.readline()
    return None if line == "" else line.strip()


def _print_ranking(ranking) -> None:
    from ..tables.labeling import one_line, telling_parts
    width = max(len(one_line(t)) for t in ranking["tool"])
    shown, shared = telling_parts(list(ranking["description"]))
    for r, desc in zip(ranking.itertuples(), shown):
        desc = desc if len(desc) <= 70 else desc[:67] + "..."
        always = " [always]" if r.always_include else ""
        print(f"  {r.n:>3}. {one_line(r.tool):<{width}}  {r.score:6.3f}  {desc}{always}")
    for prefix in shared:
        text = prefix if len(prefix) <= 90 else prefix[:87] + "..."
        print(f"  (… stands for the start several of these descriptions share: {text!r})")


def _print_impact(impact, ks) -> None:
    print("\nwhat this label shows (rank among filtered tools; sent at which K of "
          f"{','.join(map(str, ks))}):")
    for scorer, g in impact.groupby("scorer", sort=False):
        cells = []
        for r in g.itertuples():
            if r.rank == 0:
                cells.append(f"{r.tool} always sent")
            else:
                at = "not in top " + str(max(ks)) if r.found_at != r.found_at else \
                    f"found at K={int(r.found_at)}"
                cells.append(f"{r.tool} rank {r.rank} ({at})")
        complete = [k for k in ks if g[f"complete@{k}"].iloc[0]]
        verdict = f"complete at K={complete[0]}" if complete else f"incomplete at K={max(ks)}"
        print(f"  {scorer:<10} {'; '.join(cells)} -> {verdict}")


@command("label", "append one labeled request to a query file (validated, new id, split by "
                  "the rule, near-duplicates flagged) and show what it changes", _args)
def _run(args: argparse.Namespace) -> int:
    from ..datasets import read_labeled
    from ..tables.labeling import (append_query, file_ids, label_impact, near_duplicates,
                                   new_record, rank_for_labeling, record_line, resolve_picks)
    reg = load_registry(args.registry)
    existing = read_labeled(args.queries, reg)
    cache: dict = {}
    text = args.query
    if not text:
        text = _ask("request: ")
        if not text:
            print("toolsel label: nothing appended (no request)", file=sys.stderr)
            return 1
    if args.expected:
        expected = resolve_picks(args.expected, rank_for_labeling(reg, text, args.rank_by,
                                                                  top=args.top, _cache=cache),
                                 reg)
    else:
        ranking = rank_for_labeling(reg, text, args.rank_by, top=args.top, _cache=cache)
        print(f"\nthe registry ranked by {args.rank_by} for: {text}")
        _print_ranking(ranking)
        while True:
            picks = _ask("expected tools (numbers or names, comma-separated): ")
            if picks is None:
                print("\ntoolsel label: nothing appended", file=sys.stderr)
                return 1
            try:
                expected = resolve_picks(picks, ranking, reg)
                break
            except DataError as exc:
                print(f"  {exc}", file=sys.stderr)
    ids = file_ids(args.queries)
    record = new_record(text, expected, existing, reg, id=args.id, split=args.split,
                        category=args.category, ids=ids)
    dups = near_duplicates(text, existing, embed=not args.no_embed_check)
    for d in dups.itertuples():
        cos = "" if d.cosine != d.cosine else f", embedding cosine {d.cosine:.3f}"
        print(f"warning: near-duplicate of {d.id} ({d.flagged_by}: token Jaccard "
              f"{d.token_jaccard:.2f}{cos}): {d.query!r} -> {', '.join(d.expected)}")
    split_note = ("" if "split" in record or not existing else
                  " (the file has no splits: none assigned)")
    print(f"new line for {args.queries}{split_note}:\n  {record_line(record)}")
    if not args.yes:
        answer = _ask("append? [y/N] ")
        if (answer or "").lower() not in ("y", "yes"):
            print("toolsel label: nothing appended", file=sys.stderr)
            return 1
    added = append_query(args.queries, record, reg, assign_id=args.id is None,
                         assign_split=args.split is None)
    written = {**record, "id": added.id, **({"split": added.split} if added.split else {})}
    print(f"appended {added.id!r} to {args.queries} ({len(read_labeled(args.queries, reg))} "
          f"requests):\n  {record_line(written)}")
    _print_impact(label_impact(reg, text, expected, args.scorers, args.top_k, _cache=cache),
                  sorted(set(args.top_k)))
    return 0
