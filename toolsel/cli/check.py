"""``toolsel check``: fail CI when a registry change makes a labeled request lose its tool.

Exit status: 0 nothing got worse; 1 a regression (a required tool the baseline sent is no
longer sent) or a threshold missed; 2 bad input (one line naming the file, line and field).
The comparison itself is :mod:`toolsel.tables.check`; the Markdown and JUnit outputs
:mod:`toolsel.report.check_outputs`.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from ..data import DataError, load_queries, load_registry
from ..policies import prefix_policies
from ..visible import visible
from .common import always_include_names, command, csv_list, file_path, int_list
from .fit import add_model_arg, with_model


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", required=True, type=Path, help="registry file (JSON or JSONL)")
    p.add_argument("--queries", required=True, type=Path, action="append",
                   help="labeled requests (JSONL); repeat for several files")
    p.add_argument("--scorers", type=csv_list, metavar="S[,S...]",
                   help="scorer names (default: the baseline's, else 'default')")
    sel = p.add_mutually_exclusive_group()
    sel.add_argument("--top-k", type=int_list, metavar="K",
                     help="send the K best tools (one K; default: the baseline's, else 10)")
    sel.add_argument("--policy", metavar="SPEC",
                     help="send what a selection policy sends instead of a fixed K, e.g. "
                          "threshold:min_score=0.5,max_k=10 (one of "
                          f"{', '.join(prefix_policies())})")
    p.add_argument("--always-include", type=csv_list, metavar="NAMES",
                   help="tools sent every turn, outside the filter; 'marked' takes the "
                        "registry's always_include tools (default: the baseline's, else none)")
    p.add_argument("--baseline", type=file_path, metavar="FILE",
                   help="the recorded results to compare with (JSON written by "
                        "--update-baseline; commit it)")
    p.add_argument("--min", action="append", default=[], metavar="METRIC@K=V,...",
                   help="minimum metric values, e.g. R@10=0.9,Complete@10=0.8,MRR=0.6 "
                        "(R, Success, Complete at a cut-off or @sent; MRR; any other "
                        "metric@K of toolsel.eval.metrics.evaluate)")
    p.add_argument("--update-baseline", action="store_true",
                   help="write this run's results to --baseline (after showing what changed)")
    p.add_argument("--summary", type=file_path, metavar="FILE",
                   help="write a Markdown summary here (it is also appended to "
                        "$GITHUB_STEP_SUMMARY when that is set)")
    p.add_argument("--junit", type=file_path, metavar="FILE", help="write a JUnit XML file here")
    p.add_argument("--force", action="store_true",
                   help="replace --summary/--junit even when the file there was not written by "
                        "toolsel check, and replace a symbolic link at --summary, --junit or "
                        "--baseline (the link itself; what it points to is never written)")
    add_model_arg(p)
    p.add_argument("--explain", action="store_true",
                   help="add each regression's failure mode and the request words the tool's "
                        "text lost")


def _load_queries(paths, reg):
    out, seen = [], {}
    for path in paths:
        for q in load_queries(path, reg):
            if q.id in seen:
                raise DataError(f"query id {q.id!r} is also in {seen[q.id]}; ids must be "
                                "unique across the query files", path=path,
                                location=f"query {q.id!r}", field="id")
            seen[q.id] = path
            out.append(q)
    return out


def _command_line(args, run) -> str:
    parts = ["toolsel", "check", "--registry", str(args.registry)]
    for q in args.queries:
        parts += ["--queries", str(q)]
    parts += ["--baseline", str(args.baseline), "--update-baseline"]
    return shlex.join(parts)


@command("check", "compare a labeled suite's selection with a committed baseline and "
         "thresholds; exit 1 when a request lost a required tool", _args)
def _run(args: argparse.Namespace) -> int:
    from ..tables.check import compare, run_check

    # everything that can be refused is refused before any scoring
    thresholds = _refuse_bad_arguments(args)
    old = _old_baseline(args)
    selection = _selection(args, old)
    reg = load_registry(args.registry)
    always = _always_include(args, reg, old)
    scorers = _scorers(args, old)
    same = _same_settings(old, selection, always)
    comparing = old is not None and not args.update_baseline
    if comparing:
        _refuse_other_settings(args.baseline, old, scorers, selection, always, same)
    queries = _load_queries(args.queries, reg)
    if args.model is not None:
        scorers = with_model(scorers, args.model, reg, queries)
    if comparing:
        _refuse_incomparable(args.baseline, old, queries, reg)
    run = run_check(reg, queries, scorers, selection=selection, always_include=always)
    result = compare(run, old if same else None, thresholds, registry=reg,
                     explain=args.explain)
    if old is not None and not same:
        result.notes.append("the baseline's settings differ from this run's; it is re-recorded "
                            "without a comparison")

    # the report
    qnames = ", ".join(str(q) for q in args.queries)
    _print_header(args, len(reg), len(queries), qnames, selection, always)
    _print_summaries(run, old if same else None)
    if result.compared:
        _print_changes(run, result)
    _print_thresholds_and_notes(result)

    # the outputs
    cmd = _command_line(args, run) if args.baseline else None
    written = _write_outputs(args, run, result, qnames, cmd)
    status = 1 if result.failed else 0
    if args.update_baseline:
        written += _record_baseline(args.baseline, run, force=args.force,
                                    judged=args.judged.get("--baseline"))
        # the baseline's changes are accepted; thresholds still hold
        status = 1 if result.missed_thresholds else 0
    elif result.improvements:
        print(f"\nthe baseline is out of date ({len(result.improvements)} improvement(s)); "
              f"accept them with: {visible(cmd)}")
    if written:
        print("wrote " + ", ".join(visible(p) for p in written))
    print(_closing_line(result, args.update_baseline))
    sys.stdout.flush()
    return status


def _refuse_bad_arguments(args: argparse.Namespace) -> list:
    """Refuse what the arguments alone make impossible (before reading any data); return the
    parsed ``--min`` thresholds."""
    from ..io import check_output_file, has_mark, refuse_inputs
    from ..tables.check import parse_thresholds
    thresholds = parse_thresholds(args.min) if args.min else []
    if args.update_baseline and args.baseline is None:
        raise ValueError("--update-baseline needs --baseline FILE (where to write it)")
    if args.baseline is None and not thresholds:
        raise ValueError("nothing to check against: give --baseline FILE (record it once with "
                         "--update-baseline) and/or --min METRIC@K=VALUE")
    # outputs are judged where they really are (links followed, --force or not); none may be
    # an input of this run or another output (the baseline is an input unless re-recorded)
    updating = args.update_baseline and args.baseline is not None
    inputs = [("--registry", args.registry), *[("--queries", q) for q in args.queries],
              ("--model", args.model), ("--baseline", None if updating else args.baseline)]
    refuse_inputs([("--summary", args.summary), ("--junit", args.junit),
                   ("--baseline", args.baseline if updating else None)], inputs)
    args.judged = {}
    for flag, path in (("--summary", args.summary), ("--junit", args.junit)):
        if path is not None:
            args.judged[flag] = check_output_file(path, force=args.force, owned=has_mark)
    if updating:
        args.judged["--baseline"] = check_output_file(args.baseline, data_ok=True,
                                                      force=args.force)
    return thresholds


def _old_baseline(args: argparse.Namespace):
    """The baseline to compare with, or None: none given, or one to record that is not there
    yet. A file ``--update-baseline`` would overwrite must already be a check baseline."""
    from ..tables.check import load_baseline
    if args.baseline is None:
        return None
    if not args.update_baseline:
        return load_baseline(args.baseline)
    if not args.baseline.exists():
        return None
    try:
        return load_baseline(args.baseline)
    except DataError as exc:
        raise DataError(f"{exc.reason}; refusing to overwrite a file that is not "
                        "a toolsel check baseline", path=exc.path,
                        location=exc.location, field=exc.field) from None


def _selection(args: argparse.Namespace, old):
    """The selection policy checked: ``--top-k`` or ``--policy``, else the baseline's, else
    the default."""
    from ..tables.check import selection_policy
    if args.top_k is not None and len(args.top_k) != 1:
        raise DataError(f"--top-k: check guards one selection, got {len(args.top_k)} cut-offs "
                        f"({','.join(map(str, args.top_k))}); run one check per K")
    if args.top_k is not None or args.policy is not None:
        return selection_policy(args.top_k[0] if args.top_k else None, args.policy)
    return old.selection if old is not None else selection_policy()


def _always_include(args: argparse.Namespace, reg, old) -> list[str]:
    """The tools sent every turn: ``--always-include``, else the baseline's, else none."""
    if args.always_include is not None:
        return always_include_names(args.always_include, reg)
    return list(old.always_include) if old is not None else []


