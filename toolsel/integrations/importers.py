"""Bring your own registry: import tools from MCP, OpenAI, Anthropic and LangChain definitions.

Every stack exposes at least a name and a description (plus a JSON Schema), so each importer
maps its format onto :class:`~toolsel.data.Tool` and validates through
:func:`~toolsel.data.tool_from_record`; a bad entry raises :class:`~toolsel.data.DataError`
naming the file, the entry (``item 3 (tool 'x')``) and the field.

Accepted inputs
---------------
``mcp``
    A ``tools/list`` result: ``{"tools": [...]}``, the JSON-RPC response around it
    (``{"jsonrpc": "2.0", "id": 1, "result": {"tools": [...]}}``) or a bare array. Each tool
    has ``name``, ``description``, ``inputSchema``; ``title``, ``annotations``,
    ``outputSchema`` and ``_meta`` are kept as metadata. The server name comes from
    ``--server``, else a top-level ``"server"`` string or ``serverInfo.name``, else the file
    stem. A file of several servers, as MCP benchmarks and catalogs publish them, is read as
    one server per entry (:func:`server_list`): a list of ``{"name": ..., "tools": [...]}``
    (or ``{..., "tools": {"<server>": {"tools": [...]}}}``), the same under ``servers``, or
    an object mapping server names to ``{"tools": [...]}``.
``openai``
    A tools array in the Chat Completions form ``{"type": "function", "function": {...}}`` or
    the flat Responses form ``{"type": "function", "name": ..., "parameters": ...}`` (or a
    request body holding it under ``tools``).
``anthropic``
    A Messages API tools array: ``name``, ``description``, ``input_schema``.
LangChain
    :func:`from_langchain` takes tool objects (or functions) and reads each one's name,
    description and argument schema as LangChain itself converts it for a model.

Merging several files (servers)
-------------------------------
Names that are unique across all servers are kept as they are. A name two or more servers
share is qualified on *every* server that has it as ``{server}__{name}`` (e.g.
``github__create_issue``), and the original name is kept as ``original_name`` metadata. Two
underscores, not a dot, because OpenAI and Anthropic only accept ``[a-zA-Z0-9_-]`` in tool
names: a merged registry stays sendable to both APIs as it is.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data import (DataError, Registry, Tool, loads_json, check_name_syntax, read_records,
                    read_text, tool_from_record)
from .schemas import SchemaNormalizer

__all__ = ["FORMATS", "TOOL_FORMATS", "ToolFormat", "read_tool_file", "read_json_or_none",
           "server_list", "read_server_list", "refuse_server_name",
           "SEPARATOR", "from_mcp", "from_openai", "from_anthropic",
           "from_langchain", "merge_servers", "server_prefix", "import_files", "write_registry",
           "MissingDescriptionWarning", "fallback_description"]

#: Joins a server name and a tool name when two servers define the same tool name.
SEPARATOR = "__"

# MCP keys kept as metadata, under these names
_MCP_METADATA = {"title": "title", "annotations": "annotations", "outputSchema": "output_schema",
                 "_meta": "mcp_meta", "icons": "icons"}


def _where(loc: str | None, name: Any) -> str:
    if not (isinstance(name, str) and name):
        return loc or "entry"
    return f"{loc} (tool {name!r})" if loc else f"tool {name!r}"


def _require_mapping(entry: Any, *, path, loc) -> Mapping[str, Any]:
    if not isinstance(entry, Mapping):
        raise DataError(f"expected a tool object, got {type(entry).__name__}", path=path,
                        location=loc)
    return entry


def _description(entry: Mapping[str, Any], *, fmt: str, path, loc) -> Any:
    """The description, with a hint when a format that allows omitting it left it out."""
    tool_from_record({"name": entry.get("name"), "description": "-"}, path=path, loc=loc)
    value = entry.get("description")
    if value is None or (isinstance(value, str) and not value.strip()):
        raise DataError(f"missing or empty; {fmt} allows tools without a description but "
                        "toolsel scores name + description, so write one",
                        path=path, location=_where(loc, entry.get("name")), field="description")
    return value


def _normalized(rec: dict[str, Any], key: str, normalizer: SchemaNormalizer | None, *,
                path, loc) -> dict[str, Any]:
    """``rec`` with its schema under ``key`` mapped to JSON Schema by ``normalizer``."""
    if normalizer is not None and isinstance(rec.get(key), Mapping):
        rec[key] = normalizer.schema(rec[key], tool=str(rec.get("name")), path=path,
                                     loc=_where(loc, rec.get("name")), field=key)
    return rec


def _own_normalizer(normalizer: SchemaNormalizer | None, strict: bool
                    ) -> tuple[SchemaNormalizer, bool]:
    """The caller's normalizer, or a new one this call warns with (``True``)."""
    return (normalizer, False) if normalizer is not None else (SchemaNormalizer(strict=strict),
                                                                True)


