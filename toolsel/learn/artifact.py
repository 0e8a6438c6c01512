"""The model file ``toolsel fit`` writes: versioned JSON, no pickle.

What it holds (``format_version`` 1)::

    {"format": "toolsel-learned-model", "format_version": 1, "toolsel_version": "...",
     "base": "default", "embedding_model": "all-MiniLM-L6-v2-onnx-int8",
     "registry": {"fingerprint": "...", "n_tools": 61},
     "labels": {"hash": "...", "n_requests": 162},
     "settings": {"setting": {...}, "max_per_tool": null, "always_include": [...],
                  "rule": "..."},
     "selection": [{"setting": "...", "dev_score": 0.9, ...}, ...],
     "tools": {"slack_send_dm": {"text_hash": "...", "n_requests": 3}, ...},
     "requests": [{"id": "...", "text": "...", "tools": ["slack_send_dm"]}, ...],
     "vectors": {"dtype": "float32", "shape": [162, 384], "base64": "..."}}

``tools`` lists the tools that learned something, each with the digest of the text it was fit
on (:func:`~toolsel.learn.model.tool_hash`). Loading a model onto a registry
(:func:`load_model`) checks each: a tool whose text changed, or that is gone, learns nothing
and keeps its blind score, and one :class:`LearnedModelWarning` line says how many; the other
tools keep what they learned. Nothing is mixed silently. A file that is not such a model, or
has a field of the wrong kind, is a :class:`~toolsel.data.DataError` naming the file and the
field.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..data import DataError, Registry, Tool
from ..scorers.base import registry_fingerprint
from .model import LearnedScorer, tool_hash
from .rule import RULE
from .signals import Setting, fit_evidence

__all__ = ["FORMAT", "FORMAT_VERSION", "model_record", "save_model", "read_model", "load_model",
           "LearnedModelWarning", "is_model_file"]

FORMAT = "toolsel-learned-model"
FORMAT_VERSION = 2
#: A model file larger than this is refused before it is parsed (bytes).
MAX_BYTES = 256 * 1024 * 1024
#: JSON nesting deeper than this is refused (a model file nests 4 levels).
MAX_DEPTH = 32


class LearnedModelWarning(UserWarning):
    """A model file was fit on other tool texts: some tools fall back to their blind scores."""


def _version() -> str:
    # the installed distribution's version (toolsel/__init__.py sits above this layer)
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("toolsel")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree, not installed
        return "unknown"


def model_record(scorer: LearnedScorer, registry: Sequence[Tool]) -> dict:
    """The JSON record of a fitted :class:`LearnedScorer` (see the module docstring)."""
    if not scorer.is_fitted():
        raise ValueError("the model is not fitted: call fit(tools, queries) before saving it")
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    if not scorer.is_fitted_for(reg):
        raise ValueError("the model was not fit on this registry")
    if not isinstance(scorer.base, str):
        raise ValueError("a model file names its blind scorer: fit with base=<scorer name>, "
                         f"not a {type(scorer.base).__name__} object")
    ev = scorer.evidence_
    tools_of: list[list[str]] = [[] for _ in ev.texts]
    for j, t in ev.pairs:
        tools_of[int(j)].append(reg[int(t)].name)
    counts = np.bincount(ev.pairs[:, 1], minlength=len(reg)) if len(ev.pairs) else \
        np.zeros(len(reg), dtype=int)
    vectors = np.ascontiguousarray(ev.vectors, dtype="<f4")
    always = [reg[i].name for i in np.flatnonzero(~scorer.candidates_)]
    estimate = _estimate_record(getattr(scorer, "estimate_", None))
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "toolsel_version": _version(),
        "base": scorer.base_name_, "vectors_from": scorer.vectors_from_,
        "embedding_model": scorer.embedder_.encoder_.model_id,
        "registry": {"fingerprint": scorer.fingerprint_, "n_tools": len(reg)},
        "labels": {"hash": scorer.labels_hash_, "n_requests": len(scorer.train_ids_)},
        "settings": {"setting": scorer.setting_.to_json(), "max_per_tool": scorer.max_per_tool,
                     "always_include": always, "rule": RULE},
        "estimate": estimate,
        "selection": [{k: (None if isinstance(v, float) and not np.isfinite(v) else v)
                       for k, v in row.items()} for row in scorer.selection_],
        "tools": {reg[int(t)].name: {"text_hash": tool_hash(reg[int(t)]),
                                     "n_requests": int(counts[t])} for t in ev.labeled},
        "requests": [{"id": i, "text": t, "tools": ts}
                     for i, t, ts in zip(scorer.train_ids_, ev.texts, tools_of)],
        "vectors": {"dtype": "float32", "shape": list(vectors.shape),
                    "base64": base64.b64encode(vectors.tobytes()).decode("ascii")},
    }


def _plain(v):
    """A table cell as plain JSON: finite floats, ints, strings; ``None`` for nan."""
    if isinstance(v, (float, np.floating)):
        return float(v) if np.isfinite(v) else None
    return int(v) if isinstance(v, np.integer) else v


def _estimate_record(est) -> dict | None:
    """The fit's cross-fitted estimate as the model file keeps it (``None``: not estimated)."""
    if est is None:
        return None
    return {"ships": bool(est.ships), "sentence": est.sentence,
            "gains": [{k: _plain(v) for k, v in row.items()}
                      for row in est.gains.to_dict("records")]}


