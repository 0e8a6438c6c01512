"""Run the same labeled suite on two versions of a registry and list what changed.

The use case is description repair: a catalog owner reads the misses on ``dev``, rewrites a
few descriptions (kept as a small patch file, :func:`toolsel.datasets.load_repairs`, applied in memory with
:func:`apply_repairs`), and proves on ``test`` that the change finds more required tools
without losing any. :func:`compare_registries` scores both versions with the same scorer and
cut-off and reports, per query and required tool, whether it was found or lost and how its
rank moved.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..data import Query, Registry, Tool, suggest_names
from ..eval.sweep import sweep

__all__ = ["apply_repairs", "repair_table", "Comparison", "compare_registries",
           "compare_scorers", "compare_suites", "held_back_terms"]


def apply_repairs(registry: Sequence[Tool], repairs: Mapping[str, str]) -> Registry:
    """A new registry with the descriptions in ``repairs`` replaced (order, names, schemas and
    metadata unchanged). ``registry`` is not modified."""
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    for name in repairs:
        if name not in reg:
            raise KeyError(f"repair for {name!r}, which is not in the registry"
                           f"{suggest_names(name, reg.names)}")
    tools = [dataclasses.replace(t, description=repairs[t.name]) if t.name in repairs else t
             for t in reg]
    return Registry(tools, source=f"{reg.source or 'registry'} + {len(repairs)} repairs")


def repair_table(registry: Registry, repairs: Mapping[str, str]) -> pd.DataFrame:
    """One row per repaired tool, in registry order: ``tool, before, after, added`` (the text
    appended, when the repair extends the old description; else empty)."""
    rows = []
    for tool in registry:
        if tool.name in repairs:
            new = repairs[tool.name]
            added = new[len(tool.description):].strip() if new.startswith(tool.description) else ""
            rows.append({"tool": tool.name, "before": tool.description, "after": new,
                         "added": added})
    return pd.DataFrame(rows, columns=["tool", "before", "after", "added"])


def held_back_terms(repairs: Mapping[str, str], registry: Registry,
                    chosen_on: Iterable[Query], held_back: Iterable[Query]) -> pd.DataFrame:
    """Words a repair adds that appear in held-back requests but in none it was chosen on.

    A leak check for description repair: content terms (see
    :func:`toolsel.tables.failure_modes.content_terms`) of each repaired description that the old
    description lacks, and that occur in some ``held_back`` query but no ``chosen_on`` query.
    One row per repaired tool with such terms: ``tool, terms`` (space-joined, sorted).
    """
    from .failure_modes import content_terms
    seen = {t for q in chosen_on for t in content_terms(q.query)}
    held = {t for q in held_back for t in content_terms(q.query)}
    rows = []
    for tool in registry:
        if tool.name not in repairs:
            continue
        added = set(content_terms(repairs[tool.name])) - set(content_terms(tool.description))
        leaked = sorted((added & held) - seen)
        if leaked:
            rows.append({"tool": tool.name, "terms": " ".join(leaked)})
    return pd.DataFrame(rows, columns=["tool", "terms"])


@dataclass
class Comparison:
    """Tables comparing registry ``a`` with registry ``b`` on one suite."""

    summary: pd.DataFrame     # one row per registry version: R@k, Complete@k, MRR, counts
    per_tool: pd.DataFrame    # one row per query × required tool: ranks, hits, change
    per_query: pd.DataFrame   # one row per query: R@k and Complete@k in a and b, change

    def changed(self) -> pd.DataFrame:
        """The per-tool rows whose hit changed (``found`` or ``lost``)."""
        return self.per_tool[self.per_tool["change"].isin(["found", "lost"])]

    def write(self, out_dir: str | Path) -> list[Path]:
        from .discovery import write_table
        out = Path(out_dir)
        return [write_table(getattr(self, n), out / f"compare_{n}.csv")
                for n in ("summary", "per_tool", "per_query")]


def compare_registries(registry_a: Sequence[Tool], registry_b: Sequence[Tool],
                       queries: Sequence[Query], scorer="bm25", top_k: int = 5, *,
                       always_include: Iterable[str] | None = None,
                       labels: tuple[str, str] = ("a", "b")) -> Comparison:
    """Score ``queries`` against both registries with the same scorer and ``top_k``.

    Parameters
    ----------
    registry_a, registry_b
        Two versions of a catalog; every expected tool must be in both.
    always_include : iterable of str, optional
        Sent every turn, outside the filter; ``None`` takes the tools ``registry_a`` marks.
        Required tools among them are left out of the comparison (they are visible anyway).
    labels
        Names of the two versions in the tables (e.g. ``("v1", "v2")``).

    ``change`` per tool is ``found`` (missed in a, sent in b), ``lost`` (the reverse),
    ``kept`` or ``missed``; ``rank_move`` is ``rank_a - rank_b`` (positive: moved up). Per
    query, ``change`` is ``fixed`` (Complete@k 0 → 1), ``broken`` (1 → 0) or ``same``.
    """
    reg_a = registry_a if isinstance(registry_a, Registry) else Registry(registry_a)
    reg_b = registry_b if isinstance(registry_b, Registry) else Registry(registry_b)
    if always_include is None:
        always = sorted(reg_a.always_include, key=reg_a.index)
    else:
        always = [always_include] if isinstance(always_include, str) else list(always_include)
    for label, reg in zip(labels, (reg_a, reg_b)):
        for q in queries:
            for name in q.expected:
                if name not in reg:
                    raise KeyError(f"query {q.id!r} expects {name!r}, which is not in registry "
                                   f"{label!r}{suggest_names(name, reg.names)}")
    a, b = labels
    runs = {}
    for label, reg in zip(labels, (reg_a, reg_b)):
        runs[label] = sweep(reg, queries, {"scorer": scorer}, [top_k],
                            always_include=always, progress=False)
    pt = []
    ra = runs[a].per_query
    rb = runs[b].per_query
    ra = ra[~ra["always_include"]]
    rb = rb[~rb["always_include"]]
    merged = ra[["query_id", "query", "tool", "rank", f"hit@{top_k}"]].merge(
        rb[["query_id", "tool", "rank", f"hit@{top_k}"]], on=["query_id", "tool"],
        suffixes=(f"_{a}", f"_{b}"), validate="one_to_one")
    for _, r in merged.iterrows():
        ha, hb = int(r[f"hit@{top_k}_{a}"]), int(r[f"hit@{top_k}_{b}"])
        change = {(0, 1): "found", (1, 0): "lost", (1, 1): "kept", (0, 0): "missed"}[(ha, hb)]
        pt.append({"query_id": r["query_id"], "query": r["query"], "tool": r["tool"],
                   f"rank_{a}": int(r[f"rank_{a}"]), f"rank_{b}": int(r[f"rank_{b}"]),
                   f"hit_{a}": ha, f"hit_{b}": hb, "change": change,
                   "rank_move": int(r[f"rank_{a}"]) - int(r[f"rank_{b}"])})
    per_tool = pd.DataFrame(pt, columns=["query_id", "query", "tool", f"rank_{a}", f"rank_{b}",
                                         f"hit_{a}", f"hit_{b}", "change", "rank_move"])
    qa = runs[a].query_metrics.set_index("query_id")
    qb = runs[b].query_metrics.set_index("query_id")
    pq = []
    for q in queries:
        ca, cb = qa.at[q.id, "Complete@k"], qb.at[q.id, "Complete@k"]
        if pd.isna(ca):
            continue
        change = "fixed" if (ca, cb) == (0, 1) else "broken" if (ca, cb) == (1, 0) else "same"
        pq.append({"query_id": q.id, "query": q.query, "category": q.category,
                   "split": q.split, f"R@k_{a}": qa.at[q.id, "R@k"],
                   f"R@k_{b}": qb.at[q.id, "R@k"], f"Complete@k_{a}": ca,
                   f"Complete@k_{b}": cb, "change": change})
    per_query = pd.DataFrame(pq)
    rows = []
    for label in labels:
        s = runs[label].summary.iloc[0]
        rows.append({"registry": label, "scorer": str(scorer), "top_k": top_k,
                     "R@k": s["R@k"], "Complete@k": s["Complete@k"], "MRR": s["MRR"],
                     "n_queries": int(s["n_queries"]),
                     "tools_sent": int(per_tool[f"hit_{label}"].sum()),
                     "payload_json_tokens": s["payload_json_tokens"]})
    summary = pd.DataFrame(rows)
    counts = per_tool["change"].value_counts()
    summary["found"] = [0, int(counts.get("found", 0))]
    summary["lost"] = [0, int(counts.get("lost", 0))]
    qcounts = per_query["change"].value_counts() if len(per_query) else pd.Series(dtype=int)
    summary["queries_fixed"] = [0, int(qcounts.get("fixed", 0))]
    summary["queries_broken"] = [0, int(qcounts.get("broken", 0))]
    return Comparison(summary, per_tool, per_query)


def compare_scorers(registry_a: Sequence[Tool], registry_b: Sequence[Tool],
                    queries: Sequence[Query], scorers: Iterable[str], top_k: int = 5, *,
                    always_include: Iterable[str] | None = None,
                    labels: tuple[str, str] = ("a", "b")) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`compare_registries` for several scorers: the summaries stacked (one row per
    scorer × version) and the changed tools stacked (with a ``scorer`` column)."""
    summaries, changes = [], []
    for name in scorers:
        cmp = compare_registries(registry_a, registry_b, queries, name, top_k,
                                 always_include=always_include, labels=labels)
        summaries.append(cmp.summary)
        ch = cmp.changed().copy()
        ch.insert(0, "scorer", name)
        changes.append(ch)
    return (pd.concat(summaries, ignore_index=True),
            pd.concat(changes, ignore_index=True) if changes else pd.DataFrame())


