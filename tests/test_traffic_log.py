"""The traffic log of ``toolsel serve`` (toolsel/integrations/traffic.py): what it writes over,
what it appends to, how it is read back, and ``toolsel label --from LOG``."""

from __future__ import annotations

import json
import os

import pytest

from toolsel import Tool
from toolsel.cli import main
from toolsel.data import DataError
from toolsel.integrations.traffic import LOG_MARK, open_log, read_traffic
from toolsel.io import OutputError, write_registry


def _log(path, records):
    with open_log(path) as log:
        for r in records:
            log.write({"run": "r1", "session": "default", **r})


def test_a_new_log_starts_with_its_mark_and_an_earlier_one_is_appended_to(tmp_path):
    path = tmp_path / "t.jsonl"
    _log(path, [{"event": "search", "search": 1, "query": "a", "sent": []}])
    with open(path, "ab") as fh:
        fh.write(b'{"event": "call", "ru')  # a gateway killed mid-line
    with open_log(path) as log:
        assert log.appended and log.lines_before == 2
        log.write({"event": "start", "run": "r2"})
    lines = path.read_text().split("\n")
    assert lines[0] == LOG_MARK and lines[2] == '{"event": "call", "ru'
    assert json.loads(lines[3]) == {"event": "start", "run": "r2"}


@pytest.mark.parametrize("make", ["user file", "other toolsel output", "link", "folder"])
def test_anything_but_an_earlier_log_is_refused_and_left_as_it_was(tmp_path, make):
    path = tmp_path / "t.jsonl"
    if make == "user file":
        path.write_text("my own notes\n")
    elif make == "other toolsel output":
        path.write_text("// written by toolsel import\n{}\n")
    elif make == "link":
        (tmp_path / "real.jsonl").write_text(LOG_MARK + "\n")
        path.symlink_to(tmp_path / "real.jsonl")
    else:
        path.mkdir()
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises(OutputError, match="toolsel serve appends only to a traffic log"):
        open_log(path)
    if before is not None:
        assert path.read_bytes() == before


def test_each_search_gets_the_tools_its_session_called_until_its_next_search(tmp_path):
    path = tmp_path / "t.jsonl"
    _log(path, [
        {"event": "start"},
        {"event": "call", "tool": "x", "ok": True, "search": None},
        {"event": "search", "search": 1, "query": "time in Tokyo", "sent": ["t"]},
        {"event": "search", "session": "b", "search": 2, "query": "save a note", "sent": []},
        {"event": "call", "tool": "get_time", "ok": True, "search": 1},
        {"event": "call", "session": "b", "tool": "add_note", "ok": False, "search": 2},
        {"event": "call", "tool": "get_time", "ok": False, "search": 1},
        {"event": "call", "tool": "convert", "ok": True, "search": 1},
        {"event": "search", "search": 3, "query": "and in Paris", "sent": []},
    ])
    with open(path, "a") as fh:
        fh.write('{"event": "search", "run"')
    found, notes = read_traffic(path)
    assert [(r.query, r.called, r.failed, r.session) for r in found] == [
        ("time in Tokyo", ("get_time", "convert"), (), "default"),
        ("save a note", (), ("add_note",), "b"),
        ("and in Paris", (), (), "default")]
    assert found[0].location == "line 4"
    assert any("before any search" in n for n in notes)
    assert any("unfinished last line" in n and "line 11" in n for n in notes)


@pytest.mark.parametrize("line, field", [('{"event": "search", "run": "r", "session": "s", '
                                          '"search": 1, "sent": []}', "query"),
                                         ('{"event": "lookup"}', "event"),
                                         ('{"event": "call", "run": "r", "session": "s", '
                                          '"tool": "x", "ok": "yes"}', "ok")])
def test_a_bad_record_names_the_file_the_line_and_the_field(tmp_path, line, field):
    path = tmp_path / "t.jsonl"
    path.write_text(f"{LOG_MARK}\n{line}\n{{\"event\": \"start\", \"run\": \"r\"}}\n")
    with pytest.raises(DataError) as err:
        read_traffic(path)
    assert "t.jsonl" in str(err.value) and "line 2" in str(err.value)
    assert err.value.field == field


def test_label_from_a_log_appends_the_proposed_tools(tmp_path, capsys):
    reg = tmp_path / "reg.json"
    write_registry([Tool("get_time", "Get the current time in a time zone"),
                    Tool("convert", "Convert a time between time zones"),
                    Tool("add_note", "Save a note in the notebook")], reg)
    log = tmp_path / "t.jsonl"
    _log(log, [
        {"event": "search", "search": 1, "query": "what time is it in Tokyo", "sent": []},
        {"event": "call", "tool": "get_time", "ok": True, "search": 1},
        {"event": "call", "tool": "gone_tool", "ok": True, "search": 1},
        {"event": "search", "search": 2, "query": "what time is it in Tokyo", "sent": []},
        {"event": "call", "tool": "get_time", "ok": True, "search": 2},
        {"event": "search", "search": 3, "query": "hello", "sent": []},
    ])
    queries = tmp_path / "q.jsonl"
    code = main(["label", "--registry", str(reg), "--queries", str(queries), "--from",
                 str(log), "--yes", "--no-embed-check", "--rank-by", "bm25", "--scorers",
                 "bm25"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "proposed (the tools called after this search): get_time" in out
    assert "skipped: no tool was called after this search" in out
    assert "'gone_tool' (line 2)" in err and "offered once" in err
    rows = [json.loads(x) for x in queries.read_text().splitlines() if x.startswith("{")]
    assert [(r["query"], r["expected"]) for r in rows] == [("what time is it in Tokyo",
                                                           ["get_time"])]
    assert "1 of 2 requests appended" in out
    assert os.path.exists(log)
