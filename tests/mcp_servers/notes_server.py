"""A small MCP server for the tests, written with the official SDK: a notebook of notes.

Run it as a user's server is run::

    python tests/mcp_servers/notes_server.py                      # stdio
    python tests/mcp_servers/notes_server.py --http               # streamable HTTP on 127.0.0.1

With ``--http`` it binds a free port on 127.0.0.1 and prints ``listening on URL`` (one line on
standard output) once it accepts connections. ``--name`` sets its ``serverInfo.name`` (two
copies under two names clash on every tool name). ``--test-tools`` adds ``server_pid`` (its
process id, so a test can kill it), ``fail`` (a tool that always errors) and ``protocol_error``
(an MCP error response). ``--start-once FILE`` makes it a server that cannot be started
twice: it creates FILE, and exits with an error when FILE already exists.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

from mcp.server.mcpserver import MCPServer


def build(name: str, test_tools: bool) -> MCPServer:
    server = MCPServer(name, version="1.0", log_level="WARNING")
    notes: dict[str, str] = {}

    @server.tool()
    def add_note(title: str, text: str) -> str:
        """Save a note with a title and a text in the notebook."""
        notes[title] = text
        return f"saved note {title!r} ({len(notes)} notes)"

    @server.tool()
    def search_notes(words: str) -> list[str]:
        """Find the titles of saved notes whose title or text contains all the words."""
        want = words.lower().split()
        return [t for t, x in notes.items() if all(w in f"{t} {x}".lower() for w in want)]

    @server.tool()
    def delete_note(title: str) -> str:
        """Delete the note with this title from the notebook."""
        if title not in notes:
            raise ValueError(f"no note titled {title!r}")
        del notes[title]
        return f"deleted note {title!r}"

    if test_tools:
        @server.tool()
        def server_pid() -> int:
            """The process id of this notes server."""
            return os.getpid()

        @server.tool()
        def fail(message: str) -> str:
            """Always fails with the message given."""
            raise ValueError(message)

        @server.tool()
        def protocol_error(code: int, message: str) -> str:
            """Answers with an MCP error (a JSON-RPC error response) of this code."""
            from mcp import MCPError
            raise MCPError(code, message, {"from": "notes"})

    return server


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--name", default="notes")
    p.add_argument("--http", action="store_true")
    p.add_argument("--test-tools", action="store_true")
    p.add_argument("--start-once", default=None)
    args = p.parse_args()
    if args.start_once is not None:
        try:
            open(args.start_once, "x").close()
        except FileExistsError:
            sys.exit("notes server: started once already (--start-once)")
    server = build(args.name, args.test_tools)
    if not args.http:
        server.run("stdio")
        return
    import anyio
    import uvicorn
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    uv = uvicorn.Server(config)

    async def serve() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(uv.serve, [sock])
            while not uv.started:
                await anyio.sleep(0.02)
            print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)

    anyio.run(serve)
    sys.exit(0)


if __name__ == "__main__":
    main()