def _scorers(args: argparse.Namespace, old) -> list[str]:
    """The scorers checked: ``--scorers``, else the baseline's, else ``default``; each once."""
    scorers = args.scorers or (list(old.runs) if old is not None else ["default"])
    if len(set(scorers)) != len(scorers):
        raise ValueError(f"--scorers names a scorer twice: {','.join(scorers)}")
    return scorers


def _same_settings(old, selection, always) -> bool:
    """Whether ``old`` was recorded with this selection policy and these always-included
    tools (so its results compare with this run's)."""
    from ..policies import policy_spec
    return old is not None and policy_spec(selection) == old.selection_spec \
        and tuple(always) == tuple(old.always_include)


def _refuse_other_settings(baseline: Path, old, scorers, selection, always, same) -> None:
    """Refuse comparing with a baseline recorded under other settings or without a result for
    every scorer checked."""
    from ..tables.check import CheckRun, settings_mismatch
    if not same:
        raise ValueError(f"{baseline}: " + settings_mismatch(
            old, CheckRun(selection, tuple(always), {})))
    missing = [s for s in scorers if s not in old.runs]
    if missing:
        raise ValueError(f"{baseline}: no results for scorer(s) {', '.join(missing)} "
                         f"(it has {', '.join(old.runs)}); add them with --update-baseline")


