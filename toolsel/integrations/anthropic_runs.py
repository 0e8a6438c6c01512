"""Recorded agent runs from the Anthropic Messages API: load, validate, and group them.

A *recorded run* is the list of Messages API exchanges (one request and its response each) an
agent made while working on one labeled task. :func:`load_runs` reads them from JSONL files
(format: ``data/README.md``, "Recorded runs"), validates every block, and groups them by
``(task_id, run)`` into :class:`Run` objects: the tools each request carried (and which were
deferred), the searches (server-side ``tool_search_tool_result`` or a client-side search's
``tool_result`` with ``tool_reference`` blocks), the client calls and the ``usage`` of every
response. :mod:`toolsel.tables.runs` evaluates them stage by stage.

Blocks are deduplicated by id: a request repeats the whole conversation so far, so a block
counts once, where it first appears. Malformed input raises :class:`~toolsel.data.DataError`
naming the file, line, block path (e.g. ``response.content[2]``) and field; nothing is skipped.
When the ``anthropic`` SDK is installed (``pip install toolsel[anthropic]``) its types check
the response blocks and usage too; plain JSON works without it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data import (DataError, Query, Registry, id_field, load_queries, query_from_record,
                    read_records)

__all__ = ["Exchange", "Search", "Call", "Run", "RunSet", "load_runs", "LABELS_FILE"]

#: The label file looked up beside the transcripts (same format as the query files).
LABELS_FILE = "tasks.jsonl"

#: Block types accepted in request messages and response content.
_PLAIN_BLOCKS = {"text", "thinking", "redacted_thinking", "image", "document"}
_BLOCK_TYPES = _PLAIN_BLOCKS | {"tool_use", "tool_result", "server_tool_use",
                                "tool_search_tool_result"}
#: Block types accepted inside a client ``tool_result``'s content.
_RESULT_CONTENT = {"text", "image", "document", "search_result", "tool_reference"}
_USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                 "output_tokens")


# --------------------------------------------------------------------------------------------
# values


@dataclass(frozen=True)
class Exchange:
    """One recorded request/response pair, validated (``where`` is ``"file, line N"``)."""

    task_id: str
    run: str
    where: str
    request: Mapping[str, Any]
    response: Mapping[str, Any]
    usage: Mapping[str, int]


@dataclass
class Search:
    """A tool-search call and what it loaded (``kind`` is ``"server"`` or ``"client"``)."""

    id: str
    kind: str
    tool: str
    input: Mapping[str, Any]
    where: str
    references: tuple[str, ...] | None = None   # None until its result is seen
    error: str | None = None

    @property
    def query(self) -> str:
        """The search text the model sent (``query``, else the regex ``pattern``)."""
        for key in ("query", "pattern"):
            if isinstance(self.input.get(key), str):
                return self.input[key]
        return json.dumps(dict(self.input), sort_keys=True)


@dataclass(frozen=True)
class Call:
    """A client ``tool_use`` that is an operation (not a search)."""

    id: str
    name: str
    input: Mapping[str, Any]
    where: str


@dataclass
class Run:
    """Every exchange of one task under one run configuration, parsed into events."""

    task_id: str
    run: str
    exchanges: list[Exchange]
    visible: frozenset[str]       # defined without defer_loading in some request
    deferred: frozenset[str]      # defined only with defer_loading: true
    events: list[Search | Call]   # chronological, each block once

    @property
    def mode(self) -> str:
        """``"deferred"`` when any tool was deferred, else ``"eager"``."""
        return "deferred" if self.deferred else "eager"

    @property
    def searches(self) -> list[Search]:
        return [e for e in self.events if isinstance(e, Search)]

    @property
    def calls(self) -> list[Call]:
        return [e for e in self.events if isinstance(e, Call)]

    @property
    def loaded(self) -> list[str]:
        """Distinct names returned by the searches, in first-seen order."""
        out: dict[str, None] = {}
        for s in self.searches:
            out.update(dict.fromkeys(s.references or ()))
        return list(out)

    def usage(self) -> dict[str, int]:
        """Usage summed over every request of the run."""
        return {k: sum(int(x.usage[k]) for x in self.exchanges) for k in _USAGE_FIELDS}


@dataclass
class RunSet:
    """Recorded runs and their labels (``tasks``: task id → :class:`~toolsel.data.Query`)."""

    runs: list[Run]
    tasks: dict[str, Query]

    def __len__(self) -> int:
        return len(self.runs)


# --------------------------------------------------------------------------------------------
# loading


def load_runs(path: str | Path, *, tasks: str | Path | None = None,
              registry: Registry | None = None) -> RunSet:
    """Load recorded Messages API exchanges and their task labels.

    Parameters
    ----------
    path
        A JSONL file of exchanges, or a folder whose ``*.jsonl`` files (except the label file
        ``tasks.jsonl``) are read in name order.
    tasks
        The label file (query-file format: ``id``, ``query``, ``expected``). Default:
        ``tasks.jsonl`` in the folder (or beside the file) when it exists. Records may instead
        carry ``expected`` (and ``query``) inline; both may be given if they agree.
    registry
        When given, every label's ``expected`` names must be tools of it.
    """
    files, default_labels = _run_files(Path(path))
    if tasks is None and default_labels.exists():
        tasks = default_labels
    labels: dict[str, Query] = {}
    label_where: dict[str, str] = {}
    if tasks is not None:
        for q in load_queries(tasks, registry):
            labels[q.id] = q
            label_where[q.id] = str(tasks)
    groups: dict[tuple[str, str], list[tuple[str, Mapping[str, Any]]]] = {}
    for file in files:
        for loc, rec in read_records(file):
            where = f"{file}, {loc}"
            task_id, run = _record_keys(rec, file, loc)
            if "expected" in rec:
                _inline_label(rec, task_id, labels, label_where, file=file, loc=loc,
                              registry=registry)
            groups.setdefault((task_id, run), []).append((where, rec))
    runs = []
    for (task_id, run_label), records in groups.items():
        if task_id not in labels:
            first = records[0][0]
            raise DataError(f"task {task_id!r} has no label: add it to {LABELS_FILE} "
                            "(id, query, expected) or give 'expected' inline",
                            path=first.rsplit(", ", 1)[0], location=first.rsplit(", ", 1)[1],
                            field="task_id")
        runs.append(_parse_run(task_id, run_label, records))
    runs.sort(key=lambda r: (r.task_id, r.mode != "eager", r.run))
    used = {r.task_id for r in runs}
    return RunSet(runs, {k: v for k, v in labels.items() if k in used})


def _run_files(path: Path) -> tuple[list[Path], Path]:
    """The transcript files of a file or folder, and where its label file would be."""
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.name != LABELS_FILE)
        if not files:
            raise DataError("no *.jsonl transcript files in the folder", path=path)
        return files, path / LABELS_FILE
    if path.exists():
        return [path], path.parent / LABELS_FILE
    raise DataError("file or folder not found", path=path)


def _inline_label(rec: Mapping[str, Any], task_id: str, labels: dict[str, Query],
                  label_where: dict[str, str], *, file: Path, loc: str,
                  registry: Registry | None) -> None:
    """A record's inline ``expected`` as its task's label; one disagreeing with a label
    already given (label file or an earlier record) is refused."""
    inline = query_from_record(
        {"id": task_id, "query": rec.get("query") or f"task {task_id}",
         "expected": rec["expected"]}, path=file, loc=loc, registry=registry)
    known = labels.get(task_id)
    if known is None:
        labels[task_id] = inline
        label_where[task_id] = f"{file}, {loc}"
    elif set(known.expected) != set(inline.expected):
        raise DataError(f"expected {list(inline.expected)} disagrees with "
                        f"{list(known.expected)} given in {label_where[task_id]}",
                        path=file, location=loc, field="expected")


def _record_keys(rec: Any, file: Path, loc: str) -> tuple[str, str]:
    if not isinstance(rec, Mapping):
        raise DataError(f"expected an exchange object, got {type(rec).__name__}", path=file,
                        location=loc)
    task_id = id_field(rec, "task_id", path=file, loc=loc, expected="the task's id")
    for key in ("request", "response"):
        if not isinstance(rec.get(key), Mapping):
            raise DataError(f"missing or not an object; expected the Messages API {key}",
                            path=file, location=loc, field=key)
    run = rec.get("run")
    if run is None:
        run = "deferred" if any(isinstance(t, Mapping) and t.get("defer_loading") is True
                                for t in rec["request"].get("tools") or []) else "eager"
    if not isinstance(run, str) or not run.strip():
        raise DataError("expected a non-empty run label", path=file, location=loc, field="run")
    return task_id, run


class _Parser:
    """Walks the exchanges of one run in order, recording each block once."""

    def __init__(self, task_id: str, run: str):
        self.task_id, self.run = task_id, run
        self.uses: dict[str, tuple[str, str, str]] = {}   # id -> (kind, name, where)
        self.events: dict[str, Search | Call] = {}        # id -> event, first-seen order
        self.client_search_tools: set[str] = set()
        self.visible: set[str] = set()
        self.defined_deferred: set[str] = set()
        self.search_tools: set[str] = set()
        self.tools: dict[str, bool] = {}                  # this request's tools: name -> deferred
        self.answered: set[str] = set()                   # client tool_use ids with a result

    def error(self, where: str, block: str | None, reason: str, field: str | None = None):
        file, loc = where.rsplit(", ", 1)
        if block:
            loc = f"{loc}, {block}"
        return DataError(reason, path=file, location=loc, field=field)

    # -- request tools -------------------------------------------------------------------
    def read_tools(self, request: Mapping[str, Any], where: str) -> None:
        tools = request.get("tools", [])
        if not isinstance(tools, list):
            raise self.error(where, "request", "expected a list of tool definitions",
                             "tools")
        self.tools = {}
        for i, tool in enumerate(tools):
            at = f"request.tools[{i}]"
            if not isinstance(tool, Mapping):
                raise self.error(where, at, f"expected a tool object, got "
                                 f"{type(tool).__name__}")
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                raise self.error(where, at, "missing; expected the tool's name", "name")
            deferred = tool.get("defer_loading", False)
            if not isinstance(deferred, bool):
                raise self.error(where, at, f"expected true or false, got {deferred!r}",
                                 "defer_loading")
            kind = tool.get("type")
            if isinstance(kind, str) and kind.startswith("tool_search_tool_"):
                if deferred:
                    raise self.error(where, at, "the tool search tool itself cannot be "
                                     "deferred", "defer_loading")
                self.search_tools.add(name)
            if name in self.tools:
                raise self.error(where, at, f"duplicate tool name {name!r}", "name")
            self.tools[name] = deferred
            (self.defined_deferred if deferred else self.visible).add(name)

    # -- blocks --------------------------------------------------------------------------
    def block(self, block: Any, where: str, at: str, *, role: str) -> None:
        if not isinstance(block, Mapping):
            raise self.error(where, at, f"expected a content block object, got "
                             f"{type(block).__name__}")
        kind = block.get("type")
        if kind not in _BLOCK_TYPES:
            raise self.error(where, at, f"unknown content block type {kind!r}; expected one "
                             f"of {sorted(_BLOCK_TYPES)}", "type")
        if kind in _PLAIN_BLOCKS:
            return
        if kind == "tool_result":
            if role != "user":
                raise self.error(where, at, f"a tool_result belongs in a user message, found "
                                 f"in {role}", "type")
            self.tool_result(block, where, at)
            return
        if role == "user":
            raise self.error(where, at, f"a {kind} block belongs to the assistant, found in a "
                             "user message", "type")
        _sdk_check(kind, block, self, where, at)
        if kind == "tool_use":
            self.tool_use(block, where, at)
        elif kind == "server_tool_use":
            self.server_tool_use(block, where, at)
        else:
            self.search_result(block, where, at)

    def _id(self, block, where, at, key="id") -> str:
        value = block.get(key)
        if not isinstance(value, str) or not value:
            raise self.error(where, at, "missing; expected a non-empty id", key)
        return value

    def _input(self, block, where, at) -> Mapping[str, Any]:
        value = block.get("input")
        if not isinstance(value, Mapping):
            raise self.error(where, at, "missing or not an object; expected the call's "
                             "arguments", "input")
        return value

    def tool_use(self, block, where, at) -> None:
        use_id = self._id(block, where, at)
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise self.error(where, at, "missing; expected the called tool's name", "name")
        args = self._input(block, where, at)
        if use_id in self.uses:
            self._same_use(use_id, "client", name, where, at)
            return
        if name not in self.tools:
            raise self.error(where, at, f"calls {name!r}, which is not in this request's "
                             "tools", "name")
        if self.tools[name] and name not in self._loaded_so_far():
            raise self.error(where, at, f"calls deferred tool {name!r} before any search "
                             "returned a tool_reference to it", "name")
        self.uses[use_id] = ("client", name, f"{where}, {at}")
        self.events[use_id] = Call(use_id, name, args, f"{where}, {at}")

    def server_tool_use(self, block, where, at) -> None:
        use_id = self._id(block, where, at)
        name = block.get("name")
        if not isinstance(name, str) or not name:
            raise self.error(where, at, "missing; expected the server tool's name", "name")
        args = self._input(block, where, at)
        if use_id in self.uses:
            self._same_use(use_id, "server", name, where, at)
            return
        if name not in self.search_tools and not name.startswith("tool_search_tool_"):
            raise self.error(where, at, f"server tool {name!r} is not a tool search tool; "
                             "only tool_search_tool_regex/bm25 runs are supported", "name")
        self.uses[use_id] = ("server", name, f"{where}, {at}")
        self.events[use_id] = Search(use_id, "server", name, args, f"{where}, {at}")

    def _same_use(self, use_id, kind, name, where, at) -> None:
        known_kind, known_name, _ = self.uses[use_id]
        if (known_kind, known_name) != (kind, name):
            raise self.error(where, at, f"id {use_id!r} was a {known_kind} call of "
                             f"{known_name!r} earlier, here a {kind} call of {name!r}", "id")

    def search_result(self, block, where, at) -> None:
        use_id = self._id(block, where, at, "tool_use_id")
        known = self.uses.get(use_id)
        if known is None or known[0] != "server":
            what = "a client tool_use" if known else "no server_tool_use"
            raise self.error(where, at, f"refers to {use_id!r}, which is {what} of this "
                             "task; a tool_search_tool_result answers a server_tool_use",
                             "tool_use_id")
        search = self.events[use_id]
        content = block.get("content")
        if not isinstance(content, Mapping):
            raise self.error(where, at, "missing or not an object", "content")
        ctype = content.get("type")
        if ctype == "tool_search_tool_result_error":
            refs: tuple[str, ...] = ()
            error = str(content.get("error_code", "error"))
        elif ctype == "tool_search_tool_search_result":
            items = content.get("tool_references")
            if not isinstance(items, list):
                raise self.error(where, at, "missing; expected a list (empty when nothing "
                                 "matched)", "content.tool_references")
            refs = tuple(self._reference(item, where, f"{at}.content.tool_references[{i}]")
                         for i, item in enumerate(items))
            error = None
        else:
            raise self.error(where, at, f"unknown result type {ctype!r}; expected "
                             "'tool_search_tool_search_result' or "
                             "'tool_search_tool_result_error'", "content.type")
        if search.references is None:
            search.references, search.error = refs, error

    def _reference(self, item, where, at) -> str:
        if not isinstance(item, Mapping) or item.get("type") != "tool_reference":
            raise self.error(where, at, "expected a {'type': 'tool_reference', 'tool_name': "
                             "...} block", "type")
        name = item.get("tool_name")
        if not isinstance(name, str) or not name:
            raise self.error(where, at, "missing; expected the referenced tool's name",
                             "tool_name")
        if name not in self.tools:
            raise self.error(where, at, f"references {name!r}, which is not in this "
                             "request's tools", "tool_name")
        return name

    def tool_result(self, block, where, at) -> None:
        use_id = self._id(block, where, at, "tool_use_id")
        known = self.uses.get(use_id)
        if known is None:
            raise self.error(where, at, f"answers {use_id!r}, but no earlier tool_use has "
                             "that id", "tool_use_id")
        if known[0] == "server":
            raise self.error(where, at, f"answers {use_id!r}, a server_tool_use of "
                             f"{known[1]!r}: server tools return their own result blocks, "
                             "never a client tool_result", "tool_use_id")
        content = block.get("content", [])
        if isinstance(content, str):
            return
        if not isinstance(content, list):
            raise self.error(where, at, "expected a string or a list of blocks", "content")
        refs = []
        for i, item in enumerate(content):
            inner = f"{at}.content[{i}]"
            kind = item.get("type") if isinstance(item, Mapping) else None
            if kind not in _RESULT_CONTENT:
                raise self.error(where, inner, f"unknown tool_result content type {kind!r}; "
                                 f"expected one of {sorted(_RESULT_CONTENT)}", "type")
            if kind == "tool_reference":
                refs.append(self._reference(item, where, inner))
        self.answered.add(use_id)
        event = self.events[use_id]
        if isinstance(event, Call) and refs:
            # a client tool whose result holds tool_reference blocks is a client-side search
            self.client_search_tools.add(event.name)
            self.events[use_id] = Search(use_id, "client", event.name, event.input,
                                         event.where, tuple(refs))
        elif isinstance(event, Call) and event.name in self.client_search_tools:
            self.events[use_id] = Search(use_id, "client", event.name, event.input,
                                         event.where, ())

    def _loaded_so_far(self) -> set[str]:
        out: set[str] = set()
        for e in self.events.values():
            if isinstance(e, Search) and e.references:
                out.update(e.references)
        return out


def _parse_run(task_id: str, run: str, records: Sequence[tuple[str, Mapping[str, Any]]]) -> Run:
    p = _Parser(task_id, run)
    exchanges = []
    for where, rec in records:
        request, response = rec["request"], rec["response"]
        p.read_tools(request, where)
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise p.error(where, "request", "missing; expected the non-empty list of "
                          "messages sent", "messages")
        for m, msg in enumerate(messages):
            at = f"request.messages[{m}]"
            if not isinstance(msg, Mapping) or msg.get("role") not in ("user", "assistant"):
                raise p.error(where, at, "expected a message with role 'user' or "
                              "'assistant'", "role")
            content = msg.get("content")
            if isinstance(content, str):
                continue
            if not isinstance(content, list):
                raise p.error(where, at, "expected a string or a list of blocks", "content")
            for b, block in enumerate(content):
                p.block(block, where, f"{at}.content[{b}]", role=msg["role"])
        content = response.get("content")
        if not isinstance(content, list):
            raise p.error(where, "response", "missing; expected the list of content blocks",
                          "content")
        for b, block in enumerate(content):
            p.block(block, where, f"response.content[{b}]", role="assistant")
        usage = _usage(response, p, where)
        exchanges.append(Exchange(task_id, run, where, request, response, usage))
    # client searches recognised later (by a later result holding references) are searches
    events: list[Search | Call] = []
    for e in p.events.values():
        if isinstance(e, Call) and e.name in p.client_search_tools:
            e = Search(e.id, "client", e.name, e.input, e.where,
                       () if e.id in p.answered else None)
        events.append(e)
    visible = frozenset(p.visible)
    return Run(task_id, run, exchanges, visible, frozenset(p.defined_deferred - visible), events)


def _usage(response: Mapping[str, Any], p: _Parser, where: str) -> dict[str, int]:
    usage = response.get("usage")
    if not isinstance(usage, Mapping):
        raise p.error(where, "response", "missing; every response must carry its usage "
                      "(input_tokens, cache_creation_input_tokens, cache_read_input_tokens, "
                      "output_tokens)", "usage")
    _sdk_check("usage", usage, p, where, "response.usage")
    out = {}
    for key in _USAGE_FIELDS:
        value = usage.get(key)
        if value is None and key.startswith("cache_"):
            value = 0   # the API sends null when no cache was involved
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise p.error(where, "response.usage", f"expected a token count >= 0, got "
                          f"{value!r}", key)
        out[key] = value
    return out


@functools.cache
def _sdk_types() -> dict[str, Any]:
    """The SDK's response models by block type, imported on first use; empty without it."""
    try:
        from anthropic import types as t
    except ImportError:
        return {}
    return {"tool_use": t.ToolUseBlock, "server_tool_use": t.ServerToolUseBlock,
            "tool_search_tool_result": t.ToolSearchToolResultBlock, "usage": t.Usage}


def _sdk_check(kind: str, value: Mapping[str, Any], p: _Parser, where: str, at: str) -> None:
    """Validate against the ``anthropic`` SDK's response types, when the SDK is installed."""
    model = _sdk_types().get(kind)
    if model is None:
        return
    import pydantic
    try:
        model.model_validate(dict(value))
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"] if not str(x).startswith(("Tool", "function")))
        raise p.error(where, at, f"does not match the anthropic SDK's {model.__name__}: "
                      f"{err['msg']}", loc or None) from None
