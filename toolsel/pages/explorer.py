"""The page "Explorer" (notebook 04): one query, the whole registry, scorers side by side.

The page's tables are the rankings of :func:`toolsel.report.explorer.build_explorer` (one
``ranking_<scorer>.csv`` per scorer, every tool with its rank among the candidates, as pages
00-03 rank it: always-include is what the page is given, by default none).
:func:`shown_query` picks the query shown on a registry without the default's expected tool;
:func:`rank_sentence` says where each scorer ranks that tool, citing each ranking's CSV.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..data import Query, Registry
from ..report import markdown as md
from ..report.claims import Claim, fill

__all__ = ["ranking_file", "shown_query", "rank_sentence"]


def ranking_file(scorer: str) -> str:
    """The CSV one scorer's ranking is written to."""
    return f"ranking_{scorer}.csv"


def shown_query(registry: Registry, queries: Sequence[Query], query: str,
                expected: str) -> tuple[str, str, str | None]:
    """``(query, expected, note)``: the given query and tool when the registry has the tool;
    else the first labeled query and its first required tool (or the given query and no tool
    when there are no labeled queries), with a note saying so."""
    if not expected or expected in registry:
        return query, expected, None
    first = queries[0] if queries else None
    note = (f"*This registry has no {md.escape(expected)}: showing "
            + (f"the first labeled query, \"{md.escape(first.query)}\".*" if first
               else "the default query, with no tool to look for.*"))
    return (first.query, first.expected[0], note) if first else (query, "", note)


def rank_sentence(views: Sequence, expected: str, k: int) -> Claim:
    """Where each scorer's view ranks ``expected``, and whether it is sent at ``k``."""
    text = Claim(f"{md.code(expected)}: ")
    for i, v in enumerate(views):
        sent = bool(v.ranking.set_index("tool").loc[expected, "sent"])
        text = text + ("; " if i else "") + fill(
            v.ranking, ranking_file(v.scorer),
            f"{md.escape(v.scorer)} ranks it {{r}}"
            + (" (sent)" if sent else f" (not sent at K={k})"),
            where={"tool": expected}, r="rank")
    return text + "."
