"""Say when a single scorer is far below ``default`` on the user's own labeled requests.

Single scorers fail in known ways: term matching is blind to paraphrase, and the embedding
scorer alone squeezes a request needing several tools into one vector (on long multi-tool
requests over long API texts it can fall far below TF-IDF and the fused ``default``). A user
who picks one gets numbers, not a warning; this module turns the comparison into one line.

:func:`scorer_gaps` reads a sweep's per-query metrics (no scoring): per metric, the
reference's mean minus the scorer's, with its paired interval and verdict by the one rule of
:mod:`toolsel.eval.inference` (the family: every pair of the table's scorers at that cut-off,
so the pair gets the verdict it gets on every other page). :func:`gap_message` says something
only when some gap is at least ``margin`` **and** the rule puts the reference ahead (the
interval at the family's level lies above zero): the labeled requests show a loss of that
size, not noise. :func:`scorer_warning` runs the two scorers on ``(registry, queries)`` and
returns that message (or ``None``). :func:`gap_table` puts every scorer's gaps in one table
with a ``far`` column (the rule above, row by row): what a report page writes as CSV and
renders its warning from (:func:`toolsel.pages.overview.scorer_gap_warning`).

The stated margin, :data:`MARGIN`, is 0.10 (ten points of R@5 or Complete@10): on the
bundled styles the per-style 95% intervals of these metrics are about ±0.06-0.10 wide, so a
smaller gap is within what one set's requests can show.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..data import Query
from ..scorers.base import Scorer
from .inference import ALPHA as INFERENCE_ALPHA
from .inference import level_words
from .stats import paired_comparison

__all__ = ["MARGIN", "ALPHA", "GAP_METRICS", "GAP_COLUMNS", "scorer_gaps", "gap_table", "gap_message",
           "scorer_warning"]

#: A gap smaller than this (in R@5 or Complete@10) never warns.
MARGIN = 0.10
#: The family-wise level of the rule (:data:`toolsel.eval.inference.ALPHA`).
ALPHA = INFERENCE_ALPHA
#: The metrics compared: ``{label: (query-metric column, cut-off)}``.
GAP_METRICS = {"R@5": ("R@k", 5), "Complete@10": ("Complete@k", 10)}
#: Columns of :func:`gap_table` (``style`` first when grouped ``by="style"``).
GAP_COLUMNS = ["metric", "scorer", "reference", "n", "mean_scorer", "mean_reference", "gap",
               "gap_low", "gap_high", "reference_wins", "scorer_wins", "family", "level",
               "verdict", "margin", "alpha", "far"]


def scorer_gaps(query_metrics: pd.DataFrame, scorer: str, reference: str = "default", *,
                family: int | None = None, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Per metric of :data:`GAP_METRICS`: ``reference − scorer`` on the same queries.

    ``query_metrics`` is a sweep's :attr:`~toolsel.eval.sweep.SweepResult.query_metrics`
    with both labels among its scorers and cut-offs 5 and 10, or a table with one column per
    metric label (``R@5``, ``Complete@10``: a
    :attr:`~toolsel.tables.compare_styles.StyleComparison.query_metrics` of one style). Rows:
    ``metric, scorer, reference, n, mean_scorer, mean_reference, gap, gap_low, gap_high`` (the
    paired interval of the gap at the family's ``level``), ``reference_wins, scorer_wins``
    (requests where each is better), ``family`` and ``verdict`` (the reference against the
    scorer: ahead, behind or tie). ``family``: by default every pair of the table's scorers.
    """
    have = list(dict.fromkeys(query_metrics["scorer"]))
    for name in (scorer, reference):
        if name not in have:
            raise ValueError(f"scorer {name!r} is not in the sweep's query metrics "
                             f"(scorers: {have})")
    if scorer == reference:
        raise ValueError(f"scorer and reference are both {scorer!r}")
    rows = []
    for label, (col, k) in GAP_METRICS.items():
        if label in query_metrics.columns:  # one column per metric, one row per query
            pc = paired_comparison(query_metrics.assign(top_k=0), label,
                                   scorers=[reference, scorer], family=family,
                                   n_boot=n_boot, seed=seed).iloc[0]
            rows.append(_gap_row(label, scorer, reference, pc))
            continue
        ks = set(query_metrics["top_k"])
        if k not in ks:
            raise ValueError(f"the sweep has no top_k={k} (needed for {label}); it has "
                             f"{sorted(ks)}")
        pc = paired_comparison(query_metrics, col, scorers=[reference, scorer], top_k=[k],
                               family=family, n_boot=n_boot, seed=seed).iloc[0]
        rows.append(_gap_row(label, scorer, reference, pc))
    return pd.DataFrame(rows)


def _gap_row(label: str, scorer: str, reference: str, pc: pd.Series) -> dict:
    n = int(pc["a_wins"] + pc["b_wins"] + pc["ties"])
    return {"metric": label, "scorer": scorer, "reference": reference, "n": n,
            "mean_scorer": float(pc["mean_b"]), "mean_reference": float(pc["mean_a"]),
            "gap": float(pc["diff"]), "gap_low": float(pc["diff_low"]),
            "gap_high": float(pc["diff_high"]), "reference_wins": int(pc["a_wins"]),
            "scorer_wins": int(pc["b_wins"]), "family": int(pc["family"]),
            "level": float(pc["level"]), "verdict": pc["verdict"]}


