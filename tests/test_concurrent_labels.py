"""Issue 25, case 3: concurrent ``toolsel label`` runs and ``append_query`` calls from several
real processes lose nothing, tear nothing, and keep ids unique."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from toolsel import Tool, load_queries
from toolsel.data import Registry

ROOT = Path(__file__).resolve().parents[1]
TOOLS = [
    Tool("weather_lookup", "current weather for a city"),
    Tool("stock_price", "latest stock price for a ticker"),
    Tool("translate_text", "translate text into another language"),
    Tool("calculator", "evaluate a basic arithmetic expression"),
]
FIRST = {"id": "t01", "query": "weather in paris", "expected": ["weather_lookup"],
         "split": "dev", "category": "direct"}


def _env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, PYTHONDONTWRITEBYTECODE="1")


@pytest.fixture
def files(tmp_path):
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([t.to_record() for t in TOOLS]))
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps(FIRST) + "\n")
    return registry, queries


def _check(path: Path, expected_queries: set[str]) -> list[dict]:
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]  # no torn line
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids), Counter(ids).most_common(3)  # unique ids
    assert {r["query"] for r in records[1:]} == expected_queries  # nothing lost
    assert len(records) == len(expected_queries) + 1
    assert len(load_queries(path, Registry(TOOLS))) == len(records)  # a valid file
    return records


@pytest.mark.slow
def test_twelve_label_processes_lose_no_label(files):
    registry, queries = files
    texts = [f"what is {i} plus {i + 1}" for i in range(12)]
    procs = [subprocess.Popen(
        [sys.executable, "-m", "toolsel.cli", "label", "--registry", str(registry),
         "--queries", str(queries), "--query", text, "--expected", "calculator",
         "--category", "far", "--scorer", "jaccard", "--scorers", "jaccard",
         "--no-embed-check", "--yes"], env=_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for text in texts]
    outs = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    assert all(code == 0 for *_, code in outs), [o for o in outs if o[2]]
    records = _check(queries, set(texts))
    said = {line.split("'")[1] for out, _, _ in outs for line in out.splitlines()
            if line.startswith("appended ")}
    assert said == {r["id"] for r in records[1:]}  # each run names the id it wrote
    # the split rule holds on the final order: alternate within the category
    far = [r["split"] for r in records if r.get("category") == "far"]
    assert far == ["dev", "test"] * 6


@pytest.mark.slow
def test_two_label_sessions_from_files_lose_no_label(files, tmp_path):
    """Two ``toolsel label --from`` sessions appending ten requests each at the same time."""
    registry, queries = files
    texts = {w: [f"session {w}: what is {i} plus {i + 1}" for i in range(10)] for w in "ab"}
    procs = []
    for w, lines in texts.items():
        todo = tmp_path / f"todo-{w}.jsonl"
        todo.write_text("".join(json.dumps({"query": t, "expected": ["calculator"],
                                            "category": "far"}) + "\n" for t in lines))
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "toolsel.cli", "label", "--registry", str(registry),
             "--queries", str(queries), "--from", str(todo), "--scorer", "jaccard",
             "--scorers", "jaccard", "--no-embed-check", "--yes"], env=_env(),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True))
    outs = [p.communicate(timeout=300) + (p.returncode,) for p in procs]
    assert all(code == 0 for *_, code in outs), [o for o in outs if o[2]]
    records = _check(queries, set(texts["a"]) | set(texts["b"]))
    for w in "ab":  # each session's requests in its file's order
        assert [r["query"] for r in records if r["query"].startswith(f"session {w}:")] == \
            texts[w]
    assert [r["split"] for r in records if r.get("category") == "far"] == ["dev", "test"] * 10


_APPENDER = textwrap.dedent("""
    import sys
    from toolsel import Tool
    from toolsel.tables.labeling import append_query, file_ids, next_id
    tools = [Tool("weather_lookup", "current weather for a city"),
             Tool("calculator", "evaluate a basic arithmetic expression")]
    path, worker = sys.argv[1], sys.argv[2]
    for i in range(40):
        rec = {"id": next_id(file_ids(path)), "query": f"worker {worker} request {i}",
               "expected": ["calculator"]}
        append_query(path, rec, tools, assign_id=True)
""")


@pytest.mark.slow
def test_append_query_from_eight_processes_keeps_all_320_lines(files):
    _, queries = files
    procs = [subprocess.Popen([sys.executable, "-c", _APPENDER, str(queries), str(w)],
                              env=_env(), stderr=subprocess.PIPE, text=True)
             for w in range(8)]
    errs = [(p.communicate(timeout=600)[1], p.returncode) for p in procs]
    assert all(code == 0 for _, code in errs), errs
    records = _check(queries, {f"worker {w} request {i}" for w in range(8) for i in range(40)})
    for w in range(8):  # each worker's lines in its own order
        mine = [int(r["query"].rsplit(" ", 1)[1]) for r in records[1:]
                if r["query"].startswith(f"worker {w} ")]
        assert mine == list(range(40))


def test_a_taken_id_is_renumbered_only_when_asked(files):
    from toolsel.data import DataError
    from toolsel.tables.labeling import append_query
    _, queries = files
    rec = {"id": "t01", "query": "price of msft", "expected": ["stock_price"]}
    with pytest.raises(DataError, match="already in the file"):
        append_query(queries, rec, TOOLS)
    added = append_query(queries, rec, TOOLS, assign_id=True)
    assert added.id == "t02"
    assert json.loads(queries.read_text().splitlines()[-1])["id"] == "t02"
