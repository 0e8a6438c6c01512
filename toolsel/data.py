"""Tools, registries and labeled queries: the values, and loading them from files with validation.

Every loader reads the whole file, validates every record, and only then returns: a bad file
raises :class:`DataError` naming the file, the line (JSONL) or array index (JSON), the tool or
query, the field, and what was expected. Nothing is written.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "DataError",
    "Tool",
    "Query",
    "Registry",
    "SCHEMA_KEYS",
    "load_registry",
    "load_queries",
    "read_records",
    "text_field",
    "load_unique",
    "suggest_names",
]

#: Keys accepted for a tool's JSON-Schema parameters block, in order of preference
#: (OpenAI ``parameters``, Anthropic ``input_schema``, MCP ``inputSchema``).
SCHEMA_KEYS = ("parameters", "input_schema", "inputSchema")


class DataError(ValueError):
    """A registry, query or other data file (or in-memory record) is invalid.

    Attributes ``path``, ``location`` (e.g. ``"line 7"``), ``field`` and ``reason`` carry the
    parts of the message, so callers can report or test them separately.
    """

    def __init__(self, reason: str, *, path: str | Path | None = None,
                 location: str | None = None, field: str | None = None):
        self.path = None if path is None else str(path)
        self.location = location
        self.field = field
        self.reason = reason
        where = ", ".join(p for p in (self.path, location) if p)
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{reason}" if where else f"{what}{reason}")


@dataclass(frozen=True, eq=True)
class Tool:
    """A tool as the model sees it: a name, a description, optionally a JSON-Schema.

    ``Tool("calculator", "Evaluate a basic arithmetic expression")`` is all the article's
    algorithm needs. ``parameters`` is the JSON Schema of the arguments (an object schema) and
    ``metadata`` anything else a registry carries (``domain``, ``server``, ``always_include``,
    MCP annotations...). Tools are values: equal when all fields are equal, hashed by name and
    description. Treat ``parameters`` and ``metadata`` as read-only.
    """

    name: str
    description: str
    parameters: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.name, self.description))

    @property
    def domain(self) -> str | None:
        """The tool's domain or server, from metadata (``domain``, else ``server``)."""
        value = self.metadata.get("domain", self.metadata.get("server"))
        return None if value is None else str(value)

    @property
    def always_include(self) -> bool:
        """True when the registry marks this tool as always sent (outside the filter)."""
        return bool(self.metadata.get("always_include", False))

    def definition(self) -> dict[str, Any]:
        """The function definition sent to a model: name, description and parameters."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        out["parameters"] = dict(self.parameters) if self.parameters is not None else {
            "type": "object", "properties": {}}
        return out

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready record that :func:`load_registry` reads back to an equal tool."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        out.update(self.metadata)
        if self.parameters is not None:
            out["parameters"] = self.parameters
        return out


@dataclass(frozen=True)
class Query:
    """A labeled request: its text and the tool names that must be available to serve it.

    ``expected`` holds one or more names. ``search_term`` is an optional short phrase a model
    would pass to ``discover``; ``split`` is ``"dev"`` or ``"test"`` when the set is split.
    """

    id: str
    query: str
    expected: tuple[str, ...]
    domain: str | None = None
    phrasing: str | None = None
    tags: tuple[str, ...] = ()
    search_term: str | None = None
    split: str | None = None
    category: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __hash__(self) -> int:
        return hash((self.id, self.query, self.expected))


class Registry(Sequence[Tool]):
    """An ordered, name-unique sequence of tools (registry order breaks every tie).

    Build one from tools (``Registry(tools)``) or a file (:func:`load_registry`).
    """

    def __init__(self, tools: Iterable[Tool], *, source: str | Path | None = None):
        self._tools = tuple(tools)
        self.source = None if source is None else str(source)
        self._index: dict[str, int] = {}
        for i, tool in enumerate(self._tools):
            if not isinstance(tool, Tool):
                raise DataError(f"expected a Tool, got {type(tool).__name__}",
                                path=self.source, location=f"item {i}")
            if tool.name in self._index:
                raise DataError(f"duplicate tool name {tool.name!r} (first at item "
                                f"{self._index[tool.name]})", path=self.source,
                                location=f"item {i}", field="name")
            self._index[tool.name] = i

    def __len__(self) -> int:
        return len(self._tools)

    def __getitem__(self, item):  # type: ignore[override]
        if isinstance(item, slice):
            return Registry(self._tools[item])
        return self._tools[item]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._index
        return item in self._tools

    def __repr__(self) -> str:
        src = f", source={self.source!r}" if self.source else ""
        return f"Registry({len(self)} tools{src})"

    @property
    def names(self) -> list[str]:
        """Tool names in registry order."""
        return [t.name for t in self._tools]

    def index(self, name: str, *args) -> int:  # type: ignore[override]
        """Position of the tool called ``name``; :class:`KeyError` with suggestions if absent."""
        if isinstance(name, Tool):
            name = name.name
        try:
            return self._index[name]
        except KeyError:
            hint = suggest_names(name, self.names)
            raise KeyError(f"no tool named {name!r} in the registry{hint}") from None

    def get(self, name: str) -> Tool | None:
        i = self._index.get(name)
        return None if i is None else self._tools[i]

    @property
    def always_include(self) -> frozenset[str]:
        """Names the registry marks ``always_include``."""
        return frozenset(t.name for t in self._tools if t.always_include)

    def check_names(self, names: Iterable[str], *, what: str = "name") -> frozenset[str]:
        """Return ``names`` as a frozenset, raising :class:`DataError` for any not here."""
        names = frozenset(names)
        for name in sorted(names):
            if name not in self._index:
                raise DataError(f"{what} {name!r} is not a tool in the registry"
                                f"{suggest_names(name, self.names)}", path=self.source)
        return names


def suggest_names(name: str, candidates: Sequence[str], n: int = 3) -> str:
    """A ``"; did you mean ...?"`` hint with the closest candidate names, or ``""``."""
    close = difflib.get_close_matches(name, candidates, n=n, cutoff=0.5)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered),
                                                               n=n, cutoff=0.4)]
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


# --------------------------------------------------------------------------------------------
# reading records


def read_records(path: str | Path) -> list[tuple[str, Any]]:
    """Read a JSON array (or an object holding one under ``tools``) or JSONL file.

    Returns ``(location, record)`` pairs where location is ``"line N"`` (JSONL) or
    ``"item N"`` (JSON array, 0-based). Raises :class:`DataError` on unreadable input.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=path) from None
    stripped = text.lstrip()
    if not stripped:
        raise DataError("file is empty", path=path)
    data: Any = None
    if stripped[0] == "[" or (stripped[0] == "{" and path.suffix.lower() not in (".jsonl",
                                                                                  ".ndjson")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            # a JSONL file starts with "{" too: only a lone document that fails is an error
            if stripped[0] == "[" or exc.msg != "Extra data":
                raise DataError(f"invalid JSON: {exc.msg}", path=path,
                                location=f"line {exc.lineno}, column {exc.colno}") from None
            data = None
    if isinstance(data, dict):
        # MCP tools/list results and API requests keep the array under "tools"
        inner = data.get("result", data)
        if isinstance(inner, dict) and isinstance(inner.get("tools"), list):
            data = inner["tools"]
        else:  # a one-record JSONL file: read it as lines, for line numbers
            data = None
    if data is not None:
        if not isinstance(data, list):
            raise DataError("expected a JSON array of records (or JSONL, one object a line)",
                            path=path)
        return [(f"item {i}", rec) for i, rec in enumerate(data)]
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            out.append((f"line {lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path,
                            location=f"line {lineno}") from None
    return out


def _text_field(rec: Mapping[str, Any], key: str, *, path, loc, required=True) -> str | None:
    if key not in rec or rec[key] is None:
        if required:
            raise DataError("missing; expected a non-empty string", path=path, location=loc,
                            field=key)
        return None
    value = rec[key]
    if not isinstance(value, str):
        raise DataError(f"expected a string, got {type(value).__name__}", path=path,
                        location=loc, field=key)
    if not value.strip():
        raise DataError("is empty; expected a non-empty string", path=path, location=loc,
                        field=key)
    return value


def tool_from_record(rec: Any, *, path=None, loc: str | None = None) -> Tool:
    """Build a :class:`Tool` from one registry record, validating every field.

    Accepts ``parameters``, ``input_schema`` or ``inputSchema`` for the schema (exactly one),
    and the OpenAI wrapper ``{"type": "function", "function": {...}}``. Other keys become
    metadata.
    """
    if isinstance(rec, Mapping) and rec.get("type") == "function" and isinstance(
            rec.get("function"), Mapping):
        rec = rec["function"]
    if not isinstance(rec, Mapping):
        raise DataError(f"expected a tool object, got {type(rec).__name__}", path=path,
                        location=loc)
    name = _text_field(rec, "name", path=path, loc=loc)
    loc = f"{loc} (tool {name!r})" if loc else f"tool {name!r}"
    if name != name.strip():
        raise DataError(f"name {name!r} has leading or trailing whitespace", path=path,
                        location=loc, field="name")
    description = _text_field(rec, "description", path=path, loc=loc)
    # a null schema (some dumps write "parameters": null) means "no parameters"
    keys = [k for k in SCHEMA_KEYS if rec.get(k) is not None]
    if len(keys) > 1:
        raise DataError(f"has both {keys[0]!r} and {keys[1]!r}; give the schema once",
                        path=path, location=loc, field=keys[1])
    parameters = None
    if keys:
        parameters = rec[keys[0]]
        _check_schema(parameters, path=path, loc=loc, field=keys[0])
    metadata = {k: v for k, v in rec.items() if k not in ("name", "description", *SCHEMA_KEYS)}
    if "always_include" in metadata and not isinstance(metadata["always_include"], bool):
        raise DataError("expected true or false", path=path, location=loc,
                        field="always_include")
    for key in ("domain", "server"):
        if key in metadata and not isinstance(metadata[key], str):
            raise DataError(f"expected a string, got {type(metadata[key]).__name__}",
                            path=path, location=loc, field=key)
    return Tool(name, description, parameters, metadata)


def _check_schema(schema: Any, *, path, loc, field: str) -> None:
    if not isinstance(schema, Mapping):
        raise DataError(f"expected a JSON Schema object, got {type(schema).__name__}",
                        path=path, location=loc, field=field)
    kind = schema.get("type", "object")
    if kind != "object":
        raise DataError(f"expected a schema of type 'object', got type {kind!r}", path=path,
                        location=loc, field=field)
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        raise DataError(f"'properties' must be an object, got {type(props).__name__}",
                        path=path, location=loc, field=field)
    for pname, pschema in props.items():
        if not isinstance(pschema, Mapping):
            raise DataError(f"property {pname!r} must be a schema object, got "
                            f"{type(pschema).__name__}", path=path, location=loc,
                            field=f"{field}.properties.{pname}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise DataError("'required' must be a list of property names", path=path,
                        location=loc, field=f"{field}.required")
    missing = [r for r in required if r not in props]
    if missing:
        raise DataError(f"'required' names {missing[0]!r}, which is not in 'properties'",
                        path=path, location=loc, field=f"{field}.required")


def load_registry(path: str | Path) -> Registry:
    """Load and validate a registry file: a JSON array or JSONL of tool objects.

    Each object needs ``name`` and ``description``; the schema may be under ``parameters``,
    ``input_schema`` or ``inputSchema``; OpenAI ``{"type": "function", "function": ...}``
    wrappers and a top-level ``{"tools": [...]}`` object (MCP ``tools/list``) are unwrapped.
    """
    tools = load_unique(path, tool_from_record, plural="tools", label="tool name", key="name")
    return Registry(tools, source=path)


def load_unique(path: str | Path, build, *, plural: str, label: str, key: str = "id",
                **build_kwargs: Any) -> list:
    """Read every record of ``path``, ``build(rec, path=, loc=, **build_kwargs)`` each, and
    refuse an empty file or two records with the same ``key`` attribute.

    The shared loop of every labeled-file loader: errors name the file, the record's line (or
    array item), the field ``key`` and where the first of a duplicate pair stands.
    """
    records = read_records(path)
    if not records:
        raise DataError(f"no {plural} in the file", path=path)
    out: list = []
    seen: dict[Any, str] = {}
    for loc, rec in records:
        item = build(rec, path=path, loc=loc, **build_kwargs)
        value = getattr(item, key)
        if value in seen:
            raise DataError(f"duplicate {label} {value!r} (first at {seen[value]})", path=path,
                            location=loc, field=key)
        seen[value] = loc
        out.append(item)
    return out


_QUERY_KEYS = {"id", "query", "expected", "domain", "phrasing", "tags", "search_term", "split",
               "category"}
PHRASINGS = ("direct", "indirect")
SPLITS = ("dev", "test")


def query_from_record(rec: Any, *, path=None, loc: str | None = None,
                      registry: Registry | None = None) -> Query:
    """Build a :class:`Query` from one record; check ``expected`` against ``registry``."""
    if not isinstance(rec, Mapping):
        raise DataError(f"expected a query object, got {type(rec).__name__}", path=path,
                        location=loc)
    qid = rec.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        raise DataError("missing or empty; expected a string or integer id", path=path,
                        location=loc, field="id")
    loc = f"{loc} (query {qid!r})" if loc else f"query {qid!r}"
    text = _text_field(rec, "query", path=path, loc=loc)
    expected = rec.get("expected")
    if isinstance(expected, str):
        expected = [expected]
    if not isinstance(expected, list) or not expected:
        raise DataError("expected a non-empty list of tool names", path=path, location=loc,
                        field="expected")
    for name in expected:
        if not isinstance(name, str) or not name.strip():
            raise DataError(f"expected tool names as strings, got {name!r}", path=path,
                            location=loc, field="expected")
    check_tool_names(expected, registry, path=path, loc=loc, field="expected")
    phrasing = _text_field(rec, "phrasing", path=path, loc=loc, required=False)
    if phrasing is not None and phrasing not in PHRASINGS:
        raise DataError(f"expected one of {PHRASINGS}, got {phrasing!r}", path=path,
                        location=loc, field="phrasing")
    split = _text_field(rec, "split", path=path, loc=loc, required=False)
    if split is not None and split not in SPLITS:
        raise DataError(f"expected one of {SPLITS}, got {split!r}", path=path, location=loc,
                        field="split")
    tags = rec.get("tags", [])
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise DataError("expected a list of strings", path=path, location=loc, field="tags")
    return Query(
        id=qid, query=text, expected=tuple(expected),
        domain=_text_field(rec, "domain", path=path, loc=loc, required=False),
        phrasing=phrasing, tags=tuple(tags),
        search_term=_text_field(rec, "search_term", path=path, loc=loc, required=False),
        split=split,
        category=_text_field(rec, "category", path=path, loc=loc, required=False),
        metadata={k: v for k, v in rec.items() if k not in _QUERY_KEYS},
    )


def check_tool_names(names: Sequence[str], registry: Registry | None, *, path=None,
                     loc: str | None = None, field: str = "expected") -> None:
    """Raise :class:`DataError` if ``names`` repeats a name or names a tool not in ``registry``."""
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DataError(f"names {dup!r} twice", path=path, location=loc, field=field)
    if registry is not None:
        for name in names:
            if name not in registry:
                raise DataError(f"{name!r} is not a tool in the registry"
                                f"{suggest_names(name, registry.names)}", path=path,
                                location=loc, field=field)


def load_queries(path: str | Path, registry: Registry | None = None) -> list[Query]:
    """Load and validate labeled queries (JSONL, one object a line; a JSON array also works).

    Fields: ``id``, ``query``, ``expected`` (list of one or more tool names), optional
    ``domain``, ``phrasing`` (``direct``/``indirect``), ``tags``, ``search_term``, ``split``
    (``dev``/``test``), ``category``. With ``registry``, every expected name must be one of its
    tools (the error suggests the closest names).
    """
    return load_unique(path, query_from_record, plural="queries", label="query id",
                       registry=registry)


#: The field reader every labeled-file loader shares (registry, queries, conversations).
text_field = _text_field
