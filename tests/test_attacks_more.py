"""Issue 35: the final swap of a set goes through descriptors, and attack cases beyond the
issue's list, each with a hashed sentinel tree (or the file it targets) checked after.

Every case runs the real code: the CLI in a subprocess where a command is attacked, the
``toolsel.io`` functions where the attack needs a precise moment (a hook the function has:
``finish``, which runs once the set is staged, just before the swap).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, ROOT, snapshot
from toolsel.io import OutputError, write_set

REG = str(DATA / "registry.json")
QUERIES = str(DATA / "queries.jsonl")
MCP = str(DATA / "integrations" / "mcp_github.json")


def _env(tmp: Path, **extra) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": path, "HOME": str(home),
            "TOOLSEL_STATE": str(tmp / "state"), "PYTHONDONTWRITEBYTECODE": "1", **extra}


def cli(tmp: Path, *args, cwd: Path | None = None, timeout: float = 600, **env):
    return subprocess.run([sys.executable, "-m", "toolsel.cli", *map(str, args)],
                          cwd=cwd or tmp, env=_env(tmp, **env), capture_output=True,
                          text=True, timeout=timeout)


def refused(done, *words: str) -> str:
    """Exit 2, one error line (no traceback) holding ``words``; that line."""
    assert done.returncode == 2, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    return err


# --------------------------------------------------------------------------------------------
# the final swap through the folder's descriptor (issue 35, "a swap between check and write
# fails")


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEL_STATE", str(tmp_path / "state"))


def test_a_parent_turned_into_a_link_at_the_swap_writes_nothing_there(tmp_path, state):
    """The set is staged; at that moment the output's folder is moved away and a link to
    another folder put in its place, holding a folder named like the staging folder (what a
    path-based swap would exchange with that folder's ``out``, then delete)."""
    parent, out = tmp_path / "p", tmp_path / "p" / "out"
    write_set(out, {"a.csv": "old\n"})
    other = tmp_path / "elsewhere"
    (other / "out").mkdir(parents=True)
    (other / "out" / "precious.txt").write_text("the other folder's file\n")
    seen = {}

    def finish(staging: Path) -> None:
        planted = other / staging.name
        planted.mkdir()
        (planted / "precious.txt").write_text("planted\n")
        parent.rename(tmp_path / "moved")
        parent.symlink_to(other)
        seen["other"] = snapshot(other)

    with pytest.raises(OutputError, match="was replaced while it was written"):
        write_set(out, {"a.csv": "new\n"}, finish=finish)
    assert snapshot(other) == seen["other"]
    moved = tmp_path / "moved"
    assert sorted(os.listdir(moved)) == ["out"]  # no staging folder, no journal left
    assert (moved / "out" / "a.csv").read_text() == "old\n"


@pytest.mark.parametrize("how", ["in_place", "subfolder"])
def test_an_in_place_folder_turned_into_a_link_at_the_commit_writes_nothing_there(
        tmp_path, state, how):
    """Sets moved in entry by entry: at the commit, the output folder becomes a link to
    another folder holding a folder named like this run's staging folder."""
    out = tmp_path / "out"
    out.mkdir()
    if how == "subfolder":
        (out / "sub").mkdir()
    write_set(out, {"a.csv": "old\n"}, in_place=how == "in_place")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "precious.txt").write_text("the other folder's file\n")
    seen = {}

    def finish(staging: Path) -> None:
        planted = other / staging.name
        planted.mkdir()
        (planted / "precious.txt").write_text("planted\n")
        out.rename(tmp_path / "moved")
        out.symlink_to(other)
        seen["other"] = snapshot(other)

    with pytest.raises(OutputError, match="was replaced while it was written"):
        write_set(out, {"a.csv": "new\n"}, finish=finish, in_place=how == "in_place")
    assert snapshot(other) == seen["other"]
    moved = tmp_path / "moved"
    assert (moved / "a.csv").read_text() == "old\n"
    assert not [n for n in os.listdir(moved) if n.startswith(".toolsel-")]


def test_an_output_folder_turned_into_a_link_at_the_swap_is_refused(tmp_path, state):
    """``out`` itself replaced by a link just before the swap: the swap refuses a name that
    is no longer a folder; the link and its target stay as they are."""
    out = tmp_path / "out"
    write_set(out, {"a.csv": "old\n"})
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "a.csv").write_text("theirs\n")

    def finish(staging: Path) -> None:
        out.rename(tmp_path / "moved")
        out.symlink_to(other)

    with pytest.raises(OutputError, match="no longer a folder"):
        write_set(out, {"a.csv": "new\n"}, finish=finish)
    assert (other / "a.csv").read_text() == "theirs\n" and out.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "moved", "out", "state"]
