"""``toolsel import``: tool dumps and public benchmarks into a registry (and labeled queries)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from .common import command, file_path
from ..io import check_output_file
from ..visible import visible


def _import_args(p: argparse.ArgumentParser) -> None:
    from ..integrations.sources import import_formats
    formats = import_formats()
    p.add_argument("--from", dest="fmt", action="append", default=[],
                   choices=[*formats, "auto"], metavar="FORMAT",
                   help="input format, once for every input or once per input in order "
                        "(default auto: detected from the content): "
                        + "; ".join(f"{n}: {f.help}" for n, f in formats.items()))
    p.add_argument("files", nargs="+", metavar="INPUT",
                   help="input files (a BEIR input is a folder; BFCL's may be its data folder, "
                        "every file in it read or skipped with one line); with --from "
                        "mcp-server: a server's command line (one argument, quoted), URL or "
                        "client config file; all go into one registry")
    p.add_argument("--out", required=True, type=file_path, help="registry JSON to write")
    p.add_argument("--queries-out", type=file_path, metavar="FILE",
                   help="labeled query JSONL to write from the benchmarks' labels")
    p.add_argument("--server", action="append", default=[], metavar="NAME",
                   help="server name of each INPUT, in order (repeat once per input); MCP "
                        "default: the file's serverInfo.name or its file stem")
    from ..integrations.mcp_servers import DEFAULT_TIMEOUT
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="--from mcp-server: seconds each server has to start, answer and list "
                        f"its tools; one that does not is named in one line and left out "
                        f"(default {DEFAULT_TIMEOUT:g})")
    p.add_argument("--strict", action="store_true",
                   help="refuse what is otherwise normalized with a warning (Python type "
                        "names, unknown keys such as 'response'), MCP tools without a "
                        "description, and tool names the OpenAI or Anthropic APIs refuse")
    p.add_argument("--force", action="store_true",
                   help="replace --out/--queries-out even when the file there was not written "
                        "by toolsel, or is a symbolic link (the link itself is replaced)")


def _write_pair(out: Path, reg_text: str, queries_out: Path | None, q_text: str, *,
                judged: dict, force: bool = False) -> None:
    """Write the registry (and its queries) as one step (:func:`toolsel.io.write_pair`): under
    the lock of each file's folder, through an authenticated journal, so a run killed at any
    point leaves the old pair or the new one (completed or undone by the next run, which
    also removes the killed run's temporary files), never a registry from one run beside
    labels from another."""
    from ..io import has_mark, write_pair
    files = [(out, reg_text, judged["--out"])]
    if queries_out is not None:
        files.append((queries_out, q_text, judged["--queries-out"]))
    for line in write_pair(files, force=force, owned=has_mark):
        print(f"  {visible(line)}")


def _arg(path: Path) -> str:
    """``path`` as a shell argument in a suggested command line (quoted, then shown)."""
    return visible(shlex.quote(str(path)))


def _short(names: list[str], n: int = 10) -> str:
    return visible(", ".join(names[:n])) + (f" ... ({len(names) - n} more)" if len(names) > n
                                            else "")


@command("import", "convert MCP/OpenAI/Anthropic tool definitions and public benchmarks (BFCL, "
                   "ToolBench, MetaTool, BEIR) into a registry JSON and labeled queries",
         _import_args)
def _import(args: argparse.Namespace) -> int:
    from ..integrations.sources import import_sources
    from ..io import jsonl_mark, jsonl_text
    from ..jsonl import dumps
    judged = _check_outputs(args.out, args.queries_out, args.files, force=args.force)
    if "mcp-server" in args.fmt:
        n_live = len(args.files) if len(args.fmt) == 1 else args.fmt.count("mcp-server")
        print(f"  starting or connecting to the servers of {n_live} input(s); each has "
              f"{args.timeout:g} s (--timeout) to answer and list its tools", flush=True)
    result = import_sources(args.files, args.fmt or None, servers=args.server or None,
                            strict=args.strict, timeout=args.timeout)
    registry, queries = result.registry, result.queries
    for path, line in result.read:
        print(f"  {visible(path)}: {visible(line)}")
    if not len(registry):  # e.g. only BFCL multi-turn files: each skipped, said above
        raise ValueError(f"no tools in the {len(args.files)} input(s): each was skipped (see "
                         "above); nothing written")
    if result.failed:
        print(f"  {len(result.failed)} server(s) gave no tools and are left out (above); the "
              "others are imported")
    # serialize both before writing either, so a value JSON cannot hold fails before any write
    # each carries toolsel's mark (a registry's _meta, as MCP's tools/list allows; a first
    # // line, which JSONL readers skip): a later import may replace them, nothing else
    reg_text = dumps({"_meta": {"written_by": "toolsel import"},
                      "tools": [t.to_record() for t in registry]}, indent=2) + "\n"
    q_text = jsonl_mark("import") + jsonl_text(queries)
    servers = sorted({t.metadata["server"] for t in registry if "server" in t.metadata})
    _write_pair(args.out, reg_text, args.queries_out if queries else None, q_text,
                judged=judged, force=args.force)
    print(f"{visible(args.out)}: {len(registry)} tools from {len(args.files)} input(s)"
          + _servers_note(servers))
    _report_queries(queries, args.queries_out)
    _report_normalized(result)
    if queries and args.queries_out is not None:
        print(f"next: toolsel report --registry {_arg(args.out)} --queries "
              f"{_arg(args.queries_out)} --out REPORT_DIR")
    else:
        print(f"next: toolsel validate --registry {_arg(args.out)} --queries QUERIES.jsonl")
    return 0


def _check_outputs(out: Path, queries_out: Path | None, inputs, *, force: bool = False) -> dict:
    """Refuse output files this command may not write, before reading any input: places no
    command writes, links and files toolsel did not write (unless ``force``), an input, or
    one file for both. Returns each output's real path."""
    from ..io import has_mark, refuse_inputs
    refuse_inputs([("--out", out), ("--queries-out", queries_out)],
                  [("INPUT", f) for f in inputs])
    judged = {"--out": check_output_file(out, force=force, owned=has_mark)}
    if queries_out is not None:
        judged["--queries-out"] = check_output_file(queries_out, force=force, owned=has_mark)
    return judged


def _servers_note(servers: list[str]) -> str:
    """The servers of the registry for its summary line: their names up to 50, else a count."""
    if not servers:
        return ""
    if len(servers) <= 50:
        return f", servers: {_short(servers, 8)}"
    return f", {len(servers)} servers"


def _report_queries(queries: list, queries_out: Path | None) -> None:
    """Print what became of the labeled queries: written, not asked for, or none to write."""
    if queries:
        n_multi = sum(len(q["expected"]) > 1 for q in queries)
        n_graded = sum("grades" in q for q in queries)
        what = (f"{len(queries)} labeled queries ({n_multi} needing several tools"
                + (f", {n_graded} with graded labels" if n_graded else "") + ")")
        if queries_out is not None:
            print(f"{visible(queries_out)}: {what}")
        else:
            print(f"  {what} not written: add --queries-out FILE to write them")
    elif queries_out is not None and (queries_out.exists() or queries_out.is_symlink()):
        print(f"  {visible(queries_out)}: these inputs hold no labeled queries; the file there (an "
              "earlier import's or yours) is left as it is and may not match this registry")
    elif queries_out is not None:
        print(f"  {visible(queries_out)}: these inputs hold no labeled queries; nothing written")


def _report_normalized(result) -> None:
    """Print what the import changed in the tools: names resolved, descriptions filled in,
    names qualified, and the importers' notes."""
    if result.resolved:
        print(f"  {len(result.resolved)} names had several definitions; kept the one seen "
              f"most often (ties: the first seen): {_short(result.resolved)}")
    fallback = [t.name for t in result.registry if "description_fallback" in t.metadata]
    if fallback:
        print(f"  {len(fallback)} tools had no description; their title or name words stand "
              f"in (metadata description_fallback): {_short(fallback)}")
    if result.renamed:
        print(f"  {len(result.renamed)} clashing names qualified by server: "
              f"{_short(result.renamed)}")
    for note in result.notes:
        print(f"  note: {visible(note)}")
