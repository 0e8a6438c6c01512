"""The page "Overview" (notebook 00): the benchmark, the headline, the single-scorer check.

:func:`overview_tables` sweeps the scorers on one registry and labeled set and returns the
page's tables; :func:`overview_sentences` renders its findings from them (each number cites
the CSV it is read from, :data:`FILES`); :func:`gap_skip_reason` and
:func:`scenario_skip_reason` say, in one sentence, why a section cannot run on the data. The
sentence generators the page shares with others (:func:`leader`, :func:`scorer_gap_warning`,
:func:`scorer_gap_card`) live here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import SERVER_WORD, Query, Registry
from ..eval.scorer_warning import GAP_METRICS, gap_table
from ..eval.inference import family_level, level_words
from ..eval.stats import paired_comparison
from ..eval.sweep import sweep
from ..report import claims
from ..report.claims import Builder, Claim, Ref, and_list, format_number, plural_form, rows_where
from ..report.cutoffs import distinct_top_k, headline_k
from ..tables.replication import headline_frame
from ..tables.scenario import (ARTICLE_TOOLS, article_scenario, scenario_table,
                               scenario_tools_present)
from .recall_vs_payload import intervals

__all__ = ["OverviewTables", "FILES", "EXACT", "overview_tables", "overview_sentences",
           "gaps_shown", "GAP_TEXT", "gap_skip_reason", "scenario_skip_reason", "leader", "benchmark_counts",
           "scorer_gap_warning", "scorer_gap_card"]

#: The CSV each table is written to.
FILES = {"data": "data.csv", "headline": "headline.csv", "paired": "paired_headline.csv",
         "gaps": "scorer_gaps.csv", "scenario": "scenario.csv"}
#: The tables written with their floats as they are (counts), not rounded to 6 decimals.
EXACT = frozenset({"data", "scenario"})


@dataclass
class OverviewTables:
    """The page's tables: ``data`` (one row of counts), ``headline`` (scorer rows at the
    headline cut-off ``k``, with intervals), ``paired`` (R@k paired between scorers; ``None``
    with one scorer), ``gaps`` (each scorer against ``default``; ``None`` when skipped),
    ``scenario`` (the article's 3-turn conversation; ``None`` without its tools). ``ks`` and
    ``dropped``: the cut-offs swept and those left out (they send every tool);
    ``summary``: the sweep's summary (every scorer and K run)."""

    data: pd.DataFrame
    headline: pd.DataFrame
    paired: pd.DataFrame | None
    gaps: pd.DataFrame | None
    scenario: pd.DataFrame | None
    k: int
    ks: list[int]
    dropped: list[int]
    n_candidates: int
    summary: pd.DataFrame
    pinned: tuple[str, ...] = ()

    def items(self):
        """``(name, table)`` of the tables that exist, as written beside the page."""
        return [(n, getattr(self, n)) for n in FILES if getattr(self, n) is not None]


def gaps_shown(gaps: pd.DataFrame, *, ci: str | None = None) -> pd.DataFrame:
    """The single-scorer gaps as a page shows them (text cells; ``style`` first when the
    table has one); its numeric columns are those to align right (:data:`GAP_TEXT`). The
    interval's heading names its level (the family's, :func:`interval_heading`)."""
    cols = {c: gaps[c] for c in ("style", "scorer", "metric") if c in gaps.columns}
    ci = ci or interval_heading(gaps["family"] if "family" in gaps.columns else [1])
    return pd.DataFrame({
        **cols, "scorer's mean": [f"{v:.3f}" for v in gaps["mean_scorer"]],
        "default's mean": [f"{v:.3f}" for v in gaps["mean_reference"]],
        f"gap [{ci}]": [f"{r.gap:+.3f} [{r.gap_low:+.3f}, {r.gap_high:+.3f}]"
                        for r in gaps.itertuples()],
        "better with default / worse": [f"{r.reference_wins} / {r.scorer_wins}"
                                        for r in gaps.itertuples()],
        "default": gaps["verdict"], "far below": gaps["far"]})


#: The columns of :func:`gaps_shown` that are not numbers.
GAP_TEXT = ("style", "scorer", "metric", "default", "far below")


def interval_heading(families) -> str:
    """A column heading for paired intervals of these families: "95% CI" for one
    comparison, "95% CI, each at 99.5%" for a family of 10 (Bonferroni), or "family-wise
    95% CI" when the families differ in size."""
    sizes = sorted({int(f) for f in families})
    if sizes == [1] or not sizes:
        return "95% CI"
    if len(sizes) == 1:
        return f"95% CI, each at {100 * family_level(sizes[0]):.4g}%"
    return "family-wise 95% CI"


def gap_skip_reason(t: OverviewTables, scorers: Sequence[str]) -> str | None:
    """Why the single-scorer check did not run on this data (one sentence), or ``None``."""
    if t.gaps is not None:
        return None
    if not [s for s in scorers if s != "default"]:
        return "`scorers` has no scorer other than `default`."
    return ("with this few candidate tools `top_k=5` already sends every one, so no scorer "
            "can fall behind `default` on R@5 or Complete@10.")


def scenario_skip_reason(registry: Registry) -> str | None:
    """Why the article's 3-turn scenario cannot run on ``registry``, or ``None``."""
    if scenario_tools_present(registry):
        return None
    return ("it needs the tools " + ", ".join(ARTICLE_TOOLS)
            + ", which this registry does not have")


def overview_tables(registry: Registry, queries: Sequence[Query], scorers: Sequence[str],
                    top_k: Sequence[int], *, always_include: Sequence[str] = (),
                    n_boot: int = 2000, seed: int = 0) -> OverviewTables:
    """Sweep ``scorers`` (and ``default``, the single-scorer check's reference) and build the
    page's tables at the headline cut-off."""
    scorers = list(scorers)
    n_candidates = len(registry) - len(set(always_include))
    ks, dropped = distinct_top_k(top_k, n_candidates)
    k = headline_k(ks, n_candidates)
    singles = [s for s in scorers if s != "default"]
    run = list(dict.fromkeys([*scorers, *(["default"] if singles else [])]))
    gap_ks = {k for _, k in GAP_METRICS.values()}  # the single-scorer check's R@5, Complete@10
    result = sweep(registry, queries, run, sorted(set(ks) | gap_ks),
                   always_include=always_include, progress=False)
    qm = result.query_metrics
    shown_qm = qm[qm["top_k"].isin(ks) & qm["scorer"].isin(scorers)]
    headline = headline_frame(result.summary[result.summary["scorer"].isin(scorers)],
                              intervals(shown_qm, n_boot=n_boot, seed=seed), top_k=k)
    paired = (paired_comparison(shown_qm, "R@k", scorers=scorers, top_k=[k], n_boot=n_boot,
                                seed=seed) if len(scorers) > 1 else None)
    gaps = None
    if singles and gap_ks <= set(qm["top_k"]):
        gaps = gap_table(qm, singles, reference="default", n_boot=n_boot, seed=seed)
    scen, pinned = None, ()
    if scenario_skip_reason(registry) is None:
        turns = article_scenario(registry)
        scen, pinned = scenario_table(turns), tuple(turns[-1].pinned)
    return OverviewTables(claims.data_table(registry, queries), headline, paired, gaps, scen,
                          k, ks, dropped, n_candidates, result.summary, pinned)


def overview_sentences(t: OverviewTables) -> dict[str, Claim]:
    """The page's findings by section, each computed from the table it cites (:data:`FILES`):
    ``registry``, ``payload``, ``run``, ``benchmark``, ``n_queries``, ``leader``,
    ``one_request``; ``gaps`` and ``card`` (the index card's warning, when a scorer is far
    below) with the single-scorer check; ``scenario`` with the scenario."""
    src, data = FILES, t.data
    n_servers = int(data["n_servers"].iloc[0])
    n_q = int(data["n_queries"].iloc[0])
    out = {
        "registry": claims.counts(
            data, src["data"], "**{n} tools**" + (
                f" from {{d}} {SERVER_WORD}{'s' if n_servers != 1 else ''}" if n_servers else "")
            + "; {a} marked always-include.", n="n_tools", a="n_always_include",
            **({"d": "n_servers"} if n_servers else {})),
        "payload": claims.counts(
            data, src["data"], "Sending them all costs **{c} characters** of name + "
            "description ({t} `cl100k_base` tokens).", c="unfiltered_chars",
            t="unfiltered_tokens"),
        "run": claims.counts(data, src["data"], "{t} tools and {q} labeled queries, every "
                             "scorer at the headline cut-off.", t="n_tools", q="n_queries"),
        "benchmark": benchmark_counts(data, src["data"]),
        "n_queries": claims.counts(data, src["data"], "{n} quer" + ("y" if n_q == 1 else "ies")
                                   + ".", n="n_queries"),
        "leader": leader(t.headline, "R@k", src["headline"], label=f"R@{t.k}",
                         paired=t.paired, paired_source=src["paired"],
                         paired_where={"top_k": t.k}),
        "one_request": claims.one_request(n_q, src["data"], column="n_queries", unit="query",
                                          what="R@k"),
    }
    if t.gaps is not None:
        out["gaps"] = scorer_gap_warning(t.gaps, src["gaps"], unit="query")
        card = scorer_gap_card(t.gaps)
        if card is not None:
            out["card"] = card
    if t.scenario is not None:
        seen = Claim("")
        for i, turn in enumerate(t.scenario["turn"]):
            seen = seen + claims.counts(t.scenario, src["scenario"], "{n}",
                                        where={"turn": turn}, n="n_tools_seen")
            seen = seen + (", " if i < len(t.scenario) - 1 else "")
        out["scenario"] = seen + " tools on the successive turns"
    return out


def leader(table: pd.DataFrame, metric: str, source: str, *, by: str = "scorer",
           where: Mapping[str, object] | None = None, kind: str = "pct", digits: int = 1,
           label: str | None = None, paired: pd.DataFrame | None = None,
           paired_source: str = "", paired_where: Mapping[str, object] | None = None) -> Claim:
    """Which row of ``by`` has the highest ``metric`` and by how much it leads the next one.

    Ties (equal after rounding to what is shown) are named together; one row: "only X";
    every row equal: "every scorer has ...". The lead is the difference of the two values
    as shown (92.1% and 91.7%: 0.4 points). With ``paired`` (a
    :func:`toolsel.eval.stats.paired_comparison` table, rows ``a``/``b`` with ``diff_low``,
    ``diff_high``, ``family``, ``verdict``; ``paired_where`` picks its cut-off and metric),
    the leader is called highest only where the one rule puts it ahead of the runner-up
    (:mod:`toolsel.eval.inference`: the paired interval at the family's level excludes zero;
    the family is every pair of the table, as on every page that shows the pair); otherwise
    the sentence says the two tie.
    """
    b = Builder()
    where = dict(where or {})
    part = rows_where(table, where) if where else table
    label = label or metric
    if part.empty:
        return b.claim(f"No {label} to compare.")
    vals = part.set_index(by)[metric].astype(float)

    def num(name):
        return b.num(vals[name], Ref(source, metric, {**where, by: name}), kind, digits)

    first = [n for n in vals.index if format_number(vals[n], kind, digits) == format_number(vals.max(), kind,
                                                                          digits)]
    if len(vals) == 1 or len(first) == len(vals):
        return b.claim(f"Only {b.lit(vals.index[0])} was run: {label} {num(vals.index[0])}."
                       if len(vals) == 1 else
                       f"Every {by} has the same {label}: {num(vals.index[0])}.")
    if len(first) > 1:
        return b.claim(f"{and_list([b.lit(n) for n in first])} share the highest {label} "
                       f"({num(first[0])}).")
    name = first[0]
    second = vals.drop(name).idxmax()
    # the lead as shown: the difference of the two rounded values
    places = digits + 2 if kind == "pct" else digits
    lead = b.num(float(f"{vals[name]:.{places}f}") - float(f"{vals[second]:.{places}f}"),
                 Ref(source, metric, {**where, by: name}, round_to=places,
                     minus=Ref(source, metric, {**where, by: second}, round_to=places)),
                 "points" if kind == "pct" else "dec", digits)
    unit = " points" if kind == "pct" else ""
    head = (f"{b.lit(name)} has the highest {label} ({num(name)}), {lead}{unit} above "
            f"{b.lit(second)} ({num(second)})")
    if paired is None:
        return b.claim(head + ".")
    low, lo, hi, family = _paired_interval(b, paired, paired_source, dict(paired_where or {}),
                                           name, second, "spoints" if kind == "pct" else "sdec",
                                           digits)
    level = b.param(level_words(family))
    fam = ("the top two compared, no other pair" if family == 1 else
           "the family: every pair of scorers at this cut-off, as on every page showing them")
    if low > 0:
        return b.claim(f"{head}; the paired {level} bootstrap interval of that lead, "
                       f"[{lo}, {hi}]{unit}, is above zero ({fam}).")
    return b.claim(f"{b.lit(name)} ({num(name)}) and {b.lit(second)} ({num(second)}) tie on "
                   f"{label}: {b.lit(name)}'s lead of {lead}{unit} on the mean has a paired "
                   f"{level} bootstrap interval of [{lo}, {hi}]{unit}, which includes zero "
                   f"({fam}).")


def _paired_interval(b: Builder, paired: pd.DataFrame, source: str, where: dict, name: str,
                     second: str, kind: str, digits: int) -> tuple[float, str, str, int]:
    """The paired interval of ``name`` − ``second`` from a paired-comparison table, whichever
    way round its row is stored: ``(low, low as shown, high as shown, family size)``, both
    ends cited."""
    rows = rows_where(paired, where) if where else paired
    hit = rows[(rows["a"] == name) & (rows["b"] == second)]
    flip = hit.empty
    if flip:
        hit = rows[(rows["a"] == second) & (rows["b"] == name)]
    if len(hit) != 1:
        raise ValueError(f"leader: no single paired row for {name} and {second} in the "
                         f"paired table ({len(hit)} rows)")
    r = hit.iloc[0]
    ab = {**where, "a": second, "b": name} if flip else {**where, "a": name, "b": second}
    ends = ("diff_high", "diff_low") if flip else ("diff_low", "diff_high")
    sign = -1 if flip else 1
    lo, hi = (b.num(sign * r[col], Ref(source, col, ab, negate=flip), kind, digits)
              for col in ends)
    return sign * r[ends[0]], lo, hi, int(r["family"]) if "family" in r.index else 1


def _gap_groups(gaps: pd.DataFrame, by: str | None):
    if by is None:
        return [({}, gaps)]
    return [({by: key}, part) for key, part in gaps.groupby(by, sort=False)]


def scorer_gap_warning(gaps: pd.DataFrame, source: str, *, by: str | None = None,
                       unit: str = "request", digits: int = 3) -> Claim:
    """The single-scorer warning of :mod:`toolsel.eval.scorer_warning`, from its
    :func:`~toolsel.eval.scorer_warning.gap_table` (``by="style"``: one sentence per style).

    Where some row is ``far`` (a gap of at least the table's ``margin`` where the one rule puts
    the reference ahead: its paired interval, at the family's level, above zero): a warning
    naming each such scorer with its means, the gap and its interval, and the requests each
    scorer wins. Where none is: that no scorer is shown far below, and the largest gap with
    its interval, saying why it does not count (under the margin, or an interval reaching
    zero).
    ``unit``: what a labeled item is called on the page (``"query"`` on the overview).
    """
    units = plural_form(unit)
    b = Builder()
    if gaps.empty:
        return b.claim("No single scorer was run beside the reference: nothing to compare.")
    sentences = []
    explained = False  # the rule is said once, on the first sentence that needs it
    for where, part in _gap_groups(gaps, by):
        ref_name = part["reference"].iloc[0]
        first = part.iloc[0]

        def num(r, col, kind="dec", digits=digits):
            w = {**where, "metric": r["metric"], "scorer": r["scorer"]}
            return b.num(r[col], Ref(source, col, w), kind, digits)

        n_req = int(first["n"])
        n = num(first, "n", "int", 0)
        labeled = f"labeled {unit if n_req == 1 else units}"
        head = f"On {b.lit(where[by])} ({n} {labeled})" if by else f"On these {n} {labeled}"
        ref = b.code(ref_name)
        margin = float(first["margin"])
        def rule():
            fam = int(first["family"]) if "family" in first.index else 1
            return (f"a gap of {num(first, 'margin', 'dec', 2)} or more on R@5 or "
                    f"Complete@10 whose paired {b.param(level_words(fam))} interval lies above "
                    "zero" + ("" if fam == 1 else " (the family: every pair of scorers at that "
                                                  "cut-off)"))

        far = part[part["far"].astype(str).str.lower().isin(["true", "1", "1.0"])]
        if not far.empty:
            per = []
            for name, rows in far.groupby("scorer", sort=False):
                per.append(f"{b.code(name)} " + ", ".join(
                    f"{b.lit(r['metric'])} {num(r, 'mean_scorer')} vs {num(r, 'mean_reference')}"
                    f" (gap {num(r, 'gap')} [{num(r, 'gap_low')}, {num(r, 'gap_high')}]; "
                    f"{num(r, 'reference_wins', 'int', 0)} {units} better with {ref}, "
                    f"{num(r, 'scorer_wins', 'int', 0)} worse)"
                    for _, r in rows.iterrows()))
            names = list(dict.fromkeys(far["scorer"]))
            sentences.append(
                f"**Warning:** {head}, {and_list([b.code(x) for x in names])} "
                f"{'is' if len(names) == 1 else 'are'} far below {ref}: " + "; ".join(per) + "."
                + ("" if explained else
                   f" Far means {rule()}: a loss these {units} show, not noise. {ref} is the "
                   "safer pick here."))
            explained = True
            continue
        scored = part[part["gap"].astype(float).notna()]
        if scored.empty:  # every required tool always included: no request to compare on
            sentences.append(f"{head}, no {unit} has a required tool left to rank: nothing "
                             "to compare.")
            continue
        text = (f"{head}, no single scorer is shown far below {ref}"
                + ("." if explained else f" ({rule()})."))
        explained = True
        top = scored.loc[scored["gap"].astype(float).idxmax()]
        if float(top["gap"]) <= 0:
            text += f" Every scorer is at or above {ref} on the mean."
        else:
            text += (f" The largest gap, {b.code(top['scorer'])}'s {b.lit(top['metric'])}, is "
                     f"{num(top, 'gap')} [{num(top, 'gap_low')}, {num(top, 'gap_high')}]")
            if float(top["gap"]) < margin - 1e-12:
                text += ": under the margin."
            else:
                text += (f": its interval reaches zero, so these {units} cannot tell it from "
                         f"noise (more labeled {units} narrow it).")
        sentences.append(text)
    return b.claim(" ".join(sentences) if by is None else "\n\n".join(sentences))


def scorer_gap_card(gaps: pd.DataFrame, *, by: str | None = None) -> Claim | None:
    """The index card's line of :func:`scorer_gap_warning`: which scorers are far below the
    reference on this labeled data (per style with ``by``), or ``None`` when none is."""
    b = Builder()
    if gaps.empty:
        return None
    far = gaps[gaps["far"].astype(str).str.lower().isin(["true", "1", "1.0"])]
    if far.empty:
        return None
    ref_name = far["reference"].iloc[0]
    if by:  # one line for the card: the groups where some scorer is far below
        groups = list(dict.fromkeys(far[by]))
        return b.claim(f"Warning: a single scorer is far below {b.code(ref_name)} on "
                       f"{and_list([b.lit(g) for g in groups])} (named on the page).")
    names = list(dict.fromkeys(far["scorer"]))
    return b.claim(f"Warning: {and_list([b.code(x) for x in names])} "
                   f"{'is' if len(names) == 1 else 'are'} far below {b.code(ref_name)} on this "
                   "labeled data.")


def benchmark_counts(facts: pd.DataFrame, source: str) -> Claim:
    """The labeled set in one sentence, naming only what the data has (no "0 domains")."""
    b = Builder()
    f = facts.iloc[0]

    def n(col):
        return b.num(f[col], Ref(source, col))

    text = f"**{n('n_queries')} labeled quer{'ies' if int(f['n_queries']) != 1 else 'y'}**"
    if int(f["n_query_domains"]):
        text += f" over {n('n_query_domains')} domain{'s' if int(f['n_query_domains']) != 1 else ''}"
    phr = int(f["n_direct"]) + int(f["n_indirect"])
    if phr:
        text += f": {n('n_direct')} direct, {n('n_indirect')} indirect"
        rest = int(f["n_queries"]) - phr
        if rest:
            text += f" ({b.num(rest, Ref(source, 'n_queries', minus=Ref(source, 'n_phrased')))} without a phrasing label)"
    text += "; " + (f"{n('n_multi_tool')} need several tools" if int(f["n_multi_tool"])
                    else "each needs one tool") + "."
    return b.claim(text)