def _refuse_incomparable(baseline: Path, old, queries, reg) -> None:
    """Refuse a baseline that shares no request with this run: a gate that compares nothing
    must not pass."""
    from ..tables.check import incomparable
    why = incomparable(old, queries, reg)
    if why is not None:
        raise ValueError(f"{baseline}: {why}; nothing to compare: check the "
                         "--registry and --queries, or record a new baseline with "
                         "--update-baseline")


def _print_header(args: argparse.Namespace, n_tools: int, n_queries: int, qnames: str,
                  selection, always) -> None:
    """The first line: what is checked, with which selection, against which baseline."""
    from ..policies import policy_spec
    print(f"toolsel check: {n_tools:,} tools ({visible(args.registry)}), {n_queries:,} "
          f"requests ({visible(qnames)}); selection {visible(policy_spec(selection))}; "
          f"always-include {visible(', '.join(always)) or 'none'}"
          + (f"; baseline {visible(args.baseline)}" if args.baseline else ""))


def _print_summaries(run, base) -> None:
    """One line per scorer: its metrics (with the baseline's where they differ) and timings."""
    for label, sr in run.runs.items():
        b = base.runs.get(label) if base is not None else None
        cells = _summary_cells(sr.summary, b.summary if b is not None else None)
        print(f"{visible(label)}: " + ", ".join(cells) + f"; {sr.summary['n_queries']} requests; fit "
              f"{sr.fit_s:.2f} s, scoring {sr.score_s:.2f} s")


def _summary_cells(summary, was_summary) -> list[str]:
    """``metric value`` for each metric of ``summary``, with the baseline value if it differs."""
    cells = []
    for key, v in summary.items():
        if key == "n_queries" or v is None:
            continue
        was = was_summary.get(key) if was_summary is not None else None
        cells.append(f"{key} {v:.3f}" + (f" (baseline {was:.3f})" if was is not None
                                          and was != v else ""))
    return cells


