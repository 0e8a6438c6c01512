"""The dev rule: which blind scorer and which way of using the labels a fit gets, chosen by
inner cross-validation.

Stated once, used by every fit:

1. The labeled requests a fit learns from (beyond :data:`MAX_CHOICE_REQUESTS`, a seeded sample
   of whole request groups holding that many: :func:`choice_sample`) are split into ``cv``
   folds (at most 5, at least 2),
   near-duplicates and the turns of one conversation kept in one fold
   (:func:`~toolsel.learn.groups.group_folds`).
2. Every candidate, a blind scorer (``default`` unless the caller offers several) times a
   setting of :data:`~toolsel.learn.signals.SETTINGS` (``blind``, i.e. the labels unused;
   ``knn`` and ``tool2vec`` at each weight; ``ltr``), is fit on all folds but one and scores
   the requests of the fold left out, in turn.
3. A candidate's dev score is the mean R@5 over those held-out requests (its required tools
   among the 5 best-ranked candidates), each request counted twice: once fit on the other
   folds as labeled, once with :data:`TOOL_HOLDOUT` of the tools they name unlabeled as well
   (tool-held-out folds), so a candidate that lifts labeled tools over unlabeled ones pays
   for it as real users' partial labels would make it pay.
4. A candidate is eligible only when, on the held-out requests none of whose tools had a
   label in their training (uncovered), its mean R@5 is at most :data:`FLOOR_UNCOVERED`
   below the first blind scorer's with the labels unused: labels may not buy covered
   requests at the expense of uncovered ones.
5. The eligible candidate with the best dev score wins; ties go to the simpler one (blind scorers in
   the order offered, settings in the order of :data:`~toolsel.learn.signals.SETTINGS`). With
   fewer than two groups of requests there is nothing to validate on, and the rule picks
   the first blind scorer, labels unused.

There is no test against ``blind`` here, on purpose: testing each of many candidates against
blind on the same requests and keeping the best is a best-of-many estimate. The one test is
outside: ``toolsel fit`` estimates this whole procedure by cross-fitting (the rule run on each
outer training fold, scored on the fold left out) and ships the chosen model only when the
interval of that estimate's R@5 gain is above zero (:mod:`toolsel.learn.procedure`).

Only the requests handed to the fit are read: inside a cross-fitted evaluation the rule runs
on the training folds alone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .groups import group_folds
from .ltr import top_mask
from .signals import SETTINGS, Evidence, Setting, candidate_ranks, combine, description_signal, \
    fit_evidence, interleave, knn_signal, learned_signals, lift, tool2vec_signal

__all__ = ["choose_setting", "choose", "objective", "required_ranks", "gain_low", "RULE",
           "MAX_FOLDS", "Z", "setting_scores", "FoldSignals", "fit_setting", "TOOL_HOLDOUT",
           "FLOOR_UNCOVERED", "MAX_CHOICE_REQUESTS", "choice_sample"]

MAX_FOLDS = 5
#: Labeled requests the choice is made on at most: beyond, a seeded sample of whole request
#: groups holding this many (the choice's cost grows with the requests; the chosen setting
#: then learns from every request).
MAX_CHOICE_REQUESTS = 600
#: Standard errors of the paired 95% interval (normal approximation, :func:`gain_low`).
Z = 1.96
#: One line saying the rule (written into model files and reports).
RULE = ("inner group k-fold CV (k = min(5, groups)) on the labeled requests (beyond 600, on a "
        "seeded sample of whole groups holding 600); every blind "
        "scorer offered x setting (blind, knn and tool2vec lifts at weights 0.5/1/2, ltr) "
        "scores the held-out requests, each fit once as labeled and once with 30% of the "
        "tools unlabeled; eligible if its R@5 on uncovered held-out requests is within .01 of "
        "blind; the best eligible mean R@5 wins, ties to the simpler; no "
        "per-candidate test (the fit's outer cross-fitted estimate is the one test)")


def required_ranks(scores: np.ndarray, required: Sequence[Sequence[int]],
                   candidates: np.ndarray) -> list[np.ndarray]:
    """Per row, the 1-based ranks of its required tool indices among ``candidates`` (ties to
    the earlier tool, as every toolsel ranking)."""
    cand = np.asarray(candidates, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    sizes = [len(r) for r in required]
    out = [np.zeros(0, dtype=np.int64) for _ in required]
    rows = np.repeat(np.arange(len(required)), sizes)
    tools = np.fromiter((t for r in required for t in r), dtype=np.int64, count=sum(sizes))
    if not len(tools):
        return out
    x = scores[:, cand]
    x = np.where(np.isnan(x), -np.inf, x)
    pos = np.flatnonzero(cand)
    ranks = np.empty(len(tools), dtype=np.int64)
    step = max(1, RANK_CELLS // max(1, x.shape[1]))
    for a in range(0, len(tools), step):  # (required tool, candidate) comparisons, in blocks
        r, t = rows[a:a + step], tools[a:a + step]
        own = scores[r, t]
        own = np.where(np.isnan(own), -np.inf, own)[:, None]
        row = x[r]
        better = (row > own) | ((row == own) & (pos[None, :] < t[:, None]))
        ranks[a:a + step] = 1 + better.sum(axis=1)
    ends = np.cumsum(sizes)
    for i, (e, n) in enumerate(zip(ends, sizes)):
        if n:
            out[i] = ranks[e - n:e]
    return out


#: Comparisons :func:`required_ranks` makes at once (bounds its memory).
RANK_CELLS = 1 << 20


def gain_low(diff: np.ndarray) -> float:
    """The low end of the paired 95% interval of ``diff``'s mean: mean - :data:`Z` standard
    errors (normal approximation; ``-inf`` for fewer than two values)."""
    diff = np.asarray(diff, dtype=np.float64)
    if len(diff) < 2:
        return float("-inf")
    return float(diff.mean() - Z * diff.std(ddof=1) / np.sqrt(len(diff)))


def objective(ranks: Sequence[np.ndarray], k: int = 5) -> np.ndarray:
    """R@k per request (``nan`` for a request with nothing to find): the dev score's unit."""
    out = np.full(len(ranks), np.nan)
    for i, r in enumerate(ranks):
        if len(r):
            out[i] = float((r <= k).mean())
    return out


