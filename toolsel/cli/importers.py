"""``toolsel import``: turn MCP / OpenAI / Anthropic tool dumps into a toolsel registry."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import command
from ..integrations.importers import FORMATS, import_files, write_registry


def _import_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="fmt", required=True, choices=FORMATS,
                   help="input format: an MCP tools/list result, an OpenAI tools array "
                        "(Chat Completions or Responses form), or an Anthropic tools array")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="input JSON files; several are merged into one registry")
    p.add_argument("--out", required=True, type=Path, help="registry JSON to write")
    p.add_argument("--server", action="append", default=[], metavar="NAME",
                   help="server name of each FILE, in order (repeat once per file); MCP "
                        "default: the file's serverInfo.name or its file stem")


@command("import", "convert MCP/OpenAI/Anthropic tool definitions into a registry JSON",
         _import_args)
def _import(args: argparse.Namespace) -> int:
    registry = import_files(args.files, args.fmt, servers=args.server or None)
    write_registry(registry, args.out)
    renamed = [t.name for t in registry if "original_name" in t.metadata]
    servers = sorted({t.metadata["server"] for t in registry if "server" in t.metadata})
    print(f"{args.out}: {len(registry)} tools from {len(args.files)} file(s)"
          + (f", servers: {', '.join(servers)}" if servers else ""))
    if renamed:
        print(f"  {len(renamed)} clashing names qualified by server: {', '.join(renamed)}")
    print(f"next: toolsel validate --registry {args.out} --queries QUERIES.jsonl")
    return 0
