"""Sentences that state a result, rendered from the table they describe, with their source.

A report page says two kinds of things: what a section measures and how (typed in the
notebook's Markdown), and what came out (which scorer wins and by how much, whether an
interval includes a loss, what a policy beats and on how many styles, what a repair
changed). The second kind is rendered here, from the DataFrame the page also writes as CSV,
so the same notebook says the right thing on any data: ties, a single scorer, no split,
all-zero tables and n=1 each get their own wording.

Every function returns a :class:`Claim`: Markdown text plus, for every number in it, the
value it shows and where it comes from (:class:`Ref`: a CSV beside the page, a column, the
rows it is read from). A notebook shows a claim with ``display(Markdown(log.add(claim)))``;
:class:`ClaimLog` writes ``claims.json`` beside the page's CSVs, and :func:`check_claims`
re-reads each cited CSV and checks every number (``tests/test_claims.py`` runs it on executed
pages). :func:`uncovered_numbers` lists numbers in a page's displayed prose that no claim
accounts for: a finding with no source.

Nothing here knows the bundled data: wording that is only true of it stays in the notebooks,
behind :func:`toolsel.tables.replication.is_article_benchmark` or a "bundled data" check.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from . import markdown as md

__all__ = ["Ref", "Num", "Claim", "ClaimLog", "CLAIMS_FILE", "in_sample_words", "plural", "plural_form",
           "one_request", "leader", "values", "real_differences", "mode_summary", "change",
           "escape_hatch", "verdict_label", "versus_best", "versus_rows", "variant_vs", "signal_alone",
           "policy_beats", "benchmark_counts",
           "latency", "which_scorer_verdicts", "scorer_gap_warning", "scorer_gap_card", "page_summary", "skipped_sections", "SKIP_NOTE", "check_claims", "uncovered_numbers", "numbers_in", "data_table", "counts", "count_rows",
           "fill", "per_row", "literal"]

#: The file a page's claims are written to, beside its CSVs.
CLAIMS_FILE = "claims.json"
#: What a page shows where a section about the bundled data is skipped (the README says why).
SKIP_NOTE = ("*A section about the bundled data only is skipped on this data; the report's "
             "README lists it, with why.*")
IN_SAMPLE = "in-sample: settings chosen and measured on the same requests"


# --------------------------------------------------------------------------------------------
# the claim and its numbers


@dataclass(frozen=True)
class Ref:
    """Where a number comes from: ``op`` over ``column`` of the rows of ``source`` matching
    ``where`` (``value``: exactly one row; ``count``: rows matching; ``sum``, ``mean``,
    ``min``, ``max``, ``nunique``; ``count_true``: rows whose column is true). ``minus``: the
    number is this minus another reference. ``inverse``: the number is ``1 / value``.
    ``round_to``: the value rounded to this many decimals before ``minus`` (a difference of
    two numbers as shown); ``negate``: the number is minus the value (an interval of b − a
    read from a table of a − b)."""

    source: str
    column: str | None = None
    where: Mapping[str, object] = field(default_factory=dict)
    op: str = "value"
    minus: Ref | None = None
    inverse: bool = False
    round_to: int | None = None
    negate: bool = False


@dataclass(frozen=True)
class Num:
    """A number as shown (``text``), its value, how it is shown (``kind``, ``digits``), and
    its :class:`Ref`."""

    text: str
    value: float
    kind: str
    digits: int
    ref: Ref


@dataclass
class Claim:
    """A rendered sentence (Markdown), its numbers with their sources, and the data strings
    (escaped) it quotes, whose digits are not numbers of the claim."""

    text: str
    numbers: list[Num] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.text

    @property
    def sources(self) -> list[str]:
        out: list[str] = []
        for n in self.numbers:
            r: Ref | None = n.ref
            while r is not None:
                if r.source not in out:
                    out.append(r.source)
                r = r.minus
        return out

    def __add__(self, other: Claim | str) -> Claim:
        if isinstance(other, str):
            return Claim(self.text + other, list(self.numbers), list(self.literals))
        return Claim(self.text + other.text, self.numbers + other.numbers,
                     self.literals + other.literals)

    def __radd__(self, other: str) -> Claim:
        if not isinstance(other, str):
            return NotImplemented
        if numbers_in(other):
            raise ValueError(f"text with numbers needs their sources: {other!r}")
        return Claim(other + self.text, list(self.numbers), list(self.literals))

    def to_dict(self) -> dict:
        out = {"text": self.text, "sources": self.sources, "literals": self.literals,
               "numbers": [_num_dict(n) for n in self.numbers]}
        if getattr(self, "fixed", None):
            out["fixed"] = self.fixed
        return out


def _py(v: object) -> object:
    return v.item() if hasattr(v, "item") else v


def _ref_dict(r: Ref | None) -> dict | None:
    if r is None:
        return None
    out = {"source": r.source, "column": r.column,
           "where": {str(k): _py(v) for k, v in r.where.items()}, "op": r.op,
           "minus": _ref_dict(r.minus), "inverse": r.inverse}
    if r.round_to is not None:  # written only when set: older claims files stay as they were
        out["round_to"] = r.round_to
    if r.negate:
        out["negate"] = True
    return out


def _num_dict(n: Num) -> dict:
    return {"text": n.text, "value": float(n.value), "kind": n.kind, "digits": n.digits,
            "ref": _ref_dict(n.ref)}


def _fmt(value: float, kind: str, digits: int) -> str:
    if kind == "int":
        return f"{int(round(value)):,}"
    if kind == "pct":
        return f"{100 * value:.{digits}f}%"
    if kind == "points":
        return f"{100 * value:.{digits}f}"
    if kind == "spoints":
        return f"{100 * value:+.{digits}f}"
    if kind == "spct":
        return f"{100 * value:+.{digits}f}%"
    if kind == "dec":
        return f"{value:,.{digits}f}"
    if kind == "sdec":
        return f"{value:+.{digits}f}"
    raise ValueError(f"unknown number kind {kind!r}")


class _Builder:
    """Collects the numbers and literals of one sentence while it is written."""

    def __init__(self) -> None:
        self.numbers: list[Num] = []
        self.literals: list[str] = []

    def num(self, value: float, ref: Ref, kind: str = "int", digits: int = 0) -> str:
        value = float(_py(value))
        text = _fmt(value, kind, digits)
        self.numbers.append(Num(text, value, kind, digits, ref))
        return text

    def lit(self, text: object) -> str:
        s = md.escape(text)
        self.literals.append(s)
        return s

    def param(self, text: object) -> str:
        """A setting of the analysis (a significance level), shown as is: not a finding."""
        s = str(text)
        self.literals.append(s)
        return s

    def code(self, text: object) -> str:
        s = md.code(text)
        self.literals.append(s)
        return s

    def claim(self, text: str) -> Claim:
        return Claim(text, self.numbers, self.literals)


def plural_form(word: str) -> str:
    """The English plural of a regular noun: ``tool`` → ``tools``, ``query`` → ``queries``."""
    if word.endswith("y") and word[-2:-1] not in ("", *"aeiou"):
        return word[:-1] + "ies"
    return word + "s"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 tool"``, ``"2 tools"``, ``"0 queries"`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else (many or plural_form(word))}"


def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _rows(df: pd.DataFrame, where: Mapping[str, object]) -> pd.DataFrame:
    mask = pd.Series(True, index=df.index)
    for col, val in where.items():
        if col not in df.columns:
            raise KeyError(f"no column {col!r} (columns: {list(df.columns)})")
        mask &= df[col].astype(str) == str(_py(val))
    return df[mask]


# --------------------------------------------------------------------------------------------
# wording that depends on the data's split


def in_sample_words(has_split: bool, *, dev: str = "dev", test: str = "test") -> dict[str, str]:
    """Words for a page that chooses settings on one set and reports on another.

    With a split: ``{"heading": "test requests, settings chosen on dev", "reported": "test",
    "chosen": "dev", "note": ""}``. Without: the heading and note say
    ``"in-sample: settings chosen and measured on the same requests"``.
    """
    if has_split:
        return {"heading": f"{test} requests, settings chosen on {dev}", "reported": test,
                "chosen": dev, "note": "", "in_sample": ""}
    return {"heading": IN_SAMPLE, "reported": "every request", "chosen": "every request",
            "note": f"*{IN_SAMPLE[0].upper()}{IN_SAMPLE[1:]}: a description of this set, not a "
                    "held-out estimate.*", "in_sample": " (in-sample)"}


def one_request(n: int, source: str, *, column: str = "n_queries",
                where: Mapping[str, object] | None = None, unit: str = "request",
                what: str = "a rate") -> Claim:
    """"With 16 requests, one request moves a rate by 6.2 points." from the actual ``n``."""
    b = _Builder()
    ref = Ref(source, column, dict(where or {}), "value" if where else "max")
    if n <= 0:
        return b.claim(f"No {plural_form(unit)}: no rate.")
    n_text = b.num(n, ref)
    if n == 1:
        return b.claim(f"With {n_text} {unit}, {what} is 0 or 100%: read it as one example.")
    pts = b.num(1 / n, Ref(source, column, dict(where or {}), ref.op, inverse=True),
                "points", 1)
    return b.claim(f"With {n_text} {plural_form(unit)}, one {unit} moves {what} by {pts} "
                   "points.")


# --------------------------------------------------------------------------------------------
# which scorer wins, and by how much


def values(table: pd.DataFrame, metric: str, source: str, *, by: str = "scorer",
           where: Mapping[str, object] | None = None, kind: str = "dec",
           digits: int = 3) -> Claim:
    """Each row's ``metric``: ``"jaccard 0.404, bm25 0.485"`` (rows in table order)."""
    b = _Builder()
    where = dict(where or {})
    part = _rows(table, where) if where else table
    return b.claim(", ".join(
        f"{b.lit(r[by])} {b.num(r[metric], Ref(source, metric, {**where, by: r[by]}), kind, digits)}"
        for _, r in part.iterrows()))


