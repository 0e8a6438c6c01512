"""Extending a labeled query file by one request: rank, pick, check, append, see the impact.

The steps behind ``toolsel label`` and the explorer's labeling panel, as pure functions over a
registry and the file's queries (only :func:`append_query` writes):

1. :func:`rank_for_labeling`: the registry ranked for the new request by one scorer (the
   ``default`` scorer), so the labeler picks the expected tools from the likely ones;
2. :func:`new_record`: the line to append: a new unique id (:func:`next_id`, following the
   file's own id pattern), the split by the documented rule
   (:func:`toolsel.datasets.assign_splits`) when the file is split, unknown tool names
   refused with the closest names suggested;
3. :func:`near_duplicates`: requests already in the file that say nearly the same thing
   (token Jaccard, and embedding cosine when the embedding model is available);
4. :func:`append_query`: under a lock (concurrent appends wait their turn), validate the
   whole file plus the new line, then replace the file atomically (written to a temporary
   file beside it, then renamed) and read it back, so an interrupted, refused or concurrent
   append never loses or half-writes a line;
5. :func:`label_impact`: per scorer, the rank of each expected tool and the smallest K at
   which it is sent: what the new label will change in every recall table.

:class:`LabelSession` holds what these steps share across many requests (the fitted scorers,
the embedding vectors of requests already seen), so labeling request after request in one
process fits each scorer and loads the model once; :func:`read_requests` reads the list of
requests ``toolsel label --from FILE`` labels in one session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..scorers.base import compared_scorers
from ..data import (DataError, Query, Registry, Tool, check_tool_names, query_from_record,
                    read_records, read_text)
from ..datasets import assign_splits, read_labeled
from ..io import (OutputError, folder_lock, jsonl_line, jsonl_lines, maintained_file,
                  refuse_never_write, write_bytes)
from ..ranking import rank_order, ranks_of
from ..scorers.base import Scorer, get_scorer
from ..text import tokenize
from ..visible import visible

__all__ = ["LABEL_SCORERS", "LABEL_KS", "file_ids", "rank_for_labeling", "next_id",
           "resolve_picks", "new_record", "near_duplicates", "append_query", "label_impact",
           "record_line", "one_line", "telling_parts", "LabelSession", "read_requests",
           "LabelRequest"]

#: Scorers whose view of a new label :func:`label_impact` reports.
LABEL_SCORERS = compared_scorers()  # the registry of scorer names (compared_scorers)
#: Cut-offs at which :func:`label_impact` says whether each expected tool is sent.
LABEL_KS = (1, 3, 5, 10)

_ID = re.compile(r"^(.*?)(\d+)$")


def _registry(registry: Sequence[Tool]) -> Registry:
    return registry if isinstance(registry, Registry) else Registry(registry)


def _fitted(registry: Registry, scorer: str | Scorer, cache: dict | None) -> Scorer:
    key = scorer if isinstance(scorer, str) else id(scorer)
    if cache is not None and key in cache:
        return cache[key]
    sc = get_scorer(scorer).fit(registry)
    if cache is not None:
        cache[key] = sc
    return sc


def file_ids(path: str | Path) -> list[str | int]:
    """The ids of a labeled file as written (integers stay integers), in file order."""
    path = Path(path)
    if not path.exists() or not read_text(path).strip():
        return []
    return [rec.get("id") for _, rec in read_records(path) if isinstance(rec, Mapping)]


def rank_for_labeling(registry: Sequence[Tool], query: str, scorer: str | Scorer = "default",
                      *, top: int | None = 15, _cache: dict | None = None) -> pd.DataFrame:
    """The registry ranked for ``query`` (best first; ties in registry order).

    Columns ``n`` (1-based position, what a labeler types to pick a tool), ``tool``, ``score``,
    ``always_include``, ``domain``, ``description``. ``top=None`` keeps every tool.
    """
    reg = _registry(registry)
    sc = _fitted(reg, scorer, _cache)
    scores = sc.score(query)
    order = rank_order(scores)
    if top is not None:
        order = order[:top]
    return pd.DataFrame([{"n": pos, "tool": reg[int(i)].name, "score": float(scores[i]),
                          "always_include": reg[int(i)].always_include,
                          "domain": reg[int(i)].domain or "",
                          "description": reg[int(i)].description}
                         for pos, i in enumerate(order, start=1)],
                        columns=["n", "tool", "score", "always_include", "domain",
                                 "description"])


def next_id(ids: Iterable[str | int]) -> str | int:
    """A new id following the file's pattern: ``r162`` → ``r163``, ``plg-009`` → ``plg-010``.

    The pattern is the prefix and zero padding of the last id ending in digits; the number is
    one more than the largest number with that prefix (and never an id already taken).
    Integer ids give the next integer; no ids at all give ``q001``.
    """
    ids = list(ids)
    taken = {str(i) for i in ids}
    if ids and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return max(ids) + 1
    numbered = [m for m in (_ID.match(str(i)) for i in ids) if m]
    if not numbered:
        prefix, width, n = ("q", 3, 1) if not ids else (f"{ids[-1]}-", 0, 1)
    else:
        prefix = numbered[-1].group(1)
        same = [m.group(2) for m in numbered if m.group(1) == prefix]
        padded = any(len(d) > 1 and d.startswith("0") for d in same)
        width = len(numbered[-1].group(2)) if padded else 0
        n = max(int(d) for d in same) + 1
    while f"{prefix}{n:0{width}d}" in taken:
        n += 1
    return f"{prefix}{n:0{width}d}"


def resolve_picks(picks: str | Sequence[str], ranking: pd.DataFrame,
                  registry: Sequence[Tool]) -> list[str]:
    """Tool names from a labeler's picks: numbers of ``ranking`` rows or tool names.

    ``"1, 3, slack_send_dm"`` → the tools shown at positions 1 and 3, then ``slack_send_dm``.
    Raises :class:`DataError` for a number not shown or a name not in the registry (with the
    closest names), and for a tool picked twice.
    """
    reg = _registry(registry)
    items = ([p.strip() for p in picks.split(",")] if isinstance(picks, str)
             else [str(p).strip() for p in picks])
    items = [p for p in items if p]
    if not items:
        raise DataError("pick at least one expected tool (a number from the list or a name)",
                        field="expected")
    shown = dict(zip(ranking["n"].astype(int), ranking["tool"]))
    names = []
    for item in items:
        if item.isdigit() and item not in reg:
            if int(item) not in shown:
                raise DataError(f"{item} is not a number in the list (1-{len(shown)})",
                                field="expected")
            names.append(shown[int(item)])
        else:
            names.append(item)
    check_tool_names(names, reg, field="expected")
    return names


def new_record(query: str, expected: Sequence[str], existing: Sequence[Query],
               registry: Sequence[Tool], *, id: str | int | None = None,
               split: str | None = None, category: str | None = None,
               ids: Sequence[str | int] | None = None, **fields: Any) -> dict[str, Any]:
    """The JSON record of a new labeled request, validated, ready to append.

    ``id`` defaults to :func:`next_id` of the file's ids (``ids`` as written, from
    :func:`file_ids`, so integer ids stay integers; else the ids of ``existing``). ``split`` defaults to what the
    documented rule (:func:`~toolsel.datasets.assign_splits`: alternate within each
    category in file order) gives the new last line, when the file has splits; a file without
    any split gets none. Extra ``fields`` (``domain``, ``phrasing``, ``tags``,
    ``search_term``...) are kept. Raises :class:`DataError` for an unknown tool name (with the
    closest names), a taken id or an invalid field.
    """
    reg = _registry(registry)
    qid = next_id([q.id for q in existing] if ids is None else ids) if id is None else id
    if str(qid) in {q.id for q in existing}:
        raise DataError(f"id {qid!r} is already in the file", field="id")
    rec: dict[str, Any] = {"id": qid, "query": query, "expected": list(expected)}
    rec.update({k: v for k, v in fields.items() if v not in (None, "", [], ())})
    if split is None and any(q.split for q in existing):
        split = assign_splits([*existing, {"category": category}])[-1]
    if split is not None:
        rec["split"] = split
    if category is not None:
        rec["category"] = category
    query_from_record(rec, loc="new request", registry=reg)  # raises on any invalid field
    return rec


def near_duplicates(query: str, existing: Sequence[Query], *, token_threshold: float = 0.8,
                    cosine_threshold: float = 0.95, embed: bool = True) -> pd.DataFrame:
    """Requests of ``existing`` that nearly repeat ``query``, most similar first.

    A request is flagged when the Jaccard overlap of the two token sets (the article's
    tokenizer) is at least ``token_threshold``, or, with ``embed`` and the embedding model
    installed, when the cosine of their MiniLM vectors is at least ``cosine_threshold``.
    Columns ``id``, ``query``, ``expected``, ``token_jaccard``, ``cosine`` (NaN without
    embeddings), ``flagged_by`` (``"tokens"``, ``"embedding"`` or both).
    """
    cols = ["id", "query", "expected", "token_jaccard", "cosine", "flagged_by"]
    if not existing:
        return pd.DataFrame(columns=cols)
    new = set(tokenize(query))

    def overlap(text: str) -> float:
        other = set(tokenize(text))
        return len(new & other) / len(new | other) if new | other else 0.0

    jac = np.array([overlap(q.query) for q in existing])
    cos = np.full(len(existing), np.nan)
    if embed:
        try:
            from ..scorers.embedding import QUERY_CACHE, load_encoder
            enc = load_encoder()
            # through the process's vector cache: a session encodes each request once
            vecs = np.asarray(QUERY_CACHE.get_or_encode(
                f"{enc.model_id}#near-duplicates", [query, *(q.query for q in existing)],
                enc.encode), dtype=np.float64)
        except ImportError:
            vecs = None
        if vecs is not None:
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
            cos = vecs[1:] @ vecs[0]
    rows = []
    for q, j, c in zip(existing, jac, cos):
        by = [name for name, hit in (("tokens", j >= token_threshold),
                                     ("embedding", not np.isnan(c) and c >= cosine_threshold))
              if hit]
        if by:
            rows.append({"id": q.id, "query": q.query, "expected": list(q.expected),
                         "token_jaccard": float(j), "cosine": float(c),
                         "flagged_by": " + ".join(by)})
    out = pd.DataFrame(rows, columns=cols)
    key = out["cosine"].fillna(0) + out["token_jaccard"]
    return out.loc[key.sort_values(ascending=False, kind="stable").index].reset_index(drop=True)


def append_query(path: str | Path, record: Mapping[str, Any],
                 registry: Sequence[Tool], *, assign_id: bool = False,
                 assign_split: bool = False) -> Query:
    """Append one labeled request to the JSONL file ``path``, validated, atomically, one
    writer at a time.

    Under an exclusive lock on the file's folder (:func:`toolsel.io.folder_lock`; other
    appends wait), the existing file is loaded and validated (with ``registry``), then the
    new record (its tool names must exist, its id must be new). The file is rewritten
    through a temporary file in the same folder and renamed over the original, so every
    existing line is kept byte for byte, a missing final newline is added before the new
    line, and a failure leaves the file as it was; the result is read back and checked
    (every earlier line, then the new one) before the lock is released. A missing file is
    created.

    ``assign_id``: the record's id was chosen by :func:`next_id` before the lock: it is
    chosen again from the file as it is now (another labeler may have taken it), so ids stay
    unique under concurrent appends. ``assign_split``: likewise the split, by the file's rule.
    Returns the new :class:`Query`.
    """
    shown = Path(path)
    # through a symbolic link only to an existing, non-empty file of this user
    # (:func:`toolsel.io.maintained_file`): it is read, locked (its folder) and rewritten there
    path = maintained_file(shown)
    judged = refuse_never_write(path, file=True, data_ok=True)
    reg = _registry(registry)
    record = dict(record)
    path.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(path.parent, what=shown):
        existing = read_labeled(path, reg)
        if assign_id:
            record["id"] = next_id(file_ids(path))
        if assign_split and any(q.split for q in existing):
            record["split"] = assign_splits([*existing, {"category": record.get("category")}])[-1]
        new = query_from_record(record, path=path, loc="new request", registry=reg)
        if new.id in {q.id for q in existing}:
            raise DataError(f"id {new.id!r} is already in the file", path=path, field="id")
        old, read = _read_for_update(path)
        if old and not old.endswith(b"\n"):
            old += b"\n"
        line = (record_line(record) + "\n").encode("utf-8")
        # the very file read, in the folder judged: a swap meanwhile is refused
        write_bytes(old + line, path, keep_mode=True, judged=judged, expect=read)
        written = path.read_bytes()
        if written != old + line:
            raise OutputError(path, "the file read back differs from what was appended; "
                                    "another program changed it meanwhile: check it")
    return new


def _read_for_update(path: Path) -> tuple[bytes, tuple[int, int] | None]:
    """The bytes of ``path`` (``b""`` when missing) and its (device, inode), read through one
    descriptor that follows no link."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return b"", None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        return fh.read(), (st.st_dev, st.st_ino)