class MissingDescriptionWarning(UserWarning):
    """MCP tools without a description were imported with a fallback text."""


def fallback_description(entry: Mapping[str, Any]) -> tuple[str, str]:
    """The text that stands in for a missing MCP description, and where it came from.

    The tool's ``title`` when it has one (``("Create issue", "title")``), else its name split
    into words (``github_create_issue`` → ``("github create issue", "name")``).
    """
    from ..text import split_identifier
    title = entry.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip(), "title"
    words = split_identifier(str(entry.get("name", "")))
    return " ".join(words) or str(entry.get("name")), "name"


# --------------------------------------------------------------------------------------------
# one format each


def from_mcp(tools: Iterable[Any], *, server: str | None = None, path=None,
             strict: bool = False, normalizer: SchemaNormalizer | None = None) -> list[Tool]:
    """Tools of an MCP ``tools/list`` result (the list under ``tools``, as dicts).

    ``server`` is stored as metadata (the tool's domain). Also accepts ``mcp.types.Tool``
    objects from a live ``ClientSession.list_tools()``. With the MCP SDK installed
    (``toolsel[mcp]``) every entry is also checked against ``mcp.types.Tool``.

    MCP allows a tool without a description; toolsel scores name + description, so such a
    tool gets :func:`fallback_description` (its ``title``, else its name split into words),
    ``description_fallback`` metadata saying which, and one :class:`MissingDescriptionWarning`
    for the list. With ``strict`` a missing description raises :class:`DataError`. Type names
    that are not JSON Schema (``dict``, ``float``...) are mapped by a
    :class:`~toolsel.integrations.schemas.SchemaNormalizer` (one warning per kind; ``strict``
    refuses them).
    """
    normalizer, own = _own_normalizer(normalizer, strict)
    out = []
    fallbacks: list[str] = []
    for i, entry in enumerate(_as_list(tools, path=path)):
        loc = f"item {i + 1}"
        if hasattr(entry, "model_dump"):  # mcp.types.Tool (pydantic) from the SDK
            entry = entry.model_dump(mode="json", by_alias=True, exclude_none=True)
        entry = _require_mapping(entry, path=path, loc=loc)
        _check_with_mcp_sdk(entry, path=path, loc=loc)
        value = entry.get("description")
        if not strict and (value is None or (isinstance(value, str) and not value.strip())):
            tool_from_record({"name": entry.get("name"), "description": "-"}, path=path, loc=loc)
            description, source = fallback_description(entry)
            fallbacks.append(f"{entry.get('name')!r} ({loc})")
        else:
            description = _description(entry, fmt="MCP", path=path, loc=loc)
            source = None
        rec: dict[str, Any] = {"name": entry.get("name"), "description": description}
        if source is not None:
            rec["description_fallback"] = source
        if "inputSchema" not in entry:
            raise DataError("missing; an MCP tool needs an object schema (use "
                            "{\"type\": \"object\"} for no arguments)", path=path,
                            location=_where(loc, entry.get("name")), field="inputSchema")
        rec["inputSchema"] = entry["inputSchema"]
        if server is not None:
            rec["server"] = server
        for key, meta_key in _MCP_METADATA.items():
            if entry.get(key) is not None:
                rec[meta_key] = entry[key]
        extra = sorted(set(entry) - {"name", "description", "inputSchema", *_MCP_METADATA})
        if extra:
            rec["mcp_extra"] = {k: entry[k] for k in extra}
        _normalized(rec, "inputSchema", normalizer, path=path, loc=loc)
        out.append(tool_from_record(rec, path=path, loc=loc))
    if own:
        normalizer.warn("" if path is None else str(path))
    if fallbacks:
        where = f"{path}: " if path is not None else ""
        more = f" and {len(fallbacks) - 5} more" if len(fallbacks) > 5 else ""
        warnings.warn(f"{where}{len(fallbacks)} MCP tool(s) have no description: "
                      f"{', '.join(fallbacks[:5])}{more}; imported with their title, else their "
                      "name split into words, as description (metadata description_fallback); "
                      "write real descriptions for better selection (--strict refuses them)",
                      MissingDescriptionWarning, stacklevel=2)
    return out


