"""The page "The default scorer" (notebook 06): each scorer per registry, and the default
against the best single one.

:func:`page_data` reads the registries the page compares (the bundled styles, or a user's
registry as one style); :func:`default_tables` builds the page's tables (sizes, every scorer
per registry, the default against the best single scorer, each single scorer's gap to the
default, the ablation of the default's pieces); :func:`default_sentences` renders its findings,
each number citing the CSV it is read from (:data:`FILES`). The sentence generators
(:func:`versus_best`, :func:`versus_rows`, :func:`variant_vs`, :func:`signal_alone`,
:func:`latency`, :func:`verdict_label`) are also read by the "Which scorer?" page
(:mod:`toolsel.pages.which_scorer`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..datasets import filter_split, given_style, load_styles
from ..eval.inference import RULE_SHORT, verdict
from ..eval.scorer_warning import gap_table
from ..report import claims
from ..report import markdown as md
from ..report.claims import Builder, Claim, Ref, and_list
from ..scorers.fusion import FusionScorer
from ..tables.compare_styles import SINGLE_SCORERS, StyleComparison, compare_styles
from ..tables.compare_styles import versus_best as versus_table
from .overview import scorer_gap_card, scorer_gap_warning

__all__ = ["PageData", "DefaultTables", "FILES", "page_data", "ablation_variants",
           "default_tables", "default_sentences", "comparison_skip_reason", "verdict_label",
           "versus_best", "versus_rows", "variant_vs", "signal_alone", "latency"]

#: The CSV each table is written to (``comparison`` writes its own files, ``style_table.csv``
#: among them).
FILES = {"sizes": "sizes.csv", "versus": "default_vs_best.csv", "gaps": "scorer_gaps.csv",
         "ablation": "dev_ablation.csv"}
#: The tables written with their floats as they are (counts), not rounded.
EXACT = frozenset({"sizes"})
#: The ablation's metrics.
ABLATION_METRICS = ("R@5", "Complete@10", "MRR")


@dataclass
class PageData:
    """The registries compared: ``data`` (style → (registry, requests reported)), ``dev``
    (style → requests the ablation runs on), ``bundled`` (the bundled styles),
    ``has_split`` and ``split`` (the part reported: ``"all"`` without a split)."""

    data: dict
    dev: dict
    bundled: bool
    has_split: bool
    split: str

    @property
    def reported(self) -> str:
        """The requests reported, in words."""
        return (f"{self.split} requests" if self.has_split
                else "every request: the file has no split")


def page_data(registry: str, queries: str, styles: Sequence[str], styles_root: str,
              split: str = "test") -> PageData:
    """The bundled ``styles`` under ``styles_root`` (empty ``registry``), or the given
    registry and its queries as one style (the ``split`` part when it has splits)."""
    if not registry:
        return PageData(load_styles(styles, styles_root, split=split),
                        load_styles(styles, styles_root, split="dev"), True, True, split)
    name, (reg, qs), has_split = given_style(registry, queries)
    split = split if has_split else "all"
    return PageData({name: (reg, filter_split(qs, split))},
                    {name: (reg, filter_split(qs, "dev" if has_split else "all"))},
                    False, has_split, split)


def ablation_variants() -> dict[str, FusionScorer]:
    """The default against itself without each piece, and each signal alone."""
    return {"default": FusionScorer(), "no clauses": FusionScorer(clauses=False),
            "clauses encoded apart": FusionScorer(clause_vectors="separate"),
            "equal weights": FusionScorer(weights=(0.5, 0.5)),
            "auto weights": FusionScorer(weights="auto"),
            "lexical only": FusionScorer(semantic=None),
            "embedding only": FusionScorer(lexical=None)}


@dataclass
class DefaultTables:
    """The page's tables: ``sizes`` (per registry), ``comparison`` (every scorer per
    registry: :class:`~toolsel.tables.compare_styles.StyleComparison`), ``versus`` and
    ``gaps`` (``None`` without ``default`` and a single scorer), ``ablation`` (variant ×
    registry on the dev requests)."""

    sizes: pd.DataFrame
    comparison: StyleComparison
    versus: pd.DataFrame | None
    gaps: pd.DataFrame | None
    ablation: pd.DataFrame

    def items(self):
        """``(name, table)`` of the tables that exist (``comparison`` aside)."""
        return [(n, getattr(self, n)) for n in FILES if getattr(self, n) is not None]


def _has_parameters(tool) -> bool:
    """The tool takes at least one argument: its schema names a property (an empty
    ``{"type": "object", "properties": {}}``, what MCP servers send for none, does not)."""
    p = tool.parameters
    return isinstance(p, dict) and bool(p.get("properties"))


def comparison_skip_reason(scorers: Sequence[str]) -> str | None:
    """Why the default cannot be compared with a single scorer here, or ``None``."""
    if "default" in scorers and [s for s in SINGLE_SCORERS if s in scorers]:
        return None
    return "`scorers` needs `default` and at least one single scorer."


def default_tables(d: PageData, scorers: Sequence[str], *, n_boot: int = 2000,
                   seed: int = 0, variants: Mapping | None = None) -> DefaultTables:
    """Every scorer on every registry of ``d``, the default against the best single one,
    the single-scorer gaps, and the ablation of ``variants`` (:func:`ablation_variants`)."""
    sizes = pd.DataFrame([{"style": s, "tools": len(reg), "requests": len(qs),
                           "multi-tool requests": sum(len(q.expected) > 1 for q in qs),
                           "tools with parameters": sum(_has_parameters(t) for t in reg)}
                          for s, (reg, qs) in d.data.items()])
    comparison = compare_styles(d.data, scorers, n_boot=n_boot, seed=seed, latency_queries=0)
    vs = gaps = None
    if comparison_skip_reason(scorers) is None:
        singles = [s for s in SINGLE_SCORERS if s in scorers]
        # the best single scorer is picked on the dev requests (in-sample without a split)
        picked = (compare_styles(d.dev, singles, n_boot=n_boot, seed=seed, latency_queries=0)
                  if d.has_split else None)
        vs = versus_table(comparison, "default", singles, chosen_on=picked, n_boot=n_boot,
                          seed=seed)
        gaps = gap_table(comparison.query_metrics, [s for s in scorers if s != "default"],
                         by="style", n_boot=n_boot, seed=seed)
    dev = compare_styles(d.dev, dict(variants or ablation_variants()), n_boot=n_boot,
                         seed=seed, latency_queries=0)
    ablation = dev.table()[["style", "scorer", *ABLATION_METRICS, "n_queries"]]
    return DefaultTables(sizes, comparison, vs, gaps, ablation)


def default_sentences(t: DefaultTables, d: PageData) -> dict:
    """The page's findings: ``run``; with the comparison ``versus``, ``rows`` (style → its
    line), ``gaps`` and ``card`` (when a scorer is far below); ``signal``, ``apart`` and
    ``clauses`` (the ablation); ``one_request`` (style → how far one request moves a rate)."""
    src = FILES
    n = len(t.sizes)
    out: dict = {"run": claims.count_rows(
        t.sizes, src["sizes"], "Every scorer and the default against the best single one, on "
        "{n} registr" + ("y" if n == 1 else "ies") + f" ({d.reported.split(':')[0]}"
        + ("" if d.has_split else "; no scorer is fit on these requests, but the best single "
           "one is picked on them") + ").")}
    if t.versus is not None:
        out["versus"] = versus_best(t.versus, src["versus"])
        out["rows"] = {st: versus_rows(t.versus, src["versus"], style=st)
                       for st in dict.fromkeys(t.versus["style"])}
        out["gaps"] = scorer_gap_warning(t.gaps, src["gaps"], by="style")
        card = scorer_gap_card(t.gaps, by="style")
        if card is not None:
            out["card"] = card
    out["signal"] = signal_alone(t.ablation, src["ablation"])
    out["apart"] = variant_vs(t.ablation, "default", "clauses encoded apart", src["ablation"])
    out["clauses"] = variant_vs(t.ablation, "default", "no clauses", src["ablation"])
    out["one_request"] = {r.style: claims.one_request(
        int(r.requests), src["sizes"], column="requests", where={"style": r.style},
        what="a rate such as Complete@10") for r in t.sizes.itertuples()}
    return out


def _with_verdict(vs: pd.DataFrame) -> pd.DataFrame:
    """``vs`` with the one rule's ``verdict`` column (read from its intervals when a table
    written before verdicts were a column lacks it)."""
    if "verdict" in vs.columns:
        return vs
    return vs.assign(verdict=[verdict(lo, hi) for lo, hi in zip(vs["diff_low"], vs["diff_high"])])


def verdict_label(word: str) -> str:
    """The one rule's verdict (:func:`toolsel.eval.inference.verdict`) of a candidate against
    a reference, with what decided it."""
    return {"ahead": "ahead (interval above zero)", "behind": "behind (interval below zero)",
            "tie": "tie (interval includes zero)"}[word]


def versus_best(vs: pd.DataFrame, source: str, *, candidate: str = "default",
                digits: int = 3) -> Claim:
    """Where ``candidate`` is below the best single scorer on the means, and where the one
    rule puts it ahead or behind (from :func:`toolsel.tables.compare_styles.versus_best`)."""
    b = Builder()
    v = _with_verdict(vs[vs["candidate"] == candidate] if "candidate" in vs.columns else vs)
    if v.empty:
        return b.claim(f"No comparison of `{md.escape(candidate)}` with a single scorer.")

    def cell(r, col="diff"):
        w = {"style": r.style, "metric": r.metric}
        return b.num(getattr(r, col), Ref(source, col, w), "sdec", digits)

    def where(rows) -> str:
        return and_list([f"{b.lit(r.style)} {b.lit(r.metric)}" for r in rows.itertuples()])

    below = v[v["diff"] < 0]
    win = v[v["verdict"] == "ahead"]
    loss = v[v["verdict"] == "behind"]
    cand = b.code(candidate)
    dev = "chosen_on" in v.columns and bool((v["chosen_on"] == "dev").all())
    picked = ("picked on the dev requests" if dev
              else "picked on these same requests (in-sample)")
    rule = b.param(RULE_SHORT)
    text = (f"The best single scorer is {picked}. On the means {cand} is "
            + ("at least the best single scorer everywhere" if below.empty else
               "below the best single scorer on "
               + and_list([f"{b.lit(r.style)} {b.lit(r.metric)} ({cell(r)} against "
                       f"{b.lit(r.best_single)})" for r in below.itertuples()])) + ". ")
    text += (f"By the one rule ({rule}) it is ahead on " + where(win) if len(win)
             else f"By the one rule ({rule}) it is ahead nowhere")
    text += ("; behind on " + where(loss) if len(loss) else "; behind nowhere")
    text += "; it ties everywhere else." if len(win) + len(loss) < len(v) else "."
    return b.claim(text)


def versus_rows(vs: pd.DataFrame, source: str, *, style: str, candidate: str = "default",
                digits: int = 3) -> Claim:
    """One registry's line: per metric, the candidate's mean against the best single
    scorer's, the paired difference with its interval (at the family's level), and
    :func:`verdict_label`."""
    b = Builder()
    v = _with_verdict(vs[(vs["style"].astype(str) == str(style))
                         & (vs["candidate"] == candidate)])
    parts = []
    for r in v.itertuples():
        w = {"style": style, "metric": r.metric}

        def n(col, kind="dec"):
            return b.num(getattr(r, col), Ref(source, col, w), kind, digits)

        parts.append(f"{b.lit(r.metric)} {n('candidate_mean')} vs {b.lit(r.best_single)} "
                     f"{n('best_mean')}, {n('diff', 'sdec')} [{n('diff_low', 'sdec')}, "
                     f"{n('diff_high', 'sdec')}]: {verdict_label(r.verdict)}")
    if not parts:
        return b.claim(f"**{b.lit(style)}**: no comparison.")
    return b.claim(f"**{b.lit(style)}**, {b.code(candidate)} against the best single scorer: "
                   + "; ".join(parts) + ".")


def variant_vs(table: pd.DataFrame, a: str, b_name: str, source: str, *,
               metrics: Sequence[str] = ("R@5", "Complete@10", "MRR"), by: str = "style",
               digits: int = 3, label: str | None = None) -> Claim:
    """Per metric: on which groups variant ``a`` scores at least as well as ``b_name``, and
    the values where it scores lower (every metric of the table, MRR included)."""
    b = Builder()
    t = table.set_index([by, "scorer"])
    groups = [g for g in dict.fromkeys(table[by]) if (g, a) in t.index and (g, b_name) in t.index]
    if not groups:
        return b.claim(f"No {md.escape(a)} / {md.escape(b_name)} pair to compare.")
    held, lower = [], []
    for m in metrics:
        if m not in t.columns:
            continue
        lo = [g for g in groups if t.loc[(g, a), m] < t.loc[(g, b_name), m]]
        if not lo:
            held.append(m)
            continue
        lower.append(f"on {b.lit(m)} lower on " + and_list([
            f"{b.lit(g)} ({b.num(t.loc[(g, a), m], Ref(source, m, {by: g, 'scorer': a}), 'dec', digits)}"
            f" vs {b.num(t.loc[(g, b_name), m], Ref(source, m, {by: g, 'scorer': b_name}), 'dec', digits)})"
            for g in lo]))
    every = "every " + by if len(groups) > 1 else f"{b.lit(groups[0])}"
    text = (label or f"*{b.lit(a)}* against *{b.lit(b_name)}*") + ": "
    if held:
        text += f"at least as well on {and_list([b.lit(m) for m in held])} on {every}"
    if lower:
        text += ("; " if held else "") + "; ".join(lower)
    return b.claim(text + ".")


def signal_alone(table: pd.DataFrame, source: str, *, candidate: str = "default",
                 variants: Sequence[str] = ("lexical only", "embedding only"),
                 metrics: Sequence[str] = ("R@5", "Complete@10", "MRR"), by: str = "style",
                 digits: int = 3) -> Claim:
    """Where one signal alone scored above the fused ``candidate`` (every metric shown)."""
    b = Builder()
    t = table.set_index([by, "scorer"])
    parts = []
    for g in dict.fromkeys(table[by]):
        if (g, candidate) not in t.index:
            continue
        for v in variants:
            if (g, v) not in t.index:
                continue
            ms = [m for m in metrics if m in t.columns and t.loc[(g, v), m] > t.loc[(g, candidate), m]]
            if ms:
                parts.append(f"on {b.lit(g)} ({b.lit(v)}: "
                             + ", ".join(
                                 f"{b.lit(m)} "
                                 f"{b.num(t.loc[(g, v), m], Ref(source, m, {by: g, 'scorer': v}), 'dec', digits)}"
                                 f" vs {b.num(t.loc[(g, candidate), m], Ref(source, m, {by: g, 'scorer': candidate}), 'dec', digits)}"
                                 for m in ms) + ")")
    cand = b.code(candidate)
    if not parts:
        return b.claim(f"No signal alone scored above {cand} on "
                       f"{and_list([b.lit(m) for m in metrics if m in t.columns])}.")
    return b.claim(f"A signal alone scored above {cand} " + "; ".join(parts) + ".")


def latency(table: pd.DataFrame, source: str, *, candidate: str = "default",
            tools: bool = True, p95_all: bool = False) -> Claim:
    """Per-request latency from one benchmark table (``scorer, n_tools, p50_ms, p95_ms``):
    the candidate's p50 and p95 first, then every other scorer of the same table."""
    b = Builder()
    lat = table.set_index("scorer")
    if candidate not in lat.index:
        return b.claim(f"No {b.code(candidate)} row in the latency table.")

    def ms(s, col):
        v = float(lat.loc[s, col])
        return b.num(v, Ref(source, col, {"scorer": s}), "dec", 1 if v >= 0.1 else 2)

    d = lat.loc[candidate]
    head = (f"at {b.num(d.n_tools, Ref(source, 'n_tools', {'scorer': candidate}))} tools"
            if tools else "")
    parts = [f"{b.code(candidate)} {ms(candidate, 'p50_ms')} ms p50 "
             f"({ms(candidate, 'p95_ms')} ms p95)"]
    parts += [f"{b.code(s)} {ms(s, 'p50_ms')} ms"
              + (f" p50 ({ms(s, 'p95_ms')} ms p95)" if p95_all else "")
              for s in lat.index if s != candidate]
    return b.claim((head + ": " if head else "") + ", ".join(parts))


