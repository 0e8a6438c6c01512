"""The ltr stage's shared work gives the answers of the plain computation it replaces.

``fit_ltr`` keeps per request the best few tools by three features (found by
:func:`~toolsel.learn.ltr.top_mask` without sorting) and, inside the dev rule, reads what the
labels teach each inner fold from a cache shared by the blind scorers. Both must be exact:
the same training rows, the same coefficients. Real data: the bundled registry, its labeled
requests and the real embedding model."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import DATA
from toolsel import load_queries
from toolsel.eval.crossfit import prepare
from toolsel.learn.ltr import description_signal, fit_ltr, top_mask
from toolsel.learn.signals import candidate_ranks, interleave


def _stable_top(values: np.ndarray, k: int) -> np.ndarray:
    v = np.where(np.isnan(values), -np.inf, values)
    mask = np.zeros(v.shape, dtype=bool)
    order = np.argsort(-v, axis=1, kind="stable")[:, :k]
    mask[np.arange(len(v))[:, None], order] = True
    return mask


@pytest.mark.parametrize("seed", range(6))
def test_top_mask_keeps_what_a_stable_sort_keeps(seed):
    rng = np.random.default_rng(seed)
    # few distinct values: ties everywhere, as bm25's zeros and clipped features make them
    v = rng.integers(0, 4, size=(40, 60)).astype(np.float64)
    v[rng.random(v.shape) < 0.1] = np.nan
    v[rng.random(v.shape) < 0.05] = -0.0
    for k in (0, 1, 5, 15, 59, 60, 80):
        assert np.array_equal(top_mask(v, k), _stable_top(v, k)), k


def test_interleave_with_known_blind_ranks_is_the_same(registry):
    rng = np.random.default_rng(1)
    learned, blind = rng.normal(size=(9, 30)), rng.integers(0, 3, size=(9, 30)).astype(float)
    cand = rng.random(30) < 0.8
    assert np.array_equal(interleave(learned, blind, cand),
                          interleave(learned, blind, cand,
                                     blind_ranks=candidate_ranks(blind, cand)))


@pytest.fixture(scope="module")
def prep(registry):
    labeled = load_queries(DATA / "requests.jsonl", registry)
    return prepare(registry, labeled, "default", bases=["default", "bm25"])


def test_a_shared_cache_gives_each_blind_scorer_its_own_coefficients(prep):
    reg = prep.registry
    tools_of = [[reg.index(n) for n in q.expected] for q in prep.queries]
    required = [[t for t in ts if prep.scorer.candidates_[t]] for ts in tools_of]
    desc = description_signal(prep.vectors, prep.scorer.description_vectors())
    alone = {name: fit_ltr(blind, prep.vectors, tools_of, required, prep.scorer.candidates_,
                           prep.groups, desc) for name, blind in prep.blinds.items()}
    cache: dict = {}
    shared = {name: fit_ltr(blind, prep.vectors, tools_of, required, prep.scorer.candidates_,
                            prep.groups, desc, cache=cache)
              for name, blind in prep.blinds.items()}
    assert shared == alone
    assert alone["default"] != alone["bm25"]  # the cache holds label work, not the answer
    assert cache  # and it was used


def test_the_choice_runs_on_a_seeded_sample_of_whole_groups_beyond_the_cap():
    from toolsel.learn.rule import MAX_CHOICE_REQUESTS, choice_sample
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(400), rng.integers(1, 4, size=400))  # 1-3 requests a group
    assert choice_sample(groups[:MAX_CHOICE_REQUESTS]) is None  # at the cap: every request
    keep = choice_sample(groups)
    assert keep is not None and np.array_equal(keep, np.sort(keep))
    held = groups[keep]
    # whole groups only, at least the cap and less than the cap plus one group
    for g in np.unique(held):
        assert (held == g).sum() == (groups == g).sum()
    assert MAX_CHOICE_REQUESTS <= len(keep) < MAX_CHOICE_REQUESTS + 3
    assert np.array_equal(keep, choice_sample(groups))  # seeded: the same every time
    assert choice_sample(groups, cap=50) is not None and len(choice_sample(groups, cap=50)) < 53
