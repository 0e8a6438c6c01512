"""``toolsel serve``: a selector served over MCP, in front of the user's MCP servers.

The gateway connects to the upstream servers (:mod:`toolsel.integrations.mcp_servers`: command
lines, URLs, client configs), builds one registry of their tools exactly as ``toolsel import
--from mcp-server`` does (names two servers share qualified as ``{server}__{name}``), fits a
:class:`~toolsel.selection.Selector` on it (any scorer, policy or ``toolsel fit`` model file),
and serves two tools over MCP with the official SDK (stdio or streamable HTTP):

``search_tools(query, session?)``
    The selector's choice for the request: :meth:`Session.select
    <toolsel.selection.Session.select>` of the conversation ``session`` (the always-include
    tools, the tools pinned in that conversation, and the top-K or the policy's cut of the
    rest), each with its full definition as its server lists it (``inputSchema``, ``title``,
    ``annotations``, ``outputSchema``...) under its registry name. The result is JSON, in the
    text content and as structured content: ``{"session", "tools", "pinned"}``.
``call_tool(name, arguments?, session?)``
    Forwards the call to the server that owns ``name`` (under its own name there) and returns
    that server's result as it is (``content``, ``structuredContent``, ``isError``); an MCP
    error of that server comes back as the same MCP error (code, message, data). A tool called
    is pinned in its conversation: later searches there keep it. A name the registry does not
    have, or a server that stopped answering, is an error result naming it (``isError``), and
    the gateway goes on serving the others.

A conversation is the ``session`` argument when the client passes one; otherwise the HTTP
transport's ``Mcp-Session-Id`` when there is one, else one conversation per gateway (a stdio
gateway serves one client). Pins of one conversation never reach another.

Each upstream connection is owned by a task of its own for the gateway's life (the SDK's
connections are task-scoped). A server that stops answering is marked; the next call of one
of its tools starts it again (a command is run again, a URL connected to again), at most once
every :data:`RESTART_S` seconds, and the call goes through when it answers; while it does not,
every call of its tools is an error result naming the server and why.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data import DataError, Registry, suggest_names
from .importers import from_mcp, merge_servers
from .mcp_servers import (DEFAULT_TIMEOUT, ServerSpec, failure_reason, list_tools_of,
                          listing_name, open_client, require_sdk)

__all__ = ["SEARCH_TOOL", "CALL_TOOL", "Upstream", "UpstreamPool", "Gateway", "run_gateway",
           "DEFAULT_CALL_TIMEOUT", "MAX_SESSIONS", "RESTART_S"]

#: Seconds a forwarded call may take before its error result (``--call-timeout``).
DEFAULT_CALL_TIMEOUT = 120.0
#: Conversations whose pins the gateway keeps (the least recently used beyond are dropped).
MAX_SESSIONS = 10_000
#: Seconds between two attempts to start again a server that stopped answering.
RESTART_S = 30.0

_SESSION_ARG = {"type": "string",
                "description": "Your conversation's id (optional): tools you call in it stay "
                               "in its later search results; conversations never share pins."}

#: The search tool as MCP clients list it.
SEARCH_TOOL = {
    "name": "search_tools",
    "description": "Find the tools for a request among all the tools of the connected servers. "
                   "Returns the best matching tools with their full definitions (name, "
                   "description, inputSchema); call one with call_tool.",
    "inputSchema": {"type": "object",
                    "properties": {"query": {"type": "string",
                                             "description": "The user's request, or a few words "
                                                            "describing the tool you need."},
                                   "session": _SESSION_ARG},
                    "required": ["query"]},
}
#: The call tool as MCP clients list it.
CALL_TOOL = {
    "name": "call_tool",
    "description": "Call a tool that search_tools returned, by its name, with arguments "
                   "matching its inputSchema. Returns that tool's own result.",
    "inputSchema": {"type": "object",
                    "properties": {"name": {"type": "string",
                                            "description": "The tool's name as search_tools "
                                                           "returned it."},
                                   "arguments": {"type": "object",
                                                 "description": "The tool's arguments."},
                                   "session": _SESSION_ARG},
                    "required": ["name"]},
}


# --------------------------------------------------------------------------------------------
# upstream connections


@dataclass(eq=False)
class Upstream:
    """One upstream server: its spec, and once connected its name, tools and client;
    ``error`` says why it is not (or no longer) usable."""

    index: int
    spec: ServerSpec
    name: str | None = None
    tools: list[dict[str, Any]] = field(default_factory=list)
    client: Any = None
    error: str | None = None
    version: str | None = None
    generation: int = 0  # which connection is the current one (one more per restart)
    restart_at: float = 0.0  # monotonic time before which no restart is tried


class UpstreamPool:
    """Connections to every upstream server for the life of an ``async with`` block.

    Entering connects to all of them at once, each within ``timeout`` seconds (start,
    handshake, ``tools/list``); a server that does not make it keeps its ``error`` and the
    others are served. Each connection lives in a task of its own, cancelled at the deadline
    or when the block ends."""

    def __init__(self, specs: Sequence[ServerSpec], timeout: float = DEFAULT_TIMEOUT):
        self.upstreams = [Upstream(i, s) for i, s in enumerate(specs)]
        self.timeout = timeout
        self._tg: Any = None
        self._stop: Any = None
        self._ready: dict[int, Any] = {}
        self._scopes: dict[int, Any] = {}
        self._errlogs: list[Any] = []
        self._restarting: dict[int, Any] = {}

    async def __aenter__(self) -> UpstreamPool:
        import anyio
        self._stop = anyio.Event()
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        for up in self.upstreams:
            self._ready[up.index] = anyio.Event()
            self._scopes[up.index] = anyio.CancelScope()
            self._tg.start_soon(self._own, up)
        with anyio.move_on_after(self.timeout):
            for up in self.upstreams:
                await self._ready[up.index].wait()
        for up in self.upstreams:
            if not self._ready[up.index].is_set():
                up.error = f"no answer within {self.timeout:g} s (--timeout)"
                self._scopes[up.index].cancel()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        self._stop.set()
        try:
            return await self._tg.__aexit__(*exc)
        finally:
            for f in self._errlogs:
                f.close()

    async def _own(self, up: Upstream) -> None:
        """The task owning ``up``'s connection: connect, list, then hold it until the end (or
        until a restart replaces it: only the current generation writes ``up``)."""
        gen = up.generation
        ready, scope = self._ready[up.index], self._scopes[up.index]
        errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._errlogs.append(errlog)
        try:
            with scope:
                async with open_client(up.spec, errlog if up.spec.url is None else None) as c:
                    name = listing_name(up.spec, c.server_info)
                    tools = await list_tools_of(c)
                    if up.generation == gen:
                        if up.name is None:  # a restart keeps the name its tools are under
                            up.name = name
                        up.version = getattr(c.server_info, "version", None)
                        up.tools = tools
                        up.client = c
                    ready.set()
                    await self._stop.wait()
        except Exception as exc:  # this server's failure is its own, never the gateway's
            if up.error is None and up.generation == gen:
                up.error = failure_reason(exc, up.spec, self.timeout, errlog)
        finally:
            if up.generation == gen:
                up.client = None
            ready.set()

    async def restart(self, up: Upstream) -> bool:
        """Start ``up`` again when it stopped answering: a new connection (the command run
        again, the URL connected to again) owned by a new task, within ``timeout`` seconds,
        tried at most once every :data:`RESTART_S` seconds. ``True`` when it answers (its
        ``error`` cleared), ``False`` with ``error`` saying why not."""
        import time

        import anyio
        lock = self._restarting.setdefault(up.index, anyio.Lock())
        async with lock:
            if up.client is not None and up.error is None:
                return True  # another call started it meanwhile
            now = time.monotonic()
            if now < up.restart_at:
                return False
            up.restart_at = now + RESTART_S
            self._scopes[up.index].cancel()  # the old connection's task, if it still runs
            up.generation += 1
            up.client, up.error = None, None
            self._ready[up.index] = anyio.Event()
            self._scopes[up.index] = anyio.CancelScope()
            self._tg.start_soon(self._own, up)
            with anyio.move_on_after(self.timeout):
                await self._ready[up.index].wait()
            if up.client is None and up.error is None:
                up.error = f"it did not answer within {self.timeout:g} s (--timeout) when " \
                           "started again"
                self._scopes[up.index].cancel()
            return up.error is None and up.client is not None

    @property
    def connected(self) -> list[Upstream]:
        return [u for u in self.upstreams if u.error is None and u.name is not None]


# --------------------------------------------------------------------------------------------
# the gateway


def _text_result(text: str, *, error: bool = False, structured: Any = None):
    from mcp.types import CallToolResult, TextContent
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error,
                          structured_content=structured)


class Gateway:
    """The selector and the upstream servers behind the two MCP tools (module docstring).

    Parameters
    ----------
    pool : a connected :class:`UpstreamPool`
    selector_factory : ``registry -> Selector`` (the scorer, K or policy, always-include, model)
    log : an open :class:`~toolsel.integrations.traffic.TrafficLog`, or ``None``
    call_timeout : seconds a forwarded call may take
    """

    def __init__(self, pool: UpstreamPool, selector_factory: Callable[[Registry], Any], *,
                 log=None, call_timeout: float = DEFAULT_CALL_TIMEOUT, strict: bool = False):
        from .traffic import new_run_id
        self.pool = pool
        groups = [(u.name, from_mcp(u.tools, server=u.name, path=f"server {u.name!r} "
                                    f"({u.spec.shown})", strict=strict))
                  for u in pool.connected if u.tools]
        if not groups:
            raise DataError("no upstream server gave tools; nothing to serve")
        self.registry = merge_servers(groups, strict=strict)
        self.selector = selector_factory(self.registry)
        by_name = {u.name: u for u in pool.connected}
        self.owners: dict[str, tuple[Upstream, str]] = {}
        self.definitions: dict[str, dict] = {}
        for tool in self.registry:
            up = by_name[tool.metadata["server"]]
            original = tool.metadata.get("original_name", tool.name)
            raw = next(t for t in up.tools if t.get("name") == original)
            self.owners[tool.name] = (up, original)
            self.definitions[tool.name] = {**raw, "name": tool.name}
        self.log = log
        self.call_timeout = call_timeout
        self.run_id = new_run_id()
        self._sessions: OrderedDict[str, Any] = OrderedDict()
        self._last_search: dict[str, int | None] = {}
        self._n_searches = 0
        self._lock = threading.Lock()

    # -- conversations ------------------------------------------------------------------------
    def session(self, key: str):
        """The conversation ``key`` (created on first use; the least recently used past
        :data:`MAX_SESSIONS` forgotten)."""
        with self._lock:
            s = self._sessions.get(key)
            if s is None:
                s = self._sessions[key] = self.selector.session()
                while len(self._sessions) > MAX_SESSIONS:
                    old, _ = self._sessions.popitem(last=False)
                    self._last_search.pop(old, None)
            self._sessions.move_to_end(key)
            return s

    def _write(self, record: dict) -> None:
        if self.log is not None:
            self.log.write({**record, "run": self.run_id})

    def log_start(self, selector_text: str) -> None:
        self._write({"event": "start", "servers": [u.name for u in self.pool.connected],
                     "tools": len(self.registry), "selector": selector_text})

    # -- the two tools ------------------------------------------------------------------------
    def search(self, query: str, key: str) -> dict:
        """``search_tools``: the conversation's selection for ``query`` (logged)."""
        session = self.session(key)
        names = session.select(query)
        payload = {"session": key, "tools": [self.definitions[n] for n in names],
                   "pinned": session.pinned}
        with self._lock:
            self._n_searches += 1
            n = self._n_searches
            self._last_search[key] = n
        self._write({"event": "search", "session": key, "search": n, "query": query,
                     "sent": [d["name"] for d in payload["tools"]]})
        return payload

    async def call(self, name: str, arguments: Mapping[str, Any], key: str):
        """``call_tool``: forward to the owning server; its result or MCP error as it is."""
        from mcp import MCPError
        if name not in self.owners:
            hint = suggest_names(name, list(self.owners))
            return _text_result(f"no tool named {name!r} among the {len(self.owners)} tools of "
                                f"the connected servers{hint} (search_tools lists them)",
                                error=True)
        up, original = self.owners[name]
        self.session(key).pin(name)
        ok = False
        try:
            if (up.client is None or up.error is not None) and not await self.pool.restart(up):
                return _text_result(self._down(up), error=True)
            try:
                result = await up.client.call_tool(original, dict(arguments),
                                                   read_timeout_seconds=self.call_timeout)
            except MCPError as exc:
                if "closed" in exc.message.lower() and exc.code == -32000:
                    up.error = f"its connection closed ({exc.message})"
                    return _text_result(self._down(up), error=True)
                raise  # the upstream's own MCP error, passed on as it is
            except TimeoutError:
                return _text_result(f"server {up.name!r} did not answer the call of {name!r} "
                                    f"within {self.call_timeout:g} s (--call-timeout)",
                                    error=True)
            except Exception as exc:  # the connection broke: the server is gone
                up.error = failure_reason(exc, up.spec, self.pool.timeout)
                return _text_result(self._down(up), error=True)
            ok = not result.is_error
            return result
        finally:
            with self._lock:
                last = self._last_search.get(key)
            self._write({"event": "call", "session": key, "search": last, "tool": name,
                         "ok": ok})

    def _down(self, up: Upstream) -> str:
        return (f"server {up.name!r} ({up.spec.shown}) is not answering: {up.error}; the next "
                f"call of its tools starts it again (at most once every {RESTART_S:g} s; the "
                "other servers' tools still work)")

    # -- MCP ----------------------------------------------------------------------------------
    def mcp_server(self, *, name: str = "toolsel", version: str = ""):
        """The SDK's low-level ``Server`` answering ``tools/list`` and ``tools/call``."""
        import anyio
        from mcp import MCPError
        from mcp.server import Server
        from mcp.types import INVALID_PARAMS, ListToolsResult, Tool

        tools = [Tool.model_validate(SEARCH_TOOL), Tool.model_validate(CALL_TOOL)]

        async def list_tools(ctx, params):
            return ListToolsResult(tools=tools)

        async def call_tool(ctx, params):
            args = dict(params.arguments or {})
            key = _session_key(args, ctx)
            if params.name == "search_tools":
                query = args.get("query")
                if not isinstance(query, str) or not query.strip():
                    return _text_result("search_tools needs 'query': the request as a "
                                        "non-empty string", error=True)
                payload = await anyio.to_thread.run_sync(self.search, query, key)
                return _text_result(json.dumps(payload, ensure_ascii=False), structured=payload)
            if params.name == "call_tool":
                target, arguments = args.get("name"), args.get("arguments", {})
                if not isinstance(target, str) or not target:
                    return _text_result("call_tool needs 'name': a tool name search_tools "
                                        "returned", error=True)
                if arguments is None:
                    arguments = {}
                if not isinstance(arguments, Mapping):
                    return _text_result("call_tool's 'arguments' must be an object (the "
                                        "tool's arguments by name)", error=True)
                return await self.call(target, arguments, key)
            raise MCPError(INVALID_PARAMS, f"unknown tool {params.name!r}; this server has "
                                           "search_tools and call_tool")

        return Server(name, version=version, on_list_tools=list_tools, on_call_tool=call_tool,
                      instructions="Search the tools of the connected servers with "
                                   "search_tools, then call one with call_tool.")


