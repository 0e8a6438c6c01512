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
#     - requests
# ---

# %% [markdown]
# # Description repair: diagnose misses, patch descriptions, re-measure
#
# When a required tool is not found, the cheapest fix is often in the catalog, not the
# scorer: add the words customers use to the tool's description. `toolsel compare` runs the
# same labeled suite on two versions of a registry and lists, per query, which required tools
# were found or lost and how their ranks moved.
#
# The protocol, so that a gain can be trusted:
#
# 1. list the misses on the requests the repairs may be chosen from (a split file's dev
#    part) and the words of the requests each tool's text lacks
#    (`toolsel.tables.failure_modes.repair_hints`);
# 2. write the repairs as a small patch (`repairs`: tool → new description, the old text plus
#    customer vocabulary), chosen from those requests only; the registry file stays as it is,
#    and the repaired registry exists only in memory (`toolsel.tables.compare.apply_repairs`);
# 3. measure once on requests never used to choose anything (a split file's test part, and
#    other labeled queries of the registry), counting gains *and* losses, for every scorer.
#
# Every rate below is **Complete@k** (the share of requests whose required tools are all in the
# top k), over the requests that need at least one filtered tool (a request needing only
# always-include tools is sent them anyway and is not counted), with its n.
#
# On your own data: requests without a `split` are all treated as the set the misses are read
# from (nothing held back, said in the report); without a repairs file (`repairs: ""`, or the
# bundled patch on another registry) the report stops after the misses and repair hints.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry (version a)
requests: str = "../data/requests.jsonl"  # labeled requests with dev/test split
queries: str = "../data/queries.jsonl"  # the article's replication queries
repairs: str = "../data/repairs/descriptions_v2.json"  # description patch (version b)
scorers: list[str] = ["jaccard", "bm25", "bm25-okapi", "tfidf", "embedding", "default"]  # scorers to compare
hint_scorer: str = "bm25-okapi"  # the scorer whose dev misses guided the repairs (BM25 before its tokenization was tuned)
top_k: int = 5  # cut-off (a list: 5 if in it, else its middle value)
out_dir: str = "../reports/09_description_repair"  # where tables and figures go

# %%
from functools import partial

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.eval.sweep import sweep
from toolsel.datasets import filter_split, load_repairs
from toolsel.tables.compare import (apply_repairs, compare_registries, compare_suites,
                                   held_back_terms, repair_table)
from toolsel.tables.failure_modes import classify_misses, repair_hints
from toolsel.report import markdown as md
from toolsel.io import write_table
from toolsel.report.notebook_setup import setup
from toolsel.report.plan import same_path
from toolsel.report import claims
from toolsel.scorers.base import scorer_summary

