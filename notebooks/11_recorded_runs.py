# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: toolsel
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   toolsel:
#     cost: 5
#     needs:
#     - registry
#     - runs
# ---

# %% [markdown]
# # Recorded runs: discovery, selection given discovery, and cost
#
# Offline sweeps say whether the right tools *could* be found. Once a model is in the loop,
# what it actually searched, loaded and called is in the Messages API exchanges an agent
# records. This notebook reads such a recording and measures three stages apart.
#
# The three stages:
#
# 1. **discovery**: did the required *deferred* tools come back in a `tool_reference`?
#    Tools sent without `defer_loading` were visible anyway and are not counted;
# 2. **selection given discovery**: among the tasks whose required tools were all available,
#    did the model call the right ones (and nothing else)?
# 3. **cost**: searches, references, client calls, and the input of *every* request with
#    uncached input, cache writes and cache reads kept apart.
#
# The format is in `data/README.md` ("Recorded runs format"); the same evaluation runs from
# the command line: `toolsel runs data/runs --registry data/registry.json --out DIR`.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry the labels refer to
runs: str = "../data/runs"  # folder (or JSONL file) of recorded exchanges, with tasks.jsonl
out_dir: str = "../reports/11_recorded_runs"  # where tables and figures go

# %%
import math
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_registry
from toolsel.io import write_table
from toolsel.pages.recorded_runs import FILES, run_sentences, run_tables, stage_tables
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.report.notebook_setup import setup
from toolsel.report.plan import same_path
from toolsel.report.plots import plot_cost_split, save_figure

out = setup(out_dir, precision=None, max_colwidth=160)
log = claims.ClaimLog(out)

# the checks of the bundled recording's numbers run only on it
bundled = (same_path(runs, "../data/runs")
           and same_path(registry, "../data/registry.json"))
tables = run_tables(runs, load_registry(registry))
report = tables.report
paths = report.write(out_dir)
link = Path(out_dir).name
write_table(tables.data, out / FILES["data"])
if bundled:
    display(Markdown(log.fixed(
        "**What the bundled recording is.** `data/runs/` is **not** a capture of a live model: "
        "its exchanges were written by hand (`data/runs/write_transcripts.py`: labeled tasks "
        "run eager with every tool of the bundled registry visible, deferred behind the "
        "server-side BM25 tool search, and with a client-side search returning "
        "`tool_reference` blocks), and the `usage` of every response (uncached, cache-write "
        "and cache-read tokens) was filled in by the project's own cache model. The "
        "*evaluation* (stages, diagnoses) is what this page demonstrates; the **cost "
        "comparison is partly circular**: it reads back numbers the project's cache model "
        "produced. On a recording of your own agent, `usage` comes from the API and the "
        "comparison is real.", "the bundled recording (data/runs)")))
said = run_sentences(tables)
display(Markdown(log.add(said["data"])))

# %% [markdown]
# ## The three-stage table
#
# One row per run configuration. *recall* is the mean per-task share of required deferred
# tools that a search returned, *pooled* the same over all required deferred tools,
# *complete* the share of tasks where every required tool became available, *empty miss* the
# searches that returned nothing while a required tool was still undiscovered. Selection is
# measured only on the tasks where discovery succeeded; *success* is end to end, over all
# tasks.

# %%
discovery, cost_cols = stage_tables(report)
display(Markdown(
    "**Discovery and selection** (rates over tasks, as tasks/all with the Wilson 95% "
    "interval: with a few tasks per run they span much of the range):\n\n"
    + md.table(discovery, {c: "{:.0%}" for c in ("discovery recall",
                                                 "selection given discovery",
                                                 "wrong operation")})
    + "\n\n**Cost** (tokens summed over every request, from each response's `usage`):\n\n"
    + md.table(cost_cols, {"input per task": "{:,.0f}"}, link=f"{link}/stages.csv")))