def label_impact(registry: Sequence[Tool], query: str, expected: Sequence[str],
                 scorers: Sequence[str | Scorer] = LABEL_SCORERS,
                 ks: Sequence[int] = LABEL_KS, *, _cache: dict | None = None) -> pd.DataFrame:
    """What a new label shows about each scorer: per scorer and expected tool, its rank and
    the smallest K of ``ks`` at which the filter sends it.

    Ranks are among the filtered tools (the registry's always-include tools are sent anyway
    and never compete for K), ties in registry order, as :func:`toolsel.select_tools` ranks.
    An always-include expected tool has ``rank`` 0 and ``found_at`` 0 (always sent). Columns
    ``scorer``, ``tool``, ``rank``, ``found_at`` (NaN when not sent at the largest K), then
    one boolean column ``@k`` per cut-off, and ``complete@k`` per scorer repeated on its rows
    (every expected tool sent at K).
    """
    reg = _registry(registry)
    check_tool_names(list(expected), reg, field="expected")
    ks = sorted(set(int(k) for k in ks))
    always = np.array([t.always_include for t in reg], dtype=bool)
    targets = [reg.index(n) for n in expected]
    rows = []
    for scorer in scorers:
        sc = _fitted(reg, scorer, _cache)
        label = scorer if isinstance(scorer, str) else sc.name
        ranks = ranks_of(sc.score(query), targets, ~always)
        for name, i, rank in zip(expected, targets, ranks):
            rank = 0 if always[i] else int(rank)
            sent = {k: rank <= k for k in ks}
            found = 0 if rank == 0 else next((k for k in ks if sent[k]), np.nan)
            rows.append({"scorer": label, "tool": name, "rank": rank, "found_at": found,
                         **{f"@{k}": sent[k] for k in ks}})
    out = pd.DataFrame(rows)
    for k in ks:
        out[f"complete@{k}"] = out.groupby("scorer", sort=False)[f"@{k}"].transform("all")
    return out


