"""What a report owns in its output folder, and the checks made before any notebook runs.

A report writes into ``OUT`` only what it owns and records it: the manifest
``OUT/toolsel-manifest.json`` lists every file a report wrote there (relative POSIX paths)
with its size and sha256. Ownership is by content, as git and rsync decide it: a later
report replaces or removes a listed file only if it still holds what the report wrote; a
file changed since is kept and named in one line ("changed since the last report: kept:
..."); a file a user put beside them (or inside a report's table folder) is never deleted nor
overwritten, ``--force`` or not.

The manifest is read as untrusted input (anyone can put a file into a folder): a link, a
file that is not JSON, JSON that is not an object, another kind, or a path that is not
relative, normalized and inside the folder is one clear error; a forged manifest can name
files, but not make their content match, so it cannot make a report replace them. A manifest
without hashes (toolsel before them) is honoured only in a project's ``reports/`` beside the
notebooks being run, by name (see :func:`ownership`).

Before any work (:func:`check_out_dir`):

- ``OUT`` must be a folder or be creatable: a file, or a symbolic link to nothing, is refused;
- places no command writes (:func:`toolsel.io.refuse_never_write`: ``/``, the home folder
  and its ancestors, any toolsel checkout and its source folders) and the ``--notebooks``
  folder are refused, ``--force`` or not;
- a non-empty folder without a manifest is refused unless ``force`` (the project's committed
  ``reports/``, which predates the manifest, counts as a report folder: its numbered
  notebook outputs, ``README.md`` and ``index.html`` are owned);
- every name the report will write that exists and is not listed (a user's ``README.md``, a
  file or link named like a notebook's table folder) is refused, ``force`` or not; so is a
  listed entry whose kind changed (a file or link where the report's folder was).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..io import BUILD_PREFIX, OutputError, refuse_never_write

__all__ = ["MANIFEST", "LEGACY_STAGING", "read_manifest", "manifest_text", "manifest_shared",
           "owned_files", "ownership", "Ownership", "file_digest", "source_folders",
           "check_out_dir", "check_ownership", "report_entries"]

#: The manifest of a report folder: every file the last report wrote there.
MANIFEST = "toolsel-manifest.json"
#: The staging folder of reports written before the manifest (removed when found).
LEGACY_STAGING = ".toolsel-staging"
_KIND = "toolsel report output"


def _load_manifest(out: Path) -> dict | None:
    """``out``'s manifest as a mapping ``{relative path: {"size", "sha256"} or None}`` (None:
    an old manifest without content hashes), plus its flags; ``None`` when it has none.

    The manifest is a file anyone could have put there: it is read as untrusted input. A
    link, or a file that is not a toolsel manifest (malformed JSON, JSON that is not an
    object, another kind, paths that are not relative, normalized and inside the folder),
    raises one clear :class:`~toolsel.io.OutputError`."""
    path = Path(out) / MANIFEST
    if path.is_symlink():
        raise OutputError(path, "is a symbolic link, not a report manifest; remove it")
    if not path.exists():
        return None
    data = _manifest_json(path)
    files = _manifest_files(path, data)
    return {"files": _manifest_entries(path, files), "shared": data.get("shared") is True,
            "hashed": isinstance(files, dict), "kept": _manifest_kept(path, data)}


def _manifest_json(path: Path):
    """The parsed JSON of the existing manifest ``path`` (any JSON value, ``null`` included);
    something other than a file, or unreadable JSON, is an :class:`~toolsel.io.OutputError`."""
    if not path.is_file():
        raise OutputError(path, "is not a file, not a report manifest; move it away")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise OutputError(path, f"unreadable report manifest ({str(exc)[:80]}); move it away "
                                "to start a new report folder") from None


def _manifest_files(path: Path, data) -> list | dict:
    """The manifest's ``files`` (a list of paths, or paths → size and sha256), after checking
    that ``data`` is a JSON object of the toolsel report kind."""
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("kind") != _KIND or \
            not isinstance(files, (list, dict)):
        raise OutputError(path, "not a toolsel report manifest (expected a JSON object with "
                                f"kind {_KIND!r} and files); move it away to start a new "
                                "report folder")
    return files


def _manifest_entries(path: Path, files: list | dict) -> dict[str, dict | None]:
    """``{relative path: {"size", "sha256"} or None}`` from the manifest's ``files``; every
    path must be safe (:func:`_safe_rel`), every hashed entry must have a size and sha256."""
    entries: dict[str, dict | None] = {}
    items = files.items() if isinstance(files, dict) else ((f, None) for f in files)
    for rel, meta in items:
        if not isinstance(rel, str) or not _safe_rel(rel):
            raise OutputError(path, f"lists {str(rel)[:80]!r}, not a relative path inside the "
                                    "folder; not a manifest toolsel wrote: move it away")
        if isinstance(files, dict) and not _is_digest(meta):
            raise OutputError(path, f"entry {rel[:80]!r} has no size and sha256; not a "
                                    "manifest toolsel wrote: move it away")
        entries[rel] = meta
    return entries


def _is_digest(meta) -> bool:
    """Whether a manifest entry is ``{"size": int, "sha256": 64 characters}``."""
    return (isinstance(meta, dict) and isinstance(meta.get("size"), int)
            and isinstance(meta.get("sha256"), str) and len(meta["sha256"]) == 64)


def _manifest_kept(path: Path, data: dict) -> set[str]:
    """The manifest's ``kept`` paths (files it names but does not own), each safe."""
    kept = data.get("kept", [])
    if not isinstance(kept, list) or not all(isinstance(k, str) and _safe_rel(k) for k in kept):
        raise OutputError(path, "'kept' is not a list of relative paths inside the folder; not "
                                "a manifest toolsel wrote: move it away")
    return set(kept)