def _check_with_mcp_sdk(entry: Mapping[str, Any], *, path, loc) -> None:
    """Validate one tool against ``mcp.types.Tool`` when the MCP SDK is installed (``toolsel[mcp]``)."""
    try:
        from mcp.types import Tool as McpTool
        from pydantic import ValidationError
    except ImportError:
        return
    try:
        McpTool.model_validate(dict(entry))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        raise DataError(f"not a valid MCP tool: {err['msg']}", path=path,
                        location=_where(loc, entry.get("name")), field=field) from None


def from_openai(tools: Iterable[Any], *, path=None, strict: bool = False,
                normalizer: SchemaNormalizer | None = None) -> list[Tool]:
    """Tools of an OpenAI tools array, Chat Completions or flat Responses form.

    Keys an OpenAI function does not have are left out with one warning per key (``strict``:
    refused), except a likely misspelling of one it has (``paramters``), which is refused;
    type names that are not JSON Schema are mapped (see
    :class:`~toolsel.integrations.schemas.SchemaNormalizer`).
    """
    normalizer, own = _own_normalizer(normalizer, strict)
    out = []
    for i, entry in enumerate(_as_list(tools, path=path)):
        loc = f"item {i + 1}"
        entry = _require_mapping(entry, path=path, loc=loc)
        kind = entry.get("type", "function")
        if kind != "function":
            raise DataError(f"type {kind!r} is a built-in tool, not a function; only function "
                            "tools can be imported", path=path,
                            location=_where(loc, entry.get("name")), field="type")
        if "function" in entry:  # Chat Completions: {"type": "function", "function": {...}}
            fn = entry["function"]
            if not isinstance(fn, Mapping):
                raise DataError(f"expected an object with name, description and parameters, "
                                f"got {type(fn).__name__}", path=path, location=loc,
                                field="function")
            if "name" in entry:
                raise DataError("has both 'function' and a top-level 'name'; use the Chat "
                                "Completions or the Responses form, not both", path=path,
                                location=_where(loc, entry.get("name")), field="name")
        else:  # Responses: {"type": "function", "name": ..., "parameters": ...}
            fn = entry
        allowed = ("name", "description", "parameters", "strict", "type")
        _check_keys(fn, allowed=allowed, path=path, loc=loc, what="an OpenAI function",
                    typos_only=True)
        fn = normalizer.drop_keys(fn, allowed, tool=str(fn.get("name")), path=path,
                                  loc=_where(loc, fn.get("name")))
        rec = {"name": fn.get("name"),
               "description": _description(fn, fmt="OpenAI", path=path, loc=loc)}
        if fn.get("parameters") is not None:
            rec["parameters"] = fn["parameters"]
        if "strict" in fn:
            rec["strict"] = fn["strict"]
        _normalized(rec, "parameters", normalizer, path=path, loc=loc)
        out.append(tool_from_record(rec, path=path, loc=loc))
    if own:
        normalizer.warn("" if path is None else str(path))
    return out


def from_anthropic(tools: Iterable[Any], *, path=None, strict: bool = False,
                   normalizer: SchemaNormalizer | None = None) -> list[Tool]:
    """Tools of an Anthropic Messages API tools array (``name``, ``description``, ``input_schema``).

    Unknown keys and non-JSON-Schema type names as in :func:`from_openai`.
    """
    normalizer, own = _own_normalizer(normalizer, strict)
    out = []
    for i, entry in enumerate(_as_list(tools, path=path)):
        loc = f"item {i + 1}"
        entry = _require_mapping(entry, path=path, loc=loc)
        kind = entry.get("type", "custom")
        if kind not in ("custom", None):
            raise DataError(f"type {kind!r} is a server or client tool of the API, not a custom "
                            "tool; only custom tools can be imported", path=path,
                            location=_where(loc, entry.get("name")), field="type")
        if "input_schema" not in entry:
            raise DataError("missing; an Anthropic tool needs an object schema", path=path,
                            location=_where(loc, entry.get("name")), field="input_schema")
        allowed = ("name", "description", "input_schema", "type", "cache_control",
                   "defer_loading", "strict", "input_examples", "allowed_callers",
                   "eager_input_streaming")
        _check_keys(entry, allowed=allowed, path=path, loc=loc, what="an Anthropic tool",
                    typos_only=True)
        entry = normalizer.drop_keys(entry, allowed, tool=str(entry.get("name")), path=path,
                                     loc=_where(loc, entry.get("name")))
        rec = {k: v for k, v in entry.items() if k != "type"}
        rec["description"] = _description(entry, fmt="Anthropic", path=path, loc=loc)
        _normalized(rec, "input_schema", normalizer, path=path, loc=loc)
        out.append(tool_from_record(rec, path=path, loc=loc))
    if own:
        normalizer.warn("" if path is None else str(path))
    return out


