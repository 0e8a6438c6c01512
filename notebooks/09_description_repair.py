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
# # Description repair: diagnose misses on dev, patch descriptions, re-measure on test
#
# When a required tool is not found, the cheapest fix is often in the catalog, not the
# scorer: add the words customers use to the tool's description. `toolsel compare` runs the
# same labeled suite on two versions of a registry and lists, per query, which required tools
# were found or lost and how their ranks moved.
#
# The protocol, so that a gain can be trusted:
#
# 1. list the misses on the **dev** split and the words of the requests each tool's text lacks
#    (`toolsel.eval.failure_modes.repair_hints`);
# 2. write the repairs as a small patch, `data/repairs/descriptions_v2.json` (tool → new
#    description: the old text plus customer vocabulary), chosen on dev only; the 61-tool
#    benchmark file stays the article's reconstruction, and the repaired registry exists only
#    in memory (`toolsel.eval.compare.apply_repairs`);
# 3. measure once on the held-back **test** split, and on the article's replication queries
#    (never used to choose anything), counting gains *and* losses, for every scorer.
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
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry, sweep
from toolsel.eval.compare import (apply_repairs, compare_registries, held_back_terms,
                                  load_repairs, repair_table)
from toolsel.eval.discovery import filter_split, write_table
from toolsel.eval.failure_modes import classify_misses, repair_hints
from toolsel.eval.stats import paired_comparison
from toolsel.report import markdown as md

pd.set_option("display.precision", 3)
pd.set_option("display.max_colwidth", 90)
out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)


def _same(a: str, b: str) -> bool:
    return bool(a) and bool(b) and Path(a).resolve() == Path(b).resolve()