def interleaved_objective(learned: np.ndarray, blind_ranks: np.ndarray,
                          candidates: np.ndarray, required: Sequence[Sequence[int]],
                          k: int = 5) -> np.ndarray:
    """:func:`objective` of the :func:`~toolsel.learn.signals.interleave` of ``learned`` with
    the blind ranking (``blind_ranks``: its :func:`~toolsel.learn.signals.candidate_ranks`),
    without ranking every tool: the first ``k`` candidates of the interleaved order are read
    off the learned and blind top ``k`` plus as many as there are non-candidates (each step
    of the interleaving adds the next learned tool, so that many steps always hold ``k``
    candidates). The same numbers as ranking everything (a test compares them)."""
    cand = np.asarray(candidates, dtype=bool)
    n_tools = len(cand)
    deep = min(n_tools, k + int((~cand).sum()))
    x = np.where(np.isnan(learned), -np.inf, np.asarray(learned, dtype=np.float64))
    x = np.where(cand[None, :], x, -np.inf)
    out = np.full(len(required), np.nan)
    if not len(required):
        return out
    rows = np.arange(len(x))[:, None]
    # each row's top `deep` tools, best first (ties to the earlier tool: the indices come
    # ascending and the sort is stable), learned and blind
    mine = np.nonzero(top_mask(x, deep))[1].reshape(len(x), deep)
    mine = np.take_along_axis(mine, np.argsort(-x[rows, mine], axis=1, kind="stable"), axis=1)
    theirs = np.nonzero(blind_ranks <= deep)[1].reshape(len(x), deep)
    theirs = np.take_along_axis(theirs, np.argsort(blind_ranks[rows, theirs], axis=1,
                                                   kind="stable"), axis=1)
    mine, theirs = mine.tolist(), theirs.tolist()
    for i, req in enumerate(required):
        if not len(req):
            continue
        # a tool is found when fewer than k candidates come before it in the interleaving
        # (a required non-candidate too: its rank counts the candidates above it)
        found: set[int] = set()
        n_before = 0
        for a, b in zip(mine[i], theirs[i]):
            for t in (a, b):
                if t not in found and n_before < k:
                    found.add(t)
                    n_before += bool(cand[t])
            if n_before >= k:
                break
        out[i] = float(np.mean([t in found for t in req]))
    return out