def record_line(record: Mapping[str, Any]) -> str:
    """The JSON line :func:`append_query` writes for ``record`` (without the newline):
    :func:`toolsel.io.jsonl_line`, the writer of every JSONL file."""
    return jsonl_line(dict(record))


def one_line(text: str) -> str:
    """``text`` on one line: newlines, tabs and runs of spaces become one space; what
    :func:`~toolsel.visible.visible` escapes is shown escaped."""
    return visible(" ".join(text.split()))


def telling_parts(descriptions: Sequence[str], *, min_shared: int = 24
                  ) -> tuple[list[str], list[str]]:
    """What tells each description apart from the others shown with it.

    For each description (made :func:`one_line`), the longest word-aligned prefix it shares
    with another description of the list; when that prefix is at least ``min_shared``
    characters, the description is replaced by ``"… " + the rest`` (the full text when the
    rest is empty: two identical descriptions). Returns the texts to show and the shared
    prefixes that were cut (each once, in first-seen order).
    """
    texts = [one_line(d) for d in descriptions]
    out, cut = [], []
    for i, t in enumerate(texts):
        best = 0
        for j, u in enumerate(texts):
            if i == j:
                continue
            n = len(os.path.commonprefix([t, u]))
            if n < len(t) and n < len(u):  # back to a word boundary inside both
                n = t.rfind(" ", 0, n + 1) + 1
            best = max(best, n)
        rest = t[best:].strip()
        if best >= min_shared and rest:
            out.append("… " + rest)
            shared = t[:best].strip()
            if shared not in cut:
                cut.append(shared)
        else:
            out.append(t)
    return out, cut


