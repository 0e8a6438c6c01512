"""The page "Conversations" (notebook 08): its tables, and its sentences from them.

:func:`conversation_tables` replays labeled conversations turn by turn under the eager,
filtered and deferred strategies (:mod:`toolsel.tables.conversations`) and prices every request
with a prompt cache (:mod:`toolsel.tables.cost`); :func:`conversation_sentences` renders the
page's findings from those tables, each citing the CSV it reads (:data:`FILES`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..datasets import Conversation
from ..eval.stats import mean_intervals
from ..report import claims
from ..report import markdown as md
from ..selection import Selector
from ..tables.conversations import (POLICIES, detector_agreement, replay, replay_summary,
                                    replay_table)
from ..tables.cost import (Prices, cost_sensitivity, cost_table, cost_totals,
                           fewer_tokens_cost_more)

__all__ = ["ConversationTables", "conversation_tables", "conversation_sentences",
           "conversations_of", "FILES"]

#: The CSV each table is written to.
FILES = {"data": "data.csv", "turns": "turns.csv", "summary": "replay_summary.csv",
         "costs": "requests_cost.csv", "totals": "cost_totals.csv",
         "worse": "fewer_tokens_cost_more.csv", "sensitivity": "cost_sensitivity.csv",
         "versus": "versus_eager.csv"}
_RATES = ["available_at_start", "available"]


@dataclass
class ConversationTables:
    """The page's tables (:data:`FILES`), the per-turn intervals (``ci``, indexed by
    ``(strategy policy, metric)``, not written) and the settings: ``split`` (``"all"``
    without a split field), ``scorer``, ``top_k``, ``policy``."""

    data: pd.DataFrame
    turns: pd.DataFrame
    summary: pd.DataFrame
    costs: pd.DataFrame
    totals: pd.DataFrame
    worse: pd.DataFrame
    sensitivity: pd.DataFrame
    versus: pd.DataFrame
    ci: pd.DataFrame
    split: str
    scorer: str
    top_k: int
    policy: str

    def items(self):
        return [(name, getattr(self, name)) for name in FILES]


def conversations_of(conversations: Sequence[Conversation], split: str
                     ) -> tuple[list[Conversation], str]:
    """The conversations of ``split`` and the split used: ``"all"`` (every conversation)
    when none has a split."""
    if not any(c.split for c in conversations):
        split = "all"
    return [c for c in conversations if split in (None, "all") or c.split == split], split


def _turn_intervals(turns: pd.DataFrame) -> pd.DataFrame:
    """95% intervals of the per-turn rates by the one rule: a bootstrap resampling whole
    conversations (the turns of one are not independent), Wilson's over the conversations
    where every turn is alike and that bootstrap collapses to a point (eager: always
    available)."""
    per_turn = turns.assign(scorer=turns["strategy"] + " " + turns["policy"].fillna(""),
                            top_k=0, query_id=turns["conversation_id"] + ":"
                            + turns["turn"].astype(str))
    return mean_intervals(per_turn, metrics=_RATES, cluster="conversation_id").set_index(
        ["scorer", "metric"])


def _versus(totals: pd.DataFrame) -> pd.DataFrame:
    """Each strategy against eager: tokens and cost as shares of eager's."""
    t = totals.set_index("strategy")
    vs = pd.DataFrame({"strategy": t.index,
                       "tokens_vs_eager": t["input_tokens"] / t.loc["eager", "input_tokens"],
                       "cost_vs_eager": t["cost"] / t.loc["eager", "cost"]})
    vs["fewer_tokens"] = 1 - vs["tokens_vs_eager"]
    vs["extra_cost"] = vs["cost_vs_eager"] - 1
    return vs


def conversation_tables(registry, conversations: Sequence[Conversation], *, scorer: str,
                        top_k: int, policy: str, split: str = "test",
                        prices: Prices = Prices(), min_cacheable: int = 1024
                        ) -> ConversationTables:
    """Replay the ``split`` conversations (every one without a split) and price them."""
    convs, split = conversations_of(conversations, split)
    if not convs:
        raise ValueError(f"no conversation in split {split!r}")
    selector = Selector(registry, scorer, top_k=top_k)
    replays = [replay(c, selector, "eager") for c in convs]
    replays += [replay(c, selector, "filtered", policy=p) for p in POLICIES for c in convs]
    replays += [replay(c, selector, "deferred") for c in convs]
    turns = replay_table(replays)
    ci = _turn_intervals(turns)
    agreement = detector_agreement(convs)
    data = pd.DataFrame([{
        "n_conversations_labeled": len(conversations), "n_conversations": len(convs),
        "n_turns": sum(len(c.turns) for c in convs),
        "n_context_dependent": sum(t.context_dependent for c in convs for t in c.turns),
        "n_always_include": len(selector.always_include),
        "n_turns_need_filtered": int(ci.loc[("eager ", "available_at_start"), "n_queries"]),
        "detector_flags": agreement["true_pos"] + agreement["false_pos"],
        "detector_precision": agreement["precision"], "detector_recall": agreement["recall"]}])
    main = [r for r in replays if r.strategy != "filtered" or r.policy == policy]
    costs = cost_table(main, prices=prices, min_cacheable=min_cacheable)
    totals = cost_totals(costs)
    sens = cost_sensitivity(main, prices=[prices, Prices(cache_write=2.0,
                                                         cache_read=prices.cache_read)],
                            min_cacheable=[0, min_cacheable, 4096])
    return ConversationTables(
        data=data, turns=turns, summary=replay_summary(turns), costs=costs, totals=totals,
        worse=fewer_tokens_cost_more(costs), sensitivity=sens, versus=_versus(totals), ci=ci,
        split=split, scorer=scorer, top_k=top_k, policy=policy)


