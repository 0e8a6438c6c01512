"""Every scorer on every registry style: R@5, Complete@10, MRR with bootstrap intervals.

The evaluation registries under ``data/styles/`` differ in kind, not only in size: ``api``
(camelCase endpoints with parameter schemas and terse descriptions), ``plugin`` (marketing
blurbs, brand names, no parameters) and ``pooled`` (many servers with near-duplicate tools).
:func:`compare_styles` sweeps each scorer over each style's queries of one split and returns
per-query metrics, 95% intervals (bootstrap; Wilson's for the 0/1 Complete@10), and per-query
latency; :func:`versus_best` asks, per
style and metric, whether a candidate (the ``default`` scorer) is at least as good as the best
single scorer there, with a paired bootstrap interval of the difference;
:func:`plot_style_comparison` draws the table; :func:`which_scorer_markdown` writes the README's
"Which scorer?" table and verdicts from the committed tables, so no number there is typed by hand.

Metrics are per request over the whole registry (no always-include set: every tool competes):
``R@5`` share of required tools in the top 5, ``Complete@10`` 1 if every required tool is in
the top 10, ``MRR`` mean reciprocal rank of the first required tool. Means, intervals and
verdicts are deterministic for a seed; latency (wall clock) is kept apart from the tables.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..data import Query, Registry, load_queries, load_registry
from ..scorers.base import Scorer
from ..selection import fitted_scorer
from .stats import bootstrap_intervals, paired_comparison, with_wilson
from .sweep import sweep

__all__ = ["STYLES", "NEW_STYLES", "SINGLE_SCORERS", "METRICS", "style_dir", "load_style",
           "load_styles", "StyleComparison", "compare_styles", "versus_best",
           "plot_style_comparison", "which_scorer_markdown", "which_scorer_from_reports",
           "update_readme_which_scorer", "README_MARKERS", "given_style", "which_scorer_claims",
           "BINARY_METRICS", "POLICY_MARKERS", "which_policy_from_reports"]

#: The evaluation registry styles shipped in ``data/styles``.
STYLES = ("api", "plugin", "pooled")
#: The styles added for issue 15 (marketplace listings, OpenAPI-derived operations), kept out
#: of :data:`STYLES` so notebook 06 stays fast; notebook 12 evaluates them.
NEW_STYLES = ("marketplace", "openapi")
#: The single-signal scorers the default must match.
SINGLE_SCORERS = ("jaccard", "bm25", "tfidf", "embedding")
#: Metric columns of the comparison, and the sweep cut-off each is read at.
METRICS = {"R@5": ("R@k", 5), "Complete@10": ("Complete@k", 10), "MRR": ("RR", 10)}
_FLOAT_FORMAT = "%.6f"
_DATA = Path(__file__).resolve().parents[2] / "data" / "styles"


def style_dir(style: str, root: str | Path | None = None) -> Path:
    """The directory of one style (``root`` defaults to the repository's ``data/styles``)."""
    base = _DATA if root is None else Path(root)
    path = base / style
    if not (path / "registry.json").exists():
        known = sorted(p.name for p in base.iterdir() if (p / "registry.json").exists()) \
            if base.is_dir() else []
        raise FileNotFoundError(f"no style {style!r}: {path / 'registry.json'} does not exist"
                                f" (styles in {base}: {', '.join(known) or 'none'})")
    return path


def load_style(style: str, root: str | Path | None = None, *,
               split: str | None = None) -> tuple[Registry, list[Query]]:
    """``(registry, queries)`` of one style; ``split`` keeps only ``dev`` or ``test`` queries."""
    path = style_dir(style, root)
    registry = load_registry(path / "registry.json")
    queries = load_queries(path / "queries.jsonl", registry)
    if split is not None:
        if split not in ("dev", "test"):
            raise ValueError(f"split must be 'dev', 'test' or None, got {split!r}")
        queries = [q for q in queries if q.split == split]
        if not queries:
            raise ValueError(f"{path / 'queries.jsonl'}: no queries with split {split!r}")
    return registry, queries


def load_styles(styles: Sequence[str] = STYLES, root: str | Path | None = None, *,
                split: str | None = "test") -> dict[str, tuple[Registry, list[Query]]]:
    """:func:`load_style` for each style, in order."""
    return {s: load_style(s, root, split=split) for s in styles}


def given_style(registry: str | Path, queries: str | Path
                ) -> tuple[str, tuple[Registry, list[Query]], bool]:
    """A user's registry and queries as one style: ``(name, (registry, queries), has_split)``.

    The name is the registry file's stem, or its folder's name for a file called
    ``registry.json`` (``data/styles/plugin/registry.json`` → ``plugin``); ``has_split`` says
    whether any query carries a dev/test ``split``.
    """
    reg = load_registry(registry)
    qs = load_queries(queries, reg)
    stem = Path(registry).stem
    name = stem if stem != "registry" else (Path(registry).resolve().parent.name or stem)
    return name, (reg, qs), any(q.split for q in qs)


@dataclass
class StyleComparison:
    """Tables of :func:`compare_styles`.

    ``query_metrics``: one row per style × scorer × query with ``R@5, Complete@10, MRR`` and
    ``n_required``. ``summary``: one row per style × scorer × metric with ``mean, low, high,
    n_queries`` (95%: percentile bootstrap; Wilson score interval for the 0/1 metrics of
    :data:`BINARY_METRICS`). ``latency``: per-query milliseconds per style ×
    scorer (wall clock: shown, never written with the tables).
    """

    query_metrics: pd.DataFrame
    summary: pd.DataFrame
    latency: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """The summary as one row per style × scorer, ``metric``, ``metric_low``, ``metric_high``."""
        rows = []
        for (style, scorer), g in self.summary.groupby(["style", "scorer"], sort=False):
            row = {"style": style, "scorer": scorer}
            for r in g.itertuples():
                row[r.metric] = r.mean
                row[f"{r.metric}_low"] = r.low
                row[f"{r.metric}_high"] = r.high
            row["n_queries"] = int(g["n_queries"].iloc[0])
            rows.append(row)
        return pd.DataFrame(rows)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``style_summary.csv`` (long), ``style_table.csv`` (wide) and
        ``style_query_metrics.csv``; deterministic (no timings)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, frame in (("style_summary", self.summary), ("style_table", self.table()),
                            ("style_query_metrics", self.query_metrics)):
            path = out / f"{name}.csv"
            frame.to_csv(path, index=False, float_format=_FLOAT_FORMAT, lineterminator="\n")
            paths.append(path)
        return paths


def _per_query(result, style: str) -> pd.DataFrame:
    qm = result.query_metrics
    frames = []
    for metric, (column, k) in METRICS.items():
        part = qm.loc[qm["top_k"] == k, ["scorer", "query_id", "n_required", column]]
        frames.append(part.rename(columns={column: metric}).set_index(
            ["scorer", "query_id"]))
    wide = frames[0]
    for f in frames[1:]:
        wide = wide.join(f.drop(columns="n_required"))
    wide = wide.reset_index()
    wide.insert(0, "style", style)
    return wide


def _latency(scorers: Mapping[str, str | Scorer], registry: Registry,
             queries: Sequence[Query], n: int) -> list[float]:
    out = []
    texts = [q.query for q in queries][:n]
    for spec in scorers.values():
        scorer = fitted_scorer(spec, registry)
        scorer.score(texts[0])  # warm-up: model load, caches
        t0 = time.perf_counter()
        for text in texts:
            scorer.score(text)
        out.append((time.perf_counter() - t0) / max(len(texts), 1) * 1000)
    return out


#: Metrics that are 0 or 1 per request: their interval is Wilson's, not a bootstrap (which
#: collapses to a point at 0 or 1 and is too narrow on small n).
BINARY_METRICS = ("Complete@10",)


def _wilson_for_binary(ci: pd.DataFrame, per_query: pd.DataFrame) -> pd.DataFrame:
    """Replace the bootstrap interval of each 0/1 metric by the Wilson score interval."""
    return with_wilson(ci, per_query, BINARY_METRICS, keys=("scorer",))


def compare_styles(styles: Mapping[str, tuple[Sequence, Sequence[Query]]],
                   scorers: Sequence[str] | Mapping[str, str | Scorer] = (*SINGLE_SCORERS,
                                                                          "default"), *,
                   n_boot: int = 2000, seed: int = 0,
                   latency_queries: int = 20) -> StyleComparison:
    """Sweep every scorer over every style; bootstrap the means per style.

    Parameters
    ----------
    styles : mapping ``{style: (registry, queries)}``
        E.g. :func:`load_styles` (test split by default).
    scorers : scorer names, or a mapping ``{label: name or Scorer}`` (variants of one scorer)
    n_boot, seed : bootstrap resamples and seed (same resamples for every scorer of a style)
    latency_queries : int
        Requests timed one at a time per style × scorer (0 skips timing).
    """
    if not styles:
        raise ValueError("no styles to compare")
    if not isinstance(scorers, Mapping):
        scorers = {name: name for name in scorers}
    scorers = dict(scorers)
    per_query, summaries, latency = [], [], []
    for style, (registry, queries) in styles.items():
        result = sweep(registry, queries, scorers, top_k=sorted({k for _, k in
                                                                  METRICS.values()}))
        pq = _per_query(result, style)
        per_query.append(pq)
        ci = bootstrap_intervals(pq.assign(top_k=0), metrics=list(METRICS), n_boot=n_boot,
                                 seed=seed)
        ci = _wilson_for_binary(ci, pq)
        summaries.append(ci.drop(columns="top_k").assign(style=style))
        if latency_queries:
            ms = _latency(scorers, registry, queries, latency_queries)
            latency.extend({"style": style, "scorer": s, "n_tools": len(registry),
                            "ms_per_query": m} for s, m in zip(scorers, ms))
    summary = pd.concat(summaries, ignore_index=True)[
        ["style", "scorer", "metric", "mean", "low", "high", "n_queries"]]
    return StyleComparison(pd.concat(per_query, ignore_index=True), summary,
                           pd.DataFrame(latency, columns=["style", "scorer", "n_tools",
                                                          "ms_per_query"]))


def versus_best(comparison: StyleComparison, candidate: str = "default",
                singles: Sequence[str] = SINGLE_SCORERS, *,
                metrics: Sequence[str] = tuple(METRICS), n_boot: int = 2000,
                seed: int = 0) -> pd.DataFrame:
    """Per style × metric: the best single scorer, and whether ``candidate`` matches it.

    ``diff`` is candidate − best (mean over queries) with a paired bootstrap interval
    ``diff_low, diff_high``. ``matches`` is true when the interval reaches 0 or above, i.e.
    the candidate is not shown to be worse than the best single scorer on that style.
    """
    qm = comparison.query_metrics
    rows = []
    for style, g in qm.groupby("style", sort=False):
        for metric in metrics:
            means = g[g["scorer"].isin(singles)].groupby("scorer", sort=False)[metric].mean()
            # best by mean; ties go to the scorer listed first
            best = max(singles, key=lambda s: (means.get(s, -np.inf), -singles.index(s)))
            pair = paired_comparison(g.assign(top_k=0), metric, scorers=[candidate, best],
                                     n_boot=n_boot, seed=seed).iloc[0]
            rows.append({"style": style, "metric": metric, "best_single": best,
                         "best_mean": pair["mean_b"], "candidate": candidate,
                         "candidate_mean": pair["mean_a"], "diff": pair["diff"],
                         "diff_low": pair["diff_low"], "diff_high": pair["diff_high"],
                         "matches": bool(pair["diff_high"] >= 0)})
    return pd.DataFrame(rows)


def plot_style_comparison(summary: pd.DataFrame, metrics: Sequence[str] = tuple(METRICS), *,
                          scorers: Sequence[str] | None = None,
                          ylabel: str = "mean over test requests (fraction, 95% CI)"):
    """One panel per metric: a bar per style × scorer with its 95% bootstrap interval.

    Style names are slanted so that long ones do not run into each other.
    """
    import matplotlib.pyplot as plt

    from ..report.plots import SCORER_COLORS
    styles = list(dict.fromkeys(summary["style"]))
    names = list(dict.fromkeys(summary["scorer"])) if scorers is None else list(scorers)
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), sharey=True,
                             squeeze=False)
    width = 0.8 / len(names)
    x = np.arange(len(styles))
    for ax, metric in zip(axes[0], metrics):
        part = summary[summary["metric"] == metric].set_index(["style", "scorer"])
        for i, name in enumerate(names):
            rows = [part.loc[(s, name)] for s in styles]
            mean = np.array([r["mean"] for r in rows])
            err = np.array([[m - r["low"] for m, r in zip(mean, rows)],
                            [r["high"] - m for m, r in zip(mean, rows)]])
            ax.bar(x + (i - (len(names) - 1) / 2) * width, mean, width, yerr=err, capsize=2,
                   label=name, color=SCORER_COLORS.get(name, f"C{i}"),
                   edgecolor="black" if name == "default" else None)
        ax.set_xticks(x, styles, rotation=30, ha="right", rotation_mode="anchor")
        ax.set_xlabel("registry style")
        ax.set_title(metric)
        ax.set_ylim(0, 1.05)
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.tight_layout()
    fig.legend(handles, labels, loc="lower center", ncol=len(names), fontsize=8,
               bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig


#: The README lines between which :func:`which_scorer_markdown` output sits.
README_MARKERS = ("<!-- which-scorer: generated by toolsel.eval.compare_styles."
                  "which_scorer_markdown; do not edit -->",
                  "<!-- which-scorer: end -->")


def _and(items: Sequence[str]) -> str:
    items = list(items)
    return (", ".join(items[:-1]) + " and " + items[-1]) if len(items) > 1 else "".join(items)


def which_scorer_markdown(table: pd.DataFrame, versus: pd.DataFrame, *,
                          ablation: pd.DataFrame | None = None,
                          latency: pd.DataFrame | None = None,
                          latency_long: pd.DataFrame | None = None,
                          n_tools: Mapping[str, int] | None = None,
                          lexical: Sequence[str] = ("jaccard", "bm25", "tfidf"),
                          candidate: str = "default",
                          paths: Mapping[str, str] | None = None,
                          claims_out: list | None = None) -> str:
    """The README's "Which scorer?" table and verdicts, rendered from the report's tables.

    Parameters
    ----------
    table : ``style_table.csv`` (:meth:`StyleComparison.table`)
    versus : ``default_vs_best.csv`` (:func:`versus_best`)
    ablation : ``dev_ablation.csv``, optional: adds where a signal alone beat the candidate
    latency : ``default_latency.csv`` (``scorer, n_tools, p50_ms, p95_ms``), optional
    latency_long : the same on 3-5-sentence requests (``default_latency_long.csv``), optional
    n_tools : tools per style, shown in the style column when given
    lexical : scorers shown on one compact row of means
    paths : link targets and claim sources for ``"versus"``, ``"ablation"``, ``"latency"``
        and ``"latency_long"`` (relative to the README)
    claims_out : a list that receives the verdicts as :class:`toolsel.report.claims.Claim`
        (text, numbers, source CSVs), for checking them against the tables

    Means are rounded to 2 decimals; on each style and metric the best mean is bold when no
    other scorer rounds to the same value. Intervals are the 95% intervals of the table
    (bootstrap; Wilson for Complete@10); the verdicts read the paired intervals of ``versus``
    and are rendered by :func:`toolsel.report.claims.which_scorer_verdicts`.
    """
    paths = dict(paths or {})
    metrics = [m for m in METRICS if m in table.columns]
    f2 = "{:.2f}".format
    lines = [f"| style ({'tools, ' if n_tools else ''}test requests) | scorer | "
             + " | ".join(metrics) + " |",
             "| --- | --- | " + " | ".join("---" for _ in metrics) + " |"]
    for style, g in table.groupby("style", sort=False):
        g = g.set_index("scorer")
        best = {}
        for m in metrics:
            rounded = g[m].round(2)
            top = rounded.max()
            best[m] = rounded.idxmax() if (rounded == top).sum() == 1 else None
        size = (f"{n_tools[style]:,}, " if n_tools and style in n_tools else "")
        head = f"{style} ({size}{int(g['n_queries'].iloc[0])})"
        lex = [s for s in lexical if s in g.index]
        rows = []
        if lex:
            cells = [" / ".join(f"**{f2(g.loc[s, m])}**" if best[m] == s else f2(g.loc[s, m])
                                for s in lex) for m in metrics]
            rows.append((" / ".join(lex), cells))
        for s in [s for s in g.index if s not in lex]:
            cells = []
            for m in metrics:
                mean = f"**{f2(g.loc[s, m])}**" if best[m] == s else f2(g.loc[s, m])
                cells.append(f"{mean} [{f2(g.loc[s, m + '_low'])}, {f2(g.loc[s, m + '_high'])}]"
                             if f"{m}_low" in g.columns else mean)
            rows.append((f"**{s}**" if s == candidate else s, cells))
        for i, (name, cells) in enumerate(rows):
            lines.append(f"| {head if i == 0 else ''} | {name} | " + " | ".join(cells) + " |")
    text = ["\n".join(lines), ""]

    from ..report.claims import which_scorer_verdicts  # README prose: a report concern
    link = f"[`{Path(paths['versus']).name}`]({paths['versus']})" if "versus" in paths \
        else "`default_vs_best.csv`"
    alink = f"[dev ablation]({paths['ablation']})" if "ablation" in paths else "dev ablation"
    found = which_scorer_verdicts(
        versus, versus_source=paths.get("versus", "default_vs_best.csv"), ablation=ablation,
        ablation_source=paths.get("ablation", "dev_ablation.csv"), latency_table=latency,
        latency_source=paths.get("latency", "default_latency.csv"), latency_long=latency_long,
        latency_long_source=paths.get("latency_long", "default_latency_long.csv"),
        candidate=candidate, links={"versus": link, "ablation": alink})
    if claims_out is not None:
        claims_out.extend(found)
    verdict = [c.text for c in found]
    text.append(" ".join(verdict))
    return "\n".join(text)


def which_scorer_claims(root: str | Path = ".") -> tuple[str, list]:
    """:func:`which_scorer_from_reports` and its verdicts as claims (sources relative to
    ``root``), for checking every number of the README block against the tables."""
    found: list = []
    return which_scorer_from_reports(root, claims_out=found), found


def which_scorer_from_reports(root: str | Path = ".", *, claims_out: list | None = None) -> str:
    """:func:`which_scorer_markdown` of the committed tables of the repository at ``root``
    (``reports/06_default_scorer/*.csv``, ``reports/benchmarks/default_latency*.csv``), with
    tool counts from ``data/styles`` and links relative to the README."""
    root = Path(root)
    rep = "reports/06_default_scorer"
    table = pd.read_csv(root / rep / "style_table.csv")
    latency = root / "reports/benchmarks/default_latency.csv"
    latency_long = root / "reports/benchmarks/default_latency_long.csv"
    ablation = root / rep / "dev_ablation.csv"
    return which_scorer_markdown(
        table, pd.read_csv(root / rep / "default_vs_best.csv"),
        ablation=pd.read_csv(ablation) if ablation.exists() else None,
        latency=pd.read_csv(latency) if latency.exists() else None,
        latency_long=pd.read_csv(latency_long) if latency_long.exists() else None,
        n_tools={s: len(load_registry(style_dir(s, root / "data/styles") / "registry.json"))
                 for s in dict.fromkeys(table["style"])},
        paths={"versus": f"{rep}/default_vs_best.csv", "ablation": f"{rep}/dev_ablation.csv",
               "latency": "reports/benchmarks/default_latency.csv",
               "latency_long": "reports/benchmarks/default_latency_long.csv"},
        claims_out=claims_out)


#: The README lines between which :func:`which_policy_from_reports` output sits.
POLICY_MARKERS = ("<!-- which-policy: generated by toolsel.eval.compare_styles."
                  "which_policy_from_reports; do not edit -->", "<!-- which-policy: end -->")


def which_policy_from_reports(root: str | Path = ".") -> tuple[str, list]:
    """The README's sentence on which selection policies beat fixed top-K, rendered from the
    committed ``reports/12_selection_policies/{style,policy}_verdict.csv`` (and the claim)."""
    from ..report.claims import Claim, _lower_first, policy_beats
    rep = "reports/12_selection_policies"
    sv = pd.read_csv(Path(root) / rep / "style_verdict.csv")
    pv = pd.read_csv(Path(root) / rep / "policy_verdict.csv")
    claim = (Claim("On the bundled styles (settings chosen on dev, reported on test, "
                   f"[`style_verdict.csv`]({rep}/style_verdict.csv), "
                   f"[`policy_verdict.csv`]({rep}/policy_verdict.csv)): ")
             + _lower_first(policy_beats(sv, pv, f"{rep}/style_verdict.csv",
                                         f"{rep}/policy_verdict.csv", in_sample=False)))
    return claim.text, [claim]


def update_readme_which_scorer(readme: str | Path = "README.md", root: str | Path = ".") -> bool:
    """Rewrite the generated parts of the README's "Which scorer?" section from the committed
    tables (between :data:`README_MARKERS`, and :data:`POLICY_MARKERS` when present);
    return whether the file changed."""
    path = Path(readme)
    text = path.read_text(encoding="utf-8")
    start, end = README_MARKERS
    if start not in text or end not in text:
        raise ValueError(f"{path}: no generated 'Which scorer?' block (markers {start!r} "
                         f"... {end!r})")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    new = f"{head}{start}\n{which_scorer_from_reports(root)}\n{end}{tail}"
    pstart, pend = POLICY_MARKERS
    verdicts = Path(root) / "reports/12_selection_policies"
    if pstart in new and pend in new and (verdicts / "style_verdict.csv").exists():
        head, rest = new.split(pstart, 1)
        _, tail = rest.split(pend, 1)
        new = f"{head}{pstart}\n{which_policy_from_reports(root)[0]}\n{pend}{tail}"
    if new != text:
        from ..io import write_text
        write_text(new, path)
    return new != text