def leader(table: pd.DataFrame, metric: str, source: str, *, by: str = "scorer",
           where: Mapping[str, object] | None = None, kind: str = "pct", digits: int = 1,
           label: str | None = None, paired: pd.DataFrame | None = None,
           paired_source: str = "", paired_where: Mapping[str, object] | None = None) -> Claim:
    """Which row of ``by`` has the highest ``metric`` and by how much it leads the next one.

    Ties (equal after rounding to what is shown) are named together; one row: "only X";
    every row equal: "every scorer has ...". The lead is the difference of the two values
    as shown (92.1% and 91.7%: 0.4 points). With ``paired`` (a
    :func:`toolsel.eval.stats.paired_comparison` table, rows ``a``/``b`` with ``diff_low``,
    ``diff_high``; ``paired_where`` picks its cut-off and metric), the leader is called
    highest only when the paired interval of its difference with the runner-up excludes
    zero; otherwise the sentence says the two tie. The family is that one comparison (the
    top two), so no adjustment for multiple comparisons is made.
    """
    b = _Builder()
    where = dict(where or {})
    part = _rows(table, where) if where else table
    label = label or metric
    if part.empty:
        return b.claim(f"No {label} to compare.")
    vals = part.set_index(by)[metric].astype(float)

    def num(name):
        return b.num(vals[name], Ref(source, metric, {**where, by: name}), kind, digits)

    first = [n for n in vals.index if _fmt(vals[n], kind, digits) == _fmt(vals.max(), kind,
                                                                          digits)]
    if len(vals) == 1 or len(first) == len(vals):
        return b.claim(f"Only {b.lit(vals.index[0])} was run: {label} {num(vals.index[0])}."
                       if len(vals) == 1 else
                       f"Every {by} has the same {label}: {num(vals.index[0])}.")
    if len(first) > 1:
        return b.claim(f"{_and([b.lit(n) for n in first])} share the highest {label} "
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
    low, lo, hi = _paired_interval(b, paired, paired_source, dict(paired_where or {}), name,
                                   second, "spoints" if kind == "pct" else "sdec", digits)
    if low > 0:
        return b.claim(f"{head}; the paired 95% bootstrap interval of that lead, [{lo}, {hi}]"
                       f"{unit}, is above zero (the top two compared, no other pair).")
    return b.claim(f"{b.lit(name)} ({num(name)}) and {b.lit(second)} ({num(second)}) tie on "
                   f"{label}: {b.lit(name)}'s lead of {lead}{unit} on the mean has a paired "
                   f"95% bootstrap interval of [{lo}, {hi}]{unit}, which includes zero (the "
                   "top two compared, no other pair).")


def _paired_interval(b: _Builder, paired: pd.DataFrame, source: str, where: dict, name: str,
                     second: str, kind: str, digits: int) -> tuple[float, str, str]:
    """The paired interval of ``name`` − ``second`` from a paired-comparison table, whichever
    way round its row is stored: ``(low, low as shown, high as shown)``, both cited."""
    rows = _rows(paired, where) if where else paired
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
    return sign * r[ends[0]], lo, hi


def real_differences(paired: pd.DataFrame, source: str, *, n_queries: int, n_source: str,
                     metric: str = "R@k", alpha: float = 0.05) -> Claim:
    """The pairs whose difference a Holm-adjusted sign test calls real, per cut-off, with the
    number of pairs adjusted over counted from the table (``n_source``: a CSV with an
    ``n_queries`` column, e.g. the sweep's summary)."""
    b = _Builder()
    if paired.empty:
        return b.claim("No pairs of scorers to compare.")
    per_k = paired.groupby("top_k", sort=False).size()
    k0 = per_k.index[0]
    n_pairs = b.num(per_k.iloc[0], Ref(source, "a", {"top_k": k0}, "count"))
    real = paired[paired["real"].astype(bool)]
    parts = []
    for r in real.itertuples():
        w = {"top_k": r.top_k, "a": r.a, "b": r.b}
        parts.append(f"K={b.num(r.top_k, Ref(source, 'top_k', w))}: {b.lit(r.a)} vs "
                     f"{b.lit(r.b)} ({b.num(r.diff, Ref(source, 'diff', w), 'spoints', 1)} "
                     "points)")
    head = (f"Holm-adjusted over the {n_pairs} pair{'s' if per_k.iloc[0] != 1 else ''} "
            f"compared at each K, the sign test (p < {b.param(alpha)}) finds ")
    nq = b.num(n_queries, Ref(n_source, "n_queries", {}, "max"))
    if real.empty:
        return b.claim(head + f"no real {md.escape(metric)} difference: every pair is within "
                       f"what {nq} queries can tell apart.")
    return b.claim(head + f"real {md.escape(metric)} differences for " + "; ".join(parts)
                   + f". Every other pair is within what {nq} queries can tell apart.")


# --------------------------------------------------------------------------------------------
# misses and what the escape hatch recovers


def mode_summary(counts: pd.DataFrame, source: str, *, k: int | None = None) -> Claim:
    """Per failure mode, how many misses each scorer has and which have the fewest.

    ``counts``: scorer rows (index or a ``scorer`` column) × mode columns and ``total``
    (:func:`toolsel.tables.failure_modes.mode_counts`).
    """
    b = _Builder()
    c = counts.reset_index() if "scorer" not in counts.columns else counts
    c = c.set_index("scorer")
    modes = [m for m in c.columns if m != "total"]
    if c.empty:
        return b.claim("No scorer was run.")
    if "total" in c.columns and (c["total"] == 0).all():
        return b.claim("No scorer missed a required tool" + (f" at K={k}" if k else "") + ".")
    parts = [f"**{md.escape(m)}**: {_mode_counts(b, c[m].astype(int), m, source)}"
             for m in modes if int(c[m].sum())]
    none = [m for m in modes if int(c[m].sum()) == 0]
    text = "; ".join(parts) + "."
    if none:
        text += (" No scorer has a miss of kind "
                 + " or ".join(md.escape(m) for m in none) + ".")
    return b.claim(text)


def _mode_counts(b: _Builder, col: pd.Series, mode: str, source: str) -> str:
    """One failure mode's misses per scorer, and which scorers have the fewest."""
    each = ", ".join(f"{b.num(v, Ref(source, mode, {'scorer': s}))} with {b.lit(s)}"
                     for s, v in col.items())
    if len(col) > 1 and col.nunique() > 1:
        fewest = [s for s, v in col.items() if v == col.min()]
        each += f" (fewest: {_and([b.lit(s) for s in fewest])})"
    elif len(col) > 1:
        each += " (the same for every scorer)"
    return each


def change(before: float, after: float, metric: str, source: str, ref_before: Ref,
           ref_after: Ref, *, kind: str = "pct", digits: int = 0) -> Claim:
    """"raising Complete@10 from 50% to 63%" / "leaving Complete@10 at 50%" / "lowering"."""
    b = _Builder()
    x = b.num(before, ref_before, kind, digits)
    if _fmt(before, kind, digits) == _fmt(after, kind, digits):
        return b.claim(f"leaving {metric} at {x}")
    y = b.num(after, ref_after, kind, digits)
    return b.claim(f"{'raising' if after > before else 'lowering'} {metric} from {x} to {y}")


def escape_hatch(summary: pd.DataFrame, source: str, scorer: str, k: int, n_queries: int,
                 *, words: pd.DataFrame | None = None, words_source: str | None = None,
                 has_search_terms: bool = True) -> Claim:
    """What one ``discover`` call recovers for one scorer, and what it costs (notebook 03).

    ``summary``: :attr:`toolsel.tables.scenario.EscapeHatch.summary`; ``words``: the
    content-word variant's columns (``recovered_content_words``, ...), per scorer.
    """
    b = _Builder()
    row = summary.set_index("scorer").loc[scorer]
    w = {"scorer": scorer}

    def n(col, kind="int", digits=0, src=source, frame=None):
        return b.num((frame if frame is not None else row)[col], Ref(src, col, w), kind, digits)

    kk = b.num(k, Ref(source, "top_k", w))
    misses = int(row["misses"])
    if misses == 0:
        return b.claim(f"With **{b.lit(scorer)}** at K={kk} no required tool is missed "
                       f"({n('n_queries')} queries): there is nothing for `discover` to recover.")
    text = (f"With **{b.lit(scorer)}** at K={kk}: {n('misses')} "
            f"miss{'es' if misses != 1 else ''} in {n('queries_with_miss')} "
            f"quer{'ies' if int(row['queries_with_miss']) != 1 else 'y'}. One call with the "
            f"user's words recovers {n('recovered_literal')}; with only unseen tools "
            f"{n('recovered_literal_unseen')}")
    if words is not None and words_source:
        wr = words.set_index("scorer").loc[scorer]
        c = change(row["Complete@k"], wr["Complete_after_content_words"], f"Complete@{k}",
                   source, Ref(source, "Complete@k", w),
                   Ref(words_source, "Complete_after_content_words", w))
        b.numbers += c.numbers
        text += (f"; with the query's content words (no labels) "
                 f"{n('recovered_content_words', src=words_source, frame=wr)}, {c.text}")
    if has_search_terms:
        c2 = change(row["Complete@k"], row["Complete_after_search_term"], f"Complete@{k}",
                    source, Ref(source, "Complete@k", w),
                    Ref(source, "Complete_after_search_term", w))
        b.numbers += c2.numbers
        extra = b.num(row["payload_chars_search_term"] - row["payload_chars"],
                      Ref(source, "payload_chars_search_term", w,
                          minus=Ref(source, "payload_chars", w)), "dec", 0)
        text += (f". With the labeler's search term it recovers {n('recovered_search_term')} "
                 f"({c2.text}): an upper bound, since whoever wrote the term knew the answer. "
                 f"Its cost: {n('extra_calls_search_term')} extra calls over "
                 f"{n('n_queries')} queries and {extra} more characters per query on average; "
                 f"the payload reduction goes from {n('payload_reduction', 'pct', 1)} to "
                 f"{n('payload_reduction_search_term', 'pct', 1)}.")
    else:
        text += ". The query file gives no `search_term`: the search-term call is not made."
    return b.claim(text)


# --------------------------------------------------------------------------------------------
# a candidate against the best single scorer; variants of one scorer


def verdict_label(diff: float, low: float, high: float) -> str:
    """A paired difference and its interval in words: ``better`` (interval above zero),
    ``worse`` (below zero), or ahead/behind on the mean with what the interval allows."""
    if low > 0:
        return "better (interval above zero)"
    if high < 0:
        return "worse (interval below zero)"
    if low == 0 and high == 0:
        return "same on every request"
    if diff > 0:
        return ("ahead on the mean; interval reaches zero" if low == 0
                else "ahead on the mean; interval includes a loss")
    if diff < 0:
        return ("behind on the mean; interval reaches zero" if high == 0
                else "behind on the mean; interval includes a gain")
    return "same mean; interval both ways"


def versus_best(vs: pd.DataFrame, source: str, *, candidate: str = "default",
                digits: int = 3) -> Claim:
    """Where ``candidate`` is below the best single scorer on the means, where its paired
    interval shows a gain, and where it includes a loss (from
    :func:`toolsel.tables.compare_styles.versus_best`)."""
    b = _Builder()
    v = vs[vs["candidate"] == candidate] if "candidate" in vs.columns else vs
    if v.empty:
        return b.claim(f"No comparison of `{md.escape(candidate)}` with a single scorer.")

    def cell(r, col="diff"):
        w = {"style": r.style, "metric": r.metric}
        return b.num(getattr(r, col), Ref(source, col, w), "sdec", digits)

    def where(rows) -> str:
        return _and([f"{b.lit(r.style)} {b.lit(r.metric)}" for r in rows.itertuples()])

    below = v[v["diff"] < 0]
    win = v[v["diff_low"] > 0]
    loss = v[v["diff_low"] < 0]
    cand = b.code(candidate)
    text = (f"On the means {cand} is "
            + ("at least the best single scorer everywhere" if below.empty else
               "below the best single scorer on "
               + _and([f"{b.lit(r.style)} {b.lit(r.metric)} ({cell(r)} against "
                       f"{b.lit(r.best_single)})" for r in below.itertuples()])) + ". ")
    text += ("The paired 95% interval shows a gain on " + where(win) if len(win)
             else "No paired interval shows a gain")
    text += ("; it includes a loss on " + where(loss) + ": there these requests cannot rule "
             "out that the best single scorer is better." if len(loss)
             else "; none includes a loss.")
    return b.claim(text)


def versus_rows(vs: pd.DataFrame, source: str, *, style: str, candidate: str = "default",
                digits: int = 3) -> Claim:
    """One registry's line: per metric, the candidate's mean against the best single
    scorer's, the paired difference with its 95% interval, and :func:`verdict_label`."""
    b = _Builder()
    v = vs[(vs["style"].astype(str) == str(style)) & (vs["candidate"] == candidate)]
    parts = []
    for r in v.itertuples():
        w = {"style": style, "metric": r.metric}

        def n(col, kind="dec"):
            return b.num(getattr(r, col), Ref(source, col, w), kind, digits)

        parts.append(f"{b.lit(r.metric)} {n('candidate_mean')} vs {b.lit(r.best_single)} "
                     f"{n('best_mean')}, {n('diff', 'sdec')} [{n('diff_low', 'sdec')}, "
                     f"{n('diff_high', 'sdec')}]: {verdict_label(r.diff, r.diff_low, r.diff_high)}")
    if not parts:
        return b.claim(f"**{b.lit(style)}**: no comparison.")
    return b.claim(f"**{b.lit(style)}**, {b.code(candidate)} against the best single scorer: "
                   + "; ".join(parts) + ".")


def _gap_groups(gaps: pd.DataFrame, by: str | None):
    if by is None:
        return [({}, gaps)]
    return [({by: key}, part) for key, part in gaps.groupby(by, sort=False)]


def scorer_gap_warning(gaps: pd.DataFrame, source: str, *, by: str | None = None,
                       unit: str = "request", digits: int = 3) -> Claim:
    """The single-scorer warning of :mod:`toolsel.eval.scorer_warning`, from its
    :func:`~toolsel.eval.scorer_warning.gap_table` (``by="style"``: one sentence per style).

    Where some row is ``far`` (a gap of at least the table's ``margin``, a paired 95% interval
    above zero and a sign-test p-value below ``alpha``): a warning naming each such scorer with
    its means, the gap and its interval, and the requests each scorer wins. Where none is: that
    no scorer is shown far below, and the largest gap with its interval, saying why it does not
    count (under the margin, an interval reaching zero, or too few requests for the sign test).
    ``unit``: what a labeled item is called on the page (``"query"`` on the overview).
    """
    units = plural_form(unit)
    b = _Builder()
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
            return (f"a gap of {num(first, 'margin', 'dec', 2)} or more on R@5 or "
                    "Complete@10, with a 95% paired interval above zero and an exact sign test "
                    f"over the {units} where the two differ below p = "
                    f"{num(first, 'alpha', 'dec', 2)}")

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
                f"**Warning:** {head}, {_and([b.code(x) for x in names])} "
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
            elif float(top["gap_low"]) <= 0:
                text += (f": its interval reaches zero, so these {units} cannot tell it from "
                         f"noise (more labeled {units} narrow it).")
            else:
                wins = int(top["reference_wins"])
                text += (f", but only {num(top, 'reference_wins', 'int', 0)} "
                         f"{unit + ' is' if wins == 1 else units + ' are'} better with {ref} and "
                         f"{num(top, 'scorer_wins', 'int', 0)} worse: the sign test's p = "
                         f"{num(top, 'p_value', 'dec', 3)} is not below "
                         f"{num(top, 'alpha', 'dec', 2)}, too few {units} to call it a loss.")
        sentences.append(text)
    return b.claim(" ".join(sentences) if by is None else "\n\n".join(sentences))


def scorer_gap_card(gaps: pd.DataFrame, *, by: str | None = None) -> Claim | None:
    """The index card's line of :func:`scorer_gap_warning`: which scorers are far below the
    reference on this labeled data (per style with ``by``), or ``None`` when none is."""
    b = _Builder()
    if gaps.empty:
        return None
    far = gaps[gaps["far"].astype(str).str.lower().isin(["true", "1", "1.0"])]
    if far.empty:
        return None
    ref_name = far["reference"].iloc[0]
    if by:  # one line for the card: the groups where some scorer is far below
        groups = list(dict.fromkeys(far[by]))
        return b.claim(f"Warning: a single scorer is far below {b.code(ref_name)} on "
                       f"{_and([b.lit(g) for g in groups])} (named on the page).")
    names = list(dict.fromkeys(far["scorer"]))
    return b.claim(f"Warning: {_and([b.code(x) for x in names])} "
                   f"{'is' if len(names) == 1 else 'are'} far below {b.code(ref_name)} on this "
                   "labeled data.")


def variant_vs(table: pd.DataFrame, a: str, b_name: str, source: str, *,
               metrics: Sequence[str] = ("R@5", "Complete@10", "MRR"), by: str = "style",
               digits: int = 3, label: str | None = None) -> Claim:
    """Per metric: on which groups variant ``a`` scores at least as well as ``b_name``, and
    the values where it scores lower (every metric of the table, MRR included)."""
    b = _Builder()
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
        lower.append(f"on {b.lit(m)} lower on " + _and([
            f"{b.lit(g)} ({b.num(t.loc[(g, a), m], Ref(source, m, {by: g, 'scorer': a}), 'dec', digits)}"
            f" vs {b.num(t.loc[(g, b_name), m], Ref(source, m, {by: g, 'scorer': b_name}), 'dec', digits)})"
            for g in lo]))
    every = "every " + by if len(groups) > 1 else f"{b.lit(groups[0])}"
    text = (label or f"*{b.lit(a)}* against *{b.lit(b_name)}*") + ": "
    if held:
        text += f"at least as well on {_and([b.lit(m) for m in held])} on {every}"
    if lower:
        text += ("; " if held else "") + "; ".join(lower)
    return b.claim(text + ".")


def signal_alone(table: pd.DataFrame, source: str, *, candidate: str = "default",
                 variants: Sequence[str] = ("lexical only", "embedding only"),
                 metrics: Sequence[str] = ("R@5", "Complete@10", "MRR"), by: str = "style",
                 digits: int = 3) -> Claim:
    """Where one signal alone scored above the fused ``candidate`` (every metric shown)."""
    b = _Builder()
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
                       f"{_and([b.lit(m) for m in metrics if m in t.columns])}.")
    return b.claim(f"A signal alone scored above {cand} " + "; ".join(parts) + ".")


