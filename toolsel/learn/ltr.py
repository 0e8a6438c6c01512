"""One calibrated scale for labeled and unlabeled tools: a small learning-to-rank stage.

The lift methods of :mod:`~toolsel.learn.signals` add a learned term to the tools that have
labeled requests and nothing to the others, so an unlabeled tool keeps its blind *score* but
loses *rank* to every labeled tool lifted above it. Here every tool of every request is
scored by one logistic model over per-(request, tool) features, so a labeled tool rises only
as far as the labels make it *likely to be the right tool*, measured against unlabeled tools
on the same scale:

``blind_rel``
    the blind score on the request's relative scale: ``(score - mean) / (best - mean)``
    (1 for the request's best tool, 0 for an average one), clipped to ``[-5, 1]``;
``blind_rank``
    ``-log(rank)`` of the tool in the blind ranking (0 for the first);
``usage``
    the nearest labeled request that names the tool: rescaled cosine
    (:func:`~toolsel.learn.signals.learned_signals`' ``knn``), 0 for a tool with none;
``labeled``
    1 for a tool with a labeled request: the model's intercept for labeled tools, learned
    from data in which some relevant tools have no label (tool-held-out folds below); it is
    never allowed to be positive (:func:`fit_ltr`), so no tool is lifted merely for having
    labels;
``labeled_far``
    ``labeled * (1 - gate)``, where ``gate`` is the request's best ``usage`` over all tools:
    how far the request is from every labeled request (a per-request gate: a request unlike
    anything labeled leans on the blind features);
``description``
    rescaled cosine between the request and the tool's own description (the description
    half of Tool2Vec's mix, there for every tool).

Training rows come from requests the features were *not* computed from: the labeled requests
are split into group folds, each fold's features are computed from the other folds' labels
(request folds), and once more with a share of the tools' labels removed as well
(tool-held-out folds), so the model sees relevant tools with no label as often as real users'
partial labels produce them. Per request, the required tools and the hardest others (best by
blind score, by usage and by description) are kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .groups import group_folds
from .signals import FEATURES, Evidence, description_signal, fit_evidence, knn_signal

__all__ = ["FEATURES", "features", "blind_features", "fit_ltr", "ltr_scores", "knn_signal", "description_signal",
           "TOOL_HOLDOUT", "FEATURE_FOLDS", "top_mask"]

#: Share of labeled tools whose labels a tool-held-out training fold removes.
TOOL_HOLDOUT = 0.3
#: Group folds the training features are computed over (fewer with fewer groups).
FEATURE_FOLDS = 3
#: Hard negatives kept per request and feature (best by blind, usage, description).
NEGATIVES = 15
#: L2 strength of the logistic model (scikit-learn's ``C``).
C = 1.0


def blind_features(blind: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The label-free features of requests' blind scores: ``blind_rel`` and ``blind_rank``
    (see the module docstring), one ``(n, n_tools)`` matrix each."""
    b = np.asarray(blind, dtype=np.float64)
    b = np.where(np.isfinite(b), b, np.nan)
    cand = np.asarray(candidates, dtype=bool)
    bc = b[:, cand] if cand.any() else b
    with np.errstate(invalid="ignore", all="ignore"):
        best = np.nanmax(bc, axis=1, initial=-np.inf) if bc.size else np.zeros(len(b))
        mean = np.nanmean(bc, axis=1) if bc.size else np.zeros(len(b))
    spread = best - mean
    spread = np.where(np.isfinite(spread) & (spread > 1e-12), spread, 1.0)
    mean = np.where(np.isfinite(mean), mean, 0.0)
    rel = np.clip(np.nan_to_num((b - mean[:, None]) / spread[:, None], nan=-5.0), -5.0, 1.0)
    # ranks among all tools, best first, ties to the earlier tool (stable)
    filled = np.where(np.isnan(b), -np.inf, b)
    order = np.argsort(-filled, axis=1, kind="stable")
    ranks = np.empty_like(order)
    rows = np.arange(len(b))[:, None]
    ranks[rows, order] = np.arange(1, b.shape[1] + 1)[None, :]
    return rel, -np.log(ranks.astype(np.float64))


