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
# # A default scorer, tested on five registry styles
#
# No single scorer wins everywhere. Term matching (BM25, TF-IDF) is precise when requests use
# the words tools are named with, and blind to paraphrase; sentence embeddings handle
# paraphrase, blur exact names, and squeeze a request that needs several tools into one
# vector. A user picks one scorer without knowing which kind of registry comes next month.
#
# The `default` scorer (`toolsel.scorers.fusion`) combines both, with no per-registry tuning:
#
# 1. the request is split into **clauses** ("…, and …", "then", sentences), each scored too;
#    the encoder reads the whole request once, and a clause's vector is the mean of its
#    tokens' output vectors from that pass (the clause read in context, at no extra cost);
# 2. per segment, **BM25** (name words counted twice, description, parameter names; stop
#    words dropped from the query) and **MiniLM embedding** cosine;
# 3. each signal **normalised per query** (mean tool 0, best tool 1; no spread → 0), then
#    summed with prior weights 0.4 / 0.6;
# 4. a tool keeps its **best segment score** (the whole request gets a 0.1 bonus), so each
#    clause's best tools rise together.
#
# It is measured here on five registries of very different styles, all written for toolsel
# (`data/styles`; no public registry was measured): `api` (camelCase endpoints with
# parameter schemas, terse descriptions), `plugin` (brand names and marketing blurbs, no
# parameters), `pooled` (the workspace registry plus near-duplicate servers plus both other
# styles), and two written later as real catalogs look: `marketplace` (API listings with
# boilerplate descriptions, near-identical endpoints across providers, chatty 3–5-sentence
# requests) and `openapi` (2,533 operations derived from OpenAPI-like specs, the meaning in
# parameter names). Every design choice was made on the **dev** requests; this notebook reports
# the **test** requests, with bootstrap 95% intervals. That it holds up on a registry of another
# kind is a hope these styles were chosen to test, not a result.
#
# Given a `registry` and its `queries`, the same measurements run on that registry instead of
# the bundled styles (its `test` requests when the file is split, else every request).

# %% tags=["parameters"]
registry: str = ""  # a registry to evaluate instead of the bundled styles; empty: the styles
queries: str = ""  # labeled queries of that registry
styles_root: str = "../data/styles"  # directory holding <style>/registry.json + queries.jsonl
styles: list[str] = ["api", "plugin", "pooled", "marketplace", "openapi"]  # styles compared
split: str = "test"  # requests reported (the design was chosen on "dev")
scorers: list[str] = ["jaccard", "bm25", "tfidf", "embedding", "default"]  # scorers compared
n_boot: int = 2000  # bootstrap resamples
seed: int = 0  # bootstrap seed
latency_csv: str = "../reports/benchmarks/default_latency.csv"  # from `make benchmark`
# the same on 3-5-sentence requests (the marketplace style's), from `make benchmark`
latency_long_csv: str = "../reports/benchmarks/default_latency_long.csv"
out_dir: str = "../reports/06_default_scorer"  # where tables and figures go

# %%
from pathlib import Path

import matplotlib
import pandas as pd

from IPython.display import Markdown, display

from toolsel.eval.compare_styles import (SINGLE_SCORERS, compare_styles, given_style, load_styles,
                                    plot_style_comparison, versus_best)
from toolsel.eval.discovery import filter_split
from toolsel.report import markdown as md
from toolsel.report.plots import save_figure, setup_style
from toolsel.scorers.fusion import FusionScorer, split_clauses

setup_style()
matplotlib.rcParams["svg.hashsalt"] = "toolsel"
out = Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
pd.set_option("display.precision", 3)

# %% [markdown]
# ## The registries

# %%
bundled = not registry
if bundled:
    data = load_styles(styles, styles_root, split=split)
else:
    name, (given_reg, given_queries), has_split = given_style(registry, queries)
    styles = [name]
    if not has_split:
        split = "all"
    data = {name: (given_reg, filter_split(given_queries, split))}
    display(Markdown(f"Evaluating the given registry (`{name}`: {len(given_reg)} tools) on "
                     + (f"its **{split}** requests." if has_split else
                        "**every** request (the file has no `split`).")))
