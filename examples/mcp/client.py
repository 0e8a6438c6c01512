"""A scripted MCP client standing in for an agent: it starts ``toolsel serve`` as any MCP client
starts a server (a command over stdio), then for each turn of a JSONL file searches the tools
with ``search_tools`` and, when the tool the turn names is among the results, calls it with
``call_tool``. It prints what it sent and what came back.

    python examples/mcp/client.py examples/mcp/turns.jsonl -- toolsel serve [OPTIONS] SERVER...

A turn is ``{"request": "...", "call": {"name": "...", "arguments": {...}}}``: what a model
would have decided after reading the search results (a real agent decides itself). The
gateway is started with this script's environment (an MCP client app passes its own).
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import anyio
from mcp import Client, StdioServerParameters


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


async def run(turns: list[dict], command: list[str]) -> int:
    exe = shutil.which(command[0]) or command[0]
    params = StdioServerParameters(command=exe, args=command[1:], env=dict(os.environ))
    called = 0
    async with Client(params) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        print(f"connected to {client.server_info.name}: tools {', '.join(names)}")
        for turn in turns:
            found = await client.call_tool("search_tools", {"query": turn["request"]})
            sent = [t["name"] for t in found.structured_content["tools"]]
            print(f"search_tools {turn['request']!r} -> {', '.join(sent)}")
            want = turn["call"]["name"]
            if want not in sent:
                print(f"  {want} was not among the results: not called")
                continue
            result = await client.call_tool("call_tool", {"name": want,
                                                          "arguments": turn["call"]["arguments"]})
            text = " ".join(c.text for c in result.content if getattr(c, "text", None))
            print(f"  call_tool {want} -> {'error: ' if result.is_error else ''}{_short(text)}")
            called += not result.is_error
    print(f"{called} of {len(turns)} turns called their tool")
    return 0


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") != 1 or len(argv) < 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as fh:
        turns = [json.loads(line) for line in fh if line.strip()]
    return anyio.run(run, turns, argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
