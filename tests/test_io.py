"""toolsel.io: atomic files, sets swapped in whole, umask, the folder lock, destination checks."""

from __future__ import annotations

import os
import stat
import threading

import pandas as pd
import pytest

from toolsel import io
from toolsel.io import (OutputError, check_output_dir, check_output_file, folder_lock,
                        write_json, write_registry, write_set, write_table)
from toolsel.data import Tool, load_registry


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _set(tag: str) -> dict:
    return {"a.csv": pd.DataFrame({"run": [tag], "x": [0.5]}),
            "b.csv": pd.DataFrame({"run": [tag] * 3}), "c.json": {"run": tag}}


def _tags(folder) -> set[str]:
    """The run tag each file of the set holds (one tag: a consistent set)."""
    tags = {pd.read_csv(folder / "a.csv")["run"][0], *pd.read_csv(folder / "b.csv")["run"]}
    tags.add(__import__("json").loads((folder / "c.json").read_text())["run"])
    return tags


def test_single_files_are_atomic_with_unique_temp_names(tmp_path, monkeypatch):
    path = write_table(pd.DataFrame({"x": [1.0, 2.25]}), tmp_path / "t.csv")
    assert path.read_text() == "x\n1.000000\n2.250000\n"
    seen = []
    real_replace = os.replace

    def failing_replace(src, dst, **dir_fds):  # (written through the folder's descriptor)
        seen.append(src)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        write_table(pd.DataFrame({"x": [9]}), tmp_path / "t.csv")
    monkeypatch.setattr(os, "replace", real_replace)
    assert path.read_text() == "x\n1.000000\n2.250000\n"  # old file untouched
    assert os.listdir(tmp_path) == ["t.csv"]  # the temporary file is gone
    assert ".t.csv." in str(seen[0]) and str(seen[0]) != str(tmp_path / ".t.csv.tmp")


def test_files_honour_the_umask_not_0600(tmp_path, umask_022):
    """Item 10: import and the cache wrote 0o600; everything now follows the umask."""
    write_json({"a": 1}, tmp_path / "j.json")
    write_registry([Tool("a", "b")], tmp_path / "r.json")
    write_set(tmp_path / "set", _set("x"))
    assert _mode(tmp_path / "j.json") == _mode(tmp_path / "r.json") == 0o644
    assert _mode(tmp_path / "set" / "a.csv") == 0o644 and _mode(tmp_path / "set") == 0o755
    os.umask(0o002)
    write_json({"a": 1}, tmp_path / "k.json")
    assert _mode(tmp_path / "k.json") == 0o664


def test_json_is_strict(tmp_path):
    with pytest.raises(ValueError, match="NaN or Infinity"):
        write_json({"x": float("nan")}, tmp_path / "n.json")
    with pytest.raises(ValueError, match="NaN or Infinity"):
        write_registry([Tool("a", "b", {"type": "object", "maximum": float("inf")})],
                       tmp_path / "r.json")
    assert not list(tmp_path.iterdir())


def test_registry_round_trip_json_and_jsonl(tmp_path):
    tools = [Tool("a", "first", {"type": "object", "properties": {}}, {"domain": "d"}),
             Tool("b", "second")]
    for name in ("r.json", "r.jsonl"):
        assert list(load_registry(write_registry(tools, tmp_path / name))) == tools


def test_set_is_written_whole_and_keeps_other_files(tmp_path):
    out = tmp_path / "out"
    write_set(out, _set("old"))
    (out / "notes.txt").write_text("mine")
    paths = write_set(out, _set("new"))
    assert [p.name for p in paths] == ["a.csv", "b.csv", "c.json"]
    assert _tags(out) == {"new"} and (out / "notes.txt").read_text() == "mine"
    assert sorted(os.listdir(tmp_path)) == ["out"]  # no staging or old folder left


def test_a_failed_writer_leaves_the_old_set(tmp_path):
    out = tmp_path / "out"
    write_set(out, _set("old"))

    def boom(path):
        raise RuntimeError("disk full")
    with pytest.raises(RuntimeError):
        write_set(out, {**_set("new"), "d.csv": boom})
    assert _tags(out) == {"old"} and sorted(os.listdir(tmp_path)) == ["out"]


def test_fallback_swap_without_renameat2(tmp_path, monkeypatch):
    monkeypatch.setattr(io, "_exchange_at", lambda dfd, a, b: False)
    out = tmp_path / "out"
    write_set(out, _set("old"))
    write_set(out, _set("new"))
    assert _tags(out) == {"new"} and sorted(os.listdir(tmp_path)) == ["out"]


def _die_in_child(action) -> None:
    """Run ``action`` in a forked child that dies (os._exit) where ``action`` makes it."""
    pid = os.fork()
    if pid == 0:
        try:
            action()
        finally:
            os._exit(1)
    os.waitpid(pid, 0)