def _data_sentences(t: ConversationTables) -> dict[str, claims.Claim]:
    src = FILES["data"]
    return {
        "data": claims.counts(
            t.data, src, "{a} labeled conversations; this report replays "
            + ("every conversation: " if t.split == "all" else
               f"the **{md.escape(t.split)}** split: ")
            + "{n} conversations, {t} turns, {d} of them labeled context-dependent. "
            f"Scorer `{t.scorer}`, top_k={t.top_k}, {{i}} always-include tools.",
            a="n_conversations_labeled", n="n_conversations", t="n_turns",
            d="n_context_dependent", i="n_always_include"),
        "rates": claims.counts(
            t.data, src, "Over {n} conversations; rates over the {t} turns that need a "
            "filtered tool, with 95% intervals: a bootstrap that resamples whole conversations "
            "(the turns of one conversation are not independent), or Wilson's over the "
            "conversations where every turn is alike and that bootstrap collapses to a point:",
            n="n_conversations", t="n_turns_need_filtered"),
        "detector": claims.fill(
            t.data, src, "The context rule flags {n} messages; precision {p} and recall {r} "
            "against the labels (`carry_if_labeled` uses the labels themselves: an upper bound "
            "for any detector).", n="detector_flags",
            p=("detector_precision", "value", "pct", 0),
            r=("detector_recall", "value", "pct", 0))}


def _missed(t: ConversationTables) -> claims.Claim:
    where = {"strategy": "filtered", "policy": t.policy, "available_at_start": 0.0}
    return (claims.count_rows(t.turns, FILES["turns"],
                              f"**Turns the filter missed** (`{t.policy}`): {{n}}, ",
                              where=where)
            + claims.fill(t.turns, FILES["turns"], "{r} recovered by discover.", where=where,
                          r=("recovered", "count_true")))


def _totals(t: ConversationTables) -> claims.Claim:
    return (claims.counts(t.data, FILES["data"], "**Totals over the {n} "
                          + ("" if t.split == "all" else md.escape(t.split) + " ")
                          + "conversations** (input tokens; cost in base-token equivalents): ",
                          n="n_conversations")
            + claims.per_row(t.totals, FILES["totals"], "{key} {i} tokens ({u} uncached, {w} "
                             "written, {r} read) costing {c}", by="strategy", sep="; ",
                             i="input_tokens", u="uncached", w="cache_write", r="cache_read",
                             c=("cost", "dec", 0))
            + ".")


def _worse(t: ConversationTables) -> claims.Claim:
    src = FILES["worse"]
    out = (claims.count_rows(t.worse, src, "{n} of ")
           + claims.counts(t.data, FILES["data"], "{n} conversations send fewer tokens than "
                           "eager and cost more, by strategy: ", n="n_conversations"))
    kinds = list(t.worse["strategy"].drop_duplicates())
    for i, k in enumerate(kinds):
        out = out + (", " if i else "") + claims.count_rows(t.worse, src, f"{md.escape(k)} {{n}}",
                                                             where={"strategy": k})
    return out + ("" if kinds else "none")


def _versus_eager(t: ConversationTables, strategy: str) -> claims.Claim:
    """``strategy`` against eager over every request: fewer or more tokens, cheaper or dearer
    (the words follow the signs of the table's numbers)."""
    row = t.versus.set_index("strategy").loc[strategy]
    tokens = ("{f} fewer input tokens than eager" if row["fewer_tokens"] > 0 else
              "{t} of eager's input tokens")
    cost = ("costs {x} more" if row["extra_cost"] > 0 else
            "costs {c} of eager's cost" if row["extra_cost"] < 0 else "costs the same")
    link = " but " if (row["fewer_tokens"] > 0) == (row["extra_cost"] > 0) else " and "
    pct = {name: (col, "value", kind, 0) for name, col, kind in (
        ("t", "tokens_vs_eager", "pct"), ("c", "cost_vs_eager", "pct"),
        ("f", "fewer_tokens", "pct"), ("x", "extra_cost", "pct"))}
    used = {n: pct[n] for n in "tcfx" if "{" + n + "}" in tokens + cost}
    return claims.fill(t.versus, FILES["versus"], f"the {strategy} strategy sends {tokens}"
                       f"{link}{cost}", where={"strategy": strategy}, **used)


def _reading(t: ConversationTables) -> claims.Claim:
    calls = claims.fill(t.summary, FILES["summary"], "{n}", where={"strategy": "deferred"},
                        n="discover_calls")
    return (claims.literal("**Reading ({s}).** ",
                           s="every conversation" if t.split == "all" else f"{t.split} split")
            + "Counted over every request, " + _versus_eager(t, "filtered")
            + " (its tools block changes with the turn, so it is rewritten to the cache); "
            + _versus_eager(t, "deferred") + " (its prefix stays stable), with "
            + calls + " discover calls (extra round trips). Token savings and cost savings are "
            "different claims: report the components.")


def conversation_sentences(t: ConversationTables) -> dict[str, claims.Claim]:
    """The page's findings by section, each computed from the table it cites (:data:`FILES`)."""
    return {**_data_sentences(t), "missed": _missed(t), "totals": _totals(t),
            "worse": _worse(t), "reading": _reading(t)}
