"""Tools, registries and labeled queries: the values, and loading them from files with validation.

Every loader reads the whole file, validates every record, and only then returns: a bad file
raises :class:`DataError` naming the file, the line (JSONL) or array index (JSON), the tool or
query, the field, and what was expected. Nothing is written.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
import warnings
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
    "describe_json",
    "UnknownShapeError",
    "loads_json",
    "json_depth",
    "text_field",
    "id_field",
    "load_unique",
    "suggest_names",
    "read_text",
    "check_name_syntax",
    "ToolNameWarning",
    "MAX_INPUT_BYTES",
    "MAX_DEPTH",
    "SERVER_WORD",
    "servers",
    "count_servers",
    "servers_text",
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
    ``grades`` gives graded relevance (``{tool: grade}``, integers >= 1) for some expected
    tools; the others have grade 1 (:meth:`gain`). Only graded metrics (``NDCG@k``) read it.
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
    grades: Mapping[str, int] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.id, self.query, self.expected))

    def gain(self, name: str) -> int:
        """The graded relevance of expected tool ``name``: its grade, 1 when not graded."""
        return int(self.grades.get(name, 1))


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
                                path=self.source, location=f"item {i + 1}")
            if tool.name in self._index:
                raise DataError(f"duplicate tool name {tool.name!r} (first at item "
                                f"{self._index[tool.name] + 1})", path=self.source,
                                location=f"item {i + 1}", field="name")
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


_NAME_SEPARATORS = "_.-/:"


def _namespace_matches(name: str, candidates: Sequence[str]) -> list[str]:
    """Candidates that are ``name`` with a namespace in front (``server__name``,
    ``server.name``), or that ``name`` is with a namespace in front; case-insensitive."""
    low = name.lower()
    out = []
    for c in candidates:
        cl = c.lower()
        if cl == low:
            continue
        longer, shorter = (cl, low) if len(cl) > len(low) else (low, cl)
        if shorter and longer.endswith(shorter) and longer[-len(shorter) - 1] in _NAME_SEPARATORS:
            out.append(c)
    return out


def suggest_names(name: str, candidates: Sequence[str], n: int = 3) -> str:
    """A ``"; did you mean ...?"`` hint with the closest candidate names, or ``""``.

    Names that differ only by a namespace come first (``accounts_list`` →
    ``cloudflare-browser__accounts_list``; ``github__create_issue`` → ``create_issue``), the
    shortest namespace first; then the closest spellings (``difflib``), case-sensitive, else
    case-insensitive.
    """
    spaced = sorted(_namespace_matches(name, candidates), key=lambda c: (len(c), c))
    close = difflib.get_close_matches(name, candidates, n=n, cutoff=0.5)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered),
                                                               n=n, cutoff=0.4)]
    picked = list(dict.fromkeys([*spaced[:n], *close]))[:max(n, len(spaced[:n]))]
    return f"; did you mean {', '.join(repr(c) for c in picked)}?" if picked else ""


# --------------------------------------------------------------------------------------------
# reading records


#: Input files larger than this are refused (a registry of 200,000 tools is about 150 MB):
#: reading stops there, so a device such as ``/dev/zero`` or an endless pipe is refused too.
MAX_INPUT_BYTES = 256 * 1024 * 1024
#: Records nested deeper than this (JSON objects and arrays inside each other) are refused:
#: real tool schemas stay far below it, and deeper ones break JSON encoders downstream.
MAX_DEPTH = 64

_NAME_OR_ID = ("name", "id")


def read_text(path: str | Path, *, limit: int | None = None) -> str:
    """The UTF-8 text of ``path`` (a leading BOM dropped), or :class:`DataError` saying why not.

    Refuses a folder, a device, a file it cannot read (permissions, I/O errors: the OS
    reason), text that is not UTF-8, and more than ``limit`` bytes (default
    :data:`MAX_INPUT_BYTES`). A pipe (``<(cmd)``, a named pipe) is read until its writer
    closes it; a named pipe no one writes reads as empty, never blocks.
    """
    path = Path(path)
    limit = MAX_INPUT_BYTES if limit is None else limit
    try:
        if path.is_dir():
            raise DataError("is a folder; expected a file", path=path)
        # a named pipe nobody writes would block open() for ever: opened without waiting,
        # then read as any pipe (what a writer sends until it closes; nothing if none)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with open(fd, "rb") as fh:
            mode = os.fstat(fd).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/zero never ends
                raise DataError("is a device, not a file", path=path)
            if stat.S_ISFIFO(mode):
                os.set_blocking(fd, True)
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise DataError("file not found", path=path) from None
    except OSError as exc:
        raise DataError(f"cannot read it: {exc.strerror or exc}", path=path) from None
    if len(data) > limit:
        raise DataError(f"is larger than {limit / 2**20:.0f} MB, the limit for input files "
                        "(toolsel.data.MAX_INPUT_BYTES); is it the right file?", path=path)
    try:
        return data.decode("utf-8-sig")  # a BOM, as Windows editors write, is not content
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=path) from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON value (write null or a number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def loads_json(text: str) -> Any:
    """``json.loads`` that refuses NaN/Infinity and overflowing numbers (strict JSON)."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)


