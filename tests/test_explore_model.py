"""``toolsel explore --model FILE``: the explorer shows a model written by ``toolsel fit``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsel import load_queries, load_registry
from toolsel.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    # the bundled requests minus those naming a github tool: github's tools have no label
    lines = [ln for ln in (DATA / "requests.jsonl").read_text(encoding="utf-8").splitlines()
             if ln.strip() and not any(t.startswith("github_")
                                       for t in json.loads(ln)["expected"])]
    (folder / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = folder / "model.json"
    assert main(["fit", "--registry", str(DATA / "registry.json"), "--queries",
                 str(folder / "labels.jsonl"), "--base", "bm25", "--bases", "bm25", "--setting", "knn",
                 "--out", str(path)]) == 0
    return path


def test_explorer_panel_scores_with_the_loaded_model(model_file):
    pytest.importorskip("ipywidgets")
    from toolsel.learn.artifact import load_model
    from toolsel.report.explorer import build_explorer
    reg = load_registry(DATA / "registry.json")
    explorer = build_explorer(reg, ["bm25", str(model_file)], query="crunch some numbers",
                              top_k=5)
    blind, learned = explorer.update()
    assert [blind.scorer, learned.scorer] == ["bm25", "bm25+labels"]
    model = load_model(model_file, reg)
    got = learned.ranking.set_index("tool")["score"]
    want = model.score("crunch some numbers")
    assert all(abs(got[t.name] - want[i]) < 1e-9 for i, t in enumerate(reg))
    # a knn lift (not interleaved) leaves a tool no request was labeled with its blind score
    b = blind.ranking.set_index("tool")["score"]
    cold = [t.name for t in reg if t.name not in model.labeled_tools_]
    assert cold and set(model.labeled_tools_)
    if model.setting_.method == "knn" and not model.setting_.interleave:
        assert all(got[n] == b[n] for n in cold)
        assert any(got[n] != b[n] for n in model.labeled_tools_)
    with pytest.raises(ValueError, match="nor a model file"):
        build_explorer(reg, ["bm25", str(DATA / "queries.jsonl")])


def test_explore_model_adds_a_panel_and_checks_the_file(model_file, tmp_path, capsys):
    out = tmp_path / "mine"
    args = ["explore", "--registry", str(DATA / "registry.json"), "--notebooks",
            str(ROOT / "notebooks"), "--out", str(out), "--no-lab"]
    assert main([*args, "--scorers", "bm25", "--model", str(model_file)]) == 0
    nb = json.loads((out / "explore_registry.ipynb").read_text(encoding="utf-8"))
    cell = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert f'scorers = ["bm25", "{model_file.resolve()}"]' in "".join(cell[0]["source"])
    # without --scorers the notebook's own scorers come first
    assert main([*args, "--model", str(model_file)]) == 0
    nb = json.loads((out / "explore_registry.ipynb").read_text(encoding="utf-8"))
    cell = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert f'"default", "{model_file.resolve()}"]' in "".join(cell[0]["source"])
    # a file that is not a model: an error naming it, nothing written
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main([*args, "--out", str(tmp_path / "other"), "--model", str(bad)]) != 0
    assert "bad.json" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()


@pytest.mark.slow
def test_explore_model_copy_runs(model_file, tmp_path):
    import papermill as pm
    out = tmp_path / "mine"
    assert main(["explore", "--registry", str(DATA / "registry.json"), "--notebooks",
                 str(ROOT / "notebooks"), "--out", str(out), "--no-lab", "--scorers", "bm25",
                 "--model", str(model_file)]) == 0
    path = out / "explore_registry.ipynb"
    pm.execute_notebook(str(path), str(path), kernel_name="python3", cwd=str(out),
                        progress_bar=False)
    page = out / "explore_registry"
    assert {"ranking_bm25.csv", "ranking_bm25+labels.csv"} <= {p.name for p in page.iterdir()}
    reg = load_registry(DATA / "registry.json")
    assert len(load_queries(DATA / "requests.jsonl", reg))  # the labels the model used exist