class FoldSignals:
    """What one training set teaches (its :class:`~toolsel.learn.signals.Evidence`) and the
    signals of one set of requests read from it, computed once and shared by every setting
    scored on those requests."""

    def __init__(self, ev: Evidence):
        self.ev = ev
        self._cache: dict = {}

    @classmethod
    def fit(cls, n_tools: int, texts, vectors, tools_of, max_per_tool) -> FoldSignals:
        return cls(fit_evidence(n_tools, texts, vectors, tools_of, max_per_tool=max_per_tool))

    def signal(self, name: str, vectors, description_vectors):
        """The ``tool2vec``, ``knn`` or ``description`` signal of the requests of ``vectors``
        (the same requests on every call)."""
        if name not in self._cache:
            if name == "tool2vec":
                self._cache[name] = tool2vec_signal(self.ev, vectors, description_vectors)
            elif name == "knn":
                self._cache[name] = knn_signal(self.ev, vectors)
            else:
                self._cache[name] = description_signal(vectors, description_vectors)
        return self._cache[name]


def fit_setting(setting: Setting, blind: np.ndarray, vectors: np.ndarray,
                tools_of: Sequence[Sequence[int]], required: Sequence[Sequence[int]],
                candidates: np.ndarray, groups: Sequence[int],
                description_vectors: np.ndarray | None, *,
                max_per_tool: int | None = None, cache: dict | None = None) -> Setting:
    """``setting`` with what it learns from these labeled requests: an ``ltr`` setting gets
    its coefficients (:func:`toolsel.learn.ltr.fit_ltr`; ``blind`` when there is nothing to
    learn from); any other is returned as it is. ``cache``: shared by fits on the same
    labeled requests with different ``blind`` scores (see :func:`~toolsel.learn.ltr.fit_ltr`).
    """
    if setting.method != "ltr" or setting.coef:
        return setting
    from .ltr import fit_ltr
    if cache is not None and "description" in cache:
        desc = cache["description"]
    else:
        desc = description_signal(vectors, description_vectors)
        if cache is not None:
            cache["description"] = desc
    coef = fit_ltr(blind, vectors, tools_of, required, candidates, groups, desc,
                   max_per_tool=max_per_tool, cache=cache)
    return Setting("blind") if coef is None else \
        Setting("ltr", coef=coef, interleave=setting.interleave)


def setting_scores(setting: Setting, blind: np.ndarray, texts: Sequence[str],
                   vectors: np.ndarray, fold: FoldSignals, description_vectors: np.ndarray | None,
                   candidates: np.ndarray, *, blind_ranks: np.ndarray | None = None,
                   shared: dict | None = None) -> np.ndarray:
    """Scores of requests (``blind``, ``texts``, ``vectors``) under a fitted ``setting`` that
    learned ``fold``'s evidence (``blind_ranks``: ``blind``'s
    :func:`~toolsel.learn.signals.candidate_ranks`, when already known).

    ``shared``: a dict kept by the caller for the settings scored on the same requests, blind
    scores and ``fold``: an interleaved setting reads the scores of its plain twin from it and
    ``ltr`` the blind features of these requests, instead of computing them again (the same
    arrays either way)."""
    plain = dataclasses.replace(setting, interleave=False)
    if shared is not None and plain in shared:
        scores = shared[plain]
    else:
        scores = _learned_scores(plain, blind, texts, vectors, fold, description_vectors,
                                 candidates, shared)
        if shared is not None:
            shared[plain] = scores
    if setting.interleave and setting.method != "blind":
        return interleave(scores, blind, candidates, blind_ranks=blind_ranks)
    return scores


