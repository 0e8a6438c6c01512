"""Issue 38's smaller items: what ``check --update-baseline`` says when it creates the file,
``check --explain`` words as the request writes them and no whole request listed, and
``label --suggest`` on a tool just labeled, under a header that says what it counts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from toolsel.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"

REQUEST = ("prepare a statistical analysis of quarterly sales figures for the board meeting "
           "with charts tables appendix glossary footnotes summaries")


def _files(tmp_path: Path, report_text: str) -> tuple[Path, Path]:
    tools = [{"name": "report_builder", "description": report_text},
             {"name": "sales_dashboard",
              "description": "Quarterly sales figures on a dashboard with charts and tables"},
             {"name": "send_email", "description": "Send an email to a recipient"},
             {"name": "calendar_event", "description": "Create a calendar event"}]
    reg = tmp_path / "registry.json"
    reg.write_text(json.dumps(tools), encoding="utf-8")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": REQUEST,
                                   "expected": ["report_builder"]}) + "\n", encoding="utf-8")
    return reg, queries


def test_baseline_created_says_recorded_then_re_recorded(tmp_path, capsys):
    reg, queries = _files(tmp_path, "Build a statistical analysis report for the board")
    baseline = tmp_path / "baseline.json"
    argv = ["check", "--registry", str(reg), "--queries", str(queries), "--scorers", "bm25",
            "--top-k", "1", "--baseline", str(baseline), "--update-baseline"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"baseline {baseline} recorded (a new file): commit it" in out
    assert "re-recorded" not in out
    _files(tmp_path, "Build a statistical analysis report for the board meeting")
    assert main(argv) == 0
    assert f"baseline {baseline} re-recorded: review its diff" in capsys.readouterr().out
    assert main(argv) == 0
    assert f"baseline {baseline} is unchanged" in capsys.readouterr().out


def test_explain_shows_words_as_written_and_the_words_that_passed_it(tmp_path, capsys):
    reg, queries = _files(tmp_path, "Build a statistical analysis report of quarterly sales "
                                    "figures for the board meeting")
    baseline = tmp_path / "baseline.json"
    base = ["check", "--registry", str(reg), "--queries", str(queries), "--scorers", "bm25",
            "--top-k", "1", "--baseline", str(baseline)]
    assert main(base + ["--update-baseline"]) == 0
    capsys.readouterr()
    _files(tmp_path, "Make documents")  # it now shares no word of the request
    assert main(base + ["--explain"]) == 1
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, ln in enumerate(lines) if "report_builder 1 → 2" in ln)
    explain = lines[at + 1]
    assert ("words its text lost: statistical, analysis, quarterly, sales, figures, board, "
            "meeting;") in explain  # "analysis", not the folded "analysi"
    assert "analysi," not in explain and "analysi;" not in explain
    # the words that put sales_dashboard above it, not the whole request
    assert explain.endswith("request words the tools passing it have and its text lacks: "
                            "quarterly, sales, figures, charts, tables")
    assert "glossary" not in explain and "footnotes" not in explain


def test_explain_without_passing_words_lists_at_most_eight(tmp_path):
    from toolsel.tables.check import Change, Explanation
    words = tuple(f"w{i}" for i in range(12))
    change = Change("bm25", "q1", "x", "t", "lost", 1, 2,
                    explanation=Explanation("vocabulary gap", (), words))
    assert change.explain_line() == ("failure mode: vocabulary gap; words its text lost: "
                                     "(none); request words its text lacks: w0, w1, w2, w3, "
                                     "w4, w5, w6, w7 and 4 more")


def test_suggest_says_what_it_counts_and_why_a_tool_just_labeled_is_there(tmp_path, capsys):
    labels = tmp_path / "labels.jsonl"
    shutil.copy(DATA / "queries.jsonl", labels)
    with labels.open("a", encoding="utf-8") as fh:  # what `toolsel label` just appended
        fh.write(json.dumps({"id": "q31", "query": "put a party parrot under the deploy "
                                                   "announcement",
                             "expected": ["slack_add_reaction"]}) + "\n")
    assert main(["label", "--registry", str(DATA / "registry.json"), "--queries", str(labels),
                 "--suggest", "--rank-by", "bm25", "--top", "40"]) == 0
    out = capsys.readouterr().out
    assert "tools worth another labeled request (" in out
    assert "missed requests" not in out
    rows = [ln.split() for ln in out.splitlines() if ln[:4].strip().isdigit()]
    note = ("note: slack_add_reaction is named by the last labeled request (q31); its own "
            "label is held out when it is scored, so a second request worded differently is "
            "what makes the label count")
    # whether the learned selector misses it unlearned depends on the learning procedure;
    # when it is suggested, the note says why (the note itself: the test below)
    if "slack_add_reaction" in [r[1] for r in rows]:
        assert out.splitlines()[-1] == note
    else:
        assert "note:" not in out


def test_note_on_a_suggested_tool_the_last_request_names(capsys):
    import pandas as pd

    from toolsel import Query
    from toolsel.cli.label import _note_just_labeled
    shown = pd.DataFrame({"tool": ["github_create_issue", "slack_add_reaction", "calculator"]})
    _note_just_labeled(Query("q9", "react with a thumbs up and file it",
                             ("slack_add_reaction", "github_create_issue")), shown)
    assert capsys.readouterr().out == (
        "note: github_create_issue, slack_add_reaction are named by the last labeled request "
        "(q9); their own label is held out when they are scored, so a second request worded "
        "differently is what makes the label count\n")
    _note_just_labeled(Query("q9", "read a file", ("read_file",)), shown)
    assert capsys.readouterr().out == ""
