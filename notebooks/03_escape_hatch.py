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
# # The escape hatch: a `discover` call for what the filter cut
#
# The filter sends the top-K tools. When none of them fits, the model can call
# `discover_tools`, which searches the *full* registry; its hit is **pinned**: visible for the
# rest of that conversation, and only that one. The worst case is one extra tool call, never a
# tool the model silently cannot know exists.
#
# First the article's 3-turn, 4-tool conversation, replayed without an LLM (the model's one
# action, the `discover_tools` call, is scripted); then, over the labeled set, how many misses
# one `discover` call recovers and what the hatch costs.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
queries: str = "../data/queries.jsonl"  # labeled queries
scorers: list[str] = ["jaccard", "bm25", "tfidf", "embedding"]  # filter and discover scorers
top_k: list[int] = [10]  # tools sent per turn: 10 if given, else the largest K that filters
always_include: list[str] = []  # names sent every turn outside K (the article: none)
out_dir: str = "../reports/03_escape_hatch"  # where tables and figures go

# %%
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from toolsel import Selector, load_queries, load_registry
from toolsel.eval.replication import is_article_benchmark
from toolsel.eval.scenario import (ARTICLE_TOOLS, DISCOVER_TOOL, article_scenario, escape_hatch,
                                   scenario_table, scenario_tools_present)
from toolsel.report.html import escape_md, md_code
from toolsel.report.plots import plot_escape_hatch, save_figure, setup_style
from toolsel.report.runner import headline_k

setup_style()
pd.set_option("display.max_colwidth", 100)
out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
reg = load_registry(registry)
qs = load_queries(queries, reg)
article = is_article_benchmark(reg, qs)  # the bundled data: its numbers are checked
k = headline_k(top_k, len(reg) - len(set(always_include)))

# %% [markdown]
# ## The article's conversation
#
# Four tools (`weather_lookup`, `stock_price`, `translate_text`, `calculator`, with our
# registry's descriptions), Jaccard, `top_k=1`, no always-include, `discover_tools` injected
# on every turn outside the filter. (Only when the registry has those four tools.)

# %%
scenario = scenario_tools_present(reg)
if scenario:
    turns = article_scenario(reg)
    table = scenario_table(turns)
    table.to_csv(out / "scenario.csv", index=False, lineterminator="\n")
    display(table)
else:
    display(Markdown("*Skipped: the article's conversation needs the tools "
                     + ", ".join(md_code(n) for n in ARTICLE_TOOLS)
                     + ", which this registry does not have.*"))

# %%
if scenario:
    for t in turns:
        print(f"turn {t.turn}: user: {t.user!r}")
        print(f"        model sees {len(t.sent)} tools: {', '.join(t.sent)}")
        if t.discover_query:
            print(f"        model calls discover_tools({t.discover_query!r}) -> {t.tool_result}")
        print(f"        pinned: {list(t.pinned)}")

# %% [markdown]
# Turn 2 shares no content word with the calculator's description ("evaluate a basic
# arithmetic expression..."): with K=1 the filter sends the weather tool, the model says it
# sees nothing for numbers and calls `discover_tools`, and the calculator is pinned. On turn
# 3 the filter picks `translate_text`, and the pin keeps the calculator in view: three tools.
#
# Pins are per conversation: a new session over the same selector starts empty.

# %%
if scenario:
    selector = Selector([reg.get(n) for n in ARTICLE_TOOLS], "jaccard", top_k=1,
                        always_include=())
    other_chat = selector.session()
    other_sent = other_chat.select("translate hello to French")
    print("another conversation, same turn 3:", other_sent, "pinned:", other_chat.pinned)

# %%
if scenario:
    assert [len(t.sent) for t in turns] == [2, 2, 3]
    assert turns[0].sent == ("discover_tools", "weather_lookup")
    assert turns[1].discovered == "calculator" and "calculator" not in turns[1].sent
    assert turns[2].sent == ("calculator", "discover_tools", "translate_text")
    assert list(turns[-1].pinned) == ["calculator"]
    assert other_sent == ["translate_text"] and other_chat.pinned == []

