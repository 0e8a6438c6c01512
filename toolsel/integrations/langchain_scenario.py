"""The article's 3-turn escape-hatch scenario, run through a real LangChain v1 agent offline.

A :class:`ScriptedChatModel` stands in for the LLM: it records the tools bound on every call
and answers from a script (which tool to call for which user message), so the whole agent loop
(``create_agent``: middleware, model node, tool node, checkpointer) runs for real without a
network or an API key. :func:`run_article_scenario` drives it; the tests and
``notebooks/10_integrations`` use it.

Scenario (BRIEF.md): four tools, ``top_k=1``, no always-include, ``discover_tools`` injected.
Turn 1 asks for the weather; turn 2 "I need to crunch some numbers ..." shares no word with
the calculator, so the model calls ``discover_tools``, which pins ``calculator``; turn 3
"translate hello to French" then sends ``calculator``, ``discover_tools`` and
``translate_text``. A second conversation (thread) interleaved with the first never sees the pin.
"""

# No postponed annotations here either: the tools below are inspected by LangChain at runtime
# (see the note in toolsel/integrations/langchain.py).

import ast
import itertools
import operator
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import ConfigDict, Field, PrivateAttr

from .langchain import PINNED_KEY, ToolSelectionMiddleware, latest_human_text

__all__ = ["ScriptedChatModel", "article_tools", "ARTICLE_TURNS", "ARTICLE_SCRIPT",
           "ScenarioRun", "run_article_scenario"]


# -- the article's four tools ----------------------------------------------------------------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.USub: operator.neg}