def _learned_scores(setting: Setting, blind: np.ndarray, texts: Sequence[str],
                    vectors: np.ndarray, fold: FoldSignals, description_vectors: np.ndarray | None,
                    candidates: np.ndarray, shared: dict | None = None) -> np.ndarray:
    ev = fold.ev
    m = setting.method
    if m == "blind" or (m != "ltr" and setting.weight == 0):
        return np.asarray(blind, dtype=np.float64).copy()
    if m == "ltr":
        from .ltr import blind_features, features, ltr_scores
        labeled = np.zeros(ev.n_tools, dtype=bool)
        labeled[ev.labeled] = True
        usage = fold.signal("knn", vectors, description_vectors)
        desc = fold.signal("description", vectors, description_vectors)
        out = np.empty(np.shape(blind), dtype=np.float64)
        for i in range(0, len(out), LTR_CHUNK):  # features of a few requests at a time
            rows = slice(i, i + LTR_CHUNK)
            known = None
            if shared is not None:  # label-free: the same for every fold's labels
                known = shared.get(("blind features", i))
                if known is None:
                    known = shared[("blind features", i)] = blind_features(blind[rows],
                                                                           candidates)
            out[rows] = ltr_scores(setting.coef, features(blind[rows], usage[rows], desc[rows],
                                                          labeled, candidates, known))
        return out
    if m == "tool2vec":
        return lift(blind, fold.signal("tool2vec", vectors, description_vectors),
                    setting.weight)
    if not len(ev.labeled):
        return np.asarray(blind, dtype=np.float64).copy()
    if m == "knn":
        return lift(blind, fold.signal("knn", vectors, description_vectors), setting.weight,
                    ev.labeled)
    alphas = (setting.alpha,) if m == "centroid" else (0.0,)
    sig = learned_signals(ev, texts, vectors, description_vectors, alphas)
    return combine(blind, sig, setting, ev.labeled)


#: Requests whose ``ltr`` features are built at once (bounds memory at many tools).
LTR_CHUNK = 64
#: Share of the tools a tool-held-out inner fold trains without (their labels removed).
TOOL_HOLDOUT = 0.3
#: How far below the blind R@5 a candidate may fall on the held-out requests none of whose
#: tools had a label in training, and still be chosen.
FLOOR_UNCOVERED = 0.01


def _training_variants(train: np.ndarray, tools_of: Sequence[Sequence[int]], rng):
    """The two trainings of one inner fold: its requests as labeled, and the same with
    :data:`TOOL_HOLDOUT` of the tools they name unlabeled (a request left naming nothing is
    dropped). Yields ``(rows, what each row teaches)``."""
    yield train, [list(tools_of[j]) for j in train]
    named = np.unique(np.asarray([t for j in train for t in tools_of[j]], dtype=np.int64))
    hidden = set(rng.choice(named, size=int(round(TOOL_HOLDOUT * len(named))),
                            replace=False).tolist()) if len(named) else set()
    kept = [[t for t in tools_of[j] if t not in hidden] for j in train]
    rows = [i for i, ts in enumerate(kept) if ts]
    yield train[rows], [kept[i] for i in rows]