def json_depth(value: Any) -> int:
    """How deeply ``value``'s arrays and objects nest (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, Mapping):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in children)
    return deepest


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return f"invalid JSON: nested too deeply (more than {MAX_DEPTH} levels allowed)"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg}"
    msg = str(exc).split(";")[0]  # Python's int-digits limit appends advice for programmers
    return f"invalid JSON: {msg}"


def _record_label(rec: Any, loc: str) -> str:
    if isinstance(rec, Mapping):
        inner = rec.get("function") if isinstance(rec.get("function"), Mapping) else rec
        for key in _NAME_OR_ID:
            value = inner.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                kind = "tool" if key == "name" else "id"
                return f"{loc} ({kind} {_safe_repr(value)})"
    return loc


def _safe_repr(value: Any) -> str:
    """``repr`` that never fails and stays short (a record's name in an error message)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_value(rec: Any, *, path, loc: str, surrogates: bool) -> None:
    """Refuse a record nested deeper than :data:`MAX_DEPTH`, or holding lone surrogates."""
    stack: list[tuple[Any, tuple, int]] = [(rec, (), 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, str):
            if surrogates:
                _check_surrogates(value, rec, where, path=path, loc=loc)
            continue
        if isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                field = ".".join(map(str, where[:3])) + "..."
                raise DataError(f"nested more than {MAX_DEPTH} levels deep; a tool schema "
                                "needs far fewer", path=path, location=_record_label(rec, loc),
                                field=field)
            if isinstance(value, dict):
                for key, item in value.items():
                    if surrogates:
                        _check_surrogates(key, rec, where + (key,), path=path, loc=loc)
                    stack.append((item, where + (key,), depth + 1))
            else:
                stack.extend((item, where + (i,), depth + 1) for i, item in enumerate(value))


def _check_surrogates(text: str, rec, where, *, path, loc) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise DataError(f"holds a lone surrogate escape ({text[exc.start]!r}, position "
                        f"{exc.start + 1}): not a character, and not valid UTF-8 text",
                        path=path, location=_record_label(rec, loc),
                        field=".".join(map(str, where)) or None) from None


def _refuse_partial_page(doc: Any, path) -> None:
    """A ``tools/list`` page with a ``nextCursor`` lacks the server's other tools: say so."""
    result = doc.get("result", doc) if isinstance(doc, Mapping) else None
    cursor = result.get("nextCursor") if isinstance(result, Mapping) else None
    if cursor:
        raise DataError(f"is one page of a paged tools/list (nextCursor {_safe_repr(cursor)}); "
                        "loading it would silently drop the server's other tools: request "
                        "every page and put all tools in one {\"tools\": [...]} file",
                        path=path, field="nextCursor")


def read_records(path: str | Path) -> list[tuple[str, Any]]:
    """Read a JSON array (or an object holding one under ``tools``) or JSONL file.

    Returns ``(location, record)`` pairs where location is ``"line N"`` (JSONL) or
    ``"item N"`` (JSON array, 1-based like lines). Raises :class:`DataError` on anything
    unreadable: a folder, an unreadable or oversized file (:func:`read_text`), text that is
    not UTF-8 (a BOM is fine), invalid or non-strict JSON (``NaN``, ``Infinity``, numbers out
    of range or of more than 4300 digits), records nested deeper than :data:`MAX_DEPTH`,
    strings holding lone surrogates, and one page of a paged MCP ``tools/list``.
    """
    path = Path(path)
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise DataError("file is empty", path=path)
    # lone surrogates can only come from \uD800-style escapes: check strings only then
    surrogates = bool(_SURROGATE_ESCAPE.search(text))
    data = _json_document(text, stripped, path)
    if data is not None:
        if not isinstance(data, list):
            raise UnknownShapeError(data, path=path)
        out = [(f"item {i}", rec) for i, rec in enumerate(data, start=1)]
    else:
        out = _jsonl_records(text, path)
    for loc, rec in out:
        _check_value(rec, path=path, loc=loc, surrogates=surrogates)
    return out


def _json_document(text: str, stripped: str, path: Path) -> Any:
    """The records of ``text`` read as one JSON document (an array, or the ``tools`` array of
    an object), or ``None`` when it is to be read as JSONL."""
    data: Any = None
    if stripped[0] == "[" or (stripped[0] == "{" and path.suffix.lower() not in (".jsonl",
                                                                                  ".ndjson")):
        try:
            data = loads_json(text)
        except json.JSONDecodeError as exc:
            # a JSONL file starts with "{" too: only a lone document that fails is an error
            if stripped[0] == "[" or exc.msg != "Extra data":
                raise DataError(f"invalid JSON: {exc.msg}", path=path,
                                location=f"line {exc.lineno}, column {exc.colno}") from None
            data = None
        except (ValueError, RecursionError) as exc:
            raise DataError(_json_problem(exc), path=path) from None
    if isinstance(data, dict):
        # MCP tools/list results and API requests keep the array under "tools"
        inner = data.get("result", data)
        if isinstance(inner, dict) and isinstance(inner.get("tools"), list):
            _refuse_partial_page(data, path)
            data = inner["tools"]
        elif "\n" in stripped.rstrip():  # one object over several lines: not JSONL
            raise UnknownShapeError(data, path=path)
        else:  # a one-record JSONL file: read it as lines, for line numbers
            data = None
    return data


def describe_json(doc: Any, *, n_keys: int = 8) -> str:
    """What a parsed JSON document is, in a few words: ``an object with keys a, b, c``, ``a
    list of 3 objects with keys id, question``, ``a list of 2 strings``, ``a number``."""
    def keys(names: list[str]) -> str:
        shown = ", ".join(names[:n_keys])
        return shown + (f" ... ({len(names) - n_keys} more)" if len(names) > n_keys else "")

    def kind(value: Any, plural: bool = False) -> str:
        names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number",
                 float: "number", type(None): "null"}
        word = next((w for t, w in names.items() if isinstance(value, t)), "value")
        return word + ("s" if plural else "")

    if isinstance(doc, Mapping):
        return f"an object with keys {keys(list(doc))}" if doc else "an empty object"
    if isinstance(doc, list):
        if not doc:
            return "an empty list"
        kinds = sorted({kind(v, plural=True) for v in doc})
        if kinds != ["objects"]:
            return f"a list of {len(doc)} " + (kinds[0] if len(kinds) == 1 else
                                               "values (" + ", ".join(kinds) + ")")
        seen: dict[str, None] = {}
        for rec in doc[:50]:
            seen.update(dict.fromkeys(rec))
        return f"a list of {len(doc)} objects with keys {keys(list(seen))}"
    return f"a {kind(doc)}" if kind(doc) != "object" else "an object"


class UnknownShapeError(DataError):
    """A file holds valid JSON, but not of a shape the reader knows (see :func:`describe_json`).

    ``doc`` is the parsed document, for callers that know other shapes to try or name.
    """

    def __init__(self, doc: Any, *, path: str | Path | None = None, expected: str = (
            "a JSON array of records (or JSONL, one object a line)")):
        self.doc = doc
        self.expected = expected
        super().__init__(f"valid JSON of an unknown shape: {describe_json(doc)}; expected "
                         f"{expected}", path=path)


def _jsonl_records(text: str, path: Path) -> list[tuple[str, Any]]:
    """``("line N", record)`` for every non-blank, non-``//`` line of a JSONL ``text``."""
    out = []
    from .jsonl import jsonl_lines
    for lineno, line in jsonl_lines(text):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            out.append((f"line {lineno}", loads_json(line)))
        except json.JSONDecodeError as exc:
            raise DataError(f"invalid JSON: {exc.msg} (column {exc.colno})", path=path,
                            location=f"line {lineno}") from None
        except (ValueError, RecursionError) as exc:
            raise DataError(_json_problem(exc), path=path,
                            location=f"line {lineno}") from None
    return out


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def text_field(rec: Mapping[str, Any], key: str, *, path, loc, required=True) -> str | None:
    """The non-empty string ``rec[key]`` (``None`` when optional and absent): the field reader
    every labeled-file loader shares (registry, queries, conversations)."""
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


def id_field(rec: Mapping[str, Any], key: str = "id", *, path, loc,
             expected: str = "a string or integer id") -> str:
    """``rec[key]`` as a non-empty string id (an integer id becomes its digits; a bool is
    not an integer here); else a :class:`DataError` naming the field: "missing or empty;
    expected {expected}"."""
    value = rec.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"missing or empty; expected {expected}", path=path, location=loc,
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
    name = text_field(rec, "name", path=path, loc=loc)
    loc = f"{loc} (tool {name!r})" if loc else f"tool {name!r}"
    if name != name.strip():
        raise DataError(f"name {name!r} has leading or trailing whitespace", path=path,
                        location=loc, field="name")
    description = text_field(rec, "description", path=path, loc=loc)
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


#: JSON Schema's type names: what a ``type`` may say at any level of a tool's schema.
JSON_SCHEMA_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")
_SUB_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then",
            "else", "additionalItems", "unevaluatedItems", "unevaluatedProperties")
