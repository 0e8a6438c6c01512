"""``toolsel label``: add labeled requests to a query file, and show what each changes.

Three ways, one process each (the scorers are fitted and the embedding model loaded once):

- a session (no ``--query``, no ``--from``): asks request after request (the request, the
  expected tools picked by number from the registry ranked by the ``default`` scorer, or by
  name, then a confirmation) until an empty request or the end of input;
- ``--from FILE``: the requests of a file (one per line, or JSONL with a ``query`` field and
  optionally ``expected``: :func:`toolsel.tables.labeling.read_requests`), all checked first,
  then labeled one after the other;
- ``--query`` (with ``--expected`` and ``--yes`` for scripts): one request;
- ``--suggest``: appends nothing; prints the tools worth a labeled request next (report page
  13's table, :func:`toolsel.pages.labels.tool_tables`): tools whose requests the
  cross-fitted learned ``--rank-by`` scorer missed at 5 while its fold had no labeled request
  naming them, most such misses first.

The logic is :mod:`toolsel.tables.labeling` (:class:`~toolsel.tables.labeling.LabelSession`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .common import DEFAULT_SCORER, add_scorers, add_top_k, command, csv_list
from ..data import SPLITS, DataError, load_registry
from ..visible import visible


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", required=True, type=Path)
    p.add_argument("--queries", required=True, type=Path,
                   help="the labeled JSONL file to append to (created if missing)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--query", help="one request, as a user would type it (without it and "
                                     "without --from: asks request after request until an "
                                     "empty line or the end of input)")
    how.add_argument("--from", dest="from_file", type=Path, metavar="FILE",
                     help="label every request of FILE in one session: one request per line, "
                          "JSONL with a 'query' field (and optionally 'expected', "
                          "'category', 'split'), or a traffic log of `toolsel serve --log` "
                          "(each search, the tools then called proposed: Enter or --yes "
                          "accepts them); a request without 'expected' is picked from the "
                          "ranking")
    how.add_argument("--suggest", action="store_true",
                     help="append nothing; print the tools worth labeling next: tools whose "
                          "requests were missed at 5 (cross-fitted) while no labeled request "
                          "named them, most such misses first (report page 13's table)")
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
    p.add_argument("--yes", "-y", action="store_true",
                   help="append without asking (each request's confirmation)")


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
        print("  (… stands for the start several of these descriptions share: "
              f"{visible(repr(text))})")


def _print_impact(impact, ks) -> None:
    print("\nwhat this label shows (rank among filtered tools; sent at which K of "
          f"{','.join(map(str, ks))}):")
    for scorer, g in impact.groupby("scorer", sort=False):
        cells = []
        for r in g.itertuples():
            if r.rank == 0:
                cells.append(f"{visible(r.tool)} always sent")
            else:
                at = "not in top " + str(max(ks)) if r.found_at != r.found_at else \
                    f"found at K={int(r.found_at)}"
                cells.append(f"{visible(r.tool)} rank {r.rank} ({at})")
        complete = [k for k in ks if g[f"complete@{k}"].iloc[0]]
        verdict = f"complete at K={complete[0]}" if complete else f"incomplete at K={max(ks)}"
        print(f"  {visible(scorer):<10} {'; '.join(cells)} -> {verdict}")


_END = object()  # the input ended: the session stops


def _requests(n: int) -> str:
    return f"{n} request" if n == 1 else f"{n} requests"


def _ask_picks(session, args, text: str, proposed=()):
    """The expected tools of a request, asked against its ranking: picks typed by the user,
    or with ``proposed`` tools, those accepted with Enter (or ``--yes``); ``_END`` when the
    input ended."""
    ranking = session.rank(text)
    print(f"\nthe registry ranked by {visible(args.rank_by)} for: {visible(text)}")
    _print_ranking(ranking)
    if proposed:
        print(f"proposed (the tools called after this search): {visible(', '.join(proposed))}")
        if args.yes:
            return session.picks(list(proposed), text)
    prompt = "expected tools (numbers or names, comma-separated" + (
        "; Enter: the proposed): " if proposed else "): ")
    while True:
        picks = _ask(prompt)
        if picks is None:
            print("\ntoolsel label: nothing appended", file=sys.stderr)
            return _END
        try:
            return session.picks(picks if picks or not proposed else list(proposed), text, ranking)
        except DataError as exc:
            print(f"  {visible(exc)}", file=sys.stderr)


def _label_one(session, args, text: str, expected=None, *, category=None, split=None, id=None,
               fields=None, proposed=()):
    """Label one request: True appended, False not (refused or declined), ``_END`` when the
    input ended while asking. ``proposed``: tools offered as the expected ones."""
    from ..tables.labeling import record_line
    if expected:
        expected = session.picks(expected, text)
    else:
        expected = _ask_picks(session, args, text, proposed)
        if expected is _END:
            return _END
    record, dups = session.prepare(text, expected, id=id, split=split, category=category,
                                   **(fields or {}))
    for d in dups.itertuples():
        cos = "" if d.cosine != d.cosine else f", embedding cosine {d.cosine:.3f}"
        print(f"warning: near-duplicate of {visible(d.id)} ({d.flagged_by}: token Jaccard "
              f"{d.token_jaccard:.2f}{cos}): {visible(repr(d.query))} -> "
              f"{visible(', '.join(d.expected))}")
    split_note = ("" if "split" in record or not session.existing() else
                  " (the file has no splits: none assigned)")
    print(f"new line for {visible(args.queries)}{split_note}:\n  {visible(record_line(record))}")
    if not args.yes:
        answer = _ask("append? [y/N] ")
        if answer is None:
            print("\ntoolsel label: nothing appended", file=sys.stderr)
            return _END
        if answer.lower() not in ("y", "yes"):
            print("toolsel label: nothing appended", file=sys.stderr)
            return False
    added = session.append(record, assign_id=id is None, assign_split=split is None)
    written = {**record, "id": added.id, **({"split": added.split} if added.split else {})}
    print(f"appended {visible(repr(added.id))} to {visible(args.queries)} "
          f"({_requests(len(session.existing()))}):\n  {visible(record_line(written))}")
    _print_impact(session.impact(text, expected), session.ks)
    return True


@command("label", "append labeled requests to a query file (validated, new ids, split by the "
                  "rule, near-duplicates flagged) and show what each changes: one (--query), "
                  "a list (--from FILE) or request after request", _args)
def _run(args: argparse.Namespace) -> int:
    from ..tables.labeling import LabelSession, read_requests
    reg = load_registry(args.registry)
    if args.suggest:
        if args.expected or args.id is not None:
            print("toolsel label: error: --suggest appends nothing: drop --expected/--id",
                  file=sys.stderr)
            return 2
        return _suggest(reg, args)
    # the file appended to, judged before anything is asked (again at each append)
    from ..io import maintained_file, refuse_inputs, refuse_never_write
    refuse_never_write(maintained_file(args.queries), file=True, data_ok=True)
    refuse_inputs([("--queries", args.queries)], [("--registry", args.registry)])
    session = LabelSession(reg, args.queries, rank_by=args.rank_by, top=args.top,
                           scorers=args.scorers, ks=args.top_k,
                           embed_check=not args.no_embed_check)
    session.existing()  # a broken query file stops here, before anything is asked
    if args.query is not None:
        if not args.query.strip():
            print("toolsel label: nothing appended (no request)", file=sys.stderr)
            return 1
        done = _label_one(session, args, args.query.strip(), args.expected,
                          category=args.category, split=args.split, id=args.id)
        return 0 if done is True else 1
    if args.expected or args.id is not None:
        flag = "--expected" if args.expected else "--id"
        print(f"toolsel label: error: {flag} labels one request: give it with --query "
              "(in a --from file, per request: 'expected', 'id')", file=sys.stderr)
        return 2
    if args.from_file is not None:
        return _label_file(session, args, read_requests(args.from_file, reg))
    return _label_asked(session, args)


def _suggest(reg, args) -> int:
    """``--suggest``: the next requests worth labeling, from the labeled file as it is."""
    from ..data import load_queries
    from ..eval.crossfit import can_cross_fit, cross_fit, prepare
    from ..pages.labels import tool_tables
    if not args.queries.is_file():
        print(f"toolsel label: error: {visible(args.queries)}: no such file; --suggest reads the "
              "labeled requests there", file=sys.stderr)
        return 2
    queries = load_queries(args.queries, reg)
    reason = can_cross_fit(queries)
    if reason:
        print(f"toolsel label: nothing to suggest from {visible(args.queries)}: {visible(reason)}",
              file=sys.stderr)
        return 1
    prep = prepare(reg, queries, args.rank_by)
    nxt = tool_tables(prep, cross_fit(reg, queries, prepared=prep))[1]
    print(f"{len(queries)} labeled requests in {visible(args.queries)}, cross-fitted with "
          f"{visible(args.rank_by)} learning from them (each request scored by a model fit without it)")
    if not len(nxt):
        print("no tool to suggest: every required tool the learned selector missed at 5 had "
              "a labeled request in its fold's training data")
        return 0
    print(f"tools worth another labeled request ({len(nxt)}): the learned selector missed "
          "at 5 requests naming each tool whenever it had not learned from a request naming "
          "it (cross-fitting holds each request out); a request worded unlike those labeled "
          "helps most")
    print(f"{'rank':>4}  {'tool':<40} {'missed':>6} {'labeled':>7}   (missed: of the labeled "
          "requests naming the tool, those missed unlearned)")
    for r in nxt.head(args.top).itertuples(index=False):
        print(f"{r.rank:>4}  {visible(r.tool):<40} {r.missed_cold:>6} {r.n_requests:>7}")
    if len(nxt) > args.top:
        print(f"(+{len(nxt) - args.top} more; --top N shows more)")
    _note_just_labeled(queries[-1], nxt.head(args.top))
    return 0


def _note_just_labeled(last, shown) -> None:
    """Say why a tool the file's last request names can be suggested right after labeling it:
    with one labeled request, that request is held out whenever its tool is scored."""
    just = [t for t in shown["tool"] if t in last.expected]
    if just:
        one = len(just) == 1
        print(f"note: {visible(', '.join(just))} {'is' if one else 'are'} named by the last "
              f"labeled request ({visible(last.id)}); {'its' if one else 'their'} own label is held out when "
              f"{'it is' if one else 'they are'} scored, so a second request worded "
              "differently is what makes the label count")


def _label_file(session, args, requests) -> int:
    """``--from``: each request of the file (already checked) in turn."""
    print(f"{len(requests)} request{'s' if len(requests) != 1 else ''} from "
          f"{visible(args.from_file)}", flush=True)
    results = []
    for n, req in enumerate(requests, start=1):
        print(f"\n[{n}/{len(requests)}] {visible(args.from_file)}, {visible(req.location)}: "
              f"{visible(req.query)}")
        fields = dict(req.fields)
        if req.failed:
            print(f"  called after it with an error result (not proposed): "
                  f"{', '.join(req.failed)}")
        if args.yes and req.from_log and not req.proposed:
            print("  skipped: no tool was called after this search with a result that was "
                  "not an error (nothing to propose); label it without --yes to pick its "
                  "tools")
            results.append(False)
            continue
        try:
            done = _label_one(session, args, req.query, list(req.expected) or None,
                              category=fields.pop("category", args.category),
                              split=fields.pop("split", args.split),
                              id=fields.pop("id", None), fields=fields,
                              proposed=req.proposed)
        except DataError as exc:  # e.g. an id the file took meanwhile: the rest go on
            print(f"toolsel label: {visible(args.from_file)}, {visible(req.location)}: not "
                  f"appended: {visible(exc)}",
                  file=sys.stderr)
            done = False
        if done is _END:
            break
        results.append(done)
    skipped = len(requests) - len(results)
    print(f"\n{sum(results)} of {len(requests)} requests appended to {visible(args.queries)}"
          + (f"; input ended: the last {skipped} not labeled" if skipped else ""))
    return 0 if any(results) else 1


def _label_asked(session, args) -> int:
    """The session: request after request from standard input, until an empty one or EOF."""
    n = 0
    while True:
        text = _ask("\nrequest (empty line or end of input to stop): " if n else "request: ")
        if not text:
            break
        try:
            done = _label_one(session, args, text, category=args.category, split=args.split)
        except DataError as exc:
            print(f"toolsel label: not appended: {visible(exc)}", file=sys.stderr)
            done = False
        if done is _END:
            break
        n += 1
    if not session.appended:
        print("toolsel label: nothing appended" + ("" if n else " (no request)"),
              file=sys.stderr)
        return 1
    print(f"\n{len(session.appended)} request{'s' if len(session.appended) != 1 else ''} "
          f"appended to {visible(args.queries)} this session: "
          f"{visible(', '.join(str(q.id) for q in session.appended))}")
    return 0
