"""Issue 25, "also found": text from data in figures and terminals, odd arguments, caches."""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def _env(**extra) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1", **extra)


# --------------------------------------------------------------------------------------------
# figures: no mathtext from data, bounded labels and sizes


@pytest.mark.slow  # draws and saves a figure with a 60,000-character label
def test_dollar_text_and_huge_labels_draw_in_bounded_figures(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image

    from toolsel.report.plots import plot_conversation_requests
    from toolsel.report.plots import MAX_LABEL_CHARS, plot_multi_tool, save_figure
    cats = ["$\\frac{$", "$x_{$", "c" * 60_000]
    summary = pd.DataFrame([{"top_k": 5, "category": c, "scorer": s, "R@k": 0.5,
                             "Complete@k": 0.25, "n_requests": 3}
                            for c in cats for s in ("bm25", "$x_{$")])
    fig = plot_multi_tool(summary, by="category", top_k=5)
    png, _svg = save_figure(fig, tmp_path, "hostile")
    with Image.open(png) as im:
        w, h = im.size
    assert w * h < 20_000_000, (w, h)  # not 354 megapixels
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert "$\\frac{$" in labels[0]  # shown as typed
    assert max(len(line) for lab in labels for line in lab.split("\n")) <= MAX_LABEL_CHARS
    assert labels[2].split("\n")[0].endswith("…")
    import matplotlib.pyplot as plt
    plt.close("all")
    # a conversation title from the data (notebook 08)
    table = pd.DataFrame([{"conversation_id": "$\\frac{$", "strategy": "$x_{$", "policy": "",
                           "turn": 1, "step": 0, "uncached": 10, "cache_write": 0,
                           "cache_read": 0, "cost": 10.0}])
    fig = plot_conversation_requests(table, "$\\frac{$")
    assert "$\\frac{$" in fig._suptitle.get_text()
    save_figure(fig, tmp_path, "conversation")
    plt.close("all")


# --------------------------------------------------------------------------------------------
# terminals: control characters from data shown, never obeyed; Ctrl-C; argv


TOOLS = [{"name": "calculator", "description": "evaluate \x1b[2J arithmetic \x1b]52;c;aGk=\x07"},
         {"name": "weather_lookup", "description": "current weather \x9b31m for a city"}]


def test_label_never_sends_control_characters_to_the_terminal(tmp_path, capsys, monkeypatch):
    import io
    reg = tmp_path / "registry.json"
    reg.write_text(json.dumps(TOOLS))
    queries = tmp_path / "queries.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\ny\n"))
    assert main(["label", "--registry", str(reg), "--queries", str(queries), "--query",
                 "what is 2 plus 2 \x1b[31m", "--scorer", "jaccard", "--scorers", "jaccard",
                 "--no-embed-check"]) == 0
    out = capsys.readouterr()
    printed = out.out + out.err
    assert "\x1b" not in printed and "\x07" not in printed and "\x9b" not in printed
    assert "\\x1b[2J" in printed and "\\x9b31m" in printed  # shown, as text
    assert json.loads(queries.read_text())["query"] == "what is 2 plus 2 \x1b[31m"  # data kept


def test_invalid_utf8_in_argv_is_one_clear_line(tmp_path):
    bad = os.fsencode(str(tmp_path)) + b"/\xff\xfe.json"
    proc = subprocess.run([os.fsencode(sys.executable), b"-m", b"toolsel.cli", b"validate",
                           b"--registry", bad], env=_env(), capture_output=True)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.strip().splitlines() == [err.strip()] and "not valid UTF-8" in err
    assert "\\xff\\xfe" in err and "Traceback" not in err


