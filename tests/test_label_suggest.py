"""``toolsel label --suggest``: the tools worth a labeled request next, as page 13 ranks them."""

from __future__ import annotations

import shutil
from pathlib import Path

from toolsel import load_queries, load_registry
from toolsel.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"


def test_suggest_prints_page_13s_ranking_and_appends_nothing(tmp_path, capsys):
    from toolsel.eval.crossfit import cross_fit, prepare
    from toolsel.pages.labels import tool_tables
    labels = tmp_path / "labels.jsonl"
    shutil.copy(DATA / "queries.jsonl", labels)
    before = labels.read_bytes()
    args = ["label", "--registry", str(DATA / "registry.json"), "--queries", str(labels),
            "--suggest", "--rank-by", "bm25", "--top", "3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert labels.read_bytes() == before  # nothing appended
    reg = load_registry(DATA / "registry.json")
    qs = load_queries(labels, reg)
    prep = prepare(reg, qs, "bm25")
    nxt = tool_tables(prep, cross_fit(reg, qs, prepared=prep))[1]
    assert len(nxt) >= 1  # the 30 article queries leave tools missed with no label
    lines = [ln.split() for ln in out.splitlines() if ln[:4].strip().isdigit()]
    assert [(int(r), t, int(m)) for r, t, m, _ in lines] == \
        [(int(r.rank), r.tool, int(r.missed_cold)) for r in nxt.head(3).itertuples()]
    assert (f"(+{len(nxt) - 3} more" in out) == (len(nxt) > 3)


def test_suggest_says_why_when_there_is_too_little(tmp_path, capsys):
    one = tmp_path / "one.jsonl"
    one.write_text((DATA / "queries.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n",
                   encoding="utf-8")
    assert main(["label", "--registry", str(DATA / "registry.json"), "--queries", str(one),
                 "--suggest"]) == 1
    assert "at least 2 groups" in capsys.readouterr().err
    assert main(["label", "--registry", str(DATA / "registry.json"), "--queries",
                 str(tmp_path / "missing.jsonl"), "--suggest"]) == 2
    assert "missing.jsonl: no such file" in capsys.readouterr().err
    assert main(["label", "--registry", str(DATA / "registry.json"), "--queries", str(one),
                 "--suggest", "--expected", "calculator"]) == 2
    assert "appends nothing" in capsys.readouterr().err
    assert not (tmp_path / "missing.jsonl").exists()