def read_manifest(out: Path) -> set[str] | None:
    """The files listed in ``out``'s manifest, or ``None`` when it has none."""
    data = _load_manifest(out)
    return None if data is None else set(data["files"])


def _safe_rel(rel: str) -> bool:
    """A relative POSIX path, normalized, inside the folder: no ``..``, ``.``, empty part,
    leading ``/``, backslash or NUL."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and "\\" not in rel and "\0" not in rel \
        and all(p not in ("", ".", "..") for p in parts)


def file_digest(path: Path) -> dict | None:
    """``{"size", "sha256"}`` of the regular file ``path`` (never through a link), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        h = hashlib.sha256()
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return {"size": st.st_size, "sha256": h.hexdigest()}


def _no_link_on_the_way(root: Path, rel: str) -> bool:
    """No folder of ``rel`` under ``root`` is a symbolic link (the file is really inside)."""
    p = root
    for part in rel.split("/")[:-1]:
        p = p / part
        if p.is_symlink() or not p.is_dir():
            return False
    return True


def manifest_text(files: Iterable[str] | Mapping[str, dict], *, shared: bool = False,
                  root: Path | None = None, kept: Iterable[str] = ()) -> str:
    """The manifest's text: every file with its size and sha256 (read from ``root``, the
    folder being written, unless ``files`` maps paths to them); sorted, so reruns write it
    byte for byte.

    ``shared``: the folder held other files when the first report came (``--force``): it is
    the user's folder, updated in place, never replaced whole. ``kept``: files a report would
    write that hold the user's content (changed since, or theirs): the next report keeps
    them too, naming them, instead of refusing the folder."""
    if isinstance(files, Mapping):
        entries = dict(files)
    else:
        entries = {}
        for rel in set(files):
            digest = file_digest(Path(root) / rel) if root is not None else None
            if digest is not None:
                entries[rel] = digest
    data = {"kind": _KIND, "files": {k: entries[k] for k in sorted(entries)}}
    kept = sorted(set(kept) - set(entries))
    if kept:
        data["kept"] = kept
    if shared:
        data["shared"] = True
    return json.dumps(data, indent=1) + "\n"