_SUB_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUB_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def _check_schema(schema: Any, *, path, loc, field: str) -> None:
    if not isinstance(schema, Mapping):
        raise DataError(f"expected a JSON Schema object, got {type(schema).__name__}",
                        path=path, location=loc, field=field)
    kind = schema.get("type", "object")
    if kind != "object":
        hint = (" (a Python type name: `toolsel import` maps it to 'object')"
                if isinstance(kind, str) and kind.lower() in ("dict", "map", "mapping") else "")
        raise DataError(f"expected a schema of type 'object', got type {kind!r}{hint}",
                        path=path, location=loc, field=field)
    _check_subschema(schema, path=path, loc=loc, field=field, depth=0)


def _check_subschema(schema: Mapping[str, Any], *, path, loc, field: str, depth: int) -> None:
    """Check the structure JSON Schema gives ``type``, ``properties``, ``required``,
    ``items`` and the combinators, at every nesting level."""
    _check_schema_type(schema, path=path, loc=loc, field=field)
    props = _checked_properties(schema, path=path, loc=loc, field=field)
    _check_required(schema, props, path=path, loc=loc, field=field, depth=depth)
    for key, value in schema.items():
        for where, node in _subschemas(key, value, path=path, loc=loc, field=field):
            if isinstance(node, Mapping):
                _check_subschema(node, path=path, loc=loc, field=where, depth=depth + 1)


