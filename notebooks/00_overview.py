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
scorers: list[str] = []  # scorers to compare; empty: the registry's compared scorers
top_k: list[int] = [10, 30]  # cut-offs swept; the headline: 10, else the largest that filters
always_include: list[str] = []  # names sent every turn outside K (the article: none)
notebooks_dir: str = "."  # where the numbered notebooks are (for the map)
pages: list[str] = []  # the pages of this report (set by `toolsel report`); empty: every notebook
n_boot: int = 2000  # bootstrap resamples
seed: int = 0  # bootstrap seed
out_dir: str = "../reports/00_overview"  # where tables go

# %%

import pandas as pd
from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.eval.scorer_warning import GAP_METRICS, gap_table
from toolsel.eval.sweep import sweep
from toolsel.tables.replication import ARTICLE, benchmark_facts, headline_frame, is_article_benchmark
from toolsel.tables.scenario import (ARTICLE_TOOLS, article_scenario, scenario_table,
                                     scenario_tools_present)
from toolsel.eval.stats import bootstrap_intervals, paired_comparison, with_wilson
from toolsel.report import claims, find_notebooks, notebook_title
from toolsel.report import markdown as md
from toolsel.report.cutoffs import distinct_top_k, headline_k, top_k_note
from toolsel.io import write_table
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
data = claims.data_table(reg, qs)
write_table(data, out / "data.csv", float_format=None)

domains = " over {d} domains" if facts["n_domains"] else ""
registry_line = log.add(claims.counts(
    data, "data.csv", "**{n} tools**" + domains + "; {a} marked always-include.",
    n="n_tools", a="n_always_include", **({"d": "n_domains"} if facts["n_domains"] else {})))
if article:
    registry_line += " " + log.fixed(
        "Modeled on what 4–5 MCP servers expose (Slack, GitHub, Linear, Jira, Gmail, "
        "Calendar, Drive, Notion, a CRM, web, weather, finance...); the always-include ones "
        "are the filesystem/task core.", "the article's benchmark (BRIEF.md)")
payload = log.add(claims.counts(
    data, "data.csv", "Sending them all costs **{c} characters** of name + description ({t} "
    "`cl100k_base` tokens).", c="unfiltered_chars", t="unfiltered_tokens"))
if article:
    payload += " " + log.fixed(f"The article's registry: {ARTICLE['unfiltered_chars']:,}.",
                               "the article (toolsel.tables.replication.ARTICLE)")
run_claim = claims.counts(
    data, "data.csv", "{t} tools and {q} labeled queries, every scorer at the headline cut-off.",
    t="n_tools", q="n_queries")
display(Markdown("**This run:** " + log.summary(run_claim)))
display(Markdown("## The benchmark\n\n- " + registry_line + " " + payload + "\n- "
                 + log.add(claims.benchmark_counts(data, "data.csv"))
                 + (' Direct: "send a direct message to alice on slack"; indirect: "let the '
                    'team know in the channel that the deploy finished".' if article else "")))

# %% [markdown]
# ## Headline
#
# At the headline cut-off, each scorer's share of required tools sent (R@k) and of queries
# with every required tool sent (Complete@k), with 95% intervals (a bootstrap over queries for
# R@k, Wilson's where every query's R@k is 0 or 1 and the bootstrap collapses to a point;
# Wilson's for Complete@k, a yes-or-no outcome per query); MRR; NDCG@k (the rank-discounted
# gain of the required tools in the top k, graded where the labels carry grades); and the payload
# sent.

# %%
n_candidates = len(reg) - len(set(always_include))
ks, dropped = distinct_top_k(top_k, n_candidates)
k = headline_k(ks, n_candidates)
# the single-scorer check below reads R@5 and Complete@10 from the same sweep, with `default`
# as its reference even when it is not among the scorers shown
gap_ks = sorted({k for _, k in GAP_METRICS.values()})
singles = [s for s in scorers if s != "default"]
result = sweep(reg, qs, list(dict.fromkeys([*scorers, *(["default"] if singles else [])])),
               sorted(set(ks) | set(gap_ks)), always_include=always_include, progress=False)
qm = result.query_metrics
shown_qm = qm[qm["top_k"].isin(ks) & qm["scorer"].isin(scorers)]
intervals = with_wilson(with_wilson(bootstrap_intervals(shown_qm, n_boot=n_boot, seed=seed),
                                    shown_qm), shown_qm, ["R@k"], collapsed_only=True)
headline = headline_frame(result.summary[result.summary["scorer"].isin(scorers)], intervals,
                          top_k=k)
write_table(headline, out / "headline.csv")
table = pd.DataFrame({
    "scorer": headline["scorer"],
    f"R@{k} [95% CI]": [md.interval_row(r, "R@k", digits=1) for _, r in headline.iterrows()],
    f"Complete@{k} [95% CI]": [md.interval_row(r, "Complete@k", digits=1)
                               for _, r in headline.iterrows()],
    "MRR": [f"{v:.3f}" for v in headline["MRR"]],
    f"NDCG@{k}": [f"{v:.3f}" for v in headline["NDCG@k"]],
    "payload chars": [f"{v:,.0f}" for v in headline["payload_chars"]],
    "payload reduction": [f"{100 * v:.1f}%" for v in headline["payload_reduction"]]})
