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
#     cost: 190
#     needs:
#     - registry
#     - queries
# ---

# %% [markdown]
# # What your labels buy: selection that learns from the labeled requests
#
# Labeled requests usually only grade a selector. Here they also teach it
# (`toolsel.learn.LearnedScorer`, what `toolsel fit` writes), on top of a blind scorer, in one
# of three ways:
#
# | method | how the labels move a tool |
# | --- | --- |
# | `knn` | a labeled tool is lifted by the cosine to the nearest of its labeled requests |
# | `tool2vec` | every tool is lifted by the cosine to its usage vector: its labeled requests' mean mixed with its description, or its description alone when it has no label |
# | `ltr` | every tool of every request is scored by one logistic model over the blind score, the blind rank, the usage cosine, whether the tool has a label, how far the request is from every labeled request, and the description cosine; trained on out-of-fold features, with a share of the tools' labels hidden so relevant tools without a label are seen; the label term may never be positive |
#
# Each may also be **interleaved** with the blind ranking (the learned first, the blind first,
# the learned second, ...), so a tool the blind scorer ranked at `r` lands at `2r` at worst.
# Which method, weight and interleaving a registry gets is chosen by the selection rule below,
# by inner cross-validation on the labeled requests the model is fit on; each held-out request
# is scored once with its fold's labels and once with a share of the tools left unlabeled, and
# a candidate that loses more than 0.01 R@5 against blind on the requests none of whose tools
# had a label is not eligible.
#
# **Honest numbers.** Every figure on this page is **cross-fitted**: the labeled requests are
# split into folds, keeping near-duplicates (same normalized text, or token overlap of 0.8 or
# more) and the turns of one conversation in one fold; each request is scored by a model fit
# on the other folds only, which also chose its method on those folds alone. Blind and learned
# are compared on the same requests: paired bootstrap intervals that resample whole groups of
# requests, by the suite's one rule (`toolsel.eval.inference`): the scorers compared on one
# metric are one family, each interval at the Bonferroni level that keeps the family at 95%.
# "The labels help" is said only when that interval lies above zero, "the labels hurt" when
# it lies below, a tie otherwise.
#
# By default this page runs on the bundled workspace registry and its labeled requests; given a
# `registry` and its `queries`, on those.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
queries: str = "../data/requests.jsonl"  # labeled requests to learn from and evaluate on
scorers: list[str] = ["default", "bm25", "embedding"]  # blind scorers compared
curve_scorer: str = "default"  # the scorer of the learning curve and the per-tool tables
model: str = ""  # a model file written by toolsel fit; empty for none
n_boot: int = 2000  # bootstrap resamples
seed: int = 0  # bootstrap seed
out_dir: str = "../reports/13_labels"  # where tables go

# %%
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.io import write_table
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.pages.labels import (DEV_RULE, FILES, MODEL_FILE, label_sentences, label_tables,
                                   model_sentence, model_table, skip_reason)
from toolsel.report.notebook_setup import setup

out = setup(out_dir, figures=False)
log = claims.ClaimLog(out)

reg = load_registry(registry)
labeled = load_queries(queries, reg)
skip = skip_reason(labeled)
tables = None
if skip:
    display(Markdown(log.summary(claims.literal(
        "Nothing to cross-fit on this registry: {why}.", why=skip))))
else:
    tables = label_tables(reg, labeled, scorers, curve_scorer=curve_scorer, n_boot=n_boot,
                          seed=seed)
    for name, table in tables.items():
        write_table(table, out / FILES[name])
    sentences = label_sentences(tables)
    display(Markdown(log.add(sentences[0])))

# %% [markdown]
# ## Blind vs learned, per scorer
#
# `blind` and `learned` are means over the labeled requests (each scored by the model of its
# fold); `diff` is learned − blind with its paired bootstrap interval (whole groups of
# requests resampled; at the family's level, `family` comparisons per metric); `won` / `lost` count the requests where the learned model is better /
# worse. The second table splits the same requests by coverage: whether all, some or none of
# a request's tools had a labeled request in its fold's training.

# %%
if tables is not None:
    shown = [log.add(s) for s in sentences[1:1 + len(scorers)]]
    log.summary(sentences[1])
    display(Markdown("\n\n".join(f"- {s}" for s in shown) + "\n\n" + md.table(
        tables.comparison, link=f"{out.name}/{FILES['comparison']}") + "\n\n" + md.table(
        tables.coverage, link=f"{out.name}/{FILES['coverage']}")))

# %% [markdown]
# ### What the selection rule picked, per fold
#
# The rule, as every fit applies it:

# %%
display(Markdown(log.add(claims.literal("Selection rule: {rule}.", rule=DEV_RULE))))
if tables is not None:
    display(Markdown(md.table(tables.settings, max_rows=30,
                              link=f"{out.name}/{FILES['settings']}")))

# %% [markdown]
# ## Learning curve
#
# The same cross-fitting with each tool learning from at most 0, 1, 2, 5 or all of its
# labeled requests in the training folds (its first ones in file order); 0 is the blind
# scorer. `R@5_low` and `R@5_high` bound R@5 (95%, whole groups of requests resampled);
# `n_labeled_tools` is the mean over folds of tools with at least one.

# %%
if tables is not None:
    display(Markdown(log.add(sentences[-3]) + "\n\n" + md.table(
        tables.curve, link=f"{out.name}/{FILES['curve']}")))

# %% [markdown]
# ## Which tools gained, which lost
#
# Per required tool (always-include tools aside), over the requests that need it: how many
# found it in the top 5 blind and learned (cross-fitted).

# %%
if tables is not None:
    changed = tables.tools[tables.tools["change"] != 0].sort_values(
        "change", kind="stable")
    display(Markdown(log.add(sentences[-2]) + "\n\n" + md.table(
        changed, code=["tool"], max_rows=20, link=f"{out.name}/{FILES['tools']}")))

# %% [markdown]
# ## The next requests worth labeling
#
# A tool that a fold's model missed (not in the top 5, blind and learned) while that model had no labeled
# request for it is one the labels could not help yet: these are the tools to write the next
# labeled requests for, most such misses first (`missed_cold`), then fewest labels.
# `toolsel label --registry R --queries Q --suggest` prints the same table from the terminal.

# %%
if tables is not None:
    display(Markdown(log.add(sentences[-1]) + "\n\n" + md.table(
        tables.next, code=["tool"], max_rows=20, link=f"{out.name}/{FILES['next']}")))

# %% [markdown]
# ## A model file of yours
#
# Given a `model` (written by `toolsel fit`), it is compared with its blind scorer on the
# labeled requests it was **not** fit on only (those it learned from would grade it on its own
# labels), paired as above.

# %%
if model:
    from toolsel.learn.artifact import load_model
    fitted = load_model(model, reg)
    held_table, n_fit = model_table(reg, labeled, fitted, n_boot=n_boot, seed=seed)
    if held_table is not None:
        write_table(held_table, out / MODEL_FILE)
    display(Markdown(log.add(model_sentence(held_table, n_fit))))
else:
    display(Markdown("No model file given (`toolsel report --model FILE`)."))
