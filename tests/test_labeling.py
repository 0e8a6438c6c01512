"""Labeling: ids, picks, splits, near-duplicates, atomic appends, impact, and ``toolsel label``.

Every append test works on a real file in ``tmp_path`` and reads it back.
"""

from __future__ import annotations

import io
import json

import pytest

from toolsel import Tool, load_queries
from toolsel.cli import main as toolsel
from toolsel.data import DataError, Registry
from toolsel.datasets import assign_splits, read_labeled
from toolsel.tables.labeling import (append_query, file_ids, label_impact, near_duplicates,
                                     new_record, next_id, rank_for_labeling, resolve_picks,
                                     telling_parts)

TOOLS = [
    Tool("weather_lookup", "current weather for a city"),
    Tool("stock_price", "latest stock price for a ticker"),
    Tool("translate_text", "translate text into another language"),
    Tool("calculator", "evaluate a basic arithmetic expression"),
    Tool("read_file", "read a file from disk", metadata={"always_include": True}),
]
LINES = [
    {"id": "t01", "query": "weather in paris", "expected": ["weather_lookup"],
     "split": "dev", "category": "direct"},
    {"id": "t02", "query": "price of msft", "expected": ["stock_price"],
     "split": "test", "category": "direct"},
    {"id": "t03", "query": "say hello in french", "expected": ["translate_text"],
     "split": "dev", "category": "far"},
]


@pytest.fixture
def reg():
    return Registry(TOOLS)


@pytest.fixture
def files(tmp_path, reg):
    registry = tmp_path / "registry.json"
    registry.write_text(json.dumps([t.to_record() for t in TOOLS]))
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in LINES))
    return registry, queries


def test_next_id_follows_the_pattern():
    assert next_id(["r001", "r162"]) == "r163"
    assert next_id(["q05", "q30"]) == "q31"
    assert next_id(["q09"]) == "q10"
    assert next_id(["plg-001", "plg-143"]) == "plg-144"
    assert next_id(["i1", "i8"]) == "i9"
    assert next_id([1, 2, 30]) == 31
    assert next_id([]) == "q001"
    assert next_id(["a1", "b2", "a7"]) == "a8"
    assert next_id(["x5", "x6"]) == "x7" and next_id(["x9", "x10"]) == "x11"
    assert next_id(["q1", "q02", "q2"]) not in {"q1", "q02", "q2"}


def test_rank_and_picks(reg):
    ranking = rank_for_labeling(reg, "translate this text", "jaccard", top=3)
    assert list(ranking["n"]) == [1, 2, 3] and ranking["tool"].iloc[0] == "translate_text"
    assert resolve_picks("1, calculator", ranking, reg) == ["translate_text", "calculator"]
    with pytest.raises(DataError, match="did you mean 'calculator'"):
        resolve_picks("calculater", ranking, reg)
    with pytest.raises(DataError, match="not a number in the list"):
        resolve_picks("7", ranking, reg)
    with pytest.raises(DataError, match="twice"):
        resolve_picks("1, translate_text", ranking, reg)
    with pytest.raises(DataError, match="at least one"):
        resolve_picks(" , ", ranking, reg)


def test_new_record_split_by_the_rule(files, reg):
    _, path = files
    existing = load_queries(path, reg)
    rec = new_record("weather in rome", ["weather_lookup"], existing, reg, category="direct")
    assert rec["id"] == "t04"
    # third 'direct' request in file order -> dev, as assign_splits says
    assert rec["split"] == "dev" == assign_splits([*existing, rec])[-1]
    rec = new_record("hola in english", ["translate_text"], existing, reg, category="far")
    assert rec["split"] == "test"
    assert new_record("x", ["calculator"], existing, reg, split="test")["split"] == "test"
    with pytest.raises(DataError, match="already in the file"):
        new_record("x", ["calculator"], existing, reg, id="t02")


def test_no_split_when_the_file_has_none(tmp_path, reg):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": 1, "query": "weather", "expected": ["weather_lookup"]}\n')
    existing = read_labeled(path, reg)
    rec = new_record("stock", ["stock_price"], existing, reg, ids=file_ids(path))
    assert rec == {"id": 2, "query": "stock", "expected": ["stock_price"]}  # integer ids stay


