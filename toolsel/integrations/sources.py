"""Several tool sources of different formats in one import: detect, read, merge, label.

:func:`import_sources` reads any mix of MCP / OpenAI / Anthropic tool files and public
benchmark files (:mod:`toolsel.integrations.benchmarks`) into one registry plus the labeled
queries the benchmarks carry. Each input's format is given or detected (:func:`detect_format`).

Groups and clashing names. MCP, OpenAI and Anthropic files are one group each (a server: the
``--server`` name, else the file's server name or stem, as :func:`import_files` does); the
files of one benchmark format are one group together (``bfcl``, ``toolbench``,
``metatool``), and each BEIR folder is one (its folder name). A name two groups define is
qualified on both as ``{group}__{name}`` (:func:`~toolsel.integrations.importers.merge_servers`)
and every query of those groups is rewritten to the new name; a query id two groups use is
prefixed the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data import (DataError, Query, Registry, Tool, check_name_syntax, query_from_record,
                    read_records)
from .benchmarks import (BENCHMARK_FORMATS, from_beir, from_bfcl, from_metatool,
                         from_toolbench, metatool_kind)
from .importers import (FORMATS, SEPARATOR, _read_json, detect_tool_format, merge_servers,
                        read_tool_file)
from .schemas import SchemaNormalizer

__all__ = ["ALL_FORMATS", "detect_format", "import_sources", "ImportResult"]

#: Every format ``toolsel import --from`` takes (``auto``: detect each input).
ALL_FORMATS = (*FORMATS, *BENCHMARK_FORMATS)


@dataclass
class ImportResult:
    """One import: the registry, the labeled query records, and what was read from each input.

    ``read`` has one ``(path, line)`` per file read; ``renamed`` the qualified names;
    ``resolved`` the names whose several definitions were resolved (most frequent kept);
    ``normalized`` one line per kind of schema change; ``notes`` anything else to say.
    """

    registry: Registry
    queries: list[dict[str, Any]]
    read: list[tuple[Path, str]] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    normalized: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _first_record(path: Path) -> Any:
    records = read_records(path)
    return records[0][1] if records else None


def detect_format(path: str | Path) -> str:
    """The format of one input, from its content (see :data:`ALL_FORMATS`).

    A folder with ``corpus.jsonl`` is ``beir``; a CSV with ``Query`` and ``Tool`` columns or a
    ``{name: description}`` object is ``metatool``; otherwise the first record decides:
    ``question``/``function``, ``question``/``involved_classes`` (BFCL's multi-turn
    categories), ``ground_truth``, or an ``id`` in a file named ``BFCL_v<N>_*`` → ``bfcl``; ``api_list`` → ``toolbench``;
    ``query`` and ``tool`` → ``metatool``; ``inputSchema`` or a ``tools/list`` result →
    ``mcp``; ``input_schema`` → ``anthropic``; ``function``/``parameters``/``type:
    function`` → ``openai``. Raises :class:`DataError` when nothing matches (give ``--from``).
    """
    path = Path(path)
    if path.is_dir():
        if (path / "corpus.jsonl").is_file():
            return "beir"
        raise DataError("is a folder without corpus.jsonl; the only folder format is a BEIR "
                        "folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)", path=path)
    if path.suffix.lower() == ".csv":
        if metatool_kind(path) == "csv":
            return "metatool"
        raise DataError("a CSV file without Query and Tool columns; the only CSV format is "
                        "MetaTool's queries", path=path)
    doc = _read_json(path)
    if isinstance(doc, Mapping):
        inner = doc.get("result", doc)
        if isinstance(inner, Mapping) and isinstance(inner.get("tools"), list):
            # a tools list: the format its first tool looks like, MCP by default
            return detect_tool_format(inner["tools"][0] if inner["tools"] else None) or "mcp"
        if metatool_kind(path, doc) == "tools":
            return "metatool"
    if metatool_kind(path, doc) == "json":
        return "metatool"
    first = _first_record(path)
    if isinstance(first, Mapping):
        keys = set(first)
        if ({"question", "function"} <= keys or "ground_truth" in keys
                or {"question", "involved_classes"} <= keys
                or ("id" in keys and re.match(r"BFCL_v\d+_", path.name))):
            return "bfcl"
        if "api_list" in keys:
            return "toolbench"
        found = detect_tool_format(first)
        if found:
            return found
    raise DataError("cannot tell its format from the content; give it with --from (one of "
                    f"{', '.join(ALL_FORMATS)})", path=path)


def _group_name(fmt: str, path: Path) -> str:
    return path.name if fmt == "beir" else fmt


def _input_formats(paths: list[Path], formats: Sequence[str] | str | None,
                   servers: Sequence[str] | None) -> list[str]:
    """Each input's format (given, or detected for ``auto``), after checking the counts of
    formats and servers, the format names and that every input exists."""
    if formats is None or isinstance(formats, str):
        formats = [formats or "auto"] * len(paths)
    formats = list(formats)
    if len(formats) == 1 and len(paths) > 1:
        formats = formats * len(paths)
    if len(formats) != len(paths):
        raise ValueError(f"got {len(formats)} --from formats for {len(paths)} inputs; give one "
                         "for all, or one per input in the same order")
    if servers and len(servers) != len(paths):
        raise ValueError(f"got {len(servers)} --server names for {len(paths)} inputs; give one "
                         "per input, in the same order")
    for fmt in formats:
        if fmt not in (*ALL_FORMATS, "auto"):
            raise ValueError(f"unknown format {fmt!r}; expected one of "
                             f"{', '.join(ALL_FORMATS)} or auto")
    for path in paths:
        if not path.exists():
            raise DataError("file not found", path=path)
    return [detect_format(p) if f == "auto" else f for p, f in zip(paths, formats)]


def _read_inputs(paths: list[Path], fmts: list[str], servers: Sequence[str] | None,
                 out: ImportResult, *, strict: bool, normalizer: SchemaNormalizer
                 ) -> tuple[dict[str, tuple[list[Tool], list[dict[str, Any]]]],
                            dict[str, list[Path]]]:
    """Tool files and BEIR folders read into their groups (in order); the files of each other
    benchmark format collected, their group's place kept, to be read together."""
    # (group, tools, queries) in the order of first appearance
    groups: dict[str, tuple[list[Tool], list[dict[str, Any]]]] = {}
    bench: dict[str, list[Path]] = {}
    for i, (path, fmt) in enumerate(zip(paths, fmts)):
        if fmt in FORMATS:
            tools, server = _read_tool_file(path, fmt, servers[i] if servers else None,
                                            strict=strict, normalizer=normalizer)
            if server in groups:
                raise DataError(f"server {server!r} is given twice; name each file's server "
                                "with --server (one per file)", path=path, field="server")
            groups[server] = (tools, [])
            out.read.append((path, f"{fmt}: {len(tools)} tools"))
        elif fmt == "beir":
            if path.name in groups:
                raise DataError(f"a second input named {path.name!r}; BEIR folders are "
                                "grouped by folder name", path=path)
            got = from_beir(path)
            groups[path.name] = (got.tools, got.queries)
            out.read.extend(got.read)
            out.notes.extend(f"{path}: {n}" for n in got.notes)
        else:
            if fmt not in bench:
                groups[fmt] = ([], [])  # keeps the group's place in the order
            bench.setdefault(fmt, []).append(path)
    return groups, bench


