"""The page "Selection policies" (notebook 12): its tables, and its sentences from them.

:func:`policy_tables` sweeps every policy family's settings (:mod:`toolsel.eval.policies`) on
each registry, keeps the settings on each family's own frontier of the requests settings are
chosen on (a split file's dev part, else every request: in-sample), and compares them with
fixed top-K on the reported requests; :func:`verdict_sentence` says where a policy beats top-K.

A policy **beats** top-K on a registry only where, at the payload of some K of
``comparable_k``, it is the best point sending no more tokens and its recall gain over top-K
has a paired bootstrap 95% interval above zero; a policy whose point only dominates a top-K
point on the frontier (means) **ties** it. The family is one comparison per registry and K,
intervals unadjusted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry
from ..datasets import filter_split
from ..eval.policies import (best_at_comparable_payload, default_grid, dev_choice,
                             dominates_top_k, evaluate_policies, frontier, summarize_policies)
from ..eval.stats import bootstrap_intervals, paired_comparison, with_wilson
from ..policies import TopK
from ..report import claims
from ..report import markdown as md

__all__ = ["PolicyTables", "policy_tables", "verdict_sentence", "FILES"]

#: The CSV each table is written to.
FILES = {"sizes": "sizes.csv", "grid": "grid.csv", "dev": "policies_dev.csv",
         "test": "policies_test.csv", "pareto": "policy_frontier.csv",
         "verdict": "policy_verdict.csv", "comparable": "comparable_payload.csv",
         "style_verdict": "style_verdict.csv"}


@dataclass
class PolicyTables:
    """The page's tables (:data:`FILES`), ``chosen`` (the settings kept per registry and
    policy), ``grid`` (every setting swept) and whether the requests had a split."""

    sizes: pd.DataFrame
    grid: pd.DataFrame
    dev: pd.DataFrame
    test: pd.DataFrame
    pareto: pd.DataFrame
    verdict: pd.DataFrame
    comparable: pd.DataFrame
    style_verdict: pd.DataFrame
    chosen: pd.DataFrame
    has_split: bool
    settings: list

    def items(self):
        return [(name, getattr(self, name)) for name in FILES]


def _sizes(data, splits) -> pd.DataFrame:
    return pd.DataFrame([{"style": s, "tools": len(reg), "servers": len({t.domain for t in reg}),
                          "dev requests": len(splits[s][0]), "test requests": len(splits[s][1]),
                          "multi-tool (test)": sum(len(q.expected) > 1 for q in splits[s][1])}
                         for s, (reg, _) in data.items()])


def _recall_intervals(summary, rows, n_boot, seed) -> pd.DataFrame:
    """``summary`` with ``R@sent_low, R@sent_high`` per kept setting over the reported
    requests: the bootstrap's interval, or Wilson's where every request's R is 0 or 1 and
    the bootstrap collapses to a point."""
    kept = rows.merge(summary[["style", "config"]], on=["style", "config"])
    kept = kept.assign(scorer=kept["config"], top_k=0, query_id=kept["query_id"].astype(str))
    ci = pd.concat([with_wilson(bootstrap_intervals(g, ["R@sent"], n_boot=n_boot, seed=seed), g,
                                ["R@sent"], collapsed_only=True).assign(style=st)
                    for st, g in kept.groupby("style", sort=False)], ignore_index=True)
    ci = ci.rename(columns={"scorer": "config", "low": "R@sent_low", "high": "R@sent_high"})
    return summary.merge(ci[["style", "config", "R@sent_low", "R@sent_high"]],
                         on=["style", "config"], how="left")


def _paired_gain(rows, style, a, b, n_boot, seed) -> tuple[float, float, float]:
    """Recall of setting ``a`` minus setting ``b`` on the same requests: ``(diff, low, high)``
    with the paired bootstrap 95% interval (zeros when they are the same setting)."""
    if a == b:
        return 0.0, 0.0, 0.0
    pair = rows[(rows["style"] == style) & rows["config"].isin([a, b])]
    r = paired_comparison(pair.assign(scorer=pair["config"], top_k=0), "R@sent",
                          scorers=[a, b], n_boot=n_boot, seed=seed).iloc[0]
    return float(r["diff"]), float(r["diff_low"]), float(r["diff_high"])


def _comparable(summary, rows, ks, n_boot, seed) -> pd.DataFrame:
    """:func:`~toolsel.eval.policies.best_at_comparable_payload` with the paired interval of
    each gain and ``beats`` (another policy, and the interval lies above zero)."""
    comp = best_at_comparable_payload(summary, ks, by="style")
    gains = [_paired_gain(rows, r.style, r.best_config, repr(TopK(r.k)), n_boot, seed)
             for r in comp.itertuples()]
    comp["gain_low"] = [g[1] for g in gains]
    comp["gain_high"] = [g[2] for g in gains]
    comp["beats"] = (comp["best_policy"] != "top_k") & (comp["gain_low"] > 0)
    return comp


def _verdict(summary, comparable) -> pd.DataFrame:
    """:func:`~toolsel.eval.policies.dominates_top_k` (whether a policy's point dominates a
    top-K point on the means, ``dominates``) and ``beats``: the policy is the best at the
    payload of some K with a gain whose paired interval lies above zero."""
    v = dominates_top_k(summary, by="style")
    won = comparable[comparable["beats"]]
    v["beats"] = [bool(((won["style"] == s) & (won["best_policy"] == p)).any())
                  for s, p in zip(v["style"], v["policy"])]
    return v


def _style_verdict(verdict, comparable, styles, ks) -> pd.DataFrame:
    rows = []
    for s in styles:
        v = verdict[verdict["style"] == s]
        c = comparable[comparable["style"] == s].set_index("k")["best_policy"]
        beats = bool(v["beats"].any())
        rows.append({"style": s, **{f"best_at_k{k}": c.get(k) for k in ks},
                     "beats_top_k": beats, "ties_top_k": bool(v["dominates"].any()) and not beats,
                     "policies_beating": " ".join(v.loc[v["beats"], "policy"]),
                     "policies_dominating": " ".join(v.loc[v["dominates"], "policy"])})
    return pd.DataFrame(rows)


def policy_tables(data: Mapping[str, tuple[Registry, Sequence[Query]]], *, has_split: bool,
                  scorer: str = "default", comparable_k: Sequence[int] = (3, 5, 10),
                  n_boot: int = 2000, seed: int = 0) -> PolicyTables:
    """Every table of the page for the registries of ``data`` (name → registry, requests)."""
    dev_split, test_split = ("dev", "test") if has_split else ("all", "all")
    splits = {s: (filter_split(qs, dev_split), filter_split(qs, test_split))
              for s, (_, qs) in data.items()}
    grid = default_grid()
    per_query = pd.concat([
        evaluate_policies(reg, qs, scorer, grid).assign(style=s) for s, (reg, qs) in data.items()],
        ignore_index=True)
    if not has_split:
        per_query["split"] = "all"
    dev = summarize_policies(per_query[per_query["split"] == dev_split], by=["style"])
    chosen = dev_choice(dev, by="style")
    rows = per_query[per_query["split"] == test_split]
    test = frontier(summarize_policies(rows, by=["style"]).merge(
        chosen, on=["style", "policy", "config"]), by="style")
    test = _recall_intervals(test, rows, n_boot, seed)
    pareto = test[test["pareto"]].sort_values(["style", "payload_tokens"], kind="stable")[
        ["style", "policy", "config", "R@sent", "R@sent_low", "R@sent_high", "Complete@sent",
         "n_sent", "payload_tokens", "payload_reduction"]]
    comparable = _comparable(test, rows, comparable_k, n_boot, seed)
    verdict = _verdict(test, comparable)
    grid_sizes = pd.Series([p.name for p in grid]).value_counts(sort=False).rename_axis(
        "policy").reset_index(name="settings")
    return PolicyTables(
        sizes=_sizes(data, splits), grid=grid_sizes, dev=dev, test=test, pareto=pareto,
        verdict=verdict, comparable=comparable,
        style_verdict=_style_verdict(verdict, comparable, list(data), comparable_k),
        chosen=chosen, has_split=has_split, settings=grid)


def verdict_sentence(style_verdict: pd.DataFrame, policy_verdict: pd.DataFrame, *,
                     in_sample: bool, unit: tuple[str, str] = ("style", "styles"),
                     source: str = FILES["style_verdict"],
                     policy_source: str = FILES["verdict"]) -> claims.Claim:
    """On how many registries a policy beats fixed top-K (a recall gain at the payload of a K
    whose paired interval lies above zero), on how many it only ties it (dominates a top-K
    point on the means), and per policy where."""
    n = len(style_verdict)
    if n == 0:
        return claims.Claim("No registry evaluated.")
    word = unit[0] if n == 1 else unit[1]
    if n == 1:  # one registry: says what happened on it, not "0 of 1 ... on 1 more"
        beats = bool(style_verdict["beats_top_k"].iloc[0])
        ties = bool(style_verdict["ties_top_k"].iloc[0])
        out = claims.Claim(
            ("A policy other than fixed top-K **beats** it on this " + word if beats else
             "No policy other than fixed top-K beats it on this " + word)
            + " (at the payload of a fixed K, a recall gain whose paired 95% interval lies "
            "above zero)"
            + ("" if beats else ("; a policy only ties it (its point dominates a top-K point, "
                                 "but no gain's interval excludes zero)" if ties else
                                 "; none even dominates a top-K point")) + ".")
    else:
        out = (claims.fill(style_verdict, source, "A policy other than fixed top-K beats it on "
                           "**{b} of {n}** " + word, b=("beats_top_k", "count_true"),
                           n=("style", "nunique"))
               + " (at the payload of a fixed K, a recall gain whose paired 95% interval lies "
               "above zero)"
               + claims.fill(style_verdict, source, "; on {t} more, a policy only ties it (its "
                             "point dominates a top-K point, but no gain's interval excludes "
                             "zero).", t=("ties_top_k", "count_true")))
    per = []
    for pol in dict.fromkeys(policy_verdict["policy"]):
        g = policy_verdict[policy_verdict["policy"] == pol]
        part = claims.Claim(md.code(pol) + " ") + claims.fill(
            policy_verdict, policy_source, "beats it on {b}, dominates a top-K point on {d}",
            where={"policy": pol}, b=("beats", "count_true"), d=("dominates", "count_true"))
        won = [str(s) for s in g.loc[g["beats"].astype(bool), "style"]]
        if won and n > 1:
            part = part + claims.literal(" (beats it on {w})", w=", ".join(won))
        per.append(part)
    out = out + " Per policy: "
    for i, part in enumerate(per):
        out = out + ("; " if i else "") + part
    out = out + "."
    if in_sample:
        out = out + (" Settings were chosen and measured on the same requests: this describes "
                     "these requests, it is not a held-out result.")
    return out
