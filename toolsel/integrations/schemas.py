"""Tool schemas as third parties write them, normalized to JSON Schema with a count.

Benchmarks and hand-written tool dumps use Python type names (BFCL: ``dict``, ``float``,
``tuple``, ``any``), upper-case names (ToolBench: ``STRING``, ``NUMBER``) and extra keys
beside a function's ``name``/``description``/``parameters`` (BFCL's ``response``). A
:class:`SchemaNormalizer` maps them onto JSON Schema at every nesting level (``properties``,
``items``, ``additionalProperties``, ``anyOf``/``oneOf``/``allOf``, ``prefixItems``,
``$defs``/``definitions``) and counts each kind of change, so an import can say once per kind
what it changed (:meth:`SchemaNormalizer.warn`) instead of refusing the file. With
``strict=True`` the first change raises :class:`~toolsel.data.DataError` instead.

The mapping (:data:`TYPE_NAMES`, case-insensitive): ``dict``/``object``/``map``/``mapping`` →
``object``; ``float``/``double``/``number``/``decimal`` → ``number``; ``int``/``integer``/
``long`` → ``integer``; ``str``/``string``/``text`` (and ToolBench's ``DATE``, ``TIME``,
``ENUM``, ``GEOPOINT``, ``FILE``, ``CREDENTIALS``) → ``string``; ``bool``/``boolean`` →
``boolean``; ``list``/``array``/``tuple``/``set`` → ``array``; ``none``/``null`` → ``null``;
``any`` and the empty name ``""`` → no ``type`` key at all (JSON Schema's "any value"). Java's and JavaScript's names
(BFCL's ``simple_java`` and ``simple_javascript``) map the same way: ``String``/``char``/
``Character`` → ``string``; ``int``/``Integer``/``long``/``short``/``byte``/``Bigint``/
``BigInteger`` → ``integer``; ``double``/``float``/``BigDecimal`` → ``number``;
``Boolean`` → ``boolean``; ``Array``/``ArrayList``/``LinkedList``/``HashSet``/``Queue``/
``Stack`` and any ``X[]`` → ``array``; ``HashMap``/``Hashtable``/``TreeMap`` → ``object``; a
generic ``ArrayList<String>`` by its base name. A type name none of these matches is left for
validation to refuse (:func:`toolsel.data.tool_from_record`).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..data import DataError

__all__ = ["TYPE_NAMES", "JSON_TYPES", "SchemaNormalizer", "SchemaNormalizedWarning"]

#: JSON Schema's own type names.
JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array", "null")

#: Other type names seen in tool dumps (lower-cased) → the JSON Schema type; ``None``: any.
#: Python's (BFCL's ``simple_python``, ``live_*``), Java's and JavaScript's (BFCL's
#: ``simple_java``, ``simple_javascript``: the names its own type tables convert) and ToolBench's.
TYPE_NAMES: dict[str, str | None] = {
    "dict": "object", "map": "object", "mapping": "object", "hashmap": "object",
    "hashtable": "object", "treemap": "object", "linkedhashmap": "object",
    "float": "number", "double": "number", "decimal": "number", "bigdecimal": "number",
    "int": "integer", "long": "integer", "short": "integer", "byte": "integer",
    "bigint": "integer", "biginteger": "integer",
    "str": "string", "text": "string", "date": "string", "time": "string",
    "datetime": "string", "enum": "string", "geopoint": "string", "file": "string",
    "credentials": "string", "char": "string", "character": "string",
    "bool": "boolean",
    "list": "array", "tuple": "array", "set": "array", "arraylist": "array",
    "linkedlist": "array", "hashset": "array", "treeset": "array", "queue": "array",
    "stack": "array", "deque": "array", "vector": "array",
    "none": "null", "nonetype": "null",
    "any": None, "": None,  # "": BFCL's simple_javascript_23 leaves a type empty
}

# a Java array or generic type: ``String[]``, ``ArrayList<String>``, ``Map<String, Integer>``
_JAVA_ARRAY = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(?:<.*>)?\s*(?:\[\s*\])+\s*$")
_GENERIC = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*<.*>\s*$")

# keys whose value is one schema, a list of schemas, or a {name: schema} object
_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then",
        "else", "additionalItems", "unevaluatedItems", "unevaluatedProperties")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


class SchemaNormalizedWarning(UserWarning):
    """Tool schemas were changed to be JSON Schema (type names mapped, keys left out)."""


class SchemaNormalizer:
    """Maps type names at every level and counts what it changed, over many tools.

    ``changes`` counts ``(kind, detail)`` pairs: ``("type", "'dict' -> 'object'")``,
    ``("key", "'response'")``; ``tools`` counts the tools each pair touched.
    """

    def __init__(self, *, strict: bool = False):
        self.strict = strict
        self.changes: Counter = Counter()
        self.tools: dict[tuple[str, str], set[str]] = {}

    def _note(self, kind: str, detail: str, tool: str, *, path, loc, field: str,
              reason: str) -> None:
        if self.strict:
            done = "mapped" if kind == "type" else "left out"
            raise DataError(f"{reason} (without --strict it is {done} with a warning)",
                            path=path, location=loc, field=field)
        self.changes[(kind, detail)] += 1
        self.tools.setdefault((kind, detail), set()).add(tool)

    def drop_keys(self, entry: Mapping[str, Any], allowed, *, tool: str, path=None,
                  loc: str | None = None) -> dict[str, Any]:
        """``entry`` without the keys not in ``allowed``, each counted (or refused if strict)."""
        out = {}
        for key, value in entry.items():
            if key in allowed:
                out[key] = value
            else:
                self._note("key", repr(key), tool, path=path, loc=loc, field=key,
                           reason=f"unknown key for a function definition (expected some of "
                                  f"{', '.join(allowed)})")
        return out

    def schema(self, schema: Any, *, tool: str, path=None, loc: str | None = None,
               field: str = "parameters") -> Any:
        """A copy of ``schema`` with every type name mapped to JSON Schema (see the module)."""
        return self._walk(schema, tool=tool, path=path, loc=loc, field=field)

    def _type(self, value: Any, *, tool, path, loc, field) -> tuple[bool, Any]:
        """``(keep, new value)`` for a ``type`` value (``keep`` False: drop the key: any)."""
        if isinstance(value, list):
            out = []
            for i, v in enumerate(value):
                keep, new = self._type(v, tool=tool, path=path, loc=loc, field=f"{field}.{i}")
                if not keep:
                    return False, None  # "any" among the alternatives: any value
                if new not in out:
                    out.append(new)
            return True, out
        if not isinstance(value, str) or value in JSON_TYPES:
            return True, value
        low = value.strip().lower()
        if _JAVA_ARRAY.match(value):
            low = "array"
        elif (generic := _GENERIC.match(value)):
            low = generic.group(1).rsplit(".", 1)[-1].lower()  # java.util.List<X> -> list
        if low in JSON_TYPES:
            new: str | None = low
        elif low in TYPE_NAMES:
            new = TYPE_NAMES[low]
        else:
            return True, value  # unknown: validation names it
        self._note("type", f"{value!r} -> {new!r}" if new else f"{value!r} -> any (no type)",
                   tool, path=path, loc=loc, field=field,
                   reason=f"{value!r} is not a JSON Schema type"
                          + (f" (JSON Schema: {new!r})" if new else " (JSON Schema: no type)"))
        return new is not None, new

    def _walk(self, node: Any, *, tool, path, loc, field) -> Any:
        if not isinstance(node, Mapping):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            where = f"{field}.{key}"
            if key == "type":
                keep, new = self._type(value, tool=tool, path=path, loc=loc, field=where)
                if keep:
                    out[key] = new
            elif key in _ONE and isinstance(value, Mapping):
                out[key] = self._walk(value, tool=tool, path=path, loc=loc, field=where)
            elif key in ("items", *_MANY) and isinstance(value, list):
                out[key] = [self._walk(v, tool=tool, path=path, loc=loc, field=f"{where}.{i}")
                            for i, v in enumerate(value)]
            elif key in _NAMED and isinstance(value, Mapping):
                out[key] = {k: self._walk(v, tool=tool, path=path, loc=loc,
                                          field=f"{where}.{k}") for k, v in value.items()}
            else:
                out[key] = value
        return out

    def summary(self) -> list[str]:
        """One line per kind of change: what, how often, in how many tools."""
        lines = []
        for (kind, detail), n in sorted(self.changes.items(), key=lambda kv: (kv[0][0],
                                                                             -kv[1], kv[0][1])):
            tools = len(self.tools[(kind, detail)])
            if kind == "type":
                lines.append(f"type {detail}: {n} place(s) in {tools} tool(s)")
            else:
                lines.append(f"key {detail} left out of {tools} tool definition(s)")
        return lines

    def warn(self, where: str = "") -> None:
        """One :class:`SchemaNormalizedWarning` per kind of change (``--strict`` refuses them)."""
        prefix = f"{where}: " if where else ""
        for line in self.summary():
            warnings.warn(f"{prefix}{line} (normalized to JSON Schema; --strict refuses it)",
                          SchemaNormalizedWarning, stacklevel=3)
