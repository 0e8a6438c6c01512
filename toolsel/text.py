"""Tokenizers and the text a scorer indexes for each tool.

Two tokenizers:

- :func:`tokenize` is the article's: lowercase, then maximal runs of ``[a-z0-9]``.
  ``"github_create_issue"`` gives ``github, create, issue``; ``"getPM2.5Level"`` gives
  ``getpm2, 5level``.
- :func:`split_identifier` first splits identifiers at case and letter/digit boundaries
  (``"getPM2.5Level"`` gives ``get, pm, 2, 5, level``; ``"PDF&URLTool"`` gives
  ``pdf, url, tool``), then tokenizes the same way.

A tool is indexed through *fields* (:data:`FIELDS`): its raw ``name``, the name split into
words (``name_words``), the ``description``, the names of its parameters (``param_names``,
split into words) and the parameters' descriptions (``param_descriptions``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .data import Tool

__all__ = ["FIELDS", "STOP_WORDS", "content_words", "tokenize", "token_set", "split_identifier", "field_text", "tool_text",
           "check_fields", "parameter_items"]

_TOKEN = re.compile(r"[a-z0-9]+")
# lower→Upper, UPPER→Upper+lower (PDFTool → PDF Tool), letter↔digit
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])"
                    r"|(?<=[0-9])(?=[A-Za-z])")

#: Fields a scorer can index, in the order their text is joined.
FIELDS = ("name", "name_words", "description", "param_names", "param_descriptions")


def tokenize(text: str) -> list[str]:
    """The article's tokens: lowercase, maximal runs of ``[a-z0-9]``, in order, repeats kept."""
    return _TOKEN.findall(text.lower())


def token_set(text: str) -> set[str]:
    """The set of :func:`tokenize` tokens."""
    return set(_TOKEN.findall(text.lower()))


def split_identifier(text: str) -> list[str]:
    """Tokens of ``text`` with identifiers split at snake_case, camelCase and digit boundaries."""
    return _TOKEN.findall(_CAMEL.sub(" ", text).lower())


def check_fields(fields: Iterable[str]) -> tuple[str, ...]:
    """Validate a field list (a string is one field); return it as a tuple."""
    if isinstance(fields, str):
        fields = (fields,)
    fields = tuple(fields)
    if not fields:
        raise ValueError(f"fields must name at least one of {FIELDS}")
    for f in fields:
        if f not in FIELDS:
            raise ValueError(f"unknown field {f!r}; expected some of {FIELDS}")
    return fields


def parameter_items(schema: Mapping[str, Any] | None, prefix: str = "") -> list[tuple[str, str]]:
    """``(name, description)`` of every property in a JSON Schema, nested objects included."""
    if not isinstance(schema, Mapping):
        return []
    out: list[tuple[str, str]] = []
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for name, sub in props.items():
            if not isinstance(sub, Mapping):
                continue
            desc = sub.get("description")
            out.append((str(name), desc if isinstance(desc, str) else ""))
            out.extend(parameter_items(sub, prefix))
            items = sub.get("items")
            if isinstance(items, Mapping):
                out.extend(parameter_items(items, prefix))
    return out


def field_text(tool: Tool, field: str) -> str:
    """The text of one field of ``tool`` (see :data:`FIELDS`)."""
    if field == "name":
        return tool.name
    if field == "name_words":
        return " ".join(split_identifier(tool.name))
    if field == "description":
        return tool.description
    if field == "param_names":
        return " ".join(" ".join(split_identifier(n)) for n, _ in parameter_items(tool.parameters))
    if field == "param_descriptions":
        return " ".join(d for _, d in parameter_items(tool.parameters) if d)
    raise ValueError(f"unknown field {field!r}; expected one of {FIELDS}")


def tool_text(tool: Tool, fields: Sequence[str] = ("name", "description")) -> str:
    """The fields of ``tool`` joined by spaces; the default is the article's ``"{name} {description}"``."""
    return " ".join(t for t in (field_text(tool, f) for f in fields) if t)


#: English function words that say nothing about which tool is wanted; scorers and the
#: failure-mode classifier each extend this core with their own extras.
STOP_WORDS = frozenset("""
a about above after again all also am an and any are as at be been being below between both
but by can could d did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it it's its just let ll m me more most
my myself no nor not now of off on once only or other our ours out over own please re s same
she should so some such t than that the their theirs them then there these they this those
through to too under until up ve very was we were what when where which while who whom why
will with would you your yours yourself
""".split())


def content_words(text: str) -> str:
    """A search phrase made from a request without any label: its tokens minus
    :data:`STOP_WORDS` (all its tokens if none is left).

    What a model that only drops filler words would pass to ``discover``; the label-free
    counterpart of a labeler-written ``search_term``.
    """
    words = [w for w in tokenize(text) if w not in STOP_WORDS]
    return " ".join(words or tokenize(text)) or text
