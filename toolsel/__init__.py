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
"""

from .data import (DataError, Query, Registry, Tool, load_queries, load_registry)
from .eval.metrics import (complete_at_k, payload_chars, payload_reduction, payload_tokens,
                      recall_at_k, reciprocal_rank, success_at_k)
from .scorers import (Bm25Scorer, DefaultScorer, EmbeddingScorer, FusionScorer, JaccardScorer,
                      NotFittedError, Scorer, TfidfScorer, available_scorers, get_scorer)
from .selection import Selector, Session, discover, jaccard, select_tools
from .text import tokenize
from .eval.sweep import SweepResult, sweep

__version__ = "0.1.0"

__all__ = [
    "Tool", "Query", "Registry", "DataError", "load_registry", "load_queries",
    "select_tools", "discover", "jaccard", "tokenize", "Selector", "Session",
    "Scorer", "JaccardScorer", "Bm25Scorer", "TfidfScorer", "EmbeddingScorer",
    "FusionScorer", "DefaultScorer",
    "NotFittedError", "get_scorer", "available_scorers",
    "recall_at_k", "success_at_k", "complete_at_k", "reciprocal_rank",
    "payload_chars", "payload_tokens", "payload_reduction",
    "sweep", "SweepResult",
]
