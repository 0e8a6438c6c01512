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
#     cost: 6
#     needs: []
# ---

# %% [markdown]
# # Integrations: bring your own registry, plug into real stacks
#
# Three things, all offline:
#
# 1. **Import → evaluate.** Dumped MCP `tools/list` results (here two servers, GitHub and
#    Linear, that both define `create_issue` and `search_issues`) become one toolsel registry
#    with `toolsel import`, and `toolsel sweep` evaluates it against labeled queries.
# 2. **Anthropic tool search.** From a registry and a first-turn selection, the Messages API
#    `tools` array: the search tool and a few tools loaded, everything else
#    `defer_loading: true`; then a client-side search that answers with `tool_reference`
#    blocks. Both are checked against the `anthropic` SDK's own types.
# 3. **LangChain middleware.** The article's 3-turn scenario through a real `create_agent`
#    loop (middleware, tool node, checkpointer) with a scripted model standing in for the LLM.
#
# Given your own `mcp_dumps` and `queries`, part 1 imports and evaluates them; part 2 builds the
# request for `registry` (the checks of its example turn run on the bundled registry only);
# part 3 always runs the article's four tools.

# %% tags=["parameters"]
mcp_dumps: list[str] = ["../data/integrations/mcp_github.json",
                        "../data/integrations/mcp_linear.json"]  # MCP tools/list dumps, one per server
queries: str = "../data/integrations/queries.jsonl"  # labeled queries for the imported registry
scorers: list[str] = ["jaccard", "bm25"]  # scorers to sweep
top_k: list[int] = [1, 3, 5]  # cut-offs to sweep
registry: str = "../data/registry.json"  # registry for the Anthropic request
first_turn: str = "file a bug report on the backend repo"  # user turn that picks the loaded tools
loaded_k: int = 3  # tools loaded up front besides always-include
search_query: str = "move a jira ticket to in progress"  # what the model searches for
out_dir: str = "../reports/10_integrations"  # where tables and figures go

# %%
import contextlib
import io
import json

import pandas as pd
from IPython.display import Markdown, display

from toolsel import Selector, load_registry
from toolsel.cli import main as toolsel
from toolsel.report import markdown as md
from toolsel.io import write_table
from toolsel.report.notebook_setup import setup
from toolsel.report.plan import same_path
from toolsel.report import claims
from toolsel.pages.integrations import (FILES, imported_sentence, imported_table,
                                        loaded_sentence, recall_table, search_sentence,
                                        search_table, sweep_sentence)

out = setup(out_dir, figures=False, precision=None)
log = claims.ClaimLog(out)
bundled_paths = ("../data/integrations/mcp_github.json", "../data/integrations/mcp_linear.json")
bundled_dumps = len(mcp_dumps) == len(bundled_paths) and all(
    same_path(a, b) for a, b in zip(mcp_dumps, bundled_paths))
bundled_registry = same_path(registry, "../data/registry.json")

# %% [markdown]
# ## Import an MCP dump, then evaluate it
#
# Same as on the command line:
#
# ```bash
# toolsel import --from mcp mcp_github.json mcp_linear.json --out registry.json
# toolsel sweep --registry registry.json --queries queries.jsonl --out sweep/
# ```
#
# Names that only one server defines are kept; a name two servers share is qualified on both
# as `server__name` (two underscores: OpenAI and Anthropic accept only `[a-zA-Z0-9_-]` in
# tool names, so the merged registry can be sent to either API as it is).

# %%
imported = out / "registry.json"
# the CLI's own messages go to a buffer: the page shows tables, not terminal output
with contextlib.redirect_stdout(io.StringIO()):
    assert toolsel(["import", "--from", "mcp", *mcp_dumps, "--out", str(imported)]) == 0
reg = load_registry(imported)
merged = imported_table(reg)
write_table(merged, out / FILES["imported"], float_format=None)
display(Markdown(
    log.add(imported_sentence(merged, f"[registry.json]({out.name}/registry.json)"))
    + "\n\n" + md.table(merged, link=f"{out.name}/{FILES['imported']}")))
if bundled_dumps:
    assert "github__create_issue" in reg and "linear__create_issue" in reg

# %%
with contextlib.redirect_stdout(io.StringIO()):
    assert toolsel(["sweep", "--registry", str(imported), "--queries", queries,
                    "--scorers", ",".join(scorers), "--top-k", ",".join(map(str, top_k)),
                    "--out", str(out / "sweep"), "--no-progress", "--no-timings"]) == 0