def choose(blinds: dict[str, np.ndarray], texts: Sequence[str], vectors: np.ndarray,
           tools_of: Sequence[Sequence[int]], required: Sequence[Sequence[int]],
           candidates: np.ndarray, groups: Sequence[int], *,
           description_vectors: np.ndarray | None = None,
           settings: Sequence[Setting] = SETTINGS, max_per_tool: int | None = None,
           max_folds: int = MAX_FOLDS) -> tuple[str, Setting, list[dict]]:
    """The blind scorer and setting the dev rule picks for these labeled requests, and its
    table.

    ``blinds``: each offered blind scorer's scores of the requests (rows), in the order
    offered (ties go to the earlier). Rows of ``texts``, ``vectors``, ``tools_of`` (what each
    request teaches), ``required`` (what each must find: its tools outside always-include) and
    ``groups`` are the requests. Returns ``(base, setting, rows)``; the setting is not yet
    fitted (:func:`fit_setting`). Each row is ``{"base", "setting", "method", "dev_score",
    "n_requests", "chosen"}``.
    """
    settings = list(settings)
    bases = list(blinds)
    if not settings or not bases:
        raise ValueError("no candidates to choose from")
    n_groups = len(set(int(g) for g in groups))
    if n_groups < 2 or (len(settings) == 1 and len(bases) == 1):
        pick = Setting("blind") if n_groups < 2 else settings[0]
        return bases[0], pick, [{"base": bases[0], "setting": pick.label,
                                 "method": pick.method, "dev_score": float("nan"),
                                 "n_requests": len(texts), "chosen": True}]
    keep = choice_sample(groups)
    if keep is not None:  # many labels: the choice is made on a sample of whole groups
        blinds = {b: np.asarray(v)[keep] for b, v in blinds.items()}
        texts, tools_of, required = ([xs[i] for i in keep] for xs in (texts, tools_of, required))
        vectors, groups = np.asarray(vectors)[keep], np.asarray(groups)[keep]
        n_groups = len(set(int(g) for g in groups))
    folds = group_folds(groups, min(max_folds, n_groups))
    per, uncovered = _held_out(blinds, texts, vectors, tools_of, required, candidates,
                               np.asarray(groups), folds, description_vectors, settings,
                               max_per_tool)
    valid = ~np.isnan(per[0])
    means = per[:, valid].mean(axis=1) if valid.any() else np.zeros(len(per))
    unc = valid & uncovered
    unc_means = per[:, unc].mean(axis=1) if unc.any() else np.zeros(len(per))
    ok = _eligible(unc_means, settings, unc.any())
    best = int(np.argmax(np.where(ok, np.round(means, 12), -np.inf)))  # first of the best
    rows = [{"base": base, "setting": s.label, "method": s.method,
             "dev_score": float(means[j]), "n_requests": int(valid.sum()),
             "uncovered_score": float(unc_means[j]) if unc.any() else float("nan"),
             "n_uncovered": int(unc.sum()), "eligible": bool(ok[j]), "chosen": j == best}
            for j, (base, s) in enumerate((b, s) for b in bases for s in settings)]
    return bases[best // len(settings)], settings[best % len(settings)], rows


def choice_sample(groups: Sequence[int], cap: int = MAX_CHOICE_REQUESTS) -> np.ndarray | None:
    """The requests the choice is made on when there are more than ``cap``: whole groups in a
    seeded order (seed 0) until ``cap`` requests are held, as sorted row indices; ``None``
    when every request is used."""
    groups = np.asarray(groups)
    if len(groups) <= cap:
        return None
    labels = list(dict.fromkeys(int(g) for g in groups))
    order = np.random.default_rng(0).permutation(len(labels))
    chosen, held = set(), 0
    sizes = {g: int(n) for g, n in zip(*np.unique(groups, return_counts=True))}
    for i in order:
        if held >= cap:
            break
        chosen.add(labels[i])
        held += sizes[labels[i]]
    return np.flatnonzero(np.isin(groups, list(chosen)))


def _eligible(unc_means: np.ndarray, settings: list[Setting], any_uncovered: bool) -> np.ndarray:
    """Step 4 of the rule: candidates (rows: base-major) whose mean R@5 on uncovered held-out
    requests is at most :data:`FLOOR_UNCOVERED` below the first blind scorer's blind row."""
    ok = np.ones(len(unc_means), dtype=bool)
    reference = next((i for i, s in enumerate(settings) if s.method == "blind"), None)
    if reference is not None and any_uncovered:
        ok = np.round(unc_means - unc_means[reference], 12) >= -FLOOR_UNCOVERED
        ok[reference] = True
    return ok


def _fitted_settings(settings: list[Setting], blind: np.ndarray, vectors: np.ndarray,
                     train: np.ndarray, train_tools: list, candidates: np.ndarray,
                     groups: np.ndarray, description_vectors, max_per_tool,
                     cache: dict | None = None) -> list[Setting]:
    """Each setting fit on one training set; ``ltr`` is fit once and shared by its
    interleaved twin (and, through ``cache``, what it learns from the labels by every blind
    scorer fit on the same training set)."""
    required = [[t for t in ts if candidates[t]] for ts in train_tools]
    out, ltr = [], None
    for s in settings:
        if s.method == "ltr" and not s.coef and ltr is not None:
            out.append(dataclasses.replace(ltr, interleave=s.interleave)
                       if ltr.method == "ltr" else ltr)
            continue
        fitted = fit_setting(s, blind[train], vectors[train], train_tools, required,
                             candidates, groups[train], description_vectors,
                             max_per_tool=max_per_tool)
        if s.method == "ltr":
            ltr = fitted
        out.append(fitted)
    return out


def _held_out(blinds, texts, vectors, tools_of, required, candidates, groups, folds,
              description_vectors, settings, max_per_tool) -> tuple[np.ndarray, np.ndarray]:
    """R@5 per candidate (rows: base-major, then setting) and held-out request (columns: each
    request as fit on the other folds, then again with the tool-held-out training), and
    which columns are uncovered (none of the request's tools labeled in that training)."""
    n = len(texts)
    per = np.full((len(blinds) * len(settings), 2 * n), np.nan)
    uncovered = np.zeros(2 * n, dtype=bool)
    n_tools = next(iter(blinds.values())).shape[1]
    rng = np.random.default_rng(0)
    for f in np.unique(folds):
        test = np.flatnonzero(folds == f)
        t_texts = [texts[j] for j in test]
        req = [required[j] for j in test]
        held = [(blind[test], None) for blind in blinds.values()]
        held = [(b, candidate_ranks(b, candidates), {}) for b, _ in held]
        for variant, (train, train_tools) in enumerate(
                _training_variants(np.flatnonzero(folds != f), tools_of, rng)):
            fold = FoldSignals.fit(n_tools, [texts[j] for j in train], vectors[train],
                                   train_tools, max_per_tool)
            labeled = set(fold.ev.labeled.tolist())
            uncovered[variant * n + test] = [not any(t in labeled for t in r) for r in req]
            shared: dict = {}  # what the labels teach, shared by the blind scorers
            for b, blind in enumerate(blinds.values()):
                fitted = _fitted_settings(settings, blind, vectors, train, train_tools,
                                          candidates, groups, description_vectors,
                                          max_per_tool, shared)
                # the held-out blind features, once per fold; a twin's plain scores, once
                scored = dict(held[b][2])
                for i, s in enumerate(fitted):
                    woven = s.interleave and s.method != "blind"
                    scores = setting_scores(dataclasses.replace(s, interleave=False) if woven
                                            else s, held[b][0], t_texts, vectors[test], fold,
                                            description_vectors, candidates,
                                            blind_ranks=held[b][1], shared=scored)
                    per[b * len(settings) + i, variant * n + test] = (
                        interleaved_objective(scores, held[b][1], candidates, req) if woven
                        else objective(required_ranks(scores, req, candidates)))
                held[b][2].update((k, v) for k, v in scored.items() if isinstance(k, tuple))
    return per, uncovered


def choose_setting(blind: np.ndarray, texts: Sequence[str], vectors: np.ndarray,
                   tools_of: Sequence[Sequence[int]], required: Sequence[Sequence[int]],
                   candidates: np.ndarray, groups: Sequence[int], *,
                   description_vectors: np.ndarray | None = None,
                   settings: Sequence[Setting] = SETTINGS, max_per_tool: int | None = None,
                   max_folds: int = MAX_FOLDS) -> tuple[Setting, list[dict]]:
    """:func:`choose` with one blind scorer: ``(setting, rows)``."""
    _, setting, rows = choose({"base": blind}, texts, vectors, tools_of, required, candidates,
                              groups, description_vectors=description_vectors,
                              settings=settings, max_per_tool=max_per_tool,
                              max_folds=max_folds)
    for r in rows:
        r.pop("base", None)
    return setting, rows
