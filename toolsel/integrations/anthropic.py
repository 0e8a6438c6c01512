"""Anthropic tool search: a Messages API ``tools`` array with deferred loading, and client-side search.

Anthropic's tool search keeps most tool definitions out of the prompt: tools marked
``defer_loading: true`` are loaded only when a search finds them. This module builds that
``tools`` array from a toolsel registry and validates it offline against the ``anthropic``
SDK's own request types (``pip install 'toolsel[anthropic]'``; no network, no API key).

>>> from toolsel import load_registry
>>> from toolsel.integrations.anthropic import build_tools
>>> registry = load_registry("data/registry.json")
>>> tools = build_tools(registry, selected=["slack_send_dm"], search="bm25")
>>> tools[0]
{'type': 'tool_search_tool_bm25_20251119', 'name': 'tool_search_tool_bm25'}

Three kinds of search, chosen with ``search``:

- ``"bm25"`` / ``"regex"``: the server-side Tool Search Tool (types
  ``tool_search_tool_bm25_20251119`` / ``tool_search_tool_regex_20251119``, as in the SDK's
  ``ToolSearchToolBm25_20251119Param`` / ``ToolSearchToolRegex20251119Param``).
- ``"custom"``: a client-side search tool; :class:`ToolSearchHandler` answers its calls with
  a toolsel scorer and returns a ``tool_result`` whose content is ``tool_reference`` blocks.

What the API rejects is refused here with a :class:`ToolSearchError`: every tool deferred
(the search tool included), ``cache_control`` on a deferred tool, duplicate names, more than
10,000 deferred tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..data import Registry, Tool, suggest_names
from ..selection import Selector

try:  # the SDK is only needed to validate; building the dicts needs nothing
    import anthropic.types as _sdk
    from pydantic import TypeAdapter, ValidationError
except ImportError:  # pragma: no cover - depends on the environment
    _sdk = None

__all__ = ["SEARCH_TOOLS", "MAX_DEFERRED", "ToolSearchError", "build_tools", "check_tools",
           "custom_search_tool", "sdk_type_for", "describe_tools", "ToolSearchHandler", "validate_tools", "validate_tool_result"]

#: The server-side search tools, exactly as the SDK types spell them.
SEARCH_TOOLS: dict[str, dict[str, str]] = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}

#: Most deferred tools one request may carry (Anthropic's documented limit).
MAX_DEFERRED = 10_000

CUSTOM_SEARCH_NAME = "search_tools"


class ToolSearchError(ValueError):
    """A ``tools`` array the Messages API would reject, or a malformed search call."""


def custom_search_tool(name: str = CUSTOM_SEARCH_NAME, *, limit: int = 5) -> dict[str, Any]:
    """The definition of a client-side search tool (a normal custom tool, never deferred)."""
    return {
        "name": name,
        "description": ("Search the available tools by what they do. Returns the tools that "
                        "match; they become usable right away. Call it when none of the tools "
                        "you can see fits the task."),
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string",
                          "description": "Keywords or a short phrase describing the task"},
                "limit": {"type": "integer", "minimum": 1,
                          "description": f"Most tools to return (default {limit})"},
            },
            "required": ["query"],
        },
    }


def build_tools(registry: Sequence[Tool], selected: Iterable[str] = (), *,
                always_include: Iterable[str] | None = None, search: str = "bm25",
                search_name: str = CUSTOM_SEARCH_NAME,
                cache_control: Mapping[str, Mapping[str, Any]] | None = None,
                validate: bool = True) -> list[dict[str, Any]]:
    """The Messages API ``tools`` array: search tool and loaded tools first, the rest deferred.

    Parameters
    ----------
    registry : Registry or sequence of Tool
        Every tool the model may use; their order is kept.
    selected : iterable of str
        Tools to load up front besides ``always_include``: the 3-5 most used ones, or a
        toolsel selection for the first turn (``Selector.select(query)``).
    always_include : iterable of str, optional
        Tools never deferred. ``None`` takes the registry's ``always_include`` tools.
    search : {"bm25", "regex", "custom"}
        Server-side tool search (BM25 or regex variant), or a client-side custom search
        tool named ``search_name`` (answer its calls with :class:`ToolSearchHandler`).
    cache_control : mapping of name to cache-control dict, optional
        E.g. ``{"read_file": {"type": "ephemeral"}}``; only loaded tools may carry one.
    validate : bool
        Check the result against the SDK's types (:func:`validate_tools`).

    Returns
    -------
    list of dict
        The search tool, then every registry tool in registry order; the ones neither
        selected nor always-include carry ``"defer_loading": True``.
    """
    registry = registry if isinstance(registry, Registry) else Registry(registry)
    if always_include is None:
        always_include = registry.always_include
    loaded = _names(registry, always_include, "always_include") | _names(registry, selected,
                                                                         "selected")
    cache_control = dict(cache_control or {})
    _names(registry, cache_control, "cache_control")
    if search in SEARCH_TOOLS:
        search_tool: dict[str, Any] = dict(SEARCH_TOOLS[search])
    elif search == "custom":
        search_tool = custom_search_tool(search_name)
    else:
        raise ValueError(f"unknown search {search!r}; expected 'bm25', 'regex' or 'custom'")
    if search_tool["name"] in registry:
        raise ToolSearchError(f"the registry already has a tool named {search_tool['name']!r}, "
                              "the search tool's name; rename one")
    tools = [search_tool]
    for tool in registry:
        entry: dict[str, Any] = {"name": tool.name, "description": tool.description,
                                 "input_schema": _input_schema(tool)}
        if tool.name in cache_control:
            if tool.name not in loaded:
                raise ToolSearchError(
                    f"cache_control on {tool.name!r}, which is deferred: the API rejects "
                    "cache_control on deferred tools; put it on a loaded tool (selected or "
                    "always-include)")
            entry["cache_control"] = dict(cache_control[tool.name])
        if tool.name not in loaded:
            entry["defer_loading"] = True
        tools.append(entry)
    check_tools(tools, search_name=search_tool["name"])
    if validate:
        validate_tools(tools, search_name=search_tool["name"])
    return tools


def check_tools(tools: Sequence[Mapping[str, Any]], *,
                search_name: str = CUSTOM_SEARCH_NAME) -> None:
    """Refuse, with a clear :class:`ToolSearchError`, the deferral rules the API enforces.

    ``search_name`` names a client-side search tool, if the request uses one.
    """
    names = [t.get("name") for t in tools]
    for name in names:
        if names.count(name) > 1:
            raise ToolSearchError(f"tool name {name!r} appears twice in tools")
    deferred = [t for t in tools if t.get("defer_loading")]
    if tools and len(deferred) == len(tools):
        raise ToolSearchError("every tool is deferred: the API needs at least one tool loaded "
                              "(the tool search tool must never be deferred)")
    for t in tools:
        if t.get("type") in {s["type"] for s in SEARCH_TOOLS.values()} and t.get("defer_loading"):
            raise ToolSearchError(f"the search tool {t['name']!r} is deferred; it must be loaded")
        if t.get("defer_loading") and t.get("cache_control") is not None:
            raise ToolSearchError(f"cache_control on deferred tool {t['name']!r}: the API "
                                  "rejects it; cache a loaded tool instead")
    if deferred and not any(_is_search_tool(t, search_name) for t in tools):
        raise ToolSearchError("deferred tools but no search tool: nothing could ever load them")
    if len(deferred) > MAX_DEFERRED:
        raise ToolSearchError(f"{len(deferred)} deferred tools; the API allows at most "
                              f"{MAX_DEFERRED:,}")


def _is_search_tool(tool: Mapping[str, Any], search_name: str) -> bool:
    if tool.get("type") in {s["type"] for s in SEARCH_TOOLS.values()}:
        return True
    return tool.get("name") == search_name and not tool.get("defer_loading")


def _names(registry: Registry, names: Iterable[str], what: str) -> frozenset[str]:
    names = frozenset([names] if isinstance(names, str) else names)
    for name in sorted(names):
        if name not in registry:
            raise ToolSearchError(f"{what} names {name!r}, which is not in the registry"
                                  f"{suggest_names(name, registry.names)}")
    return names


def _input_schema(tool: Tool) -> dict[str, Any]:
    if tool.parameters is None:
        return {"type": "object", "properties": {}}
    return dict(tool.parameters)


def describe_tools(tools: Sequence[Mapping[str, Any]]):
    """A pandas DataFrame, one row per ``tools`` entry: ``name``, ``kind`` (``"search"`` or
    ``"custom"``), ``deferred`` and ``definition_chars`` (compact JSON of the entry: what a
    loaded definition costs, and what a deferred one costs once a search loads it)."""
    import json

    import pandas as pd
    rows = [{"name": t.get("name"),
             "kind": "search" if t.get("type") in {s["type"] for s in SEARCH_TOOLS.values()}
             else "custom",
             "deferred": bool(t.get("defer_loading", False)),
             "definition_chars": len(json.dumps(t, separators=(",", ":"), sort_keys=True))}
            for t in tools]
    return pd.DataFrame(rows, columns=["name", "kind", "deferred", "definition_chars"])


# --------------------------------------------------------------------------------------------
# client-side search


class ToolSearchHandler:
    """Answers a client-side search tool's calls with a toolsel scorer over the deferred tools.

    Parameters
    ----------
    registry : Registry or sequence of Tool
        The registry the ``tools`` array was built from.
    tools : list of dict
        The request's ``tools`` (from :func:`build_tools` with ``search="custom"``). Only its
        deferred tools are searched, so every ``tool_reference`` names a tool the request
        defines, as the API requires.
    scorer : str or Scorer
        Any toolsel scorer (``"bm25"``, ``"jaccard"``, ``"embedding"``, ...).
    limit : int
        Default number of tools a search returns (the model may pass ``limit``).
    """

    def __init__(self, registry: Sequence[Tool], tools: Sequence[Mapping[str, Any]], *,
                 scorer: Any = "bm25", limit: int = 5, name: str = CUSTOM_SEARCH_NAME,
                 **scorer_params: Any):
        registry = registry if isinstance(registry, Registry) else Registry(registry)
        deferred = [t["name"] for t in tools if t.get("defer_loading")]
        if not deferred:
            raise ToolSearchError("no deferred tools in tools: nothing to search")
        if name not in {t.get("name") for t in tools}:
            raise ToolSearchError(f"tools has no search tool named {name!r}")
        _names(registry, deferred, "tools")
        self.name = name
        self.limit = int(limit)
        self.selector = Selector(Registry([registry.get(n) for n in deferred]), scorer,
                                 top_k=0, always_include=(), **scorer_params)

    def search(self, query: str, limit: int | None = None) -> list[str]:
        """Names of up to ``limit`` deferred tools scoring above zero, best first."""
        return [t.name for t in self.selector.search(query, limit or self.limit)]

    def __call__(self, tool_use: Any) -> dict[str, Any]:
        """The ``tool_result`` block answering one ``tool_use`` of the search tool.

        ``tool_use`` is the SDK's ``ToolUseBlock`` or its dict form (``id``, ``name``,
        ``input``). Hits come back as ``tool_reference`` blocks; no hit is a text result.
        """
        block = tool_use.model_dump() if hasattr(tool_use, "model_dump") else dict(tool_use)
        if block.get("name") != self.name:
            raise ToolSearchError(f"tool_use is for {block.get('name')!r}, not the search tool "
                                  f"{self.name!r}")
        args = block.get("input") or {}
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return {"type": "tool_result", "tool_use_id": block["id"], "is_error": True,
                    "content": "input 'query' must be a non-empty string"}
        limit = args.get("limit", self.limit)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            limit = self.limit
        hits = self.search(query, limit)
        content: list[dict[str, Any]]
        if hits:
            content = [{"type": "tool_reference", "tool_name": name} for name in hits]
        else:
            content = [{"type": "text", "text": f"No tool matches {query!r}; try other words."}]
        return {"type": "tool_result", "tool_use_id": block["id"], "content": content}


# --------------------------------------------------------------------------------------------
# offline validation against the SDK's own types


def _require_sdk():
    if _sdk is None:
        raise ImportError("validating against the Anthropic SDK needs it: pip install "
                          "'toolsel[anthropic]'")
    return _sdk


def _typed_dict_keys(cls: type) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(cls.__required_keys__), frozenset(cls.__required_keys__ |
                                                       cls.__optional_keys__)


def _check_typed_dict(value: Mapping[str, Any], cls: type, where: str) -> None:
    required, allowed = _typed_dict_keys(cls)
    missing = sorted(required - set(value))
    if missing:
        raise ToolSearchError(f"{where}: missing {missing[0]!r} required by the SDK's "
                              f"{cls.__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ToolSearchError(f"{where}: key {unknown[0]!r} is not in the SDK's {cls.__name__}")
    try:
        TypeAdapter(cls).validate_python(dict(value), strict=True)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ToolSearchError(f"{where}: field {field!r}: {err['msg']} (SDK type "
                              f"{cls.__name__})") from None


def sdk_type_for(tool: Mapping[str, Any]) -> type:
    """The SDK TypedDict a ``tools`` entry must match (custom tool or a search tool)."""
    sdk = _require_sdk()
    kind = tool.get("type")
    if kind in ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25"):
        return sdk.ToolSearchToolBm25_20251119Param
    if kind in ("tool_search_tool_regex_20251119", "tool_search_tool_regex"):
        return sdk.ToolSearchToolRegex20251119Param
    if kind in (None, "custom"):
        return sdk.ToolParam
    raise ToolSearchError(f"tool {tool.get('name')!r}: type {kind!r} is not one toolsel builds")


def validate_tools(tools: Sequence[Mapping[str, Any]], *,
                   search_name: str = CUSTOM_SEARCH_NAME) -> None:
    """Check each entry against the SDK type it claims to be (keys and value types), then
    the deferral rules (:func:`check_tools`)."""
    for i, tool in enumerate(tools):
        _check_typed_dict(tool, sdk_type_for(tool), f"tools[{i}] ({tool.get('name')!r})")
    check_tools(tools, search_name=search_name)


def validate_tool_result(block: Mapping[str, Any]) -> None:
    """Check a ``tool_result`` block (and its content blocks) against the SDK's types."""
    sdk = _require_sdk()
    _check_typed_dict(block, sdk.ToolResultBlockParam, "tool_result")
    content = block.get("content")
    if isinstance(content, list):
        kinds = {"tool_reference": sdk.ToolReferenceBlockParam, "text": sdk.TextBlockParam}
        for i, item in enumerate(content):
            cls = kinds.get(item.get("type"))
            if cls is None:
                raise ToolSearchError(f"tool_result content[{i}]: unexpected type "
                                      f"{item.get('type')!r}")
            _check_typed_dict(item, cls, f"tool_result content[{i}]")

