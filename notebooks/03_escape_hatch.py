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
#     cost: 8
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
# First a 3-turn, 4-tool conversation replayed without an LLM (the model's one action, the
# `discover_tools` call, is scripted; it runs when the registry has the four tools it needs);
# then, over the labeled set, how many misses one `discover` call recovers and what the hatch
# costs.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
queries: str = "../data/queries.jsonl"  # labeled queries
scorers: list[str] = []  # filter and discover scorers; empty: the registry's compared scorers
top_k: list[int] = [10]  # tools sent per turn: 10 if given, else the largest K that filters
always_include: list[str] = []  # names sent every turn outside K (default: none)
out_dir: str = "../reports/03_escape_hatch"  # where tables and figures go

# %%
import pandas as pd
from IPython.display import Markdown, display

from toolsel import Selector, load_queries, load_registry
from toolsel.pages import escape_hatch as page
from toolsel.tables.replication import is_article_benchmark
from toolsel.tables.scenario import ARTICLE_TOOLS, DISCOVER_TOOL
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.report.plots import plot_escape_hatch, save_figure
from toolsel.text import content_words
from toolsel.io import FLOAT_FORMAT, write_table
from toolsel.report.notebook_setup import setup

from toolsel.scorers.base import compared_scorers

# the scorers every comparison runs unless told otherwise, from the registry of scorer names
scorers = list(scorers or compared_scorers())
out = setup(out_dir, precision=None, max_colwidth=100)
reg = load_registry(registry)
qs = load_queries(queries, reg)
article = is_article_benchmark(reg, qs)  # the bundled data: its numbers are checked
# every table of the page (the conversation, the filter and each way of calling discover),
# then every sentence read from them
tables = page.hatch_tables(reg, qs, scorers, top_k, always_include=always_include)
for name, frame in tables.items():
    write_table(frame, out / page.FILES[name],
                float_format=None if name in page.EXACT else FLOAT_FORMAT)
said = page.hatch_sentences(tables)
k = tables.k
log = claims.ClaimLog(out)
n_queries = log.add(said["n_queries"])
display(Markdown("**This run:** " + log.summary(said["run"])))

# %% [markdown]
# ## A three-turn conversation with the escape hatch

# %%
scenario = tables.scenario is not None
if scenario:
    display(Markdown(
        "The reference conversation: four tools ("
        + ", ".join(md.code(n) for n in ARTICLE_TOOLS) + ", with "
        + ("our" if article else "this") + " registry's descriptions), Jaccard, `top_k=1`, no "
        "always-include, `discover_tools` injected on every turn outside the filter."))
    turns, table = tables.turns, tables.scenario
    display(Markdown(md.table(
        table[["turn", "user", "n_tools_seen", "tools_seen", "discover_query", "discovered",
               "pinned_after", "requests", "payload_chars"]].rename(columns={
                   "user": "user says", "n_tools_seen": "tools the model sees",
                   "tools_seen": "which", "discover_query": "discover_tools called with",
                   "pinned_after": "pinned after the turn", "requests": "requests",
                   "payload_chars": "payload chars (all requests)"}),
        link=f"{out.name}/scenario.csv")))
else:
    display(Markdown(log.skip("the bundled benchmark's 3-turn conversation",
                              page.scenario_skip_reason(reg))))

# %%
if scenario:
    hit = next(t for t in turns if t.discover_query)
    display(Markdown(log.fixed(f"On turn {hit.turn} the model calls `discover_tools` with "
                               f"\"{md.escape(hit.discover_query)}\"; the tool answers: "
                               f"\"{md.escape(hit.tool_result)}\"", "scenario.csv")))

# %%
if scenario:
    display(Markdown(log.fixed(
        "Turn 2 shares no content word with the calculator's description (\"evaluate a basic "
        "arithmetic expression...\"): with K=1 the filter sends the weather tool, the model "
        "says it sees nothing for numbers and calls `discover_tools`, and the calculator is "
        "pinned. On turn 3 the filter picks `translate_text`, and the pin keeps the "
        "calculator in view: three tools.", "the article's scenario, checked by the asserts "
        "below") + "\n\nPins are per conversation: a new session over the same selector "
        "starts empty."))
    assert [len(t.sent) for t in turns] == [2, 2, 3]  # what the text above says

# %%
if scenario:
    selector = Selector([reg.get(n) for n in ARTICLE_TOOLS], "jaccard", top_k=1,
                        always_include=())
    other_chat = selector.session()
    other_sent = other_chat.select("translate hello to French")
    display(Markdown(log.fixed("Another conversation over the same selector, same turn 3:",
                               "the article's scenario") + " the model sees " + ", ".join(md.code(n) for n in other_sent) + "; pinned: "
                     + (", ".join(md.code(n) for n in other_chat.pinned) or "nothing") + "."))

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
# `discover` once (an idealized model: it calls exactly when something is missing). Four
# ways to call it:
#
# - **literal**: with the user's words, searching the full registry (the reference
#   `discover`). With the same scorer as the filter this can never help: the best tool of the
#   full registry is the filter's own first pick, already sent.
# - **literal, unseen tools only**: the user's words, searching only the tools the model
#   cannot already see.
# - **content words** (no labels): the query's words minus stop words (`toolsel.text.tokenize`
#   minus `toolsel.text.STOP_WORDS`), searching the full registry: what a model that only
#   drops filler words would send.
# - **search term** (an upper bound): the query file's `search_term`, e.g. "arithmetic" for
#   "what's 340 divided by 12". The person who labeled the query wrote it knowing the answer,
#   so it is close to an oracle: read it as the most one call can recover, not as what a
#   model's own search term will.

