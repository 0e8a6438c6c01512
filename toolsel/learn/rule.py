"""The dev rule: which way of using the labels a registry gets, chosen by inner cross-validation.

Stated once, used by every fit:

1. The labeled requests a fit learns from are split into ``cv`` folds (at most 5, at least 2),
   near-duplicates and the turns of one conversation kept in one fold
   (:func:`~toolsel.learn.groups.group_folds`).
2. Every setting of :data:`~toolsel.learn.signals.SETTINGS` (``blind``, i.e. the labels unused,
   and each method at each weight) is fit on all folds but one and scores the requests of the
   fold left out, in turn.
3. A setting's dev score is the mean over those held-out requests of
   ``(R@5 + Complete@10) / 2`` (the rule the blind ``default`` was tuned with).
4. A setting is eligible only when the held-out evidence against ``blind`` is real, both:

   - it beats ``blind`` by more than one held-out request's worth (``1 / n`` for ``n``
     held-out requests: a gain smaller than one request flipping is noise), and
   - the paired 95% interval of its gain excludes zero: over the held-out requests, the
     mean of (its objective - blind's) minus :data:`Z` standard errors is above 0 (normal
     approximation; e.g. 5 requests won by 1 and none lost among 100 pass, 6 won and 2
     lost do not).

5. The eligible setting with the best dev score wins; with none eligible ``blind`` stays: a
   learned setting that wins a few held-out requests and loses others is not kept on the
   strength of a small mean. Ties go to the simpler setting (the order of
   :data:`~toolsel.learn.signals.SETTINGS`). With fewer than two groups of requests there is
   nothing to validate on, and the rule picks ``blind``.

Only the requests handed to the fit are read: inside a cross-fitted evaluation the rule runs
on the training folds alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .groups import group_folds
from .signals import SETTINGS, Setting, combine, fit_evidence, learned_signals

__all__ = ["choose_setting", "objective", "required_ranks", "gain_low", "RULE", "MAX_FOLDS",
           "Z"]

MAX_FOLDS = 5
#: Standard errors below the mean paired gain that must still be above zero (95% interval).
Z = 1.96
#: One line saying the rule (written into model files and reports).
RULE = ("inner group k-fold CV (k = min(5, groups)) on the labeled requests; score = mean "
        "(R@5 + Complete@10) / 2 on held-out requests; a setting is eligible if it beats blind "
        "by more than 1/n (n held-out requests) and the paired 95% interval of its gain "
        "(mean - 1.96 standard errors) is above 0; the best eligible wins, else blind; ties "
        "to the simpler setting")


def required_ranks(scores: np.ndarray, required: Sequence[Sequence[int]],
                   candidates: np.ndarray) -> list[np.ndarray]:
    """Per row, the 1-based ranks of its required tool indices among ``candidates`` (ties to
    the earlier tool, as every toolsel ranking)."""
    cand = np.asarray(candidates, dtype=bool)
    pos = np.arange(scores.shape[1])
    out = []
    for row, req in zip(np.asarray(scores, dtype=np.float64), required):
        req = np.asarray(req, dtype=np.int64)
        if not len(req):
            out.append(np.zeros(0, dtype=np.int64))
            continue
        row = np.where(np.isnan(row), -np.inf, row)
        s = row[req][:, None]
        better = (row[None, :] > s) | ((row[None, :] == s) & (pos[None, :] < req[:, None]))
        out.append(1 + (better & cand[None, :]).sum(axis=1))
    return out


def gain_low(diff: np.ndarray) -> float:
    """The low end of the paired 95% interval of ``diff``'s mean: mean - :data:`Z` standard
    errors (normal approximation; ``-inf`` for fewer than two values)."""
    diff = np.asarray(diff, dtype=np.float64)
    if len(diff) < 2:
        return float("-inf")
    return float(diff.mean() - Z * diff.std(ddof=1) / np.sqrt(len(diff)))


def objective(ranks: Sequence[np.ndarray]) -> np.ndarray:
    """``(R@5 + Complete@10) / 2`` per request (``nan`` for a request with nothing to find)."""
    out = np.full(len(ranks), np.nan)
    for i, r in enumerate(ranks):
        if len(r):
            out[i] = ((r <= 5).mean() + float((r <= 10).all())) / 2
    return out


def choose_setting(blind: np.ndarray, texts: Sequence[str], vectors: np.ndarray,
                   tools_of: Sequence[Sequence[int]], required: Sequence[Sequence[int]],
                   candidates: np.ndarray, groups: Sequence[int], *,
                   description_vectors: np.ndarray | None = None,
                   settings: Sequence[Setting] = SETTINGS, max_per_tool: int | None = None,
                   max_folds: int = MAX_FOLDS) -> tuple[Setting, list[dict]]:
    """The setting the dev rule picks for these labeled requests, and its table.

    Rows of ``blind``, ``texts``, ``vectors``, ``tools_of`` (what each request teaches),
    ``required`` (what each must find: its tools outside always-include) and ``groups`` are
    the requests. Returns ``(setting, rows)``; each row is ``{"setting", "method", "dev_score",
    "n_requests", "chosen"}``.
    """
    settings = list(settings)
    if not settings:
        raise ValueError("no settings to choose from")
    n_groups = len(set(int(g) for g in groups))
    if n_groups < 2 or len(settings) == 1:
        pick = Setting("blind") if n_groups < 2 else settings[0]
        return pick, [{"setting": pick.label, "method": pick.method, "dev_score": float("nan"),
                       "n_requests": len(texts), "chosen": True}]
    folds = group_folds(groups, min(max_folds, n_groups))
    per = _held_out_objectives(blind, texts, vectors, tools_of, required, candidates, folds,
                               description_vectors, settings, max_per_tool)
    valid = ~np.isnan(per[0])
    means = per[:, valid].mean(axis=1) if valid.any() else np.zeros(len(settings))
    best = _pick(settings, means, per[:, valid])
    rows = [{"setting": s.label, "method": s.method, "dev_score": float(m),
             "n_requests": int(valid.sum()), "chosen": i == best}
            for i, (s, m) in enumerate(zip(settings, means))]
    return settings[best], rows


def _held_out_objectives(blind: np.ndarray, texts: Sequence[str], vectors: np.ndarray,
                         tools_of: Sequence[Sequence[int]], required: Sequence[Sequence[int]],
                         candidates: np.ndarray, folds: np.ndarray,
                         description_vectors: np.ndarray | None, settings: list[Setting],
                         max_per_tool: int | None) -> np.ndarray:
    """Per setting (rows) and request (columns), :func:`objective` of the request when its
    fold is held out and the setting is fit on the other folds (``nan``: nothing to find)."""
    alphas = sorted({s.alpha for s in settings if s.method == "centroid"} | {0.0})
    per = np.full((len(settings), len(texts)), np.nan)
    for f in np.unique(folds):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        ev = fit_evidence(blind.shape[1], [texts[j] for j in train], vectors[train],
                          [tools_of[j] for j in train], max_per_tool=max_per_tool)
        sig = learned_signals(ev, [texts[j] for j in test], vectors[test],
                              description_vectors, alphas)
        req = [required[j] for j in test]
        for i, s in enumerate(settings):
            scores = combine(blind[test], sig, s, ev.labeled)
            per[i, test] = objective(required_ranks(scores, req, candidates))
    return per


def _pick(settings: list[Setting], means: np.ndarray, per: np.ndarray) -> int:
    """Index of the setting step 4 of the rule picks from the dev ``means`` and the per-request
    held-out objectives ``per`` (settings × requests with something to find)."""
    blind_at = next((i for i, s in enumerate(settings) if s.method == "blind"), None)
    if blind_at is None:
        return int(np.argmax(np.round(means, 12)))  # first of the best: the simpler setting
    n = per.shape[1]
    ok = np.zeros(len(settings), dtype=bool)
    for i in range(len(settings)):
        ok[i] = n > 0 and means[i] - means[blind_at] > 1.0 / n + 1e-12 and \
            gain_low(np.round(per[i] - per[blind_at], 12)) > 0
    if not ok.any():
        return blind_at  # no gain on held-out requests is shown to be real
    return int(np.argmax(np.where(ok, np.round(means, 12), -np.inf)))
