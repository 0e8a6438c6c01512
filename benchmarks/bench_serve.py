"""Search latency through ``toolsel serve`` as a ratio to ``Selector.select`` in the same run.

The gateway runs as an MCP client starts it (``toolsel serve`` over stdio, in a child process)
in front of two live servers (mcp-server-time from PyPI, the notes server of the tests). This
process builds the same registry from the same servers
(:func:`toolsel.integrations.mcp_servers.list_servers`, merged as import does) and a
``Selector`` with the same scorer and K. The requests (examples/mcp/queries.jsonl and
turns.jsonl) are timed **interleaved**: for each request, one ``search_tools`` round trip
through the SDK client, then one ``Selector.select`` here, ``--rounds`` times over, after one
warm-up pass of each (model loading and first-call costs left out). Both paths score with the
same selector code; the ratio is what MCP, JSON and the gateway add to a search.

``load_1min`` is the load average before and after (other work on the machine shows in the
tail). Printed and written as ``serve_latency.csv``.

    python benchmarks/bench_serve.py --out reports/benchmarks
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

import anyio
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def _servers() -> list[str]:
    return [shlex.join([PY, "-m", "mcp_server_time", "--local-timezone", "UTC"]),
            shlex.join([PY, str(ROOT / "tests/mcp_servers/notes_server.py")])]


def _requests() -> list[str]:
    out = []
    for name, key in (("queries.jsonl", "query"), ("turns.jsonl", "request")):
        for line in (ROOT / "examples/mcp" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)[key])
    return out


def _local_selector(scorer: str, k: int):
    from toolsel import Selector
    from toolsel.integrations.importers import from_mcp, merge_servers
    from toolsel.integrations.mcp_servers import list_servers, server_specs
    specs, _ = server_specs(_servers())
    groups = [(x.name, from_mcp(x.tools, server=x.name)) for x in list_servers(specs)]
    return Selector(merge_servers(groups), scorer, top_k=k)


def _quantile(values, q):
    return float(pd.Series(values).quantile(q))


async def _measure(selector, requests, rounds, scorer, k):
    from mcp import Client, StdioServerParameters
    env = {"PYTHONPATH": str(ROOT)}
    for key in ("TOOLSEL_CACHE", "TOOLSEL_STATE", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if key in os.environ:
            env[key] = os.environ[key]
    params = StdioServerParameters(command=PY, args=["-m", "toolsel.cli", "serve", *_servers(),
                                                     "--scorers", scorer, "--top-k", str(k)],
                                   env=env)
    times = {"gateway": [], "select": []}
    same = 0
    async with Client(params) as client:
        for q in requests:  # warm-up: first calls, caches
            await client.call_tool("search_tools", {"query": q})
            selector.select(q)
        for _ in range(rounds):
            for q in requests:
                t0 = time.perf_counter()
                got = await client.call_tool("search_tools", {"query": q})
                t1 = time.perf_counter()
                names = selector.select(q)
                t2 = time.perf_counter()
                times["gateway"].append((t1 - t0) * 1000)
                times["select"].append((t2 - t1) * 1000)
                same += [t["name"] for t in got.structured_content["tools"]] == names
    return times, same


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scorers", default="default,bm25")
    p.add_argument("--top-k", type=int, default=3)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    requests = _requests()
    rows = []
    for scorer in args.scorers.split(","):
        load0 = os.getloadavg()[0]
        selector = _local_selector(scorer, args.top_k)
        times, same = anyio.run(_measure, selector, requests, args.rounds, scorer, args.top_k)
        load1 = os.getloadavg()[0]
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append({"scorer": scorer, "n_tools": len(selector.registry), "top_k": args.top_k,
                     "n_searches": len(times["gateway"]),
                     "gateway_median_ms": round(med["gateway"], 3),
                     "gateway_p90_ms": round(_quantile(times["gateway"], 0.9), 3),
                     "select_median_ms": round(med["select"], 3),
                     "select_p90_ms": round(_quantile(times["select"], 0.9), 3),
                     "ratio_median": round(med["gateway"] / med["select"], 2),
                     "same_selection": same == len(times["gateway"]),
                     "load_1min_before": round(load0, 2), "load_1min_after": round(load1, 2)})
        print(json.dumps(rows[-1]), flush=True)
    df = pd.DataFrame(rows)
    print(df.to_string(index=False))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        from toolsel.io import write_table  # the project's one CSV writer (atomic)
        print(f"wrote {write_table(df, args.out / 'serve_latency.csv', float_format=None)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
