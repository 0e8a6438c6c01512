"""Evaluate recorded agent runs: discovery, selection given discovery, and cost, from what the
Messages API actually returned.

A *recorded run* is the list of Messages API exchanges (one request and its response each) an
agent made while working on one labeled task. :func:`load_runs` reads them from JSONL files
(format: ``data/README.md``, "Recorded runs"), validates every block, and groups them by
``(task_id, run)``; :func:`evaluate_runs` measures three stages separately:

1. **discovery**: which required *deferred* tools (``defer_loading: true`` in the request's
   ``tools``) came back in a ``tool_reference`` (server-side ``tool_search_tool_result`` or a
   client-side search's ``tool_result``). Required tools that were sent non-deferred were
   visible anyway: they are listed apart and never counted as discovered. Per task:
   ``discovery_recall`` (NaN when no required tool was deferred) and ``all_available``; a search
   that returned nothing while a required tool was still undiscovered is an
   ``empty_search_miss``.
2. **selection given discovery**: the client ``tool_use`` names against the label. A task's
   selection is correct when every required tool was called and nothing else was (a call to
   a tool outside the label is a *wrong operation*; client-side search calls are not
   operations). ``selection_given_discovery`` is measured on the tasks whose required tools
   were all available; ``success`` (end to end) on all tasks.
3. **cost**: search calls (counted from ``server_tool_use`` blocks and client searches, since
   usage does not meter them), references loaded, client calls, and ``usage`` summed over
   every request of the task, uncached (``input_tokens``), cache write
   (``cache_creation_input_tokens``) and cache read (``cache_read_input_tokens``) apart.

Each task gets a diagnosis: ``discovery miss`` (a required tool never became available),
``selection miss`` (all available, wrong or missing calls) or ``ok``, with the evidence.

Blocks are deduplicated by id: a request repeats the whole conversation so far, so a block
counts once, where it first appears. Malformed input raises :class:`~toolsel.data.DataError`
naming the file, line, block path (e.g. ``response.content[2]``) and field; nothing is skipped.
When the ``anthropic`` SDK is installed (``pip install toolsel[anthropic]``) its types check
the response blocks and usage too; plain JSON works without it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data import DataError, Query, Registry, load_queries, query_from_record, read_records

__all__ = [
    "Exchange", "Search", "Call", "Run", "RunSet", "RunsReport",
    "load_runs", "evaluate_runs", "format_stage_table",
    "plot_cost_split", "TASK_COLUMNS", "STAGE_COLUMNS", "LABELS_FILE",
]

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
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.jsonl") if p.name != LABELS_FILE)
        if not files:
            raise DataError("no *.jsonl transcript files in the folder", path=path)
        default_labels = path / LABELS_FILE
    elif path.exists():
        files = [path]
        default_labels = path.parent / LABELS_FILE
    else:
        raise DataError("file or folder not found", path=path)
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
                inline = query_from_record(
                    {"id": task_id, "query": rec.get("query") or f"task {task_id}",
                     "expected": rec["expected"]}, path=file, loc=loc, registry=registry)
                known = labels.get(task_id)
                if known is None:
                    labels[task_id] = inline
                    label_where[task_id] = where
                elif set(known.expected) != set(inline.expected):
                    raise DataError(f"expected {list(inline.expected)} disagrees with "
                                    f"{list(known.expected)} given in {label_where[task_id]}",
                                    path=file, location=loc, field="expected")
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


def _record_keys(rec: Any, file: Path, loc: str) -> tuple[str, str]:
    if not isinstance(rec, Mapping):
        raise DataError(f"expected an exchange object, got {type(rec).__name__}", path=file,
                        location=loc)
    task_id = rec.get("task_id")
    if isinstance(task_id, int) and not isinstance(task_id, bool):
        task_id = str(task_id)
    if not isinstance(task_id, str) or not task_id.strip():
        raise DataError("missing or empty; expected the task's id", path=file, location=loc,
                        field="task_id")
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



# --------------------------------------------------------------------------------------------
# evaluation

TASK_COLUMNS = [
    "task_id", "run", "mode", "n_requests", "required", "visible_required",
    "deferred_required", "discovered_required", "undiscovered", "n_deferred_required",
    "n_discovered_required", "discovery_recall", "all_available", "searches",
    "server_searches", "client_searches", "empty_searches", "empty_search_misses",
    "references_loaded", "distinct_loaded", "loaded_noise", "client_calls", "called",
    "right_calls", "wrong_calls", "selection_correct", "success", "input_uncached",
    "cache_write", "cache_read", "input_total", "output_tokens", "stop_reason", "diagnosis",
    "evidence",
]
STAGE_COLUMNS = [
    "run", "mode", "tasks",
    # discovery
    "deferred_required", "discovered_required", "discovery_recall", "discovery_recall_pooled",
    "all_available", "empty_search_misses",
    # selection given discovery
    "tasks_available", "selection_given_discovery", "wrong_operation_rate", "success",
    # cost
    "requests", "searches", "references_loaded", "client_calls", "input_uncached",
    "cache_write", "cache_read", "input_total", "output_tokens", "input_per_task",
]


@dataclass
class RunsReport:
    """The tables of :func:`evaluate_runs` (pandas DataFrames).

    - ``tasks``: one row per task × run (:data:`TASK_COLUMNS`), with diagnosis and evidence.
    - ``searches``: one row per search call: its query, what it loaded, which required tools
      it found first, and whether it was an empty-result miss.
    - ``stages``: the three-stage summary, one row per run label (:data:`STAGE_COLUMNS`).
    - ``compare``: eager vs deferred runs of the same task, side by side.
    - ``cost``: input components per run label, long format (for the cost-split figure).
    """

    tasks: pd.DataFrame
    searches: pd.DataFrame
    stages: pd.DataFrame
    compare: pd.DataFrame
    cost: pd.DataFrame
    names: tuple[str, ...] = field(default=("stages", "tasks", "searches", "compare", "cost"))

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write one CSV per table, replaced as one set (:func:`toolsel.io.write_set`)."""
        from ..io import write_set
        return write_set(out_dir, {f"{name}.csv": getattr(self, name) for name in self.names})

    def table(self) -> str:
        """The three-stage table as text."""
        return format_stage_table(self.stages)