def latency(table: pd.DataFrame, source: str, *, candidate: str = "default",
            tools: bool = True, p95_all: bool = False) -> Claim:
    """Per-request latency from one benchmark table (``scorer, n_tools, p50_ms, p95_ms``):
    the candidate's p50 and p95 first, then every other scorer of the same table."""
    b = _Builder()
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


def _lower_first(claim: Claim) -> Claim:
    t = claim.text
    return Claim(t[:1].lower() + t[1:], claim.numbers, claim.literals)


def which_scorer_verdicts(versus: pd.DataFrame, *, versus_source: str,
                          ablation: pd.DataFrame | None = None, ablation_source: str = "",
                          latency_table: pd.DataFrame | None = None, latency_source: str = "",
                          latency_long: pd.DataFrame | None = None,
                          latency_long_source: str = "", candidate: str = "default",
                          links: Mapping[str, str] | None = None) -> list[Claim]:
    """The README's "Which scorer?" verdicts, one :class:`Claim` each, from the committed
    tables (sources are paths relative to the README)."""
    links = dict(links or {})
    out = [Claim(f"Paired over the same test requests ({links.get('versus', '')}): ")
           + _lower_first(versus_best(versus, versus_source, candidate=candidate, digits=2))]
    if ablation is not None:
        on = f"On the dev requests the design was chosen on ({links.get('ablation', '')}): "
        out.append(Claim(on) + _lower_first(signal_alone(ablation, ablation_source,
                                                         candidate=candidate, digits=2)))
        if "clauses encoded apart" in set(ablation["scorer"]):
            out.append(variant_vs(ablation, candidate, "clauses encoded apart",
                                  ablation_source, digits=3,
                                  label=f"Clauses read in context ({md.code(candidate)}) "
                                        "against clauses encoded apart, on dev"))
    if latency_table is not None and len(latency_table):
        out.append(Claim("Per-request latency ") + latency(latency_table, latency_source,
                                                          candidate=candidate) + ".")
    if latency_long is not None and len(latency_long):
        out.append(Claim("On requests of three to five sentences (the same benchmark script, "
                         "its own run): ")
                   + latency(latency_long, latency_long_source, candidate=candidate,
                             tools=False, p95_all=True) + ".")
    return out


