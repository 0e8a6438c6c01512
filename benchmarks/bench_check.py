"""How long `toolsel check` takes in CI on a large registry: first run, cached run, edited run.

    python benchmarks/bench_check.py                         # 4,000 tools x 1,000 queries
    python benchmarks/bench_check.py --tools 1000 --queries 200 --scorers bm25 --out /tmp/b

A synthetic registry and query set (``toolsel.synthetic``, seed 0) are written to files, and
``toolsel check`` runs as a CI job would run it, one process per run, the embedding cache in
a fresh temporary directory (``TOOLSEL_CACHE``). Per scorer:

- ``first``: ``--update-baseline`` with an empty cache (every tool and request encoded,
  baseline written);
- ``second``: the check against that baseline, same files, cache warm (tool and request
  vectors both read from disk);
- ``edited``: the check after 1% of the descriptions were cut to their first three words
  (those tools re-encoded, the rest and the requests from the cache), which fails with
  regressions.

Wall-clock seconds of the whole command (interpreter start, imports, loading files, model,
scoring, comparison, writing the baseline/JUnit/Markdown), and the command's own fit and
scoring seconds (fit: the embedding cache look-up and any tool encoded; scoring: the request
vectors' cache look-up, any request encoded, and ranking), with the machine's 1-minute load
average when the run started (the machine may be shared), and the bytes the request vectors
take in the cache after the run (``request_cache_bytes``: the ``#requests`` and ``#spans``
folders; 0 for a scorer without embeddings). Writes ``<out>/check.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "reports" / "benchmarks"


def _edit(registry_path: Path, out: Path, share: float) -> int:
    """Cut every 1/share-th tool's description to its first three words; return how many."""
    lines = registry_path.read_text(encoding="utf-8").splitlines()
    step = max(1, round(1 / share))
    n = 0
    for i in range(0, len(lines), step):
        rec = json.loads(lines[i])
        if rec.get("always_include"):
            continue
        rec["description"] = " ".join(rec["description"].split()[:3])
        lines[i] = json.dumps(rec, ensure_ascii=False)
        n += 1
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return n


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tools", type=int, default=4000)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--scorers", default="bm25,default", help="comma-separated, one run each")
    p.add_argument("--edit-share", type=float, default=0.01,
                   help="share of descriptions cut in the 'edited' run (default 0.01)")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    args = p.parse_args(argv)

    import pandas as pd

    from toolsel.synthetic import synthetic_queries, synthetic_registry, write_queries
    from toolsel.synthetic import write_registry

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="toolsel-bench-check-"))
    rows = []
    try:
        reg = synthetic_registry(args.tools, seed=0)
        reg_path, q_path = work / "registry.jsonl", work / "queries.jsonl"
        write_registry(reg, reg_path)
        write_queries(synthetic_queries(reg, args.queries, seed=0), q_path)
        edited_path = work / "registry_edited.jsonl"
        n_edited = _edit(reg_path, edited_path, args.edit_share)
        env = dict(os.environ, TOOLSEL_CACHE=str(work / "cache"))
        env.pop("GITHUB_STEP_SUMMARY", None)
        for scorer in [s.strip() for s in args.scorers.split(",") if s.strip()]:
            baseline = work / f"baseline_{scorer}.json"
            plan = [("first", reg_path, ["--update-baseline"], "cold"),
                    ("second", reg_path, [], "warm"),
                    ("edited", edited_path, [], "warm")]
            for run, registry, extra, cache in plan:
                junit = work / f"junit_{scorer}_{run}.xml"
                cmd = [sys.executable, "-m", "toolsel.cli", "check", "--registry", str(registry),
                       "--queries", str(q_path), "--scorers", scorer, "--baseline",
                       str(baseline), "--junit", str(junit), "--summary",
                       str(work / "summary.md"), *extra]
                load = os.getloadavg()[0]
                t0 = time.perf_counter()
                done = subprocess.run(cmd, capture_output=True, text=True, cwd=work, env=env)
                wall = time.perf_counter() - t0
                if done.returncode not in (0, 1):
                    sys.stderr.write(done.stdout + done.stderr)
                    raise SystemExit(f"toolsel check failed: {' '.join(cmd)}")
                line = next(ln for ln in done.stdout.splitlines()
                            if ln.startswith(f"{scorer}: "))
                fit_s = float(line.split("; fit ")[1].split()[0])
                score_s = float(line.split(", scoring ")[1].split()[0])
                root = ET.parse(junit).getroot()
                req_bytes = sum(f.stat().st_size
                                for d in (work / "cache" / "embeddings").glob("*--*")
                                if d.name.endswith(("--requests", "--spans"))
                                for f in d.glob("*.npz"))
                rows.append({"scorer": scorer, "n_tools": args.tools,
                             "n_queries": args.queries, "run": run, "cache": cache,
                             "edited_tools": n_edited if run == "edited" else 0,
                             "wall_s": wall, "fit_s": fit_s, "score_s": score_s,
                             "exit": done.returncode,
                             "failing_requests": int(root.get("failures")),
                             "baseline_bytes": baseline.stat().st_size,
                             "load_avg_1m": load, "request_cache_bytes": req_bytes})
                r = rows[-1]
                print(f"{scorer} {run} ({cache} cache): {wall:.1f} s wall, fit "
                      f"{fit_s:.2f} s, scoring {score_s:.2f} s, exit {done.returncode}, "
                      f"{r['failing_requests']} failing requests", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "check.csv", index=False, float_format="%.3f", lineterminator="\n")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    print(f"wrote {out / 'check.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