def test_append_keeps_every_line_and_validates(files, reg):
    _, path = files
    before = path.read_bytes()
    rec = new_record("what is 3 + 4", ["calculator"], load_queries(path, reg), reg,
                     category="direct")
    q = append_query(path, rec, reg)
    assert q.id == "t04" and q.split == "dev"
    after = path.read_bytes()
    assert after.startswith(before) and after.endswith(b"\n")
    assert json.loads(after.decode().splitlines()[-1]) == rec
    assert [x.id for x in load_queries(path, reg)] == ["t01", "t02", "t03", "t04"]
    assert list(path.parent.glob(".*.tmp")) == []  # no temporary file left behind


def test_unknown_name_or_taken_id_writes_nothing(files, reg):
    _, path = files
    before = path.read_bytes()
    with pytest.raises(DataError, match="did you mean 'calculator'"):
        append_query(path, {"id": "t09", "query": "3+4", "expected": ["calculater"]}, reg)
    with pytest.raises(DataError, match="already in the file"):
        append_query(path, {"id": "t01", "query": "3+4", "expected": ["calculator"]}, reg)
    with pytest.raises(DataError, match="split"):
        append_query(path, {"id": "t09", "query": "3+4", "expected": ["calculator"],
                            "split": "validation"}, reg)
    assert path.read_bytes() == before
    assert list(path.parent.glob(".*.tmp")) == []


def test_append_to_a_file_without_final_newline(tmp_path, reg):
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a1", "query": "weather", "expected": ["weather_lookup"]}')
    append_query(path, {"id": "a2", "query": "stock", "expected": ["stock_price"]}, reg)
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and json.loads(lines[1])["id"] == "a2"
    assert path.read_text().endswith("\n")


def test_append_creates_a_missing_file(tmp_path, reg):
    path = tmp_path / "new.jsonl"
    rec = new_record("weather", ["weather_lookup"], read_labeled(path, reg), reg)
    append_query(path, rec, reg)
    assert [q.id for q in load_queries(path, reg)] == ["q001"]


def test_near_duplicates_by_tokens(files, reg):
    _, path = files
    existing = load_queries(path, reg)
    dups = near_duplicates("Weather in Paris?", existing, embed=False)
    assert list(dups["id"]) == ["t01"] and dups["token_jaccard"].iloc[0] == 1.0
    assert dups["flagged_by"].iloc[0] == "tokens"
    assert near_duplicates("weather in rome today", existing, embed=False).empty
    assert near_duplicates("anything", [], embed=False).empty


def test_near_duplicates_by_embedding(files, reg):
    pytest.importorskip("onnxruntime")
    _, path = files
    existing = load_queries(path, reg)
    try:
        dups = near_duplicates("what's the weather like in paris", existing)
    except (ImportError, FileNotFoundError, OSError) as exc:  # model package missing
        pytest.skip(f"embedding model unavailable: {exc}")
    assert dups.empty or list(dups["id"]) == ["t01"]
    same = near_duplicates("weather in paris", existing)
    assert same["flagged_by"].iloc[0] == "tokens + embedding"
    assert same["cosine"].iloc[0] == pytest.approx(1.0, abs=1e-4)


def test_label_impact(reg):
    imp = label_impact(reg, "translate text", ["translate_text", "read_file"],
                       ["jaccard", "bm25"], [1, 3])
    assert list(imp.columns) == ["scorer", "tool", "rank", "found_at", "@1", "@3",
                                 "complete@1", "complete@3"]
    t = imp.set_index(["scorer", "tool"])
    assert t.loc[("jaccard", "translate_text"), "rank"] == 1
    assert t.loc[("jaccard", "read_file"), "rank"] == 0  # always-include: always sent
    assert t.loc[("jaccard", "read_file"), "found_at"] == 0
    assert bool(t.loc[("bm25", "translate_text"), "complete@1"])
    # a tool the query shares nothing with ranks in registry order among the 4 filtered
    far = label_impact(reg, "translate text", ["calculator"], ["jaccard"], [1, 3]).iloc[0]
    assert far["rank"] == 4 and far["found_at"] != far["found_at"]  # NaN: not sent
    with pytest.raises(DataError, match="did you mean"):
        label_impact(reg, "x", ["calculater"], ["jaccard"])


