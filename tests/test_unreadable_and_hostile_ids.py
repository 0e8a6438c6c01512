"""Issue 35, items 7 and 9: a baseline or model file that cannot be read is exit 2 with one line
(exit 1 means "regression" in CI), and a request id's control characters cannot forge lines in
the terminal or in JUnit test names. The real CLI, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import DATA, ROOT

REG = str(DATA / "registry.json")
QUERIES = str(DATA / "queries.jsonl")


def _run(tmp_path, *args) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "toolsel.cli", *map(str, args)], cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": path}, capture_output=True,
                          text=True, timeout=600)


def _one_line_exit_2(done) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _deep(path: Path, depth: int) -> Path:
    path.write_text("[" * depth + "]" * depth)
    return path


#: kind -> (words of the baseline's error, words of the model file's error)
_WORDS = {"dev-zero": ("device", "device"),
          "deep-100000": ("nested too deeply", "deeper than"),
          "deep-65": ("nested too deeply", "deeper than"),
          "folder": ("folder", "folder"),
          "not-utf8": ("UTF-8", "UTF-8"),
          "json-array": ("", "")}


@pytest.fixture(params=list(_WORDS))
def unreadable(request, tmp_path):
    kind = request.param
    if kind == "dev-zero":
        path = Path("/dev/zero")
    elif kind.startswith("deep-"):
        path = _deep(tmp_path / "deep.json", int(kind.split("-")[1]))
    elif kind == "folder":
        path = tmp_path / "d.json"
        path.mkdir()
    elif kind == "not-utf8":
        path = tmp_path / "b.json"
        path.write_bytes(b"\xff\xfe{}")
    else:
        path = tmp_path / "a.json"
        path.write_text("[1, 2]")
    return path, _WORDS[kind]


def test_an_unreadable_baseline_is_exit_2_with_one_line(tmp_path, unreadable):
    path, (words, _) = unreadable
    err = _one_line_exit_2(_run(tmp_path, "check", "--registry", REG, "--queries", QUERIES,
                                "--scorers", "jaccard", "--baseline", path))
    assert str(path) in err and words in err


def test_an_unreadable_model_is_exit_2_with_one_line(tmp_path, unreadable):
    path, (_, words) = unreadable
    err = _one_line_exit_2(_run(tmp_path, "sweep", "--registry", REG, "--queries", QUERIES,
                                "--scorers", "jaccard", "--model", path, "--out",
                                tmp_path / "sw"))
    assert str(path) in err and words in err
    assert not (tmp_path / "sw").exists()


def test_a_newline_in_a_request_id_forges_no_line(tmp_path):
    """A label whose id holds a newline and a fake verdict: printed escaped on the terminal,
    escaped (not ``&#10;``) in the JUnit test name."""
    lines = Path(QUERIES).read_text().splitlines()
    first = json.loads(lines[0])
    first["id"] = "q01\npassed\n\x1b[2J"
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    reg = json.loads(Path(REG).read_text())
    base = ["check", "--queries", qfile, "--scorers", "jaccard", "--baseline", "b.json",
            "--top-k", "1"]
    (tmp_path / "r.json").write_text(json.dumps(reg))
    assert _run(tmp_path, *base, "--registry", "r.json", "--update-baseline").returncode == 0
    for tool in reg:  # the first request's tool loses every word it shared with the request
        if tool["name"] in first["expected"]:
            tool["description"] = "zzz"
    (tmp_path / "r.json").write_text(json.dumps(reg))
    done = _run(tmp_path, *base, "--registry", "r.json", "--junit", "j.xml")
    assert done.returncode == 1, done.stderr
    out = done.stdout.splitlines()
    assert out[-1].startswith("failed")
    assert "passed" not in out and not any(ln.startswith("\x1b") for ln in out)
    assert any(ln.startswith("q01\\npassed\\n\\x1b[2J") for ln in out), done.stdout
    xml = (tmp_path / "j.xml").read_text()
    assert "&#10;" not in xml.split("<system-out>")[0] and "q01\\npassed" in xml
    root = ET.parse(tmp_path / "j.xml").getroot()
    names = [c.get("name") for s in root for c in s if c.tag == "testcase"]
    assert all("\n" not in n for n in names)


def test_a_newline_in_an_output_path_stays_on_one_error_line(tmp_path):
    (tmp_path / "f\nfake: passed").write_text("a file, not a folder\n")
    err = _one_line_exit_2(_run(tmp_path, "sweep", "--registry", REG, "--queries", QUERIES,
                                "--scorers", "jaccard", "--out", "f\nfake: passed"))
    assert "f\\nfake: passed" in err and "not a folder" in err
