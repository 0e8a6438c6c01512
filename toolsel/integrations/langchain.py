"""A LangChain v1 agent middleware: per-call tool selection, a ``discover_tools`` escape hatch,
and pins kept in the agent's per-thread state (``pip install 'toolsel[langchain]'``).

>>> from langchain.agents import create_agent
>>> from langgraph.checkpoint.memory import InMemorySaver
>>> from toolsel.integrations.langchain import ToolSelectionMiddleware
>>> middleware = ToolSelectionMiddleware(tools, scorer="bm25", top_k=5)      # doctest: +SKIP
>>> agent = create_agent(model, tools=tools, middleware=[middleware],
...                      checkpointer=InMemorySaver())                        # doctest: +SKIP

Before every model call (``wrap_model_call``) the middleware scores the registry against the
latest human message and keeps, of the tools the agent would send, only the selected top-K,
the always-include set and this thread's pins, plus its own ``discover_tools``. Tools outside
the registry (other middleware's, provider dicts) pass through untouched. ``discover_tools``
searches the *full* registry; a hit is pinned by a state update (``Command``), so pins live in
the graph state: a checkpointer persists them with the thread, and two threads never share
them. The agent's tool node keeps every tool, so a pinned tool can be called at once.
"""

# NOTE: no ``from __future__ import annotations`` in this module, on purpose. The discover
# tool is a closure built in ``ToolSelectionMiddleware.__init__``; LangChain finds its injected
# ``runtime: ToolRuntime`` parameter by resolving annotations with ``typing.get_type_hints``
# against the *module globals*. Postponed (string) annotations of a closure whose types are
# local names, or imported under TYPE_CHECKING, do not resolve: building the tool then fails
# with a NameError, or (with an explicit ``args_schema``, as here) the tool builds with a
# correct-looking schema but ``runtime`` is not recognized as injected, and ``create_agent``
# fails later with a NameError. Live annotation objects need no resolution.
# tests/test_integrations_langchain.py::test_postponed_annotations_pitfall shows both sides.

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command
from pydantic import BaseModel, Field

from ..data import Registry, Tool
from .importers import from_langchain
from ..selection import DISCOVER_TOOL, Selector

__all__ = ["ToolSelectionMiddleware", "ToolselState", "PINNED_KEY", "latest_human_text"]

#: The state key holding a thread's pinned tool names (in the order they were pinned).
PINNED_KEY = "toolsel_pinned"


def _add_pins(left: list[str] | None, right: list[str] | None) -> list[str]:
    """State reducer: append newly pinned names, keeping order and dropping repeats.

    A reducer (not last-value) so two discover calls in one step both land.
    """
    out = list(left or [])
    for name in right or []:
        if name not in out:
            out.append(name)
    return out


class ToolselState(AgentState):
    """The agent state plus this thread's pins."""

    toolsel_pinned: NotRequired[Annotated[list[str], _add_pins]]


class _DiscoverArgs(BaseModel):
    query: str = Field(
        description=DISCOVER_TOOL.parameters["properties"]["query"]["description"])


def latest_human_text(messages: Sequence[Any]) -> str | None:
    """Text of the latest human message, or ``None`` when there is none."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return str(message.text)
    return None


def _tool_name(tool: Any) -> str | None:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, dict):
        return None  # provider tool dicts are never filtered
    return getattr(tool, "name", None) or getattr(tool, "__name__", None)


class ToolSelectionMiddleware(AgentMiddleware):
    """Send the top-K tools for the latest human message, plus pins and a ``discover_tools`` tool.

    Parameters
    ----------
    tools : sequence of LangChain tools, or of toolsel Tool, or a Registry
        The registry to select from: normally the same tools given to ``create_agent``.
    scorer : str or Scorer
        Any toolsel scorer (``"jaccard"`` is the article's).
    top_k : int
        Tools sent per model call besides always-include, pinned and ``discover_tools``.
    always_include : iterable of str, optional
        Names always sent. ``None`` takes the tools a toolsel registry marks.
    search_limit : int
        How many tools one ``discover_tools`` call may find and pin (the article: 1).
    discover_name : str
        Name of the injected discover tool.
    selector : Selector, optional
        A fitted selector to use instead of ``tools``/``scorer``/``top_k``/``always_include``.
    """

    state_schema = ToolselState

    def __init__(self, tools: Sequence[Any] | None = None, *, scorer: Any = "bm25",
                 top_k: int = 10, always_include: Iterable[str] | None = None,
                 search_limit: int = 1, discover_name: str = "discover_tools",
                 selector: Selector | None = None, **scorer_params: Any):
        super().__init__()
        if selector is None:
            if tools is None:
                raise TypeError("give the registry as `tools` or a fitted `selector`")
            selector = Selector(_as_registry(tools), scorer, top_k=top_k,
                                always_include=always_include, **scorer_params)
        if discover_name in selector.registry:
            raise ValueError(f"the registry already has a tool named {discover_name!r}; pass "
                             "another discover_name")
        if search_limit < 1:
            raise ValueError(f"search_limit must be >= 1, got {search_limit}")
        self.selector = selector
        self.search_limit = int(search_limit)
        self.discover_name = discover_name
        self.tools = [self._discover_tool()]

    # -- selection before each model call ---------------------------------------------------
    def selected_names(self, query: str, pinned: Iterable[str] = ()) -> list[str]:
        """Registry names sent for ``query`` with these pins (names not in the registry are ignored)."""
        registry = self.selector.registry
        return self.selector.select(query, [p for p in pinned if p in registry])

    def _filter(self, request: ModelRequest) -> ModelRequest:
        query = latest_human_text(request.messages)
        if query is None:  # nothing to score against: leave the request alone
            return request
        registry = self.selector.registry
        keep = set(self.selected_names(query, request.state.get(PINNED_KEY, ())))
        tools = [t for t in request.tools
                 if (name := _tool_name(t)) is None or name not in registry or name in keep]
        return request.override(tools=tools)

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]):
        return handler(self._filter(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[Any]]):
        return await handler(self._filter(request))

    # -- the escape hatch ---------------------------------------------------------------------
    def _discover_tool(self) -> BaseTool:
        selector, limit = self.selector, self.search_limit

        # Live annotations (see the module note): ``runtime`` is injected, not model-visible.
        def discover_tools(query: str, runtime: ToolRuntime) -> Command | str:
            hits = selector.search(query, limit=limit)
            if not hits:
                return (f"No tool matches {query!r}. Try other words, or answer without a "
                        "tool.")
            found = "; ".join(f"{t.name}: {t.description}" for t in hits)
            names = ", ".join(t.name for t in hits)
            text = (f"Found {found}. {names} {'is' if len(hits) == 1 else 'are'} now available "
                    "for the rest of this conversation.")
            return Command(update={
                PINNED_KEY: [t.name for t in hits],
                "messages": [ToolMessage(text, tool_call_id=runtime.tool_call_id,
                                         name=self.discover_name)],
            })

        return StructuredTool.from_function(
            discover_tools, name=self.discover_name, args_schema=_DiscoverArgs,
            description=DISCOVER_TOOL.description)

    def __repr__(self) -> str:
        return (f"ToolSelectionMiddleware({self.selector!r}, search_limit={self.search_limit},"
                f" discover_name={self.discover_name!r})")


def _as_registry(tools: Sequence[Any]) -> Registry:
    if isinstance(tools, Registry):
        return tools
    tools = list(tools)
    if tools and all(isinstance(t, Tool) for t in tools):
        return Registry(tools)
    return Registry(from_langchain(tools))

