"""Honest numbers for a model fit on labels: K-fold cross-fitting over the labeled requests.

Every labeled request is scored by a model fit on the *other* folds only (near-duplicates and
the turns of one conversation share a fold: :mod:`toolsel.learn.groups`), and that model
chose its setting by the dev rule on its own training folds (:mod:`toolsel.learn.rule`). Each
fold's model is a :class:`~toolsel.learn.model.LearnedScorer` fit by the same code a user's
``toolsel fit`` runs; its ``train_ids_`` say what it saw.

The label-free parts are computed once for all requests: the blind scorer's scores and the
request vectors depend on no label.

:func:`cross_fit` returns per-request metrics of the blind scorer and of the learned one on the
same requests (``query_metrics``, the shape of a sweep's), ready for
:func:`toolsel.eval.stats.paired_comparison` and :func:`~toolsel.eval.stats.mean_intervals`.
:func:`learning_curve` repeats it with each tool learning from at most 0, 1, 2, 5 or all of
its labeled requests.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..data import Query, Registry, Tool
from .engine import score_matrix
from .metrics import evaluate
from ..scorers.base import Scorer
from ..learn.groups import group_folds, request_groups
from ..learn.model import LearnedScorer, check_labeled
from ..learn.rule import MAX_FOLDS, required_ranks

__all__ = ["Prepared", "prepare", "cross_fit", "CrossFit", "learning_curve", "CURVE_CAPS",
           "DEFAULT_KS", "learned_label", "can_cross_fit", "COVERAGE", "gain_table", "Estimate",
           "fit_estimated", "GAIN_SUBSETS"]

DEFAULT_KS = (1, 3, 5, 10, 20, 30)
#: Labeled requests per tool on the learning curve (``None``: all of them).
CURVE_CAPS = (0, 1, 2, 5, None)


def learned_label(base: str) -> str:
    """The scorer label of the learned model of ``base`` in tables (``default+labels``)."""
    return f"{base}+labels"


@dataclass
class Prepared:
    """The label-free half of every fold's fit, computed once: the started scorer (blind
    scorers and embedder fit on the registry), blind scores and request vectors.

    ``blind``: the reference blind scorer's scores (the first offered); ``blinds``: every
    offered blind scorer's, by name."""

    registry: Registry
    queries: list[Query]
    scorer: LearnedScorer
    blind: np.ndarray
    vectors: np.ndarray
    groups: np.ndarray
    blinds: dict = field(default_factory=dict)


def prepare(registry: Sequence[Tool], queries: Sequence[Query], base: str | Scorer = "default",
            *, always_include: Sequence[str] | None = None,
            bases: Sequence[str] | None = None) -> Prepared:
    """Fit ``base`` (and the other ``bases`` the rule may choose among) on ``registry`` and
    score and embed every labeled request once."""
    reg = registry if isinstance(registry, Registry) else Registry(registry)
    queries = check_labeled(queries, reg)
    if not queries:
        raise ValueError("cross-fitting needs labeled requests; got none")
    sc = LearnedScorer(base=base, always_include=always_include, bases=bases)
    sc.start(reg)
    texts = [q.query for q in queries]
    # the blind scores, as every page reads them (from the report's score cache when it runs)
    blinds = {name: score_matrix(b, reg, texts)[0] for name, b in sc.bases_.items()}
    return Prepared(reg, queries, sc, blinds[sc.base_name_], sc.request_vectors(texts),
                    request_groups(queries), blinds)


def can_cross_fit(queries: Sequence[Query], k: int = MAX_FOLDS) -> str | None:
    """``None`` when ``queries`` can be cross-fitted, else why not (one sentence)."""
    n = len(set(request_groups(list(queries)).tolist())) if queries else 0
    if n < 2:
        return (f"cross-fitting needs at least 2 groups of labeled requests (near-duplicates "
                f"and one conversation's turns count as one); these have {n}")
    return None


@dataclass
class CrossFit:
    """Cross-fitted results of one blind scorer and its learned model on the same requests.

    ``query_metrics``: one row per scorer label × top_k × request (``fold``, ``group`` and
    ``coverage`` columns added: ``all``, ``some`` or ``none`` of the request's required tools
    had a labeled request in its fold's training requests). ``folds``: each request's fold. ``models``: each fold's fitted
    :class:`LearnedScorer` (``train_ids_`` is what it learned from). ``settings``: one row
    per fold: ``fold, setting, method, n_train, n_test``. ``blind_scores`` and
    ``learned_scores``: ``(n_requests, n_tools)``, each row by the model of its fold.
    """

    base: str
    query_metrics: pd.DataFrame
    folds: np.ndarray
    groups: np.ndarray
    settings: pd.DataFrame
    blind_scores: np.ndarray
    learned_scores: np.ndarray
    models: list[LearnedScorer] = field(repr=False, default_factory=list)


