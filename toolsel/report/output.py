"""What a report owns in its output folder, and the checks made before any notebook runs.

A report writes into ``OUT`` only what it owns and records it: the manifest
``OUT/toolsel-manifest.json`` lists every file a report wrote there (relative POSIX paths).
A later report replaces or removes only listed files; a file a user put beside them (or
inside a report's table folder) is never deleted nor overwritten, ``--force`` or not.

Before any work (:func:`check_out_dir`):

- ``OUT`` must be a folder or be creatable: a file, or a symbolic link to nothing, is refused;
- the repository's own folders (its root, ``notebooks/``, ``toolsel/``, ``data/``,
  ``tests/``, ``benchmarks/``, ``.git``, anything inside them, and the ``--notebooks``
  folder) are refused;
- a non-empty folder without a manifest is refused unless ``force`` (the project's committed
  ``reports/``, which predates the manifest, counts as a report folder: its numbered
  notebook outputs, ``README.md`` and ``index.html`` are owned);
- every name the report will write that exists and is not owned (a user's ``README.md``, a
  file or link named like a notebook's table folder) is refused, ``force`` or not; so is an
  owned entry whose kind changed (a file or link where the report's folder was).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from ..io import BUILD_PREFIX, OutputError

__all__ = ["MANIFEST", "LEGACY_STAGING", "read_manifest", "manifest_text", "manifest_shared",
           "owned_files", "source_folders", "check_out_dir", "check_ownership", "report_entries"]

#: The manifest of a report folder: every file the last report wrote there.
MANIFEST = "toolsel-manifest.json"
#: The staging folder of reports written before the manifest (removed when found).
LEGACY_STAGING = ".toolsel-staging"
_KIND = "toolsel report output"


def read_manifest(out: Path) -> set[str] | None:
    """The files listed in ``out``'s manifest, or ``None`` when it has none."""
    path = Path(out) / MANIFEST
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OutputError(path, f"unreadable report manifest ({exc}); move it away to start "
                                "a new report folder") from None
    files = data.get("files") if isinstance(data, dict) else None
    if data.get("kind") != _KIND or not isinstance(files, list) or \
            not all(isinstance(f, str) for f in files):
        raise OutputError(path, "not a toolsel report manifest; move it away to start a new "
                                "report folder")
    return {f for f in files if _safe_rel(f)}


def _safe_rel(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts)


def manifest_text(files: Iterable[str], *, shared: bool = False) -> str:
    """The manifest's text for these relative paths (sorted, so reruns write it byte for byte).

    ``shared``: the folder held other files when the first report came (``--force``): it is
    the user's folder, updated in place, never replaced whole."""
    data = {"kind": _KIND, "files": sorted(set(files))}
    if shared:
        data["shared"] = True
    return json.dumps(data, indent=1) + "\n"