# %%
# the figure: literal, unseen-only, the label-free content-word call, and (when the queries
# carry one) the labeler's search term, the upper bound
has_terms = tables.has_search_terms
figure_data = tables.summary.assign(
    recovered_content_words=tables.words["recovered_content_words"].to_numpy())
fig = plot_escape_hatch(figure_data if has_terms
                        else figure_data.drop(columns="recovered_search_term"))
save_figure(fig, out, "escape_hatch",
            alt=f"Per scorer, the required tools missed at K={k} and how many one discover call "
                "recovers with the literal query, unseen tools only, the query's content words"
                + (" and the labeler's search term (upper bound)" if has_terms else ""));

# %%
s = tables.summary.set_index("scorer").join(tables.words.set_index("scorer"))
recovery = pd.DataFrame({
    "misses": s["misses"], "queries with a miss": s["queries_with_miss"],
    "literal": s["recovered_literal"], "literal, unseen only": s["recovered_literal_unseen"],
    "content words (no labels)": s["recovered_content_words"],
    "search term (upper bound)": s["recovered_search_term"],
    f"Complete@{k}": s["Complete@k"],
    "after content words": s["Complete_after_content_words"],
    "after search term (upper bound)": s["Complete_after_search_term"]})
display(Markdown(
    f"Required tools missed at K={k}, and how many one `discover` call recovers (counts), "
    f"then Complete@{k} before and after the call ("
    # over the queries with a filtered required tool (the summary's n_queries)
    + log.add(said["n_summary"]) + "):\n\n"
    + md.table(recovery, {c: "{:.0%}" for c in recovery.columns if "Complete" in c
                          or "after" in c}, index=True, link=f"{out.name}/summary.csv")
    + f"\n\nThe content-word variant: [summary_content_words.csv]"
    f"({out.name}/summary_content_words.csv)."))

# %% [markdown]
# ## What the hatch costs
#
# Every request carries `discover_tools` itself (its name and description); a query with a
# miss makes a second request that carries everything again plus the pinned hit. Payload is
# name + description characters per query, averaged over all queries; the reduction is
# against sending the whole registry with no hatch.

# %%
cost = pd.DataFrame({
    "discover_tools chars": s["discover_tool_chars"],
    "chars, no hatch": s["payload_chars"],
    "chars, content words": s["payload_chars_content_words"],
    "chars, search term": s["payload_chars_search_term"],
    "extra calls, content words": s["extra_calls_content_words"],
    "extra calls, search term": s["extra_calls_search_term"],
    "reduction, no hatch": s["payload_reduction"],
    "reduction, content words": s["payload_reduction_content_words"],
    "reduction, search term": s["payload_reduction_search_term"]})
display(Markdown(
    f"Mean name + description characters per query, extra `discover` calls over "
    f"{n_queries}, and payload reduction against sending every tool:\n\n"
    + md.table(cost, {**{c: "{:,.0f}" for c in cost.columns if "chars" in c},
                      **{c: "{:.1%}" for c in cost.columns if "reduction" in c}},
               index=True)))

# %%
display(Markdown(log.add(said["recovery"])
                 + " The hatch is only as good as the words the model searches with: it pays "
                 "off when the model rephrases the need in the tools' vocabulary."))
j = s.loc[scorers[0]]

# %% [markdown]
# ### Each miss, and what each call found
#
# The tool each way of calling `discover` returned (–: no tool matched, by the scorer's no-match rule), in bold
# when it is the missing tool.

# %%
m = tables.misses.assign(content_words=[content_words(q) for q in tables.misses["query"]],
                         content_words_hit=tables.word_misses["search_term_hit"].to_numpy())
display(Markdown(md.table(pd.DataFrame({
    "scorer": m["scorer"], "query": m["query"], "missed": m["expected"], "rank": m["rank"],
    "literal, unseen only": [md.code_hit(a, b)
                             for a, b in zip(m["literal_unseen_hit"], m["expected"])],
    "content words": m["content_words"],
    "content words found": [md.code_hit(a, b)
                            for a, b in zip(m["content_words_hit"], m["expected"])],
    "search term": m["search_term"],
    "search term found": [md.code_hit(a, b)
                          for a, b in zip(m["search_term_hit"], m["expected"])]}),
    code=["missed"], raw=["literal, unseen only", "content words found", "search term found"],
    link=f"{out.name}/misses.csv")))

# %%
# checks (they stop the report when a number is off; nothing is shown)
# discover with the literal query returns the filter's first pick: never a recovery
assert (tables.summary["recovered_literal"] == 0).all()
assert (tables.summary["Complete_after_search_term"] >= tables.summary["Complete@k"]).all()
assert (tables.summary["payload_chars_search_term"] > tables.summary["payload_chars"]).all()
assert DISCOVER_TOOL.name == "discover_tools"
assert (tables.summary["Complete_after_search_term"] <= 1).all()
if article and k == 10 and scorers[0] == "jaccard" and not always_include:
    assert int(j.misses) == 16 and int(j.recovered_search_term) == 9
