"""Turning score arrays into rankings, deterministically: ties go to the earlier tool.

Everything here works on a score array in registry order and a boolean mask of the tools that
take part (the *candidates*: the registry minus always-include and pinned tools).
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_k_indices", "rank_order", "ranks_of", "best_matches"]


def _clean(scores) -> np.ndarray:
    """Scores as float64, NaN ranked last (a scorer that fails on a tool never wins)."""
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        scores = np.where(np.isnan(scores), -np.inf, scores)
    return scores


def top_k_indices(scores: np.ndarray, k: int, candidates: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` best candidates, in registry order (not score order).

    Higher scores win; among equal scores the earlier tool wins. Uses a partial partition,
    not a full sort, so the cost is linear in the registry size.
    """
    scores = _clean(scores)
    idx = np.arange(len(scores)) if candidates is None else np.flatnonzero(candidates)
    if k <= 0 or len(idx) == 0:
        return np.zeros(0, dtype=np.int64)
    if k >= len(idx):
        return idx
    s = scores[idx]
    kth = np.partition(s, len(s) - k)[len(s) - k]  # the k-th largest score
    above = np.flatnonzero(s > kth)
    ties = np.flatnonzero(s == kth)[: k - len(above)]
    return idx[np.sort(np.concatenate([above, ties]))]


def rank_order(scores: np.ndarray, candidates: np.ndarray | None = None) -> np.ndarray:
    """Candidate indices from best to worst (ties in registry order)."""
    scores = _clean(scores)
    idx = np.arange(len(scores)) if candidates is None else np.flatnonzero(candidates)
    return idx[np.argsort(-scores[idx], kind="stable")]


def ranks_of(scores: np.ndarray, targets, candidates: np.ndarray | None = None) -> np.ndarray:
    """1-based rank of each target index among the candidates (ties in registry order).

    A target that is not a candidate gets rank 0.
    """
    scores = _clean(scores)
    mask = np.ones(len(scores), bool) if candidates is None else np.asarray(candidates, bool)
    out = np.zeros(len(targets), dtype=np.int64)
    pos = np.arange(len(scores))
    for n, t in enumerate(targets):
        if not mask[t]:
            continue
        s = scores[t]
        better = (scores > s) | ((scores == s) & (pos < t))
        out[n] = 1 + int(np.count_nonzero(better & mask))
    return out


def best_matches(scores: np.ndarray, matches: np.ndarray, limit: int) -> np.ndarray:
    """Up to ``limit`` indices of matching tools, best first (ties: the earlier tool).

    What a search or ``discover`` call returns: ``matches`` is the scorer's no-match rule
    (:meth:`toolsel.scorers.base.Scorer.score_and_match`), so nothing is returned when no
    tool matches.
    """
    scores = _clean(scores)
    chosen = top_k_indices(scores, limit, np.asarray(matches, dtype=bool))
    return chosen[np.argsort(-scores[chosen], kind="stable")]
