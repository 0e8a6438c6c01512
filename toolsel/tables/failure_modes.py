"""Why a required tool missed the cut: classifying misses, and hints for repairing descriptions.

A *miss* is a required tool that was not among the ``top_k`` tools sent for a query (one row
of :attr:`toolsel.eval.sweep.SweepResult.misses`). Each miss gets exactly one failure mode, checked
in this order:

``same-domain confusion``
    A sibling (another tool of the expected tool's domain) was sent instead, and the query
    shares at least one content term with the expected tool: the scorer found the right
    neighbourhood and picked the wrong neighbour (the article's ``github_create_pr`` for
    "file a bug report on the backend repo").
``short generic query``
    The query has at most ``short_max_terms`` (2) content words, numbers not counted, and
    shares at most ``gap_max_shared`` (1) of them with the expected tool ("what's 340
    divided by 12", "I need to crunch some numbers").
``vocabulary gap``
    A longer query that shares at most ``gap_max_shared`` (1) content term with the expected
    tool: the user's words are not the description's words (synonyms, paraphrase).
``other``
    Everything else: the terms overlap, yet other tools score higher.

Terms are compared on *content terms*: the words of :func:`toolsel.text.split_identifier`,
without a short list of English function words (:data:`STOPWORDS`), with a trailing plural
``s`` removed (``emails`` matches ``email``). The tool's text is its name split into words,
its description and its parameter descriptions. A tool's domain is its ``domain`` metadata,
or the part of its name before the first ``_`` when it has none.

The *repair hint* of a miss lists the query's content terms missing from the expected tool's
text (numbers left out): words a description could add so that requests phrased this way
find the tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Registry, Tool
from ..text import STOP_WORDS, split_identifier, tool_text

__all__ = ["MODES", "SAME_DOMAIN", "SHORT_GENERIC", "VOCABULARY_GAP", "OTHER", "STOPWORDS",
           "Miss", "content_terms", "tool_terms", "tool_domain", "classify_miss",
           "classify_misses", "mode_counts", "repair_hints"]

SAME_DOMAIN = "same-domain confusion"
SHORT_GENERIC = "short generic query"
VOCABULARY_GAP = "vocabulary gap"
OTHER = "other"
#: Failure modes, in the order they are checked (and shown in tables and charts).
MODES = (SAME_DOMAIN, SHORT_GENERIC, VOCABULARY_GAP, OTHER)

#: Words that carry no meaning about which tool is wanted: the shared core
#: (:data:`toolsel.text.STOP_WORDS`) plus request fillers ("need", "want", "something").
STOPWORDS = STOP_WORDS | frozenset("""
anyone anything else get going got like many much need someone something us want
""".split())

_TOOL_FIELDS = ("name_words", "description", "param_descriptions")


def _normalize(term: str) -> str:
    # a light plural fold, enough for emails/email, numbers/number; not a stemmer
    if len(term) > 3 and term.endswith("s") and not term.endswith("ss"):
        return term[:-1]
    return term


def content_terms(text: str) -> list[str]:
    """Content terms of ``text``, in order of first appearance, without repeats.

    >>> content_terms("What's 340 divided by 12?")
    ['340', 'divided', '12']
    """
    out: dict[str, None] = {}
    for tok in split_identifier(text):
        if tok in STOPWORDS:
            continue
        out.setdefault(_normalize(tok), None)
    return list(out)


def surface_words(text: str, terms: Sequence[str]) -> tuple[str, ...]:
    """Each of ``terms`` (as :func:`content_terms` folds them) as ``text`` writes it: the first
    word of ``text`` that folds to it (``"analysi"`` → ``"analysis"``), for display.

    >>> surface_words("two analyses of the analysis", ["analyse", "analysi"])
    ('analyses', 'analysis')
    """
    first: dict[str, str] = {}
    for tok in split_identifier(text):
        first.setdefault(_normalize(tok), tok)
    return tuple(first.get(t, t) for t in terms)


def tool_terms(tool: Tool) -> frozenset[str]:
    """Content terms of a tool's name words, description and parameter descriptions."""
    return frozenset(content_terms(tool_text(tool, _TOOL_FIELDS)))


def tool_domain(tool: Tool) -> str:
    """The tool's ``domain`` metadata, else its name up to the first ``_``."""
    return tool.domain or tool.name.split("_", 1)[0].lower()


@dataclass(frozen=True)
class Miss:
    """One classified miss: the mode and the evidence for it."""

    mode: str
    shared_terms: tuple[str, ...]
    """Query content terms found in the expected tool's text."""
    missing_terms: tuple[str, ...]
    """Query content terms absent from the expected tool's text, numbers left out (the hint)."""
    siblings_sent: tuple[str, ...]
    """Tools of the expected tool's domain that were sent instead, best first."""
    n_query_terms: int
    """Content terms of the query, numbers not counted."""