def compare_suites(registry_a: Sequence[Tool], registry_b: Sequence[Tool],
                   suites: Mapping[str, Sequence[Query]], scorers: Iterable[str],
                   top_k: int = 5, *, labels: tuple[str, str] = ("a", "b"), n_boot: int = 2000,
                   seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """:func:`compare_registries` for every suite × scorer, and the change of ``Complete@k``
    with a paired bootstrap interval over the same requests.

    Parameters
    ----------
    suites : name -> queries (e.g. ``{"dev": ..., "test": ...}``), in report order
    labels : the names of version a and version b (columns of the gain table)

    Returns
    -------
    summaries
        The comparisons' summaries stacked, ``suite`` first (one row per suite × scorer ×
        version).
    changes
        The changed tools stacked (``suite, scorer``, then :meth:`Comparison.changed`).
    gain
        Indexed by ``(suite, scorer)``: ``Complete@k`` of each version (columns named by
        ``labels``), ``gain`` (b − a), ``found``, ``lost``, ``queries_fixed``,
        ``queries_broken`` of version b, ``gain_low``/``gain_high`` (the paired bootstrap
        interval of b − a, :func:`toolsel.eval.stats.paired_comparison`), ``family`` and
        ``verdict`` (b against a, by the one rule of :mod:`toolsel.eval.inference`: the
        family is one comparison per scorer of a suite) and ``n`` (requests rated).
    """
    from ..eval.stats import paired_comparison
    a, b = labels
    summaries, changes, pairs = [], [], []
    for name, suite in suites.items():
        for scorer_name in scorers:
            cmp = compare_registries(registry_a, registry_b, suite, scorer_name, top_k,
                                     labels=labels)
            summary, changed = cmp.summary.copy(), cmp.changed().copy()
            changed.insert(0, "scorer", scorer_name)
            summary.insert(0, "suite", name)
            changed.insert(0, "suite", name)
            summaries.append(summary)
            changes.append(changed)
            pq = cmp.per_query
            long = pd.concat([pd.DataFrame({"scorer": v, "top_k": top_k,
                                            "query_id": pq["query_id"],
                                            "Complete@k": pq[f"Complete@k_{v}"]})
                              for v in (b, a)], ignore_index=True)
            pc = paired_comparison(long, "Complete@k", scorers=[b, a],
                                   family=max(1, len(scorers)), n_boot=n_boot,
                                   seed=seed).iloc[0]
            pairs.append({"suite": name, "scorer": scorer_name, "gain_low": pc["diff_low"],
                          "gain_high": pc["diff_high"], "family": int(pc["family"]),
                          "verdict": pc["verdict"]})
    summaries = pd.concat(summaries, ignore_index=True)
    changes = pd.concat(changes, ignore_index=True)
    gain = summaries.pivot_table(index=["suite", "scorer"], columns="registry",
                                 values="Complete@k", sort=False)
    gain["gain"] = gain[b] - gain[a]
    counts = summaries[summaries.registry == b].set_index(["suite", "scorer"])[
        ["found", "lost", "queries_fixed", "queries_broken"]]
    n_rated = summaries[summaries.registry == a].set_index(["suite", "scorer"])["n_queries"]
    gain = gain.join(counts).join(pd.DataFrame(pairs).set_index(["suite", "scorer"]))
    gain["n"] = n_rated
    return summaries, changes, gain
