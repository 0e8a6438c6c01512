"""Evaluate recorded agent runs: discovery, selection given discovery, and cost, from what the
Messages API actually returned.

A *recorded run* is the list of Messages API exchanges (one request and its response each) an
agent made while working on one labeled task. :func:`load_runs` (from
:mod:`toolsel.integrations.anthropic_runs`, which parses and validates them) groups them by
``(task_id, run)``; :func:`evaluate_runs` measures three stages separately:

1. **discovery**: which required *deferred* tools (``defer_loading: true`` in the request's
   ``tools``) came back in a ``tool_reference`` (server-side ``tool_search_tool_result`` or a
   client-side search's ``tool_result``). Required tools that were sent non-deferred were
   visible anyway: they are listed apart and never counted as discovered. Per task:
   ``discovery_recall`` (NaN when no required tool was deferred) and ``all_available``; a search
   that returned nothing while a required tool was still undiscovered is an
   ``empty_search_miss``.
2. **selection given discovery**: the client ``tool_use`` names against the label. A task's
   selection is correct when every required tool was called and nothing else was (a call to
   a tool outside the label is a *wrong operation*; client-side search calls are not
   operations). ``selection_given_discovery`` is measured on the tasks whose required tools
   were all available; ``success`` (end to end) on all tasks.
3. **cost**: search calls (counted from ``server_tool_use`` blocks and client searches, since
   usage does not meter them), references loaded, client calls, and ``usage`` summed over
   every request of the task, uncached (``input_tokens``), cache write
   (``cache_creation_input_tokens``) and cache read (``cache_read_input_tokens``) apart.

Each task gets a diagnosis: ``discovery miss`` (a required tool never became available),
``selection miss`` (all available, wrong or missing calls) or ``ok``, with the evidence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..data import Query
from ..visible import visible
from ..integrations.anthropic_runs import (LABELS_FILE, Call, Exchange, Run, RunSet, Search,
                                           load_runs)

__all__ = [
    "Exchange", "Search", "Call", "Run", "RunSet", "RunsReport",
    "load_runs", "evaluate_runs", "format_stage_table",
    "TASK_COLUMNS", "STAGE_COLUMNS", "LABELS_FILE",
]


# --------------------------------------------------------------------------------------------
# evaluation

TASK_COLUMNS = [
    "task_id", "run", "mode", "n_requests", "required", "visible_required",
    "deferred_required", "discovered_required", "undiscovered", "n_deferred_required",
    "n_discovered_required", "discovery_recall", "all_available", "searches",
    "server_searches", "client_searches", "empty_searches", "empty_search_misses",
    "references_loaded", "distinct_loaded", "loaded_noise", "client_calls", "called",
    "right_calls", "wrong_calls", "selection_correct", "success", "input_uncached",
    "cache_write", "cache_read", "input_total", "output_tokens", "stop_reason", "diagnosis",
    "evidence",
]
STAGE_COLUMNS = [
    "run", "mode", "tasks",
    # discovery
    "deferred_required", "discovered_required", "discovery_recall", "discovery_recall_pooled",
    "all_available", "empty_search_misses",
    # selection given discovery
    "tasks_available", "selection_given_discovery", "wrong_operation_rate", "success",
    # cost
    "requests", "searches", "references_loaded", "client_calls", "input_uncached",
    "cache_write", "cache_read", "input_total", "output_tokens", "input_per_task",
]


@dataclass
class RunsReport:
    """The tables of :func:`evaluate_runs` (pandas DataFrames).

    - ``tasks``: one row per task × run (:data:`TASK_COLUMNS`), with diagnosis and evidence.
    - ``searches``: one row per search call: its query, what it loaded, which required tools
      it found first, and whether it was an empty-result miss.
    - ``stages``: the three-stage summary, one row per run label (:data:`STAGE_COLUMNS`).
    - ``compare``: eager vs deferred runs of the same task, side by side.
    - ``cost``: input components per run label, long format (for the cost-split figure).
    """

    tasks: pd.DataFrame
    searches: pd.DataFrame
    stages: pd.DataFrame
    compare: pd.DataFrame
    cost: pd.DataFrame
    names: tuple[str, ...] = field(default=("stages", "tasks", "searches", "compare", "cost"))

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write one CSV per table, replaced as one set (:func:`toolsel.io.write_set`)."""
        from ..io import write_set
        return write_set(out_dir, {f"{name}.csv": getattr(self, name) for name in self.names})

    def table(self) -> str:
        """The three-stage table as text."""
        return format_stage_table(self.stages)


