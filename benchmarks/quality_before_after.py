"""Every scorer's quality at an earlier commit against the working tree, paired per request.

The scorers are taken by name (``jaccard, bm25, tfidf, embedding, default``), so each side
uses the defaults of its own code: the earlier side is the package as it was at ``--ref``
(extracted with ``git archive`` into a temporary folder and imported from there in a child
process), the later side is the package of this checkout. Both read the same labeled sets:
the dev and test splits of every registry style (``data/styles/*``) and of the workspace
requests (``data/requests.jsonl``), from this checkout.

Per split, set, scorer and metric (R@5, Complete@10, MRR), the table gives both means, the
difference (after − before), its paired bootstrap interval and verdict by the one rule
(:func:`toolsel.eval.stats.paired_comparison`, 2,000 resamples, seed 0) and the requests that
got better or worse. Nothing is timed, so the table is deterministic.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/quality_before_after.py \\
        --ref 8ca95e7 --out reports/benchmarks/quality_before_after.csv
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SETS = ("api", "plugin", "pooled", "marketplace", "openapi", "workspace")
SCORERS = ("jaccard", "bm25", "tfidf", "embedding", "default")
SPLITS = ("dev", "test")
#: ``{metric: (per-query column, cut-off)}``, as in :mod:`toolsel.eval.tuning`.
METRICS = {"R@5": ("R@k", 5), "Complete@10": ("Complete@k", 10), "MRR": ("RR", 10)}


def load_sets(names):
    """``{name: (registry, queries)}`` from this checkout's data, with whichever ``toolsel``
    is imported (the earlier one in the child process)."""
    from toolsel import load_queries, load_registry
    out = {}
    for name in names:
        folder = ROOT / "data" / ("." if name == "workspace" else f"styles/{name}")
        reg = load_registry(folder / "registry.json")
        queries = folder / ("requests.jsonl" if name == "workspace" else "queries.jsonl")
        out[name] = (reg, load_queries(queries, reg))
    return out


def per_query(sets: list[str], scorers: list[str]) -> pd.DataFrame:
    """Per split × set × scorer × cut-off × request: R@k, Complete@k, RR (this process's
    ``toolsel``)."""
    from toolsel.eval.tuning import evaluate_variants, query_metrics
    data = load_sets(sets)
    parts = []
    for split in SPLITS:
        table = evaluate_variants(data, {s: s for s in scorers}, split=split)
        parts.append(query_metrics(table).assign(split=split))
    return pd.concat(parts, ignore_index=True)


def earlier(ref: str, sets: list[str], scorers: list[str]) -> pd.DataFrame:
    """:func:`per_query` run by the package as it was at ``ref``, in a child process."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "toolsel"],
                          check=True, capture_output=True).stdout
    with tempfile.TemporaryDirectory(prefix="toolsel-before-") as tmp:
        with tarfile.open(fileobj=BytesIO(blob)) as tar:
            tar.extractall(tmp, filter="data")
        out = Path(tmp) / "per_query.csv"
        env = dict(os.environ, PYTHONPATH=tmp)
        code = ("import sys, toolsel; sys.path.insert(1, sys.argv[1]); "
                "assert toolsel.__file__.startswith(sys.argv[2]), toolsel.__file__; "
                "import quality_before_after as q; "
                "q.per_query(sys.argv[3].split(','), sys.argv[4].split(','))"
                ".to_csv(sys.argv[5], index=False)")
        subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), tmp,
                        ",".join(sets), ",".join(scorers), str(out)], check=True, env=env,
                       cwd=tmp)
        return pd.read_csv(out)


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    from toolsel.eval.stats import paired_comparison
    both = pd.concat([before.assign(scorer=before["scorer"] + "@before"),
                      after.assign(scorer=after["scorer"] + "@after")], ignore_index=True)
    rows = []
    for (split, style), g in both.groupby(["split", "style"], sort=False):
        for scorer in dict.fromkeys(after["scorer"]):
            for metric, (col, k) in METRICS.items():
                # the family: one before/after comparison per scorer on each metric
                pc = paired_comparison(g, col, scorers=[f"{scorer}@after", f"{scorer}@before"],
                                       top_k=[k], family=after["scorer"].nunique(),
                                       n_boot=2000, seed=0).iloc[0]
                rows.append({"split": split, "set": style, "scorer": scorer, "metric": metric,
                             "n": int(pc["a_wins"] + pc["b_wins"] + pc["ties"]), "before": round(float(pc["mean_b"]), 4),
                             "after": round(float(pc["mean_a"]), 4),
                             "diff": round(float(pc["diff"]), 4),
                             "diff_low": round(float(pc["diff_low"]), 4),
                             "diff_high": round(float(pc["diff_high"]), 4),
                             "better": int(pc["a_wins"]), "worse": int(pc["b_wins"]),
                             "verdict": pc["verdict"]})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", required=True, help="the earlier commit (e.g. 8ca95e7)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--scorers", default=",".join(SCORERS))
    ap.add_argument("--out", type=Path, help="CSV to write (else only printed)")
    args = ap.parse_args()
    sets, scorers = args.sets.split(","), args.scorers.split(",")
    table = compare(earlier(args.ref, sets, scorers), per_query(sets, scorers))
    pd.set_option("display.width", 200, "display.max_rows", 500)
    print(table.to_string(index=False))
    if args.out is not None:
        from toolsel.io import write_table
        write_table(table, args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