if isinstance(top_k, (list, tuple)):  # the report runner passes the suite's list of cut-offs
    top_k = 5 if 5 in top_k else sorted(top_k)[len(top_k) // 2]
bundled_registry = _same(registry, "../data/registry.json")
bundled = bundled_registry and _same(requests, "../data/requests.jsonl")
reg = load_registry(registry)
all_requests = load_queries(requests, reg)
has_split = any(q.split for q in all_requests)
if has_split:
    dev, test = filter_split(all_requests, "dev"), filter_split(all_requests, "test")
else:
    dev, test = all_requests, []
# the bundled replication queries and patch name the bundled registry's tools only
held_name = "replication" if bundled_registry else "queries"
use_queries = (bool(queries) and not _same(queries, requests)
               and (bundled_registry or not _same(queries, "../data/queries.jsonl")))
replication = load_queries(queries, reg) if use_queries else []
use_repairs = bool(repairs) and (bundled_registry
                                 or not _same(repairs, "../data/repairs/descriptions_v2.json"))
patch = load_repairs(repairs, reg) if use_repairs else None
repaired = apply_repairs(reg, patch) if use_repairs else None
dev_name = "dev" if has_split else "all"
notes = []
if not has_split:
    notes.append("The requests have no `split`: the misses below are read from **every** "
                 "request, and nothing is held back to judge a repair on.")
if patch is None:
    notes.append("No description repairs for this registry (`repairs` empty, or the bundled "
                 "patch on another registry): the before/after comparison is skipped.")
counts = (f"{len(dev)} dev and {len(test)} test requests" if has_split
          else f"{len(dev)} requests")
if replication:
    counts += f", {len(replication)} {held_name} queries"
display(Markdown(" ".join(notes + [
    counts + (f"; the patch repairs {len(patch)} of {len(reg)} descriptions."
              if patch is not None else ".")])))

# %% [markdown]
# ## 1. Misses on dev, and what the descriptions lack

# %%
dev_run = sweep(reg, dev, [hint_scorer], [top_k], always_include=sorted(reg.always_include),
                progress=False)
classified = classify_misses(dev_run.misses, reg)
hints = repair_hints(classified)
write_table(classified, out / "dev_misses.csv")
write_table(hints, out / "dev_repair_hints.csv")

def first_terms(text, n=8):
    terms = str(text).split(", ")
    return ", ".join(terms[:n]) + (f" (+{len(terms) - n} more)" if len(terms) > n else "")


display(Markdown(
    f"{len(classified)} required tools missed by `{hint_scorer}` at K={top_k} on the "
    f"{dev_name} requests, by tool (request words the tool's text lacks, most frequent "
    "first):\n\n"
    + md.table(hints[["expected", "misses", "query_ids", "missing_terms"]].rename(
        columns={"expected": "tool", "query_ids": "requests", "missing_terms":
                 "words its text lacks"}), {"words its text lacks": first_terms},
        link=f"{out.name}/dev_repair_hints.csv")))

# %% [markdown]
# ## 2. The patch
#
# Each repair keeps the old description and appends a short sentence of the vocabulary the
# dev misses asked for ("inbox", "cancel", "reschedule", "appointment", "ping"...).
#
# **Leak check.** No word a repair adds may occur in a held-back request (test or
# replication) unless it also occurs in a dev request (`held_back_terms`). A first draft of
# this patch failed the check: it added "decision makers", "decks", "negotiation", "signups"
# (test requests) and "rain", "weekend", "Japanese" (replication queries), words the author
# knew from writing the data rather than from the dev misses. They were removed before the
# measurement below.

# %%
if patch is None:
    display(Markdown("No patch: skipped."))
else:
    patch_table = repair_table(reg, patch)
    write_table(patch_table, out / "patch.csv")
    unmotivated = sorted(set(patch_table["tool"]) - set(hints["expected"]))
    leaks = held_back_terms(patch, reg, dev, [*test, *replication])
    if bundled:
        assert not unmotivated, "a repair not motivated by a dev miss"
        assert leaks.empty, f"repairs use held-back vocabulary:\n{leaks}"
    else:
        if unmotivated:
            display(Markdown(f"**Warning:** {len(unmotivated)} repaired tools had no miss "
                             f"among the {dev_name} requests at K={top_k}."))
        if not leaks.empty:
            display(Markdown(f"**Warning:** the patch adds {len(leaks)} words that occur only "
                             "in held-back requests (listed below): a gain there is not "
                             "evidence."))
            display(Markdown(md.table(leaks)))
    display(Markdown(f"The patch: {len(patch_table)} descriptions, each with the sentence "
                     "added to it.\n\n" + md.table(patch_table[["tool", "added"]],
                                                   max_rows=None,
                                                   link=f"{out.name}/patch.csv")))

# %% [markdown]
# ## 3. Dev (where the repairs were chosen) vs test (held back)

# %%
if patch is not None:
    results = {}
    suites = [(dev_name, dev)] + ([("test", test)] if test else []) + (
        [(held_name, replication)] if replication else [])
    pairs = []
    for name, suite in suites:
        for scorer_name in scorers:
            cmp = compare_registries(reg, repaired, suite, scorer_name, top_k,
                                     labels=("v1", "v2"))
            summary, changed = cmp.summary.copy(), cmp.changed().copy()
            changed.insert(0, "scorer", scorer_name)
            summary.insert(0, "suite", name)
            changed.insert(0, "suite", name)
            results[(name, scorer_name)] = (summary, changed)
            # paired bootstrap of the change, over the same requests
            pq = cmp.per_query
            long = pd.concat([pd.DataFrame({"scorer": v, "top_k": top_k,
                                            "query_id": pq["query_id"],
                                            "Complete@k": pq[f"Complete@k_{v}"]})
                              for v in ("v2", "v1")], ignore_index=True)
            pc = paired_comparison(long, "Complete@k", scorers=["v2", "v1"]).iloc[0]
            pairs.append({"suite": name, "scorer": scorer_name, "gain_low": pc["diff_low"],
                          "gain_high": pc["diff_high"]})
    summaries = pd.concat([s for s, _ in results.values()], ignore_index=True)
    changes = pd.concat([c for _, c in results.values()], ignore_index=True)
    write_table(summaries, out / "compare_summary.csv")
    write_table(changes, out / "compare_changed.csv")
    gain = summaries.pivot_table(index=["suite", "scorer"], columns="registry",
                                 values="Complete@k", sort=False)
    gain["gain"] = gain["v2"] - gain["v1"]
    counts = summaries[summaries.registry == "v2"].set_index(["suite", "scorer"])[
        ["found", "lost", "queries_fixed", "queries_broken"]]
    n_rated = summaries[summaries.registry == "v1"].set_index(["suite", "scorer"])["n_queries"]
    table = gain.join(counts).join(pd.DataFrame(pairs).set_index(["suite", "scorer"]))
    table["n"] = n_rated
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
            f"**{name}**: Complete@{top_k} over {int(part['n'].iloc[0])} requests (paired "
            "bootstrap 95% interval of the change):\n\n"
            + md.table(shown, {f"Complete@{top_k} before": "{:.1%}",
                               f"Complete@{top_k} after": "{:.1%}"})))
    display(Markdown(f"All suites: [gain_by_suite.csv]({out.name}/gain_by_suite.csv)."))

