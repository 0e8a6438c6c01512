"""The escape hatch, measured without an LLM: a scripted conversation, and the labeled set.

Two things live here.

- :func:`run_scenario` plays a scripted conversation through a :class:`~toolsel.Selector`
  session with a ``discover_tools`` tool injected (sent on every turn, outside the filter and
  outside ``top_k``). The script says what the user writes and, where the model would call
  ``discover_tools``, what it searches for; the session pins what the search finds.
  :func:`article_scenario` is the article's 3-turn, 4-tool conversation: ``top_k=1``, no
  always-include; the model sees 2, 2 and 3 tools and the pinned state ends as
  ``['calculator']``.
- :func:`escape_hatch` runs over a labeled query set: for every query whose required tools
  did not all survive the filter, one ``discover`` call (with the literal query, and with the
  query's ``search_term`` where the file gives one) — how many misses it recovers, and what
  the hatch costs in extra calls and payload.

The model is idealized: it calls ``discover_tools`` exactly when a required tool is missing,
once, and the follow-up request carries the pinned hit. Real models call it less (they may
not notice) or more (they may search when they need not); the numbers here are the hatch's
ceiling for one call.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Query, Registry, Tool
from ..eval.metrics import evaluate, evaluate_sent, mean_metrics, payload_chars, payload_reduction
from ..eval.engine import score_matrix, scorer_for
from ..ranking import best_matches, ranks_of, top_k_indices
from ..scorers.base import Scorer
from ..selection import DISCOVER_TOOL, Selector

__all__ = ["DISCOVER_TOOL", "ARTICLE_TOOLS", "ARTICLE_TURNS", "Turn", "TurnResult",
           "run_scenario", "scenario_tools_present", "article_scenario", "scenario_table", "EscapeHatch", "escape_hatch",
           "DISCOVER_VARIANTS"]


#: The article's four tools, in registry order.
ARTICLE_TOOLS = ("weather_lookup", "stock_price", "translate_text", "calculator")


@dataclass(frozen=True)
class Turn:
    """One scripted user turn; ``discover_query`` is what the model searches for, if it does."""

    user: str
    discover_query: str | None = None


#: The article's three turns. Turn 2 shares no content word with the calculator's text; the
#: model searches for "calculator".
ARTICLE_TURNS = (
    Turn("what's the weather in Paris right now?"),
    Turn("I need to crunch some numbers but don't see a tool for that, can you check?",
         discover_query="calculator"),
    Turn("translate hello to French"),
)


@dataclass(frozen=True)
class TurnResult:
    """What happened on one turn."""

    turn: int
    user: str
    sent: tuple[str, ...]
    """Tools the model sees on the turn's first request, sorted by name (as the article lists
    them); ``discover_tools`` included."""
    discover_query: str | None
    discovered: str | None
    """The tool ``discover_tools`` found and pinned, or ``None`` (not called, or no match)."""
    tool_result: str | None
    """The text ``discover_tools`` returns to the model."""
    pinned: tuple[str, ...]
    """The conversation's pins after the turn."""
    requests: int
    """Model requests on the turn: 1, or 2 when ``discover_tools`` was called."""
    payload_chars: int
    """Name + description characters of every request of the turn."""


def run_scenario(tools: Sequence[Tool], turns: Iterable[Turn], *,
                 scorer: str | Scorer = "jaccard", top_k: int = 1,
                 always_include: Iterable[str] = (),
                 discover_tool: Tool = DISCOVER_TOOL) -> list[TurnResult]:
    """Play ``turns`` as one conversation; return what the model saw and did on each.

    ``tools`` is the registry the selector filters; ``discover_tool`` is added to every
    request outside it.
    """
    selector = Selector(tools, scorer, top_k=top_k, always_include=list(always_include))
    if discover_tool.name in selector.registry:
        raise ValueError(f"the registry already has a tool named {discover_tool.name!r}; the "
                         "escape hatch is injected, not selected")
    chat = selector.session()
    reg = selector.registry
    out = []
    for n, turn in enumerate(turns, start=1):
        names = chat.select(turn.user)
        first = [reg.get(x) for x in names] + [discover_tool]
        chars = payload_chars(first)
        hit_name, result, requests = None, None, 1
        if turn.discover_query is not None:
            hit = chat.discover(turn.discover_query)
            requests = 2
            if hit is None:
                result = f"No tool matches {turn.discover_query!r}."
                chars += payload_chars(first)
            else:
                hit_name = hit.name
                result = (f"Found {hit.name!r}: {hit.description} It is now available for "
                          "the rest of this conversation.")
                second = {t.name: t for t in first}
                second[hit.name] = hit
                chars += payload_chars(second.values())
        out.append(TurnResult(n, turn.user, tuple(sorted(t.name for t in first)),
                              turn.discover_query, hit_name, result, tuple(chat.pinned),
                              requests, chars))
    return out