def from_langchain(tools: Iterable[Any]) -> list[Tool]:
    """Tools from LangChain tool objects (``BaseTool``, ``@tool`` functions, plain functions).

    The schema is the one LangChain sends a model (injected arguments such as a
    ``ToolRuntime`` are not in it). Needs ``langchain-core`` (``pip install toolsel[langchain]``).
    """
    try:
        from langchain_core.utils.function_calling import convert_to_openai_tool
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("from_langchain needs langchain-core: pip install "
                          "'toolsel[langchain]'") from exc
    out = []
    for i, obj in enumerate(tools):
        name = getattr(obj, "name", None) or getattr(obj, "__name__", None)
        loc = f"item {i + 1}"
        try:
            fn = convert_to_openai_tool(obj)["function"]
        except Exception as exc:  # LangChain raises several types for unconvertible input
            raise DataError(f"LangChain could not convert it to a tool schema: {exc}",
                            location=_where(loc, name)) from exc
        rec = {"name": fn.get("name"),
               "description": _description(fn, fmt="LangChain", path=None, loc=loc),
               "parameters": fn.get("parameters") or {"type": "object", "properties": {}}}
        out.append(tool_from_record(rec, loc=loc))
    return out


def _as_list(tools: Any, *, path) -> list[Any]:
    if isinstance(tools, Mapping) or isinstance(tools, (str, bytes)):
        raise DataError("expected a list of tools", path=path)
    return list(tools)


def _check_keys(entry: Mapping[str, Any], *, allowed: Sequence[str], path, loc, what: str,
                typos_only: bool = False):
    """Refuse unknown keys; with ``typos_only`` only those that look like a misspelling of an
    allowed key (``paramters``), whose content would otherwise be lost."""
    import difflib
    unknown = sorted(set(entry) - set(allowed))
    for key in unknown:
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.8)
        if typos_only and not close:
            continue
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise DataError(f"unknown key for {what} (expected some of {', '.join(allowed)}){hint}",
                        path=path, location=_where(loc, entry.get("name")), field=key)


# --------------------------------------------------------------------------------------------
# merging and files


def server_prefix(server: str, *, strict: bool = False) -> str:
    """The prefix a server gives its clashing tool names: the server name with every run of
    characters the APIs refuse in a name (anything but letters, digits, ``_``, ``-``)
    replaced by ``_`` (``GitHub MCP Server`` → ``GitHub_MCP_Server``). With ``strict`` such a
    server name is refused instead (:class:`DataError` saying which name to give)."""
    import re
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", server).strip("_") or "server"
    if strict and slug != server:
        raise DataError(f"server name {server!r} would make tool names the OpenAI and "
                        "Anthropic APIs refuse; name the server with --server (e.g. "
                        f"--server {slug})", location=f"server {server!r}", field="server")
    return slug


