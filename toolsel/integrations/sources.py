"""Several tool sources of different formats in one import: detect, read, merge, label.

:func:`import_sources` reads any mix of MCP / OpenAI / Anthropic tool files and public
benchmark files (:mod:`toolsel.integrations.benchmarks`) into one registry plus the labeled
queries the benchmarks carry. Each input's format is given or detected (:func:`detect_format`).

Every format is one entry of one table (:func:`import_formats`): a tool-file format is an
entry of :data:`~toolsel.integrations.importers.TOOL_FORMATS` (records → tools, one server
per file), any other an :class:`ImportFormat` in :data:`IMPORT_FORMATS` (its own detection
and reader). ``toolsel import``, its ``--from`` choices and its detection read that table.

Groups and clashing names. MCP, OpenAI and Anthropic files are one group each (a server: the
``--server`` name, else the file's server name or stem, as :func:`import_files` does); the
files of one benchmark format are one group together (``bfcl``, ``toolbench``,
``metatool``), and each BEIR folder is one (its folder name). A name two groups define is
qualified on both as ``{group}__{name}`` (:func:`~toolsel.integrations.importers.merge_servers`)
and every query of those groups is rewritten to the new name; a query id two groups use is
prefixed the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..data import (DataError, Registry, Tool, UnknownShapeError, check_name_syntax,
                    describe_json, query_from_record, read_records)
from .benchmarks import BenchmarkImport, from_beir, from_bfcl, from_metatool, from_toolbench, \
    is_bfcl_folder, is_bfcl_name, is_bfcl_record, metatool_kind
from .importers import (SEPARATOR, TOOL_FORMATS, ToolFormat, detect_tool_format, from_mcp,
                        merge_servers, read_json_or_none, read_server_list, read_tool_file,
                        server_list)
from .schemas import SchemaNormalizer

__all__ = ["IMPORT_FORMATS", "ImportFormat", "Probe", "import_formats", "detect_format",
           "known_formats",
           "import_sources", "ImportResult"]


@dataclass
class ImportResult:
    """One import: the registry, the labeled query records, and what was read from each input.

    ``read`` has one ``(path, line)`` per file read; ``renamed`` the qualified names;
    ``resolved`` the names whose several definitions were resolved (most frequent kept);
    ``normalized`` one line per kind of schema change; ``notes`` anything else to say;
    ``failed`` one line per live server that gave no tools (it is left out).
    """

    registry: Registry
    queries: list[dict[str, Any]]
    read: list[tuple[Path, str]] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    normalized: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


class Probe:
    """What format detection looks at in one input, each part read once when first asked.

    ``path``; ``doc``: the parsed JSON document (``None`` for a folder, a CSV file, JSONL or
    broken JSON); ``tools``: the tools array of a ``{"tools": [...]}`` document or a
    ``tools/list`` result, else ``None``; ``first``: the first tool of that array, else the
    file's first record (``None`` for a folder or a CSV file).
    """

    def __init__(self, path: Path):
        self.path = path
        self.is_csv = path.suffix.lower() == ".csv"

    @cached_property
    def doc(self) -> Any:
        return None if self.path.is_dir() or self.is_csv else read_json_or_none(self.path)

    @cached_property
    def tools(self) -> list[Any] | None:
        inner = self.doc.get("result", self.doc) if isinstance(self.doc, Mapping) else None
        return inner["tools"] if isinstance(inner, Mapping) and isinstance(
            inner.get("tools"), list) else None

    @cached_property
    def first(self) -> Any:
        if self.tools is not None:
            return self.tools[0] if self.tools else None
        if self.path.is_dir() or self.is_csv:
            return None
        try:
            records = read_records(self.path)
        except UnknownShapeError:  # valid JSON no reader takes: detection says so
            return None
        return records[0][1] if records else None


#: One input of a format: its place among all inputs, its path, its ``--server`` name.
Input = tuple[int, Path, "str | None"]
#: One group of the merged registry: the place of its first input, its name, tools, queries.
Group = tuple[int, str, list[Tool], list[dict[str, Any]]]


@dataclass(frozen=True)
class ImportFormat:
    """A format ``toolsel import`` reads.

    ``detect(probe)``: whether an input is in this format (:class:`Probe`); formats are tried
    in table order. ``read(inputs, out, strict=, normalizer=)``: every input given in this
    format (:data:`Input`) → its groups (:data:`Group`), adding what it read to ``out`` (an
    :class:`ImportResult`). ``help``: one line for ``--from``'s help and errors. ``live``:
    the inputs are running servers, not files (command lines, URLs, config files: kept as
    given, never detected, read with ``timeout=`` seconds per server).
    Adding a format is one entry in :data:`IMPORT_FORMATS` and its tests.
    """

    name: str
    detect: Callable[[Probe], bool]
    read: Callable[..., list[Group]]
    help: str
    live: bool = False


def _benchmark(name: str, reader: Callable[..., BenchmarkImport], *, options: bool = True
               ) -> Callable[..., list[Group]]:
    """A reader of a benchmark whose files are read together into one group named ``name``."""
    def read(inputs: list[Input], out: ImportResult, *, strict: bool,
             normalizer: SchemaNormalizer) -> list[Group]:
        files = [path for _, path, _ in inputs]
        got = (reader(files, strict=strict, normalizer=normalizer) if options
               else reader(files))
        out.read.extend(got.read)
        out.resolved.extend(got.resolved)
        out.notes.extend(got.notes)
        check_name_syntax([(f"tool {t.name!r}", t.name) for t in got.tools],
                          path=", ".join(map(str, files)), strict=strict)
        return [(inputs[0][0], name, got.tools, got.queries)]
    return read


def _read_beir(inputs: list[Input], out: ImportResult, **_: Any) -> list[Group]:
    groups = []
    for i, path, _ in inputs:
        got = from_beir(path)
        out.read.extend(got.read)
        out.notes.extend(f"{path}: {n}" for n in got.notes)
        groups.append((i, path.name, got.tools, got.queries))
    return groups


def _read_live(inputs: list[Input], out: ImportResult, *, strict: bool,
               normalizer: SchemaNormalizer, timeout: float) -> list[Group]:
    """Live MCP servers (:mod:`toolsel.integrations.mcp_servers`): each one's tools read over
    MCP as a ``tools/list`` dump is; a server that gives none is one line in ``out.read``
    (and in ``out.failed``), the others are imported."""
    from .mcp_servers import describe_listing, list_servers, server_specs
    specs, owner = [], []
    for i, text, given in inputs:
        found, notes = server_specs([str(text)], [given or ""])
        specs.extend(found)
        owner.extend([i] * len(found))
        out.notes.extend(notes)
    groups = []
    for i, listing in zip(owner, list_servers(specs, timeout)):
        out.read.append((listing.spec.shown, describe_listing(listing)))
        if not listing.ok:
            out.failed.append(f"{listing.spec.shown}: {listing.error}")
            continue
        if not listing.tools:
            out.notes.append(f"server {listing.name!r} ({listing.spec.shown}) lists no tools")
            continue
        where = f"server {listing.name!r} ({listing.spec.shown})"
        tools = from_mcp(listing.tools, server=listing.name, path=where, strict=strict,
                         normalizer=normalizer)
        check_name_syntax([(f"tool {t.name!r}", t.name) for t in tools], path=where,
                          strict=strict)
        groups.append((i, listing.name, tools, []))
    return groups


def _tool_file_format(spec: ToolFormat) -> ImportFormat:
    """The :class:`ImportFormat` of a tool-file format: one group per file, its server."""
    def read(inputs: list[Input], out: ImportResult, *, strict: bool,
             normalizer: SchemaNormalizer) -> list[Group]:
        groups = []
        for i, path, given in inputs:
            listed = read_server_list(path, spec.name, given=given, strict=strict,
                                      normalizer=normalizer)
            if listed is not None:  # several servers in one file: one group each
                n_tools = sum(len(tools) for _, tools in listed[0])
                out.read.append((path, f"{spec.name} server list: {len(listed[0])} servers, "
                                       f"{n_tools} tools"))
                out.notes.extend(f"{path}: {note}" for note in listed[1])
                groups.extend((i, server, tools, []) for server, tools in listed[0])
                continue
            tools, server, _ = read_tool_file(path, spec.name, given, strict=strict,
                                              normalizer=normalizer)
            out.read.append((path, f"{spec.name}: {len(tools)} tools"))
            groups.append((i, server, tools, []))
        return groups

    def detect(probe: Probe) -> bool:
        servers = server_list(probe.doc)
        if servers is not None:  # a server list: the format its first tool looks like
            first = next((tools[0] for _, _, tools, _ in servers if tools), None)
            found = detect_tool_format(first)
            return found == spec.name or (spec.server_in_file and found is None)
        if probe.tools is not None:  # a tools list: the format its first tool looks like
            return detect_tool_format(probe.first) == spec.name or (
                spec.server_in_file and detect_tool_format(probe.first) is None)
        return isinstance(probe.first, Mapping) and spec.matches(probe.first)
    return ImportFormat(spec.name, detect, read, spec.help)


#: The formats that are not tool files, in detection order (before every tool-file format).
IMPORT_FORMATS: dict[str, ImportFormat] = {f.name: f for f in (
    ImportFormat("beir", lambda p: (p.path / "corpus.jsonl").is_file(), _read_beir,
                 "a folder with corpus.jsonl, queries.jsonl, qrels/<split>.tsv"),
    ImportFormat("metatool", lambda p: p.tools is None and (
        metatool_kind(p.path, p.doc) is not None), _benchmark("metatool", from_metatool,
                                                               options=False),
                 "a {tool: description} JSON plus Query,Tool CSV or {query, tool} JSON files"),
    # a file named BFCL_v<N>_* of another shape (v4's format_sensitivity) is BFCL's: skipped
    ImportFormat("bfcl", lambda p: is_bfcl_folder(p.path) if p.path.is_dir() else (
        p.tools is None and (is_bfcl_record(p.first, p.path) or (
            p.doc is not None and is_bfcl_name(p.path)))), _benchmark("bfcl", from_bfcl),
                 "BFCL's data folder, or its question and possible_answer files"),
    ImportFormat("toolbench", lambda p: p.tools is None and isinstance(p.first, Mapping)
                 and "api_list" in p.first, _benchmark("toolbench", from_toolbench),
                 "ToolBench query files (api_list)"),
    # live servers are started only when asked for by name: never detected from a file
    ImportFormat("mcp-server", lambda p: False, _read_live,
                 "running MCP servers, read over MCP: a command line (stdio), an http(s) URL "
                 "(streamable HTTP) or a client config file (mcpServers)", live=True),
)}


def import_formats() -> dict[str, ImportFormat]:
    """Every format ``toolsel import`` reads, by name, in detection order: those of
    :data:`IMPORT_FORMATS`, then one per tool-file format of
    :data:`~toolsel.integrations.importers.TOOL_FORMATS`."""
    return {**IMPORT_FORMATS, **{n: _tool_file_format(f) for n, f in TOOL_FORMATS.items()}}


def detect_format(path: str | Path) -> str:
    """The format of one input, from its content: the first of :func:`import_formats` whose
    ``detect`` accepts it. Raises :class:`DataError` when none does (give ``--from``)."""
    probe = Probe(Path(path))
    formats = import_formats()
    found = next((name for name, f in formats.items() if f.detect(probe)), None)
    if found is None:
        raise DataError(_undetected(probe), path=probe.path)
    return found


def known_formats() -> str:
    """The formats ``toolsel import`` reads, each with its one-line help, for messages."""
    return "; ".join(f"{n} ({f.help})" for n, f in import_formats().items())


def _undetected(probe: Probe) -> str:
    """Why no format takes an input: what it holds (valid JSON of an unknown shape: its
    top-level keys) and the formats that were tried."""
    from .mcp_servers import is_client_config
    if is_client_config(probe.doc):
        return ("an MCP client config (servers to start, no tools listed): give --from "
                "mcp-server to start its servers and read their tools over MCP")
    if probe.doc is not None:
        return (f"valid JSON of an unknown shape: {describe_json(probe.doc)}; it is none of "
                f"the known formats: {known_formats()}")
    if isinstance(probe.first, Mapping):
        return (f"JSON lines of an unknown shape: the first is {describe_json(probe.first)}; "
                f"they are none of the known formats: {known_formats()}")
    what = "a folder" if probe.path.is_dir() else "a CSV file" if probe.is_csv else "a file"
    return (f"{what} whose format cannot be told from its content; give it with --from, one "
            f"of: {known_formats()}")


def _input_formats(paths: list[Any], formats: Sequence[str] | str | None,
                   servers: Sequence[str] | None, known: Sequence[str]) -> list[str]:
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
        if fmt not in (*known, "auto"):
            raise ValueError(f"unknown format {fmt!r}; expected one of "
                             f"{', '.join(known)} or auto")
    live = {n for n, f in import_formats().items() if f.live}
    for path, fmt in zip(paths, formats):
        if fmt not in live and not Path(path).exists():
            raise DataError("file not found", path=path)
    return [detect_format(p) if f == "auto" else f for p, f in zip(paths, formats)]


def _read_format(fmt: ImportFormat, inputs: list[Input], out: ImportResult, *, strict: bool,
                 normalizer: SchemaNormalizer, timeout: float) -> list[Group]:
    """One format's inputs read; valid JSON of a shape it does not read is named as such,
    with the formats that exist (never "invalid JSON")."""
    try:
        if fmt.live:
            return fmt.read(inputs, out, strict=strict, normalizer=normalizer, timeout=timeout)
        return fmt.read(inputs, out, strict=strict, normalizer=normalizer)
    except UnknownShapeError as exc:
        raise DataError(f"valid JSON of an unknown shape for --from {fmt.name}: "
                        f"{describe_json(exc.doc)}; the known formats: {known_formats()}",
                        path=exc.path) from None


def _read_groups(paths: list[Any], fmts: list[str], servers: Sequence[str] | None,
                 out: ImportResult, *, strict: bool, normalizer: SchemaNormalizer,
                 timeout: float) -> dict[str, tuple[list[Tool], list[dict[str, Any]]]]:
    """Every format's inputs read by its entry; the groups in the order of their first input
    (a server, a BEIR folder, a benchmark format); a group name given twice is an error."""
    formats = import_formats()
    by_format: dict[str, list[Input]] = {}
    for i, (path, fmt) in enumerate(zip(paths, fmts)):
        by_format.setdefault(fmt, []).append((i, path, servers[i] if servers else None))
    read = sorted((g for fmt, inputs in by_format.items()
                   for g in _read_format(formats[fmt], inputs, out, strict=strict,
                                         normalizer=normalizer, timeout=timeout)),
                  key=lambda g: g[0])
    groups: dict[str, tuple[list[Tool], list[dict[str, Any]]]] = {}
    for i, name, tools, queries in read:
        if name in groups:
            raise DataError(f"the group {name!r} (a server, a BEIR folder's name or a "
                            "benchmark format) is given twice; name each tool file's or live "
                            "server's server with --server (one per input)", path=paths[i],
                            field="server")
        groups[name] = (tools, queries)
    return groups


def import_sources(paths: Sequence[str | Path], formats: Sequence[str] | str | None = None,
                   *, servers: Sequence[str] | None = None,
                   strict: bool = False, timeout: float | None = None) -> ImportResult:
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
    timeout : seconds each live server (``mcp-server`` inputs: command lines, URLs, client
        configs, kept as given) has to start and list its tools (default
        :data:`~toolsel.integrations.mcp_servers.DEFAULT_TIMEOUT`)

    Every query record is validated against the merged registry
    (:func:`~toolsel.data.query_from_record`) before anything is returned.
    """
    from .mcp_servers import DEFAULT_TIMEOUT
    if not paths:
        raise ValueError("no input files")
    fmts = _input_formats(list(paths), formats, servers, list(import_formats()))
    live = {n for n, f in import_formats().items() if f.live}
    # a live server's command line or URL is kept as given (a Path would fold its '//')
    paths = [p if f in live else Path(p) for p, f in zip(paths, fmts)]
    normalizer = SchemaNormalizer(strict=strict)
    out = ImportResult(Registry([]), [])
    groups = _read_groups(paths, fmts, servers, out, strict=strict, normalizer=normalizer,
                          timeout=DEFAULT_TIMEOUT if timeout is None else timeout)
    normalizer.warn()
    out.normalized = normalizer.summary()
    out.registry, out.queries, out.renamed = _merge(groups, strict=strict)
    return out


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
