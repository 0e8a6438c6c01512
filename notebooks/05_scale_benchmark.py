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
#     cost: 110
#     needs:
#     - registry
# ---

# %% [markdown]
# # Scale: selection latency against registry size
#
# Anthropic's tool search accepts up to 10,000 deferred tools, and public tool-retrieval
# benchmarks pool thousands. The straightforward `select_tools` (a scorer hook called per
# tool) re-tokenizes every tool on every call, so its cost grows with the registry. toolsel
# fits each scorer **once per registry** (sparse term × tool matrices for `jaccard`, `bm25`,
# `tfidf`; a vector matrix for `embedding`, cached on disk by model and tool text) and answers
# a query with a few array operations and a partial partition, never a full sort. Rankings are
# unchanged: ties still go to the earlier tool (`tests/test_scale.py` checks this on
# 3,000-tool random registries against the straightforward implementations, rank_bm25 and
# scikit-learn).
#
# On a registry other than the bundled one this page **times selection on that registry**, on
# this machine, at its size and **grown tenfold**: its own tools, then synthetic ones
# (`toolsel.synthetic`, the way the project's scale benchmark grows registries), timed on the
# same texts. Those timings are this run's output: shown on the page, written to no table
# (they change on every run). On the bundled registry the page instead shows the project's
# committed benchmark (`make benchmark` writes `reports/benchmarks/`; not re-run, because it
# takes minutes and its timings differ on every machine) and only checks the code path, so the
# project's report regenerates identically.

# %% tags=["parameters"]
registry: str = "../data/registry.json"  # a registry to time and check the selectors on
queries: str = ""  # its labeled queries (their texts are timed); empty: tool descriptions
scorers: list[str] = []  # timed on it; empty: the registry's compared scorers
user_timed: int = 200  # timed calls per scorer and registry size on the given registry
grow: int = 10  # the given registry is also timed grown to this many times its size (1: not)
bench_dir: str = "../reports/benchmarks"  # the committed output of `make benchmark`
smoke_tools: int = 500  # registry size of the smoke run (bundled registry)
smoke_queries: int = 40  # timed calls in the smoke run, and calls checked on the registry
out_dir: str = "../reports/05_scale_benchmark"  # where tables and figures go

# %%
from functools import partial
from pathlib import Path

from IPython.display import Markdown, display

from toolsel import load_queries, load_registry
from toolsel.pages import scale_benchmark as page
from toolsel.tables.replication import is_article_registry
from toolsel.tables.benchmark import measure_scale, scale_table
from toolsel.report import claims
from toolsel.report import markdown as md
from toolsel.report.plots import plot_latency_vs_tools, save_figure
from toolsel.scorers.embedding_cache import cache_root
from toolsel.synthetic import grown_registry, synthetic_queries, synthetic_registry
from toolsel.io import write_table
from toolsel.report.notebook_setup import setup
from toolsel.report.plan import report_link

from toolsel.scorers.base import compared_scorers

# the scorers every comparison runs unless told otherwise, from the registry of scorer names
scorers = list(scorers or compared_scorers())
out = setup(out_dir, figures=False, precision=None)
log = claims.ClaimLog(out)
user_reg = load_registry(registry)
user_texts = ([q.query for q in load_queries(queries, user_reg)] if queries
              else [t.description for t in user_reg])
bundled_registry = is_article_registry(user_reg)

# %% [markdown]
# ## The given registry
#
# The indexed `jaccard` selector must select exactly what the straightforward `select_tools`
# with the `jaccard` hook does (the naive loop; checked call by call). On a registry other than
# the bundled one, each scorer's `Selector.select` and the naive loop are then timed on it and
# on it grown tenfold (`user_timed` calls after a warm-up, cycling through the query texts, else
# the tools' descriptions), with each registry's size and text lengths: the speed a user of that
# registry gets on this machine. An embedding scorer encodes the added synthetic tools once
# into its on-disk cache (the same tools every run, so later runs read them back).

# %%
check = scale_table([measure_scale(user_reg, user_texts, "naive",
                                   n_timed=min(smoke_queries, len(user_texts)),
                                   trace_memory=False)])
assert (check.n_tools == len(user_reg)).all() and check.p50_ms.notna().all()
display(Markdown(f"{md.code(Path(registry).name)}: the indexed `jaccard` selection equals "
                 "`select_tools` on every checked call."))

# %%
if bundled_registry:
    display(Markdown(log.fixed(
        "*The bundled registry: its timings are the committed benchmark's 61-tool rows "
        "below (timings are not written into the regenerated report).*",
        "the bundled registry")))