def is_model_file(path: str | Path) -> bool:
    """True when ``path`` is a JSON file whose ``format`` is a toolsel model's."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(200)
        return f'"format": "{FORMAT}"' in head
    except (OSError, UnicodeDecodeError):
        return False


def save_model(scorer: LearnedScorer, registry: Sequence[Tool], path: str | Path, *,
               overwrite: bool = False) -> Path:
    """Write the model file atomically. An existing file is replaced only when it is a toolsel
    model file or ``overwrite`` is true: a file this command did not write is never lost."""
    from ..io import OutputError, check_output_file, write_json
    path = Path(path)
    judged = check_output_file(path, force=overwrite)
    if path.exists() and not path.is_symlink() and not overwrite and not is_model_file(path):
        raise OutputError(path, "exists and is not a toolsel model file; refusing to "
                                "overwrite it (choose another --out, or pass --force)")
    # checked again as it is replaced: the model file read through no link, in that folder
    return write_json(model_record(scorer, registry), path, indent=1, force=overwrite,
                      owned=_is_model_text, judged=judged)


def _is_model_text(data: bytes) -> bool:
    """Whether ``data`` starts like a toolsel model file (its ``format``)."""
    return f'"format": "{FORMAT}"'.encode() in data[:200]


def _need(rec, key, kind, path, where=None):
    field = key if where is None else f"{where}.{key}"
    if key not in rec:
        raise DataError(f"missing; expected {kind.__name__ if isinstance(kind, type) else kind}",
                        path=path, field=field)
    value = rec[key]
    types = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        names = "/".join(t.__name__ for t in types)
        raise DataError(f"expected {names}, got {type(value).__name__}", path=path, field=field)
    return value


#: The plain fields every model file holds, checked in this order: (section or None, key, kind).
_HEADER_FIELDS = (
    (None, "base", str), (None, "embedding_model", str),
    (None, "registry", dict), ("registry", "fingerprint", str),
    (None, "labels", dict), ("labels", "hash", str),
)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number a model file may hold")


def _read_json_object(path: Path) -> dict:
    """The top-level JSON object of the file at ``path``: readable text of at most
    :data:`MAX_BYTES` (:func:`toolsel.data.read_text`: no folder, no device), strict JSON (no
    NaN or Infinity), nested at most :data:`MAX_DEPTH` levels."""
    from ..data import json_depth, read_text
    if not path.exists():
        raise DataError("model file not found", path=path)
    text = read_text(path, limit=MAX_BYTES)
    try:
        rec = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", path=path,
                        location=f"line {exc.lineno}, column {exc.colno}") from None
    except ValueError as exc:  # NaN, Infinity
        raise DataError(str(exc), path=path) from None
    except RecursionError:
        raise DataError(f"nests deeper than {MAX_DEPTH} levels; not a toolsel model file",
                        path=path) from None
    if json_depth(rec) > MAX_DEPTH:
        raise DataError(f"nests deeper than {MAX_DEPTH} levels; not a toolsel model file",
                        path=path)
    if not isinstance(rec, dict):
        raise DataError("expected a JSON object (a toolsel model file)", path=path)
    return rec


def _check_format(rec: dict, path: Path) -> None:
    """``format`` names a toolsel model and ``format_version`` is one this toolsel reads."""
    if rec.get("format") != FORMAT:
        raise DataError(f"expected {FORMAT!r}, got {rec.get('format')!r}: not a toolsel model "
                        "file (write one with `toolsel fit`)", path=path, field="format")
    version = _need(rec, "format_version", int, path)
    if version > FORMAT_VERSION:
        raise DataError(f"format version {version} is newer than this toolsel reads "
                        f"({FORMAT_VERSION}); upgrade toolsel", path=path,
                        field="format_version")
    if version < 1:
        raise DataError(f"expected a version >= 1, got {version}", path=path,
                        field="format_version")


def _check_header(rec: dict, path: Path) -> None:
    """The fields of :data:`_HEADER_FIELDS` are present and of their kind."""
    for where, key, kind in _HEADER_FIELDS:
        _need(rec if where is None else rec[where], key, kind, path, where)


def _check_settings(rec: dict, path: Path) -> None:
    """``settings``: a valid setting, ``max_per_tool`` and ``always_include``."""
    settings = _need(rec, "settings", dict, path)
    setting = _need(settings, "setting", dict, path, "settings")  # its own error, not wrapped
    try:
        Setting.from_json(setting)
    except ValueError as exc:
        raise DataError(str(exc), path=path, field="settings.setting") from None
    mpt = settings.get("max_per_tool")
    if mpt is not None and (isinstance(mpt, bool) or not isinstance(mpt, int) or mpt < 0):
        raise DataError(f"expected null or a non-negative integer, got {mpt!r}", path=path,
                        field="settings.max_per_tool")
    always = settings.get("always_include", [])
    if not isinstance(always, list) or not all(isinstance(a, str) for a in always):
        raise DataError("expected a list of tool names", path=path,
                        field="settings.always_include")


def _check_tools(rec: dict, path: Path) -> dict:
    """``tools``: each labeled tool's object with its ``text_hash``."""
    tools = _need(rec, "tools", dict, path)
    for name, info in tools.items():
        if not isinstance(info, dict) or not isinstance(info.get("text_hash"), str):
            raise DataError("expected an object with a string 'text_hash'", path=path,
                            field=f"tools.{name}")
    return tools


