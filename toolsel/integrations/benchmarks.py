"""Public tool-retrieval benchmarks in: a registry *and* the labeled queries, per format.

Each reader takes the benchmark's own files as a user downloads them and returns a
:class:`BenchmarkImport`: the pooled tools, one labeled query record per request (the query
format of ``data/README.md``, what ``toolsel sweep`` and ``toolsel report`` read), and one
line per file saying what was read. Names follow the upstream project's own naming, so they
match what its agents see. Every problem is a :class:`~toolsel.data.DataError` naming the
file, the line (or item) and the field.

``bfcl`` — Berkeley Function Calling Leaderboard (gorilla project)
    JSON-lines question files (``id``, ``question``: chat turns, lists nested at any depth,
    of ``{"role", "content"}`` messages; ``function``: function docs whose ``parameters`` use
    Python type names) and ``possible_answer`` files (``id``, ``ground_truth``: a list of
    ``{function_name: {arg: [values]}}``). Dotted names become underscored
    (``math.factorial`` → ``math_factorial``), as BFCL does for OpenAI-style APIs. The query
    is the text of the entry's user messages, in order, joined by a newline; the expected
    tools are the functions of its ground truth. An answer file beside a question file
    (``possible_answer/<same name>``) is read when it is not given. Questions without an
    answer (BFCL's irrelevance and relevance categories) add their functions, and no query.
    Java and JavaScript type names (``simple_java``, ``simple_javascript``) are mapped as
    Python's are (:mod:`toolsel.integrations.schemas`). Categories that are not one function
    list per entry are skipped with one line per file, not refused: question files whose
    entries carry no ``function`` but name API classes (``involved_classes``: BFCL's
    ``multi_turn_*``, ``memory*``, ``web_search*``, whose functions live in separate class
    docs) or whose category is one of those (or ``format_sensitivity``), and answer files
    whose every ground truth is text (call strings per turn, or answer strings) rather than
    ``{function_name: {arg: [values]}}``.
    BFCL's data folder is read as downloaded (``toolsel import --from bfcl data/``): every file
    of it and its sub-folders (``possible_answer/``, ``multi_turn_func_doc/``...) is read or
    skipped with one line. Skipped besides the above: function docs of API classes, files of
    entries without ``function``, valid JSON of another shape (v4's pretty-printed
    ``BFCL_v4_format_sensitivity.json``: its shape is named), files that are not JSON, and
    empty ones. Upstream's quirks are read as they are: ``"function": []`` (an entry adding
    no tool) and a parameter of ``"type": ""`` (any value, like ``any``).
``toolbench`` — ToolBench / StableToolBench query files
    A JSON array of ``{query, query_id, api_list: [{tool_name, api_name, api_description,
    required_parameters, optional_parameters, category_name?}], "relevant APIs": [[tool,
    api], ...]}``. A function is named ``{api}_for_{tool}`` with both parts standardized as
    ToolBench does (:func:`toolbench_standardize`, reserved words prefixed ``is_``, the
    name's last 64 characters kept); the description is the API's own (its function name when
    empty); the tool name is the ``server``, the category the ``category``.
``metatool`` — MetaTool
    A JSON object ``{tool name: description}``, and queries as a CSV with ``Query`` and
    ``Tool`` columns (one expected tool a row) and/or a JSON array of ``{query, tool: [...]}``.
``beir`` — a BEIR-style folder (the layout of BEIR and of ToolRet's collections)
    ``corpus.jsonl`` (``_id``, ``title``, ``text``: one tool each, named by its ``_id``,
    described by ``title: text``, or ``text`` alone when the title is empty or the id),
    ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (a header, then
    ``query-id``, ``corpus-id``, ``score``). A score above 0 makes the tool expected; a
    score other than 1 is kept as a grade (``grades``, read by ``NDCG@k``); rows scoring 0
    are dropped (counted). The split (``train``/``dev``/``test``) is carried into each query.

One name seen with several definitions (BFCL pools every entry's functions; ToolBench every
query's API list) is resolved by one rule, stated and counted: **the definition seen most
often is kept, ties going to the first seen** (file order).
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..data import (DataError, Tool, describe_json, loads_json, id_field, read_records,
                    read_text, tool_from_record)
from .schemas import SchemaNormalizer

__all__ = ["BenchmarkImport", "is_bfcl_record", "is_bfcl_folder", "is_bfcl_name",
           "bfcl_folder_files",
           "from_bfcl", "from_toolbench",
           "from_metatool", "from_beir", "toolbench_standardize", "toolbench_function_name",
           "bfcl_name"]

@dataclass
class BenchmarkImport:
    """What one benchmark import read: tools (registry order), query records, per-file lines.

    ``resolved`` counts names that had several definitions (kept: the most frequent, ties to
    the first seen); ``notes`` are lines worth printing once.
    """

    tools: list[Tool]
    queries: list[dict[str, Any]]
    read: list[tuple[Path, str]] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# shared


class _Pool:
    """Definitions of every name in first-seen order; the most frequent definition wins."""

    def __init__(self):
        self.order: list[str] = []
        self.seen: dict[str, Counter] = {}
        self.first: dict[str, dict[str, Tool]] = {}

    def add(self, tool: Tool) -> None:
        import json
        key = json.dumps([tool.description, tool.parameters], sort_keys=True, default=str)
        if tool.name not in self.seen:
            self.order.append(tool.name)
            self.seen[tool.name] = Counter()
            self.first[tool.name] = {}
        self.seen[tool.name][key] += 1
        self.first[tool.name].setdefault(key, tool)

    def __contains__(self, name: str) -> bool:
        return name in self.seen

    def tools(self) -> tuple[list[Tool], list[str]]:
        out, several = [], []
        for name in self.order:
            counts = self.seen[name]
            # most frequent; among equals the first seen (dicts keep insertion order)
            best = max(counts, key=lambda k: (counts[k], -list(counts).index(k)))
            out.append(self.first[name][best])
            if len(counts) > 1:
                several.append(name)
        return out, several


def _mapping(rec: Any, *, path, loc, what: str) -> Mapping[str, Any]:
    if not isinstance(rec, Mapping):
        raise DataError(f"expected {what}, got {type(rec).__name__}", path=path, location=loc)
    return rec


def _text(rec: Mapping[str, Any], key: str, *, path, loc) -> str:
    value = rec.get(key)
    if not isinstance(value, str) or not value.strip():
        raise DataError(f"missing or empty; expected a non-empty string"
                        + (f", got {type(value).__name__}" if value is not None
                           and not isinstance(value, str) else ""),
                        path=path, location=loc, field=key)
    return value


def _unique_ids(queries: list[dict[str, Any]], *, path) -> None:
    seen: dict[str, str] = {}
    for q in queries:
        where = q.pop("_loc")
        if q["id"] in seen:
            raise DataError(f"duplicate query id {q['id']!r} (first at {seen[q['id']]})",
                            path=path, location=where, field="id")
        seen[q["id"]] = where


# --------------------------------------------------------------------------------------------
# BFCL


#: BFCL categories whose entries carry no function list of their own (their functions are
#: API classes' docs, or the category re-uses other entries): a file of one is skipped.
BFCL_NOT_FUNCTION_LISTS = ("multi_turn", "memory", "web_search", "format_sensitivity")


def is_bfcl_record(first: Any, path: Path) -> bool:
    """Whether a file whose first record is ``first`` is BFCL's: ``question`` with
    ``function`` or ``involved_classes`` (the multi-turn categories), a ``ground_truth``
    (a possible_answer file), or an ``id`` in a file named ``BFCL_v<N>_*``."""
    if not isinstance(first, Mapping):
        return False
    keys = set(first)
    return bool({"question", "function"} <= keys or "ground_truth" in keys
                or {"question", "involved_classes"} <= keys
                or ("id" in keys and re.match(r"BFCL_v\d+_", path.name)))


def bfcl_category(path: Path) -> str:
    """A BFCL file's category, from its name: ``BFCL_v4_live_simple.json`` → ``live_simple``."""
    return re.sub(r"^BFCL_v\d+_", "", path.stem)