def manifest_shared(out: Path) -> bool:
    """Whether ``out``'s manifest says the folder is shared with the user's files."""
    try:
        data = _load_manifest(out)
    except OutputError:
        return False
    return data is not None and data["shared"]


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


@dataclass
class Ownership:
    """What a report folder holds that toolsel wrote, decided by content (as git and rsync do).

    ``owned``: files a report may replace or remove (they have the content the manifest
    records); ``listed``: every file the manifest lists; ``changed``: listed files whose
    content changed since (kept, never replaced nor removed); ``legacy``: the project's
    ``reports/`` without a manifest of content hashes (owned by name: only files the new run
    writes again are replaced, nothing inside a table folder is removed)."""

    owned: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    changed: set[str] = field(default_factory=set)
    legacy: bool = False


def ownership(out: Path, notebooks: Iterable[Path] = ()) -> Ownership:
    """Files of ``out`` a report wrote and that still hold what it wrote (see
    :class:`Ownership`); for a project's ``reports/`` without a manifest of hashes (written
    before them), its notebook outputs, README, index and explorer page by name."""
    out = Path(out)
    data = _load_manifest(out)
    notebooks = list(notebooks)
    project = out.is_dir() and _is_project_reports(out.resolve(), notebooks)
    if data is not None and data["hashed"]:
        own = Ownership(listed=set(data["files"]) | data["kept"] | {MANIFEST})
        own.changed |= {k for k in data["kept"] if (out / k).exists() or (out / k).is_symlink()}
        for rel, meta in data["files"].items():
            path = out / rel
            if not _no_link_on_the_way(out, rel):
                continue  # a folder on the way became a link: not the file written
            digest = file_digest(path)
            if digest == meta:
                own.owned.add(rel)
            elif digest is not None or path.exists() or path.is_symlink():
                own.changed.add(rel)
        own.owned.add(MANIFEST)
        return own
    if data is not None and not project:
        raise OutputError(out / MANIFEST, "lists files without their content hashes (an "
                                          "older toolsel, or not toolsel's): nothing here can "
                                          "be told apart from your files; move the old report "
                                          "away, or remove the manifest and pass --force")
    if not project:
        return Ownership()
    stems = {Path(n).stem for n in notebooks}
    own = Ownership(legacy=True)
    for entry in out.iterdir():  # the outputs of these notebooks (not any numbered name)
        if entry.name in ("README.md", "index.html", "explorer.html", MANIFEST) or \
                entry.name.split(".")[0] in stems:
            own.owned.update(_files_under(out, entry.name))
    own.listed = set(own.owned)
    return own


def owned_files(out: Path, notebooks: Iterable[Path] = ()) -> set[str]:
    """Files of ``out`` a report wrote that still hold what it wrote (:func:`ownership`)."""
    return ownership(out, notebooks).owned


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
    refuse_never_write(out)  # /, home and its ancestors, any toolsel checkout's sources
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
                    notebooks: Iterable[Path], *, force: bool = False) -> Ownership:
    """Checks of an existing ``out`` under its lock; returns what it owns (:func:`ownership`).

    ``names``: the top-level entries this report may write; ``folders``: those among them
    that are folders.
    """
    own = ownership(out, notebooks)
    present = [e for e in os.listdir(out) if not e.startswith((BUILD_PREFIX, ".toolsel-"))
               and e != LEGACY_STAGING] if out.is_dir() else []
    if present and not own.listed and not force:
        raise OutputError(out, f"is not empty ({len(present)} entr"
                               f"{'y' if len(present) == 1 else 'ies'}) and holds no report "
                               f"of toolsel ({MANIFEST} missing); a report writes only into a "
                               "new or empty folder, or one it wrote before: choose another "
                               "--out, or pass --force to add the report beside these files "
                               "(none of them is deleted or overwritten)")
    listed_top = {f.split("/")[0] for f in own.listed}
    folders = set(folders)
    for name in names:
        path = out / name
        if not (path.exists() or path.is_symlink()):
            continue
        if name not in listed_top:
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
    return own
