"""Where ``default``'s per-request time goes, at this revision and at a baseline, in one run.

For each registry size (``--tools``), two worker processes fit ``Selector(registry,
"default", top_k=10)`` on the same registry: one runs this checkout's ``toolsel``, the other
the ``--baseline`` git revision's (read with ``git archive`` into a temporary folder; the
repository is not changed). The parent sends them the same requests in turn, request by
request, alternating which goes first, so a busy spell on a shared machine hits both alike and
their ratio is fair. Each worker times ``Selector.select`` (what an agent calls every turn) and
then ``Selector.search`` (``discover``'s path: scores plus the no-match rule), with the
request-vector cache off so every call encodes.

Inside each call, the functions of the scoring path are timed by wrapping them (inclusive
times, per request): splitting into segments, the BM25 rows, locating the clauses, the one
encoder pass, the cosines over all tools, normalising and weighting, the max over segments,
the top-k of the selector, the no-match rule. ``other`` is what the call spent outside them
(Python glue, the selector's masks, array conversions).

The registry and requests are ``benchmarks/bench_memory.py``'s (synthetic tools with
~530-character descriptions; 3-6-clause requests), as in ``bench_44k.py``: the first N tools
of the 44,000 are the N-tool registry, so one embedding cache (``--cache-dir``, primed by
``bench_44k.py --phases encode --cache-dir``) serves every size. The workers also report each
request's top-30 (ties in registry order): the table counts requests whose top-K selection
differs between the two revisions, K = 1, 3, 5, 10, 20, 30.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_default_profile.py \\
        --tools 4000,44000 --baseline 8ca95e7 --cache-dir /tmp/cache44k \\
        --out reports/benchmarks/default_profile.csv \\
        --speed-out reports/benchmarks/default_speedup.csv
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
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KS = (1, 3, 5, 10, 20, 30)

#: (label, module, owner, attribute): the functions timed inside a call, in path order.
#: ``owner`` is a class name in ``module`` or ``None`` for a module-level function (wrapped
#: where it is looked up: fusion calls ``cosines`` and ``locate_clauses`` as its own globals).
STAGES = (
    ("split into segments", "toolsel.scorers.fusion", "FusionScorer", "segments"),
    ("BM25 rows", "toolsel.scorers.bm25", "Bm25Scorer", "score_many"),
    ("locate clauses", "toolsel.scorers.fusion", None, "locate_clauses"),
    ("encoder pass", "toolsel.scorers.embedding", "EmbeddingScorer", "encode_in_context"),
    ("encoder pass (no clauses)", "toolsel.scorers.embedding", "EmbeddingScorer",
     "encode_queries"),
    ("cosines over all tools", "toolsel.scorers.fusion", None, "cosines"),
    ("normalise and weight", "toolsel.scorers.fusion", "FusionScorer", "_fused"),
    ("max over segments", "toolsel.scorers.fusion", "FusionScorer", "_best_segment"),
    ("no-match rule", "toolsel.scorers.fusion", "FusionScorer", "_matches_from"),
    ("top-k", "toolsel.selection", None, "top_k_indices"),
)


def _wrap(spent: dict[str, float]) -> None:
    import functools
    import importlib

    for label, module, owner, attr in STAGES:
        mod = importlib.import_module(module)
        target = getattr(mod, owner) if owner else mod
        fn = getattr(target, attr, None)
        if fn is None:
            continue

        def timed(*a, __fn=fn, __label=label, **kw):
            t = time.perf_counter()
            try:
                return __fn(*a, **kw)
            finally:
                spent[__label] = spent.get(__label, 0.0) + (time.perf_counter() - t) * 1000

        setattr(target, attr, functools.wraps(fn)(timed))


def _worker(n_tools: int, n_requests: int) -> None:
    """Serve timing requests on stdin: ``<index>`` times request ``index``; ``top`` prints
    every request's top-30; an empty line ends."""
    sys.path.insert(0, str(HERE))
    import toolsel
    from bench_memory import _data
    from toolsel import Selector
    from toolsel.ranking import top_k_indices
    from toolsel.scorers.embedding import QUERY_CACHE, load_encoder
    QUERY_CACHE.maxsize = 0  # every call encodes, as a live agent's new turn does
    reg, queries = _data(n_tools, n_requests)
    texts = [q.query for q in queries]
    load_encoder()
    t0 = time.perf_counter()
    sel = Selector(reg, "default", top_k=10, always_include=())
    fit_s = time.perf_counter() - t0
    for t in texts[:5]:  # warm-up
        sel.select(t)
        sel.search(t, limit=10)
    spent: dict[str, float] = {}
    _wrap(spent)
    print(json.dumps({"ready": True, "fit_s": fit_s,
                      "toolsel": str(Path(toolsel.__file__).parent)}), flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if not cmd:
            break
        if cmd == "top":
            scores = [sel.scores(t) for t in texts]
            print(json.dumps({"top": [rank_top(s, top_k_indices(s, max(KS)))
                                      for s in scores]}), flush=True)
            continue
        text = texts[int(cmd)]
        out = {}
        for call, fn in (("select", lambda: sel.select(text)),
                         ("search", lambda: sel.search(text, limit=10))):
            spent.clear()
            t = time.perf_counter()
            fn()
            out[call] = {"total": (time.perf_counter() - t) * 1000, **spent}
        print(json.dumps(out), flush=True)


def rank_top(scores: np.ndarray, chosen: np.ndarray) -> list[int]:
    """``chosen`` (the top-k, registry order) from best to worst, ties in registry order."""
    return [int(i) for i in chosen[np.argsort(-scores[chosen], kind="stable")]]


class Worker:
    def __init__(self, code: Path, n_tools: int, n_requests: int, env: dict):
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", str(n_tools), str(n_requests)],
            env={**env, "PYTHONPATH": str(code)}, cwd=code, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        self.info = self.read()
        if Path(self.info["toolsel"]).resolve() != (code / "toolsel").resolve():
            raise SystemExit(f"worker imported toolsel from {self.info['toolsel']}, "
                             f"expected {code / 'toolsel'}")

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker ended (exit {self.proc.wait()})")
        return json.loads(line)

    def ask(self, cmd: str) -> dict:
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
            self.proc.wait()


def _stage_rows(records: list[dict], call: str) -> list[dict]:
    """Per stage: mean, p50 and p95 ms per request, and its share of the mean call time."""
    totals = np.asarray([r[call]["total"] for r in records])
    inner = np.zeros(len(records))
    rows = []
    # no wrapped function calls another, so the stages add up (plus "other")
    for label, *_ in STAGES:
        v = np.asarray([r[call].get(label, 0.0) for r in records])
        inner += v
        if v.any():
            rows.append((label, v))
    rows.append(("other", totals - inner))
    rows.append(("total", totals))
    return [{"stage": label, "mean_ms": float(v.mean()),
             "p50_ms": float(np.percentile(v, 50)), "p95_ms": float(np.percentile(v, 95)),
             "share_of_mean": float(v.mean() / totals.mean())} for label, v in rows]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", default="4000,44000", help="comma-separated registry sizes")
    ap.add_argument("--requests", type=int, default=100, help="distinct requests timed")
    ap.add_argument("--repeat", type=int, default=2, help="passes over the requests")
    ap.add_argument("--baseline", default="8ca95e7", help="git revision to compare against")
    ap.add_argument("--cache-dir", type=Path, help="embedding cache (TOOLSEL_CACHE)")
    ap.add_argument("--out", type=Path,
                    help="CSV of the stages: per size, revision, call and stage, mean/p50/p95 "
                         "ms and share of the mean call time")
    ap.add_argument("--speed-out", type=Path,
                    help="CSV of the calls: per size, revision and call, p50/p95/mean ms, the "
                         "ratios to the baseline and the top-K selection changes")
    ap.add_argument("--worker", nargs=2, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(*args.worker)
        return
    import pandas as pd
    env = dict(os.environ)
    if args.cache_dir:
        env["TOOLSEL_CACHE"] = str(args.cache_dir)
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], check=True,
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "toolsel"],
                           check=True, capture_output=True, text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="toolsel-profile-"))
    speed: list[dict] = []
    stages: list[dict] = []
    try:
        base_dir = tmp / "baseline"
        base_dir.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "toolsel"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base_dir)], input=archive, check=True)
        codes = {args.baseline: base_dir, rev + ("+changes" if dirty else ""): ROOT}
        for n_tools in [int(n) for n in args.tools.split(",")]:
            workers = {}
            try:
                for label, code in codes.items():
                    workers[label] = Worker(code, n_tools, args.requests, env)
                records = {label: [] for label in workers}
                labels = list(workers)
                for p in range(args.repeat):
                    for i in range(args.requests):
                        order = labels if (i + p) % 2 == 0 else labels[::-1]
                        for label in order:
                            records[label].append(workers[label].ask(str(i)))
                tops = {label: w.ask("top")["top"] for label, w in workers.items()}
            finally:
                for w in workers.values():
                    w.close()
            base_top = tops[labels[0]]
            for label in labels:
                changed = {f"changed@{k}": int(sum(sorted(a[:k]) != sorted(b[:k])
                                                   for a, b in zip(base_top, tops[label])))
                           for k in KS}
                common = {"n_tools": n_tools, "code": label, "baseline": label == labels[0]}
                for call in ("select", "search"):
                    totals = np.asarray([r[call]["total"] for r in records[label]])
                    speed.append({**common, "call": call, "n_requests": args.requests,
                                  "n_timings": len(totals), "fit_s": workers[label].info["fit_s"],
                                  "p50_ms": float(np.percentile(totals, 50)),
                                  "p95_ms": float(np.percentile(totals, 95)),
                                  "mean_ms": float(totals.mean()), **changed,
                                  "load_avg_1m": round(os.getloadavg()[0], 2),
                                  "cpus": os.cpu_count()})
                    stages += [{**common, "call": call, **r}
                               for r in _stage_rows(records[label], call)]
            table = pd.DataFrame(speed)
            for col in ("p50_ms", "p95_ms"):  # this revision over the baseline, same run
                base = table[table["baseline"]].set_index(["n_tools", "call"])[col]
                table[f"{col.split('_')[0]}_vs_baseline"] = [
                    v / base[(n, c)] for n, c, v in zip(table["n_tools"], table["call"],
                                                          table[col])]
            profile = pd.DataFrame(stages)
            print(table.round(2).T.to_string(), flush=True)
            print(profile[profile["n_tools"] == n_tools].pivot_table(
                index="stage", columns=["code", "call"], values="p50_ms", sort=False
            ).round(2).to_string(), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.out:
        from toolsel.io import write_table
        write_table(profile, args.out, float_format="%.3f")
        print(f"wrote {args.out}")
    if args.speed_out:
        from toolsel.io import write_table
        write_table(table, args.speed_out, float_format="%.3f")
        print(f"wrote {args.speed_out}")


if __name__ == "__main__":
    main()
