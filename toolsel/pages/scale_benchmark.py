"""The page "Scale" (notebook 05): selection latency against registry size.

The page shows the committed benchmark (``make benchmark`` writes it; timings are never
regenerated into the report) on the bundled registry: :func:`read_benchmark` reads its
tables, :func:`targets` says which targets it meets, :func:`benchmark_sentences` renders the
page's sentences from them, each number citing the CSV it is read from.

On any other registry the page times that registry instead, at its size and grown tenfold
(:func:`toolsel.synthetic.grown_registry`, the way the scale benchmark grows registries):
:func:`given_registry_table` describes both registries (sizes and text lengths, no timing),
:func:`given_registry_sentence` says what was measured, and :func:`timing_table` lays out the
run's timings for display only: timings change on every run, so no table of the report holds
them.
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
           "given_registry_table", "given_registry_sentence", "timing_table", "AS_GIVEN"]

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


#: The ``registry`` label of the given registry's row (the grown one's: ``"grown N×"``).
AS_GIVEN = "as given"


def _registry_row(label: str, registry: Registry, texts: Sequence[str], timed: str,
                  added: int) -> dict:
    chars = pd.Series([len(f"{t.name} {t.description}") for t in registry])
    words = pd.Series([len(t.split()) for t in texts])
    return {"registry": label, "tools": len(registry), "synthetic tools added": added,
            "mean chars per tool (name + description)": chars.mean(),
            "longest tool text (chars)": chars.max(), "timed texts": timed,
            "mean words per timed text": words.mean()}


def given_registry_table(registry: Registry, texts: Sequence[str], timed: str, *,
                         grown: Registry | None = None) -> pd.DataFrame:
    """The registries timed on this machine, one row each: ``registry`` (:data:`AS_GIVEN`,
    then ``"grown N×"`` for ``grown``), size, synthetic tools added, text lengths, and what
    was timed (``timed``: ``"queries"`` or ``"tool descriptions"``; the same texts on both)."""
    rows = [_registry_row(AS_GIVEN, registry, texts, timed, 0)]
    if grown is not None and len(grown) > len(registry):
        rows.append(_registry_row(f"grown {len(grown) // len(registry)}×", grown, texts, timed,
                                  len(grown) - len(registry)))
    return pd.DataFrame(rows)


def given_registry_sentence(table: pd.DataFrame) -> Claim:
    """The page's summary when it times a given registry (and the same grown)."""
    mine = claims.counts(table, FILES["given"], "Selection latency measured on this registry "
                         "({n} tools)", where={"registry": AS_GIVEN}, n="tools")
    if len(table) < 2:
        return mine + "."
    label = str(table["registry"].iloc[1])
    return mine + claims.counts(
        table, FILES["given"], " and on it grown to {g} tools: its own tools, then {a} "
        "synthetic ones (`toolsel.synthetic`, as the scale benchmark grows registries).",
        where={"registry": label}, g="tools", a="synthetic tools added")


def timing_table(rows: Sequence[dict], labels: Sequence[str]) -> pd.DataFrame:
    """The run's timings for display (never written: they change on every run): one row per
    scorer and registry (``labels[i]`` names the registry of ``rows[i]``), the scorers in the
    scale benchmark's order, each registry's rows together."""
    frames = [scale_table([r for r, lab in zip(rows, labels) if lab == label]).assign(
        registry=label) for label in dict.fromkeys(labels)]
    table = pd.concat(frames, ignore_index=True)
    cols = {"registry": "registry", "scorer": "scorer", "n_tools": "tools",
            "build_s": "build (s)", "p50_ms": "p50 (ms)", "p95_ms": "p95 (ms)",
            "speedup_vs_naive": "× faster than naive"}
    return table[[c for c in cols if c in table.columns]].rename(columns=cols)
