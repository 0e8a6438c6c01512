"""``toolsel runs PATH --registry R [--out DIR]``: evaluate recorded Messages API runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import command
from ..data import load_registry
from ..visible import visible


def _runs_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path,
                   help="a folder of recorded exchanges (*.jsonl) or one JSONL file")
    p.add_argument("--registry", required=True, type=Path,
                   help="registry file; every label's expected tools must be in it")
    p.add_argument("--tasks", type=Path, default=None,
                   help="task label file (query format: id, query, expected); default: "
                        "tasks.jsonl in the folder or beside the file")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for stages.csv, tasks.csv, searches.csv, compare.csv, cost.csv")


@command("runs", "evaluate recorded agent runs: discovery, selection given discovery, cost",
         _runs_args)
def _runs(args: argparse.Namespace) -> int:
    from ..tables.runs import RunsReport, evaluate_runs, load_runs
    from ..io import check_output_dir
    if args.out is not None:
        check_output_dir(args.out, [f"{n}.csv" for n in RunsReport.names])
    registry = load_registry(args.registry)
    runset = load_runs(args.path, tasks=args.tasks, registry=registry)
    report = evaluate_runs(runset)
    print(report.table())
    print()
    for _, row in report.tasks.iterrows():
        print(f"{visible(row['task_id']):<8} {visible(row['run']):<14} {row['diagnosis']:<15} "
              f"{visible(row['evidence'])}")
    n_tasks = report.tasks["task_id"].nunique()
    print(f"\n{len(runset)} runs of {n_tasks} tasks, "
          f"{sum(len(r.exchanges) for r in runset.runs)} requests")
    if args.out is not None:
        paths = report.write(args.out)
        print("wrote " + ", ".join(visible(p) for p in paths))
    return 0
