"""Report files compared at a stated tolerance (toolsel.report.stable), on real files."""

from __future__ import annotations

import numpy as np
import pytest

from toolsel.report.stable import (ATOL, RTOL, differing_numbers, equal_within_tolerance,
                                   keep_equal_files)

# the committed ranking_default.csv and the same table regenerated on another CPU (the
# newcomer's fresh clone): one embedding score differs in its sixth decimal
OURS = b"rank,tool,score\n1,github_create_issue,0.105349\n2,github_create_pr,0.098\n"
THEIRS = b"rank,tool,score\n1,github_create_issue,0.105348\n2,github_create_pr,0.098\n"


def test_a_float_models_last_digit_is_within_tolerance():
    assert equal_within_tolerance(OURS, THEIRS)
    assert differing_numbers(OURS, THEIRS) == [("0.105349", "0.105348")]
    assert differing_numbers(OURS, OURS) == []


@pytest.mark.parametrize("changed", [
    b"rank,tool,score\n1,github_create_pr,0.105349\n2,github_create_issue,0.098\n",  # order
    b"rank,tool,score\n2,github_create_issue,0.105349\n2,github_create_pr,0.098\n",  # a rank
    b"rank,tool,score\n1,github_create_issue,0.106349\n2,github_create_pr,0.098\n",  # 1e-3
    b"rank,tool,score\n1,github_create_issue,0.105349\n",                           # a row
    b"rank,tool,score\n1,github_create_issue,0.105349\n2,github_create_pr,0.098,x\n",  # text
])
def test_what_a_reader_can_see_is_never_within_tolerance(changed):
    assert not equal_within_tolerance(changed, OURS)
    assert differing_numbers(changed, OURS) is None


def test_tolerance_is_relative_with_an_absolute_floor():
    assert equal_within_tolerance(b"x 1000.00", b"x 1000.05")       # 5e-5 relative
    assert not equal_within_tolerance(b"x 1000.0", b"x 1000.2")      # 2e-4 relative
    assert equal_within_tolerance(b"0.000001", b"0.000003")          # below ATOL
    assert not equal_within_tolerance(b"0.00001", b"0.00003")        # above it
    assert not equal_within_tolerance(b"10.5%", b"10.6%")            # a shown percentage
    assert RTOL <= 1e-4 and ATOL <= 5e-6


def test_keep_equal_files_keeps_previous_bytes_only_within_tolerance(tmp_path):
    built, prev = tmp_path / "build" / "04_explorer", tmp_path / "reports" / "04_explorer"
    built.mkdir(parents=True)
    prev.mkdir(parents=True)
    (built / "ranking_default.csv").write_bytes(THEIRS)
    (prev / "ranking_default.csv").write_bytes(OURS)
    changed = b"rank,tool,score\n1,github_create_pr,0.2\n"
    (built / "ranking_bm25.csv").write_bytes(changed)
    (prev / "ranking_bm25.csv").write_bytes(OURS)
    (built / "figure.png").write_bytes(b"\x89PNG 0.105348")
    (prev / "figure.png").write_bytes(b"\x89PNG 0.105349")
    (built / "new.csv").write_bytes(THEIRS)  # nothing to keep
    before = (prev / "ranking_default.csv").stat().st_mtime_ns
    assert keep_equal_files(built, prev) == ["ranking_default.csv"]
    assert (built / "ranking_default.csv").read_bytes() == OURS
    assert (built / "ranking_bm25.csv").read_bytes() == changed
    assert (built / "figure.png").read_bytes() == b"\x89PNG 0.105348"   # binary: as built
    assert (prev / "ranking_default.csv").stat().st_mtime_ns == before    # only read
    # one file, and a missing previous output
    single = tmp_path / "build" / "explorer.html"
    single.write_bytes(b"<p>0.105348</p>")
    (tmp_path / "reports" / "explorer.html").write_bytes(b"<p>0.105349</p>")
    assert keep_equal_files(single, tmp_path / "reports" / "explorer.html") == ["explorer.html"]
    assert keep_equal_files(built, tmp_path / "nowhere") == []