def _metrics(label: str, queries: list[Query], ranks: list[np.ndarray], ks: list[int],
             folds: np.ndarray, groups: np.ndarray, coverage: Sequence[str]) -> pd.DataFrame:
    n_req = [len(r) for r in ranks]
    per = evaluate(ranks, ks, n_req)
    nq, nk = len(queries), len(ks)
    return pd.DataFrame({
        "scorer": label, "top_k": np.tile(ks, nq),
        "query_id": np.repeat([q.id for q in queries], nk),
        "n_required": np.repeat(n_req, nk),
        "fold": np.repeat(folds, nk), "group": np.repeat(groups, nk),
        "coverage": np.repeat(np.asarray(coverage, dtype=object), nk),
        "R@k": per["R@k"].ravel(), "Success@k": per["Success@k"].ravel(),
        "Complete@k": per["Complete@k"].ravel(), "RR": np.repeat(per["RR"], nk)})


#: Coverage of a request by its fold's training labels: every required tool has a labeled
#: request, some do, none do.
COVERAGE = ("all", "some", "none")


def _coverage(required: Sequence[int], labeled: set[int]) -> str:
    n = sum(int(t) in labeled for t in required)
    return "all" if n == len(required) else ("none" if n == 0 else "some")


def _hidden_tools(p: Prepared, fold: int, share: float) -> set[int]:
    """The tools a tool-held-out fold trains without: ``share`` of the tools any labeled
    request names, drawn with a seed fixed by the fold."""
    named = sorted({p.registry.index(n) for q in p.queries for n in q.expected})
    rng = np.random.default_rng(1000 + fold)
    size = int(round(share * len(named)))
    return set(int(t) for t in rng.choice(named, size=size, replace=False)) if size else set()


def _without(queries: list[Query], registry: Registry, hidden: set[int]) -> list[int]:
    """Rows of ``queries`` that still name a tool once the ``hidden`` tools' labels go."""
    return [j for j, q in enumerate(queries)
            if any(registry.index(n) not in hidden for n in q.expected)]


def _training(p: Prepared, fold: int, train: np.ndarray, tool_holdout: float | None
              ) -> tuple[np.ndarray, list[Query]]:
    """A fold's training rows and requests: as labeled, or (``tool_holdout``) without the
    labels of that share of the tools."""
    if not tool_holdout:
        return train, [p.queries[j] for j in train]
    hidden = _hidden_tools(p, fold, tool_holdout)
    train = train[_without([p.queries[j] for j in train], p.registry, hidden)]
    return train, [dataclasses.replace(
        p.queries[j], expected=tuple(n for n in p.queries[j].expected
                                     if p.registry.index(n) not in hidden)) for j in train]


def cross_fit(registry: Sequence[Tool], queries: Sequence[Query],
              base: str | Scorer = "default", *, k: int = MAX_FOLDS,
              setting="auto", max_per_tool: int | None = None,
              always_include: Sequence[str] | None = None, ks: Sequence[int] = DEFAULT_KS,
              prepared: Prepared | None = None, label: str | None = None,
              tool_holdout: float | None = None) -> CrossFit:
    """Cross-fitted per-request metrics of ``base`` blind and learned from the labels.

    ``k`` folds (fewer when there are fewer groups of requests; at least 2 groups needed:
    :func:`can_cross_fit`). ``prepared`` reuses :func:`prepare`'s label-free work; the blind
    scorers it offers are the rule's choice. Each fold's model runs the whole fit (the dev
    rule on the training folds, then learning), so the numbers estimate the procedure
    ``toolsel fit`` runs, not one setting chosen with hindsight.

    ``tool_holdout`` (a share such as 0.3): tool-held-out folds: besides its requests, each
    fold's training also loses every label naming that share of the tools (a training
    request naming only such tools is dropped), so requests whose tools have no label are
    measured as real users' partial labels produce them.
    """
    if prepared is None:
        prepared = prepare(registry, queries, base, always_include=always_include)
    p = prepared
    reason = can_cross_fit(p.queries, k)
    if reason:
        raise ValueError(reason)
    n_groups = len(np.unique(p.groups))
    folds = group_folds(p.groups, min(int(k), n_groups))
    n_cand = int(p.scorer.candidates_.sum())
    ks = [int(x) for x in ks if int(x) <= n_cand] or [n_cand]
    blinds = p.blinds or {p.scorer.base_name_: p.blind}
    learned = np.empty_like(p.blind)
    tools_of = [[p.registry.index(n) for n in q.expected] for q in p.queries]
    required = [[t for t in ts if p.scorer.candidates_[t]] for ts in tools_of]
    coverage = [""] * len(p.queries)
    models, rows = [], []
    for f in range(int(folds.max()) + 1):
        train, test = np.flatnonzero(folds != f), np.flatnonzero(folds == f)
        train, train_q = _training(p, f, train, tool_holdout)
        m = copy.copy(p.scorer)  # the label-free half is shared; _learn sets new attributes
        m.setting = setting
        m.max_per_tool = max_per_tool
        m.learn(p.registry, train_q, {b: x[train] for b, x in blinds.items()},
                 p.vectors[train])
        learned[test] = m.learned_scores([p.queries[j].query for j in test],
                                         blinds[m.base_name_][test], p.vectors[test])
        labeled = set(int(t) for t in m.evidence_.labeled)
        for j in test:
            coverage[j] = _coverage(required[j], labeled)
        models.append(m)
        rows.append({"fold": f, "base": m.base_name_, "setting": m.setting_.label,
                     "method": m.setting_.method, "n_train": len(train), "n_test": len(test),
                     "n_labeled_tools": len(labeled)})
    b = p.scorer.base
    name = label or (b if isinstance(b, str) else getattr(b, "name", type(b).__name__))
    qm = pd.concat([
        _metrics(name, p.queries, required_ranks(p.blind, required, p.scorer.candidates_), ks,
                 folds, p.groups, coverage),
        _metrics(learned_label(name), p.queries,
                 required_ranks(learned, required, p.scorer.candidates_), ks, folds,
                 p.groups, coverage)], ignore_index=True)
    return CrossFit(name, qm, folds, p.groups, pd.DataFrame(rows), p.blind, learned, models)


