"""Labeled data sets beyond the registry and its queries, and the split rule.

:mod:`toolsel.data` loads and validates tools, registries and labeled queries; this module holds
the other inputs the tables and commands read, each validated at load time with errors that
name the file, line and field:

- the dev/test split rule (:func:`assign_splits`) and :func:`filter_split`;
- labeled multi-turn conversations (:func:`load_conversations`);
- the evaluation registry styles under ``data/styles`` (:func:`load_style`, :func:`given_style`);
- description repairs (:func:`load_repairs`) and a labeled file that may not exist yet
  (:func:`read_labeled`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data import (DataError, Query, Registry, Tool, check_tool_names, id_field, load_queries,
                   load_registry, load_unique, read_text, suggest_names, text_field)

__all__ = ["assign_splits", "filter_split", "Turn", "Conversation", "conversation_from_record",
           "load_conversations", "STYLES", "NEW_STYLES", "style_dir", "load_style", "load_styles",
           "given_style", "load_repairs", "read_labeled"]


# --------------------------------------------------------------------------------------------
# splits


def assign_splits(records: Sequence[Query | Mapping[str, Any]]) -> list[str]:
    """The dev/test split rule: alternate within each category, in file order.

    Within each ``category`` (records without one form their own group) the 1st, 3rd, 5th...
    record goes to ``dev`` and the 2nd, 4th... to ``test``. The rule is fixed, uses no
    scores, and stratifies by category (each category splits as evenly as it can, dev getting
    the odd one out).
    """
    seen: dict[Any, int] = {}
    out = []
    for rec in records:
        cat = rec.category if isinstance(rec, Query) else rec.get("category")
        i = seen.get(cat, 0)
        seen[cat] = i + 1
        out.append("dev" if i % 2 == 0 else "test")
    return out


def filter_split(queries: Iterable[Query], split: str | None) -> list[Query]:
    """The queries of ``split`` (``"dev"``/``"test"``), or all of them for ``None``/``"all"``."""
    queries = list(queries)
    if split in (None, "all"):
        return queries
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev', 'test' or 'all', got {split!r}")
    out = [q for q in queries if q.split == split]
    if not out:
        raise ValueError(f"no queries in split {split!r}")
    return out


# --------------------------------------------------------------------------------------------
# conversations


@dataclass(frozen=True)
class Turn:
    """One user message and the tools needed to serve it.

    ``expected`` may be empty (a "thanks" needs no tool). ``search_terms`` are the phrases a
    model would pass to ``discover``, in order; ``context_dependent`` labels a message that
    only makes sense with the previous turns ("do it", "same for Bob").
    """

    user: str
    expected: tuple[str, ...] = ()
    search_terms: tuple[str, ...] = ()
    context_dependent: bool = False


@dataclass(frozen=True)
class Conversation:
    """A labeled multi-turn conversation."""

    id: str
    turns: tuple[Turn, ...]
    title: str | None = None
    split: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False)


_CONV_KEYS = {"id", "turns", "title", "split", "tags"}


_TURN_KEYS = {"user", "expected", "search_terms", "context_dependent"}


def _str_list(value, *, path, loc, field_name, allow_empty=True) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DataError("expected a list of non-empty strings", path=path, location=loc,
                        field=field_name)
    if not allow_empty and not value:
        raise DataError("is empty; expected at least one", path=path, location=loc,
                        field=field_name)
    return value


def _turn_from_record(rec: Any, *, path, loc: str, registry: Registry | None) -> Turn:
    if not isinstance(rec, Mapping):
        raise DataError(f"expected a turn object, got {type(rec).__name__}", path=path,
                        location=loc)
    unknown = sorted(set(rec) - _TURN_KEYS)
    if unknown:
        raise DataError(f"unknown key; a turn has {sorted(_TURN_KEYS)}", path=path,
                        location=loc, field=unknown[0])
    user = text_field(rec, "user", path=path, loc=loc)
    if "expected" not in rec:
        raise DataError("missing; expected a list of tool names ([] for none)", path=path,
                        location=loc, field="expected")
    expected = _str_list(rec["expected"], path=path, loc=loc, field_name="expected")
    check_tool_names(expected, registry, path=path, loc=loc, field="expected")
    terms = _str_list(rec.get("search_terms", []), path=path, loc=loc,
                      field_name="search_terms")
    dependent = rec.get("context_dependent", False)
    if not isinstance(dependent, bool):
        raise DataError("expected true or false", path=path, location=loc,
                        field="context_dependent")
    return Turn(user, tuple(expected), tuple(terms), dependent)


def conversation_from_record(rec: Any, *, path=None, loc: str | None = None,
                             registry: Registry | None = None) -> Conversation:
    """Build a :class:`Conversation` from one record, validating every turn.

    Errors name the file, the line, the conversation id, the turn (1-based) and the field,
    e.g. ``data/conversations.jsonl, line 4 (conversation 'c04'), turn 2: field 'expected':
    'calendar_move_event' is not a tool in the registry; did you mean ...?``
    """
    if not isinstance(rec, Mapping):
        raise DataError(f"expected a conversation object, got {type(rec).__name__}",
                        path=path, location=loc)
    cid = id_field(rec, path=path, loc=loc)
    loc = f"{loc} (conversation {cid!r})" if loc else f"conversation {cid!r}"
    unknown = sorted(set(rec) - _CONV_KEYS)
    if unknown:
        raise DataError(f"unknown key; a conversation has {sorted(_CONV_KEYS)}", path=path,
                        location=loc, field=unknown[0])
    turns = rec.get("turns")
    if not isinstance(turns, list) or not turns:
        raise DataError("expected a non-empty list of turn objects", path=path, location=loc,
                        field="turns")
    parsed = tuple(_turn_from_record(t, path=path, loc=f"{loc}, turn {i}", registry=registry)
                   for i, t in enumerate(turns, start=1))
    split = text_field(rec, "split", path=path, loc=loc, required=False)
    if split is not None and split not in ("dev", "test"):
        raise DataError(f"expected 'dev' or 'test', got {split!r}", path=path, location=loc,
                        field="split")
    tags = _str_list(rec.get("tags", []), path=path, loc=loc, field_name="tags")
    return Conversation(cid, parsed, text_field(rec, "title", path=path, loc=loc,
                                                 required=False), split, tuple(tags))


def load_conversations(path: str | Path, registry: Registry | None = None
                       ) -> list[Conversation]:
    """Load and validate labeled conversations (JSONL, one conversation a line).

    Format: ``{"id", "turns": [{"user", "expected", "search_terms"?, "context_dependent"?}],
    "title"?, "split"?, "tags"?}`` (see ``data/README.md``). With ``registry`` every expected
    name must be one of its tools. Raises :class:`~toolsel.data.DataError` naming the file,
    line, conversation, turn and field.
    """
    return load_unique(path, conversation_from_record, plural="conversations",
                       label="conversation id", registry=registry)


# --------------------------------------------------------------------------------------------
# registry styles

#: The evaluation registry styles shipped in ``data/styles``.
STYLES = ("api", "plugin", "pooled")


#: The styles added for issue 15 (marketplace listings, OpenAPI-derived operations), kept out
#: of :data:`STYLES` so notebook 06 stays fast; notebook 12 evaluates them.
NEW_STYLES = ("marketplace", "openapi")


_DATA = Path(__file__).resolve().parents[1] / "data" / "styles"


def style_dir(style: str, root: str | Path | None = None) -> Path:
    """The directory of one style (``root`` defaults to the repository's ``data/styles``)."""
    base = _DATA if root is None else Path(root)
    path = base / style
    if not (path / "registry.json").exists():
        known = sorted(p.name for p in base.iterdir() if (p / "registry.json").exists()) \
            if base.is_dir() else []
        raise FileNotFoundError(f"no style {style!r}: {path / 'registry.json'} does not exist"
                                f" (styles in {base}: {', '.join(known) or 'none'})")
    return path


def load_style(style: str, root: str | Path | None = None, *,
               split: str | None = None) -> tuple[Registry, list[Query]]:
    """``(registry, queries)`` of one style; ``split`` keeps only ``dev`` or ``test`` queries."""
    path = style_dir(style, root)
    registry = load_registry(path / "registry.json")
    queries = load_queries(path / "queries.jsonl", registry)
    if split is not None:
        if split not in ("dev", "test"):
            raise ValueError(f"split must be 'dev', 'test' or None, got {split!r}")
        queries = [q for q in queries if q.split == split]
        if not queries:
            raise ValueError(f"{path / 'queries.jsonl'}: no queries with split {split!r}")
    return registry, queries


def load_styles(styles: Sequence[str] = STYLES, root: str | Path | None = None, *,
                split: str | None = "test") -> dict[str, tuple[Registry, list[Query]]]:
    """:func:`load_style` for each style, in order."""
    return {s: load_style(s, root, split=split) for s in styles}


def given_style(registry: str | Path, queries: str | Path
                ) -> tuple[str, tuple[Registry, list[Query]], bool]:
    """A user's registry and queries as one style: ``(name, (registry, queries), has_split)``.

    The name is the registry file's stem, or its folder's name for a file called
    ``registry.json`` (``data/styles/plugin/registry.json`` → ``plugin``); ``has_split`` says
    whether any query carries a dev/test ``split``.
    """
    reg = load_registry(registry)
    qs = load_queries(queries, reg)
    stem = Path(registry).stem
    name = stem if stem != "registry" else (Path(registry).resolve().parent.name or stem)
    return name, (reg, qs), any(q.split for q in qs)


# --------------------------------------------------------------------------------------------
# repairs and labeled files


def load_repairs(path: str | Path, registry: Registry | None = None) -> dict[str, str]:
    """Load a description patch: a JSON object ``{tool name: new description}``.

    With ``registry``, every name must be one of its tools and every description must differ
    from the current one. Errors name the file, the tool and what was expected.
    """
    path = Path(path)
    if not path.exists():
        raise DataError("file not found", path=path)
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path=path,
                        location=f"line {exc.lineno}, column {exc.colno}") from None
    if not isinstance(data, Mapping) or not data:
        raise DataError("expected a non-empty JSON object {tool name: new description}",
                        path=path)
    for name, desc in data.items():
        loc = f"tool {name!r}"
        if not isinstance(desc, str) or not desc.strip():
            raise DataError("expected a non-empty description string", path=path,
                            location=loc, field="description")
        if registry is not None:
            if name not in registry:
                raise DataError(f"{name!r} is not a tool in the registry"
                                f"{suggest_names(name, registry.names)}", path=path,
                                location=loc, field="name")
            if registry.get(name).description == desc:
                raise DataError("is the current description; a repair must change it",
                                path=path, location=loc, field="description")
    return dict(data)


def read_labeled(path: str | Path, registry: Sequence[Tool]) -> list[Query]:
    """The queries of ``path`` validated against ``registry``; ``[]`` for a missing or empty
    file (a labeled set may start from nothing)."""
    path = Path(path)
    if not path.exists() or not read_text(path).strip():
        return []
    return load_queries(path, registry if isinstance(registry, Registry) else Registry(registry))
