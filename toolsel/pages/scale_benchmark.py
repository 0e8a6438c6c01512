"""The page "Scale" (notebook 05): selection latency against registry size.

The page shows the committed benchmark (``make benchmark`` writes it; timings are never
regenerated into the report): :func:`read_benchmark` reads its tables, :func:`targets` says
which targets it meets, :func:`benchmark_sentences` renders the page's sentences from them,
each number citing the CSV it is read from. :func:`given_registry_table` describes a user's
registry timed on this machine, and :func:`given_registry_sentence` says what was measured.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..data import Registry
from ..report import claims
from ..report.claims import Claim
from ..tables.benchmark import scale_table, targets_table

__all__ = ["Benchmark", "BENCH_FILES", "read_benchmark", "targets", "benchmark_sentences",
           "given_registry_table", "given_registry_sentence"]

#: The committed benchmark's files the page needs.
BENCH_FILES = ("scale.csv", "sweep.csv", "machine.json")
#: The page's own tables.
FILES = {"targets": "targets.csv", "given": "given_registry.csv"}


@dataclass
class Benchmark:
    """The committed benchmark: ``raw`` (``scale.csv`` as written), ``scale`` (its
    :func:`~toolsel.tables.benchmark.scale_table`), ``sweeps`` (``sweep.csv``), ``machine``
    (``machine.json``), ``default_latency`` (``default_latency.csv``, ``None`` without it);
    ``source``: how the page cites the folder."""

    raw: pd.DataFrame
    scale: pd.DataFrame
    sweeps: pd.DataFrame
    machine: dict
    default_latency: pd.DataFrame | None
    source: str


def read_benchmark(bench_dir: str | Path, source: str) -> Benchmark | None:
    """The committed benchmark in ``bench_dir`` (cited as ``source``), or ``None`` when a
    file of :data:`BENCH_FILES` is missing."""
    bench = Path(bench_dir)
    if not all((bench / f).exists() for f in BENCH_FILES):
        return None
    raw = pd.read_csv(bench / "scale.csv")
    default_csv = bench / "default_latency.csv"
    return Benchmark(raw, scale_table(raw), pd.read_csv(bench / "sweep.csv"),
                     json.loads((bench / "machine.json").read_text(encoding="utf-8")),
                     pd.read_csv(default_csv) if default_csv.exists() else None, source)


def targets(b: Benchmark) -> pd.DataFrame:
    """The targets set for the indexed selectors, evaluated on the committed benchmark."""
    return targets_table(b.scale, b.sweeps)


def benchmark_sentences(b: Benchmark, target_table: pd.DataFrame, readme: str) -> dict:
    """The page's sentences on the committed benchmark: ``machine`` (what it was measured
    on: quoted data), ``largest`` (its largest registry), ``interleaved`` (the second speed-up
    ratio of ``scale.csv``, when it has one), ``targets`` (all met, or which are missed;
    ``readme``: where the targets are explained)."""
    items = {f"v{i}": f"{k} {v}" for i, (k, v) in enumerate(b.machine.items())}
    scale_src = f"{b.source}/scale.csv"
    out = {
        "machine": claims.literal(
            "**The committed benchmark** (`make benchmark`, run once and committed; not this "
            "run, whose machine may differ) was measured on: "
            + ", ".join("{%s}" % n for n in items) + ".", **items),
        "largest": claims.fill(b.raw, scale_src, "**At {n} tools**", n=("n_tools", "max")),
    }
    raw = b.raw
    big_naive = raw[(raw.scorer == "naive") & (raw.n_tools == raw.n_tools.max())]
    if len(big_naive) == 1 and big_naive["speedup_interleaved"].notna().all():
        out["interleaved"] = claims.fill(
            raw, scale_src, "The \"× faster than naive\" column divides "
            "medians measured in separate processes. Timed call by call in one process, "
            "alternating with the naive loop, the indexed `jaccard` selector is {x}× faster "
            "than it at {n} tools (`speedup_interleaved`).",
            where={"scorer": "naive", "n_tools": int(big_naive["n_tools"].iloc[0])},
            x=("speedup_interleaved", "value", "dec", 0), n="n_tools")
    missed = target_table[target_table.met == False]  # noqa: E712 (None = not applicable)
    if missed.empty:
        out["targets"] = claims.fill(
            target_table, FILES["targets"], "All {n} targets evaluated on the committed "
            "benchmark are met (a target without a value there is not evaluated; none is "
            "evaluated on this run's data).", n=("met", "count_true"))
    else:  # the targets' names (their thresholds are part of the name) are quoted data
        names = {f"t{i}": t for i, t in enumerate(missed.target)}
        out["targets"] = claims.literal(
            "**Missed:** " + "; ".join("{%s}" % n for n in names) + " (see {readme}).",
            readme=readme, **names)
    return out


def given_registry_table(registry: Registry, texts: Sequence[str], timed: str) -> pd.DataFrame:
    """One row describing a registry timed on this machine: its size and text lengths, and
    what was timed (``timed``: ``"queries"`` or ``"tool descriptions"``)."""
    chars = pd.Series([len(f"{t.name} {t.description}") for t in registry])
    words = pd.Series([len(t.split()) for t in texts])
    return pd.DataFrame([{"tools": len(registry),
                          "mean chars per tool (name + description)": chars.mean(),
                          "longest tool text (chars)": chars.max(), "timed texts": timed,
                          "mean words per timed text": words.mean()}])


def given_registry_sentence(table: pd.DataFrame) -> Claim:
    """The page's summary when it times a given registry."""
    return claims.counts(table, FILES["given"], "Selection latency measured on this registry "
                         "({n} tools), beside the committed benchmark.", n="tools")
