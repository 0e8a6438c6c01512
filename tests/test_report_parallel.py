"""``toolsel report --jobs N`` with the score cache: the same bytes whatever N and whatever the
cache held.

A small synthetic registry goes through two pages (the sweep of recall vs payload and the
cross-fitted labels page, which read the same score matrices of bm25, embedding and default)
with real papermill kernels, three times: one
page at a time into a fresh folder (a cold cache), two at a time into another fresh folder
(two kernels computing and reading entries at once), and two at a time again into the first
folder (a warm cache: every matrix read back, none computed). Every file of the three reports
is compared byte for byte; the cache entries of the first run are read by the third, not
written again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolsel.eval.score_cache import CACHE_DIR
from toolsel.synthetic import synthetic_queries, synthetic_registry, write_queries, \
    write_registry

pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]
PAGES = "01,13"


def _report(data: Path, out: Path, jobs: int) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, "-m", "toolsel.cli", "report", "--registry",
                           "registry.json", "--queries", "queries.jsonl", "--out",
                           os.path.relpath(out, data), "--only", PAGES, "--jobs", str(jobs),
                           "--notebooks", str(ROOT / "notebooks")],
                          cwd=data, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and CACHE_DIR not in p.relative_to(out).parts}


def _entries(out: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in (out / CACHE_DIR).glob("*.npz")}


@pytest.mark.slow  # three reports of two notebooks each, with papermill
def test_outputs_are_the_same_bytes_whatever_jobs_and_cache(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    reg = synthetic_registry(48, seed=3)
    write_registry(reg, data / "registry.json")
    write_queries(synthetic_queries(reg, 40, seed=3), data / "queries.jsonl")

    one = _report(data, tmp_path / "a", jobs=1)
    first = _files(tmp_path / "a")
    entries = _entries(tmp_path / "a")
    # the sweep and the labels page score with the same scorers: one entry each
    assert entries and len(first) > 20
    two = _report(data, tmp_path / "b", jobs=2)
    assert _files(tmp_path / "b") == first
    assert sorted(_entries(tmp_path / "b")) == sorted(entries)
    warm = _report(data, tmp_path / "a", jobs=2)
    assert _files(tmp_path / "a") == first
    assert _entries(tmp_path / "a") == entries  # read back, not computed and written again
    # a progress line per page with its time, on the terminal only
    for out in (one, two, warm):
        for page in PAGES.split(","):
            assert any(line.strip().startswith(page) and line.rstrip().endswith(" s)")
                       for line in out.splitlines()), out
    assert not any(b" s)" in body and b"ok (" in body for body in first.values())
