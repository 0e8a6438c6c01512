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
#     cost: 75
#     needs:
#     - registry
#     - requests
# ---

# %% [markdown]
# # Discovery on real workflows: multi-tool requests, recall vs loaded noise
#
# Labeled queries written one per tool mostly need one tool each. Real requests often need
# several ("find the bug Alice filed in Linear and post it in the backend channel"), use words
# far from the tools' vocabulary, ask for rare operations, or sit between neighbouring domains
# (issue trackers, mail vs chat, documents vs wikis, calendar vs CRM meetings). This page reads
# a request file holding such requests, each with an optional `category` and `split` (how many
# this run evaluates is counted below; which part of a split file it reports is said below).
#
# Two measurements, evaluated separately as discovery should be:
#
# - **multi-tool recall**: per request, `R@k` (share of its required tools sent) next to
#   `Complete@k` (every required tool sent). Required tools that are always-include (the
#   filesystem core) are visible anyway: they are counted apart (`n_always_required`) and never
#   inflate the filtered recall.
# - **recall vs loaded noise**: a `discover`/search call that returns the top *n* (1..10)
#   deferred tools that match the request under the scorer's no-match rule (term overlap for
#   the lexical scorers, a calibrated cosine for embeddings): required tools found against
#   irrelevant definitions loaded into the context.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
requests: str = "../data/requests.jsonl"  # labeled requests with category and split
scorers: list[str] = []  # scorers to compare; empty: the registry's compared scorers
top_k: list[int] = [1, 3, 5, 10]  # filter cut-offs
limits: list[int] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]  # discover/search result limits
split: str = "test"  # the split the report shows
out_dir: str = "../reports/07_discovery"  # where tables and figures go

# %%
import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.io import write_table
from toolsel.pages.discovery import FILES, discovery_sentences, discovery_tables, split_note
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.report.notebook_setup import setup
from toolsel.report.plan import same_path
from toolsel.report.plots import plot_multi_tool, plot_noise_curve, save_figure
from toolsel.scorers.base import compared_scorers

# the scorers every comparison runs unless told otherwise, from the registry of scorer names
scorers = list(scorers or compared_scorers())
out = setup(out_dir)
log = claims.ClaimLog(out)

reg = load_registry(registry)
all_requests = load_queries(requests, reg)
bundled = (same_path(registry, "../data/registry.json")
           and same_path(requests, "../data/requests.jsonl"))
tables = discovery_tables(reg, all_requests, scorers, top_k, limits, split)
for name, table in tables.items():
    write_table(table, out / FILES[name])
said = discovery_sentences(tables)
if bundled:
    assert tables.follows_rule, "split is not the rule"
    display(Markdown(log.fixed(
        "The bundled `data/requests.jsonl` holds such requests, each with a `category` and a "
        "`split`. **Dev and test.** The split is a fixed rule decided before any scoring "
        "(within each category, alternate dev, test, dev, ... in file order; "
        "`toolsel.datasets.assign_splits`). Scorer settings and description repairs "
        "(notebook 09) are chosen on `dev`. **Every number in this report is on the `"
        + tables.split + "` split** unless a table says otherwise.",
        "the bundled requests' split rule (data/README.md)")))
else:
    display(Markdown(split_note(tables)))
if "capped" in said:
    display(Markdown(log.add(said["capped"])))
display(Markdown(log.add(said["data"]) + "\n\n"
                 + md.table(tables.composition.set_index("category").fillna(0).astype(int),
                            index=True, link=f"{out.name}/{FILES['composition']}")))

# %% [markdown]
# ## Multi-tool requests: R@k and Complete@k side by side
#
# `R@k` gives partial credit (2 of 3 tools found = 0.67); `Complete@k` asks whether the
# request can be served at all without a discover call. For a single-tool request the two are
# equal; the gap between them is what multi-tool requests add. `n_required` counts the
# *filtered* required tools (always-include ones removed); a request needing only
# always-include tools has no filtered metric and is counted in `n_always_only`.

# %%
k, per_request, by_n = tables.k, tables.per_request, tables.by_n_required
for metric in ("R@k", "Complete@k"):
    display(Markdown(f"**{metric.replace('@k', f'@{k}')} by number of filtered required tools** "
                     "(mean over requests [95% interval: bootstrap for R@k, Wilson for Complete@k]; n = requests):\n\n"
                     + md.table(md.interval_table(tables.ci_n_required, "n_required", metric, k,
                                                  "required tools"),
                                link=f"{out.name}/{FILES['by_n_required']}")))

# %%
text = log.add(said["multi"])
if tables.multi_tool is not None:
    complete_multi = tables.multi_tool[tables.multi_tool.top_k == k].set_index("scorer")
    rows = []
    for s_, g in tables.ci_multi.groupby("scorer", sort=False):
        g = g.set_index("metric")
        rows.append({"scorer": s_, "requests": int(g.loc["R@k", "n_queries"]),
                     f"R@{k}": md.interval(*g.loc["R@k", ["mean", "low", "high"]]),
                     f"Complete@{k}": md.interval(*g.loc["Complete@k", ["mean", "low", "high"]]),
                     "gap (points)": 100 * complete_multi.loc[s_, "gap"]})
    text += "\n\n" + md.table(pd.DataFrame(rows), {"gap (points)": "{:.1f}"},
                               link=f"{out.name}/{FILES['multi_tool']}")