def _join(names: Iterable[str]) -> str:
    return ";".join(names)


def _evaluate_run(run: Run, label: Query) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    required = list(label.expected)
    visible_req = [n for n in required if n in run.visible]
    deferred_req = [n for n in required if n in run.deferred]
    undefined = [n for n in required if n not in run.visible and n not in run.deferred]
    discovered: dict[str, Search] = {}
    search_rows = []
    for n, s in enumerate(run.searches, start=1):
        refs = s.references or ()
        pending = [t for t in deferred_req if t not in discovered]
        new = [t for t in refs if t in pending]
        empty = not refs
        search_rows.append({
            "task_id": run.task_id, "run": run.run, "search": n, "kind": s.kind,
            "tool": s.tool, "query": s.query, "references": _join(refs),
            "n_references": len(refs), "new_required": _join(new),
            "noise": _join(t for t in refs if t not in required), "empty": empty,
            "empty_miss": empty and bool(pending), "error": s.error or "",
            "answered": s.references is not None,
        })
        for t in new:
            discovered.setdefault(t, s)
    found = [t for t in deferred_req if t in discovered]
    missing = [t for t in deferred_req if t not in discovered] + undefined
    calls = run.calls
    called = [c.name for c in calls]
    wrong = [c for c in calls if c.name not in required]
    not_called = [t for t in required if t not in called]
    selection_correct = not wrong and not not_called
    all_available = not missing
    loaded = run.loaded
    usage = run.usage()
    n_empty_miss = sum(r["empty_miss"] for r in search_rows)
    if not all_available:
        diagnosis = "discovery miss"
        parts = []
        for t in missing:
            if t in undefined:
                parts.append(f"{t} not in the request's tools")
            else:
                parts.append(f"{t} never returned by {len(run.searches)} search(es)")
        tried = [f"'{r['query']}' -> [{r['references'].replace(';', ', ')}]"
                 for r in search_rows]
        evidence = "; ".join(parts) + (f"; searches: {' | '.join(tried)}" if tried else "")
    elif not selection_correct:
        diagnosis = "selection miss"
        parts = []
        for c in wrong:
            parts.append(f"called {c.name}({json.dumps(dict(c.input), sort_keys=True)}) "
                         "outside the label")
        for t in not_called:
            how = (f"loaded by search '{discovered[t].query}'" if t in discovered
                   else "visible")
            parts.append(f"never called {t} ({how})")
        evidence = "; ".join(parts)
    else:
        diagnosis = "ok"
        how = [f"{t} via '{discovered[t].query}'" for t in found]
        how += [f"{t} visible" for t in visible_req]
        evidence = "available: " + ", ".join(how) + f"; called {', '.join(called)}"
    if n_empty_miss:
        evidence += f"; {n_empty_miss} empty search(es) while a required tool was undiscovered"
    row = {
        "task_id": run.task_id, "run": run.run, "mode": run.mode,
        "n_requests": len(run.exchanges), "required": _join(required),
        "visible_required": _join(visible_req), "deferred_required": _join(deferred_req),
        "discovered_required": _join(found), "undiscovered": _join(missing),
        "n_deferred_required": len(deferred_req), "n_discovered_required": len(found),
        "discovery_recall": len(found) / len(deferred_req) if deferred_req else float("nan"),
        "all_available": all_available, "searches": len(run.searches),
        "server_searches": sum(s.kind == "server" for s in run.searches),
        "client_searches": sum(s.kind == "client" for s in run.searches),
        "empty_searches": sum(r["empty"] for r in search_rows),
        "empty_search_misses": n_empty_miss,
        "references_loaded": sum(len(s.references or ()) for s in run.searches),
        "distinct_loaded": len(loaded),
        "loaded_noise": sum(t not in required for t in loaded),
        "client_calls": len(calls), "called": _join(called),
        "right_calls": len(calls) - len(wrong), "wrong_calls": len(wrong),
        "selection_correct": selection_correct, "success": selection_correct and all_available,
        "input_uncached": usage["input_tokens"], "cache_write":
            usage["cache_creation_input_tokens"], "cache_read": usage["cache_read_input_tokens"],
        "input_total": usage["input_tokens"] + usage["cache_creation_input_tokens"]
            + usage["cache_read_input_tokens"],
        "output_tokens": usage["output_tokens"],
        "stop_reason": str(run.exchanges[-1].response.get("stop_reason") or ""),
        "diagnosis": diagnosis, "evidence": evidence,
    }
    return row, search_rows


