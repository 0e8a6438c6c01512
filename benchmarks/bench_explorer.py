"""Size of ``explorer.html`` on the bundled data and on a 4,000-tool synthetic registry.

For each configuration: the registry and labeled queries, every scorer ranked by
:func:`toolsel.report.explorer_data.explorer_data` at the depth a report uses, then the page
(:func:`toolsel.report.explorer_page.render_explorer`). Reported: the page size and its parts
(tool definitions, per-query rankings, everything else), the page gzip-compressed (what a
server or an archive stores), the seconds to compute the data and, when Debian's ``chromium``
is installed, the wall time of a headless Chromium loading the page, running its script and
dumping the DOM (browser start included; network off).

    python benchmarks/bench_explorer.py --out reports/benchmarks
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SCORERS = ["jaccard", "bm25", "tfidf", "embedding", "default"]


def _browser_seconds(page: Path) -> float | None:
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    for _attempt in range(3):  # a loaded machine can make one headless run give up early
        with tempfile.TemporaryDirectory() as profile:
            t0 = time.perf_counter()
            proc = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                                   "--disable-background-networking",
                                   "--disable-component-update", "--disable-sync",
                                   "--disable-quic", "--no-first-run",
                                   f"--user-data-dir={profile}", "--proxy-server=127.0.0.1:9",
                                   "--dump-dom", page.resolve().as_uri()],
                                  capture_output=True, text=True, timeout=600)
            seconds = time.perf_counter() - t0
        if 'data-ready="1"' in proc.stdout:
            return seconds
    raise RuntimeError(f"the page's script did not finish in Chromium: {proc.stderr[-500:]}")


def measure(label: str, registry, queries, scorers, depth: int) -> dict:
    from toolsel.report.explorer_data import explorer_data
    from toolsel.report.explorer_page import embed_json, render_explorer
    t0 = time.perf_counter()
    data = explorer_data(registry, queries, scorers, depth=depth)
    compute_s = time.perf_counter() - t0
    page = render_explorer(data)
    raw = page.encode("utf-8")
    defs = len(embed_json(data["tools"]["definition"]).encode())
    ranks = sum(len(embed_json({k: s[k] for k in ("top", "scores", "required")}).encode())
                for s in data["scorers"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "explorer.html"
        path.write_bytes(raw)
        browser = _browser_seconds(path)
    return {"data": label, "tools": len(registry), "queries": len(queries),
            "scorers": len(scorers), "depth": data["depth"],
            "page_mb": round(len(raw) / 1e6, 2), "definitions_mb": round(defs / 1e6, 2),
            "rankings_mb": round(ranks / 1e6, 2),
            "other_mb": round((len(raw) - defs - ranks) / 1e6, 2),
            "gzip_mb": round(len(gzip.compress(raw, 6)) / 1e6, 2),
            "compute_s": round(compute_s, 1),
            "browser_load_s": None if browser is None else round(browser, 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None, help="folder for explorer.csv/.md")
    p.add_argument("--tools", type=int, default=4000)
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--depths", type=str, default="30",
                   help="comma-separated depths for the synthetic registry (a report uses "
                        "its largest top_k, at least 20)")
    args = p.parse_args(argv)
    from toolsel import load_queries, load_registry
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    rows = []
    reg = load_registry(ROOT / "data" / "registry.json")
    qs = load_queries(ROOT / "data" / "queries.jsonl", reg)
    rows.append(measure("data/registry.json + queries.jsonl", reg, qs, SCORERS, 30))
    print(rows[-1], flush=True)
    reg = synthetic_registry(args.tools, seed=0)
    qs = synthetic_queries(reg, args.queries, seed=0)
    for depth in [int(d) for d in args.depths.split(",")]:
        rows.append(measure(f"synthetic (toolsel.synthetic, seed 0)", reg, qs, SCORERS, depth))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    table = ["| " + " | ".join(df.columns) + " |", "|" + " --- |" * len(df.columns)]
    table += ["| " + " | ".join("" if pd.isna(v) else str(v) for v in r) + " |"
              for r in df.itertuples(index=False)]
    text = "\n".join(table)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        df.to_csv(args.out / "explorer.csv", index=False, lineterminator="\n")
        note = ("# explorer.html size\n\nGenerated by `benchmarks/bench_explorer.py`: the "
                "size of `explorer.html` (five scorers: " + ", ".join(SCORERS) + ") on the "
                "bundled data and on a synthetic registry, split into the tool definitions, "
                "the per-query rankings (top `depth` candidates with scores, plus every "
                "required tool's rank and score) and the rest (queries, payloads, script, "
                "style); `gzip_mb` is the page gzip-compressed (level 6); `compute_s` the "
                "seconds to rank every query with every scorer (embedding cache as found); "
                "`browser_load_s` the wall time of headless Chromium (Debian package) "
                "loading the page from disk, running its script and dumping the DOM, browser "
                "start included, network off.\n\n" + text + "\n")
        (args.out / "explorer.md").write_text(note, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
