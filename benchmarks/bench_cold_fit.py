"""Peak memory and speed of a cold embedding fit, with and without chunked checkpoints.

A cold fit encodes every tool text of a registry the cache has never seen. Before issue 25
all texts were tokenized and encoded in one call and written to the cache once at the end; now
they go through the encoder :data:`toolsel.scorers.embedding_cache.CHECKPOINT_TEXTS` at a time,
each chunk stored as a shard as soon as it is encoded. This script fits the default embedding
model on the long-text synthetic registry of ``bench_memory.py`` (about 600 characters per
description) into an empty temporary cache, once per mode, each in its own process, and
reports the peak resident memory (``ru_maxrss``), the wall time, tools encoded per second
and the shards written.

    python benchmarks/bench_cold_fit.py --tools 2000 --out reports/benchmarks/cold_fit.csv
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path


def _child(n_tools: int, chunk: int) -> None:
    import resource
    import tempfile
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_memory import _data
    from toolsel.scorers import embedding_cache as ec
    from toolsel.scorers.base import get_scorer
    reg, _ = _data(n_tools, 1)
    ec.CHECKPOINT_TEXTS = chunk
    with tempfile.TemporaryDirectory() as cache:
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        scorer = get_scorer("embedding", cache_dir=cache).fit(reg)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        shards = len(list(Path(cache).rglob("*.npz")))
    print(json.dumps({"tools": n_tools, "texts_per_checkpoint": chunk,
                      "encoded": int(scorer.n_encoded_), "wall_s": round(wall, 1),
                      "tools_per_s": round(n_tools / wall, 1),
                      "peak_rss_mb": round(peak / 1024), "fit_rss_growth_mb":
                      round((peak - base) / 1024), "shards": shards}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tools", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=None, help="CSV to write (default: print only)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        _child(args.tools, args.child)
        return
    from toolsel.scorers.embedding_cache import CHECKPOINT_TEXTS
    rows = []
    for chunk, mode in ((args.tools, "one pass (before)"), (CHECKPOINT_TEXTS, "checkpointed")):
        out = subprocess.run([sys.executable, __file__, "--tools", str(args.tools),
                              "--child", str(chunk)], check=True, capture_output=True,
                             text=True).stdout
        row = {"mode": mode, **json.loads(out.strip().splitlines()[-1])}
        rows.append(row)
        print(row, flush=True)
    import pandas as pd
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    if args.out is not None:
        from toolsel.io import write_table
        write_table(table, args.out)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
