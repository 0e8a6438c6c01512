"""``toolsel serve``: the chosen selector as an MCP server in front of the user's MCP servers.

The gateway (:mod:`toolsel.integrations.gateway`) serves ``search_tools`` and ``call_tool``
over stdio (the default: an MCP client starts it as it starts any server) or streamable HTTP
(``--transport http``). Everything this command says goes to standard error: on stdio,
standard output is the protocol.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..visible import visible
from .common import add_always_include, add_scorers, add_top_k, command
from .fit import add_model_arg


def _args(p: argparse.ArgumentParser) -> None:
    from ..integrations.gateway import DEFAULT_CALL_TIMEOUT
    from ..integrations.mcp_servers import DEFAULT_TIMEOUT
    p.add_argument("servers", nargs="+", metavar="SERVER",
                   help="the upstream MCP servers, as `toolsel import --from mcp-server` takes "
                        "them: a command line (one argument, quoted; stdio), an http(s) URL "
                        "(streamable HTTP) or a client config file (mcpServers)")
    p.add_argument("--server", action="append", default=[], metavar="NAME",
                   help="name of each SERVER, in order (default: its serverInfo.name; a config "
                        "file names its own)")
    add_scorers(p, alias=True, help="the scorer that ranks the tools (one name)")
    add_top_k(p, None, help="how many ranked tools a search sends besides the always-include "
                            "and pinned ones (one K; default 10)")
    p.add_argument("--policy", metavar="SPEC",
                   help="send what a selection policy sends instead of a fixed K, e.g. "
                        "threshold:min_score=0.5,max_k=10")
    add_always_include(p, help="tools every search sends, outside the filter")
    add_model_arg(p)
    p.add_argument("--log", type=Path, metavar="FILE",
                   help="write each search and the tools then called to FILE (JSONL; created, "
                        "or appended to when it is an earlier log of toolsel serve; any other "
                        "file is refused); `toolsel label --from FILE` labels them")
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (default: the MCP client starts this command) or http "
                        "(streamable HTTP at http://HOST:PORT/mcp)")
    p.add_argument("--host", default="127.0.0.1", help="--transport http: address to listen "
                                                       "on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000,
                   help="--transport http: port (default 8000; 0 picks a free one, printed)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="seconds each upstream server has to start and list its tools; one "
                        f"that does not is named and left out (default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--call-timeout", type=float, default=DEFAULT_CALL_TIMEOUT,
                   metavar="SECONDS", help="seconds a forwarded call may take before an error "
                                           f"result (default {DEFAULT_CALL_TIMEOUT:g})")


def _say(text: str) -> None:
    print(visible(text), file=sys.stderr, flush=True)


def _selection(args) -> tuple[str, int, object]:
    """The scorer name, K and policy asked for, each checked before anything starts."""
    from ..policies import parse_policy
    from ..scorers.base import get_scorer
    scorers = args.scorers or ["default"]
    if len(scorers) != 1:
        raise ValueError(f"serve ranks with one scorer; got --scorers {','.join(scorers)}")
    get_scorer(scorers[0])  # an unknown name fails now
    if args.top_k is not None and len(args.top_k) != 1:
        raise ValueError("serve sends one K; give one --top-k value")
    if args.top_k is not None and args.policy is not None:
        raise ValueError("give --top-k or --policy, not both")
    policy = parse_policy(args.policy) if args.policy is not None else None
    return scorers[0], args.top_k[0] if args.top_k else 10, policy


def _describe(scorer: str, k: int, policy, model, always) -> str:
    from ..policies import policy_spec
    what = scorer
    if model is not None:
        what = f"the model {model}"
    cut = f"policy {policy_spec(policy)}" if policy is not None else f"top_k {k}"
    return f"{what}, {cut}" + (f", always-include {','.join(always)}" if always else "")


@command("serve", "serve a selector over MCP in front of your MCP servers: search_tools (the "
                  "selector's top tools with full schemas) and call_tool (forwarded to the "
                  "server owning the tool); optional traffic log for labeling", _args)
def _serve(args: argparse.Namespace) -> int:
    import socket

    from ..integrations.gateway import run_gateway
    from ..integrations.mcp_servers import require_sdk, server_specs
    from ..io import refuse_inputs
    from ..selection import Selector
    require_sdk()
    scorer, k, policy = _selection(args)
    if not args.timeout > 0 or not args.call_timeout > 0:
        raise ValueError("--timeout and --call-timeout must be positive numbers of seconds")
    specs, notes = server_specs(args.servers, args.server or None)
    for note in notes:
        _say(f"  note: {note}")
    if args.model is not None:
        from ..learn.artifact import read_model
        read_model(args.model)  # a file that is not a model fails before any server starts
    always = list(args.always_include)
    log = None
    if args.log is not None:
        from ..integrations.traffic import open_log
        configs = [("SERVER", s) for s in args.servers if Path(s).is_file()]
        refuse_inputs([("--log", args.log)], [("--model", args.model), *configs])
        log = open_log(args.log)
        _say(f"  traffic log: {args.log} ("
             + (f"appending to toolsel serve's earlier log, {log.lines_before} lines there)"
                if log.appended else "new)"))
    sock = None
    if args.transport == "http":
        sock = socket.create_server((args.host, args.port))

    def selector(registry):
        return Selector(registry, scorer, top_k=k, policy=policy, model=args.model,
                        always_include=always if always != ["marked"] else None)

    try:
        return run_gateway(specs, selector, transport=args.transport, sock=sock,
                           timeout=args.timeout, call_timeout=args.call_timeout, log=log,
                           describe=lambda reg, sel: _describe(scorer, k, policy, args.model,
                                                               always),
                           say=_say, version=_version())
    finally:
        if log is not None:
            log.close()
        if sock is not None:
            sock.close()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("toolsel")
    except PackageNotFoundError:  # pragma: no cover - a source tree, not installed
        return ""
