"""A clone in another folder regenerates the committed reports unchanged (issue 32, item 2).

The project's tracked files are copied into two folders of different depth, as two clones on
two machines would be, and `toolsel report` regenerates the pages that read files by path
(05: the committed benchmark tables) or carry float-model scores (04: embedding rankings) in
each. Every file it writes must be byte-identical between the two folders and to the committed
one, and name neither folder: an absolute path in a page would differ between them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = ("04_explorer", "05_scale_benchmark")


def _clone(dest: Path) -> Path:
    # tracked files, and new ones not yet committed (what a clone of this change will hold)
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=ROOT, check=True,
                             capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, tracked):
        src = ROOT / rel
        if src.is_file():  # a file deleted in the working tree is not copied
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _outputs(reports: Path) -> dict[str, bytes]:
    found = {}
    for page in PAGES:
        for path in [reports / f"{page}.ipynb", reports / f"{page}.html",
                     *sorted((reports / page).rglob("*"))]:
            if path.is_file():
                found[path.relative_to(reports).as_posix()] = path.read_bytes()
    return found


@pytest.mark.slow
def test_two_clones_in_other_folders_regenerate_the_committed_pages_unchanged(tmp_path):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    # a space and non-ASCII letters in the path, as in many users' home folders (issue 39)
    clones = [_clone(tmp_path / "some dir" / "clöne a"),
              _clone(tmp_path / "elsewhere" / "deeper" / "b")]
    # each clone encodes afresh (its own embedding cache), the second with one BLAS thread:
    # another summation order, as another CPU would have, so drift in the last digits
    # shows up here rather than on a user's machine
    threads = [{"TOOLSEL_CACHE": str(tmp_path / "cache a")},
               {"TOOLSEL_CACHE": str(tmp_path / "cache b"), "OMP_NUM_THREADS": "1",
                "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}]
    outputs = []
    for clone, extra in zip(clones, threads):
        proc = subprocess.run(
            [sys.executable, "-m", "toolsel.cli", "report", "--only",
             ",".join(p[:2] for p in PAGES), "--out", "reports"],
            cwd=clone, capture_output=True, text=True,
            env={**os.environ, "PYTHONPATH": str(clone), **extra})  # the clone's code
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outputs.append(_outputs(clone / "reports"))
    committed = _outputs(ROOT / "reports")
    assert set(outputs[0]) == set(outputs[1]) == set(committed)
    for name, data in outputs[0].items():
        for clone in clones + [ROOT, tmp_path]:
            assert str(clone).encode() not in data, f"{name} names the folder {clone}"
        assert data == outputs[1][name], f"{name} differs between the two folders"
        assert data == committed[name], f"reports/{name} differs from the committed file"