else:
    grown = grown_registry(user_reg, grow) if grow > 1 else None
    sizes = page.given_registry_table(user_reg, user_texts,
                                      "queries" if queries else "tool descriptions",
                                      grown=grown)
    write_table(sizes, out / page.FILES["given"], float_format=None)
    display(Markdown("**This run:** " + log.summary(page.given_registry_sentence(sizes))))
    display(Markdown(md.table(sizes, {"mean chars per tool (name + description)": "{:,.0f}",
                                      "longest tool text (chars)": "{:,.0f}",
                                      "mean words per timed text": "{:.1f}"},
                              link=f"{out.name}/given_registry.csv")))
    timed, labels = [], []
    for label, reg_ in zip(sizes["registry"], [user_reg, grown]):
        for s_ in [*scorers, "naive"]:
            # embedding rows read and fill the usual cache (not a fresh one per row)
            timed.append(measure_scale(reg_, user_texts, s_, n_timed=user_timed,
                                       trace_memory=False, cache_dir=cache_root()))
            labels.append(label)
    mine = page.timing_table(timed, labels)
    assert len(mine) == len(sizes) * (len(scorers) + 1)
    display(Markdown(
        f"**One selection call on {md.code(Path(registry).name)}**, this machine, "
        f"`user_timed={user_timed}` timed calls per scorer and registry (wall clock: it "
        "changes from run to run, so no table of the report holds it):\n\n"
        + md.table(mine, {"build (s)": "{:.3f}", "p50 (ms)": "{:.3f}", "p95 (ms)": "{:.3f}",
                          "× faster than naive": "{:,.2g}×"})))

# %% [markdown]
# ## The committed benchmark
#
# The project's own benchmark (`make benchmark`, run once and committed), shown with the
# bundled registry.

# %%
bench = Path(bench_dir)
committed = page.read_benchmark(bench, report_link(bench, out)[0]) if bundled_registry else None
have_bench = committed is not None
if have_bench:
    # the committed benchmark's tables as cited from claims.json, and linked from the HTML
    # page when they sit inside this report (the project's own reports); a report written
    # elsewhere names their path instead of a relative link out of its folder
    bench_src, bench_link = report_link(bench, out)
    bench_links = {n: f"{bench_link}/{n}" if bench_link else None
                   for n in ("scale.csv", "sweep.csv", "default_latency.csv", "README.md")}
    bench_where = ("" if bench_link else
                   "\n\n*From the project's committed benchmark tables in "
                   + md.code(bench_src) + ", outside this report folder (not copied "
                   "into it).*")
    scale, sweeps, raw = committed.scale, committed.sweeps, committed.raw
    default_latency = committed.default_latency
    targets = page.targets(committed)
    write_table(targets, out / page.FILES["targets"])
    said = page.benchmark_sentences(committed, targets,
                                    bench_links["README.md"] or f"{bench_src}/README.md")
    display(Markdown(log.add(said["machine"])))
elif bundled_registry:
    display(Markdown(f"No committed benchmark in `{bench_dir}` (run `make benchmark`): the "
                     "sections on it are skipped; the smoke run below still runs."))
else:
    display(Markdown(log.skip(
        "the project's committed benchmark", "it times the bundled registry and synthetic "
        "ones on the project's machine; this page timed the given registry instead")))

# %%
if have_bench:
    display(Markdown("### Latency against registry size\n\n" + log.fixed(
        "One full selection call (score every tool, take the top 10 besides the "
        "always-include core, return names in registry order), median and p95, on the "
        "bundled registry and on deterministic synthetic registries of growing size "
        "(`toolsel.synthetic`; the sizes are in the table): `Selector.select` for each "
        "scorer, and the naive loop, `select_tools` with the `jaccard` hook. On a log-log "
        "plot a cost linear in the registry is a line of slope 1.",
        "the committed benchmark's settings (benchmarks/bench_scale.py)")))
    has_default = "default" in set(scale.scorer)
    # one benchmark per figure: the default's own benchmark (another run, other requests)
    # is not drawn on the scale benchmark's lines; it has its own table below
    fig = plot_latency_vs_tools(scale)
    _ = save_figure(fig, out, "latency_vs_tools",
                    alt="Median latency of one select call (ms) against registry size "
                        "(tools), log-log, one line per scorer and the naive loop")
    if has_default:
        note = "The `default` scorer is measured in the scale benchmark itself."
    elif default_latency is not None and "default" in set(default_latency.scorer):
        note = ("The scale benchmark has no `default` rows. The `default` scorer's own "
                f"benchmark ({md.code('default_latency.csv')}: one request at a time, scoring "
                "only, its own requests and run) is a separate table, every scorer in it "
                "measured in the same run; compare within one table, not across them:\n\n"
                + md.table(default_latency[["scorer", "n_tools", "p50_ms", "p95_ms"]].rename(
                    columns={"n_tools": "tools", "p50_ms": "p50 (ms)", "p95_ms": "p95 (ms)"}),
                    {"p50 (ms)": "{:.2f}", "p95 (ms)": "{:.2f}"},
                    link=bench_links["default_latency.csv"]) + bench_where)
    else:
        note = ("The committed benchmark has no `default` rows (neither in `scale.csv` nor a "
                "`default_latency.csv`): the `default` scorer's latency is not shown.")
    display(Markdown(note))

