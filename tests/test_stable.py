"""Report files compared at a stated tolerance (toolsel.report.stable), on real files."""

from __future__ import annotations

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