def scenario_tools_present(registry: Sequence[Tool]) -> bool:
    """Whether ``registry`` has the article's four scenario tools (:data:`ARTICLE_TOOLS`)."""
    names = {t.name for t in registry}
    return all(n in names for n in ARTICLE_TOOLS)


def article_scenario(registry: Sequence[Tool], *, scorer: str | Scorer = "jaccard",
                     turns: Iterable[Turn] = ARTICLE_TURNS) -> list[TurnResult]:
    """The article's conversation over its four tools, taken from ``registry``.

    ``top_k=1``, no always-include, ``discover_tools`` injected.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    tools = [reg[reg.index(name)] for name in ARTICLE_TOOLS]
    return run_scenario(tools, turns, scorer=scorer, top_k=1, always_include=())


def scenario_table(results: Sequence[TurnResult]) -> pd.DataFrame:
    """The turns as a table: one row each, names joined by ``, ``."""
    return pd.DataFrame([{
        "turn": r.turn, "user": r.user, "n_tools_seen": len(r.sent),
        "tools_seen": ", ".join(r.sent), "discover_query": r.discover_query or "",
        "discovered": r.discovered or "", "pinned_after": ", ".join(r.pinned),
        "requests": r.requests, "payload_chars": r.payload_chars} for r in results])


# --------------------------------------------------------------------------------------------
# over a labeled query set


@dataclass
class EscapeHatch:
    """Misses recovered by one ``discover`` call, and the cost, for one or more scorers.

    ``misses``: one row per scorer × required tool not sent: the query, the tool, its rank,
    and for each way of calling ``discover`` (:data:`DISCOVER_VARIANTS`) the tool found and
    whether that recovered the miss. ``summary``: one row per scorer: counts, Complete@k before
    and after the call, extra calls, mean payload per query with the hatch, payload reduction.
    """

    misses: pd.DataFrame
    summary: pd.DataFrame


#: How the model calls ``discover`` after a miss:
#: ``literal``: the user's words, the article's ``discover`` (best tool of the full registry);
#: ``literal_unseen``: the user's words, searching only tools the model cannot already see;
#: ``search_term``: the query's short ``search_term``, the article's ``discover``.
DISCOVER_VARIANTS = ("literal", "literal_unseen", "search_term")


def _best(scores: np.ndarray, matches: np.ndarray, allowed: np.ndarray) -> int | None:
    """Index of the best allowed tool that matches (the scorer's no-match rule, as
    :meth:`~toolsel.selection.Selector.discover` uses it; ties: earlier), or ``None``."""
    hits = best_matches(scores, matches & allowed, 1)
    return int(hits[0]) if len(hits) else None


def _mean_valid(values: np.ndarray) -> float:
    """Mean over the queries with a required tool to find (``nan`` rows left out)."""
    valid = ~np.isnan(values)
    return float(values[valid].mean()) if valid.any() else float("nan")


def _per_variant(make):
    return {v: make() for v in DISCOVER_VARIANTS}


@dataclass
class _Scored:
    """One text's scores of every tool and the scorer's no-match rule (registry order)."""

    scores: np.ndarray
    matches: np.ndarray


@dataclass
class _HatchTally:
    """The running counts of one scorer's pass over the queries (per variant where keyed)."""

    base: int = 0                 # payload chars without the hatch
    n_miss_q: int = 0
    n_miss: int = 0
    recovered: dict[str, int] = field(default_factory=lambda: _per_variant(int))
    rank_lists: list[list] = field(default_factory=list)   # per query, its required ranks
    n_required: list[int] = field(default_factory=list)
    found_after: dict[str, list[int]] = field(default_factory=lambda: _per_variant(list))
    payload: dict[str, int] = field(default_factory=lambda: _per_variant(int))
    calls: dict[str, int] = field(default_factory=lambda: _per_variant(int))


def _discover_hits(row: _Scored, term: _Scored | None,
                   sent_mask: np.ndarray) -> dict[str, int | None]:
    """The tool each way of calling ``discover`` finds for a query (``None``: nothing)."""
    everything = np.ones(len(sent_mask), dtype=bool)
    return {"literal": _best(row.scores, row.matches, everything),
            "literal_unseen": _best(row.scores, row.matches, ~sent_mask),
            "search_term": (_best(term.scores, term.matches, everything)
                            if term is not None else None)}