def _most_labels(queries: Sequence[Query]) -> int:
    """The most labeled requests naming one tool."""
    counts: dict[str, int] = {}
    for q in queries:
        for name in set(q.expected):
            counts[name] = counts.get(name, 0) + 1
    return max(counts.values(), default=0)


def learning_curve(prepared: Prepared, *, caps: Sequence[int | None] = CURVE_CAPS,
                   k: int = MAX_FOLDS, setting="auto", label: str | None = None,
                   ks: Sequence[int] = (5, 10), uncapped: CrossFit | None = None
                   ) -> pd.DataFrame:
    """Cross-fitted means with each tool learning from at most ``cap`` labeled requests.

    One row per cap: ``labels_per_tool`` (``"all"`` for ``None``), ``R@5`` with its 95%
    interval resampling request groups (``R@5_low``, ``R@5_high``), ``Complete@10``,
    ``n_queries``, ``n_labeled_tools`` (mean over folds of tools with a labeled request).
    Cap 0 is the blind scorer.

    ``uncapped``: :func:`cross_fit` of ``prepared`` already run with the same ``k``,
    ``setting``, ``label`` and ``ks`` and no cap; it is the row of cap ``None`` and of every cap
    no tool has more labeled requests than (the same fit), instead of fitting it again.
    """
    from .inference import mean_interval
    rows = []
    from ..learn.signals import Setting
    most = _most_labels(prepared.queries)
    for cap in caps:
        if uncapped is not None and cap != 0 and (cap is None or cap >= most):
            cf = uncapped
        else:
            # no label per tool is the blind scorer (tool2vec and ltr would still move tools
            # by their descriptions alone)
            cf = cross_fit(prepared.registry, prepared.queries, k=k,
                           setting=Setting("blind") if cap == 0 else setting,
                           max_per_tool=cap, prepared=prepared, label=label, ks=ks)
        qm = cf.query_metrics[cf.query_metrics["scorer"] == learned_label(cf.base)]
        r5 = qm[qm["top_k"] == min(5, qm["top_k"].max())]
        c10 = qm[qm["top_k"] == min(10, qm["top_k"].max())]
        ci = mean_interval(r5["R@k"].to_numpy(), r5["group"].to_numpy())
        rows.append({"labels_per_tool": "all" if cap is None else str(cap),
                     "R@5": float(r5["R@k"].mean()), "R@5_low": ci["low"],
                     "R@5_high": ci["high"],
                     "Complete@10": float(c10["Complete@k"].mean()),
                     "n_queries": int(r5["R@k"].notna().sum()),
                     "n_labeled_tools": float(np.mean([len(m.labeled_tools_)
                                                      for m in cf.models]))})
    return pd.DataFrame(rows)


#: The rows of an estimate's gain table: every request, then by coverage.
GAIN_SUBSETS = ("every request", *COVERAGE)


