"""One quantity, one number: a comparison or interval that two pages (or a page and a doc)
both state is the same number with the same verdict (toolsel.report.consistency).

The pages' own table builders run on three data sets (the bundled benchmark, a registry style
whose requests carry no split, an imported MCP registry) into a report-shaped folder, and the
check reads their tables the way a report is read; the committed report is checked too."""

from pathlib import Path

import pandas as pd
import pytest

from toolsel import load_queries, load_registry
from toolsel.io import FLOAT_FORMAT, write_table
from toolsel.pages import default_scorer, overview
from toolsel.pages import recall_vs_payload as recall
from toolsel.report.consistency import cited, disagreements, quantities
from toolsel.scorers.base import compared_scorers
from toolsel.scorers.fusion import FusionScorer

ROOT = Path(__file__).resolve().parent.parent


def _write(page_dir: Path, page, tables) -> None:
    page_dir.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        write_table(frame, page_dir / page.FILES[name],
                    float_format=None if name in page.EXACT else FLOAT_FORMAT)


def _report(out: Path, registry: str, queries: str) -> Path:
    """Pages 00, 01 and 06 built on one registry and its queries, with their notebooks'
    default scorers and cut-offs, written as a report writes them."""
    reg = load_registry(registry)
    qs = load_queries(queries, reg)
    scorers = list(compared_scorers())
    t0 = overview.overview_tables(reg, qs, scorers, [10, 30])
    _write(out / "00_overview", overview, dict(t0.items()))
    t1 = recall.recall_tables(reg, qs, scorers, [1, 3, 5, 10, 20, 30])
    _write(out / "01_recall_vs_payload", recall, dict(t1.items()))
    d = default_scorer.page_data(registry, queries, [], "")
    t6 = default_scorer.default_tables(d, scorers, variants={"default": FusionScorer()})
    _write(out / "06_default_scorer", default_scorer, dict(t6.items()))
    return out


def _nosplit(tmp: Path) -> tuple[str, str]:
    from test_claims import _nosplit_style
    data = _nosplit_style(tmp)
    return data["registry"], data["queries"]


def _mcp(tmp: Path) -> tuple[str, str]:
    from test_claims import _mcp as imported
    data = imported(tmp)
    return data["registry"], data["queries"]


DATASETS = {"bundled": lambda tmp: (str(ROOT / "data" / "registry.json"),
                                    str(ROOT / "data" / "queries.jsonl")),
            "style_nosplit": _nosplit, "mcp": _mcp}


@pytest.mark.slow
@pytest.mark.parametrize("dataset", list(DATASETS))
def test_pages_state_one_number_per_quantity(dataset, tmp_path):
    registry, queries = DATASETS[dataset](tmp_path)
    rep = _report(tmp_path / "report", registry, queries)
    q = quantities(rep)
    shared = q.groupby(["scope", "kind", "metric", "k", "a", "b"])["page"].nunique()
    # 00's headline pair, gaps and intervals are 01's at the same K; 06's default-vs-best is
    # one of its gaps: the check compares something on every data set
    assert (shared > 1).sum() >= 10, shared
    assert disagreements(rep) == []
    # and the sentences cite some of those shared quantities
    said = cited(rep) if any(rep.glob("*/claims.json")) else None
    assert said is None or not said.empty


def _paired(diff, low, high, word):
    return pd.DataFrame([{"top_k": 10, "metric": "R@k", "a": "bm25", "b": "default",
                          "diff": diff, "diff_low": low, "diff_high": high, "verdict": word}])


def test_a_pair_stated_twice_with_two_numbers_is_caught(tmp_path):
    data = pd.DataFrame([{"n_tools": 61, "n_queries": 30}])
    for page in ("00_x", "01_y"):
        (tmp_path / page).mkdir()
        data.to_csv(tmp_path / page / "data.csv", index=False)
    _paired(-0.3, -0.48, -0.13, "behind").to_csv(tmp_path / "00_x" / "p.csv", index=False)
    # the same pair the other way round, as page 00's gap table holds it: the same quantity
    gap = pd.DataFrame([{"metric": "R@k", "top_k": 10, "scorer": "bm25",
                         "reference": "default", "gap": 0.3, "gap_low": 0.13,
                         "gap_high": 0.48, "verdict": "ahead"}])
    gap.to_csv(tmp_path / "01_y" / "g.csv", index=False)
    assert disagreements(tmp_path) == []
    gap.assign(gap_high=0.47).to_csv(tmp_path / "01_y" / "g.csv", index=False)
    assert len(disagreements(tmp_path)) == 1
    # the same numbers with another verdict (a p-value said "not real") is caught too
    gap.assign(verdict="tie").to_csv(tmp_path / "01_y" / "g.csv", index=False)
    [line] = disagreements(tmp_path)
    assert "behind" in line and "tie" in line
    # other data (another page's counts) is another quantity
    data.assign(n_queries=80).to_csv(tmp_path / "01_y" / "data.csv", index=False)
    assert disagreements(tmp_path) == []


def test_the_committed_report_states_one_number_per_quantity():
    rep = ROOT / "reports"
    if not (rep / "01_recall_vs_payload").is_dir():
        pytest.skip("no committed report")
    assert disagreements(rep) == []
