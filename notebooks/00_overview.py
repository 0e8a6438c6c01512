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
# # Overview: dynamic tool selection, measured
#
# Agent frameworks send every tool definition on every turn. **Dynamic tool selection** scores
# the registry against the latest user turn and sends only the **top-K** tools, plus an
# **always-include** set, with a **`discover`** escape hatch whose hits stay pinned for the
# conversation. The question these reports answer: how many of the right tools survive the
# filter (R@k, Complete@k), for how much less payload, why the rest are missed, and what the
# escape hatch recovers.
#
# This page gives the benchmark, the headline numbers and a map of the other notebooks.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
queries: str = "../data/queries.jsonl"  # labeled queries
scorers: list[str] = ["jaccard", "bm25", "tfidf", "embedding", "default"]  # scorers to compare
top_k: int = 10  # the headline cut-off
always_include: list[str] = []  # names sent every turn outside K (the article: none)
notebooks_dir: str = "."  # where the numbered notebooks are (for the map)
n_boot: int = 2000  # bootstrap resamples
seed: int = 0  # bootstrap seed
out_dir: str = "../reports/00_overview"  # where tables go

# %%
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry, sweep
from toolsel.eval.replication import ARTICLE, benchmark_facts, headline_frame
from toolsel.report import find_notebooks, notebook_title
from toolsel.eval.scenario import article_scenario
from toolsel.eval.stats import bootstrap_intervals

out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
reg = load_registry(registry)
qs = load_queries(queries, reg)
facts = benchmark_facts(reg, qs)

display(Markdown(f"""
## The benchmark

- **{facts['n_tools']} tools** over {facts['n_domains']} domains, modeled on what 4–5 MCP
  servers expose (Slack, GitHub, Linear, Jira, Gmail, Calendar, Drive, Notion, a CRM, web,
  weather, finance...); {facts['n_always_include']} are marked always-include (the
  filesystem/task core). Sending them all costs **{facts['unfiltered_chars']:,} characters**
  of name + description ({facts['unfiltered_tokens']:,} `cl100k_base` tokens); the article's
  registry: {ARTICLE['unfiltered_chars']:,}.
- **{facts['n_queries']} labeled queries** over {facts['n_query_domains']} domains:
  {facts['n_direct']} direct ("send a direct message to alice on slack"),
  {facts['n_indirect']} indirect ("let the team know in the channel that the deploy
  finished"); {facts['n_multi_tool']} need two tools.
"""))

# %% [markdown]
# ## Headline
#
# At the headline cut-off, each scorer's share of required tools sent (R@k) and of queries
# with every required tool sent (Complete@k), with bootstrap 95% intervals over queries; MRR;
# and the payload sent. Always-include: none, as in the article.

# %%
result = sweep(reg, qs, scorers, sorted({top_k, 30}), always_include=always_include,
               progress=False)
intervals = bootstrap_intervals(result.query_metrics, n_boot=n_boot, seed=seed)
headline = headline_frame(result.summary, intervals, top_k=top_k)
headline.to_csv(out / "headline.csv", index=False, float_format="%.6f", lineterminator="\n")


def _ci(r, m):
    return f"{100 * r[m]:.1f}% [{100 * r[m + '_low']:.1f}, {100 * r[m + '_high']:.1f}]"


display(Markdown("\n".join(
    [f"| scorer | R@{top_k} [95% CI] | Complete@{top_k} [95% CI] | MRR | payload chars | "
     "payload reduction |", "| --- | --- | --- | --- | --- | --- |"]
    + [f"| {r.scorer} | {_ci(r, 'R@k')} | {_ci(r, 'Complete@k')} | {r.MRR:.3f} | "
       f"{r.payload_chars:,.0f} | {100 * r.payload_reduction:.1f}% |"
       for _, r in headline.iterrows()])))

# %%
turns = article_scenario(reg)
display(Markdown(
    "**Escape hatch, the article's 3-turn scenario** (K=1, Jaccard): the model sees "
    + ", ".join(str(len(t.sent)) for t in turns) + " tools on the three turns; after its one "
    f"`discover_tools` call the conversation's pins are `{list(turns[-1].pinned)}`."))

# %% [markdown]
# ## The notebooks
#
# Each is executed by `make report` into `reports/` (HTML with the code hidden, figures,
# CSV tables); the links below point at those reports.

# %%
nbs = find_notebooks(notebooks_dir)
display(Markdown("\n".join(f"- **{p.stem[:2]}** [{notebook_title(p)}]({p.stem}.html)"
                           for p in nbs)))

# %% [markdown]
# ## Checks

# %%
assert facts["n_tools"] == 61 and facts["n_queries"] == 30
assert facts["unfiltered_chars"] == 5529
assert [len(t.sent) for t in turns] == [2, 2, 3] and list(turns[-1].pinned) == ["calculator"]
assert len(headline) == len(scorers)
assert ((headline["R@k_low"] <= headline["R@k"]) & (headline["R@k"] <= headline["R@k_high"])).all()
assert any(p.name.startswith("00_") for p in nbs)
print("all checks passed")
