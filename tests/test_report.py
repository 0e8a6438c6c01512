"""The report runner: notebook discovery, titles, the README generator, and the CLI."""

import json

import pandas as pd
import pytest

from toolsel.cli import main
from toolsel.eval.replication import (ARTICLE, benchmark_facts, headline_frame, miss_rank_bands,
                                 replication_table)
from toolsel.report import (execute_notebook, export_html, find_notebooks, headline_table,
                            notebook_title, render_readme, write_readme)


def _notebook(path, cells, tag_params=True):
    nb = {"cells": [], "metadata": {"kernelspec": {"name": "python3", "language": "python",
                                                    "display_name": "Python 3"}},
          "nbformat": 4, "nbformat_minor": 5}
    for i, (kind, src) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": src}
        if kind == "code":
            cell.update(outputs=[], execution_count=None)
            if tag_params and i == 1:
                cell["metadata"]["tags"] = ["parameters"]
        nb["cells"].append(cell)
    path.write_text(json.dumps(nb))
    return path


@pytest.fixture
def nbdir(tmp_path):
    d = tmp_path / "notebooks"
    d.mkdir()
    _notebook(d / "01_alpha.ipynb", [("markdown", "Intro\n\n## Alpha: the first  \n"),
                                     ("code", 'out_dir = "x"')])
    _notebook(d / "00_zero.ipynb", [("code", "x = 1")])
    (d / "scratch.ipynb").write_text("{}")  # not numbered: ignored
    (d / "1_bad.ipynb").write_text("{}")
    return d


def test_find_notebooks_by_glob_and_only(nbdir):
    assert [p.name for p in find_notebooks(nbdir)] == ["00_zero.ipynb", "01_alpha.ipynb"]
    assert [p.name for p in find_notebooks(nbdir, only=["1"])] == ["01_alpha.ipynb"]
    with pytest.raises(FileNotFoundError, match="07"):
        find_notebooks(nbdir, only=["07"])
    with pytest.raises(FileNotFoundError, match="not found"):
        find_notebooks(nbdir / "nope")


def test_title_is_the_first_markdown_heading(nbdir):
    assert notebook_title(nbdir / "01_alpha.ipynb") == "Alpha: the first"
    assert notebook_title(nbdir / "00_zero.ipynb") == "zero"


def _summary():
    rows = []
    for scorer in ("jaccard", "bm25"):
        for k in (10, 30):
            rows.append({"scorer": scorer, "top_k": k, "R@k": 0.5 if k == 10 else 0.75,
                         "Success@k": 0.5, "Complete@k": 0.5, "MRR": 0.4,
                         "payload_chars": 862.07, "payload_reduction": 0.844,
                         "n_queries": 30})
    return pd.DataFrame(rows)


def test_readme_lists_every_notebook_and_artifact_deterministically(nbdir, tmp_path):
    rep = tmp_path / "reports"
    (rep / "01_alpha").mkdir(parents=True)
    _summary().to_csv(rep / "01_alpha" / "summary.csv", index=False)
    pd.DataFrame([{"scorer": "jaccard", "top_k": 10, "metric": "R@k", "mean": 0.5,
                   "low": 0.35, "high": 0.68, "n_queries": 30}]).to_csv(
        rep / "01_alpha" / "intervals.csv", index=False)
    (rep / "01_alpha" / "recall_vs_payload.png").write_bytes(b"png")
    (rep / "01_alpha" / "recall_vs_payload.svg").write_text("svg")
    (rep / "01_alpha.html").write_text("<html/>")
    (rep / "sweep").mkdir()
    (rep / "sweep" / "summary.csv").write_text("a\n")
    text = render_readme(rep, find_notebooks(nbdir))
    assert text == render_readme(rep, find_notebooks(nbdir))
    assert "### 00 · zero" in text and "### 01 · Alpha: the first" in text
    assert "[report (HTML)](01_alpha.html)" in text and "00_zero.html" not in text
    assert "[recall_vs_payload](01_alpha/recall_vs_payload.png) " \
           "([svg](01_alpha/recall_vs_payload.svg))" in text
    assert "| jaccard | 50.0% [35.0%, 68.0%] | 50.0% | 0.400 | 862 | 84.4% | 75.0% |" in text
    assert "![R@k against payload reduction](01_alpha/recall_vs_payload.png)" in text
    assert "- `sweep/`: [summary.csv](sweep/summary.csv)" in text
    path = write_readme(rep, find_notebooks(nbdir))
    assert path.read_text() == text and text.endswith("\n")