def _stage_row(run: str, df: pd.DataFrame) -> dict[str, Any]:
    avail = df[df["all_available"]]
    has_deferred = df[df["n_deferred_required"] > 0]
    n_def = int(df["n_deferred_required"].sum())
    calls_avail = int(avail["client_calls"].sum())
    modes = sorted(set(df["mode"]))
    return {
        "run": run, "mode": "+".join(modes), "tasks": len(df),
        "deferred_required": n_def,
        "discovered_required": int(df["n_discovered_required"].sum()),
        "discovery_recall": float(has_deferred["discovery_recall"].mean())
            if len(has_deferred) else float("nan"),
        "discovery_recall_pooled": int(df["n_discovered_required"].sum()) / n_def
            if n_def else float("nan"),
        "all_available": float(df["all_available"].mean()),
        "empty_search_misses": int(df["empty_search_misses"].sum()),
        "tasks_available": len(avail),
        "selection_given_discovery": float(avail["selection_correct"].mean())
            if len(avail) else float("nan"),
        "wrong_operation_rate": int(avail["wrong_calls"].sum()) / calls_avail
            if calls_avail else float("nan"),
        "success": float(df["success"].mean()),
        "requests": int(df["n_requests"].sum()), "searches": int(df["searches"].sum()),
        "references_loaded": int(df["references_loaded"].sum()),
        "client_calls": int(df["client_calls"].sum()),
        "input_uncached": int(df["input_uncached"].sum()),
        "cache_write": int(df["cache_write"].sum()), "cache_read": int(df["cache_read"].sum()),
        "input_total": int(df["input_total"].sum()),
        "output_tokens": int(df["output_tokens"].sum()),
        "input_per_task": float(df["input_total"].mean()),
    }


def _compare(tasks: pd.DataFrame) -> pd.DataFrame:
    cols = ["n_requests", "searches", "input_uncached", "cache_write", "cache_read",
            "input_total", "success", "diagnosis"]
    rows = []
    for task_id, group in tasks.groupby("task_id", sort=True):
        eager = group[group["mode"] == "eager"]
        deferred = group[group["mode"] == "deferred"]
        for _, e in eager.iterrows():
            for _, d in deferred.iterrows():
                row = {"task_id": task_id, "eager_run": e["run"], "deferred_run": d["run"]}
                for c in cols:
                    row[f"{c}_eager"] = e[c]
                    row[f"{c}_deferred"] = d[c]
                row["input_change"] = (d["input_total"] / e["input_total"] - 1.0
                                       if e["input_total"] else float("nan"))
                rows.append(row)
    columns = ["task_id", "eager_run", "deferred_run"] + [
        f"{c}_{m}" for c in cols for m in ("eager", "deferred")] + ["input_change"]
    return pd.DataFrame(rows, columns=columns)