def _print_changes(run, result) -> None:
    """Each scorer's regressions and improvements, then its tolerated rank moves (20 shown)."""
    for label in run.runs:
        for kind, title in (("lost", "regressions"), ("found", "improvements")):
            _print_change_list(result.of_kind(kind, label), title, label)
        moves = result.of_kind("moved", label)
        if moves:
            print(f"\nrank moves inside the selection under {visible(label)} (tolerated, "
                  f"{len(moves)}):")
            for c in moves[:20]:
                print("  " + c.line())
            if len(moves) > 20:
                print(f"  ... and {len(moves) - 20} more (all in --summary)")


def _print_change_list(changes, title: str, label: str) -> None:
    if not changes:
        print(f"{title} under {visible(label)}: none")
        return
    print(f"\n{title} under {visible(label)} ({len(changes)}):")
    for c in changes:
        print(c.line())
        if c.explanation is not None:
            print("    " + visible(c.explain_line()))


def _print_thresholds_and_notes(result) -> None:
    """Each threshold's outcome, then the notes (20 shown; all are in --summary)."""
    if result.thresholds:
        print("\nthresholds:")
        for t in result.thresholds:
            print("  " + t.line())
    if result.notes:
        print(f"\nnotes ({len(result.notes)}):")
        for n in result.notes[:20]:
            print("  " + visible(n))
        if len(result.notes) > 20:
            print(f"  ... and {len(result.notes) - 20} more (all in --summary)")


def _write_outputs(args: argparse.Namespace, run, result, qnames: str,
                   cmd: str | None) -> list[Path]:
    """Write the Markdown summary (to --summary and $GITHUB_STEP_SUMMARY) and the JUnit XML;
    return the files written."""
    from ..io import has_mark, write_bytes, write_text
    from ..report.check_outputs import MARKDOWN_FILE_MARK, junit_xml, markdown_summary
    md = markdown_summary(result, registry=str(args.registry), queries=qnames,
                          baseline=str(args.baseline) if args.baseline else None, command=cmd)
    written = []
    if args.summary is not None:
        # the file carries toolsel's mark (its last line): a later run may replace it
        written.append(write_text(md + MARKDOWN_FILE_MARK, args.summary, force=args.force,
                                  owned=has_mark, judged=args.judged["--summary"]))
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    if step:
        with open(step, "a", encoding="utf-8") as fh:  # the job summary protocol: append
            fh.write(md + "\n")
        written.append(Path(step))
    if args.junit is not None:
        written.append(write_bytes(junit_xml(result, seconds={
            label: sr.seconds for label, sr in run.runs.items()}), args.junit, force=args.force,
            owned=has_mark, judged=args.judged["--junit"]))
    return written


def _is_baseline(data: bytes) -> bool:
    """Whether ``data`` is a toolsel check baseline (what ``--update-baseline`` may replace)."""
    from ..tables.check import parse_baseline
    try:
        parse_baseline(data.decode("utf-8"))
    except (DataError, ValueError, RecursionError):
        return False
    return True


def _record_baseline(baseline: Path, run, *, force: bool = False,
                     judged: Path | None = None) -> list[Path]:
    """Write this run's results to ``baseline`` unless it already holds them; return the files
    written. What is replaced must be a baseline (checked again as it is replaced)."""
    from ..io import write_text
    from ..tables.check import baseline_text
    text = baseline_text(run)
    if baseline.exists() and baseline.read_text(encoding="utf-8") == text:
        print(f"\nbaseline {visible(baseline)} is unchanged")
        return []
    existed = baseline.exists()
    written = [write_text(text, baseline, force=force, owned=_is_baseline, judged=judged)]
    if existed:
        print(f"\nbaseline {visible(baseline)} re-recorded: review its diff and commit it")
    else:
        print(f"\nbaseline {visible(baseline)} recorded (a new file): commit it")
    return written


def _closing_line(result, updating: bool) -> str:
    """The last line: the verdict, or (recording a baseline) whether the thresholds held."""
    from ..report.check_outputs import verdict
    if not updating:
        return verdict(result)
    n = len(result.missed_thresholds)
    return f"failed: {n} threshold{'s' * (n != 1)} missed" if n else "passed"