def _is_request(r) -> bool:
    return isinstance(r, dict) and isinstance(r.get("id"), str) and \
        isinstance(r.get("text"), str) and isinstance(r.get("tools"), list) and \
        all(isinstance(t, str) for t in r["tools"])


def _check_requests(rec: dict, tools: dict, path: Path) -> list:
    """``requests``: each an id, a text and tools named in ``tools``."""
    requests = _need(rec, "requests", list, path)
    for i, r in enumerate(requests):
        if not _is_request(r):
            raise DataError("expected {\"id\": str, \"text\": str, \"tools\": [str]}",
                            path=path, field=f"requests[{i}]")
        for t in r["tools"]:
            if t not in tools:
                raise DataError(f"names {t!r}, which is not in 'tools'", path=path,
                                field=f"requests[{i}].tools")
    return requests


def _read_vectors(rec: dict, n_requests: int, path: Path) -> np.ndarray:
    """``vectors``: ``n_requests`` finite float32 rows decoded from base64, as float64."""
    vec = _need(rec, "vectors", dict, path)
    shape = _need(vec, "shape", list, path, "vectors")
    if vec.get("dtype") != "float32" or len(shape) != 2 or \
            not all(isinstance(s, int) and s >= 0 for s in shape) or shape[0] != n_requests:
        raise DataError(f"expected dtype float32 and shape [{n_requests}, dim], got "
                        f"{vec.get('dtype')!r} {shape!r}", path=path, field="vectors")
    try:
        raw = base64.b64decode(_need(vec, "base64", str, path, "vectors"), validate=True)
    except ValueError:
        raise DataError("is not valid base64", path=path, field="vectors.base64") from None
    if len(raw) != 4 * shape[0] * shape[1]:
        raise DataError(f"holds {len(raw)} bytes, shape {shape} needs {4 * shape[0] * shape[1]}",
                        path=path, field="vectors.base64")
    arr = np.frombuffer(raw, dtype="<f4").reshape(shape)
    if not np.isfinite(arr).all():
        raise DataError("holds non-finite values", path=path, field="vectors.base64")
    return arr.astype(np.float64)


def read_model(path: str | Path) -> dict:
    """The validated record of a model file; a :class:`DataError` naming the file and field.

    Sections are checked in file order (format, header, settings, tools, requests, vectors),
    so the first bad field is the one reported.
    """
    path = Path(path)
    rec = _read_json_object(path)
    _check_format(rec, path)
    _check_header(rec, path)
    if not isinstance(rec.get("vectors_from", rec["base"]), str):
        raise DataError("expected str", path=path, field="vectors_from")
    _check_settings(rec, path)
    tools = _check_tools(rec, path)
    requests = _check_requests(rec, tools, path)
    rec["_vectors"] = _read_vectors(rec, len(requests), path)
    return rec


def _check_encoder(sc: LearnedScorer, rec: dict, path: str | Path) -> int:
    """The base scorer encodes like the model's request vectors; returns their dimension."""
    if sc.embedder_.encoder_.model_id != rec["embedding_model"]:
        raise DataError(f"the model's request vectors come from {rec['embedding_model']!r}; "
                        f"this toolsel's base scorer encodes with "
                        f"{sc.embedder_.encoder_.model_id!r}", path=path,
                        field="embedding_model")
    vectors = rec["_vectors"]
    dim = np.asarray(sc.embedder_.vectors_).shape[1]
    if len(vectors) and vectors.shape[1] != dim:
        raise DataError(f"vectors have {vectors.shape[1]} dimensions, the encoder gives {dim}",
                        path=path, field="vectors")
    return dim