# %%
if patch is not None:
    test_cmp = compare_registries(reg, repaired, test or dev, hint_scorer, top_k,
                                  labels=("v1", "v2"))
    test_cmp.write(out)
    display(Markdown(
        f"**Tools whose rank moved across K={top_k}** on the "
        f"{'test' if test else dev_name} requests, `{hint_scorer}` (rank before → after):\n\n"
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
    display(Markdown(
        f"**Reading ({hint_scorer}, Complete@{top_k}).** On dev, where the repairs were chosen, "
        f"{d['v1']:.1%} → {d['v2']:.1%} ({100 * d['gain']:+.1f} points, {int(d['found'])} tools "
        f"found, {int(d['lost'])} lost, {int(d['queries_broken'])} requests broken). On the "
        f"held-back **test** split: {t['v1']:.1%} → {t['v2']:.1%} ({100 * t['gain']:+.1f} "
        f"points; {int(t['found'])} found, "
        f"{int(t['lost'])} lost, {int(t['queries_fixed'])} requests fixed, "
        f"{int(t['queries_broken'])} broken; {int(t['n'])} requests). On the {int(r['n'])} "
        f"replication queries with a filtered required tool: {r['v1']:.1%} → "
        f"{r['v2']:.1%} ({int(r['found'])} found, {int(r['lost'])} lost). "
        + ("Most of the dev gain did not carry over: repairs written from a few dozen dev "
           "misses fit those requests' words. " if t["gain"] < d["gain"] / 2 else
           "The gain carries over to the held-back requests. ")
        + "This is what the held-back split is for: judge a patch on test, count its losses as "
        "well as its gains, and repair from *kinds* of misses rather than single requests."))
    worse_test = table.loc["test"][table.loc["test"]["gain"] < 0]
    better_test = table.loc["test"][table.loc["test"]["gain"] > 0]
    display(Markdown(
        f"**The other scorers on test (Complete@{top_k}).** "
        + ("The repair made " + ", ".join(
            f"`{s_}` worse ({100 * r['gain']:+.1f} points, {int(r['lost'])} tools lost, "
            f"{int(r['queries_broken'])} requests broken)" for s_, r in worse_test.iterrows())
           + ". " if len(worse_test) else "No scorer got worse on test. ")
        + ("It helped " + ", ".join(f"`{s_}` ({100 * r['gain']:+.1f})"
                                   for s_, r in better_test.iterrows()) + ". "
           if len(better_test) else "")
        + ("Every paired interval of a test change includes zero: on "
           f"{int(table.loc['test']['n'].iloc[0])} requests these changes are within the noise."
           if ((table.loc["test"]["gain_low"] <= 0)
               & (table.loc["test"]["gain_high"] >= 0)).all()
           else "Some test changes have intervals that exclude zero (see the table).")))
elif patch is not None:
    g = table.xs(hint_scorer, level="scorer")
    display(Markdown(
        f"**Reading ({hint_scorer}, Complete@{top_k}).** "
        + "; ".join(f"{name}: {r['v1']:.1%} → {r['v2']:.1%} ({int(r['found'])} tools found, "
                    f"{int(r['lost'])} lost)" for name, r in g.iterrows())
        + ". Judge a patch on requests it was not written from, and count its losses."))
