# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Explorer: one query, the whole registry, two scorers side by side
#
# Type a query and see how each scorer ranks every tool, what it would send at your K (plus
# the always-include tools), and what that costs. Each panel has its own scorer, indexed
# fields (none selected: the scorer's defaults), `top_k` and always-include set.
#
# Open this notebook in Jupyter to use the widgets. The static report shows the panels for
# the default query below.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
scorers: list[str] = ["jaccard", "bm25"]  # the two panels' scorers
query: str = "file a bug report on the backend repo"  # the query shown first
top_k: int = 10  # tools sent besides always-include
always_include: list[str] = []  # names sent every turn outside K
expected: str = "github_create_issue"  # a tool to look for in the default query's rankings
out_dir: str = "../reports/04_explorer"  # where tables go

# %%
from pathlib import Path

import pandas as pd
from IPython.display import HTML, display

from toolsel import load_registry
from toolsel.report.explorer import build_explorer
from toolsel.eval.metrics import payload_chars

out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
reg = load_registry(registry)

explorer = build_explorer(reg, scorers, query=query, top_k=top_k,
                          always_include=always_include)
views = explorer.update()
display(explorer.widget)

# %% [markdown]
# ## The default query, as the panels show it

# %%
display(HTML("<div style='display:flex;gap:2em'>"
             + "".join(f"<div style='flex:1'>{v.to_html(max_rows=15)}</div>" for v in views)
             + "</div>"))

# %%
for v in views:
    rank = v.ranking.set_index("tool").loc[expected, "rank"] if expected else None
    print(f"{v.scorer}: {expected} ranks {rank}; sent: {', '.join(v.sent)}")
    v.ranking.to_csv(out / f"ranking_{v.scorer}.csv", index=False, float_format="%.6f",
                     lineterminator="\n")

# %% [markdown]
# ## Checks

# %%
assert len(views) == len(scorers)
for v in views:
    assert len(v.ranking) == len(reg)
    assert len(v.sent) == min(top_k, len(reg) - len(always_include)) + len(always_include)
    assert v.ranking[v.ranking.sent].shape[0] == len(v.sent)
    assert 0 < v.payload_chars < payload_chars(reg)
# changing a widget recomputes the panel
explorer.panels[0]["top_k"].value = 3
assert len(explorer.views[0].sent) == 3 + len(always_include)
if query == "file a bug report on the backend repo" and scorers[:2] == ["jaccard", "bm25"]:
    jac, bm = (v.ranking.set_index("tool") for v in views)
    assert jac.loc["github_create_issue", "rank"] == 14  # the article's miss at K=10
    assert bm.loc["github_create_issue", "rank"] <= top_k  # BM25 sends it
print("all checks passed")
