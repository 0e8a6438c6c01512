"""The article's reported numbers, and tables putting ours beside them.

The article evaluated its Jaccard scorer on its own 61-tool registry and 30 queries (not
published); ours are rebuilt from its description (see ``data/README.md``). These helpers
keep the comparison in one place so the notebooks and reports say the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..data import Query, Tool, count_servers
from ..eval.metrics import payload_chars, payload_tokens

__all__ = ["ARTICLE", "ARTICLE_TOOL_NAMES", "ARTICLE_MISSES", "is_article_registry",
           "article_queries_present", "is_article_benchmark", "benchmark_facts",
           "replication_table", "miss_rank_bands", "headline_frame"]

#: What the article reports for its Jaccard scorer (BRIEF.md).
ARTICLE = {
    "n_tools": 61,
    "n_queries": 30,
    "unfiltered_chars": 5523,
    "R@10": 0.67,
    "payload_reduction@10": 0.84,
    "R@30 - R@10": 0.13,
}

#: Tool names the article's registry has (BRIEF.md); a registry without them is not its.
ARTICLE_TOOL_NAMES = ("github_create_issue", "github_create_pr", "jira_create_issue",
                      "jira_transition_issue", "slack_send_dm", "slack_search_messages",
                      "read_file", "write_file", "calculator", "weather_lookup", "stock_price",
                      "translate_text")

#: The article's three listed Jaccard misses at K=10: query text, wanted tool, a sibling
#: sent instead (``None``: no sibling, a short generic query).
ARTICLE_MISSES = (
    ("file a bug report on the backend repo", "github_create_issue", "github_create_pr"),
    ("mark this jira ticket as in progress", "jira_transition_issue", "jira_create_issue"),
    ("what's 340 divided by 12", "calculator", None),
)


def is_article_registry(registry: Sequence[Tool]) -> bool:
    """Whether ``registry`` is the article's: 61 tools, its named tools among them."""
    names = {t.name for t in registry}
    return len(names) == ARTICLE["n_tools"] and names.issuperset(ARTICLE_TOOL_NAMES)


def article_queries_present(queries: Sequence[Query]) -> bool:
    """Whether ``queries`` hold the article's three listed misses (same text and tool)."""
    have = {(q.query.strip().lower(), t) for q in queries for t in q.expected}
    return all((text, wanted) in have for text, wanted, _ in ARTICLE_MISSES)


def is_article_benchmark(registry: Sequence[Tool], queries: Sequence[Query]) -> bool:
    """The article's registry with a 30-query set holding its three misses (the bundled data).

    Notebook sections and checks tied to the article's numbers run only when this holds.
    """
    return (is_article_registry(registry) and len(queries) == ARTICLE["n_queries"]
            and article_queries_present(queries))


def benchmark_facts(registry: Sequence[Tool], queries: Sequence[Query]) -> dict[str, int]:
    """Counts that describe a benchmark: tools, servers (:func:`toolsel.data.count_servers`),
    payload, queries by phrasing."""
    return {
        "n_tools": len(registry),
        "n_servers": count_servers(registry),
        "n_always_include": sum(t.always_include for t in registry),
        "unfiltered_chars": payload_chars(registry),
        "unfiltered_tokens": payload_tokens(registry),
        "n_queries": len(queries),
        "n_query_domains": len({q.domain for q in queries if q.domain}),
        "n_direct": sum(q.phrasing == "direct" for q in queries),
        "n_indirect": sum(q.phrasing == "indirect" for q in queries),
        "n_multi_tool": sum(len(q.expected) > 1 for q in queries),
    }