def _bfcl_skip_reason(path: Path, records: list[tuple[str, Any]], *, in_folder: bool = False
                      ) -> str | None:
    """Why a question file is not a function-list category (skipped), or ``None``.

    Inside a folder (``in_folder``) any file of entries without a ``function`` is skipped
    (a category this version does not know yet); a file given by name is refused entry by
    entry unless its category is one of :data:`BFCL_NOT_FUNCTION_LISTS`."""
    entries = [rec for _, rec in records]
    if not entries or any(isinstance(r, Mapping) and "function" in r for r in entries):
        return None
    category = bfcl_category(path)
    maps = all(isinstance(r, Mapping) for r in entries)
    if maps and all("involved_classes" in r for r in entries):
        return ("its entries name API classes (involved_classes) whose functions BFCL keeps "
                "in class docs, not a function list per entry")
    if category.startswith(BFCL_NOT_FUNCTION_LISTS):
        return f"BFCL's {category} entries carry no function list"
    if maps and all("name" in r and "question" not in r for r in entries):
        return ("function docs of BFCL's API classes (multi_turn_func_doc), read by the "
                "multi-turn entries, which are skipped; not entries with a question")
    if in_folder and maps and all("question" in r for r in entries):
        return "no entry has a function list ('function')"
    return None


#: A file named as BFCL names its data files: ``BFCL_v4_live_simple.json``.
_BFCL_NAME = re.compile(r"BFCL_v\d+_.+\.jsonl?$")
#: What a BFCL file holds, for the line of a file of another shape.
_BFCL_SHAPES = ("BFCL entries (id, question, function) nor answers (id, ground_truth)")


def is_bfcl_name(path: Path) -> bool:
    """Whether a file is named as BFCL names its data files (``BFCL_v4_live_simple.json``)."""
    return bool(_BFCL_NAME.match(path.name))


def is_bfcl_folder(path: Path) -> bool:
    """Whether ``path`` is BFCL's data folder: it, or its ``possible_answer/``, holds files
    named ``BFCL_v<N>_*.json``."""
    folders = [d for d in (path, path / "possible_answer") if d.is_dir()]
    return any(_BFCL_NAME.match(p.name) for d in folders for p in d.iterdir())


def bfcl_folder_files(folder: Path) -> list[Path]:
    """Every file under a BFCL folder, sub-folders included (``possible_answer/``,
    ``multi_turn_func_doc/``...), sorted by path; hidden files and folders (a name starting
    with ``.``) left out."""
    return sorted(p for p in folder.rglob("*") if p.is_file()
                  and not any(part.startswith(".") for part in p.relative_to(folder).parts))


def _bfcl_entry_like(doc: Mapping[str, Any]) -> bool:
    return bool({"question", "function", "ground_truth", "involved_classes"} & set(doc))


def _bfcl_records(path: Path) -> tuple[list[tuple[str, Any]], str | None]:
    """A BFCL file's located records, or ``([], shape)`` when it holds valid JSON that is
    not a list of entries (BFCL v4's ``format_sensitivity`` file is one pretty-printed
    document); broken JSON is a :class:`DataError` naming the line."""
    from .importers import read_json_or_none
    doc = read_json_or_none(path)  # None: JSONL, or broken (read_records names the line)
    if isinstance(doc, Mapping):
        return ([("line 1", doc)], None) if _bfcl_entry_like(doc) else ([], describe_json(doc))
    if isinstance(doc, list) and not all(isinstance(r, Mapping) for r in doc):
        return [], describe_json(doc)
    return read_records(path), None