def _session_key(args: dict, ctx: Any) -> str:
    """The conversation of a request: its ``session`` argument, else the HTTP session id, else
    the gateway's one conversation."""
    given = args.pop("session", None)
    if isinstance(given, str) and given:
        return given
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is not None and headers.get("mcp-session-id"):
        return f"http:{headers.get('mcp-session-id')}"
    return "default"


# --------------------------------------------------------------------------------------------
# running


async def _serve_stdio(server) -> None:
    from mcp.server.stdio import stdio_server
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _serve_http(server, sock, say: Callable[[str], None], url: str) -> None:
    import uvicorn
    app = server.streamable_http_app(host=sock.getsockname()[0])
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    import anyio
    async with anyio.create_task_group() as tg:
        tg.start_soon(uv.serve, [sock])
        while not uv.started and not uv.should_exit:
            await anyio.sleep(0.02)
        if uv.started:
            say(f"listening on {url}")


def run_gateway(specs: Sequence[ServerSpec], selector_factory: Callable[[Registry], Any], *,
                transport: str = "stdio", sock=None, timeout: float = DEFAULT_TIMEOUT,
                call_timeout: float = DEFAULT_CALL_TIMEOUT, log=None,
                describe: Callable[[Registry, Any], str] = lambda r, s: "",
                say: Callable[[str], None] = print, version: str = "") -> int:
    """Connect to ``specs``, build the gateway, serve it over ``transport`` (``"stdio"``, or
    ``"http"`` on the bound socket ``sock``) until the client leaves (stdio) or the process is
    interrupted (HTTP). ``say`` prints progress (to standard error: on stdio, standard output
    is the protocol). Returns 0; raises :class:`DataError` when no server gave tools."""
    require_sdk()
    import anyio

    async def main() -> int:
        async with UpstreamPool(specs, timeout) as pool:
            for up in pool.upstreams:
                line = (f"{up.name}: {len(up.tools)} tools over {up.spec.transport}"
                        if up.error is None else f"not served: {up.error}")
                say(f"  {up.spec.shown}: {line}")
            gateway = await anyio.to_thread.run_sync(
                lambda: Gateway(pool, selector_factory, log=log, call_timeout=call_timeout))
            text = describe(gateway.registry, gateway.selector)
            gateway.log_start(text)
            n_up = len(pool.connected)
            server = gateway.mcp_server(version=version)
            if transport == "stdio":
                say(f"serving {len(gateway.registry)} tools of {n_up} server(s) with {text} "
                    "over stdio (search_tools, call_tool)")
                await _serve_stdio(server)
            else:
                host, port = sock.getsockname()[:2]
                url = f"http://{host}:{port}/mcp"
                say(f"serving {len(gateway.registry)} tools of {n_up} server(s) with {text} "
                    f"over streamable HTTP (search_tools, call_tool)")
                await _serve_http(server, sock, say, url)
        return 0

    return anyio.run(main)