def _cli(files, *extra):
    registry, path = files
    return toolsel(["label", "--registry", str(registry), "--queries", str(path),
                    "--scorers", "jaccard,bm25", "--scorer", "bm25", "--no-embed-check",
                    *extra])


def test_cli_non_interactive(files, capsys):
    _, path = files
    assert _cli(files, "--query", "what is 3 + 4", "--expected", "calculator",
                "--category", "far", "--yes") == 0
    out = capsys.readouterr().out
    assert "appended 't04'" in out and "bm25" in out and "rank" in out
    last = json.loads(path.read_text().splitlines()[-1])
    assert last == {"id": "t04", "query": "what is 3 + 4", "expected": ["calculator"],
                    "split": "test", "category": "far"}


def test_cli_refuses_unknown_name_and_writes_nothing(files, capsys):
    _, path = files
    before = path.read_bytes()
    assert _cli(files, "--query", "3 + 4", "--expected", "calculater", "--yes") == 2
    assert "did you mean 'calculator'" in capsys.readouterr().err
    assert path.read_bytes() == before


def test_cli_flags_near_duplicate(files, capsys):
    assert _cli(files, "--query", "weather in Paris", "--expected", "weather_lookup",
                "--yes") == 0
    assert "near-duplicate of t01 (tokens" in capsys.readouterr().out


def test_cli_interactive(files, capsys, monkeypatch):
    _, path = files
    # request, a mistyped name (asked again), then a pick by number, then confirm
    monkeypatch.setattr("sys.stdin", io.StringIO("translate good morning to german\n"
                                                 "translat_text\n1\ny\n"))
    assert _cli(files) == 0
    captured = capsys.readouterr()
    assert "1. translate_text" in captured.out and "did you mean" in captured.err
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["expected"] == ["translate_text"] and last["id"] == "t04"


def test_cli_interactive_declined_writes_nothing(files, monkeypatch):
    _, path = files
    before = path.read_bytes()
    monkeypatch.setattr("sys.stdin", io.StringIO("weather in oslo\n1\nn\n"))
    assert _cli(files) == 1
    monkeypatch.setattr("sys.stdin", io.StringIO("weather in oslo\n"))  # input ends early
    assert _cli(files) == 1
    assert path.read_bytes() == before


def test_cli_shows_the_json_line_it_writes(files, capsys):
    _, path = files
    assert _cli(files, "--query", "what is 3 + 4", "--expected", "calculator", "--yes") == 0
    out = capsys.readouterr().out
    written = path.read_text().splitlines()[-1]
    assert out.count(written) == 2  # before asking, and after appending
    assert "{'id'" not in out  # not a Python dict


def test_telling_parts_by_hand():
    shared = "This tool belongs to the vehicle control system, which controls the car."
    shown, cut = telling_parts([f"{shared}\nLock the doors.", f"{shared}\tStart the engine.",
                                "Get the weather", "Get the weather"])
    assert shown == ["… Lock the doors.", "… Start the engine.", "Get the weather",
                     "Get the weather"]  # identical texts stay whole; short prefixes stay
    assert cut == [shared]
    assert telling_parts(["a\tb\nc"]) == (["a b c"], [])