def _join(names: Iterable[str]) -> str:
    return ";".join(names)


def _split_required(run: Run,
                    required: list[str]) -> tuple[list[str], list[str], list[str]]:
    """The required tools sent visible, sent deferred, and not in the request's tools."""
    visible_req = [n for n in required if n in run.visible]
    deferred_req = [n for n in required if n in run.deferred]
    undefined = [n for n in required if n not in run.visible and n not in run.deferred]
    return visible_req, deferred_req, undefined


def _search_rows(run: Run, required: list[str],
                 deferred_req: list[str]) -> tuple[list[dict[str, Any]], dict[str, Search]]:
    """One row per search call of ``run``, and the search that first returned each deferred
    required tool."""
    discovered: dict[str, Search] = {}
    search_rows = []
    for n, s in enumerate(run.searches, start=1):
        refs = s.references or ()
        pending = [t for t in deferred_req if t not in discovered]
        new = [t for t in refs if t in pending]
        empty = not refs
        search_rows.append({
            "task_id": run.task_id, "run": run.run, "search": n, "kind": s.kind,
            "tool": s.tool, "query": s.query, "references": _join(refs),
            "n_references": len(refs), "new_required": _join(new),
            "noise": _join(t for t in refs if t not in required), "empty": empty,
            "empty_miss": empty and bool(pending), "error": s.error or "",
            "answered": s.references is not None,
        })
        for t in new:
            discovered.setdefault(t, s)
    return search_rows, discovered


def _discovery_miss_evidence(run: Run, missing: list[str], undefined: list[str],
                             search_rows: list[dict[str, Any]]) -> str:
    """Why each missing required tool never became available, and what the searches got."""
    parts = []
    for t in missing:
        if t in undefined:
            parts.append(f"{t} not in the request's tools")
        else:
            parts.append(f"{t} never returned by {len(run.searches)} search(es)")
    tried = [f"'{r['query']}' -> [{r['references'].replace(';', ', ')}]"
             for r in search_rows]
    return "; ".join(parts) + (f"; searches: {' | '.join(tried)}" if tried else "")


def _selection_miss_evidence(wrong: list[Call], not_called: list[str],
                             discovered: dict[str, Search]) -> str:
    """The calls outside the label, then the required tools never called."""
    parts = []
    for c in wrong:
        parts.append(f"called {c.name}({json.dumps(dict(c.input), sort_keys=True)}) "
                     "outside the label")
    for t in not_called:
        how = (f"loaded by search '{discovered[t].query}'" if t in discovered
               else "visible")
        parts.append(f"never called {t} ({how})")
    return "; ".join(parts)


def _ok_evidence(found: list[str], visible_req: list[str], discovered: dict[str, Search],
                 called: list[str]) -> str:
    """How each required tool became available, and what was called."""
    how = [f"{t} via '{discovered[t].query}'" for t in found]
    how += [f"{t} visible" for t in visible_req]
    return "available: " + ", ".join(how) + f"; called {', '.join(called)}"


def _empty_miss_note(n_empty_miss: int) -> str:
    """The note added to any diagnosis when searches came back empty too early."""
    if n_empty_miss:
        return f"; {n_empty_miss} empty search(es) while a required tool was undiscovered"
    return ""


def _recall(found: list[str], deferred_req: list[str]) -> float:
    """Share of the deferred required tools discovered (NaN when none was deferred)."""
    return len(found) / len(deferred_req) if deferred_req else float("nan")


def _usage_columns(run: Run) -> dict[str, Any]:
    """The token columns of a task's row, summed over its requests, and its last stop reason."""
    usage = run.usage()
    return {
        "input_uncached": usage["input_tokens"], "cache_write":
            usage["cache_creation_input_tokens"], "cache_read": usage["cache_read_input_tokens"],
        "input_total": usage["input_tokens"] + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"],
        "output_tokens": usage["output_tokens"],
        "stop_reason": str(run.exchanges[-1].response.get("stop_reason") or ""),
    }


