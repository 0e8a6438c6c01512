"""Issue 35, item 6: ``import --out reg.json --queries-out q.jsonl`` (and ``synthetic`` with its
two outputs) commit as one step.

The real CLI is SIGKILLed at 20 random points of a run large enough to take a while; after
each kill (and the recovery the next run does first) the registry and the labels are from one
run, and after a following successful run no temporary file or journal remains. The two
windows that matter most (killed after writing the temporary files, killed between the two
renames) are also hit exactly, by a child process that kills itself there.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from conftest import snapshot
from toolsel import io as tio

N_TOOLS = 30000


def _env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}


def _inputs(folder: Path, run: int, n: int = N_TOOLS) -> list[Path]:
    """A MetaTool dump of ``n`` tools named for ``run`` and labels naming a third of them."""
    tools = folder / f"tools{run}.json"
    labels = folder / f"labels{run}.csv"
    if not tools.exists():
        tools.write_text(json.dumps({f"Run{run}x{j}": f"run {run} tool {j}: does thing {j} with "
                                     "widgets and gadgets, " * 3 for j in range(n)}))
        with open(labels, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["Query", "Tool"])
            for j in range(0, n, 3):
                w.writerow([f"please do thing {j}", f"Run{run}x{j}"])
    return [tools, labels]


def _import(folder: Path, run: int, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "toolsel.cli", "import",
                             *map(str, _inputs(folder, run)), "--out", "out/reg.json",
                             "--queries-out", "out/q.jsonl"], cwd=folder, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _pair(out: Path) -> tuple[set, set] | None:
    """The runs the registry's tools and the labels' expected tools come from, if both read."""
    try:
        tools = json.loads((out / "reg.json").read_text())["tools"]
        lines = [json.loads(ln) for ln in (out / "q.jsonl").read_text().splitlines()
                 if ln and not ln.startswith("//")]
    except (OSError, ValueError):
        return None
    names = {t["name"] for t in tools}
    expected = {e for q in lines for e in q["expected"]}
    assert expected <= names or not expected & names, "labels name tools of two registries"
    return ({n.split("x")[0] for n in names}, {e.split("x")[0] for e in expected})


def _consistent(out: Path) -> bool:
    pair = _pair(out)
    return pair is not None and len(pair[0]) == 1 and pair[0] == pair[1]


def _leftovers(out: Path) -> list[str]:
    return sorted(n for n in os.listdir(out) if n not in ("reg.json", "q.jsonl"))


def test_sigkill_of_import_at_20_random_points_leaves_one_runs_pair(tmp_path):
    rng = random.Random(35)
    first = _import(tmp_path, 0)
    assert first.wait(timeout=300) == 0, first.communicate()
    out = tmp_path / "out"
    assert _consistent(out)
    t0 = time.monotonic()
    done = _import(tmp_path, 1)
    assert done.wait(timeout=300) == 0
    span = time.monotonic() - t0  # how long one run takes here: kills spread over it
    raw_half, states = 0, []
    for i in range(20):
        run = i % 3  # three different runs: a mix of two shows
        proc = _import(tmp_path, run)
        time.sleep(rng.uniform(0.05, span * 1.05))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        raw_half += not _consistent(out)  # before any recovery (between two renames only)
        tio.recover_pair(out / "reg.json")  # what the next run does first
        assert _consistent(out), (i, _pair(out))
        assert not [n for n in _leftovers(out) if "toolsel-pair" in n or "paircommit" in n]
        states.append(sorted(_pair(out)[0]))
    again = _import(tmp_path, 1)
    assert again.wait(timeout=300) == 0, again.communicate()
    assert _consistent(out) and _pair(out)[0] == {"Run1"}
    assert _leftovers(out) == []  # no temporary file, no journal
    assert raw_half <= 1, raw_half  # the commit's two renames are microseconds apart


def _killed_at(tmp_path: Path, where: str, run: int) -> None:
    """A child importing ``run`` that SIGKILLs itself at ``where`` of the pair's commit:
    ``"before-commit"`` (both temporary files written, journal not yet committed) or
    ``"between-renames"`` (the registry renamed in, the labels not yet)."""
    code = f"""
import os, signal, sys
real_rename, real_replace = os.rename, os.replace
calls = []
def rename(a, b, **kw):
    if {where!r} == "before-commit" and "paircommit" in str(b):
        os.kill(os.getpid(), signal.SIGKILL)
    return real_rename(a, b, **kw)
def replace(a, b, **kw):
    calls.append(b)
    if {where!r} == "between-renames" and str(a).startswith(".") and len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(a, b, **kw)
