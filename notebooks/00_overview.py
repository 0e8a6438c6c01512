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
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   toolsel:
#     needs:
#     - registry
#     - queries
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
top_k: list[int] = [10, 30]  # cut-offs swept; the headline: 10, else the largest that filters
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
from toolsel.eval.replication import ARTICLE, benchmark_facts, headline_frame, is_article_benchmark
from toolsel.eval.scenario import ARTICLE_TOOLS, article_scenario, scenario_tools_present
from toolsel.eval.stats import bootstrap_intervals
from toolsel.report import find_notebooks, notebook_title
from toolsel.report import markdown as md
from toolsel.report.html import escape_md, md_code
from toolsel.report.cutoffs import distinct_top_k, headline_k, top_k_note

out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
reg = load_registry(registry)
qs = load_queries(queries, reg)
facts = benchmark_facts(reg, qs)
article = is_article_benchmark(reg, qs)  # the bundled data: article-specific text and checks

if article:
    registry_line = (
        f"- **{facts['n_tools']} tools** over {facts['n_domains']} domains, modeled on what 4–5 "
        "MCP servers expose (Slack, GitHub, Linear, Jira, Gmail, Calendar, Drive, Notion, a "
        f"CRM, web, weather, finance...); {facts['n_always_include']} are marked "
        "always-include (the filesystem/task core).")
    query_examples = (' ("send a direct message to alice on slack")',
                      ' ("let the team know in the channel that the deploy finished")')
else:
    registry_line = (f"- **{facts['n_tools']} tools** over {facts['n_domains']} domains; "
                     f"{facts['n_always_include']} marked always-include.")
    query_examples = ("", "")
unlabeled = facts["n_queries"] - facts["n_direct"] - facts["n_indirect"]
display(Markdown(f"""
## The benchmark

{registry_line} Sending them all costs **{facts['unfiltered_chars']:,} characters** of name +
  description ({facts['unfiltered_tokens']:,} `cl100k_base` tokens)"""
    + (f"; the article's registry: {ARTICLE['unfiltered_chars']:,}." if article else ".") + f"""
- **{facts['n_queries']} labeled queries** over {facts['n_query_domains']} domains:
  {facts['n_direct']} direct{query_examples[0]}, {facts['n_indirect']} indirect{query_examples[1]}"""
    + (f" ({unlabeled} without a phrasing label)" if unlabeled else "")
    + f"; {facts['n_multi_tool']} need several tools."))

# %% [markdown]
# ## Headline
#
# At the headline cut-off, each scorer's share of required tools sent (R@k) and of queries
# with every required tool sent (Complete@k), with bootstrap 95% intervals over queries; MRR;
# and the payload sent.

# %%
n_candidates = len(reg) - len(set(always_include))
ks, dropped = distinct_top_k(top_k, n_candidates)
k = headline_k(ks, n_candidates)
result = sweep(reg, qs, scorers, ks, always_include=always_include, progress=False)
intervals = bootstrap_intervals(result.query_metrics, n_boot=n_boot, seed=seed)
headline = headline_frame(result.summary, intervals, top_k=k)
headline.to_csv(out / "headline.csv", index=False, float_format="%.6f", lineterminator="\n")


def _ci(r, m):
    return f"{100 * r[m]:.1f}% [{100 * r[m + '_low']:.1f}, {100 * r[m + '_high']:.1f}]"


table = pd.DataFrame({
    "scorer": headline["scorer"],
    f"R@{k} [95% CI]": [_ci(r, "R@k") for _, r in headline.iterrows()],
    f"Complete@{k} [95% CI]": [_ci(r, "Complete@k") for _, r in headline.iterrows()],
    "MRR": [f"{v:.3f}" for v in headline["MRR"]],
    "payload chars": [f"{v:,.0f}" for v in headline["payload_chars"]],
    "payload reduction": [f"{100 * v:.1f}%" for v in headline["payload_reduction"]]})
note = top_k_note(ks, dropped, n_candidates)
display(Markdown(md.table(table, max_rows=None, align={c: "right" for c in table.columns[1:]})
                 + f"\n\n{len(qs)} queries; as CSV: "
                 f"[headline.csv]({out.name}/headline.csv)."
                 + (f"\n\n*{escape_md(note)}*" if note else "")))

# %%
if scenario_tools_present(reg):
    turns = article_scenario(reg)
    display(Markdown(
        "**Escape hatch, the article's 3-turn scenario** (K=1, Jaccard): the model sees "
        + ", ".join(str(len(t.sent)) for t in turns) + " tools on the three turns; after its "
        "one `discover_tools` call the conversation's pins are "
        + ", ".join(md_code(p) for p in turns[-1].pinned) + "."))
else:
    turns = None
    display(Markdown("*The article's 3-turn escape-hatch scenario is skipped: it needs the "
                     "tools " + ", ".join(md_code(n) for n in ARTICLE_TOOLS)
                     + ", which this registry does not have.*"))

# %% [markdown]
# ## The notebooks
#
# Each is executed by `make report` (or `toolsel report --registry ...` on your data) into
# the report folder (HTML with the code hidden, figures, CSV tables); the index links each
# page with its executed notebook and tables, beside the headline figures.

# %%
nbs = find_notebooks(notebooks_dir)
# titles only: which pages exist depends on the run (a report on other data skips some);
# the index links every page this run wrote
display(Markdown("\n".join(f"- **{p.stem[:2]}** {notebook_title(p)}" for p in nbs)
                 + "\n\nThe pages of this report: [the index](index.html)."))

# %%
# checks (they stop the report when a number is off; nothing is shown)
assert len(headline) == len(scorers)
assert ((headline["R@k_low"] <= headline["R@k"]) & (headline["R@k"] <= headline["R@k_high"])).all()
assert ((headline["payload_reduction"] >= 0) & (headline["payload_reduction"] <= 1)).all()
assert (headline["Complete@k"] <= headline["R@k"] + 1e-12).all()
assert any(p.name.startswith("00_") for p in nbs)
if turns is not None:
    assert [len(t.sent) for t in turns] == [2, 2, 3] and list(turns[-1].pinned) == ["calculator"]
if article:  # the bundled data's own numbers
    assert facts["n_tools"] == 61 and facts["n_queries"] == 30
    assert facts["unfiltered_chars"] == 5529
