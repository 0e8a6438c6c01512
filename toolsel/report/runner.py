"""Run the notebook suite: the project's own ``reports/``, or a report on a user's data.

For every ``notebooks/[0-9][0-9]_*.ipynb`` (found by glob, so a new notebook appears without
any change here):

1. execute it with papermill (kernel ``python3``, working directory ``notebooks/``) into
   ``OUT/NN_slug.ipynb``, passing ``out_dir`` so its tables and figures land in
   ``OUT/NN_slug/``; run timestamps are scrubbed from the executed copy;
2. export ``OUT/NN_slug.html`` with the code hidden (nbconvert ``--no-input``), every
   Markdown cell and HTML output sanitized (:func:`toolsel.report.html.sanitize_html`);
3. write ``OUT/README.md``: the headline table, then per notebook its title (the first
   markdown heading), links to the HTML and executed notebook, its figures and its CSVs
   (and, for a user's data, which notebooks were skipped and why);
4. write ``OUT/index.html``, the entry page (:func:`render_index`: the headline table, the
   recall-vs-payload and per-style figures, a card per report, the notebooks skipped), and
   give every page its navigation (:func:`link_pages`: back to the index, previous/next
   report, the page's contents).

**The notebook convention** (every notebook follows it, so the runner can hand it a user's
data without knowing what it computes):

- its ``parameters`` cell takes its data as paths, with the bundled data as defaults:
  ``registry: str`` and, as relevant, ``queries``, ``requests``, ``conversations`` (files)
  and ``runs`` (a folder) — :data:`DATA_PARAMS`; plus ``scorers: list[str]``,
  ``top_k: list[int]`` and ``out_dir: str = "../reports/NN_slug"``;
- its notebook metadata says which of those it cannot run without:
  ``"toolsel": {"needs": ["registry", "queries"]}`` (jupytext keeps it in the ``.py``
  header). No ``toolsel`` metadata means :data:`DEFAULT_NEEDS`; ``"needs": []`` means the
  notebook reports on the project's own data only (skipped on a user's data);
- on a user's data (:class:`UserData`) the runner runs a notebook only when every need is
  given, and passes the absolute path of each data parameter the notebook declares, ``""``
  for one the user did not give (the notebook must then skip what uses it: it is not a
  need), and ``scorers``/``top_k`` when given (a notebook declaring ``top_k: int`` gets one
  cut-off, :func:`headline_k`). Sections tied to the article's data check for it
  (:func:`toolsel.tables.replication.is_article_benchmark`) and print a one-line note instead.

**Writing the folder.** A report writes only what it owns (:mod:`toolsel.report.output`):
the manifest ``OUT/toolsel-manifest.json`` lists every file it wrote; a later report removes
or replaces only listed files, refuses a non-empty folder it did not write unless ``force``
(and even then never touches a file it did not write), and refuses the repository's own
folders. One report writes a folder at a time (:func:`report_lock`: a second one is refused
at once with one line). Notebooks run into a private build folder ``OUT/.toolsel-build-*``;
the whole set (pages, executed notebooks, tables, README, index, manifest) is then written
by :func:`toolsel.io.write_set`: built complete in a sibling folder (entries the run does not
replace, a user's files included, carried over as hard links) and swapped with the folder
in one ``renameat2(RENAME_EXCHANGE)``, so a reader or a kill sees the old set or the new
one, never a mix; ``OUT`` stays a real folder of real files (the project's ``reports/`` is
committed to git). A folder the report does not own (``--force``), another user's folder,
one holding the current directory, or a mount point is never replaced whole: the entries are
moved in one by one from a complete commit folder, a killed move rolled forward by the next
run. Leftovers of a killed run are cleaned (or its swap finished) at the start of the next.

The README, the index and the pages' navigation are pure functions of the files present: no
dates, no timings, sorted listings; rerunning on the same code and data rewrites them byte
for byte.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..eval.score_cache import CACHE_DIR, CACHE_ENV, prune
from ..io import (BUILD_PREFIX, OutputError, folder_lock, is_private_dir, link_tree,
                  make_private_dir, owned_by_me, recover_set, write_set, write_text)
from ..visible import visible
from .execute import execute_notebook, export_html
from .stable import keep_equal_files
from .output import (MANIFEST, Ownership, check_out_dir, check_ownership, manifest_shared,
                     manifest_text, owned_files, report_entries)
from ..scorers.embedding import THREADS_ENV as ONNX_THREADS_ENV
from .plan import (NotebookRun, PlannedNotebook, UserData, check_user_data, find_notebooks,
                   notebook_cost, notebook_plan)
from .explorer_page import EXPLORER_PAGE, write_report_explorer
from .readme import write_readme, write_user_readme
from .site import write_index

__all__ = ["NotebookRun", "generate_reports", "check_report_out", "report_lock", "other_writes",
           "add_to_manifest", "run_pages", "default_jobs", "score_cache_dir"]


# --------------------------------------------------------------------------------------------
# writing the set: one writer per folder, only what the report owns, visible in one step


@contextlib.contextmanager
def report_lock(out: Path) -> Iterator[None]:
    """Hold ``out``'s report lock for a whole run; refuse at once if another report holds it.

    The lock is ``flock`` on the folder itself (released by the kernel if the process dies).
    A report swaps its folder for a new one when done, so the lock taken is checked to be on
    the folder the path names now, else taken again.
    """
    for _ in range(50):
        before = os.stat(out)
        lock = folder_lock(out, timeout=0)
        try:
            lock.__enter__()
        except OutputError:
            raise OutputError(out, "another toolsel report is writing this folder (or a "
                                   "toolsel command is writing a folder inside it); wait for it "
                                   "to finish or choose another --out") from None
        try:
            now = os.stat(out)
            if (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino):
                yield
                return
            # the folder was swapped between stat and lock: take the lock again
        finally:
            lock.__exit__(None, None, None)
    raise OutputError(out, "the folder keeps being replaced by another process")


def _clean_leftovers(out: Path) -> None:
    """Drop what killed runs left in ``out`` (lock held): their build folders, recognized by
    the record a run writes into its own (:func:`toolsel.io.make_private_dir`), never by name
    alone; and finish or undo a killed set swap (:func:`toolsel.io.recover_set`, likewise)."""
    for d in out.glob(f"{BUILD_PREFIX}*"):
        if is_private_dir(d):
            shutil.rmtree(d, ignore_errors=True)
    recover_set(out)


def _run_one(planned: PlannedNotebook, build: Path, out: Path, nb_dir: Path, *, html: bool,
             kernel: str) -> NotebookRun:
    """Execute one notebook into the build folder."""
    src = planned.source
    t0 = time.perf_counter()
    run = NotebookRun(src, out / src.name, None, 0.0)
    try:
        execute_notebook(src, build / src.name, build / src.stem, kernel=kernel, cwd=nb_dir,
                         parameters=planned.parameters, shown_out_dir=out / src.stem)
        if html:
            export_html(build / src.name, build / f"{src.stem}.html")
            run.html = out / f"{src.stem}.html"
        # a float model's last digits differ by CPU: unchanged within tolerance, keep the bytes
        for name in report_entries(src.stem):
            keep_equal_files(build / name, out / name)
    except Exception as exc:  # report and go on with the other notebooks
        lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        run.error = f"{type(exc).__name__}: {lines[-1] if lines else ''}"
        # the previous outputs stay; the failed notebook is kept beside them to debug
        for name in (src.name, f"{src.stem}.html"):
            if (build / name).exists() and name != src.name:
                (build / name).unlink()
        if (build / src.stem).is_dir():
            shutil.rmtree(build / src.stem)
        if (build / src.name).exists():
            os.replace(build / src.name, build / f"{src.stem}.failed.ipynb")
            run.executed = out / f"{src.stem}.failed.ipynb"
    run.seconds = time.perf_counter() - t0
    return run


def _move_from(src: Path, old: Path, owned: set[str], rel: str, kept: set[str]):
    """A writer for :func:`~toolsel.io.write_set`: the built entry ``src`` moves into the new
    set; files of the old entry ``old`` that the report does not own (a user's, or one
    changed since the report wrote it) are linked into it, in place of a built file of the
    same name, so replacing the entry never deletes nor overwrites them (added to ``kept``)."""
    def write(path: Path) -> None:
        if src is not None:
            os.replace(src, path)
        elif old.is_dir():
            os.mkdir(path)
        _keep_unowned(old, path, owned, rel, kept)
    return write


def _keep_unowned(old: Path, new: Path, owned: set[str], rel: str, kept: set[str]) -> None:
    if not old.is_dir() or old.is_symlink() or not new.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(old):
        sub = Path(dirpath).relative_to(old)
        for name in [*filenames, *(d for d in dirnames if (Path(dirpath) / d).is_symlink())]:
            r = (Path(rel) / sub / name).as_posix()
            target = new / sub / name
            if r in owned or (target.is_dir() and not target.is_symlink()):
                continue
            if target.exists() or target.is_symlink():
                target.unlink()  # the built file: the user's stays in its place
            kept.add(r)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(Path(dirpath) / name, target, follow_symlinks=False)
            except OSError:
                shutil.copy2(Path(dirpath) / name, target, follow_symlinks=False)


def _has_unowned(old: Path, owned: set[str], rel: str) -> bool:
    if not old.is_dir() or old.is_symlink():
        return False
    for dirpath, _dirs, filenames in os.walk(old):
        sub = Path(dirpath).relative_to(old)
        if any((Path(rel) / sub / f).as_posix() not in owned for f in filenames):
            return True
    return False


def _report_names(notebooks: Sequence[Path]) -> tuple[list[str], set[str]]:
    """Every top-level entry a report of these notebooks may write, and which are folders."""
    names = {n for nb in notebooks for n in report_entries(nb.stem)}
    names |= {"README.md", "index.html", MANIFEST, EXPLORER_PAGE}
    return sorted(names), {nb.stem for nb in notebooks}


def check_report_out(out_dir: str | Path, notebooks_dir: str | Path = "notebooks", *,
                     force: bool = False) -> Path:
    """Check ``out_dir`` for a report before any work (no lock taken: :func:`generate_reports`
    checks again under it). Returns its real path; raises :class:`~toolsel.io.OutputError`."""
    rep = check_out_dir(Path(out_dir), Path(notebooks_dir))
    if rep.is_dir():
        notebooks = find_notebooks(notebooks_dir)
        names, folders = _report_names(notebooks)
        check_ownership(rep, names, folders, notebooks, force=force)
    return rep


def add_to_manifest(out_dir: str | Path, names: Iterable[str],
                    notebooks: Sequence[Path] = ()) -> Path:
    """Record files written into a report folder outside a whole run (``--readme-only``):
    the manifest lists what it listed (for a project's ``reports/`` without one, its
    notebook outputs) plus ``names``."""
    rep = Path(out_dir)
    owned = owned_files(rep, notebooks) - {MANIFEST}
    return write_text(manifest_text(owned | set(names), shared=manifest_shared(rep), root=rep),
                      rep / MANIFEST)


def other_writes() -> list[tuple[str, Path]]:
    """Where a report writes besides its folder: toolsel's state folder (the key that
    authenticates its bookkeeping records, :func:`toolsel.io.state_dir`), caches of the
    embedding model, Jupyter,
    matplotlib and IPython (the kernels' own files), and onnxruntime's telemetry files when the
    caller set ``ORT_DISABLE_TELEMETRY=0`` (toolsel turns them off otherwise)."""
    from ..io import state_dir
    from ..scorers.embedding_cache import cache_root
    out = [("the embedding cache", cache_root().resolve()),
           # the key of the records its bookkeeping folders carry (made on first need)
           ("toolsel's state (its record key)", state_dir())]
    try:
        from jupyter_core.paths import jupyter_runtime_dir
        out.append(("Jupyter's kernel connection files", Path(jupyter_runtime_dir())))
    except ImportError:  # pragma: no cover - papermill depends on it
        pass
    mpl = os.environ.get("MPLCONFIGDIR")
    xdg = os.environ.get("XDG_CACHE_HOME")
    out.append(("matplotlib's font cache", Path(mpl) if mpl else
                (Path(xdg) if xdg else Path.home() / ".cache") / "matplotlib"))
    if not mpl:  # matplotlib makes its config folder too (empty unless you add a matplotlibrc)
        config = os.environ.get("XDG_CONFIG_HOME")
        out.append(("matplotlib's config folder",
                    (Path(config) if config else Path.home() / ".config") / "matplotlib"))
    ipy = os.environ.get("IPYTHONDIR")
    out.append(("IPython's profile", Path(ipy) if ipy else Path.home() / ".ipython"))
    from ..scorers.embedding import ort_telemetry_disabled
    if not ort_telemetry_disabled():  # off unless the caller turned it on (import_onnxruntime)
        out.append(("onnxruntime's device id and telemetry store",
                    (Path(xdg) if xdg else Path.home() / ".cache")
                    / "Microsoft" / "DeveloperTools" / ".onnxruntime"))
    return out


def _absolute_cache_env() -> None:
    """Kernels run in the notebooks' folder: a relative cache path given by the caller is made
    absolute against the caller's folder first (not left to land under ``notebooks/``)."""
    for var in ("TOOLSEL_CACHE", "XDG_CACHE_HOME", "MPLCONFIGDIR", "IPYTHONDIR"):
        value = os.environ.get(var)
        if value and not os.path.isabs(os.path.expanduser(value)):
            os.environ[var] = os.path.abspath(os.path.expanduser(value))


def generate_reports(notebooks_dir: str | Path = "notebooks", out_dir: str | Path = "reports",
                     *, only: Iterable[str] | None = None, html: bool = True,
                     kernel: str = "python3", on_done=None, data: UserData | None = None,
                     force: bool = False, jobs: int | None = None) -> list[NotebookRun]:
    """Execute the notebooks into ``out_dir``, export HTML, and rewrite the README.

    ``data=None`` regenerates the project's own reports (every notebook on its defaults).
    With a :class:`UserData` (checked first, :func:`check_user_data`), each notebook runs on
    it if its needs are given, else is skipped with a reason; outputs of an earlier report
    that this run does not produce are removed (the folder is the report of that data).

    The folder is checked before any notebook runs (:mod:`toolsel.report.output`: no source
    folder, no foreign non-empty folder unless ``force``, no name the report would overwrite
    that it did not write) and locked for the whole run (:func:`report_lock`). Notebooks run
    into a private build folder; the set (pages, executed notebooks, tables, README, index,
    manifest) is then written by :func:`toolsel.io.write_set`, replacing the folder whole
    (or, for a folder the report does not own, moving its entries in under a journal).

    ``jobs``: notebooks run at once (:func:`run_pages`; ``None``: one per available core).
    Their score matrices are computed once for all of them in the report's score cache
    (:mod:`toolsel.eval.score_cache`), so the outputs are the same bytes whatever ``jobs``
    and whatever the cache held.

    A failing notebook does not stop the others; its error is in the returned
    :class:`NotebookRun` and its previous outputs stay. ``on_done(run)`` is called after
    each notebook, in the order they finish (for progress).
    """
    nb_dir = Path(notebooks_dir)
    notebooks = find_notebooks(nb_dir, only)
    all_notebooks = find_notebooks(nb_dir)
    if data is not None:
        check_user_data(data)
    plan = notebook_plan(notebooks, data)
    rep = check_out_dir(Path(out_dir), nb_dir)
    names, folders = _report_names(all_notebooks)
    _absolute_cache_env()
    existed = rep.exists()
    rep.mkdir(parents=True, exist_ok=True)
    with report_lock(rep):
        _clean_leftovers(rep)
        own = check_ownership(rep, names, folders, all_notebooks, force=force)
        # a folder holding the user's files (--force, then or earlier) or another user's is
        # updated in place, never replaced whole
        in_place = (existed and not own.listed and any(
            not e.startswith(".toolsel-") for e in os.listdir(rep))) \
            or manifest_shared(rep) or os.stat(rep).st_uid != os.getuid()
        build = make_private_dir(rep / f"{BUILD_PREFIX}{secrets.token_hex(6)}")
        started = time.time()
        cache = score_cache_dir(rep)
        try:
            with _scores_in(cache):
                runs = run_pages(plan, build, rep, nb_dir, html=html, kernel=kernel,
                                 on_done=on_done, jobs=jobs)
                _write(rep, build, plan, runs, own, data, only, all_notebooks,
                       in_place=in_place, nb_dir=nb_dir)
        finally:
            shutil.rmtree(build, ignore_errors=True)
        if cache is not None and only is None:  # a whole run: what it did not read goes
            prune(cache, started)
    return runs


def score_cache_dir(rep: Path) -> Path | None:
    """The report's score cache folder ``rep/.toolsel-scores`` (made by the first page that
    stores a matrix), or ``None`` (with one line saying why) when the name holds something
    else: a link, a file, another user's folder. Judged after links are followed: ``rep`` is
    a real path."""
    path = Path(os.path.realpath(rep)) / CACHE_DIR
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    if not stat.S_ISDIR(st.st_mode) or not owned_by_me(st):
        print(f"score cache {path}: not a folder of yours (a link, a file or another "
              "user's); not used, pages score alone", flush=True)
        return None
    return path


@contextlib.contextmanager
def _scores_in(cache: Path | None) -> Iterator[None]:
    """Name the score cache to every kernel started meanwhile (:data:`CACHE_ENV`)."""
    saved = os.environ.get(CACHE_ENV)
    if cache is not None:
        os.environ[CACHE_ENV] = str(cache)
    else:
        os.environ.pop(CACHE_ENV, None)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(CACHE_ENV, None)
        else:
            os.environ[CACHE_ENV] = saved


#: The variables that set how many threads numpy's and scipy's BLAS (and OpenMP) use.
BLAS_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def default_jobs() -> int:
    """Notebooks run at once by default: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - no affinity on this platform
        return max(1, os.cpu_count() or 1)


def run_pages(plan: Sequence[PlannedNotebook], build: Path, rep: Path, nb_dir: Path, *,
              html: bool, kernel: str, on_done=None, jobs: int | None = None
              ) -> list[NotebookRun]:
    """Run the planned notebooks, ``jobs`` at a time, through joblib (its default process
    backend; ``joblib.parallel_config(backend=...)`` sends them to a Dask or Ray cluster
    instead); one :class:`NotebookRun` per notebook, in plan order.

    Pages are independent (each writes only its own entries of the build folder), so they
    are dispatched costliest first (:func:`~toolsel.report.plan.notebook_cost`; ties: later
    pages first), the longest-processing-time rule: the learning and scale pages start at
    once instead of last. On 1,600 tools x 2,500 requests with 2 jobs, plan order reversed
    started page 05 (108 s) after 174 s of others and the report took 294.7 s. With several at once each kernel gets its share of the cores for
    its BLAS and ONNX threads (:data:`BLAS_THREAD_VARS`, ``TOOLSEL_ONNX_THREADS``, unless
    already set). ``on_done(run)`` is
    called in the calling process as each finishes.
    """
    from joblib import Parallel, delayed
    runs: dict[int, NotebookRun] = {}
    todo = []
    for i, p in enumerate(plan):
        if p.skip is not None:
            runs[i] = NotebookRun(p.source, rep / p.source.name, None, 0.0, skipped=p.skip)
            if on_done is not None:
                on_done(runs[i])
        else:
            todo.append(i)
    n = max(1, min(jobs or default_jobs(), len(todo) or 1))
    env = dict(os.environ)
    if n > 1:
        # kernels side by side share the cores: each gets its share of BLAS threads (unless
        # the caller chose), since idle BLAS threads spinning for the CPU another kernel
        # needs made two pages at once slower than one after the other
        share = str(max(1, default_jobs() // n))
        for var in (*BLAS_THREAD_VARS, ONNX_THREADS_ENV):
            env.setdefault(var, share)
    todo.sort(key=lambda i: (-notebook_cost(plan[i].source), -i))
    tasks = (delayed(_run_in)(i, plan[i], build, rep, nb_dir, html, kernel, env)
             for i in todo)
    for i, run in Parallel(n_jobs=n, return_as="generator_unordered")(tasks):
        runs[i] = run
        if on_done is not None:
            on_done(run)
    return [runs[i] for i in range(len(plan))]


def _run_in(i: int, planned: PlannedNotebook, build: Path, out: Path, nb_dir: Path,
            html: bool, kernel: str, env: dict[str, str]) -> tuple[int, NotebookRun]:
    """One notebook in a worker, with the environment of the report that sent it (a worker
    may have been started before, or on another machine): its kernel inherits it."""
    saved = dict(os.environ)
    if saved != env:
        os.environ.clear()
        os.environ.update(env)
    try:
        return i, _run_one(planned, build, out, nb_dir, html=html, kernel=kernel)
    finally:
        if saved != env:
            os.environ.clear()
            os.environ.update(saved)


#: Entries of the report itself (not of one notebook): never dropped as another data's output.
_REPORT_LEVEL = frozenset({"README.md", "index.html", MANIFEST, EXPLORER_PAGE})


def _write(rep: Path, build: Path, plan: Sequence[PlannedNotebook], runs: Sequence[NotebookRun],
           own: Ownership, data: UserData | None, only, all_notebooks: Sequence[Path], *,
           in_place: bool, nb_dir: Path) -> None:
    """Write the run's set into ``rep`` through :func:`toolsel.io.write_set`: ownership by
    content (:func:`~toolsel.report.output.ownership`); a file that changed since the last
    report, or a user's file, is kept where it is and named in one line."""
    built_all = {f for name in os.listdir(build) if not name.startswith(".")
                 for f in _built_files(build, name)}
    owned = _owned_now(own, built_all)
    changed_top = {f for f in own.changed if "/" not in f}
    # filled by the writers while write_set runs: a user's files kept inside replaced entries
    user_kept: set[str] = set()
    files, drop = _place_runs(rep, build, plan, runs, owned, changed_top, user_kept)
    if data is not None and only is None:  # a user's report: earlier outputs of other data go
        drop.update(_other_data_entries(plan, owned))
    remove = _place_drops(rep, drop, files, owned, user_kept)
    new_files = {f for name in files for f in _built_files(build, name)}
    kept = _kept_owned(rep, owned, files, remove)
    if in_place:  # the staged view must hold the kept entries too (README, index list them)
        _link_kept(rep, kept, files)

    def finish(staging: Path) -> None:
        explorer = _write_pages(staging, rep, nb_dir, data, all_notebooks, runs)
        _restore_changed(staging, rep, changed_top)
        _write_manifest(staging, own, new_files | kept | explorer, user_kept, built_all,
                        in_place=in_place)

    write_set(rep, files, remove=sorted(remove), finish=finish, carry_folders=True,
              in_place=in_place)
    _print_kept(own, user_kept, built_all)


def _owned_now(own: Ownership, built_all: set[str]) -> set[str]:
    """The files the report may replace or remove: all it owns by content; owned by name only
    (legacy), what is written again and the top-level entries, nothing else inside."""
    owned = set(own.owned)
    if own.legacy:  # owned by name only: replace what is written again, remove nothing inside
        owned = {f for f in owned if "/" not in f or f in built_all}
    return owned


def _place_runs(rep: Path, build: Path, plan: Sequence[PlannedNotebook],
                runs: Sequence[NotebookRun], owned: set[str], changed_top: set[str],
                user_kept: set[str]) -> tuple[dict, set[str]]:
    """The writers of each run's entries (``{name: writer}``) and the entries to drop: a
    skipped notebook's, and a succeeding one's it no longer writes. A failed notebook keeps
    its previous outputs and adds its ``.failed.ipynb``; a top-level entry changed since the
    last report is left alone."""
    files: dict = {}
    drop: set[str] = set()
    for planned, run in zip(plan, runs):
        stem = planned.source.stem
        entries = report_entries(stem)
        if run.skipped is not None:
            drop.update(entries)
        elif run.error is None:
            for name in entries:
                if name in changed_top:
                    continue
                if (build / name).exists():
                    files[name] = _move_from(build / name, rep / name, owned, name, user_kept)
                else:
                    drop.add(name)
        elif (build / f"{stem}.failed.ipynb").exists() and \
                f"{stem}.failed.ipynb" not in changed_top:
            files[f"{stem}.failed.ipynb"] = _move_from(build / f"{stem}.failed.ipynb",
                                                       rep / f"{stem}.failed.ipynb", owned, "",
                                                       user_kept)
    return files, drop


def _other_data_entries(plan: Sequence[PlannedNotebook], owned: set[str]) -> set[str]:
    """Owned top-level entries of notebooks not in this plan (an earlier report's, of other
    data)."""
    ours = {p.source.stem for p in plan}
    return {e for e in {f.split("/")[0] for f in owned} if e.split(".")[0] not in ours}


def _place_drops(rep: Path, drop: set[str], files: dict, owned: set[str],
                 user_kept: set[str]) -> set[str]:
    """The dropped entries to remove: only owned top-level entries not written again and not
    the report's own; an entry holding a user's files is instead kept with just those files
    (its writer added to ``files``)."""
    owned_top = {f.split("/")[0] for f in owned}
    drop = {e for e in drop if e in owned_top and e not in files and e not in _REPORT_LEVEL}
    remove = set()
    for name in drop:
        if _has_unowned(rep / name, owned, name):  # keep a user's files found inside it
            files[name] = _move_from(None, rep / name, owned, name, user_kept)
        else:
            remove.add(name)
    return remove


def _kept_owned(rep: Path, owned: set[str], files: dict, remove: set[str]) -> set[str]:
    """Owned files this run neither writes nor removes (a failed notebook's previous
    outputs, ...) that are still in ``rep``."""
    return {f for f in owned if f.split("/")[0] not in files and f.split("/")[0] not in remove
            and f.split("/")[0] not in _REPORT_LEVEL and (rep / f).is_file()}


def _link_kept(rep: Path, kept: set[str], files: dict) -> None:
    """Add to ``files`` a writer linking each kept top-level entry of ``rep`` into the set."""
    for name in {f.split("/")[0] for f in kept}:
        if (rep / name).exists():
            files[name] = _link_entry(rep / name)


def _write_pages(staging: Path, rep: Path, nb_dir: Path, data: UserData | None,
                 all_notebooks: Sequence[Path], runs: Sequence[NotebookRun]) -> set[str]:
    """The report's pages in ``staging``: explorer.html from the set just built (before README
    and index link it), then README.md and index.html. Returns ``{explorer.html}`` if it was
    built, else an empty set."""
    write_report_explorer(staging, nb_dir, data)
    keep_equal_files(staging / EXPLORER_PAGE, rep / EXPLORER_PAGE)
    explorer = {EXPLORER_PAGE} if (staging / EXPLORER_PAGE).is_file() else set()
    if data is None:
        write_readme(staging, all_notebooks)
        write_index(staging, all_notebooks, runs=runs)
    else:
        write_user_readme(staging, runs, data, shown_dir=rep)
        write_index(staging, [r.source for r in runs], runs=runs,
                    title="toolsel report on your data", intro=_user_intro(data))
    return explorer


def _restore_changed(staging: Path, rep: Path, changed_top: set[str]) -> None:
    """Top-level entries changed since the last report: the old file stays (linked back in
    place of what was staged)."""
    for name in changed_top:
        if (staging / name).exists() or (staging / name).is_symlink():
            (staging / name).unlink()
        if (rep / name).exists() and not (rep / name).is_symlink():
            link_tree(rep / name, staging / name)


def _write_manifest(staging: Path, own: Ownership, written: set[str], user_kept: set[str],
                    built_all: set[str], *, in_place: bool) -> None:
    """The manifest of the staged set: the files the report wrote (``written``, plus README
    and index) with their hashes, less a user's and changed files, which are listed as
    kept."""
    ours = (written | {"README.md", "index.html"}) - user_kept - own.changed
    theirs = {f for f in own.changed | (user_kept & built_all) if f != MANIFEST
              and ((staging / f).exists() or (staging / f).is_symlink())}
    write_text(manifest_text(ours, shared=in_place, root=staging, kept=theirs),
               staging / MANIFEST)


def _print_kept(own: Ownership, user_kept: set[str], built_all: set[str]) -> None:
    """Name, in one line each, the files kept: changed since the last report, and (in a
    folder owned by name only) the user's files not recorded as the report's."""
    noticed = sorted((own.changed | (user_kept & built_all)) - {MANIFEST})
    if noticed:
        print("changed since the last report: kept: " + visible(", ".join(noticed)), flush=True)
    unrecorded = sorted(user_kept - set(noticed)) if own.legacy else []
    if unrecorded:
        print("not recorded as the report's (a folder without a manifest of content hashes): "
              "kept: " + visible(", ".join(unrecorded)), flush=True)


def _built_files(build: Path, name: str) -> list[str]:
    path = build / name
    if path.is_dir():
        return [(Path(d).relative_to(build) / f).as_posix()
                for d, _dirs, fs in os.walk(path) for f in fs]
    return [name] if path.exists() else []


def _link_entry(src: Path):
    def write(path: Path) -> None:
        link_tree(src, path)
    return write


def _user_intro(data: UserData) -> str:
    """The index page's intro for a report on a user's data (file names only, no paths)."""
    given = ", ".join(f"{name} {path.name}" for name, path in data.given().items())
    return ("The notebooks of the toolsel suite that this data supports, executed by toolsel "
            f"report on it ({given}; scorers: "
            + (", ".join(data.scorers) if data.scorers else "each notebook's defaults")
            + "; top_k: " + (", ".join(map(str, data.top_k)) if data.top_k
                             else "each notebook's defaults")
            + "). Each card links the page, its executed notebook and its tables (CSV); "
            "notebooks this data cannot feed are listed at the end with the reason.")