def _bfcl_classify(path: Path, in_folder: bool) -> tuple[str, list[tuple[str, Any]], str]:
    """What one BFCL input is: ``("answers" | "questions" | "skip", records, why skipped)``.

    A file of another shape is skipped with its shape when it is in a folder or named as
    BFCL names its files, and refused otherwise (:class:`UnknownShapeError`)."""
    if in_folder and path.suffix.lower() not in (".json", ".jsonl"):
        return "skip", [], f"not a JSON file ({path.suffix or 'no suffix'})"
    if in_folder and not read_text(path).strip():
        return "skip", [], "an empty file"
    records, shape = _bfcl_records(path)
    first = records[0][1] if records else None
    if isinstance(first, Mapping) and "ground_truth" in first:
        return "answers", records, ""
    why = _bfcl_skip_reason(path, records, in_folder=in_folder)
    if why is not None:
        return "skip", records, f"{len(records)} entries: {why}"
    return _bfcl_other(path, records, shape, lenient=in_folder or bool(_BFCL_NAME.match(
        path.name)))


def _bfcl_other(path: Path, records: list[tuple[str, Any]], shape: str | None, *,
                lenient: bool) -> tuple[str, list[tuple[str, Any]], str]:
    """A file neither answers nor of a skipped category: questions (entries with
    ``question`` or ``function``; checked entry by entry), else of another shape: skipped
    when ``lenient`` (in a folder, or named ``BFCL_v<N>_*``), refused otherwise."""
    known = any(isinstance(r, Mapping) and {"question", "function"} & set(r) for _, r in records)
    if shape is None and (known or not records or not lenient):
        return "questions", records, ""
    shape = shape or describe_json([r for _, r in records])
    if lenient:
        return "skip", [], f"valid JSON of another shape ({shape}), neither {_BFCL_SHAPES}"
    raise DataError(f"valid JSON of an unknown shape for BFCL: {shape}; expected "
                    f"{_BFCL_SHAPES.replace(' nor ', ' or ')}", path=path)


def _text_only(truth: Any) -> bool:
    """A ground truth of text (call strings per turn, answer strings), nested at any depth."""
    if isinstance(truth, str):
        return True
    return isinstance(truth, list) and bool(truth) and all(_text_only(t) for t in truth)


def bfcl_name(name: str) -> str:
    """A BFCL function name as OpenAI-style models see it: dots become underscores."""
    return name.replace(".", "_")


def _user_texts(turns: Any, *, path, loc) -> list[str]:
    """The ``content`` of every user message in ``question``, lists nested at any depth."""
    out: list[str] = []
    stack = [turns]
    while stack:
        node = stack.pop(0)
        if isinstance(node, list):
            stack[0:0] = node
        elif isinstance(node, Mapping):
            if node.get("role") == "user":
                content = node.get("content")
                if not isinstance(content, str):
                    raise DataError(f"a user message's content must be a string, got "
                                    f"{type(content).__name__}", path=path, location=loc,
                                    field="question")
                if content.strip():
                    out.append(content.strip())
        elif isinstance(node, str) and node.strip():  # BFCL v1 wrote the question as text
            out.append(node.strip())
    return out


def _answer_names(truth: Any, *, path, loc) -> list[str]:
    if not isinstance(truth, list) or not truth:
        raise DataError("expected a non-empty list of {function_name: {arg: [values]}}",
                        path=path, location=loc, field="ground_truth")
    names: list[str] = []
    for call in truth:
        if isinstance(call, str) or (isinstance(call, list)
                                     and any(isinstance(c, str) for c in call)):
            raise DataError("holds call strings (BFCL's multi-turn answers); only "
                            "{function_name: {arg: [values]}} answers can be imported",
                            path=path, location=loc, field="ground_truth")
        if not isinstance(call, Mapping) or not call:
            raise DataError(f"expected {{function_name: {{arg: [values]}}}}, got "
                            f"{type(call).__name__}", path=path, location=loc,
                            field="ground_truth")
        for fn in call:
            name = bfcl_name(str(fn))
            if name not in names:
                names.append(name)
    return names


@dataclass
class _BfclFiles:
    """BFCL inputs sorted: question and answer files to read, and what was skipped."""

    questions: list[tuple[Path, list[tuple[str, Any]]]] = field(default_factory=list)
    answers: list[tuple[Path, list[tuple[str, Any]]]] = field(default_factory=list)
    read: list[tuple[Path, str]] = field(default_factory=list)  # one line per skipped file
    skipped_ids: dict[str, tuple[Path, str]] = field(default_factory=dict)  # id -> file, line
    text_answers: dict[str, tuple[Path, str]] = field(default_factory=dict)  # id -> file, line
    from_folder: bool = False  # a folder was given: answers without a question are a note


def _bfcl_inputs(paths: Sequence[Path]) -> list[tuple[Path, bool]]:
    """Each input file, and whether it came from a folder (every file of a folder given)."""
    out: list[tuple[Path, bool]] = []
    for path in paths:
        if path.is_dir():
            found = bfcl_folder_files(path)
            if not found:
                raise DataError("an empty folder; expected BFCL's data folder (BFCL_v4_*.json "
                                "files and possible_answer/)", path=path)
            out.extend((p, True) for p in found)
        else:
            out.append((path, False))
    return out