def _check_schema_type(schema: Mapping[str, Any], *, path, loc, field: str) -> None:
    """Every name under ``type`` is a JSON Schema type."""
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        for kind in kinds:
            if kind not in JSON_SCHEMA_TYPES:
                raise DataError(f"{kind!r} is not a JSON Schema type (expected one of "
                                f"{', '.join(JSON_SCHEMA_TYPES)}); `toolsel import` maps Python "
                                "type names such as 'dict', 'float' and 'tuple'", path=path,
                                location=loc, field=f"{field}.type")


def _checked_properties(schema: Mapping[str, Any], *, path, loc, field: str):
    """``properties``: an object of schema objects (empty if absent)."""
    props = schema.get("properties", {})
    if not isinstance(props, Mapping):
        raise DataError(f"'properties' must be an object, got {type(props).__name__}",
                        path=path, location=loc, field=field)
    for pname, pschema in props.items():
        if not isinstance(pschema, Mapping):
            raise DataError(f"property {pname!r} must be a schema object, got "
                            f"{type(pschema).__name__}", path=path, location=loc,
                            field=f"{field}.properties.{pname}")
    return props


def _check_required(schema: Mapping[str, Any], props, *, path, loc, field: str,
                    depth: int) -> None:
    """``required``: a list of names of ``props`` (draft-3 booleans tolerated below the top)."""
    required = schema.get("required", [])
    if isinstance(required, bool) and depth > 0:
        required = []  # draft-3 style "required": true on a property: not our business
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise DataError("'required' must be a list of property names", path=path,
                        location=loc, field=f"{field}.required")
    missing = [r for r in required if r not in props]
    if missing and (depth == 0 or props):
        raise DataError(f"'required' names {missing[0]!r}, which is not in 'properties'",
                        path=path, location=loc, field=f"{field}.required")