def test_cli_ranking_table_survives_newlines_and_shared_prefixes(tmp_path, capsys, monkeypatch):
    shared = "This tool belongs to the vehicle control system, which controls the car."
    tools = [Tool("lock_doors", f"{shared}\nLock or unlock\tthe doors."),
             Tool("start_engine", f"{shared}\nStart the engine."),
             Tool("gallon_to_liter", "Convert gallons to liters.")]
    registry = tmp_path / "r.json"
    registry.write_text(json.dumps([t.to_record() for t in tools]))
    queries = tmp_path / "q.jsonl"
    monkeypatch.setattr("sys.stdin", io.StringIO("lock the car doors\n1\nn\n"))
    assert toolsel(["label", "--registry", str(registry), "--queries", str(queries),
                    "--scorer", "bm25", "--scorers", "bm25", "--no-embed-check"]) == 1
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip()[:2] in ("1.", "2.", "3.")]
    assert len(rows) == 3  # one line per tool: no description broke the table
    assert any(r.endswith("… Lock or unlock the doors.") for r in rows)
    assert f"share: {shared!r}" in out


def test_did_you_mean_offers_the_namespaced_name():
    from toolsel.data import suggest_names
    names = ["gallon_to_liter", "cloudflare-browser__accounts_list", "create_issue"]
    hint = suggest_names("accounts_list", names)
    assert hint.startswith("; did you mean 'cloudflare-browser__accounts_list'")
    assert "'create_issue'" in suggest_names("github__create_issue", names)


# --------------------------------------------------------------------------------------------
# many requests in one process: the session loop and --from FILE


def test_cli_session_asks_request_after_request(files, capsys, monkeypatch):
    _, path = files
    # two requests (picked by number, then by name), a declined third, then an empty line
    monkeypatch.setattr("sys.stdin", io.StringIO(
        "translate good morning to german\n1\ny\n"
        "what is 3 + 4\ncalculator\ny\n"
        "price of aapl\n1\nn\n"
        "\n"))
    assert _cli(files) == 0
    out = capsys.readouterr().out
    added = [json.loads(line) for line in path.read_text().splitlines()[len(LINES):]]
    assert [(r["id"], r["query"], r["expected"]) for r in added] == [
        ("t04", "translate good morning to german", ["translate_text"]),
        ("t05", "what is 3 + 4", ["calculator"])]
    assert "2 requests appended" in out and "t04, t05" in out
    assert out.count("what this label shows") == 2


def test_cli_session_ends_at_end_of_input(files, monkeypatch):
    _, path = files
    before = path.read_bytes()
    monkeypatch.setattr("sys.stdin", io.StringIO("what is 3 + 4\ncalculator\ny\nweather in "
                                                 "oslo\n1\n"))  # input ends at the confirm
    assert _cli(files) == 0
    lines = path.read_text().splitlines()
    assert path.read_bytes().startswith(before) and len(lines) == len(LINES) + 1


def test_session_fits_each_scorer_once(files, reg):
    from toolsel.tables.labeling import LabelSession
    _, path = files
    session = LabelSession(reg, path, rank_by="bm25", scorers=["jaccard", "bm25"],
                           embed_check=False)
    for text, tool in (("evaluate 3 + 4, an arithmetic expression", "calculator"),
                       ("weather in rome", "weather_lookup")):
        record, _ = session.prepare(text, session.picks(tool, text))
        session.append(record)
        fitted = dict(session._cache)
        assert session.impact(text, [tool])["rank"].tolist() == [1, 1]
    assert set(fitted) == {"bm25", "jaccard"}
    assert all(session._cache[k] is v for k, v in fitted.items())  # not refitted
    assert [q.id for q in session.appended] == ["t04", "t05"]
    assert [q.id for q in load_queries(path, reg)][-2:] == ["t04", "t05"]


def test_cli_from_a_text_file_one_request_per_line(files, tmp_path, capsys, monkeypatch):
    _, path = files
    requests = tmp_path / "todo.txt"
    requests.write_text("what is 3 + 4\n\n  translate hello to french  \n")
    monkeypatch.setattr("sys.stdin", io.StringIO("calculator\n1\n"))
    assert _cli(files, "--from", str(requests), "--yes", "--category", "far") == 0
    out = capsys.readouterr().out
    assert "[1/2]" in out and f"{requests}, line 3: translate hello to french" in out
    added = [json.loads(line) for line in path.read_text().splitlines()[len(LINES):]]
    assert [(r["query"], r["expected"], r["category"], r["split"]) for r in added] == [
        ("what is 3 + 4", ["calculator"], "far", "test"),  # 2nd 'far' in file order
        ("translate hello to french", ["translate_text"], "far", "dev")]
    assert "2 of 2 requests appended" in out


