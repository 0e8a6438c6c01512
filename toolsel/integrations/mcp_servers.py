"""Live MCP servers: how the user names them, and reading their tools over MCP.

A server is given one of three ways (:func:`server_specs`):

- a **command line** (``python -m mcp_server_time``): started as a child process and spoken to
  over its standard input and output (MCP's stdio transport);
- an **http(s) URL** (``http://127.0.0.1:8000/mcp``): MCP's streamable HTTP transport;
- a **client config file** in the Claude Desktop shape, ``{"mcpServers": {"<name>":
  {"command": ..., "args": [...], "env": {...}, "cwd": ...} | {"url": ..., "headers":
  {...}}}}`` (VS Code's ``"servers"`` key is read the same way; an entry with
  ``"disabled": true`` is left out with a note).

A child process gets the MCP SDK's default environment (``HOME``, ``PATH``, ``USER``...,
nothing else: no API key leaks to a server by accident) plus the ``env`` its config entry
gives. Everything MCP is the official SDK's (``mcp``, the ``toolsel[mcp]`` extra), imported
only when a server is read.

:func:`list_servers` connects to every server at once, each within one ``timeout`` (start,
handshake and every page of ``tools/list``), and returns per server either its tools or one
line saying why it gave none (:class:`ServerListing`); one server failing never stops the
others.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data import DataError
from ..visible import visible

__all__ = ["ServerSpec", "ServerListing", "server_specs", "read_client_config",
           "is_client_config", "list_servers", "open_client", "failure_reason", "stderr_tail",
           "DEFAULT_TIMEOUT", "MAX_PAGES", "require_sdk", "describe_listing", "listing_name",
           "list_tools_of"]

#: Seconds a server has to start, answer the handshake and list its tools (``--timeout``).
DEFAULT_TIMEOUT = 20.0
#: Pages of ``tools/list`` read from one server at most (a server whose cursor never ends).
MAX_PAGES = 1000
#: The keys of a client config that hold its servers (Claude Desktop's, VS Code's).
CONFIG_KEYS = ("mcpServers", "servers")
#: Config ``type`` values that mean streamable HTTP (clients write it several ways).
_HTTP_TYPES = ("http", "streamable-http", "streamableHttp", "streamable_http")
_URL = re.compile(r"^https?://", re.IGNORECASE)


def require_sdk() -> None:
    """Raise a clear :class:`ImportError` when the MCP SDK (``toolsel[mcp]``) is missing."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ImportError("reading live MCP servers and `toolsel serve` need the MCP SDK: "
                          "pip install 'toolsel[mcp]'") from None


@dataclass(frozen=True)
class ServerSpec:
    """One server to connect to: a command line (``command``, ``args``, ``env``, ``cwd``) or a
    ``url``; ``name`` is the name given for it (``--server``, the config's key), else ``None``
    (then the server's own ``serverInfo.name`` names it); ``shown`` is how messages name it."""

    shown: str
    name: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None

    @property
    def transport(self) -> str:
        return "streamable HTTP" if self.url is not None else "stdio"


@dataclass
class ServerListing:
    """What one server gave: its name and tools (``tools``: ``tools/list`` entries as JSON
    objects), or ``error``: one line saying why it gave none."""

    spec: ServerSpec
    name: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    version: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------------------------
# naming servers


def _looks_like_file(text: str) -> bool:
    return os.path.isfile(text) or (text.lower().endswith(".json") and " " not in text)


def server_specs(inputs: Sequence[str], names: Sequence[str] | None = None
                 ) -> tuple[list[ServerSpec], list[str]]:
    """The servers of ``inputs`` (each a URL, a client config file or a command line; see the
    module docstring), and notes (config entries left out). ``names``: one name per input
    (``--server``; ``''`` keeps the default); a config file names its own servers, so a name
    given for one is refused. Raises :class:`DataError` naming the input for an empty command
    line or a bad config file."""
    if names and len(names) != len(inputs):
        raise ValueError(f"got {len(names)} --server names for {len(inputs)} servers; give one "
                         "per server, in the same order")
    specs: list[ServerSpec] = []
    notes: list[str] = []
    for i, text in enumerate(inputs):
        given = (names[i] if names else None) or None
        if _URL.match(text):
            specs.append(ServerSpec(shown=text, name=given, url=text))
        elif _looks_like_file(text):
            if given:
                raise DataError(f"is a client config naming its own servers; --server {given!r} "
                                "cannot name them (give '' for it, or leave --server out)",
                                path=text, field="server")
            found, skipped = read_client_config(Path(text))
            specs.extend(found)
            notes.extend(skipped)
        else:
            try:
                argv = shlex.split(text)
            except ValueError as exc:
                raise DataError(f"cannot split the command line: {exc}", path=text) from None
            if not argv:
                raise DataError("empty command line; give the command that starts an MCP "
                                "server (e.g. 'python -m mcp_server_time'), a URL or a config "
                                "file", path=repr(text))
            specs.append(ServerSpec(shown=text, name=given, command=argv[0],
                                    args=tuple(argv[1:])))
    return specs, notes


