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
# # Misses by failure mode: what was sent instead, and why
#
# Every required tool that did not survive the filter at one cut-off K, listed with the query,
# the expected tool, what was sent instead and the expected tool's rank,
# then classified automatically (`toolsel.tables.failure_modes`):
#
# - **same-domain confusion**: a sibling from the expected tool's domain was sent, and the
#   query shares a content word with the expected tool: right neighbourhood, wrong neighbour;
# - **short generic query**: two content words or fewer (numbers not counted), at most one
#   shared with the tool;
# - **vocabulary gap**: a longer query sharing at most one content word with the tool;
# - **other**: the words overlap, yet other tools score higher.
#
# For each miss, the query words missing from the tool's text are a hint for repairing its
# description (notebook 09 measures such repairs).

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
queries: str = "../data/queries.jsonl"  # labeled queries
scorers: list[str] = []  # scorers to compare; empty: the registry's compared scorers
top_k: list[int] = [10]  # misses are listed at 10 if given, else at the largest K that filters
always_include: list[str] = []  # names sent every turn outside K (default: none)
out_dir: str = "../reports/02_misses"  # where tables and figures go

# %%

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.pages import misses as page
from toolsel.tables.failure_modes import MODES
from toolsel.tables.replication import ARTICLE_MISSES, is_article_benchmark
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.report.html import md_table
from toolsel.report.plots import plot_failure_modes, save_figure
from toolsel.io import write_table
from toolsel.report.notebook_setup import setup

from toolsel.scorers.base import compared_scorers

# the scorers every comparison runs unless told otherwise, from the registry of scorer names
scorers = list(scorers or compared_scorers())
out = setup(out_dir, precision=None, max_colwidth=120)

reg = load_registry(registry)
qs = load_queries(queries, reg)
article = is_article_benchmark(reg, qs)  # the bundled data: the article's misses and checks
# every table of the page (the scorers at one cut-off, each miss classified), then every
# sentence read from them
tables = page.miss_tables(reg, qs, scorers, top_k, always_include=always_include)
for name, frame in tables.items():
    write_table(frame, out / page.FILES[name], float_format=None, index=name in page.INDEXED)
said = page.miss_sentences(tables)
classified, counts, k = tables.misses, tables.counts, tables.k
log = claims.ClaimLog(out)
display(Markdown(log.summary(said["run"], said["queries"])
                 + f" Every miss is in [misses.csv]({out.name}/misses.csv)."))

# %% [markdown]
# ## Every miss of one scorer
#
# On the bundled benchmark, Jaccard's (the scorer the page replicates); on any other data,
# `default`'s (the recommended scorer) when it runs, else the first scorer listed.
#
# `sent instead` lists the K tools sent, best first; a sibling of the expected tool is in
# **bold**.

# %%
first = ("jaccard" if article and "jaccard" in scorers else
         "default" if not article and "default" in scorers else scorers[0])
rows = classified[classified.scorer == first]
table = pd.DataFrame({"query": rows["query"], "expected": rows["expected"],
                      "rank": rows["rank"],
                      "sent instead (best first)": [md.name_list(r.sent_instead,
                                                                 bold=r.siblings_sent)
                                                    for r in rows.itertuples()],
                      "failure mode": rows["mode"]})
display(Markdown(f"**{md.escape(first)}** at K={k}:\n\n"
                 + (md_table(table, code=["expected"], raw=["sent instead (best first)"])
                    if len(rows) else "no misses.")))