def _search_columns(run: Run, search_rows: list[dict[str, Any]], n_empty_miss: int,
                    required: list[str]) -> dict[str, Any]:
    """The search and loading counts of a task's row."""
    loaded = run.loaded
    return {
        "searches": len(run.searches),
        "server_searches": sum(s.kind == "server" for s in run.searches),
        "client_searches": sum(s.kind == "client" for s in run.searches),
        "empty_searches": sum(r["empty"] for r in search_rows),
        "empty_search_misses": n_empty_miss,
        "references_loaded": sum(len(s.references or ()) for s in run.searches),
        "distinct_loaded": len(loaded),
        "loaded_noise": sum(t not in required for t in loaded),
    }


def _evaluate_run(run: Run, label: Query) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    required = list(label.expected)
    visible_req, deferred_req, undefined = _split_required(run, required)
    search_rows, discovered = _search_rows(run, required, deferred_req)
    found = [t for t in deferred_req if t in discovered]
    missing = [t for t in deferred_req if t not in discovered] + undefined
    calls = run.calls
    called = [c.name for c in calls]
    wrong = [c for c in calls if c.name not in required]
    not_called = [t for t in required if t not in called]
    selection_correct = not wrong and not not_called
    all_available = not missing
    n_empty_miss = sum(r["empty_miss"] for r in search_rows)
    if not all_available:
        diagnosis = "discovery miss"
        evidence = _discovery_miss_evidence(run, missing, undefined, search_rows)
    elif not selection_correct:
        diagnosis = "selection miss"
        evidence = _selection_miss_evidence(wrong, not_called, discovered)
    else:
        diagnosis = "ok"
        evidence = _ok_evidence(found, visible_req, discovered, called)
    evidence += _empty_miss_note(n_empty_miss)
    row = {
        "task_id": run.task_id, "run": run.run, "mode": run.mode,
        "n_requests": len(run.exchanges), "required": _join(required),
        "visible_required": _join(visible_req), "deferred_required": _join(deferred_req),
        "discovered_required": _join(found), "undiscovered": _join(missing),
        "n_deferred_required": len(deferred_req), "n_discovered_required": len(found),
        "discovery_recall": _recall(found, deferred_req),
        "all_available": all_available,
        **_search_columns(run, search_rows, n_empty_miss, required),
        "client_calls": len(calls), "called": _join(called),
        "right_calls": len(calls) - len(wrong), "wrong_calls": len(wrong),
        "selection_correct": selection_correct, "success": selection_correct and all_available,
        **_usage_columns(run),
        "diagnosis": diagnosis, "evidence": evidence,
    }
    return row, search_rows


def _stage_row(run: str, df: pd.DataFrame) -> dict[str, Any]:
    avail = df[df["all_available"]]
    has_deferred = df[df["n_deferred_required"] > 0]
    n_def = int(df["n_deferred_required"].sum())
    calls_avail = int(avail["client_calls"].sum())
    modes = sorted(set(df["mode"]))
    return {
        "run": run, "mode": "+".join(modes), "tasks": len(df),
        "deferred_required": n_def,
        "discovered_required": int(df["n_discovered_required"].sum()),
        "discovery_recall": float(has_deferred["discovery_recall"].mean())
            if len(has_deferred) else float("nan"),
        "discovery_recall_pooled": int(df["n_discovered_required"].sum()) / n_def
            if n_def else float("nan"),
        "all_available": float(df["all_available"].mean()),
        "empty_search_misses": int(df["empty_search_misses"].sum()),
        "tasks_available": len(avail),
        "selection_given_discovery": float(avail["selection_correct"].mean())
            if len(avail) else float("nan"),
        "wrong_operation_rate": int(avail["wrong_calls"].sum()) / calls_avail
            if calls_avail else float("nan"),
        "success": float(df["success"].mean()),
        "requests": int(df["n_requests"].sum()), "searches": int(df["searches"].sum()),
        "references_loaded": int(df["references_loaded"].sum()),
        "client_calls": int(df["client_calls"].sum()),
        "input_uncached": int(df["input_uncached"].sum()),
        "cache_write": int(df["cache_write"].sum()), "cache_read": int(df["cache_read"].sum()),
        "input_total": int(df["input_total"].sum()),
        "output_tokens": int(df["output_tokens"].sum()),
        "input_per_task": float(df["input_total"].mean()),
    }


