"""The benchmark's measurements and tables on tiny configurations (structure, never speed)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from toolsel.report.benchmarks import write_report
from toolsel.tables.benchmark import (latencies_ms, measure_scale, measure_sweep, scale_table,
                                      targets_table)
from toolsel.synthetic import synthetic_queries, synthetic_registry


@pytest.fixture(scope="module")
def small():
    reg = synthetic_registry(200, seed=0)
    return reg, synthetic_queries(reg, 30, seed=0)


def test_latencies_ms_calls_fn_n_times_after_warmup():
    seen = []
    ms = latencies_ms(seen.append, ["a", "b", "c"], n=7, warmup=2)
    assert len(ms) == 7 and (ms >= 0).all()
    assert seen == ["a", "b"] + ["a", "b", "c", "a", "b", "c", "a"]


@pytest.mark.parametrize("scorer", ["jaccard", "bm25", "naive"])
def test_measure_scale_row(small, scorer):
    reg, qs = small
    row = measure_scale(reg, [q.query for q in qs], scorer, n_timed=15)
    assert row["scorer"] == scorer and row["n_tools"] == 200 and row["n_timed"] == 15
    assert 0 < row["p50_ms"] <= row["p95_ms"]
    assert row["traced_peak_mb"] > 0 and row["maxrss_mb"] > 0
    if scorer == "naive":
        # the naive loop and the indexed selector were compared call by call (equal picks)
        assert row["speedup_interleaved"] > 0 and row["jaccard_p50_ms_interleaved"] > 0
    else:
        assert row["index_mb"] > 0 and row["build_s"] > 0


def test_measure_scale_embedding_uses_a_fresh_cache(small, tmp_path):
    reg, qs = small
    row = measure_scale(reg, [q.query for q in qs], "embedding", n_timed=5,
                        trace_memory=False, cache_dir=tmp_path)
    assert row["n_encoded"] == 200  # the first fit really encoded every tool
    assert row["cached_load_s"] == row["build_s"] and row["first_encode_s"] > 0
    assert list((tmp_path / "embeddings").rglob("*.npz"))


def test_measure_sweep_row(small):
    reg, qs = small
    row = measure_sweep(reg, qs, scorers=("jaccard", "bm25"), top_k=(1, 5))
    assert row["n_tools"] == 200 and row["n_queries"] == 30 and row["summary_rows"] == 4
    assert {"jaccard_fit_s", "bm25_score_s", "total_s", "maxrss_mb"} <= set(row)


def _scale_rows():
    rows = []
    for n, naive in ((61, 0.2), (10_000, 50.0)):
        rows += [{"scorer": "naive", "n_tools": n, "p50_ms": naive, "p95_ms": naive * 2,
                  "build_s": 0.0, "maxrss_mb": 90.0},
                 {"scorer": "bm25", "n_tools": n, "p50_ms": 0.05, "p95_ms": 0.1,
                  "build_s": 0.1, "maxrss_mb": 100.0},
                 {"scorer": "embedding", "n_tools": n, "p50_ms": 20.0, "p95_ms": 30.0,
                  "build_s": 0.2, "maxrss_mb": 500.0, "first_encode_s": 60.0,
                  "cached_load_s": 0.2}]
    return rows


def test_scale_table_orders_rows_and_computes_speedups():
    t = scale_table(_scale_rows())
    assert list(t.scorer) == ["bm25", "bm25", "embedding", "embedding", "naive", "naive"]
    assert list(t.n_tools) == [61, 10_000] * 3
    bm = t[(t.scorer == "bm25") & (t.n_tools == 10_000)].iloc[0]
    assert bm.speedup_vs_naive == pytest.approx(1000.0)
    assert math.isnan(t[t.scorer == "naive"].speedup_vs_naive.iloc[0])


def test_targets_table_flags_met_and_missed():
    sweeps = pd.DataFrame([{"cache": "warm", "n_tools": 4000, "n_queries": 2000,
                            "n_scorers": 4, "n_top_k": 6, "total_s": 75.0,
                            "maxrss_mb": 1100.0}])
    t = targets_table(scale_table(_scale_rows()), sweeps).set_index("target")
    assert t.loc["bm25 select p50 at 10k (ms)", "met"] is True
    assert t.loc["bm25 speed-up vs naive at 10k (x)", "measured"] == pytest.approx(1000)
    assert t.loc["embedding select p50 at 10k incl. query encoding (ms)", "met"] is False
    assert t.loc["jaccard select p50 at 10k (ms)", "met"] is None  # not measured
    sweep_row = [i for i in t.index if i.startswith("sweep 4,000 tools x 2,000")][0]
    assert t.loc[sweep_row, "met"] is False
    assert t.loc["peak resident memory, any configuration (MB)", "measured"] == 1100.0
    assert t.loc["peak resident memory, any configuration (MB)", "met"] is False


def test_write_report(tmp_path):
    pd.DataFrame(_scale_rows()).to_csv(tmp_path / "scale.csv", index=False)
    path = write_report(tmp_path)
    text = path.read_text()
    assert "## Select latency" in text and "## Targets" in text and "## Sweeps" not in text
    assert (tmp_path / "latency_vs_tools.png").exists()
    assert (tmp_path / "latency_vs_tools.svg").exists()


def test_cli_benchmark_on_a_registry_file(tmp_path, capsys):
    from toolsel.cli import main
    from toolsel.synthetic import write_registry
    path = write_registry(synthetic_registry(150, seed=1), tmp_path / "r.jsonl")
    assert main(["benchmark", "--registry", str(path), "--scorers", "bm25,naive",
                 "--n-timed", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:5] == ["scorer", "n_tools", "build_s", "p50_ms", "p95_ms"]
    assert out[1].split()[:2] == ["bm25", "150"] and out[2].split()[:2] == ["naive", "150"]


def test_report_time_section_reads_each_target_from_its_cold_two_job_run():
    from toolsel.report.benchmarks import report_time_section
    table = pd.DataFrame([
        {"case": "600x100", "n_tools": 600, "n_requests": 100, "jobs": 2, "caches": "cold",
         "seconds": 95.0, "exit": 0, "pages_run": 11, "load_1min": 1.2, "cores": 2},
        {"case": "600x100", "n_tools": 600, "n_requests": 100, "jobs": 2, "caches": "warm",
         "seconds": 30.0, "exit": 0, "pages_run": 11, "load_1min": 1.0, "cores": 2},
        {"case": "1600x2500", "n_tools": 1600, "n_requests": 2500, "jobs": 1, "caches": "cold",
         "seconds": 200.0, "exit": 0, "pages_run": 11, "load_1min": 0.5, "cores": 2}])
    text = "\n".join(report_time_section(table))
    # the warm 30 s run does not meet the cold target; the one-job run is not the target's
    assert "| 600x100, cold, --jobs 2: at most 90 s | 95 s | 1.2 | no |" in text
    assert "| 1600x2500, cold, --jobs 2: at most 300 s | not measured |  |  |" in text
    table.loc[0, "seconds"] = 80.0
    assert "| 600x100, cold, --jobs 2: at most 90 s | 80 s | 1.2 | yes |" in \
        "\n".join(report_time_section(table))
    table.loc[0, "exit"] = 1  # a failed run meets nothing
    assert "| 80 s | 1.2 | no |" in "\n".join(report_time_section(table))