# --------------------------------------------------------------------------------------------
# many requests in one process

#: Fields a ``--from`` JSONL request may carry besides ``query`` (the rest of a query record).
REQUEST_FIELDS = ("expected", "id", "split", "category", "domain", "phrasing", "tags",
                  "search_term", "grades")


@dataclass(frozen=True)
class LabelRequest:
    """One request of a ``--from`` file: its text, the expected tools when the file gives
    them (else ``()``: picked by the labeler), other fields of the record, and where it is
    (``"line N"``). ``proposed``: tools offered as the expected ones for the labeler to
    accept or change (a traffic log's tools called after the search); ``from_log``: the
    request is a search of a traffic log; ``failed``: tools called after it whose calls all
    ended in an error (shown, not proposed)."""

    query: str
    expected: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    location: str = ""
    proposed: tuple[str, ...] = ()
    from_log: bool = False
    failed: tuple[str, ...] = ()


def read_requests(path: str | Path, registry: Sequence[Tool]) -> list[LabelRequest]:
    """The requests of a ``toolsel label --from`` file, every one checked before any is labeled.

    Three formats, told apart by the first line, else the first non-blank character:

    - a traffic log of ``toolsel serve --log`` (first line ``// written by toolsel serve``):
      one request per search, the tools the agent called after it in its conversation (with
      a result that was not an error) proposed as its expected tools (:func:`traffic_requests`);

    - plain text: one request per line, as a user would type it; blank lines are skipped;
    - JSONL (first character ``{``; a JSON array of objects works too): one object per line
      with a ``query`` string and optionally ``expected`` (a list of tool names, or one
      comma-separated string), ``category``, ``split``, ``id`` and the other fields of a
      labeled query (``domain``, ``phrasing``, ``tags``, ``search_term``, ``grades``).
      A request without ``expected`` is labeled by picking from the ranking.

    Raises :class:`DataError` naming the file, the line and the field for an unreadable line,
    a missing or empty ``query``, an unknown field, an unknown tool name (with the closest
    names) or an invalid field value; a file with no request is an error too.
    """
    path = Path(path)
    reg = _registry(registry)
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        raise DataError("no request in the file (one request per line, or JSONL with a "
                        "'query' field)", path=path)
    from ..integrations.traffic import is_traffic_log
    if is_traffic_log(text):
        return traffic_requests(path, reg)
    if stripped[0] not in "{[":
        return _plain_requests(text)
    out = [_json_request(rec, path, loc, reg) for loc, rec in read_records(path)]
    if not out:
        raise DataError("no request in the file", path=path)
    return out