# %%
stages = report.stages.set_index("run")
if bundled:
    d, e = stages.loc["deferred"], stages.loc["eager"]
    assert (d["discovered_required"], d["deferred_required"]) == (6, 7)
    assert math.isclose(d["all_available"], 0.8) and d["empty_search_misses"] == 1
    assert math.isclose(d["selection_given_discovery"], 0.75)
    assert math.isclose(d["wrong_operation_rate"], 0.2) and math.isclose(d["success"], 0.6)
    assert e["success"] == 1.0 and math.isnan(e["discovery_recall"])
    assert d["input_per_task"] < e["input_per_task"]

# %% [markdown]
# ## A diagnosis per task
#
# *discovery miss*: a required tool never became available (the evidence lists the searches
# and what they returned); *selection miss*: everything needed was loaded, but the model
# called something else or left a required tool uncalled; *ok*.

# %%
display(Markdown(md.table(
    report.tasks[["task_id", "run", "required", "undiscovered", "called", "diagnosis",
                  "evidence"]].rename(columns={"task_id": "task"}),
    {"required": md.list_text, "undiscovered": md.list_text, "called": md.list_text},
    max_rows=None,
    link=f"{link}/tasks.csv")))

# %%
if bundled:
    diag = report.tasks.set_index(["task_id", "run"])["diagnosis"]
    assert diag[("r03", "deferred")] == "discovery miss"
    assert diag[("r02", "deferred")] == "selection miss"
    assert (diag.drop([("r03", "deferred"), ("r02", "deferred")]) == "ok").all()

# %% [markdown]
# ## Every search
#
# What each search asked for, what it loaded, which required tools it found first, and what
# it loaded that the task did not need (noise). An empty result while a relevant tool existed
# counts as a miss.

# %%
display(Markdown(log.add(said["searches"])))

# %%
display(Markdown(md.table(
    report.searches[["task_id", "run", "search", "kind", "query", "references", "new_required",
                     "empty_miss"]].rename(columns={
                         "task_id": "task", "search": "#", "references": "returned",
                         "new_required": "required found", "empty_miss": "empty miss"}),
    {"returned": md.list_text, "required found": md.list_text}, max_rows=None,
    link=f"{link}/searches.csv")))

# %% [markdown]
# ## Eager vs deferred, the same tasks side by side
#
# Per task, the eager run against the deferred one: requests, input, uncached input, and the
# diagnosis of each. Eager runs read one large cached prefix; deferred runs pay uncached tokens
# for what their searches load.

# %%
if "compare" in said:
    display(Markdown(log.add(said["compare"])))

# %%
cmp = report.compare
display(Markdown(md.table(pd.DataFrame({
    "task": cmp["task_id"],
    "requests (eager → deferred)": [f"{a} → {b}" for a, b in
                                    zip(cmp["n_requests_eager"], cmp["n_requests_deferred"])],
    "input (eager → deferred)": [f"{a:,} → {b:,}" for a, b in
                                 zip(cmp["input_total_eager"], cmp["input_total_deferred"])],
    "uncached (eager → deferred)": [f"{a:,} → {b:,}" for a, b in
                                    zip(cmp["input_uncached_eager"],
                                        cmp["input_uncached_deferred"])],
    "input change": cmp["input_change"],
    "diagnosis (eager / deferred)": [f"{a} / {b}" for a, b in
                                     zip(cmp["diagnosis_eager"], cmp["diagnosis_deferred"])]}),
    {"input change": "{:+.0%}"}, link=f"{link}/compare.csv")))

# %%
if bundled:
    assert (report.compare["input_change"] < 0).all()
    assert (report.compare["input_uncached_deferred"]
            > report.compare["input_uncached_eager"]).all()

# %% [markdown]
# ## Where the input went
#
# Input tokens per task and run, summed over every request: uncached input, cache writes and
# cache reads. A run that looks cheaper only because more of it was read from cache has not
# saved what deferral promises; keep the three apart when comparing. The tables are in
# `stages.csv`, `tasks.csv`, `searches.csv`, `compare.csv` and `cost.csv` beside this page.

# %%
ax = plot_cost_split(report)
paths += save_figure(ax.figure, out_dir, "cost_split",
                    alt="Input tokens per task and run, split into uncached input, cache "
                        "writes and cache reads")
assert all(Path(p).exists() for p in paths)
