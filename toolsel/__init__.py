"""toolsel: dynamic tool selection for LLM agents, and the tools to measure it.

Score a registry of tool schemas against each user turn, send only the top-K plus an
always-include set, and give the model a ``discover`` escape hatch whose hits stay pinned for
the conversation.

>>> from toolsel import Tool, select_tools, discover
>>> tools = [Tool("calculator", "Evaluate a basic arithmetic expression"),
...          Tool("weather_lookup", "Current weather for a city")]
>>> select_tools(tools, "weather in Paris", top_k=1)
['weather_lookup']
>>> discover(tools, "evaluate an arithmetic expression").name
'calculator'

This namespace holds the selection API only (no pandas is imported with it). The evaluation
lives in :mod:`toolsel.eval` (metrics, :func:`toolsel.eval.sweep.sweep`), the tables in
:mod:`toolsel.tables`, the reports in :mod:`toolsel.report`.
"""

from .data import DataError, Query, Registry, Tool, load_queries, load_registry
from .scorers import (Bm25Scorer, DefaultScorer, EmbeddingScorer, FusionScorer, JaccardScorer,
                      Scorer, TfidfScorer, available_scorers, get_scorer)
from .scorers.check import check_scorer
from .selection import Selector, discover, select_tools

__version__ = "0.1.0"

__all__ = [
    # the article's API
    "Tool", "select_tools", "discover",
    # registries and labeled queries
    "Registry", "Query", "DataError", "load_registry", "load_queries",
    # selection with a fitted scorer
    "Selector",
    # scorers
    "Scorer", "JaccardScorer", "Bm25Scorer", "TfidfScorer", "EmbeddingScorer",
    "FusionScorer", "DefaultScorer", "get_scorer", "available_scorers", "check_scorer",
]