def test_cli_from_jsonl_labels_without_asking(files, tmp_path, capsys, monkeypatch):
    _, path = files
    requests = tmp_path / "todo.jsonl"
    requests.write_text(
        '{"query": "what is 3 + 4", "expected": ["calculator"], "category": "far"}\n'
        '{"query": "weather in rome", "expected": "weather_lookup", "split": "test", '
        '"tags": ["new"]}\n'
        '{"query": "price of tsla", "expected": ["stock_price"], "id": "x1"}\n')
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # nothing to ask
    assert _cli(files, "--from", str(requests), "--yes") == 0
    added = [json.loads(line) for line in path.read_text().splitlines()[len(LINES):]]
    assert added == [
        {"id": "t04", "query": "what is 3 + 4", "expected": ["calculator"], "split": "test",
         "category": "far"},
        {"id": "t05", "query": "weather in rome", "expected": ["weather_lookup"],
         "tags": ["new"], "split": "test"},
        {"id": "x1", "query": "price of tsla", "expected": ["stock_price"],
         "split": assign_splits([*LINES, *added])[-1]}]  # the file's rule, in file order
    assert "3 of 3 requests appended" in capsys.readouterr().out


@pytest.mark.parametrize("line,field,message", [
    ('{"query": "3 + 4", "expected": ["calculater"]}', "expected", "did you mean 'calculator'"),
    ('{"query": "", "expected": ["calculator"]}', "query", "non-empty string"),
    ('{"request": "3 + 4"}', "request", "unknown field"),
    ('{"query": "3 + 4", "expected": ["calculator"], "split": "validation"}', "split",
     "expected one"),
    ('["3 + 4"]', None, "expected an object"),
])
def test_cli_from_a_bad_line_appends_nothing(files, tmp_path, capsys, line, field, message):
    _, path = files
    before = path.read_bytes()
    requests = tmp_path / "todo.jsonl"
    requests.write_text('{"query": "weather in rome", "expected": ["weather_lookup"]}\n'
                        + line + "\n")
    assert _cli(files, "--from", str(requests), "--yes") == 2
    err = capsys.readouterr().err
    assert f"{requests}, line 2" in err and message in err
    if field:
        assert f"field '{field}'" in err
    assert path.read_bytes() == before  # the good first line was not appended either


def test_cli_from_refuses_one_request_flags(files, tmp_path, capsys):
    requests = tmp_path / "todo.txt"
    requests.write_text("what is 3 + 4\n")
    assert _cli(files, "--from", str(requests), "--expected", "calculator") == 2
    assert "--expected labels one request" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: --query and --from exclude each other
        _cli(files, "--from", str(requests), "--query", "x")


def test_cli_from_input_ending_says_what_is_left(files, tmp_path, capsys, monkeypatch):
    _, path = files
    requests = tmp_path / "todo.txt"
    requests.write_text("what is 3 + 4\nweather in rome\nprice of tsla\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("calculator\n"))
    assert _cli(files, "--from", str(requests), "--yes") == 0
    out = capsys.readouterr().out
    assert "1 of 3 requests appended" in out and "the last 2 not labeled" in out
    assert len(path.read_text().splitlines()) == len(LINES) + 1


def test_a_plain_request_list_splits_at_newlines_only(tmp_path):
    """A request holding U+2028 or U+0085 (pasted from a web page) stays one request, and each
    request's line number is the one an editor shows."""
    from toolsel.tables.labeling import read_requests
    todo = tmp_path / "todo.txt"
    todo.write_text("send alice a dm\u2028on slack\n\nfile a bug\u0085now\r\n", encoding="utf-8")
    got = read_requests(todo, TOOLS)
    assert [(r.query, r.location) for r in got] == [
        ("send alice a dm\u2028on slack", "line 1"), ("file a bug\u0085now", "line 3")]
