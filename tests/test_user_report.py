"""``toolsel report --registry ... --queries ...``: the notebook suite on data other than ours.

Two data sets besides the bundled one go through notebooks 00-04 end to end, as a user runs
them (a subprocess, relative paths resolved against its working directory):

- ``plugin``: the plugin-style registry and queries under ``data/styles/plugin``;
- ``mcp``: a registry imported with ``toolsel import --from mcp`` from the two MCP dumps in
  ``data/integrations`` plus a hostile server (``tests/data/mcp_hostile.json``: a tool named
  ``evil<img src=x onerror=alert(2)>``), with ``tests/data/user_queries.jsonl`` (the
  integration queries plus two holding ``<script>alert(1)</script>``).

Checked: the outputs exist, the bundled-only sections say they were skipped, the notebooks'
tables agree with ``toolsel sweep`` on the same data, no HTML page holds a live script or
event handler, and nothing is written outside ``--out``. Bad input fails before anything
runs, with one line and exit status 2.
"""

from __future__ import annotations

import html as html_mod
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from toolsel import load_queries, load_registry
from toolsel.cli import main
from toolsel.report.cutoffs import headline_k

pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
DATA = ROOT / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"
PLUGIN = DATA / "styles" / "plugin"
MCP_DUMPS = [DATA / "integrations" / "mcp_github.json", DATA / "integrations" / "mcp_linear.json"]
OURS = ["00_overview", "01_recall_vs_payload", "02_misses", "03_escape_hatch", "04_explorer"]
MCP_TOP_K = [1, 2, 3, 10, 20]  # 10 tools: K=10 sends all of them, K=20 is not repeated


# variables that would move a cache out of HOME (TOOLSEL_CACHE stays: conftest's temporary one)
_HOME_VARS = ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
              "MPLCONFIGDIR", "IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR",
              "JUPYTER_CONFIG_DIR", "ORT_DISABLE_TELEMETRY")


