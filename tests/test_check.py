"""toolsel check: baselines, regressions, thresholds, Markdown and JUnit outputs, the CI gate."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from toolsel import Query, Registry, Selector, Tool, load_queries, load_registry
from toolsel.cli import build_parser, main
from toolsel.data import DataError
from toolsel.tables.check import (FORMAT, Change, baseline_text, compare, load_baseline,
                                parse_baseline, parse_thresholds, run_check, selection_policy)
from toolsel.report.check_outputs import junit_xml, markdown_summary
from toolsel.synthetic import synthetic_queries, synthetic_registry, write_queries
from toolsel.synthetic import write_registry as write_synthetic_registry

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
XSD = ROOT / "tests" / "data" / "junit.xsd"

#: the committed gate's command (Makefile `check`, .ci/run)
GATE = ["check", "--registry", str(DATA / "registry.json"), "--queries",
        str(DATA / "queries.jsonl"), "--queries", str(DATA / "requests.jsonl"),
        "--baseline", str(DATA / "check_baseline.json")]


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _schema():
    import xmlschema
    return xmlschema.XMLSchema(str(XSD))


def _render(md: str) -> str:
    import mistune
    return mistune.html(md)


def _text(rendered: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


# --------------------------------------------------------------------------------------------
# by hand


def _tiny_queries():
    return [Query("q1", "current weather for a city", ("weather_lookup",)),
            Query("q2", "translate text", ("translate_text",)),
            Query("q3", "crunch some numbers", ("calculator",))]


def test_run_and_compare_by_hand(tiny):
    # Jaccard, top 1. q1: weather_lookup shares current/weather/for/a/city (5/6): rank 1.
    # q2: translate_text rank 1. q3: no tool shares a word: registry order, calculator 4th.
    reg = Registry(tiny)
    run = run_check(reg, _tiny_queries(), ["jaccard"], selection=selection_policy(1))
    reqs = run.runs["jaccard"].by_id()
    assert reqs["q1"].ranks == {"weather_lookup": 1} and reqs["q1"].ranking == ("weather_lookup",)
    assert reqs["q3"].ranks == {"calculator": 4}
    assert reqs["q1"].terms == {"weather_lookup": ("current", "weather", "city")}
    assert run.runs["jaccard"].summary == {"R@1": 0.666667, "Success@1": 0.666667,
                                           "Complete@1": 0.666667, "MRR": 0.75, "n_queries": 3}
    # the edit: weather_lookup keeps only "weather" (1/8 after the edit); stock_price shares
    # "for", "a" (2/9) and passes it; calculator now shares "crunch", "numbers": found
    edited = Registry([dataclasses.replace(t, description={
        "weather_lookup": "forecast service", "calculator": "crunch numbers"}.get(t.name,
                                                                                t.description))
        for t in tiny])
    result = compare(run_check(edited, _tiny_queries(), ["jaccard"], selection=selection_policy(1)),
                     run, registry=edited, explain=True)
    (lost,) = result.regressions
    assert lost.line() == ("q1 'current weather for a city': weather_lookup 1 → 2, passed by "
                           "stock_price")
    assert lost.explanation.lost_terms == ("current", "city")
    assert lost.explanation.missing_terms == ("current", "city")
    (found,) = result.improvements
    assert found.line() == "q3 'crunch some numbers': calculator 4 → 1"
    assert result.failed and not result.moves


def test_tolerance_moves_pass_and_misses_stay_quiet():
    """Hand-built runs (top 3): a move inside the top 3 passes, a tool missed both times is
    not listed, a tool dropping to 4 fails and names only the tools new above it."""
    from toolsel.tables.check import CheckRun, RequestResult, ScorerRun

    def run(*reqs):
        return CheckRun(selection_policy(3), (), {"s": ScorerRun("s", list(reqs), {})})

    before = run(RequestResult("m", "move", {"a": 2}, 3, ("b", "a"), {"a": ()}),
                 RequestResult("x", "missed", {"a": 5}, 3, ("b", "c", "d", "e", "a"), {}),
                 RequestResult("l", "lost", {"a": 3}, 3, ("b", "c", "a"), {"a": ("w",)}))
    after = run(RequestResult("m", "move", {"a": 1}, 3, ("a",), {"a": ()}),
                RequestResult("x", "missed", {"a": 9}, 3, tuple("bcdefghia"), {}),
                RequestResult("l", "lost", {"a": 4}, 3, ("d", "b", "c", "a"), {"a": ()}))
    result = compare(after, before)
    assert [(c.query_id, c.kind) for c in result.changes] == [("m", "moved"), ("l", "lost")]
    assert result.regressions[0].line() == "l 'lost': a 3 → 4, passed by d"
    assert result.moves[0].line() == "m 'move': a 2 → 1"
    assert not compare(after, after).failed and compare(after, before).failed
    # a request new to the suite, and one gone from it, are notes, not regressions
    notes = compare(run(*after.runs["s"].requests[:2],
                        RequestResult("n", "new", {"a": 1}, 3, ("a",), {})), before).notes
    assert notes == ["s: n is new (not in the baseline)",
                     "s: l is in the baseline but not in the queries"]


def test_passed_by_lists_only_new_tools_in_rank_order_and_is_capped():
    c = Change("s", "q9", "a request", "t", "lost", 3, 14, tuple(f"x{i}" for i in range(8)))
    assert c.line() == ("q9 'a request': t 3 → 14, passed by x0, x1, x2, x3, x4 and 3 more")
    assert "\n" not in Change("s", "q", "two\nlines\x1b[31m", "t", "lost", 1, 2, ("y",)).line()


def test_parse_thresholds():
    ts = parse_thresholds(["R@10=0.9,Complete@10=0.8", "MRR>=0.5", "success@sent=1"])
    assert [t.name for t in ts] == ["R@10", "Complete@10", "MRR", "Success@sent"]
    assert [t.minimum for t in ts] == [0.9, 0.8, 0.5, 1.0]
    for bad, msg in [("Foo@10=0.5", "unknown metric 'Foo'"), ("R=0.5", "needs a cut-off"),
                     ("R@0=0.5", "not an integer >= 1"), ("R@10=1.5", "not between 0 and 1"),
                     ("R@10=x", "not a number"), ("MRR@3=0.5", "takes no cut-off"),
                     ("R@10=0.5,R@10=0.6", "given twice"), ("R@10", "cannot read")]:
        with pytest.raises(ValueError, match=re.escape(msg)):
            parse_thresholds(bad)


def test_every_cutoff_metric_of_evaluate_is_a_threshold(registry, queries):
    from toolsel.tables.check import cutoff_metrics, metric_value
    from toolsel.eval.metrics import evaluate
    run = run_check(registry, queries, ["bm25"]).runs["bm25"]
    ranks = [list(r.ranks.values()) for r in run.requests]
    assert {"R", "Success", "Complete"} <= set(cutoff_metrics())
    for name in cutoff_metrics():
        (t,) = parse_thresholds(f"{name.lower()}@5=0.5")
        want = float(evaluate(ranks, [5])[f"{name}@k"][:, 0].mean())
        assert metric_value(run, t) == pytest.approx(want, abs=1e-6)


def test_thresholds_and_policy_selection(registry, queries):
    pol = selection_policy(policy="threshold:min_score=0.5,min_k=1,max_k=10")
    run = run_check(registry, queries, ["bm25"], selection=pol)
    text = baseline_text(run)
    assert '"n_sent": ' in text and '"selection": "threshold:min_score=0.5,min_k=1,max_k=10,scale=relative"' in text
    assert baseline_text(parse_baseline(text)) == text
    sr = run.runs["bm25"]
    sent = [r for r in sr.requests if r.n_sent < 10]
    assert sent, "some request sends fewer than max_k tools"
    # R@sent from the per-request ranks and n_sent, by hand
    want = sum(sum(r.sent(t) for t in r.ranks) / len(r.ranks) for r in sr.requests) / len(queries)
    assert sr.summary["R@sent"] == pytest.approx(want, abs=1e-6)
    res = compare(run, None, parse_thresholds(f"R@sent={want + 0.01:.4f},MRR=0.1"))
    assert [t.passed for t in res.thresholds] == [False, True] and res.failed
    with pytest.raises(ValueError, match="does not send a prefix"):
        selection_policy(policy="two_stage:n_servers=2,k=8")


# --------------------------------------------------------------------------------------------
# the baseline file


def test_baseline_is_deterministic_byte_for_byte(tmp_path, registry, queries):
    text = baseline_text(run_check(registry, queries, ["bm25", "jaccard"]))
    assert text == baseline_text(run_check(registry, queries, ["bm25", "jaccard"]))
    assert baseline_text(parse_baseline(text)) == text
    # one line per request, each a JSON object
    lines = [ln for ln in text.splitlines() if ln.lstrip().startswith('{"id"')]
    assert len(lines) == 2 * len(queries)
    # and from a fresh process through the command line
    out = tmp_path / "b.json"
    cmd = [sys.executable, "-m", "toolsel.cli", "check", "--registry",
           str(DATA / "registry.json"), "--queries", str(DATA / "queries.jsonl"),
           "--scorers", "bm25,jaccard", "--baseline", str(out), "--update-baseline"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.read_text(encoding="utf-8") == text


def test_bad_baselines_name_file_line_and_field(tmp_path, registry, queries):
    text = baseline_text(run_check(registry, queries[:3], ["bm25"]))
    path = tmp_path / "b.json"
    path.write_text(text.replace('"ranks": {"slack_send_dm": 1}', '"ranks": {"slack_send_dm": 0}'))
    with pytest.raises(DataError) as err:
        load_baseline(path)
    assert str(path) in str(err.value) and "line 8" in str(err.value)
    assert "query 'q01'" in str(err.value) and err.value.field == "ranks"
    lines = text.splitlines(keepends=True)
    path.write_text("".join(lines[:6] + ["<<<<<<< HEAD\n"] + lines[6:]))  # a merge conflict
    with pytest.raises(DataError, match=r"line 7, column 1"):
        load_baseline(path)
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(DataError, match="not a toolsel check baseline"):
        load_baseline(path)
    path.write_text(text.replace('"top": ["slack_send_dm"]', '"top": ["slack_send_message"]'))
    with pytest.raises(DataError, match="'top' does not list it"):
        load_baseline(path)
    assert FORMAT in text


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    base = ["check", "--registry", str(DATA / "registry.json"), "--queries",
            str(DATA / "queries.jsonl"), "--scorers", "bm25"]
    b = tmp_path / "b.json"
    cases = [
        (base, "nothing to check against"),
        (base + ["--baseline", str(b)], "baseline file not found"),
        (base + ["--min", "R@10=2"], "not between 0 and 1"),
        (base + ["--min", "R@10=0.5", "--scorers", "bm25,nope"], "nope"),
        (base + ["--update-baseline", "--min", "R@10=0.1"], "--update-baseline needs --baseline"),
    ]
    for argv, msg in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert msg in err and err.count("\n") == 1, err
    # a user's file that is not a baseline is never overwritten
    b.write_text("my notes\n")
    assert main(base + ["--baseline", str(b), "--update-baseline"]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert b.read_text() == "my notes\n"
    # settings that differ from the baseline's
    b.unlink()
    assert main(base + ["--baseline", str(b), "--update-baseline"]) == 0
    capsys.readouterr()
    assert main(base + ["--baseline", str(b), "--top-k", "5"]) == 2
    assert "recorded with selection top_k:k=10" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(base + ["--baseline", str(b), "--top-k", "5", "--policy", "top_k:k=3"])
    assert exc.value.code == 2


# --------------------------------------------------------------------------------------------
# done when: an edited description fails with the exact line, then passes after an update


def _edit(tmp_path, registry, name, description) -> Path:
    tools = [dataclasses.replace(t, description=description) if t.name == name else t
             for t in registry]
    path = tmp_path / "registry.json"
    path.write_text(json.dumps([t.to_record() for t in tools], indent=1), encoding="utf-8")
    return path


def test_edited_description_fails_with_the_exact_line_then_passes_after_update(
        tmp_path, registry, queries, capsys):
    reg_path = tmp_path / "registry.json"
    reg_path.write_bytes((DATA / "registry.json").read_bytes())
    baseline = tmp_path / "baseline.json"
    argv = ["check", "--registry", str(reg_path), "--queries", str(DATA / "queries.jsonl"),
            "--scorers", "jaccard,bm25", "--baseline", str(baseline)]
    assert main(argv + ["--update-baseline"]) == 0
    recorded = baseline.read_bytes()
    assert main(argv) == 0
    assert "\npassed\n" in capsys.readouterr().out

    # a shortened description: write_file's overlap ratio with q02 grows under Jaccard;
    # github_create_issue loses "repo" (and more) under BM25
    _edit(tmp_path, registry, "write_file",
          "Create a new file or overwrite an existing file in the workspace")
    edited = load_registry(_edit(tmp_path, load_registry(reg_path), "github_create_issue",
                                 "Create a new item in a GitHub repository."))
    summary, junit = tmp_path / "out" / "summary.md", tmp_path / "out" / "junit.xml"
    assert main(argv + ["--explain", "--summary", str(summary), "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    # hand-checked against the Jaccard ranking of q02 (the article's scorer, fixed tokenizer)
    assert ("q02 'let the team know in the channel that the deploy finished': "
            "slack_send_message 10 → 11, passed by write_file") in lines
    # the BM25 line, rebuilt from Selector rankings of both registries
    q = next(q for q in queries if q.id == "q03")
    before = [t.name for t, _ in Selector(registry, "bm25", always_include=()).rank(q.query)]
    after = [t.name for t, _ in Selector(edited, "bm25", always_include=()).rank(q.query)]
    rb, ra = before.index("github_create_issue") + 1, after.index("github_create_issue") + 1
    assert rb <= 10 < ra
    passed = [t for t in after[:ra - 1] if t not in before[:rb - 1]]
    shown = ", ".join(passed[:5]) + (f" and {len(passed) - 5} more" if len(passed) > 5 else "")
    want = (f"q03 'file a bug report on the backend repo': github_create_issue {rb} → {ra}, "
            f"passed by {shown}")
    assert want in lines
    explain = lines[lines.index(want) + 1]
    assert explain.startswith("    failure mode: ") and "words its text lost: repo" in explain
    assert lines[-1] == "failed: 2 regressions"

    # JUnit: valid against the schema, one testcase per request (+0 thresholds), 2 failures
    import xml.etree.ElementTree as ET
    _schema().validate(str(junit))
    root = ET.parse(junit).getroot()
    assert root.get("tests") == str(2 * len(queries)) and root.get("failures") == "2"
    failing = {(s.get("name"), c.get("name").split()[0]) for s in root for c in s
               if c.tag == "testcase" and c.find("failure") is not None}
    assert failing == {("toolsel check jaccard", "q02"), ("toolsel check bm25", "q03")}
    fail = next(c for s in root for c in s if c.tag == "testcase"
                and c.get("name").startswith("q03") and c.find("failure") is not None)
    assert fail.find("failure").get("message") == want

    # Markdown: renders with the verdict, the lines as text, no stray markup
    md = summary.read_text(encoding="utf-8")
    rendered = _render(md)
    assert "<h2>toolsel check: failed: 2 regressions</h2>" in rendered
    text = _text(rendered)
    assert want in text and "slack_send_message 10 → 11, passed by write_file" in text
    assert "<table>" in rendered and "--update-baseline" in text

    # accept: the baseline is re-recorded, the check passes, the diff is the changed lines
    assert main(argv + ["--update-baseline"]) == 0
    capsys.readouterr()
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "passed"
    changed = [(a, b) for a, b in zip(recorded.decode().splitlines(),
                                      baseline.read_text().splitlines()) if a != b]
    assert any('"id": "q03"' in a for a, _ in changed)
    assert len(changed) < 40  # one line per changed request plus summaries


def test_step_summary_is_appended(tmp_path, monkeypatch, capsys):
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert main(["check", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "queries.jsonl"), "--scorers", "bm25", "--min", "R@10=0.99"]) == 1
    text = step.read_text()
    assert text.startswith("earlier step\n## toolsel check: failed: 1 threshold missed")
    assert "| <code>bm25</code> | R@10 |" in text and "**missed**" in text


def test_hostile_text_is_escaped_in_markdown_and_valid_in_junit(tmp_path):
    tools = [Tool("ok_tool", "send a message now img src x onerror alert 1 col <b>bold</b>"),
             Tool("x|y", "# not a heading"), Tool("other", "unrelated words")]
    qs = [Query("<script>", "send a message now <img src=x onerror=alert(1)> | col\x07",
                ("ok_tool",))]
    base = run_check(tools, qs, ["jaccard"], selection=selection_policy(1))
    worse = [Tool("ok_tool", "nothing"), *tools[1:]]
    result = compare(run_check(worse, qs, ["jaccard"], selection=selection_policy(1)), base)
    assert len(result.regressions) == 1
    rendered = _render(markdown_summary(result, registry="<r>.json", queries="q|.jsonl"))
    assert "<img" not in rendered and "<script" not in rendered and "<b>" not in rendered
    assert "<img src=x onerror=alert(1)> | col\\x07': ok_tool 1 → 2, passed by x|y" in _text(rendered)
    data = junit_xml(result)
    _schema().validate(data.decode("utf-8"))
    assert b"\x07" not in data


# --------------------------------------------------------------------------------------------
# the project's own gate, CI examples


def test_bundled_data_passes_its_committed_baseline(capsys):
    """The CI gate (`make check`, .ci/run): bm25 and the default scorer (the real offline
    embedding model) on the bundled registry and requests against data/check_baseline.json."""
    code = main(GATE)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "default: R@10" in out and "bm25: R@10" in out
    assert out.splitlines()[-1] == "passed"


def test_ci_examples_use_commands_that_parse_and_run(tmp_path):
    import yaml
    wf = yaml.safe_load((ROOT / "examples" / "ci" / "toolsel-check.yml").read_text())
    steps = [s for job in wf["jobs"].values() for s in job["steps"]]
    runs = [s["run"] for s in steps if "run" in s and "toolsel check" in s["run"]]
    assert runs and any("--junit" in r and "--summary" in r for r in runs)
    commands = [c.strip() for r in runs for c in r.replace("\\\n", " ").splitlines()
                if c.strip().startswith("toolsel ")]
    assert any(c.startswith("toolsel check ") for c in commands)
    for c in commands:  # every toolsel command line of the workflow parses
        args = build_parser().parse_args(shlex.split(c)[1:])
        if args.command == "check":
            assert args.junit and args.summary and args.baseline
    assert any(s.get("uses", "").startswith("actions/upload-artifact") for s in steps)

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"toolsel-validate", "toolsel-check"}
    # each hook runs as its entry plus the user's args (pre-commit's contract)
    args = {"toolsel-validate": ["--registry", str(DATA / "registry.json"), "--queries",
                                 str(DATA / "queries.jsonl")],
            "toolsel-check": GATE[1:]}
    for h in hooks:
        entry = shlex.split(h["entry"])
        assert entry[0] == "toolsel" and h["pass_filenames"] is False
        assert re.search(h["files"], "tools/registry.json")
        done = subprocess.run([sys.executable, "-m", "toolsel.cli", *entry[1:],
                               *args[h["id"]]], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr


# --------------------------------------------------------------------------------------------
# any registry: a synthetic one through files


def test_synthetic_registry_round_trip(tmp_path, capsys):
    reg = synthetic_registry(300, seed=3)
    qs = synthetic_queries(reg, 60, seed=3)
    rp, qp = tmp_path / "r.jsonl", tmp_path / "q.jsonl"
    write_synthetic_registry(reg, rp)
    write_queries(qs, qp)
    argv = ["check", "--registry", str(rp), "--queries", str(qp), "--scorers", "bm25",
            "--always-include", "marked", "--top-k", "5", "--baseline", str(tmp_path / "b.json")]
    assert main(argv + ["--update-baseline"]) == 0
    capsys.readouterr()
    b = load_baseline(tmp_path / "b.json")
    assert b.always_include == tuple(sorted(reg.always_include, key=reg.index))
    assert b.selection_spec == "top_k:k=5"
    # the baseline's settings are used when no flag is given
    assert main(argv[:5] + ["--baseline", str(tmp_path / "b.json")]) == 0
    assert "selection top_k:k=5" in capsys.readouterr().out
    assert load_queries(qp, load_registry(rp))
