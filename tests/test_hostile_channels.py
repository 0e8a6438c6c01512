"""Issue 35, item 9: every channel shows control characters from data escaped, ids and paths
included.

One hostile world: a folder name, tool names, request ids, requests, domains, conversation
ids, recorded runs' task ids and run names, an MCP server and its tools, and every output path
hold a newline followed by ``FORGED``, an escape sequence, a carriage return, a bell, a C1
control and a right-to-left override. Every command runs for real (the CLI in a subprocess)
on it; what it prints (stdout and stderr), the JUnit XML and the Markdown it writes must hold
no raw control character but the newlines of their own lines, and no line may start with the
forged text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import DATA, ROOT

#: What a label could use to forge a line or act on a terminal.
H = "\nFORGED\x1b[2J\r\x07\x9b\u202e\t\u2028x"
#: Raw characters no channel may carry (a newline is checked apart: no line starts FORGED).
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                 "\u2028\u2029]")
RENAMED = {"calculator": f"calculator{H}", "weather_lookup": f"weather{H}",
           "slack_send_dm": f"slack{H}dm"}


class Hostile:
    """The hostile inputs under ``root/in<H>`` and a work folder (outputs go to
    ``root/work/out<H>NAME``)."""

    def __init__(self, root: Path):
        self.root = root
        self.inp = root / f"in{H}"
        self.inp.mkdir()
        self.work = root / "work"
        self.work.mkdir()
        self.home = root / "home"
        self.home.mkdir()
        reg = json.loads((DATA / "registry.json").read_text())
        for t in reg:
            t["name"] = RENAMED.get(t["name"], t["name"])
            if t.get("domain") == "finance":
                t["domain"] = f"finance{H}"
            if t["name"] in RENAMED.values():
                t["description"] += H
        self.registry = self._write("registry.json", json.dumps(reg))
        for t in reg:  # the hostile requests' tools lose their words: regressions, moves
            if t["name"] in (RENAMED["slack_send_dm"], "github_create_issue"):
                t["description"] = "zzz"
        self.changed = self._write("changed.json", json.dumps(reg))
        lines = []
        for ln in (DATA / "queries.jsonl").read_text().splitlines():
            q = json.loads(ln)
            q["expected"] = [RENAMED.get(e, e) for e in q["expected"]]
            q["id"] += H
            q["query"] += H
            q["domain"] = q.get("domain", "") + H
            lines.append(json.dumps(q))
        self.queries = self._write("queries.jsonl", "\n".join(lines) + "\n")
        convs = []
        for ln in (DATA / "conversations.jsonl").read_text().splitlines():
            c = json.loads(ln)
            c["id"] += H
            c["title"] = c.get("title", "") + H
            for turn in c["turns"]:
                turn["expected"] = [RENAMED.get(e, e) for e in turn["expected"]]
                turn["user"] += H
            convs.append(json.dumps(c))
        self.conversations = self._write("conversations.jsonl", "\n".join(convs) + "\n")
        runs = self.inp / "runs"
        runs.mkdir()
        for name in ("tasks.jsonl", "transcripts.jsonl"):
            text = (DATA / "runs" / name).read_text()
            text = text.replace('"r01"', json.dumps(f"r01{H}"))
            text = text.replace('"run":"eager"', '"run":' + json.dumps(f"eager{H}"))
            (runs / name).write_text(text)
        self.runs = runs
        mcp = json.loads((DATA / "integrations" / "mcp_github.json").read_text())
        mcp["server"] = f"git{H}hub"
        for t in mcp["result"]["tools"][:2]:
            t["name"] += H
        self.mcp = self._write("mcp.json", json.dumps(mcp))

    def _write(self, name: str, text: str) -> Path:
        path = self.inp / name
        path.write_text(text)
        return path

    def out(self, name: str) -> Path:
        return self.work / f"out{H}{name}"

    def run(self, *args) -> subprocess.CompletedProcess:
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "PYTHONPATH": path, "HOME": str(self.home),
               "TOOLSEL_STATE": str(self.root / "state"), "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run([sys.executable, "-m", "toolsel.cli", *map(str, args)],
                              cwd=self.work, env=env, capture_output=True, text=True,
                              timeout=900)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return Hostile(tmp_path_factory.mktemp("hostile"))


def shown_safely(text: str, where: str) -> None:
    """No raw control character (but newlines), no line that starts with the forged text,
    and the forged text really reached this channel (escaped)."""
    raw = sorted(set(RAW.findall(text)))
    assert raw == [], (where, raw, text[-3000:])
    assert "\nFORGED" not in text and not text.startswith("FORGED"), (where, text[-3000:])


def _ok(done: subprocess.CompletedProcess, *codes: int) -> str:
    assert done.returncode in (codes or (0,)), (done.returncode, done.stderr[-3000:])
    text = done.stdout + done.stderr
    shown_safely(text, "terminal")
    return text


def _cases(w: Hostile) -> dict[str, list]:
    R, Q = w.registry, w.queries
    return {
        "validate": ["validate", "--registry", R, "--queries", Q, "--conversations",
                     w.conversations],
        "sweep": ["sweep", "--registry", R, "--queries", Q, "--scorers", "jaccard,bm25",
                  "--out", w.out("sweep"), "--no-progress"],
        "fit": ["fit", "--registry", R, "--queries", Q, "--out", w.out("m.json"), "--bases",
                "bm25"],
        "policies": ["policies", "--registry", R, "--queries", Q, "--scorers", "bm25",
                     "--out", w.out("pol")],
        "discovery": ["discovery", "--registry", R, "--queries", Q, "--scorers", "bm25",
                      "--out", w.out("disc")],
        "compare": ["compare", "--registry-a", R, "--registry-b", w.changed, "--queries", Q,
                    "--scorers", "bm25", "--out", w.out("cmp")],
        "conversations": ["conversations", "--registry", R, "--conversations",
                          w.conversations, "--scorers", "bm25", "--out", w.out("conv")],
        "import": ["import", "--from", "mcp", w.mcp, "--out", w.out("imp.json"),
                   "--queries-out", w.out("impq.jsonl")],
        "synthetic": ["synthetic", "--tools", "30", "--n-queries", "5", "--registry-out",
                      w.out("syn.jsonl"), "--queries-out", w.out("synq.jsonl")],
        "benchmark": ["benchmark", "--registry", R, "--queries", Q, "--scorers", "bm25",
                      "--n-timed", "3"],
        "label": ["label", "--registry", R, "--queries", Q, "--query",
                  f"what is 3 times 4{H}", "--expected", f"calculator{H}", "--id", f"new{H}",
                  "--yes", "--no-embed-check", "--scorers", "bm25"],
        "explore": ["explore", "--registry", R, "--queries", Q, "--out", w.out("exp"),
                    "--no-lab"],
        "runs": ["runs", w.runs, "--registry", DATA / "registry.json", "--out", w.out("runs")],
        "error-line": ["sweep", "--registry", R, "--queries", Q, "--out", w.registry],
        "duplicate-id": ["validate", "--registry", R, "--queries", w.inp / "dup.jsonl"],
    }


_NAMES = ["validate", "sweep", "fit", "policies", "discovery", "compare", "conversations",
          "import", "synthetic", "benchmark", "label", "explore", "runs", "error-line",
          "duplicate-id"]


@pytest.mark.parametrize("name", _NAMES)
def test_every_command_shows_control_characters_escaped(world, name):
    if name == "duplicate-id":
        first = world.queries.read_text().splitlines()[0]
        (world.inp / "dup.jsonl").write_text(first + "\n" + first + "\n")
    done = world.run(*_cases(world)[name])
    text = _ok(done, 2) if name in ("error-line", "duplicate-id") else _ok(done)
    if name not in ("benchmark", "synthetic"):
        assert "\\nFORGED" in text, text[-3000:]  # the data reached the terminal, escaped


def test_check_terminal_junit_and_markdown_show_them_escaped(world):
    """A baseline, then a registry where the hostile request loses its tool: regressions,
    explanations, thresholds and notes, in the terminal, the JUnit XML and the Markdown."""
    base = ["check", "--queries", world.queries, "--scorers", "jaccard", "--top-k", "10",
            "--baseline", world.out("b.json")]
    _ok(world.run(*base, "--registry", world.registry, "--update-baseline"))
    summary, junit = world.out("s.md"), world.out("j.xml")
    done = world.run(*base, "--registry", world.changed, "--min", "R@10=0.99", "--explain",
                     "--summary", summary, "--junit", junit)
    text = _ok(done, 1)
    assert "regressions under jaccard" in text and "q01\\nFORGED" in text
    md = summary.read_text(encoding="utf-8")
    shown_safely(md, "markdown")
    assert "q01\\\\nFORGED" in md  # Markdown source of the text q01\nFORGED
    xml = junit.read_text(encoding="utf-8")
    shown_safely(xml, "junit")
    assert "&#10;" not in xml and "&#13;" not in xml and "&#9;" not in xml
    root = ET.parse(junit).getroot()
    cases = [c for s in root for c in s if c.tag == "testcase"]
    names = [c.get("name") for c in cases]
    assert any(n.startswith("q01\\nFORGED\\x1b[2J\\r\\x07\\x9b\\u202e\\t\\u2028")
               for n in names), names[:3]
    for c in cases:
        for f in c:
            assert "\n" not in (f.get("message") or "")


def test_report_progress_lines_and_markdown_show_them_escaped(world):
    out = world.out("rep")
    text = _ok(world.run("report", "--registry", world.registry, "--queries", world.queries,
                         "--out", out, "--no-html", "--only", "01"))
    assert "1/1 notebooks ok" in text and "out\\nFORGED" in text
    for md in out.glob("*.md"):
        shown_safely(md.read_text(encoding="utf-8"), md.name)


def test_label_from_a_file_and_asked_show_them_escaped(world, tmp_path):
    q = tmp_path / "q.jsonl"
    shutil.copy(world.queries, q)
    requests = tmp_path / f"r{H}.jsonl"
    requests.write_text(json.dumps({"query": f"what is 7 times 8{H}",
                                    "expected": [f"calculator{H}"]}) + "\n"
                        + json.dumps({"query": "a request naming no tool",
                                      "expected": [f"nope{H}"]}) + "\n")
    _ok(world.run("label", "--registry", world.registry, "--queries", q, "--from", requests,
                  "--yes", "--no-embed-check", "--scorers", "bm25"), 0, 1, 2)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "toolsel.cli", "label", "--registry",
                           world.registry, "--queries", q, "--no-embed-check", "--scorers",
                           "bm25"], input=f"what is 9 times 9\x1b[2J\n1\nn\n\n",
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": path,
                                             "HOME": str(world.home)},
                          capture_output=True, text=True, timeout=600)
    _ok(done, 0, 1)