# --------------------------------------------------------------------------------------------
# policies against fixed top-K


def policy_beats(style_verdict: pd.DataFrame, policy_verdict: pd.DataFrame, source: str,
                 policy_source: str, *, in_sample: bool,
                 unit: tuple[str, str] = ("style", "styles")) -> Claim:
    """How many styles a policy other than fixed top-K beats it on, and, per policy, on
    which styles (from ``style_verdict.csv`` and ``policy_verdict.csv``)."""
    b = _Builder()
    n = len(style_verdict)
    if n == 0:
        return b.claim("No style evaluated.")
    beats = style_verdict[style_verdict["beats_top_k"].astype(bool)]
    nb = b.num(len(beats), Ref(source, "beats_top_k", {}, "count_true"))
    nn = b.num(n, Ref(source, "style", {}, "count"))
    unit = unit[0] if n == 1 else unit[1]
    text = (f"A policy other than fixed top-K beats it on the frontier on **{nb} of {nn}** "
            f"{unit}")
    pv = policy_verdict.copy()
    pv["beats"] = pv["beats"].astype(bool)
    per = []
    for pol, g in pv.groupby("policy", sort=False):
        won = list(g.loc[g["beats"], "style"])
        cnt = b.num(len(won), Ref(policy_source, "beats", {"policy": pol}, "count_true"))
        per.append(f"{b.code(pol)} on {cnt}" + (f" ({_and([b.lit(s) for s in won])})"
                                                  if won and n > 1 else ""))
    text += ". Per policy: " + "; ".join(per) + "."
    if in_sample:
        text += (" Settings were chosen and measured on the same requests: this describes "
                 "these requests, it is not a held-out result.")
    return b.claim(text)


