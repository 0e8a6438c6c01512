"""The multi-tool pages run from the labeled queries when some need several tools (issue 38:
pages 07 and 09 were skipped for "no --requests file" though 77 requests needed several)."""

from __future__ import annotations

import json

from conftest import DATA, ROOT
from toolsel.report.plan import UserData, notebook_plan


def _plan(tmp_path, lines):
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    nbs = sorted((ROOT / "notebooks").glob("0[79]_*.ipynb"))
    assert len(nbs) == 2
    return q, notebook_plan(nbs, UserData(registry=(DATA / "registry.json").resolve(),
                                          queries=q.resolve()))


def test_queries_needing_several_tools_feed_the_multi_tool_pages(tmp_path):
    q, plan = _plan(tmp_path, [
        {"id": "a", "query": "send the report to alice", "expected": ["slack_send_dm"]},
        {"id": "b", "query": "find the doc and share it",
         "expected": ["drive_search_files", "drive_share_file"]}])
    for p in plan:
        assert p.skip is None, p.skip
        assert p.parameters["requests"] == str(q.resolve())


def test_single_tool_queries_still_say_what_is_missing(tmp_path):
    _, plan = _plan(tmp_path, [
        {"id": "a", "query": "send the report to alice", "expected": ["slack_send_dm"]},
        {"id": "b", "query": "what is 3 times 4", "expected": ["calculator", "calculator"]}])
    assert all(p.skip == "no --requests file" for p in plan)