def manifest_shared(out: Path) -> bool:
    """Whether ``out``'s manifest says the folder is shared with the user's files."""
    try:
        data = json.loads((Path(out) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("shared") is True


def _files_under(root: Path, top: str) -> list[str]:
    """Relative paths of the regular files of entry ``top`` of ``root`` (links not followed)."""
    path = root / top
    if path.is_symlink() or not path.exists():
        return []
    if not path.is_dir():
        return [top]
    out = []
    for dirpath, dirnames, filenames in os.walk(path):
        rel = Path(dirpath).relative_to(root).as_posix()
        out += [f"{rel}/{f}" for f in filenames]
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
    return out


def report_entries(stem: str) -> tuple[str, str, str, str]:
    """The top-level entries one notebook's outputs take: executed copy, page, table
    folder, failed copy."""
    return f"{stem}.ipynb", f"{stem}.html", stem, f"{stem}.failed.ipynb"


def _is_project_reports(out: Path, notebooks: Iterable[Path]) -> bool:
    """``out`` is a project's ``reports/`` beside the ``notebooks/`` being run."""
    nbs = [Path(n).resolve() for n in notebooks]
    return out.name == "reports" and bool(nbs) and nbs[0].parent.parent == out.parent


def owned_files(out: Path, notebooks: Iterable[Path] = ()) -> set[str]:
    """Files of ``out`` a report wrote: its manifest's list; for a project's ``reports/``
    without one (written before manifests), its notebook outputs, README and index."""
    out = Path(out)
    listed = read_manifest(out)
    if listed is not None:
        return listed | {MANIFEST}
    notebooks = list(notebooks)
    if not out.is_dir() or not _is_project_reports(out.resolve(), notebooks):
        return set()
    stems = {Path(n).stem for n in notebooks}
    owned: set[str] = set()
    for entry in out.iterdir():  # the outputs of these notebooks (not any numbered name)
        if entry.name in ("README.md", "index.html") or entry.name.split(".")[0] in stems:
            owned.update(_files_under(out, entry.name))
    return owned


def source_folders(notebooks_dir: Path | None = None) -> list[Path]:
    """Folders a report must never write into: the repository's own (when toolsel runs from
    a checkout) and the notebooks folder being run."""
    import toolsel
    root = Path(toolsel.__file__).resolve().parents[1]
    found = []
    if (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir():
        found = [root / n for n in ("notebooks", "toolsel", "data", "tests", "benchmarks",
                                    ".git")]
    if notebooks_dir is not None:
        found.append(Path(notebooks_dir).resolve())
    return found


def _repo_root() -> Path | None:
    import toolsel
    root = Path(toolsel.__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / "notebooks").is_dir() \
        else None


def check_out_dir(out: Path, notebooks_dir: Path | None = None) -> Path:
    """Checks of ``--out`` that need no lock: kind of path and the source folders. Returns
    the folder's real path. Raises :class:`~toolsel.io.OutputError`."""
    out = Path(out)
    if out.is_symlink() and not out.exists():
        raise OutputError(out, "is a symbolic link to nothing (its target "
                               f"{os.readlink(out)} does not exist); remove the link or give "
                               "a folder")
    if out.exists() and not out.is_dir():
        raise OutputError(out, "exists and is not a folder; give a folder for the report")
    real = Path(os.path.realpath(out))
    root = _repo_root()
    if root is not None and real == root:
        raise OutputError(out, "is the toolsel repository itself; give a folder of its own "
                               "(the project's reports go to reports/)")
    for src in source_folders(notebooks_dir):
        if real == src or src in real.parents:
            raise OutputError(out, f"is inside the project's source folder {src}; a report "
                                   "never writes there: choose another --out")
    base = real
    while not base.exists():
        base = base.parent
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise OutputError(out, f"cannot write the report: {base} is not a writable folder")
    return real


def check_ownership(out: Path, names: Iterable[str], folders: Iterable[str],
                    notebooks: Iterable[Path], *, force: bool = False) -> set[str]:
    """Checks of an existing ``out`` under its lock; returns the files it owns.

    ``names``: the top-level entries this report may write; ``folders``: those among them
    that are folders.
    """
    owned = owned_files(out, notebooks)
    present = [e for e in os.listdir(out) if not e.startswith((BUILD_PREFIX, ".toolsel-"))
               and e != LEGACY_STAGING] if out.is_dir() else []
    if present and not owned and not force:
        raise OutputError(out, f"is not empty ({len(present)} entr"
                               f"{'y' if len(present) == 1 else 'ies'}) and holds no report "
                               f"of toolsel ({MANIFEST} missing); a report writes only into a "
                               "new or empty folder, or one it wrote before: choose another "
                               "--out, or pass --force to add the report beside these files "
                               "(none of them is deleted or overwritten)")
    owned_top = {f.split("/")[0] for f in owned}
    folders = set(folders)
    for name in names:
        path = out / name
        if not (path.exists() or path.is_symlink()):
            continue
        if name not in owned_top:
            raise OutputError(path, "exists and was not written by toolsel report; a report "
                                    "never overwrites it (--force or not): move it away or "
                                    "choose another --out")
        if path.is_symlink():
            raise OutputError(path, "is a symbolic link where the report writes its "
                                    f"{'folder' if name in folders else 'file'}; remove it")
        if name in folders and not path.is_dir():
            raise OutputError(path, "is a file where the report writes its folder; move it "
                                    "away")
        if name not in folders and path.is_dir():
            raise OutputError(path, "is a folder where the report writes a file; move it away")
    return owned
