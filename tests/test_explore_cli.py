"""``toolsel explore`` and executed notebooks that re-run from their report folder."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from papermill.translators import PythonTranslator

from toolsel.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
NOTEBOOKS = ROOT / "notebooks"


def _explore(tmp_path, *extra):
    return main(["explore", "--registry", str(DATA / "registry.json"), "--notebooks",
                 str(NOTEBOOKS), "--out", str(tmp_path / "mine"), "--no-lab", *extra])


def _injected(path: Path) -> str:
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(cells) == 1
    return "".join(cells[0]["source"])


def test_explore_writes_a_parameterized_copy_and_never_overwrites(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "explore_registry.ipynb").write_text("my notebook")  # the user's file
    (out / "explore_registry-2").mkdir()  # a folder of theirs: its name is taken too
    assert _explore(tmp_path, "--queries", str(DATA / "queries.jsonl"), "--scorers",
                    "bm25,jaccard", "--top-k", "5") == 0
    assert (out / "explore_registry.ipynb").read_text() == "my notebook"
    path = out / "explore_registry-3.ipynb"
    assert f"wrote {path}" in capsys.readouterr().out
    text = _injected(path)
    # paths relative to the notebook's folder (it runs there): no machine path in it
    rel = os.path.relpath(DATA.resolve(), out.resolve())
    # (as papermill writes a string: a Python literal, non-ASCII characters escaped)
    assert f"registry = {PythonTranslator.translate_str(f'{rel}/registry.json')}" in text
    assert f"queries = {PythonTranslator.translate_str(f'{rel}/queries.jsonl')}" in text
    assert str(tmp_path) not in path.read_text()
    # with labeled queries, the offline explorer page is written beside the notebook
    assert 'id="explorer-data"' in path.with_suffix(".html").read_text(encoding="utf-8")
    assert 'out_dir = "explore_registry-3"' in text and '"bm25", "jaccard"' in text
    assert "top_k = [5]" in text
    assert "jupytext" not in json.loads(path.read_text())["metadata"]


def test_explore_rewrites_its_own_untouched_copy(tmp_path, capsys):
    """Run twice, ``--no-lab`` writes one notebook (its own copy rewritten), not a new ``-2``;
    once the reader edited it, the next run leaves it alone and takes ``-2``."""
    from toolsel.report.explore_notebook import MARKER, is_own_copy
    out = tmp_path / "mine"
    assert _explore(tmp_path) == 0
    path = out / "explore_registry.ipynb"
    first = path.read_bytes()
    assert is_own_copy(path) and json.loads(first)["metadata"][MARKER]["sha256"]
    assert _explore(tmp_path, "--top-k", "3") == 0  # other parameters: the same file
    assert sorted(p.name for p in out.iterdir()) == ["explore_registry.ipynb"]
    assert "top_k = [3]" in _injected(path) and is_own_copy(path)
    assert capsys.readouterr().out.count(f"wrote {path}") == 2
    nb = json.loads(path.read_text())
    nb["cells"][0]["source"] = "# my own notes\n" + "".join(nb["cells"][0]["source"])
    path.write_text(json.dumps(nb))  # the reader changed it (or ran and saved it)
    edited = path.read_bytes()
    assert not is_own_copy(path)
    assert _explore(tmp_path) == 0
    assert path.read_bytes() == edited
    assert sorted(p.name for p in out.iterdir()) == ["explore_registry-2.ipynb",
                                                     "explore_registry.ipynb"]
    assert _explore(tmp_path) == 0  # and -2 is now the copy that is rewritten
    assert sorted(p.name for p in out.iterdir()) == ["explore_registry-2.ipynb",
                                                     "explore_registry.ipynb"]


def test_a_copy_is_ours_only_with_a_matching_digest(tmp_path):
    from toolsel.report.explore_notebook import MARKER, is_own_copy
    nb = tmp_path / "x.ipynb"
    nb.write_text(json.dumps({"cells": [], "metadata": {MARKER: {"sha256": "0" * 64}}}))
    assert not is_own_copy(nb)  # a marker copied by hand does not make a file ours
    nb.write_text("not json")
    assert not is_own_copy(nb) and not is_own_copy(tmp_path / "missing.ipynb")


def test_lab_command_says_what_it_adds(tmp_path):
    from toolsel.cli.explore import lab_command
    empty = str(tmp_path)  # a PATH with no browser on it
    cmd, notes = lab_command("nb.ipynb", euid=0, env={"PATH": empty}, platform="linux")
    assert cmd[-3:] == ["nb.ipynb", "--allow-root", "--no-browser"]
    assert len(notes) == 2 and "running as root" in notes[0] and "--allow-root" in notes[0]
    assert "no display" in notes[1] and "installed" not in notes[1]
    cmd, notes = lab_command("nb.ipynb", euid=1000, env={"PATH": empty, "DISPLAY": ":0"},
                             platform="linux", browser="firefox")
    assert "--allow-root" not in cmd and cmd[-1] == "--ServerApp.browser=firefox %s"
    cmd, notes = lab_command("nb.ipynb", euid=1000, no_browser=True, env={"DISPLAY": ":0"},
                             platform="linux")
    assert cmd[-1] == "--no-browser" and notes == ["--no-browser: open the URL JupyterLab "
                                                   "prints below"]


@pytest.mark.skipif(not any(shutil.which(b) for b in ("chromium", "chromium-browser")),
                    reason="Debian's chromium is not installed here")
def test_lab_command_names_an_installed_chromium_it_cannot_use():
    import os

    from toolsel.cli.explore import lab_command
    cmd, notes = lab_command("nb.ipynb", euid=1000, env={"PATH": os.environ["PATH"]},
                             platform="linux")
    assert cmd[-1] == "--no-browser"
    assert "chromium" in notes[0] and "is installed but cannot show a page here" in notes[0]


@pytest.mark.slow
def test_explore_starts_jupyterlab_and_says_how(tmp_path):
    """The real command, JupyterLab included, on a machine without a display: it says why it
    adds each option, and JupyterLab never prints "No web browser found"."""
    import os
    import signal
    import subprocess
    import sys
    import time
    pytest.importorskip("jupyterlab")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY",
                                                            "BROWSER")}
    env.update(HOME=str(tmp_path / "home"), JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
               JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"), JUPYTER_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p),
               PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolsel.cli", "explore", "--registry",
         str(DATA / "registry.json"), "--notebooks", str(NOTEBOOKS), "--out",
         str(tmp_path / "mine")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True)
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "http://127.0.0.1:" in line or "http://localhost:" in line:
                break
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the process group this test started
        try:
            rest = proc.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rest = proc.communicate()[0]
    text = "".join(lines) + (rest or "")
    assert any("http://" in line for line in lines), text[-3000:]
    assert "No web browser found" not in text
    assert "no display (DISPLAY and WAYLAND_DISPLAY unset)" in text
    if os.geteuid() == 0:
        assert "running as root: JupyterLab started with --allow-root" in text
    else:
        assert "--allow-root" not in text


@pytest.mark.parametrize("where", ["notebooks", "reports"])
def test_explore_refuses_the_project_folders(where, capsys):
    code = main(["explore", "--registry", str(DATA / "registry.json"), "--notebooks",
                 str(NOTEBOOKS), "--out", str(ROOT / where / "x"), "--no-lab"])
    assert code == 2
    assert f"inside the project's {where}/ folder" in capsys.readouterr().err
    assert not (ROOT / where / "x").exists()


def test_explore_names_a_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"name": "a"}]')
    code = main(["explore", "--registry", str(bad), "--notebooks", str(NOTEBOOKS), "--out",
                 str(tmp_path / "o"), "--no-lab"])
    assert code == 2 and "bad.json" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_explore_copy_runs_and_writes_beside_itself(tmp_path):
    import papermill as pm
    assert _explore(tmp_path, "--queries", str(DATA / "queries.jsonl")) == 0
    path = tmp_path / "mine" / "explore_registry.ipynb"
    committed = {p: p.read_bytes() for p in (ROOT / "reports" / "04_explorer").glob("*.csv")}
    pm.execute_notebook(str(path), str(path), kernel_name="python3", cwd=str(path.parent),
                        progress_bar=False)
    from toolsel.report.claims import check_claims
    page = tmp_path / "mine" / "explore_registry"
    assert sorted(p.name for p in page.iterdir()) == \
        ["claims.json", "ranking_bm25.csv", "ranking_default.csv", "ranking_jaccard.csv"]
    assert check_claims(page) == []  # the ranks it states are its own CSVs
    assert {p: p.read_bytes() for p in committed} == committed


@pytest.mark.slow
def test_executed_notebook_reruns_into_its_own_folder(tmp_path):
    """The runner's executed copy names out_dir relative to itself: re-run from the report
    folder, it writes beside itself (not into a folder relative to notebooks/)."""
    import nbformat
    import papermill as pm

    from toolsel.report.execute import execute_notebook
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    params = nbformat.v4.new_code_cell('out_dir: str = "../reports/01_t"\nrun: str = "first"')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(
        "from pathlib import Path\nPath(out_dir).mkdir(parents=True, exist_ok=True)\n"
        "(Path(out_dir) / f'{run}.txt').write_text(run)\nprint(out_dir)")]
    src = nb_dir / "01_t.ipynb"
    nbformat.write(nb, str(src))
    rep = tmp_path / "elsewhere" / "report"
    stage = rep / ".toolsel-staging"
    execute_notebook(src, stage / "01_t.ipynb", stage / "01_t", cwd=nb_dir,
                     shown_out_dir=rep / "01_t")
    assert (stage / "01_t" / "first.txt").exists()
    stage.joinpath("01_t.ipynb").rename(rep / "01_t.ipynb")
    stage.joinpath("01_t").rename(rep / "01_t")
    executed = rep / "01_t.ipynb"
    assert 'out_dir = "01_t"' in _injected(executed)
    (rep / "01_t" / "first.txt").unlink()
    # Run All from the report folder, as Jupyter would: the injected cell is kept
    pm.execute_notebook(str(executed), str(tmp_path / "rerun.ipynb"), kernel_name="python3",
                        cwd=str(rep), progress_bar=False)
    assert sorted(p.name for p in (rep / "01_t").iterdir()) == ["first.txt"]
    assert not (tmp_path / "elsewhere" / "reports").exists()
