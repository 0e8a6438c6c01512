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

import math
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


def _prefix_length(size: int, threshold: float) -> int:
    """How many of a set's rarest tokens must hold one that a set at Jaccard ``threshold`` or
    more shares (|A| - ceil(t |A|) + 1); rounded towards a longer prefix, never a shorter."""
    return size - math.ceil(threshold * size - 1e-9) + 1


def _near_pairs(tokens: list[frozenset], threshold: float):
    """Every pair ``i < j`` whose token sets overlap with Jaccard index >= ``threshold``.

    Exact, by the prefix filter of similarity joins: with each set's tokens ordered rarest
    first (over these requests; ties by the token), two sets at Jaccard ``t`` or more share a
    token among their first |A| - ceil(t |A|) + 1, so only sets sharing a prefix token are
    compared, and only when their sizes allow ``t`` at all. Every candidate is then checked
    with the exact index. Rare tokens have short posting lists: the cost follows the near
    pairs, not the square of the requests.
    """
    df: dict[str, int] = {}
    for ts in tokens:
        for t in ts:
            df[t] = df.get(t, 0) + 1
    index: dict[str, list[int]] = {}
    order = sorted(range(len(tokens)), key=lambda i: (len(tokens[i]), i))
    for i in order:  # shortest first: every indexed set is no longer than the probe
        ts = tokens[i]
        if not ts:
            continue
        size = len(ts)
        prefix = sorted(ts, key=lambda t: (df[t], t))[:_prefix_length(size, threshold)]
        seen: set[int] = set()
        for t in prefix:
            for j in index.get(t, ()):
                if j in seen:
                    continue
                seen.add(j)
                other = tokens[j]
                if len(other) < threshold * size:  # |B|/|A| bounds the index from above
                    continue
                inter = len(ts & other)
                if inter / (size + len(other) - inter) >= threshold:
                    yield (j, i) if j < i else (i, j)
        for t in prefix:
            index.setdefault(t, []).append(i)


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
        for i, j in _near_pairs(tokens, near_duplicate):
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
