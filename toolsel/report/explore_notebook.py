"""``toolsel explore``: the explorer notebook (04) on a user's files, outside the project.

:func:`write_explore_notebook` copies the explorer notebook with its parameters set (an
``injected-parameters`` cell, as papermill writes it) into a folder of the user's choosing,
never into the project's ``notebooks/`` or ``reports/`` (Run All there would overwrite the
committed tables, and saving would write into the tracked jupytext pair), and never over an
existing file of anyone else: the copy takes the first name ``explore_<registry>[-N].ipynb``
that is free (neither the notebook nor its table folder, same stem beside it, exists) or that
holds a copy this function wrote and nobody changed since. Each copy carries a marker in its
metadata (``toolsel_explore``: the SHA-256 of the notebook as written, marker left out), so
running ``toolsel explore`` again rewrites its own untouched copy instead of adding ``-2``,
``-3``...; a copy that was edited, run and saved, or any other file, is never overwritten. The
copy's ``out_dir`` is its table folder, relative to the notebook, so it writes beside itself
when run from JupyterLab. The jupytext pairing is dropped from the copy (saving it writes one
file).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["explorer_notebook", "write_explore_notebook", "free_name", "is_own_copy", "MARKER"]

#: The notebook metadata key marking a copy written by :func:`write_explore_notebook`.
MARKER = "toolsel_explore"


def explorer_notebook(notebooks_dir: str | Path) -> Path:
    """The explorer notebook of a notebooks folder (``NN_explorer.ipynb``)."""
    found = sorted(Path(notebooks_dir).glob("[0-9][0-9]_explorer.ipynb"))
    if not found:
        raise FileNotFoundError(f"no NN_explorer.ipynb in {notebooks_dir}")
    return found[0]


def _digest(nb: dict) -> str:
    """SHA-256 of a notebook's JSON (keys sorted), its :data:`MARKER` left out."""
    meta = {k: v for k, v in nb.get("metadata", {}).items() if k != MARKER}
    body = {**nb, "metadata": meta}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_own_copy(path: str | Path) -> bool:
    """Whether ``path`` is a notebook :func:`write_explore_notebook` wrote and nobody changed
    since (its marker's digest matches its content)."""
    path = Path(path)
    try:
        if not path.is_file() or path.is_symlink():
            return False
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    mark = nb.get("metadata", {}).get(MARKER) if isinstance(nb, dict) else None
    return isinstance(mark, dict) and mark.get("sha256") == _digest(nb)


def free_name(folder: Path, stem: str, *, reuse_own: bool = False) -> str:
    """The first of ``stem``, ``stem-2``, ``stem-3``... with neither ``<name>.ipynb`` nor a
    ``<name>`` folder in ``folder``; with ``reuse_own``, also a name whose notebook is an
    untouched copy of ours (:func:`is_own_copy`)."""
    n = 1
    while True:
        name = stem if n == 1 else f"{stem}-{n}"
        nb = folder / f"{name}.ipynb"
        if not nb.exists() and not (folder / name).exists():
            return name
        if reuse_own and is_own_copy(nb):
            return name
        n += 1


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def _default_scorers(source: Path) -> list[str]:
    """The ``scorers`` default of the explorer notebook's parameters cell."""
    import ast

    from papermill import inspect_notebook
    return list(ast.literal_eval(inspect_notebook(str(source))["scorers"]["default"]))


def _panel_scorers(scorers: Sequence[str] | None, model: str | Path | None, reg,
                   source: Path) -> list[str]:
    """The ``scorers`` parameter: the names given (checked; default: the notebook's), then the
    model file's absolute path when one is given (loaded now: a bad or foreign file is an error
    before anything is written)."""
    from ..scorers.base import available_scorers
    if scorers is not None:
        known = available_scorers()
        bad = [s for s in scorers if s not in known]
        if bad or not scorers:
            raise ValueError(f"--scorers: unknown {bad!r}; available: {', '.join(known)}")
    out = list(scorers) if scorers is not None else _default_scorers(source)
    if model is not None:
        from ..learn.artifact import load_model
        model = Path(model).expanduser().resolve()
        load_model(model, reg)
        out.append(str(model))
    return out