def test_headline_falls_back_to_the_sweep(tmp_path):
    assert headline_table(tmp_path) is None
    (tmp_path / "sweep").mkdir()
    _summary().to_csv(tmp_path / "sweep" / "summary.csv", index=False)
    table, src = headline_table(tmp_path)
    assert "`sweep/summary.csv`, 30 queries" == src
    assert table.splitlines()[2].startswith("| jaccard | 50.0% |")


def test_execute_and_export(tmp_path):
    pytest.importorskip("papermill")
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    src = _notebook(nbdir / "03_demo.ipynb", [
        ("markdown", "# Demo"),
        ("code", 'out_dir: str = "../reports/03_demo"  # where tables go'),
        ("code", "from pathlib import Path\nPath(out_dir).mkdir(parents=True, exist_ok=True)\n"
                 "(Path(out_dir) / 't.csv').write_text('a\\n1\\n')\nprint('OUTPUT_' + 'MARKER')")])
    rep = tmp_path / "reports"
    executed = execute_notebook(src, rep / "03_demo.ipynb", rep / "03_demo", cwd=nbdir)
    assert (rep / "03_demo" / "t.csv").read_text() == "a\n1\n"
    nb = json.loads(executed.read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert 'out_dir = "../reports/03_demo"' in "".join(injected[0]["source"])
    assert "start_time" not in nb["metadata"]["papermill"]
    html = export_html(executed, rep / "03_demo.html").read_text()
    assert "OUTPUT_MARKER" in html and "'OUTPUT_' + 'MARKER'" not in html  # code hidden


def test_cli_readme_only(nbdir, tmp_path, capsys):
    rep = tmp_path / "out"
    assert main(["report", "--notebooks", str(nbdir), "--out", str(rep), "--readme-only"]) == 0
    assert "### 01 · Alpha: the first" in (rep / "README.md").read_text()
    assert main(["report", "--notebooks", str(tmp_path / "missing"), "--out", str(rep)]) == 2
    assert "not found" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# replication helpers


def test_replication_table_and_headline_frame():
    s = _summary()
    t = replication_table(s, 5529, n_tools=61).set_index("measure")
    assert t.loc["unfiltered_chars", "difference"] == 6
    assert t.loc["R@10", "ours"] == 0.5 and t.loc["R@10", "article"] == ARTICLE["R@10"]
    assert t.loc["R@30 - R@10", "ours"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="K="):
        replication_table(s[s.top_k == 10], 5529)
    h = headline_frame(s, top_k=10)
    assert list(h["scorer"]) == ["jaccard", "bm25"] and (h["R@k"] == 0.5).all()


def test_miss_rank_bands_and_facts(registry, queries):
    pq = pd.DataFrame({"scorer": "jaccard", "always_include": [False] * 5 + [True],
                       "rank": [1, 11, 30, 31, 61, None]})
    b = miss_rank_bands(pq, k=10, bands=[30])
    assert list(b["ranks"]) == ["11-30", "> 30"] and list(b["misses_at_k"]) == [2, 2]
    f = benchmark_facts(registry, queries)
    assert (f["n_tools"], f["n_queries"], f["unfiltered_chars"]) == (61, 30, 5529)
    assert f["n_direct"] + f["n_indirect"] == 30


def test_reruns_are_byte_identical_with_widgets_styler_and_reprs(tmp_path):
    """Widget ids, Styler table ids and object addresses change per run; the runner numbers
    or drops them so an executed report regenerates identically."""
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    src = _notebook(nbdir / "04_w.ipynb", [
        ("markdown", "# W"),
        ("code", 'out_dir: str = "out"'),
        ("code", "import ipywidgets as w\nimport pandas as pd\n"
                 "box = w.VBox([w.Text(value='q'), w.IntSlider(value=3)])\ndisplay(box)\n"
                 "display(pd.DataFrame({'a': [1, 2]}).style)\nprint(object())")])
    runs = []
    out = tmp_path / "reports"
    for _ in range(2):
        executed = execute_notebook(src, out / "04_w.ipynb", out / "04_w", cwd=nbdir)
        html = export_html(executed, out / "04_w.html")
        runs.append((executed.read_bytes(), html.read_bytes()))
    assert runs[0] == runs[1]
    text = runs[0][0].decode()
    assert "0000000000000000000000000000000" in text and " at 0x" not in text