# --------------------------------------------------------------------------------------------
# counts that describe a benchmark


def data_table(registry, queries) -> pd.DataFrame:
    """One row of counts describing a page's data (tools, domains, payload, queries by
    phrasing, dev/test/unsplit queries): written as ``data.csv`` so sentences can cite it."""
    from ..tables.replication import benchmark_facts
    row = dict(benchmark_facts(registry, queries))
    row["n_phrased"] = row["n_direct"] + row["n_indirect"]
    row["n_dev"] = sum(q.split == "dev" for q in queries)
    row["n_test"] = sum(q.split == "test" for q in queries)
    row["n_unsplit"] = sum(not q.split for q in queries)
    return pd.DataFrame([row])


def counts(frame: pd.DataFrame, source: str, template: str, *,
           where: Mapping[str, object] | None = None, **columns: str) -> Claim:
    """A sentence of counts read from one row of ``frame`` (the row matching ``where``):
    ``template`` with ``{name}`` placeholders, each filled from the column ``columns[name]``
    (thousands separators)."""
    b = _Builder()
    where = dict(where or {})
    part = _rows(frame, where) if where else frame
    if len(part) != 1:
        raise ValueError(f"counts: {len(part)} rows match {where}, expected one")
    row = part.iloc[0]
    values = {name: b.num(row[col], Ref(source, col, where)) for name, col in columns.items()}
    return b.claim(template.format(**values))


