"""Notebook conventions and planning: which notebooks exist, what data each needs, how a
user's data is checked, and what each notebook is passed (or why it is skipped).

See :mod:`toolsel.report.runner` for the convention in full.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .cutoffs import headline_k

__all__ = ["NotebookRun", "NOTEBOOK_GLOB", "DATA_PARAMS", "DEFAULT_NEEDS", "find_notebooks", "notebook_title",
           "same_path", "report_link",
           "notebook_needs", "notebook_cost", "notebook_parameters", "UserData", "check_user_data",
           "PlannedNotebook", "notebook_plan"]

NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass
class NotebookRun:
    """What happened to one notebook: its executed copy, HTML, seconds taken, error if any.

    ``skipped``: why it did not run on the user's data (``executed`` then does not exist).
    """

    source: Path
    executed: Path
    html: Path | None
    seconds: float
    error: str | None = None
    skipped: str | None = None


def find_notebooks(notebooks_dir: str | Path, only: Iterable[str] | None = None) -> list[Path]:
    """Source notebooks ``NN_slug.ipynb``, sorted; ``only`` keeps those whose NN is listed."""
    nb_dir = Path(notebooks_dir)
    if not nb_dir.is_dir():
        raise FileNotFoundError(f"notebooks folder not found: {nb_dir}")
    found = sorted(nb_dir.glob(NOTEBOOK_GLOB))
    if only is not None:
        wanted = {str(o).strip().zfill(2) for o in only}
        found = [p for p in found if p.name[:2] in wanted]
        missing = wanted - {p.name[:2] for p in found}
        if missing:
            raise FileNotFoundError(f"no notebook numbered {', '.join(sorted(missing))} in "
                                    f"{nb_dir} (expected names like 01_slug.ipynb)")
    return found


def notebook_title(path: str | Path) -> str:
    """The text of the first markdown heading of a notebook, else its slug."""
    path = Path(path)
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        m = HEADING.search(src)
        if m:
            return m.group(1).strip()
    return path.stem.split("_", 1)[-1].replace("_", " ")


# --------------------------------------------------------------------------------------------
# the notebook convention

#: Data parameters a notebook may take, as paths (``runs`` is a folder, the others files).
DATA_PARAMS = ("registry", "queries", "requests", "conversations", "runs")
#: What a notebook without ``toolsel`` metadata needs.
DEFAULT_NEEDS = ("registry", "queries")
#: The largest cut-off passed to a notebook (larger ones overflow the rankings' integers).
MAX_TOP_K = 10**9


def same_path(a: str | Path | None, b: str | Path | None) -> bool:
    """Whether two path parameters name the same file or folder (after resolving ``..`` and
    links); ``False`` when either is empty (a notebook parameter left ``""``: not given).

    How a notebook tells that it runs on the bundled data (``same_path(registry,
    "../data/registry.json")``), where it checks the bundled numbers.
    """
    if not a or not b:
        return False
    return Path(a).resolve() == Path(b).resolve()


#: Set while a report runs a notebook: ``"<build folder>{os.pathsep}<final folder>"`` of the
#: page, so :func:`report_link` relates paths to where the page will live.
SHOWN_OUT_DIR_ENV = "TOOLSEL_SHOWN_OUT_DIR"


def report_link(target: str | Path, page_dir: str | Path) -> tuple[str, str | None]:
    """How a page in ``page_dir`` (a folder of a report, its HTML page written beside it)
    cites and links a file or folder it did not write (a project's committed benchmark
    tables): ``(source, link)``.

    ``page_dir`` is taken where the page will finally live: a report run executes into a
    build folder first and names the final folder in :data:`SHOWN_OUT_DIR_ENV`. Inside the
    report (under the page folder's parent): ``source`` is relative to the page folder (as
    ``claims.json`` cites) and ``link`` relative to the report folder (as the HTML page links).
    Outside it (a user's ``toolsel report --out X`` reading the project's tables): ``source``
    is the path relative to the page folder and ``link`` is ``None``: a link would leave the
    report folder and break when it is moved or shared, so the page names the path instead.
    Neither is ever absolute: an absolute path would name the machine the report was built on.
    """
    import os
    target, page = Path(target).resolve(), Path(page_dir).resolve()
    shown = os.environ.get(SHOWN_OUT_DIR_ENV, "")
    staged, _, final = shown.partition(os.pathsep)
    if staged and final and Path(staged).resolve() == page:
        page = Path(final).resolve()
    root = page.parent
    source = Path(os.path.relpath(target, page)).as_posix()
    if target == root or root in target.parents:
        return source, Path(os.path.relpath(target, root)).as_posix()
    return source, None


def read_notebook(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def notebook_needs(path: str | Path) -> tuple[str, ...]:
    """The data parameters a notebook cannot run without (its ``toolsel.needs`` metadata)."""
    meta = read_notebook(Path(path)).get("metadata", {}).get("toolsel")
    if meta is None or "needs" not in meta:
        return DEFAULT_NEEDS
    needs = meta["needs"]
    bad = [n for n in needs if n not in DATA_PARAMS] if isinstance(needs, list) else [needs]
    if bad:
        raise ValueError(f"{Path(path).name}: metadata toolsel.needs has {bad!r}; expected a "
                         f"list of {', '.join(DATA_PARAMS)}")
    return tuple(needs)


def notebook_cost(path: str | Path) -> float:
    """How long the notebook usually runs, relative to the others (its ``toolsel.cost``
    metadata, 1 without it): the runner starts the costliest first, so the longest page never
    begins last while the other cores idle. The project's pages carry the seconds each took
    in the 1,600-tool x 2,500-request case of ``benchmarks/bench_report.py`` (the bundled
    data's for pages that case skips); only their order matters."""
    meta = read_notebook(Path(path)).get("metadata", {}).get("toolsel") or {}
    cost = meta.get("cost", 1)
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not cost > 0 or \
            cost == float("inf"):
        raise ValueError(f"{Path(path).name}: metadata toolsel.cost is {cost!r}; expected a "
                         "positive number")
    return float(cost)


def notebook_parameters(path: str | Path) -> dict[str, str]:
    """The names the notebook's ``parameters`` cell declares, with their annotated types."""
    import papermill as pm
    return {name: p.get("inferred_type_name", "None")
            for name, p in pm.inspect_notebook(str(path)).items()}


@dataclass(frozen=True)
class UserData:
    """A user's data for the suite: absolute paths, and optional scorers and cut-offs."""

    registry: Path
    queries: Path | None = None
    requests: Path | None = None
    conversations: Path | None = None
    runs: Path | None = None
    scorers: tuple[str, ...] | None = None
    top_k: tuple[int, ...] | None = None
    model: Path | None = None  # a `toolsel fit` model file, for the pages that take `model`

    def given(self) -> dict[str, Path]:
        """The data parameters given, name → path."""
        return {n: getattr(self, n) for n in DATA_PARAMS if getattr(self, n) is not None}


def check_user_data(data: UserData) -> dict[str, object]:
    """Load and validate everything in ``data`` before any notebook runs.

    Returns the loaded objects by parameter name. Raises :class:`~toolsel.data.DataError`
    (a file's problem, with its path and line) or ``ValueError`` (an unknown scorer, a bad
    cut-off): one line each, for the CLI to print.
    """
    _check_paths(data)
    _check_scorers(data.scorers)
    _check_top_k(data.top_k)
    if data.model is not None:
        from ..learn.artifact import read_model
        read_model(data.model)  # a bad model file: one line naming it and the field
    return _load_user_data(data)


def _check_paths(data: UserData) -> None:
    """Every path given exists; each is a file, except ``runs`` (a folder or a file)."""
    from ..data import DataError
    for name, path in data.given().items():
        folder = name == "runs"
        if not path.exists():
            raise DataError(f"--{name}: no such {'folder or file' if folder else 'file'}",
                            path=path)
        if not folder and not path.is_file():
            raise DataError(f"--{name}: not a file", path=path)


def _check_scorers(scorers: tuple[str, ...] | None) -> None:
    """``--scorers``, when given, names at least one scorer and only known ones."""
    if scorers is None:
        return
    from ..data import suggest_names
    from ..scorers.base import available_scorers
    known = available_scorers()
    if not scorers:
        raise ValueError("--scorers: give at least one scorer")
    for sc in scorers:
        if sc not in known:
            raise ValueError(f"--scorers: unknown scorer {sc!r}"
                             f"{suggest_names(sc, known)}; available: {', '.join(known)}")


def _check_top_k(top_k: tuple[int, ...] | None) -> None:
    """``--top-k``, when given, is one or more integers from 1 to :data:`MAX_TOP_K`."""
    if top_k is None:
        return
    if not top_k or any(not isinstance(k, int) or isinstance(k, bool) or k < 1
                        or k > MAX_TOP_K for k in top_k):
        raise ValueError(f"--top-k: expected integers from 1 to {MAX_TOP_K:,}, got "
                         f"{list(top_k)!r}")


def _load_user_data(data: UserData) -> dict[str, object]:
    """Load the registry and every data file given against it, by parameter name."""
    from ..data import DataError, load_queries, load_registry
    loaded: dict[str, object] = {}
    reg = loaded["registry"] = load_registry(data.registry)
    if not len(reg):
        raise DataError("the registry has no tools", path=data.registry)
    for name in ("queries", "requests"):
        if getattr(data, name) is not None:
            loaded[name] = load_queries(getattr(data, name), reg)
            if not loaded[name]:
                raise DataError(f"--{name}: no labeled queries in the file",
                                path=getattr(data, name))
    if data.conversations is not None:
        from ..datasets import load_conversations
        loaded["conversations"] = load_conversations(data.conversations, reg)
    if data.runs is not None:
        from ..tables.runs import load_runs
        loaded["runs"] = load_runs(data.runs, registry=reg)
    return loaded


@dataclass
class PlannedNotebook:
    """A notebook as the runner will run it: parameters to pass, or why it is skipped."""

    source: Path
    parameters: dict = field(default_factory=dict)
    skip: str | None = None


def _missing_flag(name: str) -> str:
    return f"no --{name} {'folder' if name == 'runs' else 'file'}"


def _planned(nb: Path, data: UserData, given: dict[str, Path]) -> PlannedNotebook:
    """One notebook's parameters on ``data``, or why it is skipped."""
    needs = notebook_needs(nb)
    if not needs:
        return PlannedNotebook(nb, skip="reports on the project's own data only")
    missing = [n for n in needs if n not in given]
    if missing:
        return PlannedNotebook(nb, skip=", ".join(_missing_flag(n) for n in missing))
    declared = notebook_parameters(nb)
    params: dict = {n: (str(given[n]) if n in given else "")
                    for n in DATA_PARAMS if n in declared}
    if data.scorers is not None and "scorers" in declared:
        params["scorers"] = list(data.scorers)
    if data.top_k is not None and "top_k" in declared:
        params["top_k"] = (list(data.top_k) if "list" in declared["top_k"]
                           else headline_k(data.top_k))
    if data.model is not None and "model" in declared:
        params["model"] = str(data.model)
    return PlannedNotebook(nb, params)


def _needs_several(path: Path) -> bool:
    """Whether a labeled JSONL file holds a request that needs two tools or more (read as
    text: the file was already checked by :func:`check_user_data`)."""
    from ..data import read_text
    from ..jsonl import jsonl_lines
    for _, line in jsonl_lines(read_text(path)):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        expected = rec.get("expected") if isinstance(rec, dict) else None
        if isinstance(expected, list) and len(set(map(str, expected))) > 1:
            return True
    return False


def notebook_plan(notebooks: Sequence[Path], data: UserData | None) -> list[PlannedNotebook]:
    """What to pass each notebook, or the one-line reason it is skipped on ``data``.

    ``data=None``: the project's own reports, every notebook with its defaults.
    """
    if data is None:
        return [PlannedNotebook(Path(nb)) for nb in notebooks]
    given = data.given()
    if "requests" not in given and "queries" in given and _needs_several(given["queries"]):
        # the multi-tool pages run from the labeled queries when some need several tools
        given["requests"] = given["queries"]
    plan = [_planned(Path(nb), data, given) for nb in notebooks]
    # a page that maps the report (the overview's table of pages) lists only those that run
    ran = [p.source.stem for p in plan if p.skip is None]
    for p in plan:
        if p.skip is None and "pages" in notebook_parameters(p.source):
            p.parameters["pages"] = ran
    return plan