display(Markdown(text))

# %%
# Complete@k can never exceed R@k, and they coincide on single-tool requests
assert (per_request["Complete@k"].fillna(0) <= per_request["R@k"].fillna(0)).all()
single = per_request[per_request.n_required == 1]
assert (single["R@k"] == single["Complete@k"]).all()
# always-include required tools never enter the filtered metrics
assert (per_request.n_required + per_request.n_always_required == per_request.n_expected).all()
# recall never falls as K grows
for _, g in by_n.groupby(["scorer", "n_required"]):
    assert g.sort_values("top_k")["R@k"].dropna().is_monotonic_increasing
if bundled:  # on the bundled requests, several tools are harder to get all at once than one
    assert (by_n[(by_n.top_k == k) & (by_n.n_required >= 2)]["gap"] > 0).all()

# %%
ci_cat = tables.ci_category
fig = plot_multi_tool(tables.by_category, by="category", top_k=k,
                      intervals=ci_cat[ci_cat.top_k == k])
_ = save_figure(fig, out, "multi_tool_by_category",
                alt=f"R@{k} (light) and Complete@{k} (dark) per request category and scorer, "
                    "each with its 95% interval")

# %%
display(Markdown(f"**Complete@{k} by category** (mean [Wilson 95% interval]; n = requests). "
                 + log.add(said["smallest"]) + "\n\n"
                 + md.table(md.interval_table(ci_cat, "category", "Complete@k", k, "category"),
                            link=f"{out.name}/{FILES['by_category']}")))

# %% [markdown]
# Reading the figure: the light bar is `R@k`, the dark bar inside it `Complete@k`; the gap
# between them is what requests needing several tools add. Each carries its 95% interval
# (grey on the light part, black on the dark bar).

# %%
display(Markdown(log.add(said["categories"])))

# %% [markdown]
# ## Recall vs loaded noise
#
# A discover/search call returns up to *n* tools (Anthropic's tool search returns 5 by
# default). The larger *n*, the more required tools it finds, and the more irrelevant
# definitions it loads into the context for the rest of the conversation. Here the search
# runs over the deferred tools (always-include ones are loaded anyway) with the request text;
# two more searches use a short search term instead of the whole request:
#
# - **content words**, derived without labels: the request's tokens minus stop words
#   (`toolsel.text.tokenize`, `toolsel.text.STOP_WORDS`), what a model that just drops filler
#   words would send;
# - the labeler's **`search_term`** (when the requests carry one): written by the person who
#   also wrote the answer, so it is close to an oracle: read it as an **upper bound** on what
#   a model's own search term finds, not as what a model will do.

# %%
noise, noise_words, noise_terms = tables.noise, tables.noise_words, tables.noise_terms
if noise_terms is None:
    display(Markdown("No request has a `search_term`: the search-term table is skipped."))
fig = plot_noise_curve(noise)
_ = save_figure(fig, out, "recall_vs_noise",
                alt="Share of required tools found (R@n) against irrelevant definitions "
                    "loaded, one line per scorer with its 95% interval as a band, each point "
                    "a result limit n")

# %%
shown_limits = [n for n in limits if n in (1, 3, 5, 10)] or list(limits)
n_by_scorer = {"rows": "limit", "columns": "scorer", "rows_label": "n"}  # md.wide_table
shown = noise[noise.limit.isin(shown_limits)]
display(Markdown(
    log.add(said["noise_n"]) + f"[noise.csv]({out.name}/noise.csv) has every n):\n\n"
    "**R@n**, share of required tools found:\n\n"
    + md.wide_table(shown, "R@n", fmt="{:.1%}", **n_by_scorer)
    + "\n\n**Irrelevant definitions loaded** per request (mean count):\n\n"
    + md.wide_table(shown, "irrelevant", fmt="{:.1f}", **n_by_scorer)
    + "\n\n**Irrelevant tokens loaded** per request (mean):\n\n"
    + md.wide_table(shown, "irrelevant_tokens", fmt="{:,.0f}", **n_by_scorer)))

# %%
text = ("**R@n with a short search term.** Content words of the request, derived without "
        f"labels ([noise_content_words.csv]({out.name}/noise_content_words.csv)):\n\n"
        + md.wide_table(noise_words[noise_words.limit.isin(shown_limits)], "R@n",
                        fmt="{:.1%}", **n_by_scorer))
if noise_terms is not None:
    text += ("\n\nThe labeler's `search_term`, an **upper bound** (written by whoever wrote the "
             f"answer; [noise_search_term.csv]({out.name}/noise_search_term.csv)):\n\n"
             + md.wide_table(noise_terms[noise_terms.limit.isin(shown_limits)], "R@n",
                             fmt="{:.1%}", **n_by_scorer))
display(Markdown(text))

# %%
for s, g in noise.groupby("scorer"):
    g = g.sort_values("limit")
    assert g["found"].is_monotonic_increasing and g["irrelevant"].is_monotonic_increasing
    assert (g["loaded"] <= g["limit"]).all()
display(Markdown(log.add(said["at_n"])))

# %%
display(Markdown(log.add(said["reading"])))