def _subschemas(key: str, value: Any, *, path, loc, field: str) -> list[tuple[str, Any]]:
    """The nested schemas under ``key`` of a schema, each with its field path."""
    if key in _SUB_ONE and isinstance(value, Mapping):
        return [(f"{field}.{key}", value)]
    if key in ("items", *_SUB_MANY):
        if not isinstance(value, (list, Mapping)) and not (key in _SUB_ONE
                                                          and isinstance(value, bool)):
            raise DataError(f"'{key}' must be a schema object or a list of them, got "
                            f"{type(value).__name__}", path=path, location=loc,
                            field=f"{field}.{key}")
        if isinstance(value, list):
            return [(f"{field}.{key}.{i}", v) for i, v in enumerate(value)]
        return []
    if key in _SUB_NAMED and isinstance(value, Mapping):
        return [(f"{field}.{key}.{k}", v) for k, v in value.items()]
    return []


#: The one word every command and page uses for the groups a registry's tools come in: an
#: MCP import records each tool's ``server``, other registries a ``domain`` (the bundled one:
#: ``slack``, ``github``, ...; a synthetic one: its made-up server); both are what
#: :attr:`Tool.domain` reads, and both are counted by :func:`count_servers`.
SERVER_WORD = "server"


def servers(registry: Iterable[Tool]) -> list[str]:
    """The registry's servers (:attr:`Tool.domain`: ``domain``, else ``server`` metadata),
    each once, in registry order; a tool with neither belongs to none."""
    return list(dict.fromkeys(t.domain for t in registry if t.domain))


def count_servers(registry: Iterable[Tool]) -> int:
    """How many servers the registry's tools come from (:func:`servers`); 0 when no tool
    names one (a benchmark import of standalone functions)."""
    return len(servers(registry))


def servers_text(n: int) -> str:
    """``"1 server"``, ``"19 servers"``: a count of :data:`SERVER_WORD`."""
    return f"{n:,} {SERVER_WORD}{'' if n == 1 else 's'}"


def load_registry(path: str | Path, *, strict: bool = False) -> Registry:
    """Load and validate a registry file: a JSON array or JSONL of tool objects.

    Each object needs ``name`` and ``description``; the schema may be under ``parameters``,
    ``input_schema`` or ``inputSchema``; OpenAI ``{"type": "function", "function": ...}``
    wrappers and a top-level ``{"tools": [...]}`` object (MCP ``tools/list``) are unwrapped.
    Tool names are checked with :func:`check_name_syntax` (a :class:`ToolNameWarning`, or
    :class:`DataError` when ``strict``).
    """
    records = load_unique(path, tool_from_record, plural="tools", label="tool name",
                          key="name", with_locations=True)
    check_name_syntax([(loc, t.name) for loc, t in records], path=path, strict=strict)
    return Registry([t for _, t in records], source=path)


#: Tool names every API accepts: OpenAI function names and Anthropic tool names.
SENDABLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Tool names MCP accepts (1-128 ASCII letters, digits, ``_``, ``-``, ``.``).
MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


class ToolNameWarning(UserWarning):
    """Tool names that the MCP, OpenAI or Anthropic APIs would refuse."""