def count_rows(frame: pd.DataFrame, source: str, template: str, *,
               where: Mapping[str, object] | None = None) -> Claim:
    """``template`` with ``{n}`` the number of rows of ``frame`` (matching ``where``)."""
    b = _Builder()
    where = dict(where or {})
    part = _rows(frame, where) if where else frame
    return b.claim(template.format(n=b.num(len(part), Ref(source, None, where, "count"))))


def _spec(spec) -> tuple[str, str, str, int]:
    """``"col"`` or ``(col, op[, kind[, digits]])`` as ``(col, op, kind, digits)``."""
    if isinstance(spec, str):
        return spec, "value", "int", 0
    col, op, *rest = spec
    kind = rest[0] if rest else "int"
    digits = rest[1] if len(rest) > 1 else 0
    return col, op, kind, digits


_OPS = ("value", "sum", "mean", "min", "max", "nunique", "count_true")


def fill(frame: pd.DataFrame, source: str, template: str, *,
         where: Mapping[str, object] | None = None, **specs) -> Claim:
    """``template`` with each ``{name}`` read from the rows of ``frame`` matching ``where``:
    ``specs[name]`` is a column (its one value, thousands separators) or ``(column, op,
    kind, digits)`` with ``op`` one of value, sum, mean, min, max, nunique, count_true and
    ``kind`` as shown (int, pct, points, dec, ...): e.g. the range of a column over rows,
    ``lo=("R@n", "min", "pct", 0), hi=("R@n", "max", "pct", 0)``."""
    b = _Builder()
    where = dict(where or {})
    part = _rows(frame, where) if where else frame
    values = {}
    for name, spec in specs.items():
        col, op, kind, digits = _spec(spec)
        if op not in _OPS:
            raise ValueError(f"fill: unknown op {op!r} for {name!r}")
        if col not in part.columns:
            raise KeyError(f"fill: no column {col!r} (columns: {list(part.columns)})")
        s = part[col]
        if op == "value":
            if len(s) != 1:
                raise ValueError(f"fill: {len(s)} rows match {where}, expected one")
            v = s.iloc[0]
        elif op == "count_true":  # as the check reads it back: empty is not true
            v = int(s.astype(str).str.lower().isin(["true", "1", "1.0", "yes"]).sum())
        else:
            if s.empty:
                raise ValueError(f"fill: no rows match {where} for {op} of {col!r}")
            v = getattr(s, op)()
        values[name] = b.num(v, Ref(source, col, where, op), kind, digits)
    return b.claim(template.format(**values))


