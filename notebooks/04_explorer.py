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
#     cost: 3
#     needs:
#     - registry
# ---

# %% [markdown]
# # Explorer: one query, the whole registry, scorers side by side
#
# Type a query and see how each scorer ranks every tool, what it would send at your K (plus
# the tools named in `always_include`, sent outside K), and what that costs. The convention is
# the one of pages 00-03: always-include is what the parameter names (by default none), and a tool the registry marks `always_include` competes like any other, so a
# rank here is the rank those pages give. Each panel has its own scorer, indexed
# fields (none selected: the scorer's defaults), `top_k` and always-include set. The panels
# start with Jaccard (the reference scorer), BM25 and the `default` scorer the README
# recommends.
#
# The panels are Jupyter widgets: they recompute on every change while a kernel runs this
# notebook (`toolsel explore --registry R --queries Q` opens a copy on your files in
# JupyterLab). An exported page has no kernel, so it shows no panels; the tables below show
# what they showed for the example query: on the bundled registry a miss of its benchmark; on
# any other registry one from its own data (its first labeled query, else a tool's
# description; the page says which). Every labeled query, ranked by every scorer, with
# K to move, is in the report folder's [`explorer.html`](explorer.html): one file that works
# offline in a browser, no kernel needed.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # tool registry
queries: str = ""  # optional labeled queries: the first one is shown if expected is not a tool
scorers: list[str] = ["jaccard", "bm25", "default"]  # one panel per scorer
query: str = "file a bug report on the backend repo"  # the query shown first
top_k: list[int] = [10]  # tools sent besides always-include: 10 if given, else the largest that filters
always_include: list[str] = []  # names sent every turn outside K (as on pages 00-03; default: none)
expected: str = "github_create_issue"  # a tool to look for in the default query's rankings
out_dir: str = "../reports/04_explorer"  # where tables go

# %%

from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.eval.metrics import payload_chars
from toolsel.tables.replication import is_article_registry
from toolsel.pages import explorer as page
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.report.explorer import build_explorer, rankings_markdown
from toolsel.report.cutoffs import headline_k
from toolsel.report.plan import same_path
from toolsel.io import write_table
from toolsel.report.notebook_setup import setup

out = setup(out_dir, figures=False, precision=None)
log = claims.ClaimLog(out)
reg = load_registry(registry)
always = sorted(set(always_include), key=reg.index)
k = headline_k(top_k, len(reg) - len(always))
ours = same_path(registry, "../data/registry.json") and is_article_registry(reg)
query, expected, note = page.shown_query(reg, load_queries(queries, reg) if queries else [],
                                         query, expected, bundled=ours)
if note:
    display(Markdown(note))

explorer = build_explorer(reg, scorers, query=query, top_k=k, always_include=always)
views = explorer.update()
display(Markdown(f"**Query:** \"{md.escape(query)}\" · **top_k={k}**"
                 + (f" · always sent, outside top_k: {', '.join(md.code(a) for a in always)}"
                    if always else "")
                 + (f" · looking for {md.code(expected)}" if expected else "")))
display(explorer.widget)

# %% [markdown]
# ## The default query, ranked by each scorer
#
# The top of each scorer's ranking (✓ marks the tools sent), then what each sends
# and costs. Every tool's rank and score per scorer is in the CSVs.

# %%
for v in views:
    write_table(v.ranking, out / page.ranking_file(v.scorer))
display(Markdown(
    rankings_markdown(views, rows=max(15, k + 3), highlight=expected or None)
    + "\n\nAll tools, ranked: " + ", ".join(
        f"[ranking_{md.escape(v.scorer)}.csv]({out.name}/ranking_{v.scorer}.csv)"
        for v in views) + "."))

# %%
if expected:
    display(Markdown(log.add(page.rank_sentence(views, expected, k))))

# %%
# checks (they stop the report when a number is off; nothing is shown)
assert len(views) == len(scorers)
for v in views:
    assert len(v.ranking) == len(reg)
    assert len(v.sent) == min(k, len(reg) - len(always)) + len(always)
    assert set(always) <= set(v.sent)
    assert v.ranking[v.ranking.sent].shape[0] == len(v.sent)
    assert 0 < v.payload_chars <= payload_chars(reg)
# changing a widget recomputes the panel; it is set back, so the saved widgets show K as above
small = max(1, k - 1)
explorer.panels[0]["top_k"].value = small
assert len(explorer.views[0].sent) == min(small, len(reg) - len(always)) + len(always)
explorer.panels[0]["top_k"].value = k
assert all(p["top_k"].value == k for p in explorer.panels)
assert [len(v.sent) for v in explorer.views] == [len(v.sent) for v in views]
# the article's rank holds on the article's data only: the bundled registry file, unchanged
# (61 tools, the article's names), with its query, scorers and K
if (ours and query == "file a bug report on the backend repo"
        and scorers[:2] == ["jaccard", "bm25"] and expected == "github_create_issue"
        and k == 10):
    jac, bm = (v.ranking.set_index("tool") for v in views[:2])
    # the article's miss at K=10: rank 14 of all tools, as page 02 ranks it (one
    # always-include convention: tests/test_notebooks.py compares the two pages' tables)
    assert jac.loc["github_create_issue", "rank"] == 14
    assert bm.loc["github_create_issue", "rank"] <= k  # BM25 sends it
