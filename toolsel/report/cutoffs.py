"""Cut-off helpers the notebooks import: which K send different tool sets, the one K a
single-K section shows, and the note about K that send every tool."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["distinct_top_k", "top_k_note", "headline_k"]


def distinct_top_k(top_k: Iterable[int], n_candidates: int) -> tuple[list[int], list[int]]:
    """Cut-offs that send different tool sets: ``(kept, dropped)``, both sorted.

    A registry with ``n_candidates`` tools competing for K (always-include tools excluded)
    sends all of them at every K >= ``n_candidates``: the smallest such K is kept (the
    "every tool" row), the larger ones are dropped rather than reported as duplicate rows.
    """
    from ..eval.sweep import effective_top_k  # one rule, shared with the sweep
    return effective_top_k(top_k, n_candidates)


def top_k_note(kept: Sequence[int], dropped: Sequence[int], n_candidates: int) -> str:
    """One line saying which cut-offs send every tool, or ``""`` when none does."""
    full = [k for k in kept if k >= n_candidates]
    if not full:
        return ""
    note = (f"K={full[0]} sends every one of the {n_candidates} candidate tools (payload "
            "reduction 0 besides always-include)")
    if dropped:
        note += (f"; K={', '.join(map(str, dropped))} would send the same and "
                 f"{'is' if len(dropped) == 1 else 'are'} not repeated")
    return note + "."


def headline_k(top_k: Iterable[int], n_candidates: int | None = None, prefer: int = 10) -> int:
    """The one cut-off a single-K section shows: ``prefer`` if given, else the largest K that
    still filters (below ``n_candidates``), else the smallest."""
    ks = sorted(set(int(k) for k in top_k))
    if not ks:
        raise ValueError("no cut-off given")
    if prefer in ks and (n_candidates is None or prefer < n_candidates):
        return prefer
    filtering = [k for k in ks if n_candidates is None or k < n_candidates]
    return filtering[-1] if filtering else ks[0]