def _relative(params: dict, folder: Path) -> dict:
    """The file parameters as paths relative to the notebook's ``folder`` (the notebook runs
    there), so the notebook names no machine path and still works when the folder moves with
    its data."""
    def rel(p: str) -> str:
        return Path(os.path.relpath(p, folder)).as_posix()
    out = dict(params)
    for key in ("registry", "queries"):
        if key in out:
            out[key] = rel(out[key])
    if "scorers" in out:
        out["scorers"] = [rel(s) if Path(s).is_absolute() else s for s in out["scorers"]]
    return out


def write_explore_notebook(notebooks_dir: str | Path, registry: str | Path, out: str | Path, *,
                           queries: str | Path | None = None,
                           scorers: Sequence[str] | None = None,
                           top_k: int | list[int] | None = None,
                           model: str | Path | None = None) -> Path:
    """Write the explorer notebook on ``registry`` (and ``queries``) into the folder ``out``.

    ``model``: a model file written by ``toolsel fit``, loaded now (a bad file fails here) and
    shown as one more panel, ``<base>+labels``, after ``scorers`` (default: the notebook's).

    The files are checked first (:func:`toolsel.load_registry`, :func:`toolsel.load_queries`:
    a bad file is a :class:`~toolsel.data.DataError` naming it). Returns the notebook's path.
    """
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    from ..data import load_queries, load_registry
    from ..io import write_text
    nb_dir = Path(notebooks_dir)
    source = explorer_notebook(nb_dir)
    out = Path(out)
    for owned in (nb_dir, nb_dir.resolve().parent / "reports"):
        if _inside(out, owned):
            raise ValueError(f"--out {out}: inside the project's {owned.name}/ folder; "
                             "choose a folder of your own")
    from ..io import refuse_never_write
    refuse_never_write(out)  # /, home, any toolsel checkout and its sources, --force or not
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a folder")
    registry = Path(registry).expanduser().resolve()
    reg = load_registry(registry)
    if not len(reg):
        raise ValueError(f"{registry}: the registry has no tools")
    params: dict = {"registry": str(registry)}
    if queries is not None:
        queries = Path(queries).expanduser().resolve()
        load_queries(queries, reg)
        params["queries"] = str(queries)
    if scorers is not None or model is not None:
        params["scorers"] = _panel_scorers(scorers, model, reg, source)
    if top_k is not None:
        params["top_k"] = [int(k) for k in ([top_k] if isinstance(top_k, int) else top_k)]
    stem = "explore_" + (re.sub(r"[^A-Za-z0-9_.-]+", "_", registry.stem).strip("._") or "registry")
    name = free_name(out, stem, reuse_own=True) if out.is_dir() else stem
    params["out_dir"] = name  # relative to the notebook: its tables land beside it
    params = _relative(params, out.resolve())
    nb = load_notebook_node(str(source))  # papermill's reader: every cell has its tags
    nb.metadata.pop("jupytext", None)
    nb.metadata.pop(MARKER, None)
    nb = parameterize_notebook(nb, params, kernel_name="python3", language="python")
    plain = json.loads(nbformat.writes(nb))
    plain["metadata"][MARKER] = {"written_by": "toolsel explore", "sha256": _digest(plain)}
    text = json.dumps(plain, indent=1, ensure_ascii=False) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.ipynb"
    if path.exists():
        if not is_own_copy(path):  # changed since the name was chosen: keep it
            raise FileExistsError(f"{path}: changed meanwhile; run again for a free name")
        write_text(text, path)  # our own untouched copy: replaced atomically
    else:
        with open(path, "x", encoding="utf-8") as fh:  # "x": never over a file that appeared
            fh.write(text)
    return path