def _read_benchmarks(bench: dict[str, list[Path]],
                     groups: dict[str, tuple[list[Tool], list[dict[str, Any]]]],
                     out: ImportResult, *, strict: bool,
                     normalizer: SchemaNormalizer) -> None:
    """Each benchmark format's files read together into its group, names then checked."""
    for fmt, files in bench.items():
        if fmt == "bfcl":
            got = from_bfcl(files, strict=strict, normalizer=normalizer)
        elif fmt == "toolbench":
            got = from_toolbench(files, strict=strict, normalizer=normalizer)
        else:
            got = from_metatool(files)
        groups[fmt] = (got.tools, got.queries)
        out.read.extend(got.read)
        out.resolved.extend(got.resolved)
        out.notes.extend(got.notes)
    for fmt, files in bench.items():
        check_name_syntax([(f"tool {t.name!r}", t.name) for t in groups[fmt][0]],
                          path=", ".join(map(str, files)), strict=strict)


def import_sources(paths: Sequence[str | Path], formats: Sequence[str] | str | None = None,
                   *, servers: Sequence[str] | None = None,
                   strict: bool = False) -> ImportResult:
    """Read every input into one registry and its labeled queries (see the module docstring).

    Parameters
    ----------
    paths : files (and BEIR folders), in the order the registry keeps
    formats : one format for every input, one per input, or ``None``/``"auto"`` to detect
        each (:func:`detect_format`); ``"auto"`` may also stand for one input in a list
    servers : a server name per input (MCP, OpenAI and Anthropic inputs use it)
    strict : refuse what is otherwise normalized with a warning (see
        :class:`~toolsel.integrations.schemas.SchemaNormalizer`), MCP tools without a
        description, and names the OpenAI or Anthropic APIs refuse

    Every query record is validated against the merged registry
    (:func:`~toolsel.data.query_from_record`) before anything is returned.
    """
    paths = [Path(p) for p in paths]
    if not paths:
        raise ValueError("no input files")
    fmts = _input_formats(paths, formats, servers)
    normalizer = SchemaNormalizer(strict=strict)
    out = ImportResult(Registry([]), [])
    groups, bench = _read_inputs(paths, fmts, servers, out, strict=strict,
                                 normalizer=normalizer)
    _read_benchmarks(bench, groups, out, strict=strict, normalizer=normalizer)
    normalizer.warn()
    out.normalized = normalizer.summary()
    out.registry, out.queries, out.renamed = _merge(groups, strict=strict)
    return out