# %% [markdown]
# ## Over the labeled set: what one `discover` call recovers
#
# For every query whose required tools did not all make the top-K, the model calls
# `discover` once (an idealized model: it calls exactly when something is missing). Three
# ways to call it:
#
# - **literal**: with the user's words, searching the full registry (the article's
#   `discover`). With the same scorer as the filter this can never help: the best tool of the
#   full registry is the filter's own first pick, already sent.
# - **literal, unseen tools only**: the user's words, searching only the tools the model
#   cannot already see.
# - **search term**: the short phrase a model would write (the query file's `search_term`,
#   e.g. "arithmetic" for "what's 340 divided by 12").

# %%
hatch = escape_hatch(reg, qs, scorers, k, always_include=always_include)
hatch.summary.to_csv(out / "summary.csv", index=False, float_format="%.6f", lineterminator="\n")
hatch.misses.to_csv(out / "misses.csv", index=False, lineterminator="\n")
fig = plot_escape_hatch(hatch.summary)
save_figure(fig, out, "escape_hatch");

# %%
s = hatch.summary.set_index("scorer")
s[["misses", "recovered_literal", "recovered_literal_unseen", "recovered_search_term",
   "Complete@k", "Complete_after_literal_unseen", "Complete_after_search_term"]].T

# %% [markdown]
# ## What the hatch costs
#
# Every request carries `discover_tools` itself (its name and description); a query with a
# miss makes a second request that carries everything again plus the pinned hit. Payload is
# name + description characters per query, averaged over all queries; the reduction is
# against sending the whole registry with no hatch.

# %%
cost = s[["extra_calls_search_term", "discover_tool_chars", "payload_chars",
          "payload_chars_search_term", "payload_reduction", "payload_reduction_search_term"]]
cost.T

# %%
j = s.loc[scorers[0]]
display(Markdown(
    f"With **{escape_md(scorers[0])}** at K={k}: {int(j.misses)} misses in {int(j.queries_with_miss)} "
    f"queries. One call with the user's words recovers {int(j.recovered_literal)}; with only "
    f"unseen tools {int(j.recovered_literal_unseen)}; with a short search term "
    f"{int(j.recovered_search_term)}, raising Complete@{k} from "
    f"{100 * j['Complete@k']:.0f}% to {100 * j.Complete_after_search_term:.0f}%. "
    f"The cost: {int(j.extra_calls_search_term)} extra calls over {len(qs)} queries and "
    f"{j.payload_chars_search_term - j.payload_chars:,.0f} more characters per query on "
    f"average, so the payload reduction falls from {100 * j.payload_reduction:.1f}% to "
    f"{100 * j.payload_reduction_search_term:.1f}%. The hatch is only as good as the words "
    f"the model searches with: it pays off when the model rephrases the need in the tools' "
    f"vocabulary."
    + ("" if any(q.search_term for q in qs) else " (This query file gives no `search_term`: "
       "the search-term call is never made.)")))

# %% [markdown]
# ### Each miss, and what each call found
#
# The tool each way of calling `discover` returned (empty: nothing scored above zero);
# `*_recovered` says whether it was the missing tool. Full table: `misses.csv`.

# %%
hatch.misses[["scorer", "query_id", "expected", "rank", "literal_hit", "literal_unseen_hit",
              "search_term", "search_term_hit", "search_term_recovered"]]

# %% [markdown]
# ## Checks

# %%
# discover with the literal query returns the filter's first pick: never a recovery
assert (hatch.summary["recovered_literal"] == 0).all()
assert (hatch.summary["Complete_after_search_term"] >= hatch.summary["Complete@k"]).all()
assert (hatch.summary["payload_chars_search_term"] > hatch.summary["payload_chars"]).all()
assert DISCOVER_TOOL.name == "discover_tools"
assert (hatch.summary["Complete_after_search_term"] <= 1).all()
if article and k == 10 and scorers[0] == "jaccard" and not always_include:
    assert int(j.misses) == 16 and int(j.recovered_search_term) == 9
print("all checks passed")