def _compare(tasks: pd.DataFrame) -> pd.DataFrame:
    cols = ["n_requests", "searches", "input_uncached", "cache_write", "cache_read",
            "input_total", "success", "diagnosis"]
    rows = []
    for task_id, group in tasks.groupby("task_id", sort=True):
        eager = group[group["mode"] == "eager"]
        deferred = group[group["mode"] == "deferred"]
        for _, e in eager.iterrows():
            for _, d in deferred.iterrows():
                row = {"task_id": task_id, "eager_run": e["run"], "deferred_run": d["run"]}
                for c in cols:
                    row[f"{c}_eager"] = e[c]
                    row[f"{c}_deferred"] = d[c]
                row["input_change"] = (d["input_total"] / e["input_total"] - 1.0
                                       if e["input_total"] else float("nan"))
                rows.append(row)
    columns = ["task_id", "eager_run", "deferred_run"] + [
        f"{c}_{m}" for c in cols for m in ("eager", "deferred")] + ["input_change"]
    return pd.DataFrame(rows, columns=columns)


def evaluate_runs(runs: RunSet) -> RunsReport:
    """Measure discovery, selection given discovery and cost for every recorded run."""
    rows, search_rows = [], []
    for run in runs.runs:
        row, srows = _evaluate_run(run, runs.tasks[run.task_id])
        rows.append(row)
        search_rows.extend(srows)
    tasks = pd.DataFrame(rows, columns=TASK_COLUMNS)
    search_cols = ["task_id", "run", "search", "kind", "tool", "query", "references",
                   "n_references", "new_required", "noise", "empty", "empty_miss", "error",
                   "answered"]
    searches = pd.DataFrame(search_rows, columns=search_cols)
    # eager runs first, then the others by label
    order = sorted(set(tasks["run"]), key=lambda r: (
        bool((tasks.loc[tasks["run"] == r, "mode"] == "deferred").any()), r))
    stages = pd.DataFrame([_stage_row(r, tasks[tasks["run"] == r]) for r in order],
                          columns=STAGE_COLUMNS)
    cost = stages.melt(id_vars=["run"], value_vars=["input_uncached", "cache_write",
                                                    "cache_read"],
                       var_name="component", value_name="tokens")
    cost["tokens_per_task"] = cost["tokens"] / cost["run"].map(
        dict(zip(stages["run"], stages["tasks"])))
    return RunsReport(tasks, searches, stages, _compare(tasks), cost)


def format_stage_table(stages: pd.DataFrame) -> str:
    """The three-stage summary as aligned text: discovery | selection | cost."""
    def pct(v):
        return "-" if v != v else f"{100 * v:.0f}%"

    header = [("", ["run", "tasks"]),
              ("discovery", ["recall", "pooled", "complete", "empty miss"]),
              ("selection given discovery", ["tasks", "correct", "wrong op", "success"]),
              ("cost (tokens summed over every request)",
               ["reqs", "search", "refs", "calls", "uncached", "cache wr", "cache rd",
                "input", "output"])]
    body = []
    for _, r in stages.iterrows():
        body.append([
            visible(r["run"]), str(r["tasks"]),
            pct(r["discovery_recall"]),
            f"{r['discovered_required']}/{r['deferred_required']}" if r["deferred_required"]
            else "-",
            pct(r["all_available"]), str(r["empty_search_misses"]),
            str(r["tasks_available"]), pct(r["selection_given_discovery"]),
            pct(r["wrong_operation_rate"]), pct(r["success"]),
            str(r["requests"]), str(r["searches"]), str(r["references_loaded"]),
            str(r["client_calls"]), f"{r['input_uncached']:,}", f"{r['cache_write']:,}",
            f"{r['cache_read']:,}", f"{r['input_total']:,}", f"{r['output_tokens']:,}",
        ])
    names = [n for _, cols in header for n in cols]
    widths = [max(len(n), *(len(b[i]) for b in body)) if body else len(n)
              for i, n in enumerate(names)]
    groups, i = [], 0
    for title, cols in header:
        w = sum(widths[i:i + len(cols)]) + 2 * (len(cols) - 1)
        groups.append(title.ljust(w)[:w] if len(title) <= w else title[:w])
        i += len(cols)
    lines = ["   ".join(groups).rstrip()]

    def fmt(cells):
        out, i = [], 0
        for _, cols in header:
            out.append("  ".join(c.rjust(widths[i + j]) if i + j else c.ljust(widths[0])
                                 for j, c in enumerate(cells[i:i + len(cols)])))
            i += len(cols)
        return "   ".join(out)

    lines.append(fmt(names))
    lines.extend(fmt(b) for b in body)
    return "\n".join(lines)
