"""``toolsel import``: turn MCP / OpenAI / Anthropic tool dumps into a toolsel registry."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import command
from ..io import check_output_file
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
    p.add_argument("--strict", action="store_true",
                   help="refuse MCP tools without a description (default: their title or "
                        "name words stand in, with a warning) and tool names the OpenAI or "
                        "Anthropic APIs refuse")


@command("import", "convert MCP/OpenAI/Anthropic tool definitions into a registry JSON",
         _import_args)
def _import(args: argparse.Namespace) -> int:
    check_output_file(args.out)
    registry = import_files(args.files, args.fmt, servers=args.server or None,
                            strict=args.strict)
    write_registry(registry, args.out)
    renamed = [t.name for t in registry if "original_name" in t.metadata]
    servers = sorted({t.metadata["server"] for t in registry if "server" in t.metadata})
    print(f"{args.out}: {len(registry)} tools from {len(args.files)} file(s)"
          + (f", servers: {', '.join(servers)}" if servers else ""))
    fallback = [t.name for t in registry if "description_fallback" in t.metadata]
    if fallback:
        print(f"  {len(fallback)} tools had no description; their title or name words stand "
              f"in (metadata description_fallback): {', '.join(fallback[:10])}"
              + (" ..." if len(fallback) > 10 else ""))
    if renamed:
        print(f"  {len(renamed)} clashing names qualified by server: {', '.join(renamed)}")
    print(f"next: toolsel validate --registry {args.out} --queries QUERIES.jsonl")
    return 0