# %%
show_article = article and first == "jaccard" and k == 10
article_rows = {}
if show_article:
    display(Markdown(log.fixed(
        "### The article's three misses\n\nThe article lists three Jaccard misses at K=10; "
        "here they are as this run ranks them.", "the article's misses (BRIEF.md)")))
    by_text = rows.assign(text=rows["query"].str.strip().str.lower())
    listed = []
    for text, wanted, sibling in ARTICLE_MISSES:
        r = by_text[(by_text.text == text) & (by_text.expected == wanted)].iloc[0]
        article_rows[text] = r
        listed.append({"query": r.query, "wanted": wanted, "rank": int(r["rank"]),
                       "failure mode": r["mode"], "sibling sent": sibling or "",
                       "first 5 sent (best first)": ", ".join(r.sent_instead.split(";")[:5])})
    display(Markdown(md.table(pd.DataFrame(listed), code=["wanted"])))
    display(Markdown("They reproduce here: the required tool is not sent"
                     + (", and for the first two a sibling is." if all(
                         sib in article_rows[text]["sent_instead"].split(";")
                         for text, _, sib in ARTICLE_MISSES[:2]) else ".")))
    display(Markdown(log.fixed(
        "The third one differs in detail: the article's run sent file and Slack tools for "
        "\"what's 340 divided by 12\"; ours sends tools whose descriptions share the query's "
        "function words (\"by\", \"s\"). Either way the calculator shares no content word "
        "with the query and ranks last.", "the bundled data, checked by the asserts below")))
else:
    display(Markdown(log.skip(
        "the bundled benchmark's three listed misses", "they are Jaccard misses at K=10 on "
        "the bundled 61-tool benchmark, " + ("and Jaccard first at K=10 is not this run" if article
                         else "which this data is not"))))

# %% [markdown]
# ## Failure modes per scorer

# %%
fig = plot_failure_modes(counts, top_k=k)
save_figure(fig, out, "failure_modes",
            alt=f"Misses at K={k} per scorer, grouped bars by failure mode (counts of required tools)");
display(Markdown(f"Misses at K={k} per scorer and failure mode (counts of required tools):\n\n"
                 + md.table(counts, index=True, link=f"{out.name}/mode_counts.csv")))

# %% [markdown]
# What to expect from the scorers' design (the counts above say what happened on this data):
# BM25 and TF-IDF down-weight words many tools share and ignore function words, which is
# what same-domain confusions turn on; a short generic query or a vocabulary gap leaves a
# lexical scorer no word to match; the embedding scorer matches meaning rather than words.

# %%
display(Markdown(log.add(said["modes"])))

# %% [markdown]
# ## Every miss, every scorer
#
# One table per scorer (at most 15 rows each; every row in the CSV).

# %%
every = classified.assign(missing=classified["missing_terms"].fillna("").str.replace(" ", ", "))
parts = []
for name in scorers:
    mine = every[every.scorer == name]
    n_text = log.add(said["per_scorer"][name])
    parts.append(f"**{md.escape(name)}** {n_text}"
                 + (":\n\n" + md.table(
                     mine[["query", "expected", "rank", "mode", "missing"]].rename(
                         columns={"expected": "required tool", "rank": "its rank",
                                  "mode": "failure mode",
                                  "missing": "query words missing from the tool"}),
                     code=["required tool"], link=f"{out.name}/misses.csv")
                    if len(mine) else "."))
display(Markdown("\n\n".join(parts)))

# %% [markdown]
# ## Repair hints
#
# Per tool, the query words its text lacks, counted over every scorer's misses: candidates to
# add to the description (synonyms users actually type), after checking they do not pull the
# tool into other queries.

# %%
hints = tables.hints
display(Markdown(md.table(
    hints[["expected", "misses", "query_ids", "scorers", "missing_terms"]].rename(columns={
        "expected": "tool", "misses": "misses (all scorers)", "query_ids": "queries",
        "missing_terms": "query words it lacks (misses)"}),
    code=["tool"], link=f"{out.name}/repair_hints.csv")))

# %%
# checks (they stop the report when a number is off; nothing is shown)
assert set(classified["mode"]) <= set(MODES)
assert (counts["total"] == classified.groupby("scorer").size().reindex(scorers,
                                                                        fill_value=0)).all()
assert (classified["rank"] > k).all()  # a miss ranks beyond the cut-off
if show_article:  # the bundled data's own numbers
    bug, jira, calc = (article_rows[text] for text, _, _ in ARTICLE_MISSES)
    assert bug["mode"] == "same-domain confusion"
    assert "github_create_pr" in bug["sent_instead"].split(";")
    assert jira["mode"] == "same-domain confusion"
    assert "jira_create_issue" in jira["sent_instead"].split(";")
    assert calc["mode"] == "short generic query"
    assert calc["rank"] == 61  # no shared token: score 0, last in registry order
    assert counts.loc["jaccard", "total"] == 16
