"""What ``toolsel check`` writes for CI: a Markdown summary and a JUnit XML file.

:func:`markdown_summary` is for a pull-request comment or a GitHub job summary: the verdict,
the summary metrics against the baseline, thresholds, then every regression, improvement and
tolerated rank move (long lists cut at :data:`MAX_ROWS`). Every string that comes from data
(request text, tool and scorer names, file names) is escaped (:mod:`toolsel.report.markdown`),
so it renders as the characters it holds and opens no tag, link or table column.

:func:`junit_xml` writes the JUnit XML that CI systems display natively (the common
Jenkins/Ant structure: ``testsuites`` > ``testsuite`` per scorer > ``testcase`` per labeled
request, plus one per threshold). A request's testcase fails when it lost a required tool
(one ``failure`` element holding its regression lines); a threshold's when it is missed.
Control, bidi and line-separator characters from data are shown as escapes
(:func:`toolsel.visible.visible`); what XML 1.0 cannot hold otherwise is dropped.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from ..tables.check import Change, CheckResult, one_line
from ..visible import visible
from .markdown import code, escape

__all__ = ["markdown_summary", "junit_xml", "verdict", "MAX_ROWS", "MARKDOWN_FILE_MARK"]

#: Longest list of changes shown in the Markdown summary (the rest counted).
MAX_ROWS = 200


def verdict(result: CheckResult) -> str:
    """``"passed"`` or ``"failed: 2 regressions, 1 threshold missed"``."""
    if not result.failed:
        return "passed"
    parts = []
    if result.regressions:
        n = len(result.regressions)
        parts.append(f"{n} regression{'s' * (n != 1)}")
    if result.missed_thresholds:
        n = len(result.missed_thresholds)
        parts.append(f"{n} threshold{'s' * (n != 1)} missed")
    return "failed: " + ", ".join(parts)


def _num(v) -> str:
    return "–" if v is None else f"{v:.3f}"


def _metric_cell(now, before) -> str:
    if before is None or now is None:
        return _num(now)
    d = now - before
    sign = "+" if d > 0 else "−" if d < 0 else "±"
    return f"{now:.3f} ({sign}{abs(d):.3f})"


def _change_item(c: Change) -> list[str]:
    """A change as a list item that renders as its console line (data escaped)."""
    lines = [f"- {escape(c.line())}"]
    if c.explanation is not None:
        lines.append(f"  - {escape(c.explain_line())}")
    return lines


def _section(title: str, changes: Sequence[Change], *, details: bool = False) -> list[str]:
    if not changes:
        return []
    shown = list(changes[:MAX_ROWS])
    body = [line for c in shown for line in _change_item(c)]
    if len(changes) > len(shown):
        body.append(f"- … and {len(changes) - len(shown)} more")
    if details:
        return ["<details><summary>" + escape(f"{title} ({len(changes)})") + "</summary>", "",
                *body, "", "</details>", ""]
    return [f"### {escape(title)} ({len(changes)})", "", *body, ""]


#: The last line of the ``--summary`` file (not of the job summary): toolsel's mark, so a
#: later run knows the file is its own (:func:`toolsel.io.has_mark`); not rendered.
MARKDOWN_FILE_MARK = "<!-- written by toolsel check -->\n"


def markdown_summary(result: CheckResult, *, registry: str = "", queries: str = "",
                     baseline: str | None = None, command: str | None = None) -> str:
    """The check as Markdown (one document, ending in a newline).

    ``registry``, ``queries``, ``baseline`` name the inputs; ``command`` is shown as the way
    to accept the changes (re-record the baseline).
    """
    out = [f"## toolsel check: {escape(verdict(result))}", ""]
    out += [_inputs_line(result.run, registry, queries, baseline), ""]
    if not result.compared and result.baseline is not None:
        out += ["The baseline's settings differ from this run's: nothing was compared.", ""]
    out += _summary_table(result)
    if result.compared:
        out += ["Metric changes are against the baseline. A required tool the baseline sent "
                "and this run does not is a regression (fails the check); one sent only now "
                "is an improvement; a rank change of a tool sent both times is a move "
                "(tolerated).", ""]
    out += _thresholds_table(result)
    out += _section("Regressions", result.regressions)
    out += _section("Improvements", result.improvements)
    out += _section("Rank moves inside the selection (tolerated)", result.moves, details=True)
    out += _notes_section(result.notes)
    if command and (result.regressions or result.improvements):
        out += ["To accept these changes, re-record the baseline and commit its diff:", "",
                f"    {command}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _inputs_line(run, registry: str, queries: str, baseline: str | None) -> str:
    """The inputs of the check in one sentence: registry, requests, selection,
    always-include tools and baseline (those named)."""
    n_req = len(next(iter(run.runs.values())).requests) if run.runs else 0
    inputs = [f"registry {code(registry)} ({run.n_tools:,} tools)" if registry else None,
              f"requests {code(queries)} ({n_req:,})" if queries else None,
              f"selection {code(run.selection_spec)}",
              "always-include " + (", ".join(code(a) for a in run.always_include) or "none"),
              f"baseline {code(baseline)}" if baseline else "no baseline"]
    return "; ".join(p for p in inputs if p) + "."


def _summary_table(result: CheckResult) -> list[str]:
    """The summary table: one row per scorer, its metrics against the baseline's and the
    counts of its changes."""
    run = result.run
    keys = [k for k in next(iter(run.runs.values())).summary if k != "n_queries"] \
        if run.runs else []
    head = ["scorer", *keys, "requests", "regressions", "improvements", "moves"]
    out = ["| " + " | ".join(escape(h) for h in head) + " |",
           "|" + "|".join([" --- "] + [" ---: "] * (len(head) - 1)) + "|"]
    for label, sr in run.runs.items():
        old = result.baseline.runs.get(label) if result.baseline and result.compared else None
        cells = [code(label)]
        for k in keys:
            cells.append(_metric_cell(sr.summary.get(k), old.summary.get(k) if old else None))
        counts = ([str(len(result.of_kind(kind, label))) for kind in ("lost", "found", "moved")]
                  if old else ["–"] * 3)
        cells += [str(sr.summary.get("n_queries", "")), *counts]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return out


def _thresholds_table(result: CheckResult) -> list[str]:
    """The thresholds section (none without thresholds)."""
    if not result.thresholds:
        return []
    out = ["### Thresholds", "", "| scorer | metric | value | minimum | result |",
           "| --- | --- | ---: | ---: | --- |"]
    for t in result.thresholds:
        out.append(f"| {code(t.scorer)} | {escape(t.threshold.name)} | {_num(t.value)} | "
                   f"{t.threshold.minimum:g} | {'ok' if t.passed else '**missed**'} |")
    out.append("")
    return out


def _notes_section(notes: Sequence[str]) -> list[str]:
    """The notes in a collapsed list (cut at MAX_ROWS; none without notes)."""
    if not notes:
        return []
    shown = notes[:MAX_ROWS]
    out = ["<details><summary>" + escape(f"Notes ({len(notes)})") + "</summary>",
           "", *[f"- {escape(one_line(n))}" for n in shown]]
    if len(notes) > len(shown):
        out.append(f"- … and {len(notes) - len(shown)} more")
    out += ["", "</details>", ""]
    return out


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xa(text: object) -> str:
    """Text for an XML attribute (a test's name, a failure's message): one line, so every
    control character from data, newline and tab included, is shown as an escape (a request id
    with a newline cannot forge a line in a CI log)."""
    return _XML_BAD.sub("", visible(str(text)))


def _x(text: object) -> str:
    """Text for XML: control, bidi and line-separator characters from data shown as escapes
    (:func:`toolsel.visible.visible`; newlines and tabs kept), what XML cannot hold dropped."""
    return _XML_BAD.sub("", visible(str(text), keep="\t\n"))


def junit_xml(result: CheckResult, *, seconds: dict[str, float] | None = None) -> bytes:
    """JUnit XML (UTF-8 bytes): a ``testsuite`` per scorer, a ``testcase`` per labeled
    request (failing when it lost a required tool) and per threshold (failing when missed).

    ``seconds`` per scorer goes into the suites' ``time`` (0 without it).
    """
    run = result.run
    root = ET.Element("testsuites", name="toolsel check")
    total = {"tests": 0, "failures": 0}
    for label, sr in run.runs.items():
        tests, failures = _junit_suite(root, result, label, sr, (seconds or {}).get(label, 0.0))
        total["tests"] += tests
        total["failures"] += failures
    root.set("tests", str(total["tests"]))
    root.set("failures", str(total["failures"]))
    root.set("errors", "0")
    root.set("time", f"{sum((seconds or {}).values()):.3f}")
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _junit_suite(root: ET.Element, result: CheckResult, label: str, sr,
                 secs: float) -> tuple[int, int]:
    """One scorer's ``testsuite`` under ``root``; returns its (tests, failures)."""
    run = result.run
    suite = ET.SubElement(root, "testsuite", name=_xa(f"toolsel check {label}"))
    props = ET.SubElement(suite, "properties")
    # written_by: toolsel's mark (:func:`toolsel.io.has_mark`), so a later run may replace it
    for k, v in (("written_by", "toolsel check"), ("scorer", label),
                 ("selection", run.selection_spec),
                 ("always_include", ",".join(run.always_include)),
                 ("compared_with_baseline", str(result.compared).lower())):
        ET.SubElement(props, "property", name=k, value=_xa(v))
    tests = failures = 0
    old = result.baseline.runs.get(label) if result.baseline and result.compared else None
    before = old.by_id() if old else {}
    for r in sr.requests:
        tests += 1
        failures += _junit_request(suite, result, label, r, before.get(r.id))
    for t in result.thresholds:
        if t.scorer != label:
            continue
        case = ET.SubElement(suite, "testcase",
                             classname=_xa(f"toolsel.check.{label}.thresholds"),
                             name=_xa(f"{t.threshold.name} >= {t.threshold.minimum:g}"),
                             time="0")
        tests += 1
        if not t.passed:
            failures += 1
            ET.SubElement(case, "failure", type="threshold", message=_xa(t.line()))
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    suite.set("time", f"{secs:.3f}")
    return tests, failures


