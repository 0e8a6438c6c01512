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
#     cost: 7
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
scorers: list[str] = []  # scorers to compare; empty: the registry's compared scorers
top_k: list[int] = [10, 30]  # cut-offs swept; the headline: 10, else the largest that filters
always_include: list[str] = []  # names sent every turn outside K (default: none)
notebooks_dir: str = "."  # where the numbered notebooks are (for the map)
pages: list[str] = []  # the pages of this report (set by `toolsel report`); empty: every notebook
n_boot: int = 2000  # bootstrap resamples
seed: int = 0  # bootstrap seed
out_dir: str = "../reports/00_overview"  # where tables go

# %%

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.pages import overview as page
from toolsel.tables.replication import ARTICLE, benchmark_facts, is_article_benchmark
from toolsel.report import claims, find_notebooks, notebook_title
from toolsel.report import markdown as md
from toolsel.report.cutoffs import top_k_note
from toolsel.io import FLOAT_FORMAT, write_table
from toolsel.report.notebook_setup import setup

from toolsel.scorers.base import compared_scorers

# the scorers every comparison runs unless told otherwise, from the registry of scorer names
scorers = list(scorers or compared_scorers())
out = setup(out_dir, figures=False, precision=None)
reg = load_registry(registry)
qs = load_queries(queries, reg)
facts = benchmark_facts(reg, qs)
article = is_article_benchmark(reg, qs)  # the bundled data: article-specific text and checks
log = claims.ClaimLog(out)
# every table of the page (a sweep of the scorers, and `default` as the single-scorer check's
# reference), then every sentence read from them
tables = page.overview_tables(reg, qs, scorers, top_k, always_include=always_include,
                              n_boot=n_boot, seed=seed)
for name, frame in tables.items():
    write_table(frame, out / page.FILES[name],
                float_format=None if name in page.EXACT else FLOAT_FORMAT)
said = page.overview_sentences(tables)
headline, k = tables.headline, tables.k

registry_line = log.add(said["registry"])
if article:
    registry_line += " " + log.fixed(
        "Modeled on what 4–5 MCP servers expose (Slack, GitHub, Linear, Jira, Gmail, "
        "Calendar, Drive, Notion, a CRM, web, weather, finance...); the always-include ones "
        "are the filesystem/task core.", "the article's benchmark (BRIEF.md)")
payload = log.add(said["payload"])
if article:
    payload += " " + log.fixed(f"The article's registry: {ARTICLE['unfiltered_chars']:,}.",
                               "the article (toolsel.tables.replication.ARTICLE)")
display(Markdown("**This run:** " + log.summary(said["run"])))
display(Markdown("## The benchmark\n\n- " + registry_line + " " + payload + "\n- "
                 + log.add(said["benchmark"])
                 + (' Direct: "send a direct message to alice on slack"; indirect: "let the '
                    'team know in the channel that the deploy finished".' if article else "")))

# %% [markdown]
# ## Headline
#
# At the headline cut-off, each scorer's share of required tools sent (R@k) and of queries
# with every required tool sent (Complete@k), with 95% intervals by the suite's one rule
# (`toolsel.eval.inference`: Wilson's for a 0/1 rate, so Complete@k and any R@k where every
# query scored 0 or 1; a bootstrap over queries for any other mean); MRR; NDCG@k (the rank-discounted
# gain of the required tools in the top k, graded where the labels carry grades); and the payload
# sent.

# %%
table = pd.DataFrame({
    "scorer": headline["scorer"],
    f"R@{k} [95% CI]": [md.interval_row(r, "R@k", digits=1) for _, r in headline.iterrows()],
    f"Complete@{k} [95% CI]": [md.interval_row(r, "Complete@k", digits=1)
                               for _, r in headline.iterrows()],
    "MRR": [f"{v:.3f}" for v in headline["MRR"]],
    f"NDCG@{k}": [f"{v:.3f}" for v in headline["NDCG@k"]],
    "payload chars": [f"{v:,.0f}" for v in headline["payload_chars"]],
    "payload reduction (characters)": [f"{100 * v:.1f}%" for v in headline["payload_reduction"]]})
note = top_k_note(tables.ks, tables.dropped, tables.n_candidates)
display(Markdown(md.table(table, max_rows=None, align={c: "right" for c in table.columns[1:]})
                 + "\n\n" + log.add(said["n_queries"])
                 + f" As CSV: [headline.csv]({out.name}/headline.csv)."
                 + (f"\n\n*{md.escape(note)}*" if note else "")))