def gain_table(cf: CrossFit, metrics: Sequence[tuple[str, str, int]] = (
        ("R@5", "R@k", 5), ("Complete@10", "Complete@k", 10)), *,
        family: int = 1) -> pd.DataFrame:
    """Learned - blind on the cross-fitted requests, per metric and coverage subset, with the
    paired bootstrap interval that resamples request groups and its verdict, by the one rule
    (:func:`toolsel.eval.inference.paired_difference`). ``family``: the comparisons the
    caller's table makes on one metric (1 for ``fit``'s one decision; one per scorer on a page
    comparing several); the coverage rows are a family ``len(COVERAGE)`` times as large.
    Columns: ``metric, subset, n, blind, learned, diff, low, high, won, lost, family,
    verdict``."""
    from .inference import paired_difference
    qm = cf.query_metrics
    label = learned_label(cf.base)
    top = int(qm["top_k"].max())
    rows = []
    for name, col, k in metrics:
        k = min(k, top)
        at = qm[qm["top_k"] == k]
        a = at[at["scorer"] == label].set_index("query_id")
        b = at[at["scorer"] == cf.base].set_index("query_id").loc[a.index]
        for subset in GAIN_SUBSETS:
            whole = subset == GAIN_SUBSETS[0]
            sel = np.ones(len(a), dtype=bool) if whole else (a["coverage"] == subset).to_numpy()
            m = family if whole else family * len(COVERAGE)
            g = paired_difference(a[col].to_numpy()[sel], b[col].to_numpy()[sel],
                                  a["group"].to_numpy()[sel], family=m)
            rows.append({"metric": name, "subset": subset, "n": g["n"], "blind": g["mean_b"],
                         "learned": g["mean_a"], "diff": g["diff"], "low": g["low"],
                         "high": g["high"], "won": g["won"], "lost": g["lost"],
                         "family": m, "verdict": g["verdict"]})
    return pd.DataFrame(rows, columns=GAIN_COLUMNS)


#: Columns of :func:`gain_table`.
GAIN_COLUMNS = ["metric", "subset", "n", "blind", "learned", "diff", "low", "high", "won",
                "lost", "family", "verdict"]


@dataclass
class Estimate:
    """The cross-fitted estimate of a fit and what it decided.

    ``gains``: :func:`gain_table`. ``ships``: the learned model is written (the interval of
    its R@5 gain over every request lies above zero); otherwise the model is blind.
    ``sentence``: the decision in one plain sentence with its numbers."""

    cross_fit: CrossFit | None
    gains: pd.DataFrame
    ships: bool
    sentence: str


def _decision(gains: pd.DataFrame, base: str) -> tuple[bool, str]:
    r = gains[(gains["metric"] == "R@5") & (gains["subset"] == GAIN_SUBSETS[0])].iloc[0]
    numbers = (f"cross-fitted R@5 {r['blind']:.3f} blind, {r['learned']:.3f} learned, "
               f"{r['diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}] over {int(r['n'])} "
               f"requests ({int(r['won'])} won, {int(r['lost'])} lost)")
    if r["verdict"] == "ahead":
        return True, f"ships the learned model: {numbers}; the interval lies above zero."
    return False, (f"ships blind {base} (the labels unused): {numbers}; the interval is not "
                   f"above zero, so the labels are not shown to help.")


def fit_estimated(registry: Sequence[Tool], queries: Sequence[Query],
                  base: str = "default", *, bases: Sequence[str] | None = None,
                  setting="auto", max_per_tool: int | None = None,
                  always_include: Sequence[str] | None = None, k: int = MAX_FOLDS,
                  prepared: Prepared | None = None) -> tuple[LearnedScorer, Estimate]:
    """What ``toolsel fit`` does: estimate the fitting procedure by cross-fitting (the dev rule
    and learning run on each outer training fold, scored on the fold left out), then fit the
    same procedure on every labeled request, and keep it only when the estimate's R@5 gain
    has an interval above zero; otherwise the model is blind ``base``.

    The model returned is the one the estimate evaluated: the same rule, candidates and
    settings, fit by the same code on all the requests."""
    p = prepared or prepare(registry, queries, base, always_include=always_include,
                            bases=bases)
    reason = can_cross_fit(p.queries, k)
    if reason:
        cf, gains = None, pd.DataFrame(columns=GAIN_COLUMNS)
        ships, sentence = False, f"ships blind {p.scorer.base_name_}: {reason}."
    else:
        cf = cross_fit(p.registry, p.queries, prepared=p, setting=setting,
                       max_per_tool=max_per_tool, k=k)
        gains = gain_table(cf)
        ships, sentence = _decision(gains, cf.base)
    model = copy.copy(p.scorer)
    model.max_per_tool = max_per_tool
    if ships:
        model.setting = setting
        model.learn(p.registry, p.queries, p.blinds or {model.base_name_: p.blind}, p.vectors)
    else:
        from ..learn.signals import Setting
        model.setting = Setting("blind")
        ref = p.scorer.vectors_from_
        model.learn(p.registry, p.queries, {ref: (p.blinds or {ref: p.blind})[ref]},
                     p.vectors)
    model.estimate_ = Estimate(cf, gains, ships, sentence)
    return model, model.estimate_