# %%
if have_bench:
    p50 = scale.pivot_table(index="scorer", columns="n_tools", values="p50_ms", sort=False)
    p50.columns = [f"{c:,} tools" for c in p50.columns]
    display(Markdown("**Median latency of one `select` call (ms)**, by registry size:\n\n"
                     + md.table(p50, {c: "{:.3f}" for c in p50.columns}, index=True)))
    top = scale[scale.n_tools == scale.n_tools.max()]
    cols = {"scorer": "scorer", "build_s": "build (s)", "p50_ms": "p50 (ms)",
            "p95_ms": "p95 (ms)", "speedup_vs_naive": "× faster than naive",
            "index_mb": "index (MB)", "maxrss_mb": "peak RSS (MB)",
            "cached_load_s": "cached load (s)"}
    shown = top[[c for c in cols if c in top.columns]].rename(columns=cols)
    display(Markdown(
        log.add(said["largest"])
        + " (the embedding's first encoding of every tool is in `first_encode_s` of the "
        "CSV):\n\n"
        + md.table(shown, {"build (s)": "{:.3f}", "p50 (ms)": "{:.3f}", "p95 (ms)": "{:.3f}",
                           "× faster than naive": "{:,.0f}×", "index (MB)": "{:.2f}",
                           "peak RSS (MB)": "{:,.0f}", "cached load (s)": "{:.3f}"},
                   link=bench_links["scale.csv"]) + bench_where))
    if "interleaved" in said:  # the same CSV holds a second ratio: say which one is shown
        display(Markdown(log.add(said["interleaved"])))

# %%
if have_bench:  # the committed benchmark's own numbers
    big = scale[scale.n_tools == 10_000].set_index("scorer")
    small = scale[scale.n_tools == 1_000].set_index("scorer")
    assert set(scale.n_tools) == {61, 1_000, 4_000, 10_000}
    assert set(big.index) == {"jaccard", "bm25", "tfidf", "embedding", "naive"}
    # the naive baseline grows with the registry: ~10x the tools, several times the time
    assert big.loc["naive", "p50_ms"] > 5 * small.loc["naive", "p50_ms"]
    # every indexed lexical selector beats it by a wide margin at 10,000 tools
    for s in ("jaccard", "bm25", "tfidf"):
        assert big.loc[s, "speedup_vs_naive"] > 10, s
    # a cached embedding index loads much faster than the first encoding
    assert big.loc["embedding", "cached_load_s"] < big.loc["embedding", "first_encode_s"] / 10

# %%
if have_bench:
    display(Markdown("### Sweeps\n\n" + log.fixed(
        "A full `toolsel.eval.sweep` (4 scorers × 6 top_k values) on the 4,000-tool "
        "synthetic registry: first with a cold embedding cache (every tool encoded), then "
        "with the cache warm.", "the committed benchmark's settings (benchmarks/bench_sweep.py)")))
    sw = sweeps.assign(configuration=[f"{r.n_scorers} scorers × {r.n_top_k} top_k"
                                      for r in sweeps.itertuples()])
    sw = sw[["cache", "n_tools", "n_queries", "configuration", "total_s",
             "embedding_fit_s", "maxrss_mb"]].rename(columns={
                 "n_tools": "tools", "n_queries": "queries", "total_s": "total (s)",
                 "embedding_fit_s": "embedding fit (s)", "maxrss_mb": "peak RSS (MB)"})
    display(Markdown(md.table(sw, {"total (s)": "{:.1f}", "embedding fit (s)": "{:.2f}",
                                   "peak RSS (MB)": "{:,.0f}"},
                              link=bench_links["sweep.csv"]) + bench_where))
    assert (sweeps.n_tools == 4_000).all() and {1_000, 2_000} <= set(sweeps.n_queries)

# %%
if have_bench:
    display(Markdown(
        "### Targets set for the indexed selectors\n\nEach target is evaluated on the "
        "committed benchmark's rows (synthetic registries, the project's build machine), "
        "not on this run.\n\n" + md.table(targets, {
            "measured": "{:,.3f}", "met": partial(md.yes_no, missing="n/a")},
            link=f"{out.name}/targets.csv")))
    display(Markdown(log.add(said["targets"])))

# %%
if bundled_registry:
    # the same measurement on a small synthetic registry, to show the code path works here;
    # its timings are checked, not shown (the executed report must regenerate identically)
    reg = synthetic_registry(smoke_tools, seed=0)
    texts = [q.query for q in synthetic_queries(reg, 100, seed=0)]
    smoke = scale_table([measure_scale(reg, texts, s, n_timed=smoke_queries,
                                       trace_memory=False) for s in ("jaccard", "bm25", "naive")])
    assert len(smoke) == 3 and (smoke.n_tools == smoke_tools).all()
    assert smoke.p50_ms.notna().all()
    # the smoke run's size is a setting of this page (its parameters), shown as such
    display(Markdown(
        f"### Smoke run\n\nThe same measurement on `smoke_tools={smoke_tools}` synthetic "
        f"tools, `smoke_queries={smoke_queries}` timed calls each for "
        + ", ".join(f"`{s}`" for s in smoke.scorer) + "; every call measured, and the "
        "indexed `jaccard` selection equal to `select_tools` on each. Its timings are "
        "checked, not shown: they change with every run."))