def features(blind: np.ndarray, usage: np.ndarray, description: np.ndarray,
             labeled: np.ndarray, candidates: np.ndarray,
             known: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``(n, n_tools, len(FEATURES))`` features (see the module docstring). ``labeled``: a
    boolean per tool (it has a labeled request). ``known``: :func:`blind_features` of
    ``blind``, when already computed."""
    rel, rank = blind_features(blind, candidates) if known is None else known
    lab = np.broadcast_to(np.asarray(labeled, dtype=np.float64)[None, :], rel.shape)
    gate = usage.max(axis=1, keepdims=True) if usage.size else np.zeros((len(rel), 1))
    far = lab * (1.0 - gate)
    return np.stack([rel, rank, usage, lab, far, description], axis=-1)


def ltr_scores(coef: Sequence[float], feats: np.ndarray) -> np.ndarray:
    """The logistic model's log-odds for every (request, tool): ``feats @ coef[1:] + coef[0]``."""
    c = np.asarray(coef, dtype=np.float64)
    return feats @ c[1:] + c[0]


def _labeled_mask(ev: Evidence) -> np.ndarray:
    m = np.zeros(ev.n_tools, dtype=bool)
    m[ev.labeled] = True
    return m


def top_mask(values: np.ndarray, k: int) -> np.ndarray:
    """Per row, a mask of its ``k`` largest entries (NaN lowest, ties to the earlier column):
    the set the first ``k`` of a stable ``argsort(-values)`` keeps, found without sorting."""
    v = np.asarray(values, dtype=np.float64)
    v = np.where(np.isnan(v), -np.inf, v)
    if k >= v.shape[1]:
        return np.ones(v.shape, dtype=bool)
    if k <= 0:
        return np.zeros(v.shape, dtype=bool)
    kth = -np.partition(-v, k - 1, axis=1)[:, k - 1:k]  # each row's k-th largest value
    greater = v > kth
    equal = v == kth
    need = k - greater.sum(axis=1, keepdims=True)
    return greater | (equal & (np.cumsum(equal, axis=1) <= need))


def _label_free_keep(columns: dict[str, np.ndarray], candidates: np.ndarray) -> np.ndarray:
    """The hard negatives :func:`_rows` keeps whatever the labels: each request's best
    :data:`NEGATIVES` candidates by blind score and by description."""
    cand = np.flatnonzero(np.asarray(candidates, dtype=bool))
    keep = np.zeros(columns["blind_rel"].shape, dtype=bool)
    for name in ("blind_rel", "description"):
        keep[:, cand] |= top_mask(columns[name][:, cand], NEGATIVES)
    return keep


def _rows(columns: dict[str, np.ndarray], labeled: np.ndarray,
          required: Sequence[Sequence[int]], candidates: np.ndarray,
          rng: np.random.Generator, label_free: np.ndarray | None = None
          ) -> tuple[np.ndarray, np.ndarray]:
    """Training rows of one fold: per request, its required tools (1), its hardest
    candidates (0: the best :data:`NEGATIVES` by blind score, usage and description) and as
    many drawn at random (so labeled tools, the only ones with usage, are not over-represented
    among the negatives). ``columns``: the requests' ``blind_rel``, ``blind_rank``, ``usage``
    and ``description`` matrices; features are built for the kept (request, tool) pairs only.
    ``label_free``: :func:`_label_free_keep` of ``columns``, when already computed.
    """
    cand = np.flatnonzero(np.asarray(candidates, dtype=bool))
    n, n_tools = columns["usage"].shape
    keep = (_label_free_keep(columns, candidates) if label_free is None
            else label_free.copy())
    target = np.zeros((n, n_tools), dtype=bool)
    has = np.asarray([len(r) > 0 for r in required], dtype=bool)
    keep[:, cand] |= top_mask(columns["usage"][:, cand], NEGATIVES)
    for i, req in enumerate(required):
        if not len(req):
            continue
        target[i, np.asarray(req, dtype=np.int64)] = True
        keep[i, rng.choice(cand, size=min(len(cand), NEGATIVES), replace=False)] = True
    keep = (keep | target) & has[:, None]
    ri, ti = np.nonzero(keep)  # row-major: requests in order, tools ascending
    if not len(ri):
        return np.zeros((0, len(FEATURES))), np.zeros(0, dtype=np.int64)
    lab = np.asarray(labeled, dtype=np.float64)
    usage = columns["usage"]
    gate = usage.max(axis=1) if usage.size else np.zeros(n)
    x = np.stack([columns["blind_rel"][ri, ti], columns["blind_rank"][ri, ti], usage[ri, ti],
                  lab[ti], lab[ti] * (1.0 - gate[ri]), columns["description"][ri, ti]],
                 axis=-1)
    return x, target[ri, ti].astype(np.int64)


def _taught(n_tools: int, vectors: np.ndarray, tools_of: Sequence[Sequence[int]],
            train: np.ndarray, test: np.ndarray, rng: np.random.Generator,
            max_per_tool: int | None, cache: dict | None, fold: int):
    """What one feature fold's training teaches its held-out requests, as labeled and with
    :data:`TOOL_HOLDOUT` of the tools it names unlabeled: per variant ``(usage, labeled)``
    (the requests' knn signal and which tools have a label). The held-out tools are drawn
    from ``rng`` whether or not ``cache`` already holds the result, so every fit sharing a
    cache draws the same."""
    train_tools = [tools_of[j] for j in train]
    named = np.unique(np.concatenate([np.asarray(t, dtype=np.int64) for t in train_tools]
                                     or [np.zeros(0, dtype=np.int64)]))
    hidden = rng.choice(named, size=int(round(TOOL_HOLDOUT * len(named))), replace=False) \
        if len(named) else named
    for v, drop in enumerate((set(), set(hidden.tolist()))):
        key = ("ltr-usage", fold, v)
        if cache is not None and key in cache:
            yield cache[key]
            continue
        kept = [[t for t in ts if t not in drop] for ts in train_tools]
        ev = fit_evidence(n_tools, [""] * len(train), vectors[train], kept,
                          max_per_tool=max_per_tool)
        taught = (knn_signal(ev, vectors[test]), _labeled_mask(ev))
        if cache is not None:
            cache[key] = taught
        yield taught


def fit_ltr(blind: np.ndarray, vectors: np.ndarray, tools_of: Sequence[Sequence[int]],
            required: Sequence[Sequence[int]], candidates: np.ndarray, groups: Sequence[int],
            description: np.ndarray, *, max_per_tool: int | None = None,
            seed: int = 0, cache: dict | None = None) -> tuple[float, ...] | None:
    """The logistic model's coefficients (intercept first, then one per :data:`FEATURES`)
    fit on out-of-fold features of these labeled requests; ``None`` when there is nothing to
    learn from (fewer than two groups, or no positive or no negative row).

    ``description``: the requests' :func:`description_signal` (label-free, computed once).
    ``cache``: a dict shared by fits on the same requests, labels and groups that differ only
    in ``blind`` (one per blind scorer): what the labels teach each inner fold is computed
    once and read by the others.
    """
    from sklearn.linear_model import LogisticRegression
    groups = np.asarray(groups)
    n_groups = len(np.unique(groups))
    if n_groups < 2:
        return None
    folds = group_folds(groups, min(FEATURE_FOLDS, n_groups))
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for f in range(int(folds.max()) + 1):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        columns = dict(zip(("blind_rel", "blind_rank"), blind_features(blind[test], candidates)),
                       description=description[test])
        label_free = _label_free_keep(columns, candidates)  # the same for both variants
        for usage, labeled in _taught(blind.shape[1], vectors, tools_of, train, test, rng,
                                      max_per_tool, cache, f):
            x, y = _rows({**columns, "usage": usage}, labeled, [required[j] for j in test],
                         candidates, rng, label_free)
            xs.append(x)
            ys.append(y)
    x, y = np.vstack(xs), np.concatenate(ys)
    if not len(y) or y.min() == y.max():
        return None
    cols = list(range(x.shape[1]))
    for _ in range(2):
        model = LogisticRegression(C=C, max_iter=500).fit(x[:, cols], y)
        coef = np.zeros(x.shape[1])
        coef[cols] = model.coef_[0]
        lab = FEATURES.index("labeled")
        if coef[lab] <= 0 or lab not in cols:
            break
        cols.remove(lab)  # labels never lift a tool by themselves: refit without the term
    return (float(model.intercept_[0]), *(float(c) for c in coef))