def _bfcl_files(inputs: list[tuple[Path, bool]]) -> _BfclFiles:
    """Question files, answer files (given, or ``possible_answer/<name>`` beside a question
    file) and, one line each, the files skipped: question files of a category that is not a
    function list per entry, answer files whose every ground truth is text, and (in a folder,
    or named ``BFCL_v<N>_*``) files of another shape."""
    out = _BfclFiles(from_folder=any(in_folder for _, in_folder in inputs))
    answer_files = []
    for path, in_folder in inputs:
        kind, records, why = _bfcl_classify(path, in_folder)
        if kind == "answers":
            answer_files.append((path, records))
        elif kind == "questions":
            out.questions.append((path, records))
        else:
            for loc, rec in records:
                if isinstance(rec, Mapping) and isinstance(rec.get("id"), str):
                    out.skipped_ids[rec["id"]] = (path, loc)
            out.read.append((path, f"bfcl {bfcl_category(path)}: skipped, {why}"))
    given = {p.resolve() for p, _ in answer_files}
    for path, _ in out.questions:
        beside = path.parent / "possible_answer" / path.name
        if beside.is_file() and beside.resolve() not in given:
            answer_files.append((beside, read_records(beside)))
            given.add(beside.resolve())
    for path, records in answer_files:
        if all(isinstance(rec, Mapping) and _text_only(rec.get("ground_truth"))
               for _, rec in records):
            for loc, rec in records:
                if isinstance(rec.get("id"), str):
                    out.text_answers[rec["id"]] = (path, loc)
            out.read.append((path, f"bfcl answers {bfcl_category(path)}: skipped, "
                                   f"{len(records)} answers of text (call strings or answer "
                                   "strings), not {function_name: {arg: [values]}}"))
        else:
            out.answers.append((path, records))
    return out


def _bfcl_answers(answer_files: list[tuple[Path, list[tuple[str, Any]]]]
                  ) -> dict[str, tuple[list[str], Path, str]]:
    """Each answered id → the function names of its ground truth, its file and line."""
    answers: dict[str, tuple[list[str], Path, str]] = {}
    for path, records in answer_files:
        for loc, rec in records:
            rec = _mapping(rec, path=path, loc=loc, what="an answer object")
            qid = id_field(rec, path=path, loc=loc)
            if qid in answers:
                raise DataError(f"a second answer for id {qid!r} (first in "
                                f"{answers[qid][1]}, {answers[qid][2]})", path=path,
                                location=loc, field="id")
            answers[qid] = (_answer_names(rec.get("ground_truth"), path=path,
                                          loc=f"{loc} (id {qid!r})"), path, loc)
    return answers


def _bfcl_tool(fn: Any, j: int, *, path: Path, where: str, strict: bool,
               normalizer: SchemaNormalizer) -> Tool:
    """One function doc of an entry as a tool, its BFCL name kept when it was renamed."""
    from .importers import from_openai
    fn = _mapping(fn, path=path, loc=where, what="a function doc")
    doc = dict(fn)
    if isinstance(doc.get("name"), str):
        doc["name"] = bfcl_name(doc["name"])
    try:
        (tool,) = from_openai([doc], path=path, strict=strict, normalizer=normalizer)
    except DataError as exc:  # name the entry's line, not "item 1"
        name = f" {doc['name']!r}" if isinstance(doc.get("name"), str) else ""
        raise DataError(exc.reason, path=path, location=f"{where}, function {j + 1}{name}",
                        field=exc.field) from None
    return Tool(tool.name, tool.description, tool.parameters,
                {**tool.metadata, "bfcl_name": fn.get("name")}
                if fn.get("name") != tool.name else tool.metadata)


def _bfcl_entry_tools(rec: Mapping[str, Any], *, path: Path, where: str, strict: bool,
                      normalizer: SchemaNormalizer) -> list[Tool]:
    """An entry's ``function`` docs (one doc or a non-empty list) as tools."""
    fns = rec.get("function")
    if isinstance(fns, Mapping):
        fns = [fns]
    if not isinstance(fns, list):  # [] is BFCL's own (a few live_irrelevance entries)
        raise DataError("missing; expected a list of function docs", path=path,
                        location=where, field="function")
    return [_bfcl_tool(fn, j, path=path, where=where, strict=strict, normalizer=normalizer)
            for j, fn in enumerate(fns)]


def _bfcl_query(rec: Mapping[str, Any], qid: str, entry_names: list[str],
                answers: dict[str, tuple[list[str], Path, str]],
                text_answers: dict[str, tuple[Path, str]], *, path: Path, loc: str,
                where: str) -> dict[str, Any] | None:
    """An entry's query record when it has an answer (``None`` when it has none); an answer
    of call strings, or one calling a function the entry lacks, is refused."""
    if qid in text_answers and qid not in answers:
        apath, aloc = text_answers[qid]
        raise DataError("holds call strings (BFCL's multi-turn answers) for an entry "
                        "with a function list; only {function_name: {arg: [values]}} "
                        "answers can be imported", path=apath,
                        location=f"{aloc} (id {qid!r})", field="ground_truth")
    if qid not in answers:
        return None
    names, apath, aloc = answers[qid]
    missing = [n for n in names if n not in entry_names]
    if missing:
        raise DataError(f"the answer calls {missing[0]!r}, which is not among this "
                        f"entry's functions ({', '.join(entry_names)})", path=apath,
                        location=f"{aloc} (id {qid!r})", field="ground_truth")
    texts = _user_texts(rec.get("question"), path=path, loc=where)
    if not texts:
        raise DataError("no user message with text", path=path, location=where,
                        field="question")
    return {"id": qid, "query": "\n".join(texts), "expected": names,
            "category": bfcl_category(path), "_loc": f"{path}, {loc}"}