def merge_servers(groups: Sequence[tuple[str, Sequence[Tool]]], *,
                  separator: str = SEPARATOR, strict: bool = False) -> Registry:
    """One registry from several servers' tools, qualifying the names that clash.

    ``groups`` is ``[(server, tools), ...]``, in the order the registry keeps. A name defined
    by two or more servers becomes ``{prefix}{separator}{name}`` on every one of them, the
    prefix being :func:`server_prefix` of the server (``strict``: a server name that is not
    already a valid prefix is refused), with ``original_name`` metadata; all other names are
    kept. A name clash inside one server, a server listed twice, or a qualified name that
    collides with an existing one is an error.
    """
    servers = [s for s, _ in groups]
    for s in servers:
        if servers.count(s) > 1:
            raise DataError(f"server {s!r} is given twice; name each file's server with "
                            "--server (one per file)", field="server")
    owners: dict[str, list[str]] = {}
    for server, tools in groups:
        seen: set[str] = set()
        for tool in tools:
            if tool.name in seen:
                raise DataError(f"duplicate tool name {tool.name!r} within server {server!r}",
                                location=f"server {server!r}", field="name")
            seen.add(tool.name)
            owners.setdefault(tool.name, []).append(server)
    merged: list[Tool] = []
    origin: dict[str, str] = {}
    for server, tools in groups:
        for tool in tools:
            name = tool.name
            metadata = dict(tool.metadata)
            if len(owners[name]) > 1:
                name = f"{server_prefix(server, strict=strict)}{separator}{tool.name}"
                metadata["original_name"] = tool.name
                metadata.setdefault("server", server)
            if name in origin:
                raise DataError(f"qualified name {name!r} from server {server!r} collides "
                                f"with a tool of server {origin[name]!r}; rename one",
                                location=f"server {server!r}", field="name")
            origin[name] = server
            merged.append(Tool(name, tool.description, tool.parameters, metadata))
    return Registry(merged)


def read_json_or_none(path: Path) -> Any:
    """The parsed JSON document in ``path`` (``None`` for JSONL), with clear errors."""
    text = read_text(path)  # DataError for a folder, an unreadable or oversized file
    try:
        return loads_json(text)
    except (ValueError, RecursionError):
        return None  # JSONL or broken: read_records reports it with a line number


def _server_name(doc: Any, path: Path) -> str:
    if isinstance(doc, Mapping):
        if isinstance(doc.get("server"), str) and doc["server"].strip():
            return doc["server"].strip()
        info = doc.get("serverInfo")
        if isinstance(info, Mapping) and isinstance(info.get("name"), str):
            return info["name"]
    return path.stem


def import_files(paths: Sequence[str | Path], fmt: str, *,
                 servers: Sequence[str] | None = None, strict: bool = False) -> Registry:
    """Read tool files of one format (see :data:`FORMATS`) into one validated registry.

    Parameters
    ----------
    paths : list of path
        One file per server (MCP) or tools array (OpenAI, Anthropic).
    fmt : {"mcp", "openai", "anthropic"}
    servers : list of str, optional
        A server name per file; for MCP the default is the file's ``server`` /
        ``serverInfo.name`` or the file stem. For OpenAI and Anthropic, names given here are
        stored as ``server`` metadata, and the file stem qualifies clashing names otherwise.
    strict : bool
        Refuse MCP tools without a description (default: a fallback text and a
        :class:`MissingDescriptionWarning`), and names the OpenAI or Anthropic APIs refuse
        (default: a :class:`~toolsel.data.ToolNameWarning` for names every API refuses).

    A paged ``tools/list`` (non-null ``nextCursor``) is refused: it lacks the other pages.
    """
    if fmt not in TOOL_FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(TOOL_FORMATS)}")
    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError("no input files")
    if servers and len(servers) != len(paths):
        raise ValueError(f"got {len(servers)} --server names for {len(paths)} files; give one "
                         "per file, in the same order")
    groups: list[tuple[str, list[Tool]]] = []
    for i, path in enumerate(paths):
        listed = read_server_list(path, fmt, given=servers[i] if servers else None,
                                  strict=strict)
        if listed is not None:  # several servers in one file: a group each
            groups.extend(listed[0])
            continue
        tools, server, _ = read_tool_file(path, fmt, servers[i] if servers else None,
                                          strict=strict)
        groups.append((server, tools))
    return merge_servers(groups, strict=strict)


def write_registry(registry: Iterable[Tool], path: str | Path) -> Path:
    """Write ``registry`` as a JSON array that :func:`~toolsel.data.load_registry` reads back.

    Atomic (:func:`toolsel.io.write_registry`): a temporary file with a unique name in the
    same folder, renamed over ``path``; created with the user's umask. Strict JSON: a NaN or
    Infinity in a schema raises :class:`ValueError` instead of writing a file no JSON reader
    accepts.
    """
    from ..io import write_registry as _write
    return _write(registry, path, jsonl=False)


# --------------------------------------------------------------------------------------------
# the table of tool-file formats


