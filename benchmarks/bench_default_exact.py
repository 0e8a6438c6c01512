"""Does ``default`` select the same tools as at another revision? Scores of two revisions, compared.

A speed change to ``default``'s scoring path must not change what it selects. This script
scores every request (dev and test splits) of the six sets (the five ``data/styles`` and
``data/requests.jsonl`` on ``data/registry.json``) with the ``default`` scorer of the
``--baseline`` git revision and of this checkout, each in its own process, through both paths
a request takes: one request at a time (``scorer.score``, what ``Selector.select`` calls) and
in batches (``scorer.score_many``, what a sweep calls). The baseline's ``toolsel`` package is
read with ``git archive`` into a temporary folder (the repository is not changed).

Per set, split and path it writes: the largest absolute score difference, how many requests'
top-K selection (:func:`toolsel.ranking.top_k_indices`, ties in registry order) differs at
each K of 1, 3, 5, 10, 20, 30, how many requests' rank of a required tool differs, and the
change of R@5 and Complete@10. Tool vectors come from the embedding cache (``TOOLSEL_CACHE``).

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_default_exact.py \\
        --baseline 8ca95e7 --out reports/benchmarks/default_exactness.csv
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SETS = ("api", "plugin", "pooled", "marketplace", "openapi", "workspace")
KS = (1, 3, 5, 10, 20, 30)


def _load(name: str):
    from toolsel import load_queries, load_registry
    if name == "workspace":
        reg = load_registry(ROOT / "data" / "registry.json")
        return reg, load_queries(ROOT / "data" / "requests.jsonl", reg)
    d = ROOT / "data" / "styles" / name
    reg = load_registry(d / "registry.json")
    return reg, load_queries(d / "queries.jsonl", reg)


def _child(out: Path, sets: list[str]) -> None:
    """Score every request of ``sets`` with this process's ``toolsel`` into ``out``."""
    import toolsel
    from toolsel import get_scorer
    for name in sets:
        reg, queries = _load(name)
        queries = [q for q in queries if q.split in ("dev", "test")]
        scorer = get_scorer("default").fit(reg)
        texts = [q.query for q in queries]
        one = np.stack([scorer.score(t) for t in texts])
        many = scorer.score_many(texts)
        np.savez(out / f"{name}.npz", one=one, many=many,
                 ids=np.asarray([q.id for q in queries]))
    print(json.dumps({"toolsel": str(Path(toolsel.__file__).parent)}))


def _score(rev_dir: Path | None, out: Path, sets: list[str]) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(rev_dir if rev_dir is not None else ROOT)
    res = subprocess.run([sys.executable, __file__, "--child", str(out), ",".join(sets)],
                         env=env, cwd=rev_dir or ROOT, check=True, capture_output=True,
                         text=True)
    where = json.loads(res.stdout.strip().splitlines()[-1])["toolsel"]
    expected = (rev_dir if rev_dir is not None else ROOT) / "toolsel"
    if Path(where).resolve() != expected.resolve():
        raise SystemExit(f"the child imported toolsel from {where}, expected {expected}")


def compare(name: str, base: dict, new: dict, path: str, split: str) -> dict:
    """One row: how ``new``'s scores of one set, path and split differ from ``base``'s."""
    from toolsel.ranking import ranks_of, top_k_indices
    reg, queries = _load(name)
    queries = [q for q in queries if q.split in ("dev", "test")]
    a, b = base[path], new[path]
    if list(base["ids"]) != [q.id for q in queries] or a.shape != b.shape:
        raise SystemExit(f"{name}: the two revisions scored different requests")
    keep = np.asarray([q.split == split for q in queries])
    a, b = a[keep], b[keep]
    queries = [q for q, k in zip(queries, keep) if k]
    row = {"set": name, "split": split, "path": path, "n_tools": a.shape[1],
           "n_requests": a.shape[0],
           "max_abs_diff": float(np.abs(a - b).max())}
    for k in KS:
        row[f"changed@{k}"] = int(sum(
            not np.array_equal(top_k_indices(a[i], k), top_k_indices(b[i], k))
            for i in range(len(a))))
    names = reg.names
    ra = [ranks_of(a[i], [names.index(t) for t in q.expected]) for i, q in enumerate(queries)]
    rb = [ranks_of(b[i], [names.index(t) for t in q.expected]) for i, q in enumerate(queries)]
    row["rank_changed"] = int(sum(not np.array_equal(x, y) for x, y in zip(ra, rb)))
    for metric, k, fn in (("R@5", 5, np.mean), ("Complete@10", 10, np.all)):
        ma = np.mean([float(fn(r <= k)) for r in ra])
        mb = np.mean([float(fn(r <= k)) for r in rb])
        row[f"{metric}_base"] = ma
        row[f"{metric}_new"] = mb
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="8ca95e7", help="git revision to compare against")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--out", type=Path, help="CSV file to write")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(Path(args.child[0]), args.child[1].split(","))
        return
    import pandas as pd
    sets = args.sets.split(",")
    root = Path(tempfile.mkdtemp(prefix="toolsel-exact-"))
    try:
        rev_dir = root / "baseline"
        rev_dir.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline, "toolsel"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(rev_dir)], input=archive, check=True)
        (root / "base").mkdir()
        (root / "new").mkdir()
        _score(rev_dir, root / "base", sets)
        _score(None, root / "new", sets)
        rows = []
        for name in sets:
            base = dict(np.load(root / "base" / f"{name}.npz"))
            new = dict(np.load(root / "new" / f"{name}.npz"))
            for split in ("dev", "test"):
                for path in ("one", "many"):
                    rows.append(compare(name, base, new, path, split))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    table = pd.DataFrame(rows)
    table["path"] = table["path"].map({"one": "score (select)", "many": "score_many (sweep)"})
    table.insert(0, "baseline", args.baseline)
    pd.set_option("display.width", 250, "display.max_columns", 30)
    print(table.to_string(index=False))
    if args.out:
        from toolsel.io import write_table
        write_table(table, args.out, float_format="%.3g")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
