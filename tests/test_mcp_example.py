"""The whole loop of docs/serve.md ("From a fresh clone"), run line by line as a user types it:
two live MCP servers imported, a model fit, served to an MCP client (the SDK's) that searches
and calls, the traffic labeled and fed to ``toolsel check``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

pytest.importorskip("mcp")
pytestmark = pytest.mark.slow

HEADING = "## From a fresh clone: the whole loop"


def example_lines() -> list[str]:
    """The commands of the example block of docs/serve.md (the setup line left out: the suite
    runs in the installed environment)."""
    text = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
    section = text[text.index(HEADING):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("make setup")]


def run_example(folder: Path, *, timeout: float = 900) -> list[tuple[str, subprocess.CompletedProcess]]:
    """Run the example's lines in ``folder`` (holding links to this checkout's ``examples``
    and ``tests``), as bash runs them, with this interpreter's environment first on PATH (an
    activated venv). Returns each line with its completed process; stops at a failing line."""
    for name in ("examples", "tests"):
        (folder / name).symlink_to(ROOT / name)
    env = {**os.environ, "PYTHONPATH": str(ROOT),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = []
    for line in example_lines():
        proc = subprocess.run(line, shell=True, executable="/bin/bash", cwd=folder, env=env,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        done.append((line, proc))
        if proc.returncode != 0:
            break
    return done


def test_the_documented_loop_runs_end_to_end(tmp_path):
    done = run_example(tmp_path)
    for line, proc in done:
        assert proc.returncode == 0, f"{line}\n{proc.stdout}\n{proc.stderr}"
    assert len(done) == 5
    (_, imp), (_, fit), (_, client), (_, label), (_, check) = done
    assert "mcp-time: 2 tools over stdio" in imp.stdout and "notes: 3 tools over stdio" in \
        imp.stdout
    assert "wrote mine/model.json" in fit.stdout
    # the client searched and called each turn's tool through the gateway
    turns = [json.loads(x) for x in (ROOT / "examples/mcp/turns.jsonl").read_text().splitlines()]
    assert client.stdout.count("search_tools ") == len(turns)
    assert "serving 5 tools of 2 server(s) with the model mine/model.json, top_k 2" in \
        client.stderr
    n_called = int(re.search(r"(\d+) of \d+ turns called their tool", client.stdout).group(1))
    n_tried = client.stdout.count("  call_tool ")
    assert n_tried + client.stdout.count("was not among the results") == len(turns)
    assert 1 <= n_called <= n_tried
    assert "call_tool get_current_time -> {" in client.stdout
    # the log: every search, and the calls after them
    log = (tmp_path / "mine/traffic.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in log[1:]]
    assert [r["query"] for r in records if r["event"] == "search"] == [t["request"]
                                                                       for t in turns]
    # labeled from the log: one request per search whose tool was called, that tool expected
    labeled = [json.loads(x) for x in (tmp_path / "mine/traffic_labels.jsonl").read_text()
               .splitlines() if x.startswith("{")]
    assert len(labeled) == n_called
    by_text = {t["request"]: t["call"]["name"] for t in turns}
    assert all(q["expected"] == [by_text[q["query"]]] for q in labeled)
    assert f"{n_called} of {len(turns)} requests appended" in label.stdout
    assert "default+labels" in check.stdout