def check_name_syntax(names: Sequence[tuple[str, str]], *, path=None,
                      strict: bool = False) -> None:
    """Check tool names against what the APIs accept; ``names`` is ``[(location, name)]``.

    A name MCP refuses too (spaces, emoji, ``/``, ``&``, more than 128 characters; pattern
    :data:`MCP_NAME`) gives one :class:`ToolNameWarning` for the file, listing them. With
    ``strict`` every name must also be sendable to OpenAI and Anthropic (:data:`SENDABLE_NAME`:
    no dots, at most 64 characters) and the first that is not raises :class:`DataError`.
    """
    pattern = SENDABLE_NAME if strict else MCP_NAME
    bad = [(loc, name) for loc, name in names if not pattern.fullmatch(name)]
    if not bad:
        return
    if strict:
        loc, name = bad[0]
        raise DataError(f"tool name {_safe_repr(name)} is not accepted by the OpenAI and "
                        "Anthropic APIs (1-64 letters, digits, '_' or '-')"
                        + (f"; {len(bad) - 1} more names like it" if len(bad) > 1 else ""),
                        path=path, location=f"{loc} (tool {_safe_repr(name)})", field="name")
    shown = ", ".join(f"{_safe_repr(n)} ({loc})" for loc, n in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    where = f"{path}: " if path is not None else ""
    warnings.warn(f"{where}field 'name': {len(bad)} tool name(s) that the MCP, OpenAI and "
                  f"Anthropic APIs refuse (they accept letters, digits, '_', '-' and, for MCP, "
                  f"'.'): {shown}{more}; rename them before sending (--strict refuses them)",
                  ToolNameWarning, stacklevel=3)


def load_unique(path: str | Path, build, *, plural: str, label: str, key: str = "id",
                with_locations: bool = False, **build_kwargs: Any) -> list:
    """Read every record of ``path``, ``build(rec, path=, loc=, **build_kwargs)`` each, and
    refuse an empty file or two records with the same ``key`` attribute.

    The shared loop of every labeled-file loader: errors name the file, the record's line (or
    array item), the field ``key`` and where the first of a duplicate pair stands. With
    ``with_locations`` the items come as ``(location, item)`` pairs.
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
        out.append((loc, item) if with_locations else item)
    return out


_QUERY_KEYS = {"id", "query", "expected", "domain", "phrasing", "tags", "search_term", "split",
               "category", "grades"}
PHRASINGS = ("direct", "indirect")
#: ``train`` only comes from imported benchmarks (BEIR's qrels/train.tsv); toolsel's own sets
#: and its split rule use ``dev`` and ``test``.
SPLITS = ("dev", "test", "train")


def query_from_record(rec: Any, *, path=None, loc: str | None = None,
                      registry: Registry | None = None) -> Query:
    """Build a :class:`Query` from one record; check ``expected`` against ``registry``."""
    if not isinstance(rec, Mapping):
        raise DataError(f"expected a query object, got {type(rec).__name__}", path=path,
                        location=loc)
    qid = id_field(rec, path=path, loc=loc)
    loc = f"{loc} (query {qid!r})" if loc else f"query {qid!r}"
    text = text_field(rec, "query", path=path, loc=loc)
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
    phrasing = text_field(rec, "phrasing", path=path, loc=loc, required=False)
    if phrasing is not None and phrasing not in PHRASINGS:
        raise DataError(f"expected one of {PHRASINGS}, got {phrasing!r}", path=path,
                        location=loc, field="phrasing")
    split = text_field(rec, "split", path=path, loc=loc, required=False)
    if split is not None and split not in SPLITS:
        raise DataError(f"expected one of {SPLITS}, got {split!r}", path=path, location=loc,
                        field="split")
    tags = rec.get("tags", [])
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise DataError("expected a list of strings", path=path, location=loc, field="tags")
    grades = _grades(rec.get("grades"), expected, path=path, loc=loc)
    return Query(
        id=qid, query=text, expected=tuple(expected),
        domain=text_field(rec, "domain", path=path, loc=loc, required=False),
        phrasing=phrasing, tags=tuple(tags),
        search_term=text_field(rec, "search_term", path=path, loc=loc, required=False),
        split=split,
        category=text_field(rec, "category", path=path, loc=loc, required=False),
        metadata={k: v for k, v in rec.items() if k not in _QUERY_KEYS},
        grades=grades,
    )


def _grades(value: Any, expected: Sequence[str], *, path, loc) -> dict[str, int]:
    """The optional ``grades`` object of a labeled query: ``{expected tool: integer >= 1}``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise DataError(f"expected an object {{tool: grade}}, got {type(value).__name__}",
                        path=path, location=loc, field="grades")
    out = {}
    for name, grade in value.items():
        if name not in expected:
            raise DataError(f"grades {name!r}, which is not in 'expected'; grade only "
                            "expected tools (a tool that is not required has no grade)",
                            path=path, location=loc, field=f"grades.{name}")
        if isinstance(grade, bool) or not isinstance(grade, int) or grade < 1:
            raise DataError(f"expected an integer grade >= 1, got {grade!r} (leave a tool "
                            "that is not relevant out of 'expected')", path=path,
                            location=loc, field=f"grades.{name}")
        out[name] = grade
    return out


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
    (``dev``/``test``), ``category``, ``grades`` (``{tool: integer >= 1}`` for graded
    relevance; expected tools not in it have grade 1). With ``registry``, every expected name must be one of its
    tools (the error suggests the closest names).
    """
    return load_unique(path, query_from_record, plural="queries", label="query id",
                       registry=registry)

