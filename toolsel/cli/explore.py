"""``toolsel explore``: the explorer notebook on your registry, opened in JupyterLab.

Writes a copy of the explorer notebook (04) with its parameters set to your files into
``--out`` (default ``./toolsel-explore``), never into the project's ``notebooks/`` or
``reports/`` and never over a file of anyone else (its own untouched copy from an earlier run
is rewritten: :mod:`toolsel.report.explore_notebook`), then opens it in JupyterLab
(``--no-lab``: just write it and print its path). The report folder's ``explorer.html`` is the
no-kernel alternative.

JupyterLab runs in its own process group, and dies with ``toolsel explore``: SIGTERM,
SIGINT (Ctrl-C) or SIGHUP to toolsel stops the whole group (SIGTERM, then SIGKILL if it
is still there after :data:`STOP_GRACE` seconds), and on Linux the kernel sends it SIGTERM if
toolsel itself is killed (``PR_SET_PDEATHSIG``). Its files go to folders named up front
(:func:`child_env`): Jupyter's config, data and runtime files (tokens included) under
toolsel's state folder, IPython's profile there too, matplotlib's and npm's cache and logs
under toolsel's cache; a variable the caller set is kept. One line names every place written
outside ``--out`` ("also written outside it: ..."), as ``toolsel report`` does.

How JupyterLab is started is said, one line each, never done silently
(:func:`lab_command`): ``--allow-root`` when run as root (JupyterLab refuses root otherwise);
``--no-browser`` when asked, or when no browser can be opened here (no display: Chromium
installed on a headless machine cannot show a page), instead of JupyterLab's "No web browser
found"; ``--browser CMD`` picks the browser.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from ..visible import visible
from .common import command, csv_list, int_list


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", type=Path, required=True, help="tool registry JSON")
    p.add_argument("--queries", type=Path, default=None,
                   help="labeled queries JSONL (optional: its first query is shown when the "
                        "default query's tool is not in the registry)")
    p.add_argument("--out", type=Path, default=Path("toolsel-explore"),
                   help="folder for the notebook and its tables (default: ./toolsel-explore)")
    p.add_argument("--scorers", type=csv_list, default=None,
                   help="comma-separated scorers, one panel each (default: the notebook's)")
    p.add_argument("--model", type=Path, default=None, metavar="FILE",
                   help="also show a model written by `toolsel fit`: one more panel, "
                        "<base>+labels (loaded on --registry; tools whose text changed since "
                        "the fit keep their blind scores, with a warning)")
    p.add_argument("--top-k", type=int_list, default=None,
                   help="comma-separated cut-offs (the explorer shows the headline one first)")
    p.add_argument("--notebooks", type=Path, default=None,
                   help="folder holding NN_explorer.ipynb (default: ./notebooks, else the "
                        "repository's)")
    p.add_argument("--no-lab", action="store_true",
                   help="write the notebook and print its path; do not start JupyterLab")
    p.add_argument("--no-browser", action="store_true",
                   help="start JupyterLab without opening a browser (it prints the URL to "
                        "open); the default when no browser can be opened here")
    p.add_argument("--browser", metavar="CMD",
                   help="the browser JupyterLab opens (a command, e.g. chromium or firefox; "
                        "default: the system's)")


#: Graphical browsers looked for when Python's webbrowser module finds none (Debian installs
#: Chromium as /usr/bin/chromium).
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
            "firefox", "firefox-esr", "microsoft-edge")


def _has_display(env: Mapping[str, str], platform: str) -> bool:
    if not platform.startswith("linux") and "bsd" not in platform:
        return True  # macOS and Windows open a browser without an X or Wayland display
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def lab_command(notebook: str, *, euid: int | None = None, no_browser: bool = False,
                browser: str | None = None, env: Mapping[str, str] | None = None,
                platform: str | None = None) -> tuple[list[str], list[str]]:
    """The JupyterLab command for ``notebook`` and one line per option it adds, saying why.

    ``euid``: the effective user id (default: this process's; 0 adds ``--allow-root``).
    Browser: ``no_browser`` adds ``--no-browser``; ``browser`` is passed as JupyterLab's
    ``ServerApp.browser``; otherwise, when a display exists (``DISPLAY`` or
    ``WAYLAND_DISPLAY`` on Linux; always on macOS and Windows) and ``BROWSER`` is unset, the
    first of :data:`BROWSERS` on ``PATH`` is passed (Python's webbrowser module ignores
    ``chromium`` on some systems), and JupyterLab's own choice is kept when none is found;
    without a display ``--no-browser`` is added (nothing could be shown).
    """
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
    cmd = [sys.executable, "-m", "jupyterlab", notebook]
    notes = []
    if euid == 0:
        cmd.append("--allow-root")
        notes.append("running as root: JupyterLab started with --allow-root (it refuses root "
                     "otherwise); run toolsel explore as a normal user to avoid it")
    if no_browser:
        cmd.append("--no-browser")
        notes.append("--no-browser: open the URL JupyterLab prints below")
    elif browser:
        cmd.append(f"--ServerApp.browser={browser} %s")
        notes.append(f"opening it with {browser}")
    elif not _has_display(env, platform):
        cmd.append("--no-browser")
        found = next((b for b in BROWSERS if shutil.which(b, path=env.get("PATH"))), None)
        notes.append("no display (DISPLAY and WAYLAND_DISPLAY unset)"
                     + (f": {found} is installed but cannot show a page here" if found else "")
                     + "; open the URL JupyterLab prints below in a browser")
    elif not env.get("BROWSER"):
        found = next((shutil.which(b, path=env.get("PATH")) for b in BROWSERS
                      if shutil.which(b, path=env.get("PATH"))), None)
        if found and not _webbrowser_finds_one():
            cmd.append(f"--ServerApp.browser={found} %s")
            notes.append(f"opening it with {found}")
    return cmd, notes


def _write_page(notebook, args) -> Path | None:
    """``explorer.html`` beside the notebook (same name, ``.html``): the offline page on the
    registry and labeled queries, the model as one more panel. A file of that name that is not
    an explorer page toolsel wrote is left alone (``None``)."""
    from ..report.explorer_page import write_explorer
    from ..io import read_regular
    page = notebook.with_suffix(".html")
    content = read_regular(page)  # never a pipe or a device: those are not read, nor replaced
    if (page.exists() or page.is_symlink()) and \
            (content is None or b'id="explorer-data"' not in content):
        print(f"note: {visible(page)} exists and is not an explorer page toolsel wrote: left alone",
              flush=True)
        return None
    return write_explorer(page, args.registry, args.queries, args.scorers, model=args.model)


#: Seconds JupyterLab has to shut down after SIGTERM before its group is killed.
STOP_GRACE = 15.0
#: The signals that stop ``toolsel explore`` and the JupyterLab it started.
STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGINT", "SIGHUP")
                     if hasattr(signal, n))


def child_env(env: Mapping[str, str] | None = None) -> tuple[dict, list[tuple[str, Path]]]:
    """The environment JupyterLab runs in, and every place written outside ``--out``.

    Jupyter's, IPython's, matplotlib's and npm's files go to folders toolsel names here
    (``JUPYTER_CONFIG_DIR``, ``JUPYTER_DATA_DIR``, ``JUPYTER_RUNTIME_DIR`` and ``IPYTHONDIR``
    under :func:`toolsel.io.state_dir`; ``MPLCONFIGDIR`` and ``npm_config_cache`` under the
    cache root), not to ``~/.jupyter``, ``~/.local/share/jupyter``, ``~/.ipython`` or
    ``~/.npm``; a variable already set is the caller's choice and kept. Returns the
    environment and ``(what, folder)`` pairs, toolsel's own embedding cache and state first."""
    from ..io import state_dir
    from ..scorers.embedding_cache import cache_root
    env = dict(os.environ if env is None else env)
    state, cache = state_dir(), cache_root().absolute()
    places = [
        ("JUPYTER_CONFIG_DIR", "Jupyter's config, JupyterLab's settings and workspaces",
         state / "jupyter" / "config"),
        ("JUPYTER_DATA_DIR", "Jupyter's data files", state / "jupyter" / "data"),
        ("JUPYTER_RUNTIME_DIR", "Jupyter's runtime files (server and kernel connection files)",
         state / "jupyter" / "runtime"),
        ("IPYTHONDIR", "IPython's profile", state / "ipython"),
        ("MPLCONFIGDIR", "matplotlib's config and font cache", cache / "matplotlib"),
        ("npm_config_cache", "npm's cache and logs", cache / "npm"),
    ]
    written = [("the embedding cache", cache), ("toolsel's state", state)]
    for var, what, default in places:
        given = env.get(var)
        path = Path(os.path.abspath(os.path.expanduser(given))) if given else default
        env[var] = str(path)
        written.append((what, path))
    return env, written


def _make_places(env: Mapping[str, str]) -> None:
    """Create the folders :func:`child_env` named (the state folder private, as toolsel's
    record key needs it; Jupyter's runtime folder holds tokens: private too)."""
    from ..io import private_state, refuse_never_write, state_dir
    from ..scorers.embedding_cache import cache_root
    refuse_never_write(cache_root().absolute())
    private_state(create=True)
    state = state_dir()
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
                "MPLCONFIGDIR", "npm_config_cache"):
        path = Path(env[var])
        if state in path.parents:
            for p in reversed([path, *path.parents]):
                if p == state or state not in p.parents:
                    continue
                with contextlib.suppress(FileExistsError):
                    os.mkdir(p, 0o700)
        else:
            path.mkdir(parents=True, exist_ok=True)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the kernel sends this process SIGTERM when toolsel dies, even by SIGKILL."""
    with contextlib.suppress(Exception):
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def run_child(cmd: list[str], *, cwd, env: Mapping[str, str],
              grace: float = STOP_GRACE) -> int:
    """Run ``cmd`` in its own process group until it exits, or until toolsel gets SIGTERM,
    SIGINT or SIGHUP: then the whole group gets SIGTERM, and SIGKILL ``grace`` seconds later
    if anything of it is left. Returns the child's status, or 128 + the signal received."""
    linux = sys.platform.startswith("linux")
    proc = subprocess.Popen(cmd, cwd=cwd, env=dict(env), start_new_session=True,
                            preexec_fn=_die_with_parent if linux else None)
    received: list[int] = []

    def stop(signum, frame):
        if not received:
            received.append(signum)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)

    old = {}
    for sig in STOP_SIGNALS:
        with contextlib.suppress(ValueError, OSError):  # (not the main thread: left as is)
            old[sig] = signal.signal(sig, stop)
    deadline = None
    try:
        while True:
            try:
                code = proc.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            if received and deadline is None:
                deadline = time.monotonic() + grace
            if deadline is not None and time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:  # an exception in toolsel: the group goes too
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        # whatever the group still holds once its leader is gone (its own children)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for sig, handler in old.items():
            signal.signal(sig, handler)
    return 128 + received[0] if received else code


