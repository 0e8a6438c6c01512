"""Which labeled requests must share a fold, and the folds themselves.

An estimate of a model fit on labeled requests is honest only when no request is scored by a
model that learned from it, nor from a copy of it: near-duplicate requests and the turns of one
conversation are *one* unit and go to one fold together.

Two requests are in one group when

- their normalized texts are equal (lowercased, runs of ``[a-z0-9]`` joined by one space), or
- their token sets overlap with a Jaccard index of at least ``near_duplicate`` (0.8), or
- they carry the same conversation id in their metadata (``conversation``,
  ``conversation_id`` or ``group``: what an exported multi-turn log names it),

closed transitively (union-find). :func:`group_folds` then deals whole groups to ``k`` folds,
largest group first, each to the fold with the fewest requests so far (ties: the lower fold),
which is scikit-learn's ``GroupKFold`` rule, written here so the order is fixed and documented.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..data import Query
from ..text import tokenize

__all__ = ["request_groups", "group_folds", "normalized_text", "seeded_split",
           "NEAR_DUPLICATE", "GROUP_KEYS", "SPLIT_SEED"]

#: Token-set Jaccard index from which two requests count as near-duplicates.
NEAR_DUPLICATE = 0.8
#: The seed of :func:`seeded_split`.
SPLIT_SEED = 0
#: Query metadata keys naming the conversation (or any unit) a request belongs to.
GROUP_KEYS = ("conversation", "conversation_id", "group")


def normalized_text(text: str) -> str:
    """``text`` lowercased, its ``[a-z0-9]`` runs joined by single spaces."""
    return " ".join(tokenize(text))


def _group_key(q: Query) -> str | None:
    for key in GROUP_KEYS:
        value = q.metadata.get(key) if q.metadata else None
        if value is not None and str(value).strip():
            return f"{key}={value}"
    return None


def request_groups(queries: Sequence[Query], *,
                   near_duplicate: float = NEAR_DUPLICATE) -> np.ndarray:
    """One group number per request (0, 1, 2... in order of first appearance).

    See the module docstring for the rule. ``near_duplicate`` above 1 switches the token
    overlap test off (exact normalized text and conversation ids still group).
    """
    n = len(queries)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[max(a, b)] = min(a, b)

    first: dict[str, int] = {}
    tokens = []
    for i, q in enumerate(queries):
        for key in (f"text={normalized_text(q.query)}", _group_key(q)):
            if key is None:
                continue
            if key in first:
                union(first[key], i)
            else:
                first[key] = i
        tokens.append(frozenset(tokenize(q.query)))
    if near_duplicate <= 1:
        # inverted index: only pairs sharing a token are compared
        by_token: dict[str, list[int]] = {}
        for i, ts in enumerate(tokens):
            for t in ts:
                by_token.setdefault(t, []).append(i)
        for i, ts in enumerate(tokens):
            if not ts:
                continue
            seen: set[int] = set()
            for t in ts:
                for j in by_token[t]:
                    if j <= i or j in seen:
                        continue
                    seen.add(j)
                    other = tokens[j]
                    # |A ∩ B| / |A ∪ B| >= x needs min/max size >= x: skip cheaply
                    if min(len(ts), len(other)) < near_duplicate * max(len(ts), len(other)):
                        continue
                    inter = len(ts & other)
                    if inter / (len(ts) + len(other) - inter) >= near_duplicate:
                        union(i, j)
    roots = [find(i) for i in range(n)]
    number: dict[int, int] = {}
    return np.asarray([number.setdefault(r, len(number)) for r in roots], dtype=np.int64)


def group_folds(groups: Sequence[int], k: int) -> np.ndarray:
    """The fold (0..k-1) of each request, whole groups per fold, sizes balanced.

    Groups are dealt largest first (ties: the group seen first) to the fold holding the
    fewest requests so far (ties: the lower fold). ``k`` larger than the number of groups is
    an error: some fold would be empty.
    """
    groups = np.asarray(groups, dtype=np.int64)
    ids, counts = np.unique(groups, return_counts=True)
    if k < 2:
        raise ValueError(f"k must be at least 2 folds, got {k}")
    if len(ids) < k:
        raise ValueError(f"{k} folds need at least {k} groups of requests, got {len(ids)}")
    order = sorted(range(len(ids)), key=lambda i: (-counts[i], ids[i]))
    size = np.zeros(k, dtype=np.int64)
    fold_of = {}
    for i in order:
        f = int(np.argmin(size))
        fold_of[int(ids[i])] = f
        size[f] += counts[i]
    return np.asarray([fold_of[int(g)] for g in groups], dtype=np.int64)


def seeded_split(queries: Sequence[Query], *, seed: int = SPLIT_SEED) -> list[str]:
    """A dev/test split for requests that carry none: whole request groups
    (:func:`request_groups`: near-duplicates and one conversation's turns stay together) are
    shuffled with ``seed`` and dealt to dev until it holds half the requests (rounded up),
    the rest to test. One ``"dev"``/``"test"`` per request, in file order; deterministic."""
    groups = request_groups(queries)
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    order = np.random.default_rng(seed).permutation(n_groups)
    sizes = np.bincount(groups, minlength=n_groups)
    half = (len(queries) + 1) // 2
    dev, taken = set(), 0
    for g in order:
        if taken >= half:
            break
        dev.add(int(g))
        taken += int(sizes[g])
    if n_groups > 1 and len(dev) == n_groups:  # one test group at least
        dev.discard(int(order[-1]))
    return ["dev" if int(g) in dev else "test" for g in groups]
