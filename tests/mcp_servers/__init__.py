"""Real MCP servers the tests start, and helpers to start them and ``toolsel serve``.

``NOTES``: the notes server written here with the SDK (``notes_server.py``); ``TIME``: the
published ``mcp-server-time`` from PyPI (a test dependency), its local time zone fixed so its
tool descriptions read the same on every machine.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PY = sys.executable
NOTES_SCRIPT = HERE / "notes_server.py"


def notes_command(*extra: str) -> str:
    """The command line that starts the notes server over stdio."""
    return shlex.join([PY, str(NOTES_SCRIPT), *extra])


def time_command() -> str:
    """The command line that starts mcp-server-time (PyPI) over stdio."""
    return shlex.join([PY, "-m", "mcp_server_time", "--local-timezone", "UTC"])


def child_env() -> dict[str, str]:
    """What a ``toolsel serve`` child started by an MCP client needs besides the SDK's default
    environment: this checkout on the path, and the suite's cache and state folders."""
    env = {"PYTHONPATH": str(ROOT)}
    for key in ("TOOLSEL_CACHE", "TOOLSEL_STATE", "ORT_DISABLE_TELEMETRY", "OPENBLAS_CORETYPE",
                "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


@contextmanager
def notes_over_http(*extra: str):
    """The notes server on streamable HTTP (a free port on 127.0.0.1): yields its URL, and
    the process; stopped at the end."""
    proc = subprocess.Popen([PY, str(NOTES_SCRIPT), "--http", *extra], stdout=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on "), line
        yield line.split()[-1], proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()