def test_keep_equal_files_never_reads_through_a_link(tmp_path):
    """A previous output that is a link (planted in a shared folder) is not read."""
    built, prev, elsewhere = tmp_path / "b", tmp_path / "r", tmp_path / "elsewhere"
    for d in (built, prev, elsewhere):
        d.mkdir()
    (built / "t.csv").write_bytes(THEIRS)
    (elsewhere / "t.csv").write_bytes(OURS)
    (prev / "t.csv").symlink_to(elsewhere / "t.csv")
    assert keep_equal_files(built, prev) == []
    (prev / "t.csv").unlink()
    (prev / "sub").symlink_to(elsewhere, target_is_directory=True)
    (built / "sub").mkdir()
    (built / "sub" / "t.csv").write_bytes(THEIRS)
    assert keep_equal_files(built, prev) == []
    assert (built / "sub" / "t.csv").read_bytes() == THEIRS


class _Drifting:
    """A fitted scorer whose scores move by about 2e-7 (relative), as a float model's do on
    another CPU (other kernels, other summation order)."""

    def __init__(self, scorer):
        self._scorer = scorer

    def __getattr__(self, name):
        return getattr(self._scorer, name)

    def score_many(self, texts):
        scores = np.asarray(self._scorer.score_many(texts), dtype=np.float64)
        # a function of the value, so equal scores stay equal (ties are ties on every CPU)
        return scores * (1 + 2e-7 * np.sin(scores * 1e4))


def test_explorer_written_on_another_cpu_is_kept_byte_for_byte(monkeypatch, tmp_path):
    """explorer.html embeds rounded scores; scores that drift in their seventh digit (another
    CPU) give a page the report keeps as the previous bytes: numbers within tolerance, or one
    unit apart in a rounded last digit. The unrounded scale the page once embedded differed
    in its last digits on another machine (issue 39)."""
    from toolsel import load_queries, load_registry
    from toolsel.report import explorer_data as xd
    from toolsel.report.explorer_page import render_explorer
    from conftest import DATA

    reg = load_registry(DATA / "registry.json")
    qs = load_queries(DATA / "queries.jsonl")
    scorers = ["jaccard", "bm25", "tfidf", "embedding"]
    here = render_explorer(xd.explorer_data(reg, qs, scorers, depth=12)).encode()
    real = xd.rank_batches
    monkeypatch.setattr(xd, "rank_batches",
                        lambda sc, *a, **k: real(_Drifting(sc), *a, **k))
    there = render_explorer(xd.explorer_data(reg, qs, scorers, depth=12)).encode()
    assert here != there  # the drift reaches the written numbers
    assert differing_numbers(there, here) is not None, "a drift in the 7th digit is not noise"
    (tmp_path / "new").mkdir()
    (tmp_path / "old").mkdir()
    (tmp_path / "new" / "explorer.html").write_bytes(there)
    (tmp_path / "old" / "explorer.html").write_bytes(here)
    assert keep_equal_files(tmp_path / "new" / "explorer.html",
                            tmp_path / "old" / "explorer.html") == ["explorer.html"]
    assert (tmp_path / "new" / "explorer.html").read_bytes() == here


def test_one_unit_in_a_rounded_last_digit_is_drift_but_not_on_short_numbers():
    assert equal_within_tolerance(b"s 0.1054,", b"s 0.1053,")   # 4 significant digits
    assert equal_within_tolerance(b"s 12.35,", b"s 12.34,")
    assert not equal_within_tolerance(b"s 0.1055,", b"s 0.1053,")  # two units
    assert not equal_within_tolerance(b"83.4%", b"83.3%")          # 3 digits: a reader sees it
    assert not equal_within_tolerance(b"s 0.105,", b"s 0.1053,")   # other decimals
