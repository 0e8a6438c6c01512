"""Issue 25: a report writes only what it owns, one report per folder, the set in one step.

Every test runs the real ``toolsel report`` (papermill, a real kernel) on tiny notebooks, or
the real :func:`toolsel.io.write_set`; concurrency and kill tests run real processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from toolsel.cli import main
from toolsel.io import write_set
from toolsel.report.output import MANIFEST, read_manifest

pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")


def _notebook(path: Path, version: str, sleep: float = 0.0, until: Path | None = None) -> Path:
    """A notebook writing two tables tagged ``version`` (``sleep`` seconds between them, or,
    given ``until``, as long as that file does not exist: at most 300 seconds)."""
    pause = (f"time.sleep({sleep})" if until is None else
             f"t0 = time.monotonic()\nwhile not pathlib.Path({str(until)!r}).exists() "
             "and time.monotonic() - t0 < 300:\n    time.sleep(0.05)")
    cells = [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": f"# {path.stem}"},
        {"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]},
         "source": 'out_dir: str = "out"  # where tables go', "outputs": [],
         "execution_count": None},
        {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import pathlib, time\np = pathlib.Path(out_dir)\n"
                   "p.mkdir(parents=True, exist_ok=True)\n"
                   f"(p / 'a.csv').write_text('{version}\\n')\n{pause}\n"
                   f"(p / 'b.csv').write_text('{version}\\n')\nprint('VERSION_{version}')"}]
    meta = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
    path.write_text(json.dumps({"cells": cells, "metadata": meta, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def _project(tmp_path: Path, version: str = "v1", names=("01_v",)) -> Path:
    nb = tmp_path / "nb"
    nb.mkdir(exist_ok=True)
    for name in names:
        _notebook(nb / f"{name}.ipynb", version)
    return nb


def _report(nb: Path, out: Path, *extra: str) -> int:
    return main(["report", "--notebooks", str(nb), "--out", str(out), "--no-html", *extra])


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


# --------------------------------------------------------------------------------------------
# 1. never delete or overwrite what the report did not write


def _users_folder(folder: Path) -> dict[str, bytes]:
    (folder / "99_photos").mkdir(parents=True)
    (folder / "99_photos" / "beach.jpg").write_bytes(b"\xff\xd8 photo")
    (folder / "01_budget.xlsx").write_bytes(b"budget")
    (folder / "20_taxes.pdf").write_bytes(b"%PDF taxes")
    return _files(folder)


def test_a_users_non_empty_folder_is_refused_without_force(tmp_path, capsys):
    nb, home = _project(tmp_path), tmp_path / "home"
    before = _users_folder(home)
    assert _report(nb, home) == 2
    err = _one_line_error(capsys)
    assert "is not empty" in err and "--force" in err
    assert _files(home) == before and sorted(os.listdir(home)) == sorted(
        ["99_photos", "01_budget.xlsx", "20_taxes.pdf"])


@pytest.mark.slow  # two reports run end to end
def test_force_adds_the_report_and_keeps_every_user_file(tmp_path, capsys):
    nb, home = _project(tmp_path), tmp_path / "home"
    before = _users_folder(home)
    assert _report(nb, home, "--force") == 0
    after = _files(home)
    assert {k: after[k] for k in before} == before  # every user file, byte for byte
    listed = read_manifest(home)
    assert listed and not listed & set(before)  # the user's files are not the report's
    assert after["01_v/a.csv"] == b"v1\n"
    # a rerun (now a report folder) replaces only its own files, in the user's folder itself
    inode = os.stat(home).st_ino
    _notebook(nb / "01_v.ipynb", "v2")
    assert _report(nb, home) == 0
    after = _files(home)
    assert {k: after[k] for k in before} == before and after["01_v/a.csv"] == b"v2\n"
    assert os.stat(home).st_ino == inode  # never replaced whole: it is the user's folder


def test_force_never_overwrites_a_name_the_report_needs(tmp_path, capsys):
    nb, out = _project(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("my notes")
    (out / "index.html").write_text("my page")
    assert _report(nb, out, "--force") == 2
    err = _one_line_error(capsys)
    assert "was not written by toolsel report" in err and "README.md" in err
    assert (out / "README.md").read_text() == "my notes"
    assert (out / "index.html").read_text() == "my page"


@pytest.mark.parametrize("target", ["notebooks", "toolsel", "data", "tests", ".",
                                    "notebooks/sub", "benchmarks"])
def test_the_repositorys_own_folders_are_refused(target, capsys):
    folder = ROOT / target
    before = {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").iterdir()}
    assert main(["report", "--notebooks", str(ROOT / "notebooks"), "--only", "00",
                 "--out", str(folder)]) == 2
    err = _one_line_error(capsys)
    assert "source folder" in err or "checkout" in err
    assert {p: p.stat().st_mtime_ns for p in (ROOT / "notebooks").iterdir()} == before
    assert not (ROOT / "notebooks" / "sub").exists()


def test_the_notebooks_folder_itself_is_refused(tmp_path, capsys):
    nb = _project(tmp_path)
    before = _files(nb)
    assert _report(nb, nb) == 2
    assert "source folder" in _one_line_error(capsys)
    assert _files(nb) == before


def test_project_reports_without_manifest_are_owned_but_other_tools_outputs_stay(tmp_path,
                                                                                   capsys):
    """The committed reports/ predates the manifest: its notebook outputs, README and index
    are the report's; reports/sweep and reports/benchmarks (other commands') are kept. Inside
    a table folder only what the run writes again is replaced: a file it does not write (an
    old output, or a user's CSV: nothing tells them apart) is kept and named (issue 31, 5)."""
    proj = tmp_path / "proj"
    nb = proj / "notebooks"
    nb.mkdir(parents=True)
    _notebook(nb / "01_v.ipynb", "v2")
    rep = proj / "reports"
    (rep / "01_v").mkdir(parents=True)
    (rep / "01_v" / "a.csv").write_text("v1\n")
    (rep / "01_v" / "stale.csv").write_text("old table\n")  # or a user's: kept
    (rep / "01_v.ipynb").write_text("{}")
    (rep / "README.md").write_text("old readme")
    (rep / "explorer.html").write_text("old explorer")  # the report's page too
    (rep / "sweep").mkdir()
    (rep / "sweep" / "per_query.csv").write_text("sweep table\n")
    (rep / "benchmarks").mkdir()
    (rep / "benchmarks" / "scale.csv").write_text("bench\n")
    (rep / "99_photos").mkdir()  # numbered, but no notebook's: not the report's
    (rep / "99_photos" / "a.jpg").write_text("photo")
    assert main(["report", "--notebooks", str(nb), "--out", str(rep), "--no-html"]) == 0
    files = _files(rep)
    assert files["sweep/per_query.csv"] == b"sweep table\n"
    assert files["benchmarks/scale.csv"] == b"bench\n"
    assert files["99_photos/a.jpg"] == b"photo"
    assert files["01_v/a.csv"] == b"v2\n" and files["01_v/stale.csv"] == b"old table\n"
    assert "kept: 01_v/stale.csv" in capsys.readouterr().out
    listed = read_manifest(rep)
    assert "01_v/a.csv" in listed and "README.md" in listed and "index.html" in listed
    assert not any(f.startswith(("sweep/", "benchmarks/", "99_")) for f in listed)
    assert set(listed) | {MANIFEST} | {"sweep/per_query.csv", "benchmarks/scale.csv",
                                       "99_photos/a.jpg", "01_v/stale.csv"} == set(files)
    assert "sweep" in files["README.md"].decode()  # listed under "Other tables"


@pytest.mark.slow  # two reports run end to end
def test_a_user_file_inside_a_report_folder_survives_reruns(tmp_path):
    nb, out = _project(tmp_path), tmp_path / "out"
    assert _report(nb, out) == 0
    (out / "01_v" / "my_notes.txt").write_text("mine")
    _notebook(nb / "01_v.ipynb", "v2")
    assert _report(nb, out) == 0
    assert (out / "01_v" / "my_notes.txt").read_text() == "mine"
    assert "01_v/my_notes.txt" not in read_manifest(out)
    assert (out / "01_v" / "a.csv").read_text() == "v2\n"


# --------------------------------------------------------------------------------------------
# 2. refused before any work; never wedging later runs


@pytest.mark.slow  # two reports run end to end
def test_a_file_or_link_where_the_report_folder_goes_is_refused_then_cleared(tmp_path, capsys):
    nb, out = _project(tmp_path), tmp_path / "out"
    assert _report(nb, out) == 0
    good = _files(out)
    os.rename(out / "01_v", tmp_path / "moved")
    (out / "01_v").write_text("a file, not the table folder")
    assert _report(nb, out) == 2
    assert "is a file where the report writes its folder" in _one_line_error(capsys)
    (out / "01_v").unlink()
    os.symlink(tmp_path / "moved", out / "01_v")
    assert _report(nb, out) == 2
    assert "symbolic link" in _one_line_error(capsys)
    (out / "01_v").unlink()
    assert not list(out.glob(".toolsel-*"))  # nothing left behind by the refusals
    assert _report(nb, out) == 0  # not wedged
    assert _files(out).keys() == good.keys()


def test_a_dangling_symlink_out_is_refused_before_any_work(tmp_path, capsys):
    nb, link = _project(tmp_path), tmp_path / "out"
    os.symlink(tmp_path / "nowhere", link)
    assert _report(nb, link) == 2
    assert "symbolic link to nothing" in _one_line_error(capsys)
    assert not (tmp_path / "nowhere").exists() and link.is_symlink()


@pytest.mark.slow  # two reports run end to end
def test_build_leftovers_are_cleaned_only_when_a_run_made_them(tmp_path):
    """Issue 31, 3: folders named like leftovers are someone's: kept (and carried over); a
    killed run's build folder (its record names it) is cleaned."""
    from toolsel.io import make_private_dir
    nb, out = _project(tmp_path), tmp_path / "out"
    assert _report(nb, out) == 0
    (out / ".toolsel-staging" / "01_v").mkdir(parents=True)  # named like the old runner's
    (out / ".toolsel-build-notes" / "01_v").mkdir(parents=True)  # named like a build
    (out / ".toolsel-build-notes" / "n.txt").write_text("mine")
    killed = make_private_dir(out / ".toolsel-build-123")  # a killed run's build
    (killed / "01_v").mkdir()
    assert _report(nb, out) == 0
    assert sorted(p.name for p in out.glob(".toolsel-*")) == [".toolsel-build-notes",
                                                              ".toolsel-staging"]
    assert (out / ".toolsel-build-notes" / "n.txt").read_text() == "mine"
    assert not list(tmp_path.glob(".out.*"))


# --------------------------------------------------------------------------------------------
# 2. one writer per folder, the set in one step: real processes


def _cli(nb: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "toolsel.cli", "report", "--notebooks", str(nb), "--out",
            str(out), *extra]


def _consistent(out: Path) -> str:
    """The one version every table, page and the README of ``out`` come from (a killed run's
    build folder aside: the next run cleans it)."""
    files = {k: v for k, v in _files(out).items() if not k.startswith(".toolsel-build-")}
    listed = read_manifest(out)
    assert listed == set(files) - {MANIFEST}  # nothing missing, nothing extra
    versions = {v.decode().strip() for k, v in files.items() if k.endswith(".csv")}
    for k, v in files.items():
        if k.endswith((".html", ".ipynb")) and "VERSION_" in v.decode():
            versions |= {t for t in ("v1", "v2", "v3") if f"VERSION_{t}" in v.decode()}
    assert len(versions) == 1, versions
    return versions.pop()


@pytest.mark.slow
def test_two_reports_into_one_folder_one_wins_whole_the_other_is_refused(tmp_path):
    nba, nbb, out = tmp_path / "a", tmp_path / "b", tmp_path / "out"
    nba.mkdir(), nbb.mkdir()
    # the notebook that runs holds its report (and the folder) until the other report has
    # ended, refused (no fixed sleep to race against)
    release = tmp_path / "release"
    _notebook(nba / "01_v.ipynb", "v1", until=release)
    _notebook(nbb / "01_v.ipynb", "v2", until=release)
    procs = [subprocess.Popen(_cli(nb, out), env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for nb in (nba, nbb)]
    deadline = time.monotonic() + 240
    while all(p.poll() is None for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    release.touch()
    results = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    codes = sorted(r[2] for r in results)
    assert codes == [0, 2], results
    loser = next(r for r in results if r[2] == 2)
    assert "another toolsel report is writing this folder" in loser[1]
    assert len(loser[1].strip().splitlines()) == 1
    winner = "v1" if results[0][2] == 0 else "v2"
    assert _consistent(out) == winner
    assert not list(out.glob(".toolsel-*")) and not list(tmp_path.glob(".out.*"))


_KILLER = textwrap.dedent("""
    import os, signal, sys
    from toolsel import io
    from toolsel.report.runner import generate_reports
    real = io._exchange_at
    when = sys.argv[3]
    def exchange(dfd, a, b):
        if when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        done = real(dfd, a, b)
        os.kill(os.getpid(), signal.SIGKILL)  # after: the old set is still beside it
        return done
    io._exchange_at = exchange
    generate_reports(sys.argv[1], sys.argv[2], html=False)
""")


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before", "after"])
def test_a_report_killed_at_the_swap_leaves_one_whole_set(tmp_path, when):
    nb, out = _project(tmp_path, "v1"), tmp_path / "out"
    subprocess.run(_cli(nb, out, "--no-html"), env=_env(), check=True, capture_output=True,
                   timeout=300)
    assert _consistent(out) == "v1"
    _notebook(nb / "01_v.ipynb", "v2")
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(nb), str(out), when],
                          env=_env(), capture_output=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert _consistent(out) == ("v1" if when == "before" else "v2")
    assert list(tmp_path.glob(".out.staging-*"))  # the killed run's leftover ...
    _notebook(nb / "01_v.ipynb", "v3")
    subprocess.run(_cli(nb, out, "--no-html"), env=_env(), check=True, capture_output=True,
                   timeout=300)
    assert _consistent(out) == "v3"
    assert not list(tmp_path.glob(".out.*")) and not list(out.glob(".toolsel-*"))  # ... gone


# --------------------------------------------------------------------------------------------
# write_set: folders replaced in place, another user's folder kept


def test_in_place_sets_replace_folders_and_remove_listed_entries(tmp_path):
    out = tmp_path / "out"
    (out / "t").mkdir(parents=True)
    (out / "t" / "old.csv").write_text("old")
    (out / "gone.txt").write_text("old")
    (out / "user.txt").write_text("user")
    inode = os.stat(out).st_ino

    def folder(path):
        path.mkdir()
        (path / "new.csv").write_text("new")
    write_set(out, {"t": folder, "r.txt": "x"}, remove=["gone.txt"], in_place=True,
              carry_folders=True, finish=lambda s: (s / "index.txt").write_text("i"))
    assert _files(out) == {"t/new.csv": b"new", "r.txt": b"x", "user.txt": b"user",
                           "index.txt": b"i"}
    assert os.stat(out).st_ino == inode and not list(out.glob(".toolsel-*"))


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="needs root to give a folder to another user")
def test_another_users_folder_is_kept_and_written_inside(tmp_path):
    out = tmp_path / "theirs"
    out.mkdir()
    os.chown(out, 12345, 12345)
    inode = os.stat(out).st_ino
    write_set(out, {"summary.csv": "a\n"})
    st = os.stat(out)
    assert (st.st_ino, st.st_uid) == (inode, 12345) and (out / "summary.csv").exists()


def test_readme_only_respects_ownership_and_records_what_it_wrote(tmp_path, capsys):
    nb, out = _project(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("my notes")
    assert main(["report", "--notebooks", str(nb), "--out", str(out), "--readme-only"]) == 2
    assert "is not empty" in _one_line_error(capsys)
    assert (out / "README.md").read_text() == "my notes"
    fresh = tmp_path / "fresh"
    assert main(["report", "--notebooks", str(nb), "--out", str(fresh), "--readme-only"]) == 0
    assert read_manifest(fresh) == {"README.md", "index.html"}
    assert _report(nb, fresh) == 0  # a later report owns what --readme-only wrote
    assert "01_v/a.csv" in read_manifest(fresh)


def test_refusals_under_the_lock_keep_their_own_message(tmp_path):
    """generate_reports checks again under its lock: a refusal there says why, not 'another
    report is writing'."""
    from toolsel.io import OutputError
    from toolsel.report.runner import generate_reports
    nb, out = _project(tmp_path), tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text("mine")
    with pytest.raises(OutputError, match="was not written by toolsel report"):
        generate_reports(nb, out, html=False, force=True)
    assert (out / "index.html").read_text() == "mine" and os.listdir(out) == ["index.html"]


_KILL_IN_PLACE = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from toolsel import io
    real, calls = os.replace, []
    def replace(a, b, **kw):
        if "src_dir_fd" in kw and not str(a).startswith("."):  # a commit folder's entry
            calls.append(a)
            if len(calls) == 2:  # one entry moved in, the next not yet
                os.kill(os.getpid(), signal.SIGKILL)
        return real(a, b, **kw)
    io.os.replace = replace
    def folder(path):
        path.mkdir()
        (path / "t.csv").write_text("new")
    io.write_set(sys.argv[1], {"a.txt": "new", "b.txt": "new", "t": folder},
                 remove=["gone.txt"], in_place=True, carry_folders=True)
""")


@pytest.mark.slow
def test_an_in_place_set_killed_while_moving_in_is_rolled_forward(tmp_path):
    out = tmp_path / "shared"
    (out / "t").mkdir(parents=True)
    (out / "t" / "t.csv").write_text("old")
    for name in ("a.txt", "b.txt", "gone.txt", "user.txt"):
        (out / name).write_text("old" if name != "user.txt" else "user")
    proc = subprocess.run([sys.executable, "-c", _KILL_IN_PLACE, str(out)], env=_env(),
                          capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert list(out.glob(".toolsel-commit-*"))  # complete set, partly moved in
    write_set(out, {"z.txt": "next run"}, carry_folders=True, in_place=True)
    assert _files(out) == {"a.txt": b"new", "b.txt": b"new", "t/t.csv": b"new",
                           "user.txt": b"user", "z.txt": b"next run"}
    assert not list(out.glob(".toolsel-*"))


def test_a_second_writer_is_refused_at_once_with_one_line(tmp_path, capsys):
    from toolsel.report.runner import report_lock
    nb, out = _project(tmp_path), tmp_path / "out"
    assert _report(nb, out) == 0
    before = _files(out)
    t0 = time.monotonic()
    with report_lock(out):
        assert _report(nb, out) == 2
    assert time.monotonic() - t0 < 30  # refused, not waited for
    assert "another toolsel report is writing this folder" in _one_line_error(capsys)
    assert _files(out) == before and not list(out.glob(".toolsel-*"))