def test_leftovers_of_a_killed_run_are_cleaned_or_undone(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_set(out, _set("old"))
    # folders merely named like a killed run's leftovers are someone else's: kept
    for name in (".out.staging-dead", ".out.old-mine"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.csv").write_text("mine")
    # killed while staging: a partial staging folder beside the output, and its journal
    _die_in_child(lambda: write_set(out, {**_set("new"), "d.csv": lambda p: os._exit(9)}))
    assert len(os.listdir(tmp_path)) == 5 and _tags(out) == {"old"}
    write_set(out, _set("new"))
    assert sorted(os.listdir(tmp_path)) == [".out.old-mine", ".out.staging-dead", "out"]
    assert _tags(out) == {"new"}
    # killed between the two renames of the fallback swap: the old set is put back first
    monkeypatch.setattr(io, "_exchange_at", lambda dfd, a, b: False)
    real_rename = os.rename

    def rename(a, b, **kw):
        real_rename(a, b, **kw)
        if ".out.old-" in str(b):
            os._exit(9)
    monkeypatch.setattr(io.os, "rename", rename)
    _die_in_child(lambda: write_set(out, _set("newer")))
    monkeypatch.setattr(io.os, "rename", real_rename)
    assert not out.exists()
    io._recover(out)
    assert _tags(out) == {"new"}
    assert sorted(os.listdir(tmp_path)) == [".out.old-mine", ".out.staging-dead", "out"]
    assert (tmp_path / ".out.old-mine" / "a.csv").read_text() == "mine"


def test_folder_with_subfolders_is_updated_in_place_and_rolled_forward(tmp_path, monkeypatch):
    out = tmp_path / "proj"
    (out / "sub").mkdir(parents=True)
    write_set(out, _set("old"))
    assert _tags(out) == {"old"} and (out / "sub").is_dir()
    # folders named like a commit or a staging folder, not made by a run: kept as they are
    for name in (".toolsel-commit-dead", ".toolsel-staging-dead"):
        (out / name).mkdir()
        (out / name / "a.csv").write_text("mine")
    # a run killed after its set was complete but before every file was moved in
    real_replace, moved = os.replace, []

    def replace(a, b, **kw):
        if "src_dir_fd" in kw and not str(a).startswith("."):  # an entry of the commit folder
            moved.append(a)
            if len(moved) == 2:
                os._exit(9)
        return real_replace(a, b, **kw)
    monkeypatch.setattr(io.os, "replace", replace)
    _die_in_child(lambda: write_set(out, _set("new")))
    monkeypatch.setattr(io.os, "replace", real_replace)
    assert len(_tags(out)) == 2  # a mix, until the next run rolls it forward
    write_set(out, {"z.txt": "other run"})
    assert _tags(out) == {"new"}
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [
        ".toolsel-commit-dead", ".toolsel-staging-dead"]
    assert (out / ".toolsel-commit-dead" / "a.csv").read_text() == "mine"


def test_second_writer_waits_then_refuses_clearly(tmp_path):
    out = tmp_path / "out"
    write_set(out, _set("old"))
    held, release = threading.Event(), threading.Event()

    def holder():
        with folder_lock(tmp_path):
            held.set()
            release.wait(30)
    t = threading.Thread(target=holder)
    t.start()
    held.wait(30)
    try:
        with pytest.raises(OutputError, match="another process is writing it"):
            write_set(out, _set("new"), timeout=0.2)
    finally:
        release.set()
        t.join()
    assert _tags(out) == {"old"}
    write_set(out, _set("new"))  # the lock is free again
    assert _tags(out) == {"new"}


def test_symlinked_output_folder_is_written_through(tmp_path):
    real = tmp_path / "real"
    write_set(real, _set("old"))
    (tmp_path / "link").symlink_to(real)
    write_set(tmp_path / "link", _set("new"))
    assert (tmp_path / "link").is_symlink() and _tags(real) == {"new"}


def test_check_output_dir_and_file(tmp_path):
    (tmp_path / "f").write_text("x")
    (tmp_path / "d" / "summary.csv").mkdir(parents=True)
    with pytest.raises(OutputError, match="exists and is not a folder"):
        check_output_dir(tmp_path / "f")
    with pytest.raises(OutputError, match="f is a file, not a folder"):
        check_output_dir(tmp_path / "f" / "sub")
    with pytest.raises(OutputError, match="summary.csv: is a folder"):
        check_output_dir(tmp_path / "d", ["summary.csv"])
    assert check_output_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    with pytest.raises(OutputError, match="is a folder; give a file name"):
        check_output_file(tmp_path / "d")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        check_output_file(tmp_path / "f" / "r.json")
    with pytest.raises(ValueError, match="plain names"):
        write_set(tmp_path / "o", {"../escape.csv": "x"})


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_read_only_output_folder_is_refused_before_work(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(OutputError, match="not writable"):
            check_output_dir(ro)
        with pytest.raises(OutputError, match="not writable"):
            check_output_dir(ro / "sub")
    finally:
        ro.chmod(0o755)