def _is_mcp(rec: Mapping[str, Any]) -> bool:
    return "inputSchema" in rec


def _is_anthropic(rec: Mapping[str, Any]) -> bool:
    return "input_schema" in rec


def _is_openai(rec: Mapping[str, Any]) -> bool:
    return rec.get("type") == "function" or "function" in rec or "parameters" in rec


@dataclass(frozen=True)
class ToolFormat:
    """A format of tool definitions: ``read`` (records → tools, as :func:`from_openai`),
    ``matches`` (whether one record looks like it: how ``toolsel import`` detects it, trying
    the formats in table order), ``help`` (one line for ``toolsel import --from``), and
    ``server_in_file`` (the file names its server, as MCP's ``serverInfo``; otherwise the
    file's stem does; a tools list whose first tool no format matches is this format's).
    Adding a format is its reader, one entry in :data:`TOOL_FORMATS`, and its tests."""

    name: str
    read: Callable[..., list[Tool]]
    matches: Callable[[Mapping[str, Any]], bool]
    help: str
    server_in_file: bool = False


#: Every tool-file format by name, in detection order; :func:`import_files`, ``toolsel
#: import`` and its format detection (:func:`toolsel.integrations.sources.import_formats`)
#: read this table.
TOOL_FORMATS: dict[str, ToolFormat] = {f.name: f for f in (
    ToolFormat("mcp", from_mcp, _is_mcp, "a tools/list result (inputSchema), or a list of "
               "servers each with its tools",
               server_in_file=True),
    ToolFormat("anthropic", from_anthropic, _is_anthropic, "a tools array (input_schema)"),
    ToolFormat("openai", from_openai, _is_openai, "a tools array (function, parameters)"),
)}
#: The names of the built-in tool-file formats (what :func:`import_files` takes).
FORMATS = tuple(TOOL_FORMATS)


def detect_tool_format(record: Any) -> str | None:
    """The first tool-file format of :data:`TOOL_FORMATS` a record looks like, or None."""
    if not isinstance(record, Mapping):
        return None
    return next((n for n, f in TOOL_FORMATS.items() if f.matches(record)), None)


# --------------------------------------------------------------------------------------------
# server lists: several servers' tools in one file, as MCP benchmarks and catalogs publish them

#: Keys naming a server in an entry of a server list, in order of preference.
_SERVER_NAME_KEYS = ("name", "server_name", "serverName", "server", "id", "title")
#: Keys under which a document keeps its servers (a list of entries or a name → entry object).
_SERVER_LIST_KEYS = ("servers", "mcpServers", "mcp_servers")
#: Keys of a tool definition: an object with one is a tool, not a server entry.
_TOOL_KEYS = ("inputSchema", "input_schema", "parameters", "function")

#: One server of a server list: its name, where it is in the file, its tool records and the
#: entry's category (``None`` when the entry has none).
ServerEntry = tuple[str, str, list[Any], "str | None"]


def _tool_list(value: Any) -> list[Any] | None:
    """A server's tools as catalogs write them: a list of tool objects, ``{"tools": [...]}``
    or a ``tools/list`` response around it; ``None`` for anything else."""
    if isinstance(value, Mapping):
        inner = value.get("result", value)
        value = inner.get("tools") if isinstance(inner, Mapping) else None
    if isinstance(value, list) and all(isinstance(t, Mapping) for t in value):
        return value
    return None


def _entry_name(entry: Mapping[str, Any]) -> str | None:
    for key in _SERVER_NAME_KEYS:
        if isinstance(entry.get(key), str) and entry[key].strip():
            return entry[key].strip()
    info = entry.get("serverInfo")
    if isinstance(info, Mapping) and isinstance(info.get("name"), str) and info["name"].strip():
        return info["name"].strip()
    return None


def _entry_servers(entry: Any, loc: str, default: str | None) -> list[ServerEntry] | None:
    """The servers of one entry of a server list (``None``: not a server entry). Its
    ``tools`` is the server's tool list, or an object naming its servers
    (``tools.<server>.tools[]``), each then named by its key."""
    if not isinstance(entry, Mapping) or "tools" not in entry or set(_TOOL_KEYS) & set(entry):
        return None
    category = entry.get("category") if isinstance(entry.get("category"), str) else None
    tools = entry["tools"]
    own = [] if tools is None or tools == {} else _tool_list(tools)
    if own is not None:
        name = _entry_name(entry) or default
        return [(name, loc, own, category)] if name else None
    if not isinstance(tools, Mapping):
        return None
    # a server whose listing failed ({"error": ...}, null) is a server without tools
    nested = {key: _tool_list(value) if value else [] for key, value in tools.items()}
    if any(v is None and not isinstance(tools[k], Mapping) for k, v in nested.items()):
        return None
    return [(str(key), f"{loc}, tools.{key}", value or [], category)
            for key, value in nested.items()]