def is_client_config(doc: Any) -> bool:
    """Whether ``doc`` is an MCP client config: ``mcpServers`` (or ``servers``) mapping names
    to entries that start a server (``command``) or name one (``url``), no tools listed."""
    if not isinstance(doc, Mapping):
        return False
    servers = next((doc[k] for k in CONFIG_KEYS if isinstance(doc.get(k), Mapping)), None)
    return bool(servers) and all(
        isinstance(e, Mapping) and ("command" in e or "url" in e) and "tools" not in e
        for e in servers.values())


def _strings(value: Any, *, path: Path, loc: str, key: str, kind: str) -> Any:
    """A config field checked: a list of strings (``kind='list'``) or a string → string
    object (``'object'``); ``None`` stays ``None``."""
    if value is None:
        return None
    if kind == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError("expected a list of strings", path=path, location=loc, field=key)
        return tuple(value)
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in value.items()):
        raise DataError("expected an object of strings (name: value)", path=path, location=loc,
                        field=key)
    return dict(value)


def _config_entry(name: str, entry: Any, path: Path, key: str) -> ServerSpec:
    loc = f"{key}.{name}"
    if not isinstance(entry, Mapping):
        raise DataError(f"expected an object with 'command' or 'url', got "
                        f"{type(entry).__name__}", path=path, location=loc)
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and kind not in ("stdio", *_HTTP_TYPES):
        raise DataError(f"transport {kind!r} is not read; toolsel speaks stdio and streamable "
                        "HTTP ('http'): give the server's streamable HTTP URL", path=path,
                        location=loc, field="type")
    if "url" in entry:
        url = entry["url"]
        if not isinstance(url, str) or not _URL.match(url):
            raise DataError("expected an http(s) URL", path=path, location=loc, field="url")
        headers = _strings(entry.get("headers"), path=path, loc=loc, key="headers",
                           kind="object")
        return ServerSpec(shown=f"{name} ({url})", name=name, url=url, headers=headers)
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise DataError("expected the command that starts the server (a non-empty string), "
                        "or a 'url'", path=path, location=loc, field="command")
    args = _strings(entry.get("args", []), path=path, loc=loc, key="args", kind="list")
    env = _strings(entry.get("env"), path=path, loc=loc, key="env", kind="object")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise DataError("expected a folder path (a string)", path=path, location=loc,
                        field="cwd")
    return ServerSpec(shown=f"{name} ({shlex.join([command, *args])})", name=name,
                      command=command, args=args, env=env, cwd=cwd)


def _is_toolsel_serve(entry: Any) -> bool:
    """A config entry that starts ``toolsel serve`` (the gateway reading its own client's
    config would start itself, again and again)."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("command"), str):
        return False
    argv = [Path(entry["command"]).name, *[a for a in entry.get("args", []) if isinstance(a, str)]]
    words = [a for a in argv if not a.startswith("-")]
    return "serve" in words and any(w in ("toolsel", "toolsel.cli") for w in words)


def read_client_config(path: Path) -> tuple[list[ServerSpec], list[str]]:
    """The servers of a client config file, and notes on the entries left out (disabled).
    Raises :class:`DataError` naming the file, the entry and the field."""
    from ..data import loads_json, read_text
    try:
        doc = loads_json(read_text(path))
    except ValueError as exc:
        raise DataError(f"invalid JSON: {getattr(exc, 'msg', exc)}", path=path) from None
    key = next((k for k in CONFIG_KEYS if k in doc), None) if isinstance(doc, Mapping) else None
    if key is None or not isinstance(doc[key], Mapping):
        raise DataError("expected an MCP client config: an object with 'mcpServers' (or "
                        "'servers') mapping server names to {command, args, env} or {url}",
                        path=path, field=key)
    specs, notes = [], []
    for name, entry in doc[key].items():
        if isinstance(entry, Mapping) and entry.get("disabled") is True:
            notes.append(f"{path}: server {name!r} is disabled in the config: left out")
            continue
        if _is_toolsel_serve(entry):
            notes.append(f"{path}: server {name!r} is toolsel serve itself: left out (a "
                         "gateway never starts itself)")
            continue
        specs.append(_config_entry(str(name), entry, path, key))
    if not specs:
        raise DataError(f"no server to start in '{key}'", path=path, field=key)
    return specs, notes


# --------------------------------------------------------------------------------------------
# connecting


def open_client(spec: ServerSpec, errlog=None, *, read_timeout: float | None = None):
    """An MCP SDK ``Client`` for ``spec`` (not yet entered): stdio for a command line (its
    standard error written to ``errlog``, a file), streamable HTTP for a URL."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    if spec.url is not None:
        server = _http_with_headers(spec.url, dict(spec.headers)) if spec.headers else spec.url
        return Client(server, read_timeout_seconds=read_timeout, cache=None)
    params = StdioServerParameters(command=spec.command, args=list(spec.args),
                                   env=dict(spec.env) if spec.env else None, cwd=spec.cwd)
    transport = stdio_client(params, errlog=errlog) if errlog is not None else \
        stdio_client(params)
    return Client(transport, read_timeout_seconds=read_timeout, cache=None)


