"""The page "Recorded runs" (notebook 11): its tables, and its sentences from them.

:func:`run_tables` evaluates a recording of Messages API exchanges in three stages (discovery,
selection given discovery, cost; :mod:`toolsel.tables.runs`); :func:`run_sentences` renders the
page's findings from those tables, each citing the CSV it reads (:data:`FILES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..report import claims
from ..report import markdown as md
from ..tables.runs import RunsReport, evaluate_runs, load_runs

__all__ = ["RunTables", "run_tables", "run_sentences", "stage_tables", "rates_with_interval",
           "FILES"]

#: The CSV of each table the sentences cite (the evaluation writes all but data.csv).
FILES = {"data": "data.csv", "searches": "searches.csv", "compare": "compare.csv"}


@dataclass
class RunTables:
    """``data`` (one row of counts) and ``report`` (:class:`~toolsel.tables.runs.RunsReport`:
    stages, tasks, searches, compare, cost; it writes its own CSVs)."""

    data: pd.DataFrame
    report: RunsReport


def run_tables(runs, registry) -> RunTables:
    """Load the recording at ``runs`` (folder or JSONL) against ``registry`` and evaluate it."""
    runset = load_runs(runs, registry=registry)
    data = pd.DataFrame([{"n_runs": len(runset), "n_tasks": len(runset.tasks),
                          "n_requests": sum(len(r.exchanges) for r in runset.runs)}])
    return RunTables(data, evaluate_runs(runset))


def rates_with_interval(table: pd.DataFrame, by: str, column: str, keys: Sequence,
                        *, digits: int = 0) -> list[str]:
    """:func:`toolsel.report.markdown.rate_interval` of a yes/no ``column`` per group: for each
    of ``keys``, the rows of ``table`` whose ``by`` equals it (e.g. one rate per run over its
    tasks). A key with no row gives ``"0/0, –"``."""
    if by not in table.columns or column not in table.columns:
        raise KeyError(f"rates_with_interval: the table has no column {by!r} or {column!r}")
    out = []
    for key in keys:
        values = table.loc[table[by] == key, column].astype(bool)
        out.append(md.rate_interval(int(values.sum()), len(values), digits=digits))
    return out


def stage_tables(report: RunsReport) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The three-stage table as shown: discovery and selection (rates over tasks with their
    Wilson 95% interval: with 1-5 tasks per run a bootstrap collapses to a point), and cost."""
    st = report.stages
    discovery = pd.DataFrame({
        "run": st["run"], "tasks": st["tasks"],
        "discovery recall": st["discovery_recall"],
        "required found": [f"{r.discovered_required}/{r.deferred_required}"
                           if r.deferred_required else "–" for r in st.itertuples()],
        "complete [95%]": rates_with_interval(report.tasks, "run", "all_available", st["run"]),
        "empty misses": st["empty_search_misses"],
        "tasks available": st["tasks_available"],
        "selection given discovery": st["selection_given_discovery"],
        "wrong operation": st["wrong_operation_rate"],
        "success [95%]": rates_with_interval(report.tasks, "run", "success", st["run"])})
    cost = pd.DataFrame({
        "run": st["run"], "requests": st["requests"], "searches": st["searches"],
        "references": st["references_loaded"], "client calls": st["client_calls"],
        "uncached": st["input_uncached"], "cache write": st["cache_write"],
        "cache read": st["cache_read"], "input": st["input_total"],
        "input per task": st["input_per_task"], "output": st["output_tokens"]})
    return discovery, cost


def run_sentences(t: RunTables) -> dict[str, claims.Claim]:
    """The page's findings by section, each computed from the table it cites."""
    out = {"data": claims.counts(t.data, FILES["data"], "{r} runs of {t} labeled tasks, "
                                 "{n} requests.", r="n_runs", t="n_tasks", n="n_requests")}
    searches, cmp = t.report.searches, t.report.compare
    out["searches"] = (claims.fill(searches, FILES["searches"], "{e} of ", e=("empty_miss",
                                                                             "count_true"))
                       + claims.count_rows(searches, FILES["searches"], "{n} searches returned "
                                           "nothing while a required tool was still "
                                           "undiscovered (counted as misses)."))
    if len(cmp):
        out["compare"] = claims.count_rows(cmp, FILES["compare"], "Of the {n} tasks run both "
                                           "eager and deferred, ") + claims.fill(
            cmp, FILES["compare"], "{e} succeed eager and {d} deferred; the deferred run's "
            "input changes by {lo} to {hi} against eager's.", e=("success_eager", "count_true"),
            d=("success_deferred", "count_true"), lo=("input_change", "min", "spct", 0),
            hi=("input_change", "max", "spct", 0))
    return out