sizes = pd.DataFrame([{"style": s, "tools": len(reg), "requests": len(qs),
                       "multi-tool requests": sum(len(q.expected) > 1 for q in qs),
                       "tools with parameters": sum(t.parameters is not None for t in reg)}
                      for s, (reg, qs) in data.items()])
display(Markdown(md.table(sizes)))

# %%
if bundled:
    assert (sizes["multi-tool requests"] >= 0.3 * sizes["requests"]).all()
examples = []
for s, (reg, qs) in data.items():
    q = qs[min(1, len(qs) - 1)]
    examples.append({"style": s, "first tool": reg[0].name,
                     "its description": reg[0].description, "a request": q.query,
                     "needs": ", ".join(q.expected)})
display(Markdown("One tool and one request of each:\n\n" + md.table(pd.DataFrame(examples))))

# %% [markdown]
# ## Clauses: one request, several intents
#
# A request is split where a new request starts; short fragments stay joined ("rock and roll").
# The whole request is always scored too.

# %%
example = ("Plan a Barcelona trip for me: flights from London on July 8 back on July 15, "
           "a hotel for those dates, and a rental car at the airport.")
clauses = split_clauses(example)
display(Markdown(f"*{md.escape(example)}* is scored whole and as {len(clauses)} clauses:\n\n"
                 + "\n".join(f"{i}. {md.escape(c)}" for i, c in enumerate(clauses, 1))))

# %%
assert len(split_clauses(example)) == 3 and split_clauses("rock and roll music") == [
    "rock and roll music"]

# %% [markdown]
# ## Every scorer on every style (test requests)

# %%
comparison = compare_styles(data, scorers, n_boot=n_boot, seed=seed, latency_queries=0)
comparison.write(out)
table = comparison.table()
shown = pd.DataFrame({"style": table["style"], "scorer": table["scorer"],
                      **{m: [md.interval(r[m], r[f"{m}_low"], r[f"{m}_high"], percent=False)
                             for _, r in table.iterrows()]
                         for m in ("R@5", "Complete@10", "MRR")},
                      "requests": table["n_queries"]})
display(Markdown("Mean over the requests [bootstrap 95% interval]:\n\n"
                 + md.table(shown, link=f"{out.name}/style_table.csv", max_rows=None)))

# %%
fig = plot_style_comparison(comparison.summary, scorers=scorers)
_ = save_figure(fig, out, "style_comparison")

# %% [markdown]
# ## Is the default at least as good as the best single scorer on each style?
#
# Paired over the same requests: the difference default − best single scorer (by mean) on
# that style, with a paired bootstrap 95% interval. `matches` = the interval reaches 0 or
# above (the default is not shown to be worse).

# %%
singles = [s for s in SINGLE_SCORERS if s in scorers]
if "default" in scorers and singles:
    vs = versus_best(comparison, "default", singles, n_boot=n_boot, seed=seed)
    vs.to_csv(out / "default_vs_best.csv", index=False, float_format="%.6f",
              lineterminator="\n")
    vshown = pd.DataFrame({
        "style": vs["style"], "metric": vs["metric"], "best single": vs["best_single"],
        "its mean": vs["best_mean"], "default": vs["candidate_mean"],
        "default − best [95%]": [f"{r.diff:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}]"
                                 for r in vs.itertuples()],
        "verdict": ["better" if r.diff_low > 0 else "not shown worse, loss possible"
                    if r.diff_low < 0 <= r.diff_high else "equal" if r.diff_high >= 0
                    else "worse" for r in vs.itertuples()]})
    display(Markdown(md.table(vshown, {"its mean": "{:.3f}", "default": "{:.3f}"},
                              link=f"{out.name}/default_vs_best.csv", max_rows=None)))