def evaluate_runs(runs: RunSet) -> RunsReport:
    """Measure discovery, selection given discovery and cost for every recorded run."""
    rows, search_rows = [], []
    for run in runs.runs:
        row, srows = _evaluate_run(run, runs.tasks[run.task_id])
        rows.append(row)
        search_rows.extend(srows)
    tasks = pd.DataFrame(rows, columns=TASK_COLUMNS)
    search_cols = ["task_id", "run", "search", "kind", "tool", "query", "references",
                   "n_references", "new_required", "noise", "empty", "empty_miss", "error",
                   "answered"]
    searches = pd.DataFrame(search_rows, columns=search_cols)
    # eager runs first, then the others by label
    order = sorted(set(tasks["run"]), key=lambda r: (
        bool((tasks.loc[tasks["run"] == r, "mode"] == "deferred").any()), r))
    stages = pd.DataFrame([_stage_row(r, tasks[tasks["run"] == r]) for r in order],
                          columns=STAGE_COLUMNS)
    cost = stages.melt(id_vars=["run"], value_vars=["input_uncached", "cache_write",
                                                    "cache_read"],
                       var_name="component", value_name="tokens")
    cost["tokens_per_task"] = cost["tokens"] / cost["run"].map(
        dict(zip(stages["run"], stages["tasks"])))
    return RunsReport(tasks, searches, stages, _compare(tasks), cost)


def format_stage_table(stages: pd.DataFrame) -> str:
    """The three-stage summary as aligned text: discovery | selection | cost."""
    def pct(v):
        return "-" if v != v else f"{100 * v:.0f}%"

    header = [("", ["run", "tasks"]),
              ("discovery", ["recall", "pooled", "complete", "empty miss"]),
              ("selection given discovery", ["tasks", "correct", "wrong op", "success"]),
              ("cost (tokens summed over every request)",
               ["reqs", "search", "refs", "calls", "uncached", "cache wr", "cache rd",
                "input", "output"])]
    body = []
    for _, r in stages.iterrows():
        body.append([
            str(r["run"]), str(r["tasks"]),
            pct(r["discovery_recall"]),
            f"{r['discovered_required']}/{r['deferred_required']}" if r["deferred_required"]
            else "-",
            pct(r["all_available"]), str(r["empty_search_misses"]),
            str(r["tasks_available"]), pct(r["selection_given_discovery"]),
            pct(r["wrong_operation_rate"]), pct(r["success"]),
            str(r["requests"]), str(r["searches"]), str(r["references_loaded"]),
            str(r["client_calls"]), f"{r['input_uncached']:,}", f"{r['cache_write']:,}",
            f"{r['cache_read']:,}", f"{r['input_total']:,}", f"{r['output_tokens']:,}",
        ])
    names = [n for _, cols in header for n in cols]
    widths = [max(len(n), *(len(b[i]) for b in body)) if body else len(n)
              for i, n in enumerate(names)]
    groups, i = [], 0
    for title, cols in header:
        w = sum(widths[i:i + len(cols)]) + 2 * (len(cols) - 1)
        groups.append(title.ljust(w)[:w] if len(title) <= w else title[:w])
        i += len(cols)
    lines = ["   ".join(groups).rstrip()]

    def fmt(cells):
        out, i = [], 0
        for _, cols in header:
            out.append("  ".join(c.rjust(widths[i + j]) if i + j else c.ljust(widths[0])
                                 for j, c in enumerate(cells[i:i + len(cols)])))
            i += len(cols)
        return "   ".join(out)

    lines.append(fmt(names))
    lines.extend(fmt(b) for b in body)
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# figure


def plot_cost_split(report: RunsReport, ax=None):
    """Stacked bars of input tokens per task and run: uncached, cache write, cache read.

    Every request of the task is counted. Returns the matplotlib Axes.
    """
    import matplotlib.pyplot as plt

    df = report.tasks
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.45 * len(df) + 1.5))
    labels = [f"{t} · {r}" for t, r in zip(df["task_id"], df["run"])]
    y = np.arange(len(df))[::-1]
    left = np.zeros(len(df))
    parts = [("input_uncached", "uncached input", "#d62728"),
             ("cache_write", "cache write", "#ff7f0e"),
             ("cache_read", "cache read", "#1f77b4")]
    for col, name, color in parts:
        values = df[col].to_numpy(dtype=float)
        ax.barh(y, values, left=left, color=color, label=name)
        left += values
    ax.set_yticks(y, labels)
    ax.set_xlabel("input tokens, summed over every request of the task (tokens)")
    ax.set_ylabel("task · run")
    ax.set_title("Where the input of each recorded run went")
    ax.legend(loc="lower right")
    return ax
