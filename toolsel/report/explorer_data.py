"""The data behind ``explorer.html``: every query ranked by every scorer, trimmed to fit a page.

:func:`explorer_data` computes, with the package's own ranking engine
(:mod:`toolsel.eval.engine`, the ranks every table uses), for each labeled query and scorer:

- the top ``depth`` candidate tools with their scores (the ranking past ``depth`` is trimmed:
  the page lets K run from 1 to ``depth``);
- the rank and score of every required tool, however deep (never trimmed), and the best rank
  of a tool of the same domain, which decides whether a miss counts as a same-domain confusion
  at a given K (:func:`toolsel.tables.failure_modes.classify_miss`).

Per query and required tool it adds what does not depend on the scorer: the query's content
terms shared with and missing from the tool's text (the repair hint) and the failure mode a
miss has when no sibling is sent. Per tool: name, domain, full definition, and its payload
(characters and exact tokens of name + description, tokens of the JSON definition), so the page
sums what is sent the way :func:`toolsel.eval.sweep.sweep` does.

The registry's always-include tools (``"always_include": true``) are sent outside K, as
:class:`toolsel.selection.Selector` sends them; they are not ranked, and a required tool that
is always included is left out of R@K and Complete@K (as in the sweep when given the same
always-include set).

Scores are rounded to 4 significant digits (ranks are computed on the exact scores), the
threshold policy's scale to 8: every float is written to a stated precision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ..data import Query, Tool
from ..eval.engine import Candidates, as_registry, fit_scorers, rank_batches
from ..tables.failure_modes import (MODES, OTHER, SAME_DOMAIN, SHORT_GENERIC, VOCABULARY_GAP,
                                  content_terms, tool_domain, tool_terms)
from ..eval.metrics import tool_costs

__all__ = ["explorer_data", "scorer_fields", "DEFAULT_DEPTH", "FORMAT_VERSION"]

#: Ranks kept per query and scorer (the largest K the page offers), besides required tools.
DEFAULT_DEPTH = 20
FORMAT_VERSION = 1
#: Significant digits of the threshold policy's scale (scores themselves keep 4).
SCALE_DIGITS = 8


def _sig(x: float, digits: int = 4) -> float | None:
    """``x`` rounded to ``digits`` significant digits; ``None`` for a non-finite score."""
    if not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    return round(x, digits - 1 - int(math.floor(math.log10(abs(x)))))


def scorer_fields(scorer) -> str:
    """What a fitted scorer indexes, in words: its fields, or for a fusion scorer (the
    ``default``) what each half indexes, a field listed twice counted twice."""
    setting = getattr(scorer, "setting_", None)
    if setting is not None and hasattr(scorer, "base_"):  # a model fit on labels
        n = len(getattr(scorer, "train_ids_", ()))
        return (f"{scorer_fields(scorer.base_)}; learned from {n} labeled requests: "
                f"{setting.label}")
    signals = getattr(scorer, "signals_", None)
    if signals:
        parts = []
        for kind, sc in signals:
            parts.append(f"{kind} {sc.name}: {_field_list(sc.fields_)}")
        return "; ".join(parts)
    return _field_list(getattr(scorer, "fields_", ()))


def _field_list(fields: Sequence[str]) -> str:
    counts: dict[str, int] = {}
    for f in fields:
        counts[f] = counts.get(f, 0) + 1
    return ", ".join(f if n == 1 else f"{f} ×{n}" for f, n in counts.items())


def _base_mode(n_shared: int, n_words: int, *, short_max_terms: int = 2,
               gap_max_shared: int = 1) -> str:
    """The mode of a miss when no sibling is sent (classify_miss's rules after the first)."""
    if n_shared <= gap_max_shared and n_words <= short_max_terms:
        return SHORT_GENERIC
    if n_shared <= gap_max_shared:
        return VOCABULARY_GAP
    return OTHER


def _check_inputs(reg, queries: Sequence[Query], depth) -> None:
    """Refuse an empty registry, no queries, or a depth that is not an integer >= 1."""
    if not len(reg):
        raise ValueError("the registry has no tools")
    if not queries:
        raise ValueError("no labeled queries to explore")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")


def _required_terms(reg, queries: Sequence[Query]) -> tuple[list[list[int]], list[list[list]]]:
    """Per query: the indices of its required tools, and per required tool [number of shared
    content terms, index of the base failure mode, the missing terms joined by spaces]."""
    q_required: list[list[int]] = []
    q_terms: list[list[list]] = []
    term_cache: dict[int, frozenset[str]] = {}
    for q in queries:
        req = [reg.index(n) for n in q.expected]
        q_required.append(req)
        words = content_terms(q.query)
        n_words = sum(not w.isdigit() for w in words)
        rows = []
        for ti in req:
            if ti not in term_cache:
                term_cache[ti] = tool_terms(reg[ti])
            tt = term_cache[ti]
            shared = [w for w in words if w in tt]
            missing = [w for w in words if w not in tt and not w.isdigit()]
            rows.append([len(shared), MODES.index(_base_mode(len(shared), n_words)),
                         " ".join(missing)])
        q_terms.append(rows)
    return q_required, q_terms


def _scale(batch, b: int, cand_idx) -> list:
    """The threshold policy's relative scale (toolsel.policies.Threshold.relative): the mean
    of the candidates' finite scores and the best one, to :data:`SCALE_DIGITS` significant
    digits (their last digits depend on the CPU's summation order, and the file must be the
    same on every machine)."""
    cs = np.asarray(batch.scores[b, cand_idx], dtype=np.float64)
    cs = cs[np.isfinite(cs)]
    return ([_sig(float(cs.mean()), SCALE_DIGITS), _sig(float(cs.max()), SCALE_DIGITS)]
            if cs.size else [None, None])


def _required_info(batch, b: int, required: Sequence[int], cands, head, cand_dom) -> list[list]:
    """[rank, score, best rank of a same-domain sibling] of each required tool of a query
    ([0, score, 0] for an always-include tool)."""
    info = []
    for ti in required:
        score = _sig(float(batch.scores[b, ti]))
        if cands.always[ti]:
            info.append([0, score, 0])
            continue
        p = cands.position[ti]
        rank = int(batch.ranks[b, p])
        # best rank of another tool of the same domain (0: none within depth)
        same = (cand_dom[head] == cand_dom[p]) & (head != p)
        sib = int(np.argmax(same)) + 1 if same.any() else 0
        info.append([rank, score, sib])
    return info


def _scorer_entry(label: str, sc, texts: Sequence[str], cands, q_required, cand_dom, d: int,
                  batch_size: int) -> dict:
    """One fitted scorer's part of the data: top ``d`` tools and scores, scale and required
    tools' ranks per query."""
    cand_idx = cands.index
    top: list[list[int]] = []
    top_scores: list[list] = []
    scales: list[list] = []
    req_info: list[list[list]] = []
    for batch in rank_batches(sc, texts, cands, batch_size=batch_size):
        for b, qi in enumerate(range(batch.start, batch.stop)):
            order = batch.order[b]  # candidate positions, best first
            head = order[:d]
            top.append([int(cand_idx[p]) for p in head])
            top_scores.append([_sig(float(batch.scores[b, cand_idx[p]])) for p in head])
            scales.append(_scale(batch, b, cand_idx))
            req_info.append(_required_info(batch, b, q_required[qi], cands, head, cand_dom))
    return {"name": label, "fields": scorer_fields(sc), "top": top,
            "scores": top_scores, "scale": scales, "required": req_info}


def explorer_data(registry: Sequence[Tool], queries: Sequence[Query],
                  scorers: Iterable | None = None, *,
                  depth: int = DEFAULT_DEPTH, always_include: Iterable[str] | None = None,
                  title: str = "", source: dict | None = None,
                  batch_size: int = 64) -> dict:
    """Everything ``explorer.html`` shows, as a JSON-ready dict (see the module docstring).

    ``scorers=None``: the registry's compared scorers.
    ``always_include=None`` takes the tools the registry marks ``always_include`` (as
    :class:`~toolsel.selection.Selector` does); pass ``()`` for none. ``source``: file names
    shown on the page (no paths needed).
    """
    reg = as_registry(registry)
    _check_inputs(reg, queries, depth)
    if always_include is None:
        always_include = [t.name for t in reg if t.always_include]
    cands = Candidates.of(reg, always_include)
    always_idx = [int(i) for i in np.flatnonzero(cands.always)]
    cand_idx = cands.index
    m = len(cand_idx)
    d = min(depth, m)
    costs = tool_costs(reg)
    domains = [tool_domain(t) for t in reg]
    dom_code = {name: i for i, name in enumerate(dict.fromkeys(domains))}
    cand_dom = np.asarray([dom_code[domains[i]] for i in cand_idx], dtype=np.int64)

    q_required, q_terms = _required_terms(reg, queries)

    texts = [q.query for q in queries]
    out_scorers = []
    for label, sc in fit_scorers(reg, scorers):
        out_scorers.append(_scorer_entry(label, sc, texts, cands, q_required, cand_dom, d,
                                         batch_size))
        del sc

    return {
        "version": FORMAT_VERSION,
        "title": title,
        "source": dict(source or {}),
        "depth": d,
        "n_candidates": m,
        "modes": list(MODES),
        "same_domain_mode": MODES.index(SAME_DOMAIN),
        "tools": {
            "name": [t.name for t in reg],
            "domain": domains,
            "definition": [t.definition() for t in reg],
            "chars": costs.chars.tolist(),
            "tokens": costs.tokens.tolist(),
            "json_tokens": costs.json_tokens.tolist(),
        },
        "always": always_idx,
        "queries": {
            "id": [q.id for q in queries],
            "text": [q.query for q in queries],
            "split": [q.split or "" for q in queries],
            "required": q_required,
            "terms": q_terms,
        },
        "scorers": out_scorers,
    }

