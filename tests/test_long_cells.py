"""A long text in a report table: a preview, the whole text one click away (issue 38)."""

from __future__ import annotations

import base64

import pandas as pd

from toolsel.report import markdown as md
from toolsel.report.html import sanitize_html


def test_a_long_request_is_previewed_and_kept_whole_on_demand():
    image = base64.b64encode(bytes(range(256)) * 55).decode()  # ~18,800 characters
    text = f"describe this picture <b>now</b> {image}"
    out = md.table(pd.DataFrame({"request": [text, "short one"], "rank": [3, 1]}))
    row = [ln for ln in out.splitlines() if "details" in ln][0]
    assert row.count("<details>") == 1 and "characters)</summary>" in row
    summary = row.split("</summary>")[0]
    assert len(summary) < 400  # the table's width is set by the preview, not the request
    assert md.escape(image) in row  # the whole text is there, on demand
    assert "<b>" not in row and "&lt;b&gt;" in row  # escaped, no tag opens
    assert "| short one |" in out or "short one" in out.splitlines()[-1]
    kept = sanitize_html(f"<table><tr><td>{row}</td></tr></table>")
    assert "<details>" in kept and "<summary>" in kept


def test_a_tool_whose_schema_names_no_property_has_no_parameters():
    from toolsel import Tool
    from toolsel.pages.default_scorer import _has_parameters
    empty = Tool("now", "the time", parameters={"type": "object", "properties": {}})
    one = Tool("tz", "a zone's time", parameters={"type": "object",
                                                   "properties": {"zone": {"type": "string"}}})
    assert not _has_parameters(empty) and not _has_parameters(Tool("x", "y"))
    assert _has_parameters(one)


def test_one_request_shows_its_first_significant_digit():
    from toolsel.report import claims
    assert "by 6.2 points" in claims.one_request(16, "x.csv").text
    assert "by 0.04 points" in claims.one_request(2451, "x.csv").text  # never "0.0"
    assert "by 0.4 points" in claims.one_request(272, "x.csv").text
