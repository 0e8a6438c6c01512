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

__all__ = ["ranking_file", "shown_query", "rank_sentence", "DEFAULT_QUERY",
           "DEFAULT_EXPECTED", "EXAMPLE_CHARS"]


def ranking_file(scorer: str) -> str:
    """The CSV one scorer's ranking is written to."""
    return f"ranking_{scorer}.csv"


#: The page's example on the bundled registry (its parameters' defaults): a miss of the
#: bundled benchmark. On any other registry the example comes from that registry's data.
DEFAULT_QUERY = "file a bug report on the backend repo"
DEFAULT_EXPECTED = "github_create_issue"
#: A labeled request longer than this is passed over for a shorter one as the example.
EXAMPLE_CHARS = 200


def shown_query(registry: Registry, queries: Sequence[Query], query: str,
                expected: str, *, bundled: bool = False) -> tuple[str, str, str | None]:
    """``(query, expected, note)``: the example the page ranks.

    The given query and tool when the registry has the tool and the example is the
    caller's own (or the registry is the bundled one, ``bundled``). The page's default
    example (:data:`DEFAULT_QUERY`) is about the bundled registry, so on any other registry
    the example is taken from the user's data: the first labeled query of at most
    :data:`EXAMPLE_CHARS` characters (else the first) with its first required tool; without
    labeled queries, the first tool with a description of at most that length (else the first
    with one), its description as the query. The
    note says which, naming only the user's own data (``None`` when the given example is
    shown)."""
    default = (query, expected) == (DEFAULT_QUERY, DEFAULT_EXPECTED)
    if (bundled or not default) and (not expected or expected in registry):
        return query, expected, None
    mine = "" if default else f"This registry has no {md.code(expected)}: "
    if queries:
        first = next((q for q in queries if len(q.query) <= EXAMPLE_CHARS), queries[0])
        what = ("the first labeled query" if first is queries[0]
                else f"the first labeled query of at most {EXAMPLE_CHARS} characters")
        return first.query, first.expected[0], f"*{mine}{what}, with its first required tool.*"
    described = [t for t in registry if t.description.split()]
    tool = next((t for t in described if len(t.description) <= EXAMPLE_CHARS),
                described[0] if described else None)
    if tool is None:
        return (query if not default else registry[0].name), "", (
            f"*{mine}no tool has a description: the query is "
            + ("the given one" if not default else "the first tool's name")
            + ", with no tool to look for.*")
    return (tool.description, tool.name,
            f"*{mine}no labeled queries given: the query is the description of "
            f"{md.code(tool.name)}.*")


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