def replication_table(summary: pd.DataFrame, unfiltered_chars: int, *,
                      intervals: pd.DataFrame | None = None, scorer: str = "jaccard",
                      n_tools: int | None = None, n_queries: int | None = None) -> pd.DataFrame:
    """Our numbers for ``scorer`` beside the article's: one row per reported figure.

    Columns ``measure, article, ours, difference`` and, with ``intervals``
    (:func:`toolsel.eval.stats.mean_intervals`), ``ours_low, ours_high`` for R@10.
    ``summary`` must have K=10 and K=30 for that scorer.
    """
    s = summary[summary["scorer"] == scorer].set_index("top_k")
    missing = [k for k in (10, 30) if k not in s.index]
    if missing:
        raise ValueError(f"the summary has no K={missing} rows for scorer {scorer!r}")
    ours = {
        "n_tools": n_tools,
        "n_queries": n_queries if n_queries is not None else int(s.loc[10, "n_queries"]),
        "unfiltered_chars": unfiltered_chars,
        "R@10": float(s.loc[10, "R@k"]),
        "payload_reduction@10": float(s.loc[10, "payload_reduction"]),
        "R@30 - R@10": float(s.loc[30, "R@k"] - s.loc[10, "R@k"]),
    }
    rows = []
    for measure, article in ARTICLE.items():
        mine = ours[measure]
        rows.append({"measure": measure, "article": article, "ours": mine,
                     "difference": None if mine is None else mine - article,
                     "ours_low": None, "ours_high": None})
    if intervals is not None:
        iv = intervals[(intervals["scorer"] == scorer) & (intervals["top_k"] == 10)
                       & (intervals["metric"] == "R@k")]
        if not iv.empty:
            rows[3]["ours_low"] = float(iv["low"].iloc[0])
            rows[3]["ours_high"] = float(iv["high"].iloc[0])
    return pd.DataFrame(rows, columns=["measure", "article", "ours", "difference", "ours_low",
                                       "ours_high"])


def miss_rank_bands(per_query: pd.DataFrame, *, scorer: str = "jaccard", k: int = 10,
                    bands: Sequence[int] = (30,)) -> pd.DataFrame:
    """Where the required tools missed at ``k`` rank: how many a larger K would recover.

    ``per_query`` is the sweep's per-query table. Returns one row per band
    ``(k, b]`` for each ``b`` in ``bands`` and a last row ``> max(bands)``, with the count of
    required tools ranked there (always-include tools excluded).
    """
    g = per_query[(per_query["scorer"] == scorer) & ~per_query["always_include"].astype(bool)]
    ranks = g["rank"].astype(int)
    missed = ranks[ranks > k]
    edges = [k, *sorted(bands)]
    rows = [{"ranks": f"{lo + 1}-{hi}", "misses_at_k": int(((missed > lo) & (missed <= hi)).sum())}
            for lo, hi in zip(edges, edges[1:])]
    rows.append({"ranks": f"> {edges[-1]}", "misses_at_k": int((missed > edges[-1]).sum())})
    return pd.DataFrame(rows)


def headline_frame(summary: pd.DataFrame, intervals: pd.DataFrame | None = None, *,
                   top_k: int = 10) -> pd.DataFrame:
    """One row per scorer at ``top_k``: R@k and Complete@k (with 95% CI), MRR, NDCG@k (when
    the summary has it), payload."""
    s = summary[summary["top_k"] == top_k]
    if s.empty:
        raise ValueError(f"the summary has no rows for top_k={top_k}")
    rows = []
    for r in s.to_dict("records"):
        row = {"scorer": r["scorer"], "top_k": top_k, "R@k": r["R@k"],
               "Complete@k": r["Complete@k"], "MRR": r["MRR"],
               **({"NDCG@k": r["NDCG@k"]} if "NDCG@k" in r else {}),
               "payload_chars": r["payload_chars"],
               "payload_reduction": r["payload_reduction"]}
        if intervals is not None:
            for metric in ("R@k", "Complete@k"):
                iv = intervals[(intervals["scorer"] == r["scorer"])
                               & (intervals["top_k"] == top_k) & (intervals["metric"] == metric)]
                row[f"{metric}_low"] = float(iv["low"].iloc[0]) if not iv.empty else None
                row[f"{metric}_high"] = float(iv["high"].iloc[0]) if not iv.empty else None
        rows.append(row)
    return pd.DataFrame(rows)
