"""Every notebook: conventions, executed with papermill, tables equal to the committed ones.

Notebooks are found by glob (``notebooks/[0-9][0-9]_*.ipynb``), so a new notebook is covered
without touching this file. Three checks each:

1. conventions: kernelspec ``python3``, outputs stripped, a first code cell tagged
   ``parameters`` that sets ``out_dir``, and a ``py:percent`` pair in sync with the ipynb;
2. executed with papermill (as ``toolsel report`` does, with ``out_dir`` in a temporary
   folder); every CSV it writes must equal, byte for byte, the committed copy under
   ``reports/<NN_slug>/`` (timing tables under ``benchmarks/`` excepted): a change that moves
   a number fails here until ``make report`` is rerun and its output committed;
3. run unchanged under ``pytest --nbval-lax`` from a scratch copy of the tree, so the source
   notebook's own defaults work and nothing is written into the real ``reports/``.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
REPORTS = ROOT / "reports"
NOTEBOOKS = sorted(NB_DIR.glob("[0-9][0-9]_*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]

pytest.importorskip("papermill")


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def test_notebooks_exist():
    assert NOTEBOOKS, f"no notebooks matching [0-9][0-9]_*.ipynb in {NB_DIR}"
    assert len({p.name[:2] for p in NOTEBOOKS}) == len(NOTEBOOKS), "two notebooks share a number"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_conventions(nb_path):
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        assert not cell.get("outputs"), f"code cell {i} has outputs: strip them"
        assert cell.get("execution_count") is None, f"code cell {i} has an execution count"
    assert code and "parameters" in code[0].get("metadata", {}).get("tags", []), \
        "the first code cell must be tagged 'parameters'"
    params = _source(code[0])
    assert f'out_dir: str = "../reports/{nb_path.stem}"' in params, \
        f"the parameters cell must set out_dir: str = \"../reports/{nb_path.stem}\""
    assert nb["metadata"].get("jupytext", {}).get("formats") == "ipynb,py:percent"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_paired_text_is_in_sync(nb_path):
    jupytext = pytest.importorskip("jupytext")
    py = nb_path.with_suffix(".py")
    assert py.exists(), f"{py.name} (the py:percent pair) is missing"
    from_py = jupytext.read(py)
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    a = [(c.cell_type, c.source.strip()) for c in from_py.cells]
    b = [(c["cell_type"], _source(c).strip()) for c in nb["cells"]]
    assert a == b, (f"{nb_path.name} and {py.name} differ: run "
                    f"`jupytext --sync notebooks/{py.name}`")


def _diff(new: Path, old: Path) -> str:
    lines = difflib.unified_diff(old.read_text().splitlines(), new.read_text().splitlines(),
                                 "committed", "regenerated", n=0, lineterm="")
    return "\n".join(list(lines)[:12])


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_executes_and_tables_match_committed(nb_path, tmp_path):
    from toolsel.report import execute_notebook
    out = tmp_path / nb_path.stem
    execute_notebook(nb_path, tmp_path / nb_path.name, out, cwd=NB_DIR)
    written = sorted(out.rglob("*.csv")) if out.exists() else []
    stale = []
    for csv in written:
        rel = csv.relative_to(tmp_path)
        if "benchmarks" in rel.parts:  # timings: never compared
            continue
        committed = REPORTS / rel
        if not committed.exists():
            stale.append(f"reports/{rel.as_posix()} is not committed")
        elif committed.read_bytes() != csv.read_bytes():
            stale.append(f"reports/{rel.as_posix()} differs:\n{_diff(csv, committed)}")
    assert not stale, ("committed tables are out of date; run `make report` and commit "
                       "reports/:\n" + "\n".join(stale))


def _scratch_tree(tmp_path: Path) -> Path:
    """A copy of the repository layout where notebooks write into a scratch reports/."""
    root = tmp_path / "tree"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in ("notebooks", "reports", "tests", ".git", ".venv", "pyproject.toml",
                          ".pytest_cache") or entry.name.startswith("."):
            continue
        (root / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    shutil.copytree(NB_DIR, root / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    shutil.copytree(REPORTS, root / "reports", ignore=shutil.ignore_patterns("*.html"))
    return root


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_nbval_lax(nb_path, tmp_path):
    pytest.importorskip("nbval")
    root = _scratch_tree(tmp_path)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
         "--nbval-kernel-name", "python3", f"notebooks/{nb_path.name}"],
        cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
