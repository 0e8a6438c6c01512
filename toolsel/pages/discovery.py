"""The page "Discovery on real workflows" (notebook 07): its tables, and its sentences from them.

:func:`discovery_tables` measures multi-tool recall (``R@k`` next to ``Complete@k``) and recall
against loaded noise for a discover/search call, on the requests of one split (every request
when the file has none); :func:`discovery_sentences` renders the page's findings from those
tables, each citing the CSV it reads (:data:`FILES`); :func:`split_note` says which requests a
run reports on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry
from ..datasets import assign_splits, filter_split
from ..eval.stats import intervals_by_group, mean_intervals
from ..learn.groups import request_groups
from ..report import claims
from ..report import markdown as md
from ..report.cutoffs import distinct_top_k
from ..tables.discovery import (multi_tool_metrics, noise_curve, summarize_noise,
                                summarize_requests)
from ..text import content_words

__all__ = ["DiscoveryTables", "discovery_tables", "discovery_sentences", "split_note", "FILES"]

#: The CSV each table is written to (a table that is ``None`` is not written).
FILES = {"data": "data.csv", "composition": "composition.csv",
         "per_request": "per_request.csv", "by_n_required": "by_n_required.csv",
         "by_category": "by_category.csv", "multi_tool": "multi_tool_summary.csv",
         "noise": "noise.csv", "noise_words": "noise_content_words.csv",
         "noise_terms": "noise_search_term.csv"}


@dataclass
class DiscoveryTables:
    """The page's tables (:data:`FILES`), the intervals shown beside them (``ci_*``, not
    written) and the settings they were computed with: ``split`` (``"all"`` without a split
    field), ``top_k`` (distinct cut-offs), ``capped`` (cut-offs sending every tool, dropped),
    ``k`` (the cut-off of the summaries), ``has_split`` and ``follows_rule`` (whether the
    file's splits are :func:`~toolsel.datasets.assign_splits`'s)."""

    data: pd.DataFrame
    composition: pd.DataFrame
    per_request: pd.DataFrame
    by_n_required: pd.DataFrame
    by_category: pd.DataFrame
    multi_tool: pd.DataFrame | None
    noise: pd.DataFrame
    noise_words: pd.DataFrame
    noise_terms: pd.DataFrame | None
    ci_n_required: pd.DataFrame
    ci_category: pd.DataFrame
    ci_multi: pd.DataFrame | None
    split: str
    top_k: list[int]
    capped: list[int]
    k: int
    limits: list[int]
    has_split: bool
    follows_rule: bool

    def items(self):
        """``(name, table)`` of every table to write, ``None`` ones left out."""
        return [(n, getattr(self, n)) for n in FILES if getattr(self, n) is not None]


def _composition(requests: Sequence[Query]) -> pd.DataFrame:
    labels = pd.DataFrame([{"category": q.category or "(none)", "split": q.split or "(none)",
                            "n_tools": len(q.expected)} for q in requests])
    comp = labels.pivot_table(index="category", columns="split", values="n_tools",
                              aggfunc="size", sort=False)
    comp["needing several tools"] = labels[labels.n_tools >= 2].groupby(
        "category", sort=False).size().reindex(comp.index).fillna(0).astype(int)
    return comp.reset_index()


def _multi(per_request: pd.DataFrame, k: int):
    """The summary of the requests needing several tools and its intervals at ``k``."""
    multi = per_request[per_request.n_expected >= 2]
    if multi.empty:
        return None, None
    summary = summarize_requests(multi, [])
    at_k = multi[(multi.top_k == k) & (multi.n_required > 0)]
    ci = mean_intervals(at_k, metrics=["R@k", "Complete@k"], cluster="group")
    return summary, ci


def _noise_summary(curve: pd.DataFrame, group_of: dict) -> pd.DataFrame:
    """:func:`~toolsel.tables.discovery.summarize_noise` with the 95% interval of ``R@n``
    (``R@n_low``, ``R@n_high``) over the requests with a deferred required tool, by the one
    rule (:func:`toolsel.eval.stats.mean_intervals`; whole request groups resampled)."""
    summary = summarize_noise(curve)
    rows = curve[curve["n_required"] > 0].rename(columns={"limit": "top_k"})
    if rows.empty:
        return summary.assign(**{"R@n_low": float("nan"), "R@n_high": float("nan")})
    rows = rows.assign(group=rows["query_id"].map(group_of))
    ci = mean_intervals(rows, ["R@n"], cluster="group")
    ci = ci.rename(columns={"top_k": "limit", "low": "R@n_low", "high": "R@n_high"})
    out = summary.merge(ci[["scorer", "limit", "R@n_low", "R@n_high"]],
                        on=["scorer", "limit"], how="left")
    cols = list(summary.columns)
    at = cols.index("R@n") + 1
    return out[cols[:at] + ["R@n_low", "R@n_high"] + cols[at:]]


def _noise(reg: Registry, qs: list[Query], scorers, limits):
    group_of = dict(zip([q.id for q in qs], request_groups(qs).tolist()))
    noise = _noise_summary(noise_curve(reg, qs, scorers, limits), group_of)
    words = [dataclasses.replace(q, search_term=content_words(q.query)) for q in qs]
    noise_words = _noise_summary(noise_curve(reg, words, scorers, limits,
                                             query_field="search_term"), group_of)
    terms = None
    if any(q.search_term for q in qs):
        terms = _noise_summary(noise_curve(reg, qs, scorers, limits, query_field="search_term"),
                               group_of)
    return noise, noise_words, terms


def discovery_tables(reg: Registry, requests: Sequence[Query], scorers: Sequence[str],
                     top_k: Sequence[int], limits: Sequence[int], split: str = "test"
                     ) -> DiscoveryTables:
    """Every table of the page, on the ``split`` requests (every request without a split)."""
    requests = list(requests)
    has_split = any(q.split for q in requests)
    follows_rule = [q.split for q in requests] == assign_splits(requests)
    split = split if has_split else "all"
    qs = filter_split(requests, split)
    top_k, capped = distinct_top_k(top_k, len(reg) - len(reg.always_include))
    data = claims.data_table(reg, requests)
    data["n_filtered"] = data["n_tools"] - data["n_always_include"]
    used = "n_queries" if split == "all" else f"n_{split}"
    if used not in data.columns:  # a split other than dev/test: counted here
        data[used] = len(qs)
    per_request = multi_tool_metrics(reg, qs, scorers, top_k)
    per_request["category"] = per_request["category"].fillna("(none)")
    # near-duplicates and one conversation's turns: resampled whole by every interval
    group_of = dict(zip([q.id for q in qs], request_groups(qs).tolist()))
    per_request["group"] = per_request["query_id"].map(group_of)
    k = 5 if 5 in top_k else top_k[len(top_k) // 2]
    multi, ci_multi = _multi(per_request, k)
    noise, noise_words, noise_terms = _noise(reg, qs, scorers, limits)
    return DiscoveryTables(
        data=data, composition=_composition(requests), per_request=per_request,
        by_n_required=summarize_requests(per_request, "n_required"),
        by_category=summarize_requests(per_request, "category"), multi_tool=multi,
        noise=noise, noise_words=noise_words, noise_terms=noise_terms,
        ci_n_required=intervals_by_group(per_request, "n_required", cluster="group")
        .sort_values("n_required", kind="stable"),
        ci_category=intervals_by_group(per_request, "category", cluster="group"),
        ci_multi=ci_multi, split=split, top_k=list(top_k), capped=list(capped), k=k,
        limits=list(limits), has_split=has_split, follows_rule=follows_rule)


def split_note(t: DiscoveryTables) -> str:
    """Which requests the run reports on, said once (a setting, not a finding)."""
    if not t.has_split:
        return ("The request file has no `split` field: this report uses **every** request "
                "(nothing was held back to choose settings on).")
    note = (f"The request file has a `split`: every number below is on its "
            f"**{md.escape(t.split)}** requests unless a table says otherwise.")
    if not t.follows_rule:
        note += (" Its splits do not follow the documented rule (alternate within category, "
                 "`toolsel.datasets.assign_splits`); they are used as given.")
    return note


def _requests_words(t: DiscoveryTables) -> str:
    """The requests shown, in sentences ("the all requests" would not read)."""
    return "the requests" if t.split == "all" else f"the {md.escape(t.split)} requests"


def _data_sentences(t: DiscoveryTables) -> dict[str, claims.Claim]:
    src = FILES["data"]
    out = {}
    if t.capped:  # the cut-offs are settings; the number of filtered tools is read from data
        out["capped"] = (f"{md.code('top_k ' + ', '.join(map(str, t.capped)))} ≥ "
                         + claims.counts(t.data, src, "{n} filtered tools: ", n="n_filtered")
                         + f"the same as top_k={t.top_k[-1]} (every tool sent), reported once.")
    used = "n_queries" if t.split == "all" else f"n_{t.split}"
    out["data"] = claims.counts(
        t.data, src, "{n} labeled requests, {m} of them needing several tools; "
        + ("this report uses every request." if t.split == "all" else
           f"this report uses the **{md.escape(t.split)}** split: {{u}} requests."),
        n="n_queries", m="n_multi_tool", **({} if t.split == "all" else {"u": used}))
    return out


def _multi_sentence(t: DiscoveryTables) -> claims.Claim:
    src, k, ms = FILES["multi_tool"], t.k, t.multi_tool
    if ms is None:
        return claims.Claim(f"None of {_requests_words(t)} needs several tools: no multi-tool "
                            "summary.")
    first = ms.loc[ms.top_k == k, "scorer"].iloc[0]
    return (claims.fill(ms, src, f"**Complete@{k} on {_requests_words(t)} that need several "
                        "tools** ({n} requests; always-include tools set apart — {a} of "
                        "them): ", where={"top_k": k, "scorer": first}, n="n_requests",
                        a="n_always_required")
            + claims.per_row(ms, src, "{key} {c} (R@" + str(k) + " {r})", where={"top_k": k},
                             c=("Complete@k", "pct", 1), r=("R@k", "pct", 1)))


def _noise_sentences(t: DiscoveryTables) -> dict[str, claims.Claim]:
    src, noise, out = FILES["noise"], t.noise, {}
    out["noise_n"] = (claims.fill(noise, src, "Searching with the whole request ({n} requests "
                                  "with a deferred required tool; ", n=("n_requests", "max"))
                      if len(noise) else claims.Claim(
                          "Searching with the whole request (no request with a deferred "
                          "required tool; "))
    n5 = 5 if 5 in t.limits else max(t.limits)
    out["at_n"] = (claims.Claim(f"At n={n5} a search loads on average ")
                   + claims.per_row(noise, src, "{key}: {i} irrelevant definitions ({t} tokens)"
                                    " for R@" + str(n5) + " {r}", where={"limit": n5},
                                    i=("irrelevant", "dec", 1),
                                    t=("irrelevant_tokens", "dec", 0), r=("R@n", "pct", 1))
                   + ".")
    out["reading"] = _reading(t)
    return out


def _reading(t: DiscoveryTables) -> claims.Claim:
    n_lo, n_hi = min(t.limits), max(t.limits)
    pct0 = ("R@n", "min", "pct", 0), ("R@n", "max", "pct", 0)
    terms = claims.fill(t.noise_words, FILES["noise_words"],
                        "Searching with the request's content words (no labels) finds {a}–{b}"
                        f" at n={n_lo}. ", where={"limit": n_lo}, a=pct0[0], b=pct0[1])
    if t.noise_terms is not None:
        terms += (claims.fill(t.noise_terms, FILES["noise_terms"],
                              "The labeler's `search_term` finds {a}–{b}",
                              where={"limit": n_lo}, a=pct0[0], b=pct0[1])
                  + ": an upper bound, since its author knew the answer (what a model's own "
                  "search term finds was not measured here).")
    src = FILES["noise"]
    return (claims.literal("**Reading ({s}).** ",
                           s="every request" if t.split == "all" else f"{t.split} split")
            + claims.fill(t.noise, src, f"Going from n={n_lo} to n={n_hi} raises the share of "
                          "required tools one search finds from {a}–{b}",
                          where={"limit": n_lo}, a=pct0[0], b=pct0[1])
            + claims.fill(t.noise, src, " to {a}–{b} (across scorers), and loads {c}–{d} "
                          "irrelevant definitions ({e}–{f} tokens) per request, which then "
                          "stay in the context. ", where={"limit": n_hi}, a=pct0[0], b=pct0[1],
                          c=("irrelevant", "min", "dec", 1), d=("irrelevant", "max", "dec", 1),
                          e=("irrelevant_tokens", "min", "dec", 0),
                          f=("irrelevant_tokens", "max", "dec", 0))
            + terms)


def _categories(t: DiscoveryTables) -> claims.Claim:
    """Per scorer, the category with the lowest Complete@k and the one with the widest gap
    between R@k and Complete@k (first in table order on ties)."""
    src, k, cat = FILES["by_category"], t.k, t.by_category
    parts = []
    for scorer, g in cat[cat.top_k == k].groupby("scorer", sort=False):
        low = g.loc[g["Complete@k"].idxmin(), "category"]
        wide = g.loc[g["gap"].idxmax(), "category"]
        parts.append(claims.literal("{s}: lowest ", s=scorer) + claims.fill(
            cat, src, md.code(low) + " ({c}), widest gap ", where={"scorer": scorer,
                                                                  "top_k": k, "category": low},
            c=("Complete@k", "value", "pct", 1)) + claims.fill(
            cat, src, md.code(wide) + " ({g} points)", where={"scorer": scorer, "top_k": k,
                                                           "category": wide},
            g=("gap", "value", "points", 1)))
    out = claims.Claim(f"Per scorer, the category with the lowest Complete@{k} and the one "
                       f"with the widest gap between R@{k} and Complete@{k} (what requests "
                       "needing several tools add): ")
    for i, part in enumerate(parts):
        out = out + ("; " if i else "") + part
    return out + "."


def discovery_sentences(t: DiscoveryTables) -> dict[str, claims.Claim]:
    """The page's findings by section (``capped`` only when cut-offs were dropped), each
    computed from the table it cites (:data:`FILES`)."""
    cat_k = t.by_category[t.by_category.top_k == t.k]
    smallest = cat_k.loc[cat_k["n_requests"].idxmin()]
    return {**_data_sentences(t), "multi": _multi_sentence(t),
            "smallest": claims.one_request(
                int(smallest["n_requests"]), FILES["by_category"], column="n_requests",
                where={"scorer": smallest["scorer"], "top_k": t.k,
                       "category": smallest["category"]},
                what=f"the smallest category's Complete@{t.k}"),
            "categories": _categories(t),
            **_noise_sentences(t)}