def _bfcl_orphans(answers: dict[str, tuple[list[str], Path, str]], used: set[str],
                  files: _BfclFiles) -> list[str]:
    """Refuse answers matching no question of the given files (when any were given); from a
    folder, taken as it is, they are one note per answer file instead."""
    orphans = sorted(set(answers) - used - set(files.skipped_ids))
    if orphans and files.from_folder:
        by_file = Counter(str(answers[qid][1]) for qid in orphans)
        return [f"{path}: {n} answer(s) match no question of the folder (first: id "
                f"{next(q for q in orphans if str(answers[q][1]) == path)!r}); not used"
                for path, n in by_file.items()]
    if orphans and files.questions:
        raise DataError(f"{len(orphans)} answer(s) match no question of the given files "
                        f"(first: id {orphans[0]!r}); give the question file they belong to",
                        path=answers[orphans[0]][1], location=answers[orphans[0]][2],
                        field="id")
    return []


def from_bfcl(paths: Sequence[str | Path], *, strict: bool = False,
              normalizer: SchemaNormalizer | None = None) -> BenchmarkImport:
    """BFCL question and ``possible_answer`` files (any mix, any order) → tools and queries.

    A file is an answer file when its records hold ``ground_truth``. Answers are matched to
    questions by ``id``; an answer file beside a question file (``possible_answer/<name>``)
    is read when not given. A folder stands for every file in it and its sub-folders
    (BFCL's data folder as downloaded): each is read or skipped with one line saying why, and
    answers matching no question of it are a note, not an error. See the module docstring
    for the naming and the pooling rule.
    """
    own = normalizer is None
    normalizer = normalizer if normalizer is not None else SchemaNormalizer(strict=strict)
    files = _bfcl_files(_bfcl_inputs([Path(p) for p in paths]))
    read = files.read
    answers = _bfcl_answers(files.answers)
    answer_lines = [(path, f"bfcl answers: {len(records)} answers")
                    for path, records in files.answers]
    pool = _Pool()
    queries: list[dict[str, Any]] = []
    used: set[str] = set()
    for path, records in files.questions:
        n_q = n_fn = n_empty = 0
        for loc, rec in records:
            rec = _mapping(rec, path=path, loc=loc, what="a BFCL entry")
            qid = id_field(rec, path=path, loc=loc)
            where = f"{loc} (id {qid!r})"
            entry_names = []
            for tool in _bfcl_entry_tools(rec, path=path, where=where, strict=strict,
                                          normalizer=normalizer):
                pool.add(tool)
                entry_names.append(tool.name)
                n_fn += 1
            n_empty += not entry_names
            query = _bfcl_query(rec, qid, entry_names, answers, files.text_answers,
                                path=path, loc=loc, where=where)
            if query is None:
                continue
            queries.append(query)
            used.add(qid)
            n_q += 1
        read.append((path, f"bfcl questions: {len(records)} entries, {n_fn} function docs, "
                           f"{n_q} with an answer" + (f", {n_empty} with an empty function "
                                                      "list" if n_empty else "")))
    read.extend(answer_lines)
    notes = _bfcl_orphans(answers, used, files)
    read.sort(key=lambda line: str(line[0]))  # one line per file, in the order of the paths
    _unique_ids(queries, path=None)
    tools, several = pool.tools()
    if own:
        normalizer.warn()
    return BenchmarkImport(tools, queries, read, several, notes)


# --------------------------------------------------------------------------------------------
# ToolBench

# ToolBench keeps CJK ideographs, ASCII letters, digits and underscores (and, by a quirk of its
# pattern, '^'); everything else becomes an underscore.
_TB_DROP = re.compile("[^\u4e00-\u9fa5^a-zA-Z0-9_]")
_TB_RESERVED = ("from", "class", "return", "false", "true", "id", "and")


def toolbench_standardize(text: str) -> str:
    """A tool, API or parameter name as ToolBench writes it in function names.

    Characters other than letters, digits, ``_``, CJK ideographs (and ``^``) become ``_``;
    runs of ``_`` collapse; lower case; leading and trailing ``_`` dropped; a name starting
    with a digit gets ``get_`` in front. ``"Get Weather (v2)"`` → ``"get_weather_v2"``.
    """
    out = re.sub(r"_+", "_", _TB_DROP.sub("_", text)).lower().strip("_")
    if out and out[0].isdigit():
        out = "get_" + out
    return out


def _tb_reserved(name: str) -> str:
    return "is_" + name if name in _TB_RESERVED else name


def toolbench_function_name(tool_name: str, api_name: str) -> str:
    """ToolBench's function name for an API: ``{api}_for_{tool}``, standardized, at most
    the last 64 characters (as ToolBench truncates)."""
    api = _tb_reserved(toolbench_standardize(api_name))
    return f"{api}_for_{toolbench_standardize(tool_name)}"[-64:]


def _tb_type(value: Any) -> str:
    """A ToolBench parameter type for the normalizer: its first word (``DATE (YYYY-MM-DD)`` →
    ``DATE``); a type no normalizer knows is a string, as ToolBench itself treats it."""
    from .schemas import JSON_TYPES, TYPE_NAMES
    word = str(value or "string").split()[0].strip("(),")
    if word.lower() in JSON_TYPES or word.lower() in TYPE_NAMES:
        return word
    return "string"


def _tb_params(api: Mapping[str, Any], *, path, loc) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    for key in ("required_parameters", "optional_parameters"):
        params = api.get(key) or []
        if not isinstance(params, list):
            raise DataError(f"expected a list of parameters, got {type(params).__name__}",
                            path=path, location=loc, field=key)
        for i, p in enumerate(params):
            if not isinstance(p, Mapping) or not isinstance(p.get("name"), str):
                raise DataError("expected {name, type, description}", path=path, location=loc,
                                field=f"{key}.{i}")
            name = _tb_reserved(toolbench_standardize(p["name"]))
            if not name or name in props:
                continue
            schema: dict[str, Any] = {"type": _tb_type(p.get("type"))}
            if isinstance(p.get("description"), str) and p["description"].strip():
                schema["description"] = p["description"].strip()
            default = p.get("default")
            if default not in (None, ""):
                schema["example_value"] = default
            props[name] = schema
            if key == "required_parameters":
                required.append(name)
    return {"type": "object", "properties": props, "required": required}


