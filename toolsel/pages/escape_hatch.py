"""The page "The escape hatch" (notebook 03): what one ``discover`` call recovers.

:func:`hatch_tables` replays the filter on the labeled set and calls ``discover`` once per
query with a miss, four ways, and returns the page's tables; :func:`hatch_sentences` renders
its findings from them, each number citing the CSV it is read from (:data:`FILES`);
:func:`escape_hatch` is the sentence of what the call recovers and costs for one scorer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Query, Registry
from ..report import claims
from ..report.claims import Builder, Claim, Ref, format_number
from ..report.cutoffs import headline_k
from ..tables import scenario as sc
from ..text import content_words
from .overview import scenario_skip_reason

__all__ = ["HatchTables", "FILES", "EXACT", "hatch_tables", "hatch_sentences",
           "scenario_skip_reason", "change", "escape_hatch"]

#: The CSV each table is written to.
FILES = {"data": "data.csv", "scenario": "scenario.csv", "summary": "summary.csv",
         "misses": "misses.csv", "words": "summary_content_words.csv"}
#: The tables written with their floats as they are (counts, texts), not rounded.
EXACT = frozenset({"data", "scenario", "misses"})
#: The content-word variant's columns, named after the search-term call they replace.
_WORD_COLUMNS = ("recovered_search_term", "Complete_after_search_term",
                 "extra_calls_search_term", "payload_chars_search_term",
                 "payload_reduction_search_term")


@dataclass
class HatchTables:
    """The page's tables: ``data`` (one row of counts), ``scenario`` (the article's
    conversation, ``None`` without its tools), ``summary`` (per scorer: misses at ``k``, what
    each call recovers, Complete@k before and after, payload), ``misses`` (each miss and what
    each call found), ``words`` (the content-word call, per scorer); ``word_misses``: the
    content-word call's misses (the same misses, its hits); ``turns``: the scenario's turns."""

    data: pd.DataFrame
    scenario: pd.DataFrame | None
    summary: pd.DataFrame
    misses: pd.DataFrame
    words: pd.DataFrame
    word_misses: pd.DataFrame
    k: int
    has_search_terms: bool
    turns: list = dataclasses.field(default_factory=list)

    def items(self):
        """``(name, table)`` of the tables that exist, as written beside the page."""
        return [(n, getattr(self, n)) for n in FILES if getattr(self, n) is not None]


def hatch_tables(registry: Registry, queries: Sequence[Query], scorers: Sequence[str],
                 top_k: Sequence[int], *, always_include: Sequence[str] = ()) -> HatchTables:
    """The escape hatch at the headline cut-off of ``top_k``, every way of calling it."""
    k = headline_k(top_k, len(registry) - len(set(always_include)))
    hatch = sc.escape_hatch(registry, queries, scorers, k, always_include=always_include)
    # the same misses, discover called with the query's content words instead of a search term
    words = sc.escape_hatch(registry, [dataclasses.replace(q, search_term=content_words(q.query))
                                       for q in queries], scorers, k,
                            always_include=always_include)
    key = ["scorer", "query_id", "expected"]
    if not hatch.misses[key].equals(words.misses[key]):  # the filter is the same: same misses
        raise RuntimeError("the content-word call saw other misses than the filter's")
    by_words = words.summary.set_index("scorer")[list(_WORD_COLUMNS)]
    by_words.columns = [c.replace("search_term", "content_words") for c in by_words.columns]
    scen, turns = None, []
    if scenario_skip_reason(registry) is None:
        turns = sc.article_scenario(registry)
        scen = sc.scenario_table(turns)
    return HatchTables(claims.data_table(registry, queries), scen, hatch.summary,
                       hatch.misses, by_words.reset_index(), words.misses, k,
                       any(q.search_term for q in queries), turns)


def hatch_sentences(t: HatchTables) -> dict[str, Claim]:
    """The page's findings: ``run`` (the page's summary), ``n_queries`` (in ``data.csv``),
    ``n_summary`` (the queries Complete@k counts: those with a filtered required tool) and
    ``recovery`` (:func:`escape_hatch` for the first scorer)."""
    first = t.summary["scorer"].iloc[0]
    return {
        "n_queries": claims.counts(t.data, FILES["data"], "{q} queries", q="n_queries"),
        "run": claims.counts(t.data, FILES["data"], "What one discover call recovers of the "
                             f"misses at K={t.k} over {{q}} labeled queries, per scorer.",
                             q="n_queries"),
        "n_summary": claims.counts(t.summary, FILES["summary"], "{q} queries",
                                   where={"scorer": first}, q="n_queries"),
        "recovery": escape_hatch(t.summary, FILES["summary"], first, t.k,
                                 int(t.data["n_queries"].iloc[0]), words=t.words,
                                 words_source=FILES["words"],
                                 has_search_terms=t.has_search_terms),
    }


def change(before: float, after: float, metric: str, source: str, ref_before: Ref,
           ref_after: Ref, *, kind: str = "pct", digits: int = 0) -> Claim:
    """"raising Complete@10 from 50% to 63%" / "leaving Complete@10 at 50%" / "lowering"."""
    b = Builder()
    x = b.num(before, ref_before, kind, digits)
    if format_number(before, kind, digits) == format_number(after, kind, digits):
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
    b = Builder()
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