def _env(home: Path | None = None) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")
    if home is not None:  # an empty HOME: what lands there is what the report causes
        env = {k: v for k, v in env.items() if k not in _HOME_VARS}
        env["HOME"] = str(home)
    return env


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns
            for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Both data sets reported, concurrently (two kernels at a time keep the wall time low)."""
    base = tmp_path_factory.mktemp("user")
    home = base / "home"
    home.mkdir()
    mcp_dir = base / "mcp"
    mcp_dir.mkdir()
    assert main(["import", "--from", "mcp", *map(str, MCP_DUMPS),
                 str(TEST_DATA / "mcp_hostile.json"), "--out", str(mcp_dir / "registry.json")]) == 0
    before = {"notebooks": _snapshot(NB_DIR), "plugin": _snapshot(PLUGIN)}
    only = ["--only", ",".join(n[:2] for n in OURS)]
    jobs = {
        # paths relative to the caller's folder, as a user types them
        "plugin": (PLUGIN, ["--registry", "registry.json", "--queries", "queries.jsonl",
                            "--scorers", "jaccard,bm25", "--out", str(base / "plugin-report")]),
        "mcp": (mcp_dir, ["--registry", "registry.json", "--queries",
                          os.path.relpath(TEST_DATA / "user_queries.jsonl", mcp_dir),
                          "--scorers", "jaccard,bm25",
                          "--top-k", ",".join(map(str, MCP_TOP_K)), "--out", "report"]),
    }
    procs = {name: subprocess.Popen([sys.executable, "-m", "toolsel.cli", "report", *args, *only],
                                    cwd=cwd, env=_env(home), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
             for name, (cwd, args) in jobs.items()}
    outs = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=900)
        assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
        outs[name] = stdout
    return {
        "base": base, "before": before, "stdout": outs, "home": home,
        "plugin": {"out": base / "plugin-report", "registry": PLUGIN / "registry.json",
                   "queries": PLUGIN / "queries.jsonl", "top_k": [1, 3, 5, 10, 20, 30]},
        "mcp": {"out": mcp_dir / "report", "registry": mcp_dir / "registry.json",
                "queries": TEST_DATA / "user_queries.jsonl", "top_k": MCP_TOP_K},
    }


def test_integration_queries_name_the_imported_tools(tmp_path):
    """data/integrations/queries.jsonl labels tools by the names `toolsel import` gives."""
    reg_path = tmp_path / "registry.json"
    assert main(["import", "--from", "mcp", *map(str, MCP_DUMPS), "--out", str(reg_path)]) == 0
    reg = load_registry(reg_path)
    qs = load_queries(DATA / "integrations" / "queries.jsonl", reg)  # raises on unknown names
    assert {t for q in qs for t in q.expected} <= set(reg.names)
    assert "github__create_issue" in reg and "linear__create_issue" in reg


@pytest.mark.slow  # reads whole reports run end to end
@pytest.mark.parametrize("name", ["plugin", "mcp"])
def test_outputs_exist_and_the_readme_lists_them(reports, name):
    out = reports[name]["out"]
    for stem in OURS:
        assert (out / f"{stem}.ipynb").is_file() and (out / f"{stem}.html").is_file(), stem
        assert any((out / stem).glob("*.csv")), stem
    assert (out / "01_recall_vs_payload" / "recall_vs_payload.png").is_file()
    assert not (out / ".toolsel-staging").exists()
    readme = (out / "README.md").read_text()
    assert "## Headline" in readme and "## Notebooks skipped" in readme
    for stem in OURS:
        assert f"[report (HTML)]({stem}.html)" in readme
    assert "notebooks ok" in reports["stdout"][name]
    # the single-scorer check ran against default though --scorers left it out; the README
    # repeats the overview's warning exactly when some scorer is far below
    import pandas as pd
    gaps = pd.read_csv(out / "00_overview" / "scorer_gaps.csv")
    assert sorted(set(gaps["scorer"])) == ["bm25", "jaccard"]
    far = sorted(set(gaps.loc[gaps["far"], "scorer"]))
    assert ("far below <code>default</code>" in readme) == bool(far)
    for s in far:
        assert f"<code>{s}</code>" in readme.split("## Notebooks run")[0]


@pytest.mark.slow  # reads whole reports run end to end
@pytest.mark.parametrize("name", ["plugin", "mcp"])
def test_index_and_pages_link_each_other(reports, name):
    """index.html is the entry page; every page has a real title and previous/next links;
    every local link of the index and the pages resolves to a file or folder that exists."""
    out = reports[name]["out"]
    index = out / "index.html"
    text = index.read_text()
    assert "<script" not in text and "toolsel report on your data" in text
    assert 'src="01_recall_vs_payload/recall_vs_payload.png"' in text
    pages = sorted(out.glob("[0-9][0-9]_*.html"))
    assert [p.stem for p in pages] == OURS
    for i, page in enumerate(pages):
        html = page.read_text()
        title = re.search(r"<title>(.*?)</title>", html).group(1)
        assert title and title != "Notebook", page.name
        assert f'href="{page.name}"' in text and f'href="{page.stem}.ipynb"' in text
        assert 'href="index.html"' in html
        assert ('rel="prev"' in html) == (i > 0) and ('rel="next"' in html) == (i < len(pages) - 1)
        for target in re.findall(r'(?:href|src)="([^"#:]+)(?:#[^"]*)?"', html):
            assert (out / target).exists(), (page.name, target)
    for target in re.findall(r'(?:href|src)="([^"#:]+)"', text):
        assert (out / target).exists(), target


@pytest.mark.slow  # reads whole reports run end to end
def test_nothing_written_outside_out(reports):
    assert _snapshot(NB_DIR) == reports["before"]["notebooks"]
    assert _snapshot(PLUGIN) == reports["before"]["plugin"]
    assert sorted(p.name for p in (reports["base"] / "mcp").iterdir()) == ["registry.json",
                                                                          "report"]


@pytest.mark.slow  # reads whole reports run end to end
@pytest.mark.parametrize("name", ["plugin", "mcp"])
def test_no_machine_path_in_a_user_report(reports, name):
    """A user's report names its data relative to itself (README, executed notebooks, their
    papermill metadata, pages), so it reads the same from any folder or machine; the
    README names the registry by a path that resolves from the report folder."""
    out = reports[name]["out"]
    # an absolute path to a folder of this machine (a relative one may pass through it:
    # "../../work/...", preceded by a dot)
    from toolsel.report.execute import json_spellings  # raw, JSON-escaped, papermill's literal
    machine = re.compile("|".join(f"(?<![\\w.]){re.escape(s)}" for m in
                                  (reports["base"], ROOT, Path.home())
                                  for s in dict.fromkeys([str(m), *json_spellings(str(m))])))
    found = [f"{p.relative_to(out)}: {hit.group(0)}" for p in out.rglob("*")
             if p.is_file() and p.suffix in (".md", ".ipynb", ".html", ".json", ".csv")
             for hit in machine.finditer(p.read_text(encoding="utf-8"))]
    assert not found, found[:10]
    readme = (out / "README.md").read_text(encoding="utf-8")
    shown = readme.split("- registry: <code>", 1)[1].split("</code>", 1)[0]
    assert (out / shown).resolve() == reports[name]["registry"].resolve()


@pytest.mark.slow  # reads whole reports run end to end
def test_every_file_in_home_is_under_a_place_the_report_named(reports):
    """Run with an empty HOME: each file the reports left there lies under one of the places
    their "also written outside it:" line names (onnxruntime's telemetry files: none)."""
    named = []
    for out in reports["stdout"].values():
        (line,) = [ln for ln in out.splitlines() if ln.startswith("also written outside it: ")]
        named += [Path(part[part.index(" /"):].strip())
                  for part in line.split(": ", 1)[1].split("; ")]
    home = reports["home"]
    left = [p for p in home.rglob("*") if p.is_file() or (p.is_dir() and not any(p.iterdir()))]
    assert left  # kernels did write there (matplotlib, IPython): the check checks something
    stray = [str(p.relative_to(home)) for p in left
             if not any(p == n or n in p.parents for n in named)]
    assert not stray, stray
    assert not (home / ".cache" / "Microsoft").exists()


@pytest.mark.slow  # reads whole reports run end to end
@pytest.mark.parametrize("name", ["plugin", "mcp"])
def test_article_sections_are_skipped_with_a_note(reports, name):
    """Each page says only that a bundled-data section was skipped; the README says once
    which and why."""
    out = reports[name]["out"]
    html = {stem: (out / f"{stem}.html").read_text() for stem in OURS}
    readme = (out / "README.md").read_text()
    assert readme.count("## Sections skipped on this data") == 1
    # as the README renders it (Markdown escapes and HTML entities read back)
    sections = html_mod.unescape(readme.split("## Sections skipped on this data", 1)[1]
                                 ).replace("\\", "")
    for stem, what in (("00_overview", "the bundled benchmark's 3-turn escape-hatch scenario: "
                                       "it needs the tools weather_lookup"),
                       ("01_recall_vs_payload", "the replication panel: it compares"),
                       ("02_misses", "the bundled benchmark's three listed misses: they are "
                                     "Jaccard misses"),
                       ("03_escape_hatch", "the bundled benchmark's 3-turn conversation: it "
                                           "needs")):
        assert f"- {stem}: {what}" in sections, (stem, sections)
        assert "is skipped on this data" in html[stem], stem
        assert "weather_lookup" not in html[stem], stem
    # tables of the article's data are not written for other data
    assert not (out / "01_recall_vs_payload" / "replication.csv").exists()
    assert not (out / "03_escape_hatch" / "scenario.csv").exists()


def _sweep(tmp_path, data) -> Path:
    out = tmp_path / "sweep"
    assert main(["sweep", "--registry", str(data["registry"]), "--queries", str(data["queries"]),
                 "--scorers", "jaccard,bm25", "--top-k", ",".join(map(str, data["top_k"])),
                 "--out", str(out), "--no-progress", "--no-timings"]) == 0
    return out


@pytest.mark.slow  # reads whole reports run end to end
@pytest.mark.parametrize("name", ["plugin", "mcp"])
def test_tables_agree_with_toolsel_sweep(reports, name, tmp_path, capsys):
    data = reports[name]
    sweep_dir = _sweep(tmp_path, data)
    swept = pd.read_csv(sweep_dir / "summary.csv").set_index(["scorer", "top_k"])
    capsys.readouterr()
    nb = pd.read_csv(data["out"] / "01_recall_vs_payload" / "summary.csv")
    n_tools = len(load_registry(data["registry"]))
    ks = sorted(nb["top_k"].unique())
    # K at or above the registry size: reported once (the first such K), never repeated
    assert len([k for k in ks if k >= n_tools]) <= 1
    assert len(nb) == len(nb.drop_duplicates(["scorer", "top_k"]))
    assert set(ks) == {k for k in data["top_k"] if k < n_tools} | (
        {min(k for k in data["top_k"] if k >= n_tools)} if max(data["top_k"]) >= n_tools
        else set())
    cols = ["R@k", "Success@k", "Complete@k", "MRR", "payload_chars", "payload_reduction",
            "n_queries"]
    theirs = swept.loc[list(zip(nb["scorer"], nb["top_k"])), cols].to_numpy(float)
    assert np.allclose(nb[cols].to_numpy(float), theirs, atol=1e-6)
    # the overview's headline row is the same sweep at its cut-off
    head = pd.read_csv(data["out"] / "00_overview" / "headline.csv")
    for _, r in head.iterrows():
        s = swept.loc[(r["scorer"], r["top_k"])]
        assert abs(r["R@k"] - s["R@k"]) < 1e-6 and abs(r["MRR"] - s["MRR"]) < 1e-6
    # the misses 02 lists are the sweep's misses at its cut-off (10, else the largest K
    # that still filters: 3 on the 10-tool registry)
    k = headline_k(data["top_k"], n_tools)
    listed = pd.read_csv(data["out"] / "02_misses" / "misses.csv")
    theirs = pd.read_csv(sweep_dir / "misses.csv")
    key = ["scorer", "query_id", "expected"]
    assert len(listed) and set(listed["top_k"]) == {k}
    assert sorted(map(tuple, listed[key].to_numpy())) == sorted(
        map(tuple, theirs[theirs.top_k == k][key].to_numpy()))


_JSON_SCRIPT = re.compile(r'<script type="application/[a-z.+-]*json">(.*?)</script>', re.S)


class _LiveScript(HTMLParser):
    """Collects what would run in a browser: event handlers, javascript: URLs, and script
    elements executing data (any script holding the hostile payloads)."""

    def __init__(self):
        super().__init__()
        self.found, self._script = [], None

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key.lower().startswith("on"):
                self.found.append(f"<{tag} {key}={value!r}>")
            if key in ("href", "src", "action") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.found.append(f"<{tag} {key}={value!r}>")
        if tag == "script":
            self._script = (dict(attrs).get("type") or "text/javascript").lower()

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script in ("text/javascript", "module", "application/javascript") and \
                "alert(" in data:
            self.found.append(f"script: {data.strip()[:80]!r}")


@pytest.mark.slow  # reads whole reports run end to end
def test_no_live_script_from_hostile_names_and_queries(reports):
    out = reports["mcp"]["out"]
    pages = sorted(out.glob("[0-9][0-9]_*.html")) + [out / "index.html"]
    assert len(pages) == len(OURS) + 1
    shown = 0
    for page in pages:
        text = page.read_text()
        parser = _LiveScript()
        parser.feed(text)
        assert not parser.found, f"{page.name}: {parser.found[:3]}"
        # widget state is JSON in <script type="application/...+json"> (inert; the widgets
        # show its strings as text): each block must parse whole, so nothing broke out
        for block in _JSON_SCRIPT.findall(text):
            json.loads(block)
        markup = _JSON_SCRIPT.sub("", text)
        assert "<script>alert(1)" not in markup and "<img src=x onerror" not in markup
        shown += text.count("evil&lt;img src=x onerror=alert(2)&gt;")
    assert shown  # the hostile name is shown, as text
    # the misses table holds the hostile query, escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / "02_misses.html").read_text()


# --------------------------------------------------------------------------------------------
# the convention on small made-up notebooks: what runs, what is skipped and why


def _notebook(path: Path, params: str, code: str, needs=None) -> Path:
    meta = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}}
    if needs is not None:
        meta["toolsel"] = {"needs": needs}
    cells = [{"cell_type": "markdown", "id": "m", "metadata": {}, "source": f"# {path.stem}"},
             {"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]},
              "source": params, "outputs": [], "execution_count": None},
             {"cell_type": "code", "id": "c", "metadata": {}, "source": code, "outputs": [],
              "execution_count": None}]
    path.write_text(json.dumps({"cells": cells, "metadata": meta, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


@pytest.mark.slow  # runs a notebook with papermill
def test_notebooks_run_or_are_skipped_with_a_reason(tmp_path, capsys):
    nb = tmp_path / "nb"
    nb.mkdir()
    _notebook(nb / "01_runs.ipynb",
              'registry: str = "../data/registry.json"  # tool registry\n'
              'queries: str = "../data/queries.jsonl"  # labeled queries\n'
              'conversations: str = "../data/conversations.jsonl"  # optional here\n'
              'top_k: list[int] = [1, 2]  # cut-offs\n'
              'scorers: list[str] = ["jaccard"]  # scorers\n'
              'out_dir: str = "../reports/01_runs"  # where tables go',
              "import json, pathlib\npathlib.Path(out_dir).mkdir(parents=True, exist_ok=True)\n"
              "(pathlib.Path(out_dir) / 'params.json').write_text(json.dumps(dict("
              "registry=registry, queries=queries, conversations=conversations, top_k=top_k, "
              "scorers=scorers)))", needs=["registry", "queries"])
    _notebook(nb / "02_chats.ipynb", 'registry: str = "r"\nconversations: str = "c"\n'
              'out_dir: str = "../reports/02_chats"', "1/0", needs=["registry", "conversations"])
    _notebook(nb / "03_ours.ipynb", 'out_dir: str = "../reports/03_ours"', "1/0", needs=[])
    out = tmp_path / "out"
    (out / "09_old").mkdir(parents=True)  # a previous report's output: removed
    (out / "09_old" / "t.csv").write_text("old")
    (out / "09_old.html").write_text("old")
    from toolsel.report.output import manifest_text  # what a report wrote: with hashes
    (out / "toolsel-manifest.json").write_text(manifest_text(["09_old/t.csv", "09_old.html"],
                                                             root=out))
    (out / "99_photos").mkdir()  # the user's own: kept, though numbered like an output
    (out / "99_photos" / "a.jpg").write_text("photo")
    code = main(["report", "--notebooks", str(nb), "--registry", str(PLUGIN / "registry.json"),
                 "--queries", str(PLUGIN / "queries.jsonl"), "--top-k", "3,5",
                 "--out", str(out), "--no-html"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "02_chats: skipped, no --conversations file" in printed
    assert "03_ours: skipped, reports on the project's own data only" in printed
    assert not (out / "09_old").exists() and not (out / "09_old.html").exists()
    assert (out / "99_photos" / "a.jpg").read_text() == "photo"
    params = json.loads((out / "01_runs" / "params.json").read_text())
    assert params == {"registry": str(PLUGIN / "registry.json"),
                      "queries": str(PLUGIN / "queries.jsonl"), "conversations": "",
                      "top_k": [3, 5], "scorers": ["jaccard"]}
    readme = (out / "README.md").read_text()
    # data strings are Markdown-escaped ("\\-" renders as "-")
    assert "- 02_chats: skipped, no \\-\\-conversations file" in readme
    assert "- 03_ours: skipped, reports on the project" in readme
    index = (out / "index.html").read_text()
    assert "Skipped on this data" in index and "no --conversations file" in index


def test_notebook_without_metadata_needs_registry_and_queries(tmp_path, capsys):
    nb = tmp_path / "nb"
    nb.mkdir()
    _notebook(nb / "01_plain.ipynb", 'registry: str = "r"\nout_dir: str = "x"', "1/0")
    code = main(["report", "--notebooks", str(nb), "--registry", str(PLUGIN / "registry.json"),
                 "--out", str(tmp_path / "out"), "--no-html"])
    assert code == 0
    assert "01_plain: skipped, no --queries file" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# parameters are checked before anything runs


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"id": "x", "query": "book a flight", "expected": ["FareHawkk"]}\n')
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return {"bad_json": bad_json, "unknown": unknown, "a_file": a_file}


@pytest.mark.parametrize("args, says", [
    (["--registry", "{tmp}/nope.json", "--queries", "{plugin}/queries.jsonl"], "no such file"),
    (["--registry", "{bad_json}", "--queries", "{plugin}/queries.jsonl"], "bad.json"),
    (["--registry", "{plugin}/registry.json", "--queries", "{unknown}"], "FareHawkk"),
    (["--registry", "{plugin}/registry.json", "--queries", "{plugin}/queries.jsonl",
      "--scorers", "jaccard,bm52"], "unknown scorer 'bm52'"),
    (["--registry", "{plugin}/registry.json", "--conversations", "{tmp}/none.jsonl"],
     "--conversations: no such file"),
    (["--queries", "{plugin}/queries.jsonl"], "need(s) --registry"),
    (["--registry", "{plugin}/registry.json", "--queries", "{plugin}/queries.jsonl",
      "--out", "{a_file}"], "not a folder"),
])
def test_bad_input_fails_before_anything_runs(tmp_path, capsys, args, says):
    paths = {k: str(v) for k, v in _bad_files(tmp_path).items()}
    paths.update(tmp=str(tmp_path), plugin=str(PLUGIN))
    argv = ["report", "--only", "00"] + [a.format(**paths) for a in args]
    if "--out" not in argv:
        argv += ["--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err
    assert not (tmp_path / "out").exists()


def test_bad_top_k_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--registry", str(PLUGIN / "registry.json"), "--top-k", "0,3",
              "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    assert "--top-k" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_the_overview_is_given_only_the_pages_that_run():
    """00's table of pages lists the pages of this report: `toolsel report` passes them."""
    from toolsel.report.plan import UserData, find_notebooks, notebook_plan
    plan = notebook_plan(find_notebooks(NB_DIR), UserData(registry=PLUGIN / "registry.json",
                                                          queries=PLUGIN / "queries.jsonl"))
    ran = [p.source.stem for p in plan if p.skip is None]
    overview = next(p for p in plan if p.source.stem == "00_overview")
    assert overview.parameters["pages"] == ran
    assert "08_conversations" not in ran and "10_integrations" not in ran
    assert all("pages" not in p.parameters for p in plan if p.source.stem != "00_overview")