def _many_servers(entries: Any, where: str) -> list[ServerEntry] | None:
    """The servers of a list of entries, or of a name → entry object; ``None`` unless every
    entry is a server entry."""
    if isinstance(entries, list) and entries:
        items = [(f"{where}item {i}", None, e) for i, e in enumerate(entries, start=1)]
    elif isinstance(entries, Mapping) and entries:
        items = [(f"{where}{k}", str(k), e) for k, e in entries.items()]
    else:
        return None
    out: list[ServerEntry] = []
    for loc, default, entry in items:
        found = _entry_servers(entry, loc, default)
        if found is None:
            return None
        out.extend(found)
    return out


def server_list(doc: Any) -> list[ServerEntry] | None:
    """The servers of a document holding several servers' tools, or ``None`` when it is not
    one. Accepted: a list of server entries (``{"name": ..., "tools": [...]}``, or
    ``{..., "tools": {"<server>": {"tools": [...]}}}`` as MCP benchmarks publish them), the
    same under ``servers`` (or ``mcpServers``), an object mapping server names to entries,
    and one entry whose ``tools`` maps server names to their tools. A server's tools may be a
    list, ``{"tools": [...]}`` or a ``tools/list`` response."""
    if isinstance(doc, list):
        found = _many_servers(doc, "")
        return found if found and any(tools for _, _, tools, _ in found) else None
    if not isinstance(doc, Mapping) or _tool_list(doc) is not None:
        return None  # a tools/list result of one server is not a server list
    found = next((_many_servers(doc[key], f"{key}.") for key in _SERVER_LIST_KEYS
                  if key in doc), None)
    if found is None and isinstance(doc.get("tools"), Mapping):
        found = _entry_servers(doc, "", None)
    if found is None:
        found = _many_servers(doc, "")
    return found if found and any(tools for _, _, tools, _ in found) else None


def _unique_servers(servers: list[ServerEntry], notes: list[str]) -> list[ServerEntry]:
    """The servers with one name each: a server listed again with the same tools is dropped,
    with other tools named ``{name}_2`` (``_3``...); each said in ``notes``."""
    out: list[ServerEntry] = []
    first: dict[str, ServerEntry] = {}
    for name, loc, tools, category in servers:
        if name in first and first[name][2] == tools:
            notes.append(f"server {name!r} is listed again at {loc} with the same tools "
                         f"(first at {first[name][1] or 'the top'}): read once")
            continue
        new, k = name, 1
        while new in first:
            k += 1
            new = f"{name}_{k}"
        if new != name:
            notes.append(f"server {name!r} is listed again at {loc} with other tools: "
                         f"named {new!r}")
        first[new] = (new, loc, tools, category)
        out.append(first[new])
    return out


