"""The page "Integrations" (notebook 10): its tables, and its sentences from them.

The notebook imports MCP ``tools/list`` dumps and sweeps them with the command line, builds an
Anthropic tool-search request and answers a client-side search, and runs the LangChain
middleware through a real agent loop; this module turns what those return into the page's
tables (:func:`imported_table`, :func:`recall_table`, :func:`search_table`) and sentences
(:func:`imported_sentence`, :func:`sweep_sentence`, :func:`loaded_sentence`,
:func:`search_sentence`), each citing the CSV it reads (:data:`FILES`).
"""

from __future__ import annotations

import pandas as pd

from ..data import Registry
from ..report import claims
from ..report import markdown as md

__all__ = ["FILES", "imported_table", "recall_table", "search_table", "imported_sentence",
           "sweep_sentence", "loaded_sentence", "search_sentence"]

#: The CSV each table is written to.
FILES = {"imported": "imported_tools.csv", "summary": "sweep/summary.csv",
         "anthropic": "anthropic_tools.csv", "search": "search_result.csv",
         "calls": "middleware_calls.csv"}


def imported_table(reg: Registry) -> pd.DataFrame:
    """One row per tool of a registry imported from MCP dumps: name, server, the name its
    server gave it (when qualified) and its read-only hint."""
    return pd.DataFrame(
        [{"name": t.name, "server": t.metadata.get("server"),
          "original name": t.metadata.get("original_name", ""),
          "read-only": {True: "yes", False: "no"}.get(
              t.metadata.get("annotations", {}).get("readOnlyHint"), "")} for t in reg])


def recall_table(summary: pd.DataFrame) -> pd.DataFrame:
    """R@k of a sweep's ``summary.csv``: one row per scorer, one column per k."""
    rk = summary.pivot_table(index="scorer", columns="top_k", values="R@k", sort=False)
    rk.columns = [f"R@{k}" for k in rk.columns]
    return rk


def search_table(result: dict) -> pd.DataFrame:
    """The tools a client-side search answered with (``tool_reference`` blocks), in rank order."""
    return pd.DataFrame({"rank": range(1, len(result["content"]) + 1),
                         "tool": [b["tool_name"] for b in result["content"]]})


def imported_sentence(merged: pd.DataFrame, registry_link: str) -> claims.Claim:
    return claims.count_rows(merged, FILES["imported"], "The merged registry: {n} tool"
                             + ("" if len(merged) == 1 else "s") + f" ({registry_link}).")


def sweep_sentence(summary: pd.DataFrame) -> claims.Claim:
    return claims.fill(summary, FILES["summary"], "`toolsel sweep` on the imported registry "
                       "({n} labeled queries): R@k, the share of required tools in the top k.",
                       n=("n_queries", "max"))


def loaded_sentence(table: pd.DataFrame, first_turn: str) -> claims.Claim:
    """The tools (not the search tool) loaded and in all; the characters of every entry."""
    src = FILES["anthropic"]
    return (claims.count_rows(table, src, "**{n} of ", where={"kind": "custom", "deferred": False})
            + claims.count_rows(table, src, "{n} tools loaded**", where={"kind": "custom"})
            + f" for *{md.escape(first_turn)}*; "
            + claims.fill(table, src, "the loaded definitions are {a} of ",
                          where={"deferred": False}, a=("definition_chars", "sum"))
            + claims.fill(table, src, "{b} JSON characters.", b=("definition_chars", "sum")))


def search_sentence(found: pd.DataFrame) -> claims.Claim:
    return claims.count_rows(found, FILES["search"], "{n} `tool_reference` block"
                             + ("" if len(found) == 1 else "s"))
