"""Issue 35, item 8: ``toolsel explore`` stops the JupyterLab it started, and keeps Jupyter's,
IPython's, matplotlib's and npm's files under folders it names up front.

A real JupyterLab is started by the real CLI (``--no-browser``, a fake empty HOME, no Jupyter
variables set), then SIGTERM, SIGINT or SIGHUP goes to toolsel alone (not to a group): the
JupyterLab server process must be gone, its port free, and the fake HOME must hold nothing
but what the "also written outside it" line names.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DATA, ROOT

NOTEBOOKS = ROOT / "notebooks"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _port_open(port: int) -> bool:
    """Something listens on ``port`` at localhost (IPv4 or IPv6)."""
    for family, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family) as s:
                if s.connect_ex((addr, port)) == 0:
                    return True
        except OSError:
            continue
    return False


def _wait(cond, limit: float = 60.0) -> bool:
    """Poll ``cond`` until it holds (a bound, not a timing assertion)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def _start(tmp_path: Path):
    pytest.importorskip("jupyterlab")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "JUPYTER_CONFIG_DIR",
                        "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR",
                        "npm_config_cache", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                        "XDG_DATA_HOME", "XDG_STATE_HOME")}
    env.update(HOME=str(home), TOOLSEL_STATE=str(tmp_path / "state"),
               TOOLSEL_CACHE=str(tmp_path / "cache"), PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p))
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolsel.cli", "explore", "--registry",
         str(DATA / "registry.json"), "--notebooks", str(NOTEBOOKS), "--out",
         str(tmp_path / "mine"), "--no-browser"], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True)  # the test's own group
    lines: list[str] = []
    port = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "http://127.0.0.1:" in line or "http://localhost:" in line:
            port = int(line.split("http://")[1].split(":")[1].split("/")[0])
            break
    if port is None:
        os.killpg(proc.pid, signal.SIGKILL)
        text = "".join(lines) + proc.communicate()[0]
        pytest.skip("JupyterLab did not start here: " + text[-500:].replace("\n", " | "))
    runtime = tmp_path / "state" / "jupyter" / "runtime"

    def servers() -> list[int]:
        found = []
        for p in runtime.glob("jpserver-*.json"):
            try:
                s = json.loads(p.read_text())
            except (OSError, ValueError):  # being written
                continue
            if s.get("port") == port:
                found.append(s["pid"])
        return found
    _wait(lambda: bool(servers()))  # written just after the URL is printed
    return proc, lines, port, servers(), home


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_explore_stops_its_jupyterlab(tmp_path, sig):
    proc, lines, port, pids, home = _start(tmp_path)
    try:
        assert len(pids) == 1, (pids, "".join(lines))  # its server file is in the named folder
        (jupyter,) = pids
        assert jupyter != proc.pid and _alive(jupyter)
        assert _wait(lambda: _port_open(port)), f"JupyterLab {jupyter} does not listen on {port}"
        os.kill(proc.pid, sig)  # toolsel alone, as a service manager or a closed terminal does
        rest = proc.communicate(timeout=120)[0]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 128 + sig, "".join(lines) + rest
    assert _wait(lambda: not _alive(jupyter)), f"JupyterLab {jupyter} still runs"
    assert _wait(lambda: not _port_open(port)), f"port {port} still listens"
    text = "".join(lines)
    (outside,) = [ln for ln in lines if ln.startswith("also written outside it: ")]
    for what in ("Jupyter's config", "Jupyter's data files", "Jupyter's runtime files",
                 "IPython's profile", "npm's cache and logs", str(tmp_path / "state")):
        assert what in outside, text
    # nothing in HOME: not ~/.jupyter, ~/.local/share/jupyter, ~/.ipython nor ~/.npm
    assert sorted(str(p.relative_to(home)) for p in home.rglob("*")) == [], text


@pytest.mark.slow
def test_killing_explore_outright_still_stops_its_jupyterlab(tmp_path):
    """SIGKILL cannot be caught: on Linux the kernel tells JupyterLab (PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    proc, lines, port, pids, _ = _start(tmp_path)
    try:
        (jupyter,) = pids
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert _wait(lambda: not _alive(jupyter)), f"JupyterLab {jupyter} still runs"
    assert _wait(lambda: not _port_open(port))


def test_the_childs_folders_are_named_up_front_and_the_callers_choice_kept(tmp_path,
                                                                          monkeypatch):
    from toolsel.cli.explore import child_env
    monkeypatch.setenv("TOOLSEL_STATE", str(tmp_path / "st"))
    monkeypatch.setenv("TOOLSEL_CACHE", str(tmp_path / "ca"))
    env, written = child_env({"PATH": "/bin", "IPYTHONDIR": str(tmp_path / "mine")})
    assert env["JUPYTER_RUNTIME_DIR"] == str(tmp_path / "st" / "jupyter" / "runtime")
    assert env["npm_config_cache"] == str(tmp_path / "ca" / "npm")
    assert env["IPYTHONDIR"] == str(tmp_path / "mine")  # the caller's: kept, and named
    assert ("IPython's profile", tmp_path / "mine") in written
    assert {w for w, _ in written} >= {"the embedding cache", "toolsel's state"}


def test_a_child_that_ignores_sigterm_is_killed_after_the_grace(tmp_path):
    """run_child on a real child process group that ignores SIGTERM (and has a grandchild):
    a SIGTERM to this process ends both with SIGKILL once the grace is over."""
    from toolsel.cli.explore import run_child
    pidfile = tmp_path / "pids"
    child = (f"import os, signal, subprocess, sys, time; signal.signal(signal.SIGTERM, "
             f"signal.SIG_IGN); g = subprocess.Popen([sys.executable, '-c', 'import signal, "
             f"time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)']); "
             f"open({str(pidfile)!r}, 'w').write(f'{{os.getpid()}} {{g.pid}}'); time.sleep(600)")
    runner = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from toolsel.cli.explore import "
              f"run_child; sys.exit(run_child([sys.executable, '-c', {child!r}], cwd='.', "
              f"env=__import__('os').environ, grace=1.0))")
    proc = subprocess.Popen([sys.executable, "-c", runner], start_new_session=True)
    try:
        assert _wait(lambda: pidfile.exists() and " " in pidfile.read_text())
        pids = [int(p) for p in pidfile.read_text().split()]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert _wait(lambda: not any(_alive(p) for p in pids)), pids
    del run_child
