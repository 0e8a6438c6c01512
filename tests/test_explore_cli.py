"""``toolsel explore`` and executed notebooks that re-run from their report folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    assert f'registry = "{(DATA / "registry.json").resolve()}"' in text
    assert f'queries = "{(DATA / "queries.jsonl").resolve()}"' in text
    assert 'out_dir = "explore_registry-3"' in text and '"bm25", "jaccard"' in text
    assert "top_k = [5]" in text
    assert "jupytext" not in json.loads(path.read_text())["metadata"]


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