def _arithmetic(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _arithmetic(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arithmetic(node.left), _arithmetic(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arithmetic(node.operand))
    raise ValueError("only + - * / on numbers")


def article_tools() -> list:
    """The scenario's four LangChain tools, in registry order (canned answers, offline)."""

    @tool
    def weather_lookup(city: str) -> str:
        """Get the current weather for a city"""
        return f"{city}: 18 C, light rain"

    @tool
    def stock_price(ticker: str) -> str:
        """Get the latest stock price for a ticker symbol"""
        return f"{ticker.upper()}: 187.20 USD"

    @tool
    def translate_text(text: str, target: str) -> str:
        """Translate text into another language"""
        known = {("hello", "french"): "bonjour"}
        return known.get((text.lower(), target.lower()), f"[{target}] {text}")

    @tool
    def calculator(expression: str) -> str:
        """Evaluate a basic arithmetic expression"""
        return f"{expression} = {_arithmetic(ast.parse(expression, mode='eval')):g}"

    return [weather_lookup, stock_price, translate_text, calculator]


#: The three user turns of the article's scenario.
ARTICLE_TURNS = (
    "What's the weather like in Paris today?",
    "I need to crunch some numbers but don't see a tool for that, can you check?",
    "translate hello to French",
)

#: What the scripted model does on the first model call after each user message.
ARTICLE_SCRIPT: dict[str, list[dict[str, Any]]] = {
    ARTICLE_TURNS[0]: [{"name": "weather_lookup", "args": {"city": "Paris"}}],
    ARTICLE_TURNS[1]: [{"name": "discover_tools", "args": {"query": "arithmetic calculator"}}],
    ARTICLE_TURNS[2]: [{"name": "translate_text", "args": {"text": "hello", "target": "French"}}],
}


# -- a scripted chat model -------------------------------------------------------------------

class ScriptedChatModel(BaseChatModel):
    """A chat model that plays a script and records the tools it was given on every call.

    ``script`` maps a user message to the tool calls the model makes right after it; once a
    tool answered (or for an unscripted message) the model replies with text. Every call is
    appended to ``calls`` as ``{"query", "tools", "after_tool"}`` (tool names sorted). Safe to
    share between threads.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Mapping[str, Sequence[Mapping[str, Any]]] = Field(default_factory=dict)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    _ids: Any = PrivateAttr(default_factory=lambda: itertools.count(1))
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "toolsel-scripted"

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):
        names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
        return self.bind(tool_names=names, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, tool_names: Sequence[str] = (),
                  **kwargs: Any) -> ChatResult:
        query = latest_human_text(messages)
        after_tool = isinstance(messages[-1], ToolMessage)
        with self._lock:
            self.calls.append({"query": query, "tools": sorted(tool_names),
                               "after_tool": after_tool})
            ids = [f"call_{next(self._ids)}" for _ in self.script.get(query, ())]
        if isinstance(messages[-1], HumanMessage) and query in self.script:
            calls = [{"name": c["name"], "args": dict(c["args"]), "id": i, "type": "tool_call"}
                     for c, i in zip(self.script[query], ids)]
            message = AIMessage(content="", tool_calls=calls)
        elif after_tool:
            message = AIMessage(content=f"Done. {messages[-1].text}")
        else:
            message = AIMessage(content="I can answer that without a tool.")
        return ChatResult(generations=[ChatGeneration(message=message)])


# -- the scenario ----------------------------------------------------------------------------

@dataclass
class ScenarioRun:
    """What a scenario run recorded.

    ``calls``: one row per model call, ``{"thread", "turn", "query", "n_tools", "tools",
    "after_tool"}`` in the order they ran; ``pinned``: each thread's pinned state at the end;
    ``messages``: each thread's final message list (from the checkpointer).
    """

    calls: list[dict[str, Any]] = field(default_factory=list)
    pinned: dict[str, list[str]] = field(default_factory=dict)
    messages: dict[str, list[BaseMessage]] = field(default_factory=dict)

    def first_calls(self) -> list[dict[str, Any]]:
        """The first model call of each user turn: what the model saw when the user spoke."""
        return [c for c in self.calls if not c["after_tool"]]

    def table(self):
        """``calls`` as a pandas DataFrame (tools joined with ", ")."""
        import pandas as pd
        rows = [{**c, "tools": ", ".join(c["tools"])} for c in self.calls]
        return pd.DataFrame(rows, columns=["thread", "turn", "query", "n_tools", "tools",
                                           "after_tool"])


def run_article_scenario(*, scorer: Any = "jaccard", top_k: int = 1,
                         turns: Sequence[tuple[str, str]] | None = None) -> ScenarioRun:
    """Run the article's scenario through ``create_agent`` with a checkpointer.

    ``turns`` is ``[(thread_id, user message), ...]`` in order; the default interleaves a
    second conversation ``"B"`` between turns 2 and 3 of conversation ``"A"``, asking the
    same thing as A's turn 3 so the two can be compared.
    """
    if turns is None:
        turns = [("A", ARTICLE_TURNS[0]), ("A", ARTICLE_TURNS[1]), ("B", ARTICLE_TURNS[2]),
                 ("A", ARTICLE_TURNS[2])]
    tools = article_tools()
    model = ScriptedChatModel(script=ARTICLE_SCRIPT)
    middleware = ToolSelectionMiddleware(tools, scorer=scorer, top_k=top_k, always_include=())
    agent = create_agent(model, tools=tools, middleware=[middleware],
                         checkpointer=InMemorySaver())
    run = ScenarioRun()
    turn_of: dict[str, int] = {}
    for thread, text in turns:
        turn_of[thread] = turn_of.get(thread, 0) + 1
        start = len(model.calls)
        agent.invoke({"messages": [HumanMessage(text)]},
                     {"configurable": {"thread_id": thread}})
        for call in model.calls[start:]:
            run.calls.append({"thread": thread, "turn": turn_of[thread], "query": call["query"],
                              "n_tools": len(call["tools"]), "tools": call["tools"],
                              "after_tool": call["after_tool"]})
    for thread in turn_of:
        values = agent.get_state({"configurable": {"thread_id": thread}}).values
        run.pinned[thread] = list(values.get(PINNED_KEY, []))
        run.messages[thread] = list(values["messages"])
    return run