def _read_tool_file(path: Path, fmt: str, given: str | None, *, strict: bool,
                    normalizer: SchemaNormalizer) -> tuple[list[Tool], str]:
    tools, server, located = read_tool_file(path, fmt, given, strict=strict,
                                            normalizer=normalizer)
    seen: set[str] = set()
    for (loc, _), t in zip(located, tools):
        if t.name in seen:
            raise DataError(f"duplicate tool name {t.name!r}", path=path, location=loc,
                            field="name")
        seen.add(t.name)
    return tools, server


def _merge(groups: Mapping[str, tuple[list[Tool], list[dict[str, Any]]]], *,
           strict: bool = False) -> tuple[Registry, list[dict[str, Any]], list[str]]:
    items = [(g, tools) for g, (tools, _) in groups.items()]
    registry = merge_servers(items, strict=strict)
    owners: dict[str, int] = {}
    for _, tools in items:
        for t in tools:
            owners[t.name] = owners.get(t.name, 0) + 1
    id_owners: dict[str, int] = {}
    for _, queries in groups.values():
        for q in queries:
            id_owners[q["id"]] = id_owners.get(q["id"], 0) + 1
    queries: list[dict[str, Any]] = []
    for group, (_, recs) in groups.items():
        for q in recs:
            q = dict(q)
            q.pop("_loc", None)
            rename = {n: f"{group}{SEPARATOR}{n}" for n in q["expected"] if owners.get(n, 0) > 1}
            if rename:
                q["expected"] = [rename.get(n, n) for n in q["expected"]]
                if "grades" in q:
                    q["grades"] = {rename.get(n, n): g for n, g in q["grades"].items()}
            if id_owners[q["id"]] > 1:
                q["id"] = f"{group}{SEPARATOR}{q['id']}"
            queries.append(q)
    for q in queries:  # what toolsel report will read: the same checks, now
        query_from_record(q, loc=f"query {q['id']!r}", registry=registry)
    renamed = [t.name for t in registry if "original_name" in t.metadata]
    return registry, queries, renamed


def queries_of(result: ImportResult) -> list[Query]:
    """The labeled queries of an import as :class:`~toolsel.data.Query` values."""
    return [query_from_record(q, registry=result.registry) for q in result.queries]