def _count_discover_calls(tally: _HatchTally, reg: Registry, q: Query, required: list[int],
                          hits: dict[str, int | None], names: dict[str, str],
                          sent_mask: np.ndarray, request_chars: int) -> None:
    """Per variant: the required tools sent or found, the extra call and its payload."""
    for v, i in hits.items():
        tally.found_after[v].append(sum(bool(sent_mask[j]) or reg[j].name == names[v]
                                        for j in required))
        if v == "search_term" and not q.search_term:
            continue
        tally.calls[v] += 1
        extra = 0 if i is None or sent_mask[i] else payload_chars([reg[i]])
        tally.payload[v] += request_chars + extra


def _miss_rows(tally: _HatchTally, reg: Registry, label: str, top_k: int, q: Query,
               missed: list[str], rank_of: dict[int, int],
               names: dict[str, str]) -> list[dict]:
    """One row per required tool of ``q`` not sent, with what each variant found."""
    rows = []
    for t in missed:
        rank = rank_of[reg.index(t)]
        tally.n_miss += 1
        row = {"scorer": label, "top_k": top_k, "query_id": q.id, "query": q.query,
               "expected": t, "rank": int(rank), "search_term": q.search_term or ""}
        for v in DISCOVER_VARIANTS:
            tally.recovered[v] += names[v] == t
            row[f"{v}_hit"] = names[v]
            row[f"{v}_recovered"] = names[v] == t
        rows.append(row)
    return rows


def _sent_mask(scores: np.ndarray, always_mask: np.ndarray, top_k: int) -> np.ndarray:
    """What :meth:`~toolsel.selection.Selector.select` sends for these scores: every
    always-include tool and the ``top_k`` best of the rest (all tools when the registry has
    no more than ``top_k``)."""
    if len(scores) <= top_k:
        return np.ones(len(scores), dtype=bool)
    mask = always_mask.copy()
    mask[top_k_indices(scores, top_k, ~always_mask)] = True
    return mask


def _hatch_query(tally: _HatchTally, reg: Registry, label: str, top_k: int, q: Query,
                 row: _Scored, term: _Scored | None, always_mask: np.ndarray,
                 d_chars: int) -> list[dict]:
    """Select for ``q`` (from its scores ``row``), count its payload and ranks, and call
    ``discover`` on a miss (its ``search_term``'s scores: ``term``)."""
    sent_mask = _sent_mask(row.scores, always_mask, top_k)
    sent_chars = payload_chars(reg[i] for i in np.flatnonzero(sent_mask))
    tally.base += sent_chars
    for v in DISCOVER_VARIANTS:
        tally.payload[v] += sent_chars + d_chars
    required = [reg.index(t) for t in q.expected if not always_mask[reg.index(t)]]
    ranks = ranks_of(row.scores, required, ~always_mask)
    tally.rank_lists.append(ranks)
    tally.n_required.append(len(required))
    missed = [t for t in q.expected if not sent_mask[reg.index(t)]]
    if not missed:
        for v in DISCOVER_VARIANTS:
            tally.found_after[v].append(len(required))
        return []
    tally.n_miss_q += 1
    hits = _discover_hits(row, term, sent_mask)
    names = {v: ("" if i is None else reg[i].name) for v, i in hits.items()}
    _count_discover_calls(tally, reg, q, required, hits, names, sent_mask,
                          sent_chars + d_chars)
    return _miss_rows(tally, reg, label, top_k, q, missed, dict(zip(required, ranks)), names)


def _scored_rows(scorer, reg: Registry, texts: list[str]) -> list[_Scored]:
    """Every text's scores and matches: one matrix (the report's score cache reads or keeps
    it), or blocks of rows when it would be too large to hold at once."""
    from ..eval.score_cache import MAX_CELLS, canonical_block
    step = len(texts) if len(texts) * len(reg) <= MAX_CELLS else canonical_block(len(reg))
    out: list[_Scored] = []
    for start in range(0, len(texts), max(step, 1)):
        scores, matches = score_matrix(scorer, reg, texts[start:start + step], matches=True)
        out.extend(_Scored(s, m) for s, m in zip(scores, matches))
    return out


def _hatch_pass(reg: Registry, queries: list[Query], sc, top_k: int,
                always_mask: np.ndarray, d_chars: int) -> tuple[str, _HatchTally, list[dict]]:
    """One scorer over every query: its label, tally and miss rows. Every query and search
    term is scored once, as one matrix (:func:`toolsel.eval.engine.score_matrix`), and what
    :class:`~toolsel.selection.Selector` would send and ``discover`` would find is read off
    those scores."""
    scorer = scorer_for(sc, reg)
    label = sc if isinstance(sc, str) else scorer.name
    rows = _scored_rows(scorer, reg, [q.query for q in queries])
    with_term = [i for i, q in enumerate(queries) if q.search_term]
    terms = dict(zip(with_term, _scored_rows(scorer, reg, [queries[i].search_term
                                                            for i in with_term])))
    tally, misses = _HatchTally(), []
    for i, q in enumerate(queries):
        misses.extend(_hatch_query(tally, reg, label, top_k, q, rows[i], terms.get(i),
                                   always_mask, d_chars))
    return label, tally, misses