out = setup(out_dir, figures=False, max_colwidth=90)
log = claims.ClaimLog(out)
if isinstance(top_k, (list, tuple)):  # the report runner passes the suite's list of cut-offs
    top_k = 5 if 5 in top_k else sorted(top_k)[len(top_k) // 2]
bundled_registry = same_path(registry, "../data/registry.json")
bundled = bundled_registry and same_path(requests, "../data/requests.jsonl")
reg = load_registry(registry)
all_requests = load_queries(requests, reg)
has_split = any(q.split for q in all_requests)
if has_split:
    dev, test = filter_split(all_requests, "dev"), filter_split(all_requests, "test")
else:
    dev, test = all_requests, []
# the bundled replication queries and patch name the bundled registry's tools only
held_name = "replication" if bundled_registry else "queries"
use_queries = (bool(queries) and not same_path(queries, requests)
               and (bundled_registry or not same_path(queries, "../data/queries.jsonl")))
replication = load_queries(queries, reg) if use_queries else []
use_repairs = bool(repairs) and (bundled_registry
                                 or not same_path(repairs, "../data/repairs/descriptions_v2.json"))
patch = load_repairs(repairs, reg) if use_repairs else None
repaired = apply_repairs(reg, patch) if use_repairs else None
dev_name = "dev" if has_split else "all"  # the suite's name in the tables
dev_words = "the dev requests" if has_split else "every request"  # ... and in sentences
notes = []
if not has_split:
    notes.append("The requests have no `split`: the misses below are read from **every** "
                 "request, and nothing is held back to judge a repair on.")
if patch is None:
    notes.append("No description repairs for this registry (`repairs` empty, or the bundled "
                 "patch on another registry): the before/after comparison is skipped.")
# the counts the page's sentences cite
data = pd.DataFrame([{"n_tools": len(reg), "n_dev": len(dev), "n_test": len(test),
                      "n_held_queries": len(replication),
                      "n_repaired": len(patch) if patch is not None else 0}])
write_table(data, out / "data.csv")
sizes = (claims.counts(data, "data.csv", "{d} dev and {t} test requests", d="n_dev",
                       t="n_test") if has_split
         else claims.counts(data, "data.csv", "{d} requests", d="n_dev"))
if replication:
    sizes = sizes + claims.counts(data, "data.csv", ", {n} " + held_name + " queries",
                                  n="n_held_queries")
sizes = sizes + (claims.counts(data, "data.csv", "; the patch repairs {r} of {n} descriptions.",
                               r="n_repaired", n="n_tools") if patch is not None else ".")
display(Markdown(" ".join(notes + [log.add(sizes)])))

# %%
display(Markdown(("## Misses on dev, and what the descriptions lack" if has_split else
                  "## Misses, and what the descriptions lack")
                 + "\n\nThe misses are read with " + md.code(hint_scorer) + ": "
                 + scorer_summary(hint_scorer)))
dev_run = sweep(reg, dev, [hint_scorer], [top_k], always_include=sorted(reg.always_include),
                progress=False)
classified = classify_misses(dev_run.misses, reg)
hints = repair_hints(classified)
write_table(classified, out / "dev_misses.csv")
write_table(hints, out / "dev_repair_hints.csv")
display(Markdown(
    log.add(claims.count_rows(
        classified, "dev_misses.csv",
        "{n} required tool" + ("" if len(classified) == 1 else "s")
        + f" missed by `{hint_scorer}` at K={top_k} on {dev_words}, by "
        "tool (request words the tool's text lacks, most frequent first):"))
    + "\n\n"
    + md.table(hints[["expected", "misses", "query_ids", "missing_terms"]].rename(
        columns={"expected": "tool", "query_ids": "requests", "missing_terms":
                 "words its text lacks"}),
        {"words its text lacks": partial(md.list_text, sep=", ", limit=8)},
        link=f"{out.name}/dev_repair_hints.csv")))

# %% [markdown]
# ## The patch

# %%
if bundled and patch is not None:
    display(Markdown(log.fixed(
        "Each repair keeps the old description and appends a short sentence of the "
        "vocabulary the dev misses asked for (\"inbox\", \"cancel\", \"reschedule\", "
        "\"appointment\", \"ping\"...).\n\n**Leak check.** No word a repair adds may occur "
        "in a held-back request (test or replication) unless it also occurs in a dev request "
        "(`held_back_terms`). A first draft of this patch failed the check: it added "
        "\"decision makers\", \"decks\", \"negotiation\", \"signups\" (test requests) and "
        "\"rain\", \"weekend\", \"Japanese\" (replication queries), words the author knew "
        "from writing the data rather than from the dev misses. They were removed before the "
        "measurement below.", "the bundled patch's history (data/repairs)")))
elif patch is not None and (test or replication):
    display(Markdown("**Leak check.** No word a repair adds may occur in a request kept for "
                     "measuring unless it also occurs in one the repairs were chosen from "
                     "(`held_back_terms`)."))

# %%
if patch is None:
    display(Markdown("No patch: skipped."))
else:
    patch_table = repair_table(reg, patch)
    write_table(patch_table, out / "patch.csv")
    unmotivated = sorted(set(patch_table["tool"]) - set(hints["expected"]))
    data["n_unmotivated"] = len(unmotivated)
    write_table(data, out / "data.csv")
    leaks = held_back_terms(patch, reg, dev, [*test, *replication])
    if bundled:
        assert not unmotivated, "a repair not motivated by a dev miss"
        assert leaks.empty, f"repairs use held-back vocabulary:\n{leaks}"
    else:
        if unmotivated:
            display(Markdown(log.add(claims.counts(
                data, "data.csv", "**Warning:** {n} repaired tool"
                + ("" if len(unmotivated) == 1 else "s") + " had no miss among "
                f"{dev_words} at K={top_k}.", n="n_unmotivated"))))
        if not leaks.empty:
            write_table(leaks, out / "leaks.csv")
            display(Markdown(log.add(claims.count_rows(
                leaks, "leaks.csv", "**Warning:** the patch adds {n} words that occur only in "
                "held-back requests (listed below): a gain there is not evidence."))))
            display(Markdown(md.table(leaks, link=f"{out.name}/leaks.csv")))
    display(Markdown(log.add(claims.count_rows(
        patch_table, "patch.csv", "The patch: {n} descriptions, each with the sentence added "
        "to it.")) + "\n\n" + md.table(patch_table[["tool", "added"]],
                                                   max_rows=None,
                                                   link=f"{out.name}/patch.csv")))

# %%
if patch is not None:
    display(Markdown("## Dev (where the repairs were chosen) vs test (held back)" if test
                     else "## Before and after the repairs, on the requests they were chosen "
                          "from (in-sample)"))
    suites = {dev_name: dev, **({"test": test} if test else {}),
              **({held_name: replication} if replication else {})}
    summaries, changes, table = compare_suites(reg, repaired, suites, scorers, top_k,
                                               labels=("v1", "v2"))
    write_table(summaries, out / "compare_summary.csv")
    write_table(changes, out / "compare_changed.csv")
    # whether the change's paired interval excludes zero (counted by the reading below)
    table["excludes_zero"] = (table["gain_low"] > 0) | (table["gain_high"] < 0)
    write_table(table.reset_index(), out / "gain_by_suite.csv")
    for name in table.index.get_level_values("suite").unique():
        part = table.loc[name].reset_index()
        shown = pd.DataFrame({
            "scorer": part["scorer"], f"Complete@{top_k} before": part["v1"],
            f"Complete@{top_k} after": part["v2"],
            "change, points [95%]": [f"{100 * r.gain:+.1f} [{100 * r.gain_low:+.1f}, "
                                     f"{100 * r.gain_high:+.1f}]" for r in part.itertuples()],
            "tools found": part["found"], "tools lost": part["lost"],
            "requests fixed": part["queries_fixed"], "requests broken": part["queries_broken"]})
        display(Markdown(
            log.add(claims.fill(
                table.reset_index(), "gain_by_suite.csv",
                f"**{md.escape(name)}**: Complete@{top_k} over {{n}} requests (paired bootstrap "
                "95% interval of the change):", where={"suite": name,
                                                       "scorer": part["scorer"].iloc[0]},
                n="n"))
            + "\n\n"
            + md.table(shown, {f"Complete@{top_k} before": "{:.1%}",
                               f"Complete@{top_k} after": "{:.1%}"})))
    display(Markdown(f"All suites: [gain_by_suite.csv]({out.name}/gain_by_suite.csv)."))

# %%
if patch is not None:
    test_cmp = compare_registries(reg, repaired, test or dev, hint_scorer, top_k,
                                  labels=("v1", "v2"))
    test_cmp.write(out)
    display(Markdown(
        f"**Tools whose rank moved across K={top_k}** on "
        f"{'the test requests' if test else dev_words}, `{hint_scorer}` (rank before → after):\n\n"
        + md.table(test_cmp.changed()[["query_id", "query", "tool", "rank_v1", "rank_v2",
                                       "change"]].rename(columns={
                                           "query_id": "request", "rank_v1": "rank before",
                                           "rank_v2": "rank after"}),
                   link=f"{out.name}/compare_per_tool.csv")))

# %%
if patch is not None and bundled:
    d = table.loc[("dev", hint_scorer)]
    t = table.loc[("test", hint_scorer)]
    r = table.loc[("replication", hint_scorer)]
    # chosen on dev: a large gain there without breaking a dev query
    assert d["gain"] > 0.15 and d["queries_broken"] == 0
    # the held-back sets are the evidence; they must be reported whatever they show
    assert t["found"] >= t["lost"] and r["lost"] == 0
    gain_csv = table.reset_index()
    metric = f"Complete@{top_k}"
    display(Markdown(
        f"**Reading ({hint_scorer}).** Where the repairs were chosen, "
        + log.add(claims.repair_change(gain_csv, "gain_by_suite.csv", suite="dev",
                                       scorer=hint_scorer, metric=metric))
        + ". On the held-back **test** split, "
        + log.add(claims.repair_change(gain_csv, "gain_by_suite.csv", suite="test",
                                       scorer=hint_scorer, metric=metric))
        + ". On the replication queries with a filtered required tool, "
        + log.add(claims.repair_change(gain_csv, "gain_by_suite.csv", suite="replication",
                                       scorer=hint_scorer, metric=metric))
        + ". "
        + ("Most of the dev gain did not carry over: repairs written from a few dozen dev "
           "misses fit those requests' words. " if t["gain"] < d["gain"] / 2 else
           "The gain carries over to the held-back requests. ")
        + "This is what the held-back split is for: judge a patch on test, count its losses as "
        "well as its gains, and repair from *kinds* of misses rather than single requests."))
    tests_ = table.loc["test"]
    display(Markdown(
        f"**Every scorer on test.** "
        + "; ".join(f"`{md.escape(s_)}`: "
                    + log.add(claims.repair_change(gain_csv, "gain_by_suite.csv",
                                                   suite="test", scorer=s_, metric=metric))
                    for s_ in tests_.index) + ". "
        + ("Every paired interval of a test change includes zero: these changes are within "
           "the noise." if ((tests_["gain_low"] <= 0) & (tests_["gain_high"] >= 0)).all()
           else log.add(claims.fill(
               gain_csv, "gain_by_suite.csv", "{e} of {n} test changes "
               + ("has" if int(tests_["excludes_zero"].sum()) == 1 else "have")
               + " a paired interval that excludes zero.", where={"suite": "test"}, e=("excludes_zero", "count_true"),
               n=("scorer", "nunique"))))))
elif patch is not None:
    gain_csv = table.reset_index()
    display(Markdown(
        f"**Reading ({hint_scorer}"
        + ("" if has_split else ", in-sample: the misses and the repair's effect on the same "
           "requests") + ").** "
        + "; ".join(log.add(claims.repair_change(gain_csv, "gain_by_suite.csv", suite=name,
                                                 scorer=hint_scorer,
                                                 metric=f"Complete@{top_k}"))
                    for name in table.index.get_level_values("suite").unique())
        + ". Judge a patch on requests it was not written from, and count its losses."))