def read_server_list(path: Path, fmt: str, *, given: str | None = None, strict: bool = False,
                     normalizer: SchemaNormalizer | None = None
                     ) -> tuple[list[tuple[str, list[Tool]]], list[str]] | None:
    """A server-list file (:func:`server_list`) as ``([(server, tools), ...], notes)``, each
    server's tools read by the format ``fmt`` (one group per server, as one file per server
    would be), or ``None`` when the file is not a server list. A server without tools is left
    out with a note; an error names the file, the server's place and the tool. A ``given``
    server name (``--server``) is refused: the file names its servers."""
    servers = server_list(read_json_or_none(path))
    if servers is None:
        return None
    refuse_server_name(path, given, len(servers))
    notes: list[str] = []
    groups: list[tuple[str, list[Tool]]] = []
    with warnings.catch_warnings(record=True) as caught:  # one warning for the file, below
        warnings.simplefilter("always", MissingDescriptionWarning)
        for name, loc, records, category in _unique_servers(servers, notes):
            if not records:
                notes.append(f"server {name!r} ({loc}) lists no tools: left out")
                continue
            tools = _server_tools(records, fmt, name, loc, category, path=path,
                                  strict=strict, normalizer=normalizer)
            groups.append((name, tools))
    for w in caught:
        if not issubclass(w.category, MissingDescriptionWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    fallback = [f"{t.name!r} (server {server!r})" for server, tools in groups for t in tools
                if "description_fallback" in t.metadata]
    if fallback:
        more = f" and {len(fallback) - 5} more" if len(fallback) > 5 else ""
        warnings.warn(f"{path}: {len(fallback)} MCP tool(s) have no description: "
                      f"{', '.join(fallback[:5])}{more}; imported with their title, else their "
                      "name split into words, as description (metadata description_fallback); "
                      "write real descriptions for better selection (--strict refuses them)",
                      MissingDescriptionWarning, stacklevel=2)
    return groups, notes


def refuse_server_name(path: Path, given: str | None, n_servers: int) -> None:
    """Refuse a ``--server`` name for a file that names its own servers."""
    if given:
        raise DataError(f"holds a list of {n_servers} servers, each named in the file; "
                        f"--server {given!r} cannot name them (give '' for this file, or "
                        "leave --server out)", path=path, field="server")


def _server_tools(records: list[Any], fmt: str, server: str, loc: str, category: str | None,
                  *, path: Path, strict: bool, normalizer: SchemaNormalizer | None
                  ) -> list[Tool]:
    """One server's tool records read by ``fmt``; errors located at the server's entry."""
    spec = TOOL_FORMATS[fmt]
    where = f"server {server!r} ({loc})" if loc else f"server {server!r}"
    try:
        tools = (spec.read(records, server=server, path=path, strict=strict,
                           normalizer=normalizer) if spec.server_in_file else
                 spec.read(records, path=path, strict=strict, normalizer=normalizer))
    except DataError as exc:
        raise DataError(exc.reason, path=path, location=f"{where}, {exc.location}"
                        if exc.location else where, field=exc.field) from None
    seen: dict[str, int] = {}
    for i, t in enumerate(tools, start=1):
        if t.name in seen:
            raise DataError(f"duplicate tool name {t.name!r} (first at tool {seen[t.name]})",
                            path=path, location=f"{where}, tool {i}", field="name")
        seen[t.name] = i
    check_name_syntax([(f"{where}, tool {i}", t.name) for i, t in enumerate(tools, start=1)],
                      path=path, strict=strict)
    extra = {"server": server, **({"category": category} if category else {})}
    return [Tool(t.name, t.description, t.parameters, {**t.metadata, **extra}) for t in tools]


def read_tool_file(path: Path, fmt: str, given: str | None, *, strict: bool = False,
                   normalizer: SchemaNormalizer | None = None
                   ) -> tuple[list[Tool], str, list[tuple[str, Any]]]:
    """One file of a tool format: its tools, its server name (``given``, else what the file
    or its name says) and its located records. A JSON-RPC error response, an empty file and a
    bad or duplicate name are :class:`DataError`\\ s naming the file."""
    spec = TOOL_FORMATS[fmt]
    doc = read_json_or_none(path)
    if isinstance(doc, Mapping) and "error" in doc and "result" not in doc:
        raise DataError("holds a JSON-RPC error response, not a tools/list result: "
                        f"{json.dumps(doc['error'])[:200]}", path=path, field="error")
    located = read_records(path)  # refuses one page of a paged tools/list, too
    records = [rec for _, rec in located]
    if not records:
        raise DataError("no tools in the file", path=path)
    if spec.server_in_file:
        server = given or _server_name(doc, path)
        tools = spec.read(records, server=server, path=path, strict=strict,
                          normalizer=normalizer)
    else:
        server = given or path.stem
        tools = spec.read(records, path=path, strict=strict, normalizer=normalizer)
        if given:
            tools = [Tool(t.name, t.description, t.parameters, {**t.metadata, "server": given})
                     for t in tools]
    seen: dict[str, str] = {}
    for (loc, _), t in zip(located, tools):
        if t.name in seen:
            raise DataError(f"duplicate tool name {t.name!r} (first at {seen[t.name]})",
                            path=path, location=loc, field="name")
        seen[t.name] = loc
    check_name_syntax([(loc, t.name) for (loc, _), t in zip(located, tools)], path=path,
                      strict=strict)
    return tools, server, located
