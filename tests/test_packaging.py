"""What installing and running toolsel leaves behind: no deprecation noise from the build, and
nothing in HOME but the caches a report names (onnxruntime's telemetry files avoided)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

# variables that move the caches out of HOME: dropped so HOME is where everything lands
_CACHE_VARS = ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR",
               "IPYTHONDIR", "TOOLSEL_CACHE", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR",
               "JUPYTER_CONFIG_DIR", "ORT_DISABLE_TELEMETRY")


def fresh_home_env(home, **extra) -> dict:
    """The environment with ``home`` as HOME and no variable redirecting a cache."""
    env = {k: v for k, v in os.environ.items() if k not in _CACHE_VARS}
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**env, "HOME": str(home), "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1",
            **extra}


_ENCODE = """
from toolsel import Tool
from toolsel.report.runner import other_writes
from toolsel.scorers.embedding import EmbeddingScorer
s = EmbeddingScorer().fit([Tool("weather_lookup", "current weather for a city"),
                           Tool("calculator", "evaluate an arithmetic expression")])
assert s.score("rain in Oslo?").argmax() == 0
for what, path in other_writes():
    print(what, "=", path)
"""


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_the_embedding_model_leaves_home_clean_and_names_onnxruntime_files_when_on(tmp_path):
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    done = subprocess.run([sys.executable, "-c", _ENCODE], cwd=tmp_path, capture_output=True,
                          text=True, env=fresh_home_env(home, TOOLSEL_CACHE=str(cache)))
    assert done.returncode == 0, done.stderr
    assert _files(home) == []  # onnxruntime's device id and SQLite store avoided
    assert _files(cache)  # the embedding cache, where TOOLSEL_CACHE says
    assert "onnxruntime" not in done.stdout
    # a caller who turns its telemetry on may get onnxruntime's files (whether it writes them
    # depends on the machine: one CI machine wrote none), only in the folder the report's list
    # names
    done = subprocess.run([sys.executable, "-c", _ENCODE], cwd=tmp_path, capture_output=True,
                          text=True, env=fresh_home_env(home, TOOLSEL_CACHE=str(cache),
                                                        ORT_DISABLE_TELEMETRY="0"))
    assert done.returncode == 0, done.stderr
    onnx = home / ".cache" / "Microsoft" / "DeveloperTools" / ".onnxruntime"
    assert all(f.startswith(".cache/Microsoft/DeveloperTools/.onnxruntime/")
               for f in _files(home))
    assert f"onnxruntime's device id and telemetry store = {onnx}" in done.stdout


@pytest.mark.slow  # builds a wheel through pip (about 9 s, setuptools from the index)
def test_building_the_package_prints_no_deprecation_warning(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "toolsel", src / "toolsel",
                    ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                           "-w", str(tmp_path / "wheel"), str(src)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = done.stdout + done.stderr
    noise = [line for line in out.splitlines()
             if "Warning" in line or "deprecat" in line.lower()]
    assert not noise, "\n".join(noise)
    assert list((tmp_path / "wheel").glob("toolsel-*.whl"))