def _tb_tool_record(api: Any, j: int, *, path: Path, where: str,
                    normalizer: SchemaNormalizer) -> dict[str, Any]:
    """One API of a query's ``api_list`` as a tool record named as ToolBench names it."""
    api = _mapping(api, path=path, loc=where, what="an API object")
    tool_name = _text(api, "tool_name", path=path, loc=f"{where}, api_list.{j}")
    api_name = _text(api, "api_name", path=path, loc=f"{where}, api_list.{j}")
    fname = toolbench_function_name(tool_name, api_name)
    desc = api.get("api_description")
    desc = desc.strip() if isinstance(desc, str) and desc.strip() else None
    rec_tool: dict[str, Any] = {
        "name": fname, "description": desc or f"{api_name} ({tool_name})",
        "server": toolbench_standardize(tool_name),
        "parameters": normalizer.schema(
            _tb_params(api, path=path, loc=f"{where}, api_list.{j}"),
            tool=fname, path=path, loc=where, field=f"api_list.{j}.parameters"),
        "tool_name": tool_name, "api_name": api_name}
    if isinstance(api.get("category_name"), str):
        rec_tool["category"] = api["category_name"]
    return rec_tool


def _tb_expected(rec: Mapping[str, Any], by_pair: dict[tuple[str, str], str], *,
                 path: Path, where: str) -> list[str]:
    """A query's ``relevant APIs`` as function names, each once, in order."""
    rel = rec.get("relevant APIs", rec.get("relevant_apis"))
    if not isinstance(rel, list) or not rel:
        raise DataError("missing or empty; expected a list of [tool, api] pairs", path=path,
                        location=where, field="relevant APIs")
    expected: list[str] = []
    for pair in rel:
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(x, str) for x in pair)):
            raise DataError(f"expected a [tool, api] pair of strings, got {pair!r}",
                            path=path, location=where, field="relevant APIs")
        name = by_pair.get((pair[0], pair[1]))
        if name is None:
            raise DataError(f"[{pair[0]!r}, {pair[1]!r}] is in no api_list of the given "
                            "files", path=path, location=where, field="relevant APIs")
        if name not in expected:
            expected.append(name)
    return expected


def from_toolbench(paths: Sequence[str | Path], *, strict: bool = False,
                   normalizer: SchemaNormalizer | None = None) -> BenchmarkImport:
    """ToolBench/StableToolBench query files → every API of their API lists, and the queries."""
    own = normalizer is None
    normalizer = normalizer if normalizer is not None else SchemaNormalizer(strict=strict)
    pool = _Pool()
    by_pair: dict[tuple[str, str], str] = {}
    queries: list[dict[str, Any]] = []
    read: list[tuple[Path, str]] = []
    pending: list[tuple[Path, str, dict, list]] = []
    for path in (Path(p) for p in paths):
        records = read_records(path)
        n_api = 0
        for loc, rec in records:
            rec = _mapping(rec, path=path, loc=loc, what="a ToolBench query object")
            qid = id_field(rec, "query_id", path=path, loc=loc)
            where = f"{loc} (query_id {qid!r})"
            apis = rec.get("api_list")
            if not isinstance(apis, list) or not apis:
                raise DataError("missing or empty; expected a list of APIs", path=path,
                                location=where, field="api_list")
            for j, api in enumerate(apis):
                rec_tool = _tb_tool_record(api, j, path=path, where=where,
                                           normalizer=normalizer)
                pair, fname = (rec_tool["tool_name"], rec_tool["api_name"]), rec_tool["name"]
                pool.add(tool_from_record(rec_tool, path=path, loc=where))
                by_pair[pair] = fname
                n_api += 1
            pending.append((path, where, rec, qid))
        read.append((path, f"toolbench: {len(records)} queries, {n_api} API entries"))
    for path, where, rec, qid in pending:
        text = _text(rec, "query", path=path, loc=where)
        expected = _tb_expected(rec, by_pair, path=path, where=where)
        queries.append({"id": qid, "query": text, "expected": expected,
                        "category": path.stem, "_loc": f"{path}, {where}"})
    _unique_ids(queries, path=None)
    tools, several = pool.tools()
    if own:
        normalizer.warn()
    return BenchmarkImport(tools, queries, read, several)


# --------------------------------------------------------------------------------------------
# MetaTool