def per_row(frame: pd.DataFrame, source: str, template: str, *, by: str = "scorer",
            where: Mapping[str, object] | None = None, sep: str = ", ", **specs) -> Claim:
    """``template`` once per row of ``frame`` matching ``where`` (table order), joined by
    ``sep``: ``{key}`` is the row's ``by`` (quoted data), each other ``{name}`` its column
    ``specs[name]`` (a column name, or ``(column, kind, digits)``)."""
    b = _Builder()
    where = dict(where or {})
    part = _rows(frame, where) if where else frame
    out = []
    for _, r in part.iterrows():
        w = {**where, by: r[by]}
        vals = {"key": b.lit(r[by])}
        for name, spec in specs.items():
            col, kind, digits = (spec, "int", 0) if isinstance(spec, str) else (
                spec[0], spec[1] if len(spec) > 1 else "int", spec[2] if len(spec) > 2 else 0)
            vals[name] = b.num(r[col], Ref(source, col, w), kind, digits)
        out.append(template.format(**vals))
    return b.claim(sep.join(out))


def literal(template: str, **values: object) -> Claim:
    """A sentence whose only numbers are data strings (a machine's description, a target's
    name) or settings of the analysis (a smoke run's size): ``template`` with each
    ``{name}`` the escaped value (ints with thousands separators), recorded as a literal so
    the claims check does not take its digits for findings."""
    b = _Builder()
    shown = {name: b.lit(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else v)
             for name, v in values.items()}
    return b.claim(template.format(**shown))


def benchmark_counts(facts: pd.DataFrame, source: str) -> Claim:
    """The labeled set in one sentence, naming only what the data has (no "0 domains")."""
    b = _Builder()
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


# --------------------------------------------------------------------------------------------
# the log beside a page's CSVs, and the checks


class ClaimLog:
    """The claims a page shows, written to ``claims.json`` in its out_dir after every add."""

    def __init__(self, out_dir: str | Path, page: str | None = None) -> None:
        self.dir = Path(out_dir)
        self.page = page or self.dir.name
        self.claims: list[Claim] = []
        self.skipped: list[dict[str, str]] = []
        self._summary: str | None = None

    def skip(self, section: str, reason: str) -> str:
        """Record a section skipped on this data because it is about the bundled data (the
        article's registry, queries or scenario), with why; the report's README gathers
        these once (:func:`skipped_sections`). Returns the page's note, which names
        neither: on a user's data the page says nothing about the bundled data."""
        entry = {"section": section, "reason": reason}
        if entry not in self.skipped:
            self.skipped.append(entry)
            self.write()
        return SKIP_NOTE

    def summary(self, claim: Claim | str, *extra: Claim | str) -> str:
        """Record the page's one-line summary of what ran on this data (the index card's
        text, :func:`page_summary`); the claim is checked like any other."""
        text = self.add(claim, *extra)
        plain = _plain(text)
        self._summary = plain[:1].upper() + plain[1:]
        self.write()
        return text

    def fixed(self, text: str, source: str) -> str:
        """Record text whose numbers describe a fixed source (the article, the bundled
        recording), shown only on the bundled data; its digits are not checked against a
        table, and ``claims.json`` marks it ``fixed`` so a test can require that no such
        text appears on other data."""
        claim = Claim(text, [], [], )
        claim.fixed = source
        if all(c.text != text for c in self.claims):
            self.claims.append(claim)
            self.write()
        return text

    def add(self, claim: Claim | str, *extra: Claim | str) -> str:
        """Record ``claim`` (and ``extra`` parts joined with spaces); return its Markdown."""
        for part in extra:
            claim = claim + " " + part if isinstance(claim, Claim) else claim + " " + str(part)
        if not isinstance(claim, Claim):
            claim = Claim(str(claim))
            if numbers_in(claim.text):
                raise ValueError(f"a claim with numbers needs their sources: {claim.text!r}")
        # the same sentence read from other rows ("(4 misses)" for two scorers) is kept twice
        if all(c.to_dict() != claim.to_dict() for c in self.claims):
            self.claims.append(claim)
            self.write()
        return claim.text

    def write(self) -> Path:
        from ..io import write_json
        self.dir.mkdir(parents=True, exist_ok=True)
        data = {"page": self.page, "claims": [c.to_dict() for c in self.claims]}
        if self._summary:
            data["summary"] = self._summary
        if self.skipped:
            data["skipped"] = self.skipped
        return write_json(data, self.dir / CLAIMS_FILE)


def _plain(markdown_text: str) -> str:
    """Markdown inline text as plain text (emphasis, code, escapes and tags dropped)."""
    import html as _html
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown_text)
    text = re.sub(r"<[^>]*>", "", text)
    text = re.sub(r"[`*]|\\(?=[^\w\s])", "", text)
    return re.sub(r"\s+", " ", _html.unescape(text)).strip()


def skipped_sections(page_dir: str | Path) -> list[dict[str, str]]:
    """The sections a page skipped as bundled-only (:meth:`ClaimLog.skip`), with why."""
    path = Path(page_dir) / CLAIMS_FILE
    if not path.is_file():
        return []
    try:
        return list(json.loads(path.read_text(encoding="utf-8")).get("skipped") or [])
    except (OSError, ValueError):
        return []


def page_summary(page_dir: str | Path) -> str | None:
    """The one-line summary a page recorded of what ran (``claims.json``), or ``None``."""
    path = Path(page_dir) / CLAIMS_FILE
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("summary") or None
    except (OSError, ValueError):
        return None