# "highest" only where the paired interval of the top two's difference excludes zero
display(Markdown(log.add(said["leader"]) + " " + log.add(said["one_request"])))

# %% [markdown]
# ## Is a single scorer far below `default` on these queries?
#
# A single scorer fails in known ways (term matching misses paraphrase; one embedding vector
# blurs a request needing several tools), and which way depends on the registry. Here every
# scorer is compared with `default` on the same labeled queries
# (`toolsel.eval.scorer_warning`): the gap in R@5 and Complete@10 (`default` minus the
# scorer), its paired bootstrap interval and how many queries each does better on, by the
# suite's one rule (`toolsel.eval.inference`: every pair of scorers at a cut-off is one family,
# each interval at a Bonferroni-adjusted level so the family holds 95%; `default` is *ahead*
# only where the interval lies above zero). A scorer is **far below** when some gap is at
# least the stated margin and `default` is ahead on it: then the page warns. `default` is run for this comparison even
# when `scorers` leaves it out. `Selector` users get the same check from
# `scorer_warning(selector, queries)`.

# %%
gaps = tables.gaps
if gaps is not None:
    gshown = page.gaps_shown(gaps)
    display(Markdown(md.table(gshown, link=f"{out.name}/scorer_gaps.csv", max_rows=None,
                              align={c: "right" for c in gshown.columns
                                     if c not in page.GAP_TEXT})
                     + "\n\n" + log.add(said["gaps"])))
    if "card" in said:  # the index card and the report's README say it too
        log.summary(said["run"], said["card"])
        log.warn(said["card"])
else:
    display(Markdown(f"*Skipped: {page.gap_skip_reason(tables, scorers)}*"))

# %%
if tables.scenario is not None:
    display(Markdown(
        log.fixed("**Escape hatch, the article's 3-turn scenario** (K=1, Jaccard):",
                  "the article's scenario (BRIEF.md)") + " the model sees "
        + log.add(said["scenario"]) + "; after its "
        "one `discover_tools` call the conversation's pins are "
        + ", ".join(md.code(p) for p in tables.pinned) + "."))
else:
    display(Markdown(log.skip("the bundled benchmark's 3-turn escape-hatch scenario",
                              page.scenario_skip_reason(reg))))

# %% [markdown]
# ## The notebooks
#
# Each is executed by `make report` (or `toolsel report --registry ...` on your data) into
# the report folder (HTML with the code hidden, figures, CSV tables); the index links each
# page with its executed notebook and tables, beside the headline figures.

# %%
nbs = [p for p in find_notebooks(notebooks_dir) if not pages or p.stem in pages]
# titles only: the pages of this report (a report on other data skips some, and `toolsel
# report` passes the ones it runs); the index links every page this run wrote
display(Markdown(md.table(pd.DataFrame({"notebook": [p.stem[:2] for p in nbs],
                                         "title": [notebook_title(p) for p in nbs]}),
                          max_rows=None, raw=["title"])
                 + "\n\nThe pages of this report: [the index](index.html)."))

# %%
# checks (they stop the report when a number is off; nothing is shown)
assert len(headline) == len(scorers)
assert ((headline["R@k_low"] <= headline["R@k"]) & (headline["R@k"] <= headline["R@k_high"])).all()
assert ((headline["payload_reduction"] >= 0) & (headline["payload_reduction"] <= 1)).all()
assert (headline["Complete@k"] <= headline["R@k"] + 1e-12).all()
assert any(p.name.startswith("00_") for p in nbs)
if gaps is not None:  # the table's rule, row by row, and its means are the sweep's
    far = (gaps["gap"] >= gaps["margin"] - 1e-12) & (gaps["gap_low"] > 0)
    assert (far == gaps["far"]).all()
    assert ((gaps["gap_low"] <= gaps["gap"] + 1e-12) & (gaps["gap"] <= gaps["gap_high"] + 1e-12)).all()
    r5 = tables.summary.set_index(["scorer", "top_k"])["R@k"]
    for r in gaps[gaps["metric"] == "R@5"].itertuples():
        assert abs(r.mean_scorer - r5[(r.scorer, 5)]) < 1e-9
if tables.scenario is not None:
    assert list(tables.scenario["n_tools_seen"]) == [2, 2, 3]
    assert list(tables.pinned) == ["calculator"]
if article:  # the bundled data's own numbers
    assert facts["n_tools"] == 61 and facts["n_queries"] == 30
    assert facts["unfiltered_chars"] == 5529