def test_ctrl_c_at_a_label_prompt_exits_quietly_with_130(tmp_path):
    reg = tmp_path / "registry.json"
    reg.write_text(json.dumps(TOOLS))
    proc = subprocess.Popen([sys.executable, "-m", "toolsel.cli", "label", "--registry",
                             str(reg), "--queries", str(tmp_path / "q.jsonl"), "--scorer",
                             "jaccard"], env=_env(), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    seen = b""
    while b"request: " not in seen and time.monotonic() < deadline:
        seen += proc.stdout.read1(100)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err and b"KeyboardInterrupt" not in err
    assert not (tmp_path / "q.jsonl").exists()


@pytest.mark.slow
def test_ctrl_c_in_a_report_exits_130_and_keeps_the_folder(tmp_path):
    pytest.importorskip("papermill")
    from test_report_output import _notebook
    nb, out = tmp_path / "nb", tmp_path / "out"
    nb.mkdir()
    _notebook(nb / "01_v.ipynb", "v1", sleep=60)
    proc = subprocess.Popen([sys.executable, "-m", "toolsel.cli", "report", "--notebooks",
                             str(nb), "--out", str(out), "--no-html"], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(out.glob(".toolsel-build-*/01_v/a.csv")) and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err
    assert not list(out.glob(".toolsel-*")) and os.listdir(out) == []  # nothing half-written


# --------------------------------------------------------------------------------------------
# arguments: huge cut-offs, a one-tool registry, server names


def test_huge_top_k_is_a_usage_error_in_sweep_and_report(tmp_path, capsys):
    huge = "99999999999999999999999"
    for argv in (["sweep", "--registry", str(DATA / "registry.json"), "--queries",
                  str(DATA / "queries.jsonl"), "--out", str(tmp_path / "s")],
                 ["report", "--registry", str(DATA / "registry.json"), "--queries",
                  str(DATA / "queries.jsonl"), "--out", str(tmp_path / "r")]):
        with pytest.raises(SystemExit) as exc:
            main(argv + ["--top-k", f"5,{huge}"])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "--top-k" in err and "1,000,000,000" in err and "Traceback" not in err
    assert not (tmp_path / "s").exists() and not (tmp_path / "r").exists()


def test_policies_on_a_one_tool_registry(tmp_path, capsys):
    reg, q = tmp_path / "one.json", tmp_path / "one.jsonl"
    reg.write_text(json.dumps([{"name": "calculator", "description": "evaluate arithmetic"}]))
    q.write_text(json.dumps({"id": "q1", "query": "what is 2 plus 2",
                             "expected": ["calculator"]}) + "\n")
    assert main(["sweep", "--registry", str(reg), "--queries", str(q), "--scorers",
                 "jaccard,bm25", "--policies", "default", "--out", str(tmp_path / "s"),
                 "--no-progress"]) == 0
    pol = pd.read_csv(tmp_path / "s" / "policies.csv")
    assert (pol["n_sent"] <= 1).all() and (pol["R@sent"] == 1).all()


def _mcp(path: Path, server: str) -> Path:
    path.write_text(json.dumps({"serverInfo": {"name": server}, "tools": [
        {"name": "create_issue", "description": "open an issue", "inputSchema": {}}]}))
    return path


def test_mcp_server_names_are_slugged_or_refused_under_strict(tmp_path, capsys):
    a = _mcp(tmp_path / "a.json", "GitHub MCP Server")
    b = _mcp(tmp_path / "b.json", "linear")
    out = tmp_path / "r.json"
    assert main(["import", "--from", "mcp", str(a), str(b), "--out", str(out)]) == 0
    names = [t["name"] for t in json.loads(out.read_text())["tools"]]  # (beside its _meta mark)
    assert names == ["GitHub_MCP_Server__create_issue", "linear__create_issue"]
    capsys.readouterr()
    assert main(["import", "--from", "mcp", "--strict", str(a), str(b), "--out",
                 str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "GitHub MCP Server" in err and "--server GitHub_MCP_Server" in err
    assert not (tmp_path / "s.json").exists()


# --------------------------------------------------------------------------------------------
# where things are written


def test_the_test_suite_writes_no_cache_into_the_users_home():
    cache = Path(os.environ["TOOLSEL_CACHE"])
    assert cache.is_absolute() and Path.home() / ".cache" not in cache.parents


def test_a_relative_cache_is_the_callers_folder(tmp_path, monkeypatch):
    from toolsel.scorers.embedding_cache import cache_root
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOOLSEL_CACHE", "mycache")
    assert cache_root() == tmp_path / "mycache"


@pytest.mark.slow
def test_report_resolves_a_relative_cache_says_where_it_writes_and_hides_kernel_noise(
        tmp_path):
    pytest.importorskip("papermill")
    nb = tmp_path / "nb"
    nb.mkdir()
    cells = [{"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]},
              "source": 'out_dir: str = "out"', "outputs": [], "execution_count": None},
             {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [],
              "execution_count": None,
              "source": "import os, pathlib\np = pathlib.Path(out_dir)\np.mkdir(parents=True, "
                        "exist_ok=True)\n(p / 'cache.txt').write_text(os.environ['TOOLSEL_CACHE"
                        "'])"}]
    (nb / "01_c.ipynb").write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {
        "name": "python3", "language": "python", "display_name": "P"}}, "nbformat": 4,
        "nbformat_minor": 5}))
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "toolsel.cli", "report", "--notebooks",
                           str(nb), "--out", "rep", "--no-html"], cwd=work,
                          env=_env(TOOLSEL_CACHE="rel-cache"), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (work / "rep" / "01_c" / "cache.txt").read_text() == str(work / "rel-cache")
    assert f"the embedding cache {work / 'rel-cache'}" in proc.stdout
    assert "IPKernelApp" not in proc.stderr and "without encryption" not in proc.stderr