else:
    vs = None
    display(Markdown("Skipped: `scorers` needs `default` and at least one single scorer."))

# %%
if vs is not None:
    target = vs[vs["metric"].isin(["R@5", "Complete@10"])]
    if bundled:
        assert target["matches"].all(), target[~target["matches"]]
    possible_loss = vs[vs["diff_low"] < 0]
    below = vs[vs["diff"] < 0]
    display(Markdown(
        "On the means the default is "
        + ("at least the best single scorer everywhere" if below.empty else
           "below the best single scorer on "
           + ", ".join(f"{r.style} {r.metric} ({r.diff:+.3f})" for r in below.itertuples()))
        + ". "
        + ("The paired interval includes a loss on "
           + ", ".join(f"{r.style} {r.metric}" for r in possible_loss.itertuples())
           + ": there, these requests cannot rule out that the best single scorer is better."
           if len(possible_loss) else "No paired interval includes a loss.")))
    if not bundled:
        display(Markdown("The default " + ("matches" if target["matches"].all() else
                                           "**does not match**")
                         + " the best single scorer on R@5 and Complete@10 here (its paired "
                         "interval reaches zero or above)."))

# %% [markdown]
# ## Latency
#
# Milliseconds per request at 4,000 tools, scored one at a time as a selector serves a user
# turn: `benchmarks/bench_default.py`, run by `make benchmark` (wall clock on 2 cores; kept out
# of the regenerated tables, so this notebook shows the committed benchmark tables). First on
# the requests of `api`, `plugin` and `pooled`, then on the marketplace requests of three or
# more sentences (about four clauses each), where the target is 30 ms p95.

# %%
names = {"n_tools": "tools", "n_queries": "requests", "fit_s": "fit (s)", "mean_ms": "mean (ms)",
         "p50_ms": "p50 (ms)", "p95_ms": "p95 (ms)", "max_ms": "max (ms)"}
for path, label, limit in ((latency_csv, "all requests", "p50_ms"),
                           (latency_long_csv, "3-5-sentence requests", "p95_ms")):
    if not Path(path).exists():
        display(Markdown(f"No benchmark table at {md.code(path)}: run `make benchmark`."))
        continue
    latency = pd.read_csv(path)
    assert (latency.loc[latency.scorer == "default", limit] <= 30).all(), (path, limit)
    display(Markdown(f"**{label}** ({md.code(Path(path).name)}):\n\n" + md.table(
        latency.rename(columns=names),
        {c: "{:.2f}" for c in ("fit (s)", "mean (ms)", "p50 (ms)", "p95 (ms)", "max (ms)")})))

# %% [markdown]
# ## Why each piece (dev requests only)
#
# The ablation the design was chosen on: the default against itself without clause
# splitting, with each clause encoded on its own (one more encoder pass per clause, as before
# clauses were read in context: slower, see the latency tables), with equal weights, with
# `weights="auto"` (each signal weighted by how sharply it singles out a few tools), and each
# signal alone (with clauses). The full dev grid is `benchmarks/tune_default.py`.

# %%
variants = {"default": FusionScorer(), "no clauses": FusionScorer(clauses=False),
            "clauses encoded apart": FusionScorer(clause_vectors="separate"),
            "equal weights": FusionScorer(weights=(0.5, 0.5)),
            "auto weights": FusionScorer(weights="auto"),
            "lexical only": FusionScorer(semantic=None),
            "embedding only": FusionScorer(lexical=None)}
if bundled:
    dev_data = load_styles(styles, styles_root, split="dev")
else:
    dev_data = {name: (given_reg, filter_split(given_queries, "dev" if has_split else "all"))}
    if not has_split:
        display(Markdown("No `split`: the ablation runs on every request (the same ones as "
                         "above), so it describes this set rather than choosing anything."))
dev = compare_styles(dev_data, variants, n_boot=n_boot, seed=seed, latency_queries=0)
ablation = dev.table()[["style", "scorer", "R@5", "Complete@10", "MRR", "n_queries"]]
ablation.to_csv(out / "dev_ablation.csv", index=False, float_format="%.6f",
                lineterminator="\n")