def _webbrowser_finds_one() -> bool:
    """Whether Python's webbrowser module (JupyterLab's) knows a browser here."""
    import webbrowser
    try:
        webbrowser.get()
        return True
    except webbrowser.Error:
        return False


@command("explore", "write the explorer notebook on your --registry (and --queries) outside "
         "the project and open it in JupyterLab", _args)
def _explore(args: argparse.Namespace) -> int:
    from ..report.explore_notebook import write_explore_notebook
    from .report import default_notebooks
    notebooks = args.notebooks if args.notebooks is not None else default_notebooks()
    path = write_explore_notebook(notebooks, args.registry, args.out, queries=args.queries,
                                  scorers=args.scorers, top_k=args.top_k, model=args.model)
    print(f"wrote {visible(path)} (tables go to {visible(path.with_suffix(''))}/)", flush=True)
    if args.queries is not None:
        page = _write_page(path, args)
        if page is not None:
            print(f"wrote {visible(page)}: the explorer page, offline, every scorer"
                  + (" and the model" if args.model is not None else ""), flush=True)
    if args.no_lab:
        return 0
    cmd, notes = lab_command(path.name, no_browser=args.no_browser, browser=args.browser)
    for note in notes:
        print(visible(note), flush=True)
    env, written = child_env()
    _make_places(env)
    print("also written outside it: " + "; ".join(f"{what} {visible(where)}"
                                                   for what, where in written), flush=True)
    print("opening it in JupyterLab (Ctrl-C to stop)", flush=True)
    return run_child(cmd, cwd=path.parent, env=env)
