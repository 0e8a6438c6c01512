"""The page "Selection policies" (notebook 12): its tables, and its sentences from them.

:func:`policy_tables` sweeps every policy family's settings (:mod:`toolsel.eval.policies`) on
each registry. Settings are **chosen on dev and reported on test**: a file without a
``split`` gets a seeded split of its own by request group (:func:`toolsel.learn.groups.seeded_split`,
``sizes.csv`` says which). Each family keeps the settings on its own frontier of the dev
requests; at the payload of each K of ``comparable_k`` the best point sending no more tokens
**on dev** is chosen, and that one setting is tested once against fixed top-K on the test
requests; :func:`verdict_sentence` says where a policy beats top-K.

A policy **beats** top-K on a registry where its dev-chosen setting's recall gain over top-K
on the test requests is *ahead* by the one rule (:mod:`toolsel.eval.inference`): the family is
every such comparison of the page (registries × K where dev chose a policy other than top-K),
each paired interval at the Bonferroni level that keeps the family at 95%, resampling request
groups. A policy whose point only dominates a top-K point on the test means **ties** it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry, count_servers
from dataclasses import replace

from ..datasets import filter_split
from ..eval.policies import (best_at_comparable_payload, default_grid, dev_choice,
                             dominates_top_k, evaluate_policies, frontier, summarize_policies)
from ..eval.stats import mean_intervals, paired_comparison
from ..learn.groups import SPLIT_SEED, request_groups, seeded_split
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
    split_kind: str = "file"

    def items(self):
        return [(name, getattr(self, name)) for name in FILES]


#: What ``sizes.csv`` says of a split the file did not carry.
SEEDED = f"seeded (seed {SPLIT_SEED}, whole request groups)"
#: ... of requests that form one group: chosen and reported on the same requests.
IN_SAMPLE = "none possible (one request group): in-sample, chosen and reported on the same requests"


def _sizes(data, splits, split_kind) -> pd.DataFrame:
    return pd.DataFrame([{"style": s, "tools": len(reg), "servers": count_servers(reg),
                          "split": {"file": "from the file", "seeded": SEEDED}.get(split_kind, IN_SAMPLE),
                          "dev requests": len(splits[s][0]), "test requests": len(splits[s][1]),
                          "multi-tool (test)": sum(len(q.expected) > 1 for q in splits[s][1])}
                         for s, (reg, _) in data.items()])


def _recall_intervals(summary, rows, n_boot, seed) -> pd.DataFrame:
    """``summary`` with ``R@sent_low, R@sent_high`` per kept setting over the reported
    requests, by the one rule (:func:`toolsel.eval.stats.mean_intervals`, request groups
    resampled whole)."""
    kept = rows.merge(summary[["style", "config"]], on=["style", "config"])
    kept = kept.assign(scorer=kept["config"], top_k=0, query_id=kept["query_id"].astype(str))
    ci = pd.concat([mean_intervals(g, ["R@sent"], n_boot=n_boot, seed=seed,
                                   cluster="group").assign(style=st)
                    for st, g in kept.groupby("style", sort=False)], ignore_index=True)
    ci = ci.rename(columns={"scorer": "config", "low": "R@sent_low", "high": "R@sent_high"})
    return summary.merge(ci[["style", "config", "R@sent_low", "R@sent_high"]],
                         on=["style", "config"], how="left")


def _paired_gain(rows, style, a, b, family, n_boot, seed) -> dict:
    """Recall of setting ``a`` minus setting ``b`` on the same requests, by the one rule
    (request groups resampled whole; a tie of zero width when they are the same setting)."""
    if a == b:
        return {"diff": 0.0, "diff_low": 0.0, "diff_high": 0.0, "verdict": "tie"}
    pair = rows[(rows["style"] == style) & rows["config"].isin([a, b])]
    r = paired_comparison(pair.assign(scorer=pair["config"], top_k=0,
                                      query_id=pair["query_id"].astype(str)), "R@sent",
                          scorers=[a, b], family=family, cluster="group", n_boot=n_boot,
                          seed=seed).iloc[0]
    return {k: r[k] for k in ("diff", "diff_low", "diff_high", "verdict")}


def _comparable(dev, test_all, rows, ks, n_boot, seed) -> pd.DataFrame:
    """At the payload of each K: the best point sending no more tokens **on dev**
    (:func:`~toolsel.eval.policies.best_at_comparable_payload`), then that one setting against
    top-K on the test requests: its test means, the paired gain with its interval and
    verdict by the one rule, and ``beats`` (another policy, ahead)."""
    chosen = best_at_comparable_payload(dev, ks, by="style")
    family = max(1, int((chosen["best_policy"] != "top_k").sum()))
    at = test_all.set_index(["style", "config"])
    out = []
    for r in chosen.itertuples():
        top = repr(TopK(r.k))
        g = _paired_gain(rows, r.style, r.best_config, top, family, n_boot, seed)
        out.append({"style": r.style, "k": int(r.k), "best_policy": r.best_policy,
                    "best_config": r.best_config, "chosen_on": "dev",
                    "dev_gain": float(r.gain),
                    "top_k_payload_reduction": float(at.loc[(r.style, top), "payload_reduction"]),
                    "top_k_R@sent": float(at.loc[(r.style, top), "R@sent"]),
                    "best_payload_reduction": float(at.loc[(r.style, r.best_config),
                                                           "payload_reduction"]),
                    "best_R@sent": float(at.loc[(r.style, r.best_config), "R@sent"]),
                    "gain": float(g["diff"]), "gain_low": float(g["diff_low"]),
                    "gain_high": float(g["diff_high"]), "family": family,
                    "verdict": g["verdict"],
                    "beats": r.best_policy != "top_k" and g["verdict"] == "ahead"})
    return pd.DataFrame(out)


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


def _with_split(data, has_split) -> tuple[dict, str]:
    """``data`` with every request carrying a split, and how it was made: the file's
    (``"file"``), or a seeded one by request group (:func:`~toolsel.learn.groups.seeded_split`,
    ``"seeded"``) when the file has none. Requests that form a single group cannot be split:
    they serve as dev and as test both (``"in-sample"``, said on the page)."""
    if has_split:
        return data, "file"
    out, kind = {}, "seeded"
    for s, (reg, qs) in data.items():
        split = seeded_split(qs)
        if len(set(split)) < 2:  # one request group: nothing to hold out
            kind = "in-sample"
            out[s] = (reg, [replace(q, split="dev") for q in qs]
                      + [replace(q, split="test") for q in qs])
        else:
            out[s] = (reg, [replace(q, split=sp) for q, sp in zip(qs, split)])
    return out, kind


def _group_column(data) -> pd.DataFrame:
    """``style, query_id, group`` for every request (:func:`~toolsel.learn.groups.request_groups`)."""
    return pd.DataFrame([{"style": s, "query_id": q.id, "group": int(g)}
                         for s, (_, qs) in data.items()
                         for q, g in zip(qs, request_groups(list(qs)))]).drop_duplicates(
        ["style", "query_id"])


def policy_tables(data: Mapping[str, tuple[Registry, Sequence[Query]]], *, has_split: bool,
                  scorer: str = "default", comparable_k: Sequence[int] = (3, 5, 10),
                  n_boot: int = 2000, seed: int = 0) -> PolicyTables:
    """Every table of the page for the registries of ``data`` (name → registry, requests);
    without a split in the file, a seeded split by request group is made first."""
    data, split_kind = _with_split(data, has_split)
    splits = {s: (filter_split(qs, "dev"), filter_split(qs, "test"))
              for s, (_, qs) in data.items()}
    grid = default_grid()
    per_query = pd.concat([
        evaluate_policies(reg, qs, scorer, grid).assign(style=s) for s, (reg, qs) in data.items()],
        ignore_index=True)
    per_query = per_query.merge(_group_column(data), on=["style", "query_id"], how="left")
    dev = summarize_policies(per_query[per_query["split"] == "dev"], by=["style"])
    chosen = dev_choice(dev, by="style")
    rows = per_query[per_query["split"] == "test"]
    test_all = summarize_policies(rows, by=["style"])
    test = frontier(test_all.merge(chosen, on=["style", "policy", "config"]), by="style")
    test = _recall_intervals(test, rows, n_boot, seed)
    pareto = test[test["pareto"]].sort_values(["style", "payload_tokens"], kind="stable")[
        ["style", "policy", "config", "R@sent", "R@sent_low", "R@sent_high", "Complete@sent",
         "n_sent", "payload_tokens", "payload_reduction"]]
    comparable = _comparable(dev, test_all, rows, comparable_k, n_boot, seed)
    verdict = _verdict(test, comparable)
    grid_sizes = pd.Series([p.name for p in grid]).value_counts(sort=False).rename_axis(
        "policy").reset_index(name="settings")
    return PolicyTables(
        sizes=_sizes(data, splits, split_kind), grid=grid_sizes, dev=dev, test=test,
        pareto=pareto, verdict=verdict, comparable=comparable,
        style_verdict=_style_verdict(verdict, comparable, list(data), comparable_k),
        chosen=chosen, has_split=True, settings=grid, split_kind=split_kind)


#: What "beats" means, in the verdict sentence.
RULE_TEXT = (" (the setting chosen on dev at the payload of a fixed K is ahead of top-K on the "
             "test requests by the one rule: its paired recall gain lies above zero, the "
             "family-wise level held over every such comparison of the page)")


def verdict_sentence(style_verdict: pd.DataFrame, policy_verdict: pd.DataFrame, *,
                     in_sample: bool, seeded: bool = False,
                     unit: tuple[str, str] = ("style", "styles"),
                     source: str = FILES["style_verdict"],
                     policy_source: str = FILES["verdict"]) -> claims.Claim:
    """On how many registries a policy beats fixed top-K (a recall gain at the payload of a K
    whose paired interval lies above zero), on how many it only ties it (dominates a top-K
    point on the means), and per policy where. ``seeded``: the file had no split, and the
    page made one (said at the end)."""
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
            + RULE_TEXT
            + ("" if beats else ("; a policy only ties it (its point dominates a top-K point "
                                 "on the test means, but no dev-chosen gain is ahead)" if ties else
                                 "; none even dominates a top-K point")) + ".")
    else:
        out = (claims.fill(style_verdict, source, "A policy other than fixed top-K beats it on "
                           "**{b} of {n}** " + word, b=("beats_top_k", "count_true"),
                           n=("style", "nunique"))
               + RULE_TEXT
               + claims.fill(style_verdict, source, "; a policy only ties it on {t} (its "
                             "point dominates a top-K point on the test means, but no "
                             "dev-chosen gain is ahead).", t=("ties_top_k", "count_true")))
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
    if seeded:
        out = out + (" The file carries no split: dev and test are a seeded split of its "
                     "requests made by this page, whole request groups kept together.")
    return out
