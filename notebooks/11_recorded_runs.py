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
#     needs:
#     - registry
#     - runs
# ---

# %% [markdown]
# # Recorded runs: discovery, selection given discovery, and cost from real transcripts
#
# Offline sweeps say whether the right tools *could* be found. Once a model is in the loop,
# what it actually searched, loaded and called is in the Messages API exchanges an agent
# records. This notebook reads such a recording (`data/runs/`: six labeled tasks, run eager
# with all 61 tools visible, deferred behind the server-side BM25 tool search, and with a
# client-side search returning `tool_reference` blocks) and measures three stages apart:
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

from toolsel import load_registry
from toolsel.report.plots import save_figure, setup_style
from toolsel.eval.runs import evaluate_runs, load_runs, plot_cost_split

setup_style()
pd.set_option("display.max_colwidth", 160)
# the checks of the bundled recording's numbers run only on it
bundled = (Path(runs).resolve() == Path("../data/runs").resolve()
           and Path(registry).resolve() == Path("../data/registry.json").resolve())
reg = load_registry(registry)
runset = load_runs(runs, registry=reg)
report = evaluate_runs(runset)
paths = report.write(out_dir)
print(f"{len(runset)} runs of {len(runset.tasks)} tasks, "
      f"{sum(len(r.exchanges) for r in runset.runs)} requests")

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
print(report.table())

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
stages

# %% [markdown]
# ## A diagnosis per task
#
# *discovery miss*: a required tool never became available (the evidence lists the searches
# and what they returned); *selection miss*: everything needed was loaded, but the model
# called something else or left a required tool uncalled; *ok*.

# %%
report.tasks[["task_id", "run", "required", "visible_required", "discovered_required",
              "undiscovered", "called", "diagnosis", "evidence"]]

# %%
if bundled:
    diag = report.tasks.set_index(["task_id", "run"])["diagnosis"]
    assert diag[("r03", "deferred")] == "discovery miss"
    assert diag[("r02", "deferred")] == "selection miss"
    assert (diag.drop([("r03", "deferred"), ("r02", "deferred")]) == "ok").all()

# %% [markdown]
# ## Every search
#
# (The examples named in this notebook's text are from the bundled recording.) What each
# search asked for, what it loaded, which required tools it found first, and what
# it loaded that the task did not need (noise). The first search of r04 ("divide numbers")
# shares no word with the calculator's definition: an empty result, counted as a miss because
# a relevant tool existed; the model recovered with a second search.

# %%
report.searches[["task_id", "run", "search", "kind", "query", "references", "new_required",
                 "noise", "empty_miss"]]

# %% [markdown]
# ## Eager vs deferred, the same tasks side by side
#
# Deferral cuts the input of every request, but not for free: the eager runs read one large
# cached prefix, the deferred runs pay uncached tokens for what the searches load, and two of
# the three deferred runs end worse (a missed Slack tool, a wrong Jira operation).

# %%
report.compare[["task_id", "n_requests_eager", "n_requests_deferred", "input_total_eager",
                "input_total_deferred", "input_uncached_eager", "input_uncached_deferred",
                "input_change", "diagnosis_eager", "diagnosis_deferred"]]

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
# saved what deferral promises; keep the three apart when comparing.

# %%
ax = plot_cost_split(report)
paths += save_figure(ax.figure, out_dir, "cost_split")

# %%
for p in paths:
    print(p)