def _hatch_summary(tally: _HatchTally, label: str, top_k: int, n: int, d_chars: int,
                   unfiltered: int) -> dict:
    """One scorer's summary row from its tally over ``n`` queries."""
    before = mean_metrics(evaluate(tally.rank_lists, [top_k]), k_index=0)
    summary = {"scorer": label, "top_k": top_k, "n_queries": before["n_queries"],
               "queries_with_miss": tally.n_miss_q, "misses": tally.n_miss,
               "discover_tool_chars": d_chars, "Complete@k": before["Complete@k"],
               "payload_chars": tally.base / n,
               "payload_reduction": payload_reduction(tally.base / n, unfiltered)}
    for v in DISCOVER_VARIANTS:
        summary[f"recovered_{v}"] = tally.recovered[v]
        summary[f"Complete_after_{v}"] = _mean_valid(
            evaluate_sent(tally.found_after[v], tally.n_required)["Complete@sent"])
        summary[f"extra_calls_{v}"] = tally.calls[v]
        summary[f"payload_chars_{v}"] = tally.payload[v] / n
        summary[f"payload_reduction_{v}"] = payload_reduction(tally.payload[v] / n, unfiltered)
    return summary


def escape_hatch(registry: Sequence[Tool], queries: Sequence[Query],
                 scorers: Sequence[str | Scorer] = ("jaccard",), top_k: int = 10, *,
                 always_include: Iterable[str] = (),
                 discover_tool: Tool = DISCOVER_TOOL) -> EscapeHatch:
    """One ``discover`` call per query that missed a required tool, for each scorer.

    ``discover`` uses the same scorer as the filter. Called with the user's literal words it
    can never recover a miss: the best tool of the full registry is the filter's own first
    pick, already sent; so the ``literal_unseen`` variant searches only the tools not sent,
    and ``search_term`` uses the query's short search phrase (queries without one count as
    not recovered, with no extra call). Payload is name + description characters per query:
    the filtered tools and ``discover_tools`` on every request, plus, for a query with a miss,
    a second request carrying them again with the pinned hit. Reductions are against sending
    the whole registry without a hatch. Required tools that are always-include count as
    available, not as misses.

    ``Complete@k`` and ``Complete_after_*`` follow :mod:`toolsel.eval.metrics`: Complete@k is
    :func:`~toolsel.eval.metrics.evaluate` over the ranks of each query's required
    (non-always-include) tools among the candidates, and the rate after the call is
    :func:`~toolsel.eval.metrics.evaluate_sent` over the required tools sent or found. A
    query whose required tools are all always-include has nothing for the filter to find
    and is left out of both (the zero-relevant policy); ``n_queries`` counts the queries
    that are in (as in :func:`toolsel.eval.sweep.sweep`'s summary). Payload is averaged over
    every query.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    queries = list(queries)
    if not queries:
        raise ValueError("escape_hatch: no queries to evaluate")
    if not isinstance(top_k, (int, np.integer)) or top_k < 0:
        raise ValueError(f"top_k must be a non-negative integer, got {top_k!r}")
    always = sorted(reg.check_names(always_include, what="always_include"), key=reg.index)
    unfiltered = payload_chars(reg)
    d_chars = payload_chars([discover_tool])
    always_mask = np.zeros(len(reg), dtype=bool)
    always_mask[[reg.index(n) for n in always]] = True
    if isinstance(scorers, (str, Scorer)):
        scorers = [scorers]
    miss_rows, summary_rows = [], []
    for sc in scorers:
        label, tally, misses = _hatch_pass(reg, queries, sc, top_k, always_mask, d_chars)
        miss_rows.extend(misses)
        summary_rows.append(_hatch_summary(tally, label, top_k, len(queries), d_chars,
                                           unfiltered))
    miss_cols = ["scorer", "top_k", "query_id", "query", "expected", "rank", "search_term"]
    miss_cols += [f"{v}_{c}" for v in DISCOVER_VARIANTS for c in ("hit", "recovered")]
    return EscapeHatch(pd.DataFrame(miss_rows, columns=miss_cols),
                       pd.DataFrame(summary_rows, columns=list(summary_rows[0]) if summary_rows
                                    else None))