def _sort_learned_tools(rec: dict, reg: Registry) -> tuple[list[str], list[str], set[str]]:
    """The model's labeled tools as ``(missing, changed, usable)``: not in ``reg`` (sorted),
    in it with another text than the one fit on (sorted), and the rest."""
    missing = sorted(n for n in rec["tools"] if n not in reg)
    changed = sorted(n for n, info in rec["tools"].items()
                     if n in reg and tool_hash(reg.get(n)) != info["text_hash"])
    usable = {n for n in rec["tools"] if n in reg and n not in changed}
    return missing, changed, usable


def _warn_fallback(path: str | Path, rec: dict, reg: Registry, missing: list[str],
                   changed: list[str], usable: set[str]) -> None:
    """One :class:`LearnedModelWarning` when the registry differs from the one fit on
    (attributed to the caller of :func:`load_model`)."""
    if not (missing or changed or rec["registry"]["fingerprint"] != registry_fingerprint(reg)):
        return
    if not (missing or changed):
        warnings.warn(f"{path}: the model was fit on another version of this registry "
                      f"({rec['registry'].get('n_tools', '?')} tools then, {len(reg)} now); "
                      f"none of the {len(usable)} tools it learned about changed, so all "
                      "keep what they learned", LearnedModelWarning, stacklevel=3)
    else:
        names = ", ".join((changed + missing)[:5]) + (", ..." if
                                                     len(changed) + len(missing) > 5 else "")
        warnings.warn(f"{path}: the model was fit on other tool texts: {len(changed)} "
                      f"labeled tool(s) changed and {len(missing)} are not in the registry "
                      f"({names}); they keep their blind scores, the other "
                      f"{len(usable)} keep what they learned", LearnedModelWarning,
                      stacklevel=3)


def load_model(path: str | Path, registry: Sequence[Tool]) -> LearnedScorer:
    """A :class:`LearnedScorer` fitted on ``registry`` from a model file.

    The blind scorer is fit on ``registry`` as it is now. A labeled tool whose text differs
    from the one the model was fit on, or that is not in ``registry``, keeps its blind score;
    when any does, one :class:`LearnedModelWarning` says so (the file, how many tools, which).
    """
    rec = read_model(path)
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    settings = rec["settings"]
    always = [a for a in settings.get("always_include", []) if a in reg]
    vectors_from = rec.get("vectors_from", rec["base"])
    sc = None
    for model in (None, rec["embedding_model"]):
        # the vectors come from the scorer they were read with at fit time; a model fit with
        # another embedding model than that scorer's own names it (rebuilt here)
        sc = LearnedScorer(base=vectors_from, setting=Setting.from_json(settings["setting"]),
                           max_per_tool=settings.get("max_per_tool"), always_include=always,
                           bases=list(dict.fromkeys([vectors_from, rec["base"]])), model=model)
        sc.start(reg)
        if sc.embedder_.encoder_.model_id == rec["embedding_model"]:
            break
    sc.base_name_, sc.base_ = rec["base"], sc.bases_[rec["base"]]
    dim = _check_encoder(sc, rec, path)
    vectors = rec["_vectors"]
    missing, changed, usable = _sort_learned_tools(rec, reg)
    setting = Setting.from_json(settings["setting"])
    if rec["tools"] and not usable and setting.method != "blind":
        raise DataError(f"none of the {len(rec['tools'])} tools the model learned about is in "
                        "this registry with the text it was fit on; it would score exactly "
                        "as blind " + rec["base"] + " does under another name (fit a model "
                        "on this registry)", path=path, field="tools")
    _warn_fallback(path, rec, reg, missing, changed, usable)
    texts = [r["text"] for r in rec["requests"]]
    tools_of = [[reg.index(t) for t in r["tools"] if t in usable] for r in rec["requests"]]
    sc.description_vectors_ = sc.description_vectors()
    sc.evidence_ = fit_evidence(len(reg), texts, vectors.reshape(len(texts), -1) if texts
                                else np.zeros((0, dim)), tools_of)
    sc.setting_ = setting
    sc.selection_ = list(rec.get("selection", []))
    sc.train_ids_ = tuple(r["id"] for r in rec["requests"])
    sc.labels_hash_ = rec["labels"]["hash"]
    sc.labeled_tools_ = [reg[int(t)].name for t in sc.evidence_.labeled]
    sc.rule_ = settings.get("rule", RULE)
    sc.model_path_ = str(path)
    sc.estimate_record_ = rec.get("estimate") if isinstance(rec.get("estimate"), dict) else None
    sc.fallback_tools_ = changed + missing
    return sc