def classify_miss(query: str, expected: Tool, sent: Sequence[Tool], *,
                  short_max_terms: int = 2, gap_max_shared: int = 1) -> Miss:
    """Classify one miss: ``expected`` was required for ``query`` but ``sent`` went instead.

    Parameters
    ----------
    query : str
        The user turn.
    expected : Tool
        The required tool that was not sent.
    sent : sequence of Tool
        The tools the filter sent instead, best first.
    short_max_terms : int
        A query with this many content terms or fewer (numbers not counted) is short.
    gap_max_shared : int
        At most this many shared content terms counts as "no or almost no" overlap.
    """
    q_terms = content_terms(query)
    t_terms = tool_terms(expected)
    shared = tuple(t for t in q_terms if t in t_terms)
    missing = tuple(t for t in q_terms if t not in t_terms and not t.isdigit())
    n_words = sum(not t.isdigit() for t in q_terms)
    domain = tool_domain(expected)
    siblings = tuple(t.name for t in sent
                     if t.name != expected.name and tool_domain(t) == domain)
    if siblings and shared:
        mode = SAME_DOMAIN
    elif len(shared) <= gap_max_shared and n_words <= short_max_terms:
        mode = SHORT_GENERIC
    elif len(shared) <= gap_max_shared:
        mode = VOCABULARY_GAP
    else:
        mode = OTHER
    return Miss(mode, shared, missing, siblings, n_words)


def classify_misses(misses: pd.DataFrame, registry: Sequence[Tool], *,
                    short_max_terms: int = 2, gap_max_shared: int = 1) -> pd.DataFrame:
    """Classify every row of a sweep's ``misses`` table.

    ``misses`` needs the columns ``query``, ``expected`` and ``sent_instead`` (names joined by
    ``;``, best first), as :func:`toolsel.eval.sweep.sweep` writes them. Returns a copy with the
    columns ``mode``, ``shared_terms``, ``missing_terms`` (the repair hint) and
    ``siblings_sent`` added (terms and names joined by spaces / ``;``), rows in input order.
    """
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    for col in ("query", "expected", "sent_instead"):
        if col not in misses.columns:
            raise KeyError(f"misses table has no column {col!r}; expected the sweep's misses")
    rows = []
    for query, expected, sent in zip(misses["query"], misses["expected"],
                                     misses["sent_instead"]):
        tool = reg[reg.index(expected)]
        names = [n for n in str(sent).split(";") if n] if isinstance(sent, str) else []
        m = classify_miss(query, tool, [reg[reg.index(n)] for n in names],
                          short_max_terms=short_max_terms, gap_max_shared=gap_max_shared)
        rows.append({"mode": m.mode, "shared_terms": " ".join(m.shared_terms),
                     "missing_terms": " ".join(m.missing_terms),
                     "siblings_sent": ";".join(m.siblings_sent)})
    out = misses.reset_index(drop=True).copy()
    extra = pd.DataFrame(rows, columns=["mode", "shared_terms", "missing_terms",
                                        "siblings_sent"])
    return pd.concat([out, extra], axis=1)


def mode_counts(classified: pd.DataFrame, *, by: str | Iterable[str] = "scorer",
                scorers: Iterable[str] | None = None) -> pd.DataFrame:
    """Misses per ``by`` × failure mode: one row per group, one column per mode (zeros kept).

    ``scorers`` fixes the row order (and keeps scorers without misses as rows of zeros) when
    ``by`` is ``"scorer"``. A ``total`` column is appended.
    """
    by = [by] if isinstance(by, str) else list(by)
    counts = (classified.groupby(by + ["mode"], sort=False).size()
              .unstack("mode", fill_value=0)
              .reindex(columns=list(MODES), fill_value=0))
    if scorers is not None and by == ["scorer"]:
        counts = counts.reindex(list(scorers), fill_value=0)
    counts = counts.astype(int)
    counts["total"] = counts.sum(axis=1)
    counts.columns.name = None
    return counts



def repair_hints(classified: pd.DataFrame) -> pd.DataFrame:
    """Per expected tool: its misses and the query terms its text lacks, most asked first.

    ``classified`` is :func:`classify_misses` output (any scorers and cut-offs; a query that
    misses the tool under several scorers counts once per scorer). Returns one row per tool,
    most-missed first (ties by name): ``expected, misses, query_ids, scorers, missing_terms``
    where ``missing_terms`` reads ``"term (count)"``.
    """
    rows = []
    for tool, g in classified.groupby("expected", sort=True):
        counts: dict[str, int] = {}
        for terms in g["missing_terms"].fillna(""):
            for t in str(terms).split():
                counts[t] = counts.get(t, 0) + 1
        ordered = sorted(counts, key=lambda t: -counts[t])  # stable: first seen wins ties
        rows.append({"expected": tool, "misses": len(g),
                     "query_ids": " ".join(dict.fromkeys(g["query_id"])) if "query_id" in g
                     else "",
                     "scorers": " ".join(dict.fromkeys(g["scorer"])) if "scorer" in g else "",
                     "missing_terms": ", ".join(f"{t} ({counts[t]})" for t in ordered)})
    out = pd.DataFrame(rows, columns=["expected", "misses", "query_ids", "scorers",
                                      "missing_terms"])
    return out.sort_values(["misses", "expected"], ascending=[False, True],
                           kind="stable").reset_index(drop=True)