def _junit_request(suite: ET.Element, result: CheckResult, label: str, r, b) -> int:
    """One request's ``testcase`` under ``suite`` (``b``: its baseline result or None);
    returns 1 when it failed (lost a required tool), else 0."""
    case = ET.SubElement(suite, "testcase", classname=_xa(f"toolsel.check.{label}"),
                         name=_xa(f"{r.id} {one_line(r.query, 120)}"), time="0")
    changes = result.request_changes(label, r.id)
    lost = [c for c in changes if c.kind == "lost"]
    if lost:
        fail = ET.SubElement(case, "failure", type="regression", message=_xa(lost[0].line()))
        body = []
        for c in lost:
            body.append(c.line())
            if c.explanation is not None:
                body.append("  " + c.explain_line())
        fail.text = _x("\n".join(body))
    status = [_rank_status(r, b, tool, rank) for tool, rank in r.ranks.items()]
    if not r.ranks:
        status.append("every required tool is always-include (not ranked)")
    status += [c.line() for c in changes if c.kind != "lost"]
    ET.SubElement(case, "system-out").text = _x("\n".join(status))
    return 1 if lost else 0


def _rank_status(r, b, tool: str, rank: int) -> str:
    """A required tool's rank now (sent or missed), and in the baseline ``b`` if it ranked."""
    was = ""
    if b is not None and tool in b.ranks:
        was = f", baseline {b.ranks[tool]} ({'sent' if b.sent(tool) else 'missed'})"
    return f"{visible(tool)}: rank {rank} ({'sent' if r.sent(tool) else 'missed'}){was}"
