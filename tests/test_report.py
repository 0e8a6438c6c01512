"""The report runner: notebook discovery, titles, the README generator, and the CLI."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from toolsel.cli import main
from toolsel.tables.replication import (ARTICLE, benchmark_facts, headline_frame, miss_rank_bands,
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
    assert "| jaccard | 50.0% [35.0, 68.0] | 50.0% | 0.400 | 862 | 84.4% | 75.0% |" in text
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


@pytest.mark.slow  # runs notebooks with papermill
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
    # named relative to the executed notebook: re-run from its folder, it writes beside it
    assert 'out_dir = "03_demo"' in "".join(injected[0]["source"])
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


@pytest.mark.slow  # runs notebooks with papermill
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


# --------------------------------------------------------------------------------------------
# the notebook convention's helpers


def test_distinct_top_k_and_headline_k():
    from toolsel.report.cutoffs import distinct_top_k, headline_k, top_k_note
    assert distinct_top_k([30, 1, 10, 20, 10], 61) == ([1, 10, 20, 30], [])
    assert distinct_top_k([1, 3, 5, 10, 20, 30], 9) == ([1, 3, 5, 10], [20, 30])
    assert distinct_top_k([9, 12], 9) == ([9], [12])
    assert top_k_note([1, 3], [], 9) == ""
    note = top_k_note([1, 10], [20, 30], 9)
    assert "K=10 sends every one of the 9" in note and "K=20, 30" in note
    assert headline_k([1, 10, 30], 61) == 10
    assert headline_k([1, 3, 10, 20], 9) == 3  # 10 sends everything: the largest that filters
    assert headline_k([20, 30], 9) == 20  # none filters
    assert headline_k([5, 30]) == 30


def test_notebook_needs_from_metadata(tmp_path):
    from toolsel.report.plan import DEFAULT_NEEDS, notebook_needs
    plain = _notebook(tmp_path / "01_a.ipynb", [("code", "x = 1")])
    assert notebook_needs(plain) == DEFAULT_NEEDS
    nb = json.loads(plain.read_text())
    nb["metadata"]["toolsel"] = {"needs": ["registry", "conversations"]}
    plain.write_text(json.dumps(nb))
    assert notebook_needs(plain) == ("registry", "conversations")
    nb["metadata"]["toolsel"] = {"needs": ["registry", "chats"]}
    plain.write_text(json.dumps(nb))
    with pytest.raises(ValueError, match="chats"):
        notebook_needs(plain)


def test_notebook_cost_from_metadata(tmp_path):
    from toolsel.report.plan import notebook_cost
    plain = _notebook(tmp_path / "01_a.ipynb", [("code", "x = 1")])
    assert notebook_cost(plain) == 1.0
    nb = json.loads(plain.read_text())
    for bad in (0, -3, "high", True, None):
        nb["metadata"]["toolsel"] = {"cost": bad}
        plain.write_text(json.dumps(nb))
        with pytest.raises(ValueError, match="01_a.ipynb: metadata toolsel.cost"):
            notebook_cost(plain)
    nb["metadata"]["toolsel"] = {"cost": 2.5}
    plain.write_text(json.dumps(nb))
    assert notebook_cost(plain) == 2.5
    # the project's pages: the learning page is the costliest, then the scale page
    root = Path(__file__).resolve().parents[1]
    costs = {nb.name[:2]: notebook_cost(nb) for nb in (root / "notebooks").glob("*.ipynb")}
    assert sorted(costs, key=costs.get, reverse=True)[:2] == ["13", "05"]


def test_pages_start_costliest_first(tmp_path):
    # real kernels, one at a time: they finish in the order they were started
    from toolsel.report.plan import PlannedNotebook
    from toolsel.report.runner import run_pages
    d = tmp_path / "nb"
    d.mkdir()
    plan = []
    for name, cost in (("00_small", 1), ("01_big", 9), ("02_mid", 4), ("03_plain", None)):
        path = _notebook(d / f"{name}.ipynb", [("code", "x = 1"), ("code", 'out_dir = "x"')])
        if cost is not None:
            nb = json.loads(path.read_text())
            nb["metadata"]["toolsel"] = {"cost": cost}
            path.write_text(json.dumps(nb))
        plan.append(PlannedNotebook(path))
    finished = []
    (tmp_path / "build").mkdir()
    (tmp_path / "rep").mkdir()
    runs = run_pages(plan, tmp_path / "build", tmp_path / "rep", d, html=False,
                     kernel="python3", jobs=1, on_done=lambda r: finished.append(r.source.stem))
    assert [r.source.stem for r in runs] == [p.source.stem for p in plan]  # plan order back
    assert finished == ["01_big", "02_mid", "03_plain", "00_small"]  # ties: later page first


# --------------------------------------------------------------------------------------------
# escaping and sanitizing (issue 13, item 1)


def test_escape_code_and_md_table_render_data_as_text():
    from toolsel.report.html import md_table
    from toolsel.report.markdown import code, escape
    evil = "evil<img src=x onerror=alert(2)>"
    assert escape(evil) == r"evil&lt;img src=x onerror=alert\(2\)&gt;"
    assert escape("a|b *c* `d` [e](f) $g$ #h\nnext") == \
        r"a\|b \*c\* \`d\` \[e\]\(f\) \$g\$ \#h next"
    assert code("x|<y>") == "<code>x&#124;&lt;y&gt;</code>"
    t = md_table(pd.DataFrame({"query": ["<script>alert(1)</script>"], "tool": [evil],
                               "R": [0.5], "raw": ["**b**"]}), code=["tool"], raw=["raw"])
    lines = t.splitlines()
    assert lines[0] == "| query | tool | R | raw |" and len(lines) == 3
    assert lines[2] == ("| &lt;script&gt;alert\\(1\\)&lt;/script&gt; | "
                        "<code>evil&lt;img src=x onerror=alert(2)&gt;</code> | 0.500 | **b** |")
    with pytest.raises(KeyError):
        md_table(pd.DataFrame({"a": [1]}), code=["b"])


def test_sanitize_html_drops_scripts_handlers_and_js_urls():
    from toolsel.report.html import sanitize_html
    dirty = ('<h2>t</h2><table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr>'
             '</tbody></table><img src=x onerror=alert(2)><script>alert(1)</script>'
             '<a href="javascript:alert(3)">l</a><img src="data:image/png;base64,AAAA">'
             '<div onclick="alert(4)" style="color:red">d</div><iframe src="x"></iframe>')
    clean = sanitize_html(dirty)
    assert "alert" not in clean and "<iframe" not in clean and "onclick" not in clean
    for kept in ("<h2>t</h2>", "<thead>", "<td>1</td>", 'src="data:image/png;base64,AAAA"',
                 'style="color:red"'):
        assert kept in clean


@pytest.mark.slow  # runs notebooks with papermill
def test_exported_html_is_sanitized(tmp_path):
    """A notebook that forgets to escape still exports no live markup."""
    pytest.importorskip("papermill")
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    src = _notebook(nbdir / "05_x.ipynb", [
        ("markdown", "# X <img src=x onerror=alert(5)>"),
        ("code", 'out_dir: str = "out"'),
        ("code", "from IPython.display import HTML, Markdown, Javascript, display\n"
                 "display(Markdown('<img src=x onerror=alert(2)> **ok**'))\n"
                 "display(HTML('<b>fine</b><script>alert(1)</script>'))\n"
                 "display(Javascript('alert(6)'))")])
    rep = tmp_path / "reports"
    executed = execute_notebook(src, rep / "05_x.ipynb", rep / "05_x", cwd=nbdir)
    html = export_html(executed, rep / "05_x.html").read_text()
    assert "<b>fine</b>" in html and "<strong>ok</strong>" in html
    for live in ("onerror", "alert(1)", "alert(6)"):
        assert live not in html


# --------------------------------------------------------------------------------------------
# a run's outputs replace the previous ones as a set (issue 13, item 3)


def _versioned(nb_dir, version: str, sleep: float):
    return _notebook(nb_dir / "01_v.ipynb", [
        ("markdown", "# V"),
        ("code", 'out_dir: str = "out"'),
        ("code", "import pathlib, time\np = pathlib.Path(out_dir)\n"
                 "p.mkdir(parents=True, exist_ok=True)\n"
                 f"(p / 'a.csv').write_text('{version}\\n')\ntime.sleep({sleep})\n"
                 f"(p / 'b.csv').write_text('{version}\\n')\nprint('VERSION_{version}')")])


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.slow
def test_a_killed_report_leaves_the_previous_set(tmp_path):
    pytest.importorskip("papermill")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH")) if p))
    nb, out = tmp_path / "nb", tmp_path / "out"
    nb.mkdir()
    cmd = [sys.executable, "-m", "toolsel.cli", "report", "--notebooks", str(nb), "--out",
           str(out)]
    _versioned(nb, "v1", 0)
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=300)
    before = _files(out)
    assert before["01_v/a.csv"] == b"v1\n" and "VERSION_v1" in before["01_v.html"].decode()

    _versioned(nb, "v2", 120)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # its own group: the kernel dies with it
    def staged():
        return list(out.glob(".toolsel-build-*/01_v/a.csv"))
    try:
        deadline = time.monotonic() + 120
        while not staged() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert staged(), "the run never got to write its first table"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    after = {k: v for k, v in _files(out).items() if not k.startswith(".toolsel-build-")}
    assert after == before  # the old set, whole

    _versioned(nb, "v2", 0)
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=300)
    new = _files(out)
    assert not list(out.glob(".toolsel-*"))  # the killed run's leftovers are gone
    assert new["01_v/a.csv"] == new["01_v/b.csv"] == b"v2\n"
    assert "VERSION_v2" in new["01_v.html"].decode()
    assert ".toolsel-build" not in new["01_v.ipynb"].decode()  # shows the final folder


# --------------------------------------------------------------------------------------------
# pages: titles, navigation, the entry page (issue 14)


class _Links(__import__("html.parser").parser.HTMLParser):
    """Every href/src of a page, and whether it holds a script element."""

    def __init__(self):
        super().__init__()
        self.urls, self.scripts = [], 0

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        self.urls += [v for k, v in attrs if k in ("href", "src") and v]


def _local_targets(page: Path) -> list[Path]:
    parser = _Links()
    parser.feed(page.read_text())
    return [page.parent / u.split("#")[0] for u in parser.urls
            if not u.startswith(("#", "http:", "https:", "data:", "mailto:"))]


@pytest.mark.slow  # runs notebooks with papermill
def test_pages_get_titles_navigation_and_an_index(tmp_path):
    """Three exported pages: a real <title>, back/previous/next links that resolve, contents
    from the page's headings; index.html links every page, executed notebook and CSV folder,
    and holds no script."""
    pytest.importorskip("papermill")
    from toolsel.report.site import link_pages, notebook_summary, page_title, write_index
    nbdir = tmp_path / "nb"
    nbdir.mkdir()
    hostile = "<script>alert(1)</script>"
    for stem, head in (("00_first", "# First: the `start` page"), ("01_second", "# Second"),
                       ("02_third", "# Third: the end")):
        _notebook(nbdir / f"{stem}.ipynb", [
            ("markdown", f"{head}\n\nIntro sentence one. Two."),
            ("code", f'out_dir: str = "../reports/{stem}"'),
            ("markdown", "## Part A"),
            ("code", "from pathlib import Path\nPath(out_dir).mkdir(parents=True, exist_ok=True)"
                     "\n(Path(out_dir) / 't.csv').write_text('a\\n1\\n')\n"
                     f"print({hostile!r})"),
            ("markdown", "## Part B")])
    rep = tmp_path / "reports"
    for nb in sorted(nbdir.glob("*.ipynb")):
        executed = execute_notebook(nb, rep / nb.name, rep / nb.stem, cwd=nbdir)
        export_html(executed, rep / f"{nb.stem}.html")
    notebooks = find_notebooks(nbdir)
    assert page_title(notebooks[0]) == "First: the start page"
    assert notebook_summary(notebooks[0]) == "The start page"
    assert notebook_summary(notebooks[1]) == "Intro sentence one."
    index = write_index(rep, notebooks)
    pages = sorted(rep.glob("0*.html"))
    texts = {p.stem: p.read_text() for p in pages}
    assert "<title>First: the start page</title>" in texts["00_first"]
    assert all("<title>Notebook</title>" not in t for t in texts.values())
    middle = texts["01_second"]
    assert 'href="00_first.html" rel="prev"' in middle and 'href="02_third.html" rel="next"' in middle
    assert 'rel="prev"' not in texts["00_first"] and 'rel="next"' not in texts["02_third"]
    assert middle.count('href="index.html"') == 2  # top and bottom
    assert 'href="#Part-A"' in middle and 'href="#Part-B"' in middle
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in middle
    for page in pages + [index]:
        missing = [t for t in _local_targets(page) if not t.exists()]
        assert not missing, f"{page.name}: {missing}"
    # rerunning changes nothing (no timestamps; navigation rewritten in place)
    before = {p.name: p.read_bytes() for p in pages + [index]}
    write_index(rep, notebooks)
    link_pages(rep)
    assert {p.name: p.read_bytes() for p in pages + [index]} == before
    text = index.read_text()
    parser = _Links()
    parser.feed(text)
    assert parser.scripts == 0 and "<style>" in text and "http" not in text
    for stem in ("00_first", "01_second", "02_third"):
        assert f'href="{stem}.html"' in text and f'href="{stem}.ipynb"' in text
        assert f'href="{stem}/"' in text
    assert "00 · First</a>" in text and "The start page" in text


def test_index_escapes_data_and_lists_skipped_notebooks(nbdir, tmp_path):
    from toolsel.report.runner import NotebookRun
    from toolsel.report.site import render_index
    rep = tmp_path / "reports"
    (rep / "01_alpha").mkdir(parents=True)
    s = _summary()
    s.loc[0, "scorer"] = s.loc[1, "scorer"] = "<img src=x onerror=alert(2)>"
    s.to_csv(rep / "01_alpha" / "summary.csv", index=False)
    (rep / "01_alpha" / "recall_vs_payload.png").write_bytes(b"png")
    runs = [NotebookRun(nbdir / "00_zero.ipynb", rep / "00_zero.ipynb", None, 0.0,
                        skipped="no --conversations <b>file</b>")]
    text = render_index(rep, find_notebooks(nbdir), runs=runs, title="t <i>x</i>")
    assert "<img src=x" not in text and "&lt;img src=x onerror=alert(2)&gt;" in text
    assert "<title>t &lt;i&gt;x&lt;/i&gt;</title>" in text
    assert "Skipped on this data" in text and "no --conversations &lt;b&gt;file&lt;/b&gt;" in text
    assert 'src="01_alpha/recall_vs_payload.png"' in text
    assert "| 50.0% [" not in text and "<td>" in text
    assert text == render_index(rep, find_notebooks(nbdir), runs=runs, title="t <i>x</i>")
