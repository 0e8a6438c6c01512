"""``toolsel label`` on a 300-tool registry: one session for many requests against one process
per request.

The registry and labeled file are synthetic (:mod:`toolsel.synthetic`, seed 0): ``--tools``
tools, the first ``--existing`` of its labeled queries already in the file, the next
``--requests`` labeled. Three ways, each the real command in a child process (its own
embedding cache folder, ``TOOLSEL_CACHE``; the impact table of all five scorers and the
embedding near-duplicate check on, as by default):

- ``session --from``: ``toolsel label --from requests.jsonl --yes`` (each line a request and
  its expected tool). Its output is read line by line as it comes: request *i* starts when
  ``[i/N]`` is printed, so the first request's time runs from the process start (Python,
  imports, registry, model load, every scorer fitted) to ``[2/N]``, and each later one from
  ``[i/N]`` to ``[i+1/N]`` (the last to the closing summary line);
- ``session (interactive)``: ``toolsel label`` with the same requests, picks and confirmations
  typed on its standard input, timed the same way at each ``request`` prompt;
- ``one process per request``: ``toolsel label --query ... --expected ... --yes`` per request
  (what labeling a list took before), each process's wall time.

Each runs with a cold embedding cache (an empty folder) and again with it warm (the tool
vectors the previous run wrote). ``load_1min`` is the machine's load average when the row was
measured (other work on the machine shows in the slowest requests). Printed and written as
``label_timing.csv``.

    python benchmarks/bench_label.py --out reports/benchmarks
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def _env(cache: Path) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, PYTHONPATH=path, PYTHONUNBUFFERED="1", TOOLSEL_CACHE=str(cache))


def _timed_lines(cmd: list[str], env: dict, stdin: str | None, starts) -> list[float]:
    """Run ``cmd``; the seconds since its start at which each line ``starts(line)`` accepts
    appeared, then the time it exited."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1)
    if stdin:
        proc.stdin.write(stdin)
        proc.stdin.close()
    marks = []
    for line in proc.stdout:
        if starts(line):
            marks.append(time.perf_counter() - t0)
    err = proc.stderr.read()
    if proc.wait() != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}... exited {proc.returncode}: {err[-800:]}")
    return marks + [time.perf_counter() - t0]


def _row(mode: str, cache: str, n_tools: int, n_existing: int, starts: list[float]) -> dict:
    """``starts``: when each request started (the first at 0 = process start), then the end."""
    per = [b - a for a, b in zip(starts, starts[1:])]
    later = per[1:]
    return {"mode": mode, "embedding_cache": cache, "tools": n_tools,
            "requests_in_file": n_existing, "requests_labeled": len(per),
            "first_request_s": round(per[0], 2),
            "later_median_s": round(statistics.median(later), 3) if later else None,
            "later_p95_s": round(float(np.percentile(later, 95)), 3) if later else None,
            "later_max_s": round(max(later), 3) if later else None,
            "total_s": round(starts[-1] - starts[0], 2),
            "load_1min": round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None, help="folder for label_timing.csv")
    p.add_argument("--tools", type=int, default=300)
    p.add_argument("--existing", type=int, default=100,
                   help="labeled requests already in the file")
    p.add_argument("--requests", type=int, default=20, help="requests labeled per session")
    p.add_argument("--per-process", type=int, default=3,
                   help="requests labeled one process each (the way before sessions)")
    args = p.parse_args(argv)
    from toolsel.synthetic import synthetic_queries, synthetic_registry, write_queries, \
        write_registry
    reg = synthetic_registry(args.tools, seed=0)
    qs = synthetic_queries(reg, args.existing + args.requests, seed=0)
    todo = qs[args.existing:]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        registry = write_registry(reg, tmp / "registry.jsonl")
        seed_file = write_queries(qs[:args.existing], tmp / "seed.jsonl")
        requests = tmp / "requests.jsonl"
        requests.write_text("".join(json.dumps({"query": q.query, "expected": list(q.expected)})
                                    + "\n" for q in todo), encoding="utf-8")
        base = [sys.executable, "-m", "toolsel.cli", "label", "--registry", str(registry)]
        for cache in ("cold", "warm"):
            folder = tmp / "cache"
            if cache == "cold":
                shutil.rmtree(folder, ignore_errors=True)
            # session --from
            labeled = tmp / "labeled.jsonl"
            shutil.copyfile(seed_file, labeled)
            marks = _timed_lines(base + ["--queries", str(labeled), "--from", str(requests),
                                         "--yes"], _env(folder), None,
                                 lambda line: line.startswith("[") and "/" in line.split()[0])
            rows.append(_row("session --from", cache, len(reg), args.existing,
                             [0.0] + marks[1:]))
            print(rows[-1], flush=True)
            # the interactive session: requests and picks typed on stdin
            if cache == "cold":
                shutil.rmtree(folder, ignore_errors=True)
            shutil.copyfile(seed_file, labeled)
            typed = "".join(f"{q.query}\n{','.join(q.expected)}\ny\n" for q in todo) + "\n"
            marks = _timed_lines(base + ["--queries", str(labeled)], _env(folder), typed,
                                 lambda line: line.startswith("the registry ranked by"))
            rows.append(_row("session (interactive)", cache, len(reg), args.existing,
                             [0.0] + marks[1:]))
            print(rows[-1], flush=True)
            # one process per request
            if cache == "cold":
                shutil.rmtree(folder, ignore_errors=True)
            shutil.copyfile(seed_file, labeled)
            ends = [0.0]
            for q in todo[:args.per_process]:
                t0 = time.perf_counter()
                _timed_lines(base + ["--queries", str(labeled), "--query", q.query,
                                     "--expected", ",".join(q.expected), "--yes"],
                             _env(folder), None, lambda line: False)
                ends.append(ends[-1] + time.perf_counter() - t0)
            rows.append(_row("one process per request", cache, len(reg), args.existing, ends))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    print(df.to_string(index=False))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        from toolsel.io import write_table  # the project's one CSV writer (atomic)
        print(f"wrote {write_table(df, args.out / 'label_timing.csv', float_format=None)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