os.rename, os.replace = rename, replace
from toolsel.cli import main
sys.exit(main(sys.argv[1:]))
"""
    args = [*map(str, _inputs(tmp_path, run, 300)), "--out", "out/reg.json", "--queries-out",
            "out/q.jsonl"]
    done = subprocess.run([sys.executable, "-c", code, "import", *args], cwd=tmp_path,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGKILL, done.stderr


def _cli_import(tmp_path: Path, run: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolsel.cli", "import",
                           *map(str, _inputs(tmp_path, run, 300)), "--out", "out/reg.json",
                           "--queries-out", "out/q.jsonl"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)


def test_killed_after_writing_its_temporary_files_the_old_pair_stays(tmp_path):
    assert _cli_import(tmp_path, 0).returncode == 0
    out = tmp_path / "out"
    _killed_at(tmp_path, "before-commit", 1)
    assert _pair(out)[0] == {"Run0"} and _consistent(out)  # the old pair, untouched
    assert any(n.endswith(".tmp") for n in _leftovers(out))  # (the killed run's temps)
    done = _cli_import(tmp_path, 1)
    assert done.returncode == 0, done.stderr
    assert "removed (a killed run's temporary file)" in done.stdout
    assert _pair(out)[0] == {"Run1"} and _leftovers(out) == []


def test_killed_between_the_two_renames_the_next_run_completes_the_pair(tmp_path):
    assert _cli_import(tmp_path, 0).returncode == 0
    out = tmp_path / "out"
    _killed_at(tmp_path, "between-renames", 1)
    assert not _consistent(out)  # the one moment a reader could see a half pair ...
    done = _cli_import(tmp_path, 0)  # ... the next run completes it before anything else
    assert done.returncode == 0, done.stderr
    assert "completed from a run killed while it replaced the pair" in done.stdout
    assert _pair(out)[0] == {"Run0"} and _leftovers(out) == []
    # recovery alone (no new run) gives the killed run's pair
    _killed_at(tmp_path, "between-renames", 1)
    tio.recover_pair(out / "reg.json")
    assert _consistent(out) and _pair(out)[0] == {"Run1"} and _leftovers(out) == []


def test_a_forged_or_foreign_pair_journal_moves_and_deletes_nothing(tmp_path):
    assert _cli_import(tmp_path, 0).returncode == 0
    out = tmp_path / "out"
    (out / "my_analysis.txt").write_text("mine\n")
    (out / ".q.jsonl.aaaaaaaaaaaa.tmp").write_text("a user's file with a temp-like name\n")
    st = os.stat(out)
    forged = {"kind": "toolsel pair journal", "id": "aaaaaaaaaaaa", "out": "reg.json",
              "parent": [st.st_dev, st.st_ino], "parent_path": str(out.resolve()),
              "files": [[str(out.resolve()), "q.jsonl", ".q.jsonl.aaaaaaaaaaaa.tmp",
                         [st.st_dev, st.st_ino]]], "mac": "0" * 64}
    for name in (".reg.json.toolsel-paircommit-aaaaaaaaaaaa",
                 ".reg.json.toolsel-pair-bbbbbbbbbbbb"):
        (out / name).write_text(json.dumps(forged))
    os.symlink(out / "my_analysis.txt", out / ".reg.json.toolsel-pair-cccccccccccc")
    before = snapshot(tmp_path)
    tio.recover_pair(out / "reg.json")
    assert snapshot(tmp_path) == before
    done = _cli_import(tmp_path, 1)
    assert done.returncode == 0, done.stderr
    assert (out / "my_analysis.txt").read_text() == "mine\n"
    assert (out / ".q.jsonl.aaaaaaaaaaaa.tmp").exists()  # a fresh file of that name: kept
    assert (out / ".reg.json.toolsel-paircommit-aaaaaaaaaaaa").exists()
    assert _pair(out)[0] == {"Run1"}


def test_synthetic_writes_its_two_outputs_as_one_step(tmp_path):
    args = [sys.executable, "-m", "toolsel.cli", "synthetic", "--tools", "20000",
            "--n-queries", "2000", "--registry-out", "r.jsonl", "--queries-out", "q.jsonl"]
    assert subprocess.run(args + ["--seed", "1"], cwd=tmp_path, env=_env(),
                          capture_output=True).returncode == 0
    proc = subprocess.Popen(args + ["--seed", "2"], cwd=tmp_path, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    tio.recover_pair(tmp_path / "r.jsonl")
    names = {json.loads(ln)["name"] for ln in (tmp_path / "r.jsonl").read_text().splitlines()
             if ln and not ln.startswith("//")}
    expected = {e for ln in (tmp_path / "q.jsonl").read_text().splitlines()
                if ln and not ln.startswith("//") for e in json.loads(ln)["expected"]}
    assert expected <= names
    done = subprocess.run(args + ["--seed", "3"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == ["q.jsonl", "r.jsonl"]