wide = ablation.pivot(index="scorer", columns="style", values=["R@5", "Complete@10"]).loc[
    list(variants)]
wide.columns = [f"{style} {metric}" for metric, style in wide.columns]
wide = wide[[f"{st} {m}" for st in dict.fromkeys(ablation["style"]) for m in ("R@5", "Complete@10")]]
display(Markdown("Dev requests, mean per request:\n\n"
                 + md.table(wide.rename_axis("variant"), {c: "{:.3f}" for c in wide.columns},
                            index=True, link=f"{out.name}/dev_ablation.csv", max_rows=None)))

# %%
abl = ablation.set_index(["style", "scorer"])
for s in (styles if bundled else []):
    # on dev the fused scorer is within a few requests of the better signal alone, or above it
    for metric in ("R@5", "Complete@10"):
        best_alone = max(abl.loc[(s, "lexical only"), metric],
                         abl.loc[(s, "embedding only"), metric])
        assert abl.loc[(s, "default"), metric] >= best_alone - 0.05, (s, metric)
        # what "Reading it" says: clauses read in context do at least as well as apart
        assert abl.loc[(s, "default"), metric] >= abl.loc[(s, "clauses encoded apart"), metric]
beaten = [f"on {s} the {v.replace(' only', '')} signal alone ("
          + ", ".join(f"{m} {abl.loc[(s, v), m]:.3f} vs {abl.loc[(s, 'default'), m]:.3f}"
                      for m in ("R@5", "Complete@10")
                      if abl.loc[(s, v), m] > abl.loc[(s, "default"), m]) + ")"
          for s in dict.fromkeys(ablation["style"]) for v in ("lexical only", "embedding only")
          if any(abl.loc[(s, v), m] > abl.loc[(s, "default"), m] for m in ("R@5", "Complete@10"))]
display(Markdown("On dev, a signal alone beat the default " + "; ".join(beaten) + "."
                 if beaten else "On dev, no signal alone beat the default on R@5 or Complete@10."))

# %% [markdown]
# ## Reading it (the bundled styles)
#
# - On **plugin-style** blurbs the embedding scorer is the best single scorer by far, and the
#   lexical scorers are poor: the fused default keeps the embedding's recall on test (on dev
#   the embedding alone was slightly ahead, as the line above the reading says).
# - On **API-style** endpoints the embedding scorer leads on these requests too; the default
#   matches it. (On public benchmarks of this style, whose requests are long and full of
#   entity names, TF-IDF led embeddings: there the lexical half carries the default.)
# - On the **pooled** registry, near-duplicate servers (Slack vs Mattermost vs Teams, GitHub vs
#   GitLab) are told apart by a server's name, which only term matching weighs: the default
#   beats every single scorer on the means (the verdict table says where the interval
#   excludes a loss).
# - On **marketplace** listings (boilerplate descriptions, chatty multi-sentence requests)
#   the embedding scorer is the best single scorer and the default is above it on the means;
#   every paired interval there still includes a loss (56 test requests).
# - On the **OpenAPI-derived** registry (2,533 terse operations) the lexical half matters:
#   the default leads the embedding scorer by the widest margin of any style, clearest on
#   Complete@10.
# - **Clause splitting** (dev ablation) lifts Complete@10 where one request names several
#   servers (pooled) or asks for several things in several sentences (openapi, marketplace).
#   **Reading clauses in context** (pooled from the whole request's one encoder pass) scored
#   at least as well on dev as encoding each clause on its own on every style here (marketplace
#   R@5 clearly better), and it costs one encoder pass per request instead of one per clause.
#
# Limits: these registries and requests were written for toolsel (the sizes are in the first
# table), so intervals are wide: one miss moves a style's R@5 by 1–2 points, and "at least as
# good as the best single scorer" holds for the means, not always for the intervals.