@asynccontextmanager
async def _http_with_headers(url: str, headers: dict[str, str]):
    """The streamable HTTP transport with ``headers`` on every request (a config's
    ``headers``, e.g. an authorization token), timeouts as the SDK's own client has them."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    async with httpx2.AsyncClient(headers=headers,
                                  timeout=httpx2.Timeout(30.0, read=300.0)) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            yield streams


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside nested exception groups (what the SDK's task groups wrap)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def stderr_tail(errlog) -> str | None:
    """The last non-blank line a child process wrote to ``errlog`` (a file), shown safely."""
    if errlog is None:
        return None
    try:
        errlog.flush()
        errlog.seek(0)
        lines = [ln.strip() for ln in errlog.read()[-8192:].splitlines() if ln.strip()]
    except (OSError, ValueError):
        return None
    if not lines:
        return None
    line = visible(lines[-1])
    return line if len(line) <= 200 else line[:197] + "..."


def failure_reason(exc: BaseException, spec: ServerSpec, timeout: float,
                   errlog=None) -> str:
    """One line saying why ``spec`` gave no tools: not started, no answer within the timeout,
    connection closed (with the last line the server wrote to standard error), an MCP error."""
    leaf = _leaf(exc)
    tail = stderr_tail(errlog)
    said = f"; its last line on stderr: {tail}" if tail else ""
    if isinstance(leaf, TimeoutError):
        return f"no answer within {timeout:g} s (--timeout){said}"
    if isinstance(leaf, FileNotFoundError) and spec.command is not None:
        return f"cannot start {spec.command!r}: no such command or file"
    if isinstance(leaf, PermissionError) and spec.command is not None:
        return f"cannot start {spec.command!r}: permission denied"
    name = type(leaf).__name__
    text = visible(str(leaf)) or name
    if name == "MCPError" and "closed" in text.lower():
        return f"the server closed the connection ({text}){said}"
    if spec.url is not None and name in ("ConnectError", "ConnectTimeout", "RemoteProtocolError"):
        return f"cannot connect to {spec.url}: {text}"
    return f"{name}: {text}{said}"


async def list_tools_of(client) -> list[dict[str, Any]]:
    """Every tool a connected SDK client's server lists (all pages), as JSON objects."""
    tools: list[dict[str, Any]] = []
    cursor = None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(t.model_dump(mode="json", by_alias=True, exclude_none=True)
                     for t in page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise RuntimeError(f"tools/list did not end after {MAX_PAGES} pages")


def listing_name(spec: ServerSpec, info) -> str:
    """A server's name: the one given, else its ``serverInfo.name``, else its command's or
    URL's last word."""
    if spec.name:
        return spec.name
    if info is not None and isinstance(getattr(info, "name", None), str) and info.name.strip():
        return info.name.strip()
    if spec.url is not None:
        return re.sub(r"^https?://", "", spec.url).split("/")[0] or "server"
    words = [a for a in (spec.command, *spec.args) if a and not a.startswith("-")]
    return Path(words[-1]).stem if words else "server"


async def _list_one(spec: ServerSpec, timeout: float) -> ServerListing:
    import anyio
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            with anyio.fail_after(timeout):
                async with open_client(spec, errlog if spec.url is None else None) as client:
                    info = client.server_info
                    tools = await list_tools_of(client)
        except Exception as exc:  # any failure of one server is that server's line
            return ServerListing(spec, error=failure_reason(exc, spec, timeout, errlog))
    return ServerListing(spec, listing_name(spec, info), tools,
                         version=getattr(info, "version", None))


def list_servers(specs: Sequence[ServerSpec], timeout: float = DEFAULT_TIMEOUT
                 ) -> list[ServerListing]:
    """Every server's tools, read at the same time, each within ``timeout`` seconds; one
    :class:`ServerListing` per spec, in order (a failed server: its ``error``)."""
    require_sdk()
    import anyio
    if not timeout > 0:
        raise ValueError(f"--timeout must be a positive number of seconds, got {timeout}")
    out: list[ServerListing | None] = [None] * len(specs)

    async def one(i: int) -> None:
        out[i] = await _list_one(specs[i], timeout)

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(len(specs)):
                tg.start_soon(one, i)

    anyio.run(main)
    return [x for x in out if x is not None]


def describe_listing(listing: ServerListing) -> str:
    """One line for a server read: its name, transport and tool count, or why it gave none."""
    if listing.ok:
        return (f"{listing.name}: {len(listing.tools)} tools over {listing.spec.transport}")
    return f"not imported: {listing.error}"