def _far(gaps: pd.DataFrame, margin: float) -> pd.Series:
    """The rule of the warning, per row: a gap of at least ``margin`` where the one rule puts
    the reference ahead (its interval at the family's level above zero)."""
    return (gaps["gap"] >= margin - 1e-12) & (gaps["verdict"] == "ahead")


def gap_table(query_metrics: pd.DataFrame, scorers: Sequence[str] | None = None,
              reference: str = "default", *, by: str | None = None, margin: float = MARGIN,
              n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """:func:`scorer_gaps` of every scorer against ``reference``, in one table.

    ``scorers``: the scorers to compare (default: every scorer of the table but the
    reference, in table order). ``by``: a column to compare within (``"style"`` for a
    comparison over several registries; it becomes the first column). ``far`` is the rule of
    :func:`gap_message`, row by row: the gap is at least ``margin`` and the reference is ahead
    by the one rule (its interval, at the family's level, above zero); the margin and the
    family-wise ``alpha`` are columns too, so a sentence citing them cites the table. Empty (with :data:`GAP_COLUMNS`) when the reference is the only scorer.
    """
    groups = [(None, query_metrics)] if by is None else list(
        query_metrics.groupby(by, sort=False))
    frames = []
    for key, part in groups:
        have = list(dict.fromkeys(part["scorer"]))
        if reference not in have:
            raise ValueError(f"reference scorer {reference!r} is not in the table"
                             + (f" for {by}={key!r}" if by else "") + f" (scorers: {have})")
        names = [s for s in (have if scorers is None else scorers) if s != reference]
        for name in names:
            g = scorer_gaps(part, name, reference, n_boot=n_boot, seed=seed)
            frames.append(g if by is None else g.assign(**{by: key}))
    columns = ([by] if by else []) + GAP_COLUMNS
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True)
    out["margin"] = float(margin)
    out["alpha"] = ALPHA
    out["far"] = _far(out, margin)
    return out[columns]


def gap_message(gaps: pd.DataFrame, margin: float = MARGIN) -> str | None:
    """One line when some gap of :func:`scorer_gaps` is ``>= margin`` and the reference is
    ahead by the one rule; ``None`` otherwise."""
    far = gaps[_far(gaps, margin)]
    if far.empty:
        return None
    first = gaps.iloc[0]
    parts = [f"{r.metric} {r.mean_scorer:.2f} vs {r.mean_reference:.2f} (gap {r.gap:.2f}, "
             f"{level_words(int(r.family))} paired interval [{r.gap_low:.2f}, "
             f"{r.gap_high:.2f}]; {r.reference_wins} "
             f"requests better with {r.reference!r}, {r.scorer_wins} worse)"
             for r in far.itertuples()]
    return (f"warning: scorer {first['scorer']!r} is far below {first['reference']!r} on these "
            f"{int(first['n'])} labeled requests: {'; '.join(parts)}. A gap of {margin:.2f} "
            f"or more whose paired interval lies above zero is a real loss on your data; "
            f"consider scorer={first['reference']!r}.")


def _same(a: str | Scorer, b: str | Scorer) -> bool:
    from ..scorers.base import get_scorer
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    try:
        sa, sb = get_scorer(a), get_scorer(b)
    except (TypeError, ValueError):
        return False
    return type(sa) is type(sb) and sa.get_params() == sb.get_params()


def scorer_warning(registry, queries: Sequence[Query], scorer: str | Scorer | None = None,
                   *, reference: str | Scorer = "default", margin: float = MARGIN,
                   n_boot: int = 2000, seed: int = 0) -> str | None:
    """Score ``queries`` with ``scorer`` and ``reference`` (fitted on ``registry``; a scorer
    already fitted on it is reused) and return :func:`gap_message` of their gaps, or
    ``None`` when the scorer is not far below (or is the reference itself).

    ``registry`` may be a :class:`toolsel.Selector` (``scorer`` then defaults to its own):
    the message is then also issued as a ``UserWarning``, so an application that builds its
    selector from a labeled set hears about a scorer known to fail there.

    Costs one sweep of two scorers at cut-offs 5 and 10 over the labeled queries.
    """
    from ..selection import Selector
    if isinstance(registry, Selector):
        import warnings
        msg = scorer_warning(registry.registry, queries,
                             registry.scorer if scorer is None else scorer,
                             reference=reference, margin=margin, n_boot=n_boot, seed=seed)
        if msg:
            warnings.warn(msg, UserWarning, stacklevel=2)
        return msg
    if scorer is None:
        raise TypeError("scorer_warning: give the scorer to check (or a Selector)")
    from .sweep import sweep
    name = scorer if isinstance(scorer, str) else getattr(scorer, "name", type(scorer).__name__)
    ref = reference if isinstance(reference, str) else getattr(reference, "name", "reference")
    if _same(scorer, reference):
        return None
    if not queries:
        raise ValueError("scorer_warning needs at least one labeled query")
    a, b = f"{name}", f"{ref}"
    if a == b:
        a = f"{name} (chosen)"
    result = sweep(registry, queries, {a: scorer, b: reference}, top_k=(5, 10),
                   progress=False)
    return gap_message(scorer_gaps(result.query_metrics, a, b, n_boot=n_boot, seed=seed),
                       margin)