def traffic_requests(path: str | Path, registry: Sequence[Tool]) -> list[LabelRequest]:
    """The searches of a ``toolsel serve`` traffic log as requests to label, each with the
    tools called after it proposed. A search repeated with the same text and the same calls
    is offered once; a called tool the registry does not have is left out of the proposal;
    each said in one warning."""
    import warnings

    from ..integrations.traffic import read_traffic
    reg = _registry(registry)
    found, notes = read_traffic(path)
    if not found:
        raise DataError("no search in the traffic log", path=path)
    out: list[LabelRequest] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    unknown: dict[str, str] = {}
    repeated = 0
    for r in found:
        proposed = tuple(n for n in r.called if n in reg)
        for n in (*r.called, *r.failed):
            if n not in reg:
                unknown.setdefault(n, r.location)
        if (r.query, proposed) in seen:
            repeated += 1
            continue
        seen.add((r.query, proposed))
        out.append(LabelRequest(r.query, (), {}, r.location, proposed, from_log=True,
                                failed=tuple(n for n in r.failed if n in reg)))
    if repeated:
        notes.append(f"{repeated} search(es) repeat an earlier one's text and calls: "
                     "offered once")
    if unknown:
        notes.append(f"called tools not in the registry, left out of the proposals: "
                     + ", ".join(f"{n!r} ({loc})" for n, loc in unknown.items()))
    for note in notes:
        warnings.warn(f"{path}: {note}" if not note.startswith(str(path)) else note,
                      stacklevel=2)
    return out


def _plain_requests(text: str) -> list[LabelRequest]:
    """The requests of a plain-text file: one per non-blank line, stripped (split at ``\n``
    only, as every file toolsel reads: a U+2028 inside a request stays in it)."""
    return [LabelRequest(line.strip(), location=f"line {n}")
            for n, line in jsonl_lines(text) if line.strip()]