def _read_json_doc(path: Path) -> Any:
    text = read_text(path)
    try:
        return loads_json(text)
    except (ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", None)
        raise DataError(f"invalid JSON: {getattr(exc, 'msg', exc)}", path=path,
                        location=f"line {line}" if line else None) from None


def _csv_rows(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    rows = []
    for row in reader:
        rows.append((reader.line_num, {(k or "").strip(): v for k, v in row.items()}))
    return header, rows


def metatool_kind(path: Path, doc: Any = None) -> str | None:
    """``"tools"``, ``"csv"`` or ``"json"`` for a MetaTool file, else ``None``."""
    if path.suffix.lower() == ".csv":
        header, _ = _csv_rows(path)
        return "csv" if {"Query", "Tool"} <= set(header) else None
    if isinstance(doc, Mapping) and doc and all(isinstance(v, str) for v in doc.values()):
        return "tools"
    if (isinstance(doc, list) and doc and isinstance(doc[0], Mapping)
            and "query" in doc[0] and "tool" in doc[0] and "api_list" not in doc[0]):
        return "json"
    return None


def _metatool_tools(doc: Mapping[str, str], names: set[str], *, path: Path) -> list[Tool]:
    """A ``{tool name: description}`` file's tools; a name seen before is refused."""
    tools: list[Tool] = []
    for i, (name, desc) in enumerate(doc.items(), start=1):
        tool = tool_from_record({"name": name.strip(), "description": desc},
                                path=path, loc=f"entry {i}")
        if tool.name in names:
            raise DataError(f"duplicate tool name {tool.name!r}", path=path,
                            location=f"entry {i}", field="name")
        names.add(tool.name)
        tools.append(tool)
    return tools


def _metatool_csv_queries(path: Path, names: set[str]) -> list[dict[str, Any]]:
    """A CSV of ``Query,Tool`` rows: one single-tool query a row."""
    queries: list[dict[str, Any]] = []
    _, rows = _csv_rows(path)
    for line, row in rows:
        where = f"line {line}"
        text = (row.get("Query") or "").strip()
        tool = (row.get("Tool") or "").strip()
        if not text:
            raise DataError("is empty", path=path, location=where, field="Query")
        _metatool_check(tool, names, path=path, loc=where, field="Tool")
        queries.append({"id": f"{path.stem}-{line - 1}", "query": text,
                        "expected": [tool], "category": "single",
                        "_loc": f"{path}, {where}"})
    return queries


def _metatool_json_queries(path: Path, doc: list[Any], names: set[str]
                           ) -> list[dict[str, Any]]:
    """A JSON list of ``{query, tool: [...]}``: one query an item, tools each once."""
    queries: list[dict[str, Any]] = []
    for i, rec in enumerate(doc, start=1):
        where = f"item {i}"
        rec = _mapping(rec, path=path, loc=where, what="a {query, tool} object")
        text = _text(rec, "query", path=path, loc=where)
        expected = rec.get("tool")
        expected = [expected] if isinstance(expected, str) else expected
        if not isinstance(expected, list) or not expected:
            raise DataError("expected a non-empty list of tool names", path=path,
                            location=where, field="tool")
        clean: list[str] = []
        for name in expected:
            _metatool_check(name, names, path=path, loc=where, field="tool")
            if name.strip() not in clean:
                clean.append(name.strip())
        queries.append({"id": f"{path.stem}-{i}", "query": text, "expected": clean,
                        "category": "multi" if len(clean) > 1 else "single",
                        "_loc": f"{path}, {where}"})
    return queries


def from_metatool(paths: Sequence[str | Path]) -> BenchmarkImport:
    """MetaTool's tool descriptions (``{name: description}``) and its query files (CSV of
    ``Query,Tool`` rows, JSON list of ``{query, tool: [...]}``), any order."""
    tools: list[Tool] = []
    names: set[str] = set()
    query_files: list[tuple[Path, str, Any]] = []
    read: list[tuple[Path, str]] = []
    for path in (Path(p) for p in paths):
        doc = None if path.suffix.lower() == ".csv" else _read_json_doc(path)
        kind = metatool_kind(path, doc)
        if kind is None:
            raise DataError("not a MetaTool file: expected a {tool: description} object, a CSV "
                            "with Query and Tool columns, or a JSON list of {query, tool}",
                            path=path)
        if kind == "tools":
            tools.extend(_metatool_tools(doc, names, path=path))
            read.append((path, f"metatool tools: {len(doc)} descriptions"))
        else:
            query_files.append((path, kind, doc))
    if query_files and not tools:
        raise DataError("MetaTool queries need the tool descriptions ({tool: description} "
                        "JSON) in the same import", path=query_files[0][0])
    queries: list[dict[str, Any]] = []
    for path, kind, doc in query_files:
        found = (_metatool_csv_queries(path, names) if kind == "csv"
                 else _metatool_json_queries(path, doc, names))
        queries.extend(found)
        read.append((path, f"metatool queries ({kind}): {len(found)} queries"))
    _unique_ids(queries, path=None)
    return BenchmarkImport(tools, queries, read)


def _metatool_check(name: Any, names: set[str], *, path, loc, field: str) -> None:
    from ..data import suggest_names
    if not isinstance(name, str) or not name.strip():
        raise DataError("expected a tool name", path=path, location=loc, field=field)
    if name.strip() not in names:
        raise DataError(f"{name!r} has no description in the tool file"
                        f"{suggest_names(name.strip(), sorted(names))}", path=path,
                        location=loc, field=field)


# --------------------------------------------------------------------------------------------
# BEIR


def _beir_layout(folder: Path) -> tuple[Path, Path, list[Path]]:
    """A BEIR folder's corpus and queries files and its qrels splits, refused when missing."""
    corpus_path, queries_path = folder / "corpus.jsonl", folder / "queries.jsonl"
    qrels_dir = folder / "qrels"
    for p in (corpus_path, queries_path):
        if not p.is_file():
            raise DataError(f"missing {p.name}; a BEIR folder holds corpus.jsonl, "
                            "queries.jsonl and qrels/<split>.tsv", path=folder)
    splits = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    if not splits:
        raise DataError("no qrels/<split>.tsv file; a BEIR folder holds corpus.jsonl, "
                        "queries.jsonl and qrels/<split>.tsv", path=folder)
    return corpus_path, queries_path, splits


def _beir_description(title: str, text: str, doc_id: str) -> str:
    """``title: text``, or ``text`` alone when the title is empty, the id or its start."""
    if not text:
        return title
    if title and title != doc_id and not text.startswith(title):
        return f"{title}: {text}"
    return text


def _beir_tool(rec: Mapping[str, Any], doc_id: str, *, path: Path, loc: str) -> Tool:
    """One corpus document as a tool, named by its ``_id``."""
    title = rec.get("title") if isinstance(rec.get("title"), str) else ""
    text = rec.get("text") if isinstance(rec.get("text"), str) else ""
    title, text = title.strip(), text.strip()
    if not text and not title:
        raise DataError("both title and text are empty; a tool needs a description",
                        path=path, location=f"{loc} (_id {doc_id!r})", field="text")
    meta = {"title": title} if title else {}
    if isinstance(rec.get("metadata"), Mapping) and rec["metadata"]:
        meta["beir_metadata"] = rec["metadata"]
    return tool_from_record({"name": doc_id, "description": _beir_description(title, text,
                                                                              doc_id),
                             **meta}, path=path, loc=loc)


def _beir_corpus(corpus_path: Path) -> tuple[list[Tool], dict[str, str]]:
    """The corpus's tools, and each document id's line."""
    tools: list[Tool] = []
    ids: dict[str, str] = {}
    for loc, rec in read_records(corpus_path):
        rec = _mapping(rec, path=corpus_path, loc=loc, what="a corpus document")
        doc_id = id_field(rec, "_id", path=corpus_path, loc=loc)
        if doc_id in ids:
            raise DataError(f"duplicate _id {doc_id!r} (first at {ids[doc_id]})",
                            path=corpus_path, location=loc, field="_id")
        ids[doc_id] = loc
        tools.append(_beir_tool(rec, doc_id, path=corpus_path, loc=loc))
    return tools, ids


def _beir_query_texts(queries_path: Path) -> dict[str, str]:
    """Each query id's text, in file order."""
    texts: dict[str, str] = {}
    for loc, rec in read_records(queries_path):
        rec = _mapping(rec, path=queries_path, loc=loc, what="a query object")
        qid = id_field(rec, "_id", path=queries_path, loc=loc)
        if qid in texts:
            raise DataError(f"duplicate _id {qid!r}", path=queries_path, location=loc,
                            field="_id")
        texts[qid] = _text(rec, "text", path=queries_path, loc=f"{loc} (_id {qid!r})")
    return texts


def _beir_qrels_row(parts: list[str], texts: dict[str, str], ids: dict[str, str], *,
                    path: Path, where: str) -> tuple[str, str, int]:
    """One qrels row checked: its query id, document id and integer score."""
    if len(parts) != 3:
        raise DataError(f"expected 3 tab-separated columns (query-id, corpus-id, "
                        f"score), got {len(parts)}", path=path, location=where)
    qid, doc, score_text = parts
    if not _is_number(score_text) or float(score_text) != int(float(score_text)):
        raise DataError(f"expected an integer score, got {score_text!r}", path=path,
                        location=where, field="score")
    score = int(float(score_text))
    if qid not in texts:
        raise DataError(f"query {qid!r} is not in queries.jsonl", path=path,
                        location=where, field="query-id")
    if doc not in ids:
        raise DataError(f"document {doc!r} is not in corpus.jsonl", path=path,
                        location=where, field="corpus-id")
    return qid, doc, score


def _beir_judge(judged: dict[str, dict[str, Any]], qid: str, doc: str, score: int,
                text: str, *, split: str, path: Path, where: str) -> None:
    """Record a positive judgement under its query (one split a query, one grade a doc)."""
    q = judged.get(qid)
    if q is None:
        q = judged[qid] = {"id": qid, "query": text, "expected": [],
                           "grades": {}, "_split": split, "_loc": f"{path}, {where}"}
    elif q["_split"] != split:
        raise DataError(f"query {qid!r} is judged in qrels/{q['_split']}.tsv too; a "
                        "query belongs to one split", path=path, location=where,
                        field="query-id")
    if doc in q["grades"]:
        raise DataError(f"query {qid!r} judges {doc!r} twice", path=path,
                        location=where, field="corpus-id")
    q["expected"].append(doc)
    q["grades"][doc] = score


def _beir_qrels(path: Path, texts: dict[str, str], ids: dict[str, str],
                judged: dict[str, dict[str, Any]]) -> str:
    """One ``qrels/<split>.tsv`` read into ``judged``; its line of what was read."""
    split = path.stem
    zero = 0
    rows = 0
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("\t")]
        if lineno == 1 and "query" in parts[0].lower() and not _is_number(parts[-1]):
            continue  # the header (query-id corpus-id score)
        where = f"line {lineno}"
        qid, doc, score = _beir_qrels_row(parts, texts, ids, path=path, where=where)
        rows += 1
        if score <= 0:
            zero += 1
            continue
        _beir_judge(judged, qid, doc, score, texts[qid], split=split, path=path, where=where)
    return (f"beir qrels ({split}): {rows} judgements"
            + (f", {zero} scoring 0 dropped" if zero else ""))


def _beir_query_records(judged: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The judged queries as query records: a split or ``qrels`` name, grades when not all 1."""
    queries = []
    for q in judged.values():
        split = q.pop("_split")
        if split in ("train", "dev", "test"):
            q["split"] = split
        else:
            q["qrels"] = split
        if all(g == 1 for g in q["grades"].values()):
            del q["grades"]
        queries.append(q)
    return queries


def from_beir(folder: str | Path) -> BenchmarkImport:
    """A BEIR-style folder → one tool per corpus document, one query per judged query."""
    folder = Path(folder)
    corpus_path, queries_path, splits = _beir_layout(folder)
    tools, ids = _beir_corpus(corpus_path)
    texts = _beir_query_texts(queries_path)
    judged: dict[str, dict[str, Any]] = {}
    read = [(corpus_path, f"beir corpus: {len(tools)} documents"),
            (queries_path, f"beir queries: {len(texts)} queries")]
    for path in splits:
        read.append((path, _beir_qrels(path, texts, ids, judged)))
    queries = _beir_query_records(judged)
    _unique_ids(queries, path=None)
    unjudged = len(texts) - len(queries)
    notes = [f"{unjudged} queries of queries.jsonl have no relevant document in qrels: "
             "not written"] if unjudged else []
    return BenchmarkImport(tools, queries, read, notes=notes)


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False