_NUMBER = re.compile(r"(?<![\w.\-/=@,])[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\w])")
_CODE = re.compile(r"<code>.*?</code>|`[^`]*`")
# quoted data (a request, a tool's text): its digits are the data's, not a finding
_QUOTED = re.compile(r'"[^"\n]*"|&quot;.*?&quot;|“[^”]*”|\*[^*\n]+\*(?!\*)')
_LINK = re.compile(r"\]\([^)]*\)")
# the level of an interval ("95% interval", "bootstrap 95% CI"): a setting, not a finding
_LEVEL = re.compile(r"\b\d+% (?=(?:[\w-]+ )?(?:interval|CI|confidence))|\[95%\]|\(95%\)")


def numbers_in(text: str, literals: Sequence[str] = ()) -> list[str]:
    """The numbers a reader sees in Markdown ``text``: code spans, link targets, quoted or
    italic data (a request in quotes, an example in *...*) and the data strings a claim
    quotes (``literals``) left out; "K=10" and "R@5" count as names."""
    for lit in sorted(literals, key=len, reverse=True):
        if lit:
            text = text.replace(lit, " ")
    text = _LINK.sub("]", _CODE.sub(" ", text))
    text = _LEVEL.sub(" ", _QUOTED.sub(" ", text.replace("**", "")))
    return [m.group(0) for m in _NUMBER.finditer(text)]


def _parse(token: str) -> float:
    return float(token.replace(",", "").replace("%", "").replace("−", "-"))


def _eval(ref: dict, base: Path) -> float:
    path = base / ref["source"]
    df = pd.read_csv(path)
    rows = _rows(df, ref.get("where") or {})
    op, col = ref["op"], ref.get("column")
    if op == "count":
        v = float(len(rows))
    else:
        if col not in df.columns:
            raise KeyError(f"{path.name}: no column {col!r}")
        s = rows[col]
        if op == "value":
            if len(s) != 1:
                raise ValueError(f"{path.name}: {len(s)} rows match {ref.get('where')}, "
                                 "expected one")
            v = float(s.iloc[0])
        elif op == "count_true":
            v = float(s.astype(str).str.lower().isin(["true", "1", "1.0", "yes"]).sum())
        elif op in ("sum", "mean", "min", "max", "nunique"):
            v = float(getattr(s, op)())
        else:
            raise ValueError(f"unknown op {op!r}")
    if ref.get("round_to") is not None:
        v = float(f"{v:.{ref['round_to']}f}")  # as _fmt rounds what is shown
    if ref.get("minus"):
        v -= _eval(ref["minus"], base)
    if ref.get("negate"):
        v = -v
    if ref.get("inverse"):
        v = 1 / v
    return v


def _matches(shown: str, value: float, kind: str, digits: int) -> bool:
    x = _parse(shown)
    scale = 100 if kind in ("pct", "points", "spoints", "spct") else 1
    return abs(x - scale * value) <= 0.5 * 10 ** -digits + 1e-9


def check_claims(page_dir: str | Path) -> list[str]:
    """Problems with the claims of one page (``claims.json`` in ``page_dir``), as lines.

    For every claim: each number in its text must be one of its recorded numbers; each
    recorded number must show its value (to the digits shown) and equal what its source CSV
    holds (to the CSV's 6 decimals). An empty list: every claim matches its tables.
    """
    base = Path(page_dir)
    path = base / CLAIMS_FILE
    if not path.exists():
        return [f"{path}: no claims file"]
    data = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for c in data["claims"]:
        if c.get("fixed"):
            continue
        shown = [n["text"] for n in c["numbers"]]
        tokens = [t for s in shown for t in numbers_in(s)]
        for tok in numbers_in(c["text"], c.get("literals", ())):
            if tok not in tokens and tok.lstrip("+") not in [t.lstrip("+") for t in tokens]:
                problems.append(f"{base.name}: {tok!r} in {c['text']!r} has no source")
        for n in c["numbers"]:
            if n["text"] not in c["text"]:
                problems.append(f"{base.name}: recorded {n['text']!r} not in {c['text']!r}")
            if not _matches(n["text"], n["value"], n["kind"], n["digits"]):
                problems.append(f"{base.name}: {n['text']!r} does not show {n['value']}")
            try:
                truth = _eval(n["ref"], base)
            except (OSError, KeyError, ValueError) as exc:
                problems.append(f"{base.name}: {n['text']!r} in {c['text']!r}: {exc}")
                continue
            if not math.isclose(truth, n["value"], rel_tol=1e-5, abs_tol=2e-6):
                problems.append(f"{base.name}: {n['text']!r} in {c['text']!r} is {n['value']}"
                                f" but {n['ref']['source']} gives {truth}")
    return problems


def _displayed_markdown(executed: dict) -> list[str]:
    out = []
    for cell in executed.get("cells", []):
        for o in cell.get("outputs", []):
            text = o.get("data", {}).get("text/markdown")
            if text:
                out.append("".join(text) if isinstance(text, list) else text)
    return out


def uncovered_numbers(executed_ipynb: str | Path, page_dir: str | Path) -> list[str]:
    """Numbers in the prose a page displays (its Markdown outputs, tables and headings
    aside) that no recorded claim accounts for: findings without a source."""
    nb = json.loads(Path(executed_ipynb).read_text(encoding="utf-8"))
    path = Path(page_dir) / CLAIMS_FILE
    claims = json.loads(path.read_text(encoding="utf-8"))["claims"] if path.exists() else []
    texts = sorted((c["text"] for c in claims), key=len, reverse=True)
    literals = [lit for c in claims for lit in c.get("literals", ())]
    problems = []
    for block in _displayed_markdown(nb):
        for t in texts:
            block = block.replace(t, " ")
        prose = "\n".join(ln for ln in block.splitlines()
                          if not ln.lstrip().startswith(("|", "#")))
        # a table's caption (how many of its rows it shows) belongs to the table
        prose = re.sub(r"The first \d[\d,]* of \d[\d,]* (?:rows|candidate tools)", " ",
                       prose)
        for tok in numbers_in(prose, literals):
            problems.append(f"{Path(page_dir).name}: {tok!r} in {prose.strip()[:160]!r}")
    return problems