def _json_request(rec: Any, path: Path, loc: str, reg: Registry) -> LabelRequest:
    """One JSONL record of a ``--from`` file as a request, every field checked with its line."""
    if not isinstance(rec, Mapping):
        raise DataError(f"expected an object with a 'query' field, got "
                        f"{type(rec).__name__}", path=path, location=loc)
    unknown = [k for k in rec if k != "query" and k not in REQUEST_FIELDS]
    if unknown:
        raise DataError(f"unknown field; a request takes 'query' and "
                        f"{', '.join(map(repr, REQUEST_FIELDS))}", path=path, location=loc,
                        field=str(unknown[0]))
    query = rec.get("query")
    if not isinstance(query, str) or not query.strip():
        raise DataError("expected the request as a non-empty string", path=path,
                        location=loc, field="query")
    expected = rec.get("expected", ())
    if isinstance(expected, str):
        expected = [e.strip() for e in expected.split(",") if e.strip()]
    fields = {k: v for k, v in rec.items() if k not in ("query", "expected")}
    if expected:
        # the whole record as it will be appended: every field checked now, with its line
        query_from_record({"id": "new", **fields, "query": query.strip(),
                           "expected": list(expected)}, path=path, loc=loc, registry=reg)
    elif "expected" in rec and not isinstance(rec["expected"], (list, str)):
        raise DataError("expected a list of tool names", path=path, location=loc,
                        field="expected")
    return LabelRequest(query.strip(), tuple(expected), fields, loc)


class LabelSession:
    """Label request after request against one registry and one query file, in one process.

    The scorers (``rank_by`` and the ``scorers`` of the impact table) are fitted on the
    registry once, on first use, and kept; the embedding vectors of requests already seen
    (for the near-duplicate check) stay in the process's vector cache, so a request after the
    first costs one scoring pass per scorer and one encoding of the new text. The file is
    re-read for every request (another labeler may have appended meanwhile) and every append
    goes through :func:`append_query` (locked, atomic, read back).

    Parameters
    ----------
    registry : sequence of Tool
    path : path of the labeled JSONL file (created on the first append if missing)
    rank_by : scorer of the ranking the labeler picks from
    top : tools of that ranking shown
    scorers, ks : the scorers and cut-offs of :func:`label_impact`
    embed_check : near-duplicates by embedding cosine too (not only tokens)
    """

    def __init__(self, registry: Sequence[Tool], path: str | Path, *,
                 rank_by: str | Scorer = "default", top: int | None = 15,
                 scorers: Sequence[str | Scorer] = LABEL_SCORERS,
                 ks: Sequence[int] = LABEL_KS, embed_check: bool = True):
        self.registry = _registry(registry)
        self.path = Path(path)
        self.rank_by = rank_by
        self.top = top
        self.scorers = list(scorers)
        self.ks = sorted(set(int(k) for k in ks))
        self.embed_check = embed_check
        self.appended: list[Query] = []
        self._cache: dict = {}

    def existing(self) -> list[Query]:
        """The file's requests as they are now (validated against the registry)."""
        return read_labeled(self.path, self.registry)

    def warm(self) -> "LabelSession":
        """Fit every scorer now (and load the embedding model of the near-duplicate check),
        instead of on the first request."""
        for sc in [self.rank_by, *self.scorers]:
            _fitted(self.registry, sc, self._cache)
        if self.embed_check:
            near_duplicates("", self.existing(), embed=True)
        return self

    def rank(self, query: str) -> pd.DataFrame:
        """:func:`rank_for_labeling` by ``rank_by``, the top ``top`` tools."""
        return rank_for_labeling(self.registry, query, self.rank_by, top=self.top,
                                 _cache=self._cache)

    def picks(self, picks: str | Sequence[str], query: str,
              ranking: pd.DataFrame | None = None) -> list[str]:
        """:func:`resolve_picks` against the ranking shown for ``query``."""
        return resolve_picks(picks, self.rank(query) if ranking is None else ranking,
                             self.registry)

    def prepare(self, query: str, expected: Sequence[str], *, id: str | int | None = None,
                split: str | None = None, category: str | None = None, **fields: Any
                ) -> tuple[dict[str, Any], pd.DataFrame]:
        """The record to append (:func:`new_record`) and its near-duplicates in the file."""
        existing = self.existing()
        record = new_record(query, expected, existing, self.registry, id=id, split=split,
                            category=category, ids=file_ids(self.path), **fields)
        return record, near_duplicates(query, existing, embed=self.embed_check)

    def append(self, record: Mapping[str, Any], *, assign_id: bool = True,
               assign_split: bool = True) -> Query:
        """:func:`append_query` (id and split chosen again under the lock when asked)."""
        added = append_query(self.path, record, self.registry, assign_id=assign_id,
                             assign_split=assign_split)
        self.appended.append(added)
        return added

    def impact(self, query: str, expected: Sequence[str]) -> pd.DataFrame:
        """:func:`label_impact` over the session's scorers and cut-offs."""
        return label_impact(self.registry, query, expected, self.scorers, self.ks,
                            _cache=self._cache)