note = top_k_note(ks, dropped, n_candidates)
display(Markdown(md.table(table, max_rows=None, align={c: "right" for c in table.columns[1:]})
                 + "\n\n" + log.add(claims.counts(data, "data.csv", "{n} quer"
                                                    + ("y" if len(qs) == 1 else "ies") + ".",
                                                    n="n_queries"))
                 + f" As CSV: [headline.csv]({out.name}/headline.csv)."
                 + (f"\n\n*{md.escape(note)}*" if note else "")))
# "highest" only where the paired interval of the top two's difference excludes zero
paired = (paired_comparison(shown_qm, "R@k", scorers=scorers, top_k=[k], n_boot=n_boot,
                            seed=seed) if len(scorers) > 1 else None)
if paired is not None:
    write_table(paired, out / "paired_headline.csv")
display(Markdown(log.add(claims.leader(headline, "R@k", "headline.csv", label=f"R@{k}",
                                       paired=paired, paired_source="paired_headline.csv",
                                       paired_where={"top_k": k}))
                 + " " + log.add(claims.one_request(len(qs), "data.csv", column="n_queries",
                                                    unit="query", what="R@k"))))

# %% [markdown]
# ## Is a single scorer far below `default` on these queries?
#
# A single scorer fails in known ways (term matching misses paraphrase; one embedding vector
# blurs a request needing several tools), and which way depends on the registry. Here every
# scorer is compared with `default` on the same labeled queries
# (`toolsel.eval.scorer_warning`): the gap in R@5 and Complete@10 (`default` minus the
# scorer), its paired bootstrap 95% interval, how many queries each does better on, and an
# exact sign test over those queries. A scorer is **far below** when some gap is at least the
# stated margin, its interval is above zero and the sign test's p-value is below the stated
# level (both in the table): then the page warns. `default` is run for this comparison even
# when `scorers` leaves it out. `Selector` users get the same check from
# `scorer_warning(selector, queries)`.

# %%
gap_k_ok = set(gap_ks) <= set(qm["top_k"])
if singles and gap_k_ok:
    gaps = gap_table(qm, singles, reference="default", n_boot=n_boot, seed=seed)
    write_table(gaps, out / "scorer_gaps.csv")
    gshown = pd.DataFrame({
        "scorer": gaps["scorer"], "metric": gaps["metric"],
        "scorer's mean": [f"{v:.3f}" for v in gaps["mean_scorer"]],
        "default's mean": [f"{v:.3f}" for v in gaps["mean_reference"]],
        "gap [95% CI]": [f"{r.gap:+.3f} [{r.gap_low:+.3f}, {r.gap_high:+.3f}]"
                         for r in gaps.itertuples()],
        "better with default / worse": [f"{r.reference_wins} / {r.scorer_wins}"
                                        for r in gaps.itertuples()],
        "sign test p": [f"{v:.3f}" if v >= 0.001 else "< 0.001" for v in gaps["p_value"]],
        "far below": gaps["far"]})
    display(Markdown(md.table(gshown, link=f"{out.name}/scorer_gaps.csv", max_rows=None,
                              align={c: "right" for c in gshown.columns[2:-1]})
                     + "\n\n" + log.add(claims.scorer_gap_warning(gaps, "scorer_gaps.csv",
                                                                  unit="query"))))
    card = claims.scorer_gap_card(gaps)
    if card is not None:  # the index card says it too
        log.summary(run_claim, card)
else:
    gaps = None
    display(Markdown(
        "*Skipped: `scorers` has no scorer other than `default`.*"
        if gap_k_ok else
        "*Skipped: with this few candidate tools `top_k=5` already sends every one, so no "
        "scorer can fall behind `default` on R@5 or Complete@10.*"))

# %%
if scenario_tools_present(reg):
    turns = article_scenario(reg)
    scen = scenario_table(turns)
    write_table(scen, out / "scenario.csv", float_format=None)
    seen = claims.Claim("")
    for t in scen.itertuples():
        seen = seen + claims.counts(scen, "scenario.csv", "{n}", where={"turn": t.turn},
                                    n="n_tools_seen") + (", " if t.Index < len(scen) - 1 else "")
    display(Markdown(
        log.fixed("**Escape hatch, the article's 3-turn scenario** (K=1, Jaccard):",
                  "the article's scenario (BRIEF.md)") + " the model sees "
        + log.add(seen + " tools on the successive turns") + "; after its "
        "one `discover_tools` call the conversation's pins are "
        + ", ".join(md.code(p) for p in turns[-1].pinned) + "."))
else:
    turns = None
    display(Markdown(log.skip("the article's 3-turn escape-hatch scenario",
                              "it needs the tools " + ", ".join(ARTICLE_TOOLS)
                              + ", which this registry does not have")))

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
    far = (gaps["gap"] >= gaps["margin"] - 1e-12) & (gaps["gap_low"] > 0) & (
        gaps["p_value"] < gaps["alpha"])
    assert (far == gaps["far"]).all()
    assert ((gaps["gap_low"] <= gaps["gap"] + 1e-12) & (gaps["gap"] <= gaps["gap_high"] + 1e-12)).all()
    r5 = result.summary.set_index(["scorer", "top_k"])["R@k"]
    for r in gaps[gaps["metric"] == "R@5"].itertuples():
        assert abs(r.mean_scorer - r5[(r.scorer, 5)]) < 1e-9
if turns is not None:
    assert [len(t.sent) for t in turns] == [2, 2, 3] and list(turns[-1].pinned) == ["calculator"]
if article:  # the bundled data's own numbers
    assert facts["n_tools"] == 61 and facts["n_queries"] == 30
    assert facts["unfiltered_chars"] == 5529
