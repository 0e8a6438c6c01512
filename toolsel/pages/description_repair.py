"""The page "Description repair" (notebook 09): its tables, and its sentences from them.

:func:`repair_tables` reads the misses of one scorer on the requests repairs may be chosen from
(a split file's dev part, else every request), the words their tools' texts lack, and, given a
patch, re-measures every scorer on every suite before and after it (paired intervals);
:func:`repair_sentences` renders the page's findings from those tables, each citing the CSV it
reads (:data:`FILES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from ..data import Query, Registry
from ..datasets import filter_split
from ..eval.sweep import sweep
from ..report import claims
from ..report import markdown as md
from ..eval.inference import level_words
from ..tables.compare import (Comparison, apply_repairs, compare_registries, compare_suites,
                              held_back_terms, repair_table)
from ..tables.failure_modes import classify_misses, repair_hints

__all__ = ["RepairTables", "repair_tables", "repair_sentences", "repair_change", "FILES"]

#: The CSV each table is written to (a table that is ``None`` is not written).
FILES = {"data": "data.csv", "misses": "dev_misses.csv", "hints": "dev_repair_hints.csv",
         "patch": "patch.csv", "leaks": "leaks.csv", "summaries": "compare_summary.csv",
         "changes": "compare_changed.csv", "gain": "gain_by_suite.csv"}


@dataclass
class RepairTables:
    """The page's tables (:data:`FILES`; the patch's tables are ``None`` without a patch),
    ``per_tool`` (the rank changes of :attr:`hint_scorer`, a
    :class:`~toolsel.tables.compare.Comparison` that writes its own files) and the settings:
    ``has_split``, ``suites`` (suite name → its requests, in report order: the one repairs are
    chosen from first), ``hint_scorer``, ``top_k``, ``unmotivated`` (repaired tools without a
    miss)."""

    data: pd.DataFrame
    misses: pd.DataFrame
    hints: pd.DataFrame
    patch: pd.DataFrame | None
    leaks: pd.DataFrame | None
    summaries: pd.DataFrame | None
    changes: pd.DataFrame | None
    gain: pd.DataFrame | None
    per_tool: Comparison | None
    has_split: bool
    hint_scorer: str
    top_k: int
    suites: dict[str, list[Query]] = field(default_factory=dict)
    unmotivated: list[str] = field(default_factory=list)

    def items(self):
        """``(name, table)`` of every table to write; ``None`` and empty leak tables left out."""
        return [(n, getattr(self, n)) for n in FILES if getattr(self, n) is not None
                and not (n == "leaks" and getattr(self, n).empty)]

    @property
    def chosen(self) -> str:
        """The suite the repairs are chosen from: ``dev``, or ``all`` without a split."""
        return next(iter(self.suites))

    @property
    def held_back(self) -> list[str]:
        """The suites the repairs are judged on (none were used to choose them)."""
        return list(self.suites)[1:]


def _suites(requests: list[Query], replication: list[Query], held_name: str
            ) -> tuple[bool, dict[str, list[Query]]]:
    has_split = any(q.split for q in requests)
    if has_split:
        suites = {"dev": filter_split(requests, "dev")}
        test = filter_split(requests, "test")
        if test:
            suites["test"] = test
    else:
        suites = {"all": requests}
    if replication:
        suites[held_name] = replication
    return has_split, suites


def _compare(t: RepairTables, reg: Registry, patch: Mapping[str, str], scorers):
    repaired = apply_repairs(reg, patch)
    t.patch = repair_table(reg, patch)
    t.unmotivated = sorted(set(t.patch["tool"]) - set(t.hints["expected"]))
    t.data["n_unmotivated"] = len(t.unmotivated)
    held = [q for name in t.held_back for q in t.suites[name]]
    t.leaks = held_back_terms(patch, reg, t.suites[t.chosen], held)
    t.summaries, t.changes, gain = compare_suites(reg, repaired, t.suites, scorers, t.top_k,
                                                  labels=("v1", "v2"))
    # whether the one rule tells the change from none (counted by the reading)
    gain["excludes_zero"] = gain["verdict"] != "tie"
    t.gain = gain.reset_index()
    judged = t.suites.get("test") or t.suites[t.chosen]
    t.per_tool = compare_registries(reg, repaired, judged, t.hint_scorer, t.top_k,
                                    labels=("v1", "v2"))


def repair_tables(reg: Registry, requests: Sequence[Query], patch: Mapping[str, str] | None,
                  scorers: Sequence[str], *, hint_scorer: str, top_k: int,
                  replication: Sequence[Query] = (), held_name: str = "queries"
                  ) -> RepairTables:
    """Every table of the page: the misses of ``hint_scorer`` on the requests repairs are
    chosen from; with a ``patch`` (tool → new description), before vs after on every suite."""
    has_split, suites = _suites(list(requests), list(replication), held_name)
    chosen = next(iter(suites))
    run = sweep(reg, suites[chosen], [hint_scorer], [top_k],
                always_include=sorted(reg.always_include), progress=False)
    misses = classify_misses(run.misses, reg)
    data = pd.DataFrame([{"n_tools": len(reg), "n_dev": len(suites[chosen]),
                          "n_test": len(suites.get("test", [])),
                          "n_held_queries": len(replication),
                          "n_repaired": len(patch) if patch is not None else 0}])
    t = RepairTables(data=data, misses=misses, hints=repair_hints(misses), patch=None,
                     leaks=None, summaries=None, changes=None, gain=None, per_tool=None,
                     has_split=has_split, hint_scorer=hint_scorer, top_k=top_k, suites=suites)
    if patch is not None:
        _compare(t, reg, patch, scorers)
    return t


# --------------------------------------------------------------------------------------------
# sentences


def repair_change(table: pd.DataFrame, source: str, *, suite: str, scorer: str,
                  metric: str = "Complete@k") -> claims.Claim:
    """What a description repair changed on one suite for one scorer, from
    ``gain_by_suite.csv`` (``suite, scorer, v1, v2, gain, gain_low, gain_high, found, lost,
    queries_fixed, queries_broken, n``): before → after, the change with its paired
    interval, tools found and lost, requests fixed and broken, and n."""
    w = {"suite": suite, "scorer": scorer}
    part = table[(table["suite"] == suite) & (table["scorer"] == scorer)]
    if len(part) != 1:
        return claims.literal("No {s} result for ", s=suite) + claims.Claim(
            md.code(scorer) + ".")
    r = part.iloc[0]
    s = {c: "" if int(r[c]) == 1 else "s" for c in ("found", "queries_fixed", "n")}
    return claims.literal("{s}: {m} ", s=suite, m=metric) + claims.fill(
        part, source, "{v1} → {v2} ({g} points [{lo}, {hi}]; {f} tool" + s["found"]
        + " found, {l} lost, {qf} request" + s["queries_fixed"] + " fixed, {qb} broken; {n} "
        "request" + s["n"] + ")", where=w, v1=("v1", "value", "pct", 1),
        v2=("v2", "value", "pct", 1), g=("gain", "value", "spoints", 1),
        lo=("gain_low", "value", "spoints", 1), hi=("gain_high", "value", "spoints", 1),
        f="found", l="lost", qf="queries_fixed", qb="queries_broken", n="n")


def _sizes(t: RepairTables) -> claims.Claim:
    src, d = FILES["data"], t.data
    out = (claims.counts(d, src, "{d} dev and {t} test requests", d="n_dev", t="n_test")
           if "test" in t.suites else claims.counts(d, src, "{d} requests", d="n_dev"))
    if int(d["n_held_queries"].iloc[0]):
        out += claims.counts(d, src, ", {n} " + _queries_words(t.held_back[-1])[4:],
                             n="n_held_queries")
    return out + (claims.counts(d, src, "; the patch repairs {r} of {n} descriptions.",
                                r="n_repaired", n="n_tools") if t.patch is not None else ".")


def _joined(parts: Sequence[claims.Claim], sep: str = "; ") -> claims.Claim:
    out = parts[0]
    for part in parts[1:]:
        out = out + sep + part
    return out


def _queries_words(name: str) -> str:
    """``"the replication queries"``; the suite named ``queries`` is the other labeled ones."""
    return "the other labeled queries" if name == "queries" else f"the {md.escape(name)} queries"


def chosen_words(t: RepairTables) -> str:
    """The requests repairs are chosen from, in a sentence."""
    return "the dev requests" if t.has_split else "every request"


def _patch_sentences(t: RepairTables) -> dict[str, claims.Claim]:
    out = {"patch": claims.count_rows(t.patch, FILES["patch"], "The patch: {n} descriptions, "
                                      "each with the sentence added to it.")}
    if t.unmotivated:
        out["unmotivated"] = claims.counts(
            t.data, FILES["data"], "**Warning:** {n} repaired tool"
            + ("" if len(t.unmotivated) == 1 else "s") + " had no miss among "
            f"{chosen_words(t)} at K={t.top_k}.", n="n_unmotivated")
    if not t.leaks.empty:
        out["leaks"] = claims.count_rows(
            t.leaks, FILES["leaks"], "**Warning:** the patch adds {n} words that occur only "
            "in held-back requests (listed below): a gain there is not evidence.")
    for name in t.suites:
        first = t.gain.loc[t.gain["suite"] == name, "scorer"].iloc[0]
        fam = int(t.gain.loc[t.gain["suite"] == name, "family"].iloc[0])
        out[f"suite:{name}"] = claims.fill(
            t.gain, FILES["gain"], f"**{md.escape(name)}**: Complete@{t.top_k} over {{n}} "
            "requests (paired bootstrap interval of the change, ",
            where={"suite": name, "scorer": first}, n="n") + claims.literal(
            "{lvl}", lvl=level_words(fam)) + (", one comparison per scorer; ahead or behind "
                                              "only where it excludes zero):")
    out["reading"] = _reading(t)
    if "test" in t.suites:
        out["every_scorer"] = _every_scorer(t)
    return out


def _reading(t: RepairTables) -> claims.Claim:
    metric, s = f"Complete@{t.top_k}", t.hint_scorer
    def change(suite):
        return repair_change(t.gain, FILES["gain"], suite=suite, scorer=s, metric=metric)
    if "test" not in t.suites:  # nothing held back out of the requests: in-sample, said
        head = f"**Reading ({s}" + ("" if t.has_split else ", in-sample: the misses and the "
                                    "repair's effect on the same requests") + ").** "
        return (head + _joined([change(n) for n in t.suites])
                + ". Judge a patch on requests it was not written from, and count its losses.")
    g = t.gain.set_index(["suite", "scorer"])["gain"]
    out = (f"**Reading ({s}).** Where the repairs were chosen, " + change(t.chosen)
           + ". On the held-back **test** split, " + change("test") + ". ")
    for name in t.held_back[1:]:
        out += f"On {_queries_words(name)} with a filtered required tool, " + change(name) + ". "
    return out + (
        ("Most of the dev gain did not carry over: repairs written from the dev misses fit "
         "those requests' words. " if g[("test", s)] < g[(t.chosen, s)] / 2 else
         "The gain carries over to the held-back requests. ")
        + "This is what the held-back split is for: judge a patch on test, count its losses as "
        "well as its gains, and repair from *kinds* of misses rather than single requests.")


def _every_scorer(t: RepairTables) -> claims.Claim:
    metric = f"Complete@{t.top_k}"
    test = t.gain[t.gain["suite"] == "test"]
    out = "**Every scorer on test.** " + _joined([
        f"`{md.escape(s)}`: " + repair_change(t.gain, FILES["gain"], suite="test", scorer=s,
                                              metric=metric)
        for s in test["scorer"]]) + ". "
    n = int(test["excludes_zero"].sum())
    if n == 0:
        return out + ("Every paired interval of a test change includes zero: by the one rule "
                      "these changes tie with none.")
    return out + claims.fill(t.gain, FILES["gain"], "{e} of {n} test changes "
                             + ("has" if n == 1 else "have") + " a paired interval that "
                             "excludes zero (the others tie with none).", where={"suite": "test"},
                             e=("excludes_zero", "count_true"), n=("scorer", "nunique"))


def repair_sentences(t: RepairTables) -> dict[str, claims.Claim]:
    """The page's findings by section (the patch's only with a patch), each computed from the
    table it cites (:data:`FILES`)."""
    n = len(t.misses)
    out = {"sizes": _sizes(t), "misses": claims.count_rows(
        t.misses, FILES["misses"], "{n} required tool" + ("" if n == 1 else "s")
        + f" missed by `{t.hint_scorer}` at K={t.top_k} on {chosen_words(t)}, by tool "
        "(request words the tool's text lacks, most frequent first):")}
    if t.patch is not None:
        out.update(_patch_sentences(t))
    return out