@pytest.mark.slow
def test_notebook_04_checks_the_articles_rank_only_on_the_article_data(tmp_path):
    """The bundled registry plus one tool is not the article's: its rank check does not run,
    and the page ranks the user's registry without a word about the article."""
    pytest.importorskip("papermill")
    from toolsel.report import execute_notebook
    tools = json.loads((DATA / "registry.json").read_text())
    tools.append({"name": "backend_bug_report",
                  "description": "file a bug report on the backend repo"})
    reg = tmp_path / "registry.json"
    reg.write_text(json.dumps(tools))
    execute_notebook(ROOT / "notebooks" / "04_explorer.ipynb", tmp_path / "04.ipynb",
                     tmp_path / "04", parameters={"registry": str(reg),
                                                  "scorers": ["jaccard", "bm25"]})
    ranks = pd.read_csv(tmp_path / "04" / "ranking_jaccard.csv").set_index("tool")["rank"]
    # the user's registry is ranked (its own tool too), for an example taken from its data,
    # and the page says nothing of the article or its example query
    assert "backend_bug_report" in ranks.index and ranks.is_unique
    cells = json.loads((tmp_path / "04.ipynb").read_text())["cells"]
    shown = " ".join("".join(o.get("data", {}).get("text/markdown", "")) + "".join(o.get("text", ""))
                     for c in cells for o in c.get("outputs", []))
    assert shown and "article" not in shown.lower()


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="needs root to give a folder to another user")
def test_a_sweep_into_another_users_folder_keeps_the_folder_and_its_owner(tmp_path):
    out = tmp_path / "theirs"
    out.mkdir()
    (out / "notes.txt").write_text("theirs")
    os.chown(out, 4321, 4321)
    before = os.stat(out)
    assert main(["sweep", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "queries.jsonl"), "--scorers", "jaccard", "--top-k", "5",
                 "--out", str(out), "--no-progress"]) == 0
    after = os.stat(out)
    assert (after.st_ino, after.st_uid, after.st_gid) == (before.st_ino, 4321, 4321)
    assert (out / "summary.csv").exists() and (out / "notes.txt").read_text() == "theirs"


def test_report_api_refuses_a_huge_cut_off_before_any_work(tmp_path):
    from toolsel.report.plan import UserData, check_user_data
    data = UserData(registry=DATA / "registry.json", queries=DATA / "queries.jsonl",
                    top_k=(5, 99999999999999999999999))
    with pytest.raises(ValueError, match="1 to 1,000,000,000"):
        check_user_data(data)


@pytest.mark.slow
def test_notebook_12_runs_on_a_one_tool_registry(tmp_path):
    pytest.importorskip("papermill")
    from toolsel.report import execute_notebook
    reg, q = tmp_path / "one.json", tmp_path / "one.jsonl"
    reg.write_text(json.dumps([{"name": "calculator", "description": "evaluate arithmetic"}]))
    q.write_text(json.dumps({"id": "q1", "query": "what is 2 plus 2",
                             "expected": ["calculator"]}) + "\n")
    out = tmp_path / "out"
    execute_notebook(ROOT / "notebooks" / "12_selection_policies.ipynb", tmp_path / "12.ipynb",
                     out, cwd=ROOT / "notebooks",
                     parameters={"registry": str(reg), "queries": str(q), "n_boot": 50})
    frontier = pd.read_csv(out / "policy_frontier.csv")
    assert len(frontier) and (frontier["n_sent"] <= 1).all()