summary = pd.read_csv(out / "sweep" / "summary.csv")
assert set(summary["scorer"]) == set(scorers)
rk = recall_table(summary)
display(Markdown(log.add(sweep_sentence(summary)) + "\n\n"
                 + md.table(rk, {c: "{:.0%}" for c in rk.columns}, index=True,
                            link=f"{out.name}/{FILES['summary']}")))

# %% [markdown]
# ## Anthropic tool search: what is loaded, what is deferred
#
# The always-include tools and the first turn's top-3 are loaded; every other tool is
# deferred and costs nothing until a search finds it. The server-side search tool (BM25
# variant here; `search="regex"` for the regex one) is never deferred.

# %%
from toolsel.integrations.anthropic import (ToolSearchHandler, build_tools, describe_tools,
                                            validate_tool_result)

big = load_registry(registry)
selector = Selector(big, "bm25", top_k=loaded_k)
loaded = selector.select(first_turn)
tools = build_tools(big, selected=loaded, search="bm25")  # validated against the SDK types
table = describe_tools(tools)
cost = table.groupby("deferred")["definition_chars"].agg(["count", "sum"])
cost.index = cost.index.map({False: "loaded", True: "deferred"})
write_table(table, out / "anthropic_tools.csv", float_format=None)
display(Markdown("The loaded entries of `tools` (everything else is deferred):\n\n"
                 + md.table(table[~table["deferred"]][["name", "kind", "definition_chars"]]
                            .rename(columns={"definition_chars": "JSON characters"}),
                            link=f"{out.name}/anthropic_tools.csv")
                 + "\n\n" + md.table(cost.rename_axis("").rename(
                     columns={"count": "tools", "sum": "JSON characters"}), index=True)))
(out / "anthropic_tools.json").write_text(json.dumps(tools, indent=2) + "\n")
assert tools[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
assert int(table["deferred"].sum()) == len(big) - len(loaded)
display(Markdown(log.add(loaded_sentence(table, first_turn))))

# %% [markdown]
# ### Client-side search with a toolsel scorer
#
# With `search="custom"` the request carries a normal `search_tools` tool instead; when the
# model calls it, `ToolSearchHandler` scores the *deferred* tools and answers with a
# `tool_result` whose content is `tool_reference` blocks. The `tools` list itself never
# changes, so the prompt cache survives the search.

# %%
custom_tools = build_tools(big, selected=loaded, search="custom")
handler = ToolSearchHandler(big, custom_tools, scorer="default", limit=3)
result = handler({"type": "tool_use", "id": "toolu_01", "name": "search_tools",
                  "input": {"query": search_query}})
validate_tool_result(result)
(out / "search_result.json").write_text(json.dumps(result, indent=2) + "\n")
found = search_table(result)
write_table(found, out / FILES["search"], float_format=None)
display(Markdown(
    f"The model searches *{md.escape(search_query)}*; the handler answers with a "
    f"{md.code(result['type'])} for {md.code(result['tool_use_id'])} whose content is "
    + log.add(search_sentence(found))
    + f" ([search_result.json]({out.name}/search_result.json)), in rank order:\n\n"
    + md.table(found, link=f"{out.name}/{FILES['search']}")))
assert all(block["type"] == "tool_reference" for block in result["content"])
if bundled_registry and search_query == "move a jira ticket to in progress":
    assert "jira_transition_issue" in [block["tool_name"] for block in result["content"]]

# %% [markdown]
# ## The LangChain middleware through a real agent loop
#
# `ToolSelectionMiddleware` filters the tools before every model call (latest human message
# as the query), adds `discover_tools`, and keeps pins in the agent's state, per thread. Four
# tools, `top_k=1`, no always-include, as in the article. Thread `B` asks the same as `A`'s
# third turn, after `A` pinned the calculator.

# %%
from toolsel.integrations.langchain_scenario import run_article_scenario

run = run_article_scenario(scorer="jaccard", top_k=1)
calls = run.table()
display(Markdown(md.table(calls.rename(columns={"n_tools": "tools sent", "tools": "tool names",
                                               "after_tool": "after a tool call"}),
                          link=f"{out.name}/middleware_calls.csv")))
write_table(calls, out / "middleware_calls.csv", float_format=None)
first = calls[~calls["after_tool"]]
assert list(first[first["thread"] == "A"]["n_tools"]) == [2, 2, 3]
assert run.pinned == {"A": ["calculator"], "B": []}
display(Markdown("Pinned state per thread: " + "; ".join(
    f"{md.escape(t)}: " + (", ".join(md.code(n) for n in pins) or "nothing pinned")
    for t, pins in run.pinned.items()) + "."))
