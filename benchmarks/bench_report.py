"""``toolsel report`` end to end: the bundled data and two synthetic registries at the sizes
users brought (about 600 tools x 100 requests; 1,600 tools x 2,500 requests).

Each case is the real command in a child process, as a user runs it:

- ``bundled``: ``toolsel report --out DIR`` (every notebook on the project's own data);
- ``NxM``: ``toolsel report --registry R --queries Q --out DIR`` on a synthetic registry of N
  tools (:mod:`toolsel.synthetic`, seed 0) and M labeled requests written from its held-out
  paraphrases, four in five of them joining two requests into one that needs both tools (the
  share of multi-tool requests the users' MCP benchmark had), so the multi-tool pages run too.

Per case, per ``--jobs`` value: a cold run (a new report folder and an empty embedding cache,
``TOOLSEL_CACHE``: everything encoded and scored) and a warm run (the same command again into
the same folder: tool vectors and score matrices read back). ``seconds`` is the wall time of
the command; ``pages`` each notebook's seconds as the command printed them (``NN:s``, the
longest first); ``load_1min`` the machine's load average just before the run (other work on the
machine slows every row). Printed, and written as ``report_time.csv``; the folder's
``README.md`` is then regenerated (:func:`toolsel.report.benchmarks.write_report`), its
section on this table saying whether each target of
:data:`toolsel.report.benchmarks.REPORT_TARGETS` is met.

    python benchmarks/bench_report.py --out reports/benchmarks
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
CASES = {"bundled": None, "600x100": (600, 100), "1600x2500": (1600, 2500)}
_PAGE = re.compile(r"^\s+(\d\d)_\S+: ok \(([\d.]+) s\)$")


def _requests(n_tools: int, n_requests: int, folder: Path) -> tuple[Path, Path]:
    """A synthetic registry and ``n_requests`` labeled requests, four in five needing two
    tools (two held-out paraphrases joined by "and then")."""
    from toolsel.synthetic import synthetic_queries, synthetic_registry, write_queries, \
        write_registry
    reg = synthetic_registry(n_tools, seed=0)
    pool = synthetic_queries(reg, 2 * n_requests, seed=0)
    out = []
    for i in range(n_requests):
        a, b = pool[2 * i], pool[2 * i + 1]
        if i % 5 == 0 or set(a.expected) & set(b.expected):
            out.append(dataclasses.replace(a, id=f"r{i:05d}"))
        else:
            out.append(dataclasses.replace(a, id=f"r{i:05d}", query=f"{a.query} and then "
                                           f"{b.query}", expected=a.expected + b.expected))
    registry, queries = folder / "registry.json", folder / "requests.jsonl"
    write_registry(reg, registry)
    write_queries(out, queries)
    return registry, queries


def _run(args: list[str], env: dict) -> tuple[float, str, int]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "toolsel.cli", "report", *args], env=env,
                          capture_output=True, text=True, cwd=ROOT)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:], file=sys.stderr)
    return seconds, proc.stdout, proc.returncode


def _pages(stdout: str) -> str:
    found = [(float(m.group(2)), m.group(1)) for m in map(_PAGE.match, stdout.splitlines())
             if m]
    return " ".join(f"{nn}:{s:.1f}" for s, nn in sorted(found, reverse=True))


def _load() -> float | None:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def bench_case(name: str, jobs: int, work: Path, states=("cold", "warm")) -> list[dict]:
    """The cold and the warm run of one case at ``jobs``."""
    case = work / f"{name}-j{jobs}"
    case.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        TOOLSEL_CACHE=str(case / "embedding-cache"))
    args = ["--out", str(case / "report"), "--jobs", str(jobs)]
    size = CASES[name]
    n_tools = n_requests = None
    if size is not None:
        registry, queries = _requests(*size, case)
        args += ["--registry", str(registry), "--queries", str(queries)]
        n_tools, n_requests = size
    rows = []
    for state in states:
        load = _load()
        seconds, stdout, code = _run(args, env)
        pages = _pages(stdout)
        row = {"case": name, "n_tools": n_tools, "n_requests": n_requests, "jobs": jobs,
               "caches": state, "seconds": round(seconds, 1), "exit": code,
               "pages_run": len(pages.split()) if pages else 0, "pages": pages,
               "load_1min": load, "cores": os.cpu_count()}
        print(", ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=None, help="folder for report_time.csv")
    p.add_argument("--cases", default=",".join(CASES),
                   help=f"comma-separated, among {', '.join(CASES)}")
    p.add_argument("--jobs", default="1,2", help="comma-separated --jobs values, one run each")
    p.add_argument("--states", default="cold,warm",
                   help="cold (new folder, empty caches), then warm (the same again)")
    p.add_argument("--append", action="store_true",
                   help="keep the rows of an existing report_time.csv of other runs")
    args = p.parse_args(argv)
    states = tuple(s.strip() for s in args.states.split(",") if s.strip())
    if not states or any(s not in ("cold", "warm") for s in states) or states[0] != "cold":
        p.error("--states: cold, or cold,warm")
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(CASES)}")
    work = Path(tempfile.mkdtemp(prefix="toolsel-bench-report-"))
    rows = []
    try:
        for name in cases:
            for jobs in (int(j) for j in args.jobs.split(",")):
                rows += bench_case(name, jobs, work, states)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table = pd.DataFrame(rows)
    print(table.drop(columns=["pages"]).to_string(index=False))
    if args.out is not None:
        from toolsel.io import write_table
        args.out.mkdir(parents=True, exist_ok=True)
        old = args.out / "report_time.csv"
        if args.append and old.is_file():
            keep = pd.read_csv(old)
            same = keep.set_index(["case", "jobs", "caches"]).index.isin(
                table.set_index(["case", "jobs", "caches"]).index)
            table = pd.concat([keep[~same], table], ignore_index=True)
        for col in ("n_tools", "n_requests"):  # whole numbers, empty for the bundled data
            table[col] = table[col].astype("Int64")
        path = write_table(table, args.out / "report_time.csv", float_format=None)
        print(f"wrote {path}")
        from toolsel.report.benchmarks import write_report  # its section, with the targets
        print(f"wrote {write_report(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
