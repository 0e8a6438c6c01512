"""Guard a registry: compare today's selection of labeled requests with a baseline and thresholds.

What ``toolsel check`` computes (rendering lives in :mod:`toolsel.report.check_outputs`, the
command in :mod:`toolsel.cli.check`). :func:`run_check` ranks every labeled request with each
scorer through the evaluation engine (:mod:`toolsel.eval.engine`: one fit per scorer, queries
scored in batches, the embedding scorers' on-disk tool-vector cache reused) and keeps, per
request, the rank of each required tool among the candidates and how many tools the selection
sends. :func:`compare` reads that against a baseline recorded earlier (:func:`baseline_text`,
:func:`load_baseline`) and against minimum metric values (:func:`parse_thresholds`).

**Selection.** Either a fixed top-K (``top_k:k=10``, the default) or a selection policy that
sends a prefix of the ranking (``threshold``, ``adaptive_k``, ``token_budget``; see
:mod:`toolsel.policies`). A required tool is *sent* when its rank is at most the number of
tools the selection sends for that request.

**Tolerance.** A *regression* is a required tool that the baseline sent and today's run does
not (it dropped out of the top K, or out of what the policy sends). A required tool that the
baseline did not send and today's run does is an *improvement*. A rank change of a tool that
is sent both times (3 → 5 inside the top 10) is a *move*: reported, tolerated. A rank change
of a tool missed both times is not reported. The check fails (:attr:`CheckResult.failed`) on
any regression and on any threshold missed.

**The baseline file** is small, diff-friendly and deterministic: JSON, keys sorted, one line
per request (its id, text, the rank of each required tool, the start of its ranking through
the last required tool sent, and the query words each required tool's text shares with the
request), summary metrics rounded to 6 decimals. The same inputs give the same bytes. One
request changing changes one line.

**Regression lines** read ``q17 'open an issue about the flaky test': github__create_issue 3 →
14, passed by linear__create_issue, jira__create_issue``: the tools listed are those ranked
above the tool now that were not above it in the baseline, best first, at most
:data:`MAX_PASSED_BY` of them (then ``and N more``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..data import DataError, Query, Registry, Tool
from ..policies import PrefixPolicy, TopK, get_policy, parse_policy, policy_spec, prefix_policies
from ..eval.engine import Candidates, as_registry, fit_scorers, rank_batches, scorer_items
from .failure_modes import classify_miss, content_terms, surface_words, tool_terms
from ..visible import visible
from ..eval.metrics import METRICS, evaluate, evaluate_sent, metric_aliases
from ..scorers.embedding import persist_request_vectors

__all__ = ["tool_names_fingerprint", "incomparable", "FORMAT", "DEFAULT_TOP_K", "MAX_PASSED_BY",
           "Threshold", "parse_thresholds",
           "selection_policy", "RequestResult", "ScorerRun", "CheckRun", "run_check",
           "baseline_text", "load_baseline", "parse_baseline", "Change", "Explanation",
           "ThresholdResult", "CheckResult", "compare", "summary_metrics", "one_line"]

#: First value of every baseline file; a reader refuses any other.
FORMAT = "toolsel-check-baseline/1"
#: The cut-off when neither a K, a policy nor a baseline says otherwise.
DEFAULT_TOP_K = 10
#: At most this many "passed by" tools are named in a regression line.
MAX_PASSED_BY = 5
#: A request's text is cut to this many characters in a regression line.
MAX_QUERY_CHARS = 100

def _sent_metrics() -> tuple[str, ...]:
    """Metrics that can be read at ``@sent`` (what the selection sends), from the table."""
    return tuple(m.mean[:-2] for m in METRICS.values() if m.sent)


def cutoff_metrics() -> list[str]:
    """Every per-cut-off metric of the metric table (:data:`toolsel.eval.metrics.METRICS`:
    ``R``, ``Success``, ``Complete``, ...): the names ``--min METRIC@K`` accepts besides
    ``MRR``."""
    return [m.mean[:-2] for m in METRICS.values() if m.cutoff]


# --------------------------------------------------------------------------------------------
# thresholds


@dataclass(frozen=True)
class Threshold:
    """A minimum for one metric: ``R@10 >= 0.9``. ``k`` is an int, ``"sent"`` (what the
    selection sends), or ``None`` for ``MRR``."""

    metric: str
    k: int | str | None
    minimum: float

    @property
    def name(self) -> str:
        return self.metric if self.k is None else f"{self.metric}@{self.k}"


#: The largest cut-off a threshold takes (as every command's --top-k).
_MAX_K = 10**9


_THRESHOLD_HINT = ("expected METRIC@K=VALUE or MRR=VALUE, K a cut-off or 'sent', VALUE "
                   "between 0 and 1")


def _threshold_metric(name: str, item: str) -> str:
    """The metric ``name`` (any case, or an alias) stands for; unknown raises naming it."""
    known = {n.lower(): n for n in cutoff_metrics()} | metric_aliases()
    metric = known.get(name.lower())
    if metric is None:
        raise ValueError(f"--min: unknown metric {name!r} in {item!r}; known: "
                         f"{', '.join(cutoff_metrics())}, MRR ({_THRESHOLD_HINT})")
    return metric


def _threshold_cutoff(metric: str, k: str | None, item: str) -> int | str | None:
    """The cut-off of a threshold: ``None`` for MRR, ``"sent"``, or an int from 1 to
    :data:`_MAX_K`."""
    if metric == "MRR":
        if k is not None:
            raise ValueError(f"--min: MRR takes no cut-off, got {item!r}")
        return None
    if k is None:
        raise ValueError(f"--min: {metric} needs a cut-off, e.g. {metric}@10, got "
                         f"{item!r}")
    if k.lower() == "sent":
        if metric not in _sent_metrics():
            raise ValueError(f"--min: {metric}@sent is not measured; @sent takes "
                             f"{', '.join(_sent_metrics())}")
        return "sent"
    if k.isdigit() and 1 <= int(k) <= _MAX_K:
        return int(k)
    raise ValueError(f"--min: cut-off {k[:30]!r} in {item[:60]!r} is not an "
                     f"integer >= 1 (at most {_MAX_K:,}) or 'sent'")


def _threshold_minimum(value: str, item: str) -> float:
    """A threshold's value: a number between 0 and 1."""
    try:
        minimum = float(value)
    except ValueError:
        raise ValueError(f"--min: value {value!r} in {item!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:
        raise ValueError(f"--min: value {value!r} in {item!r} is not between 0 and 1")
    return minimum


def _read_threshold(item: str) -> tuple[str, int | str | None, float]:
    """One ``METRIC@K=VALUE`` part: (metric, cut-off, minimum), checked in that order."""
    m = re.fullmatch(r"([A-Za-z]+)(?:@(\w+))?\s*(?:>=|=)\s*(\S+)", item)
    if not m:
        raise ValueError(f"--min: cannot read {item!r}: {_THRESHOLD_HINT}")
    name, k, value = m.groups()
    metric = _threshold_metric(name, item)
    return metric, _threshold_cutoff(metric, k, item), _threshold_minimum(value, item)


def parse_thresholds(text: str | Iterable[str]) -> list[Threshold]:
    """``"R@10=0.9,Complete@10=0.8,MRR=0.5"`` → thresholds (several strings are joined).

    Metrics: every per-cut-off metric of :func:`toolsel.eval.metrics.evaluate`
    (:func:`cutoff_metrics`: ``R@k``, ``Success@k``, ``Complete@k``, ...) with ``k`` a cut-off;
    ``R``, ``Success``, ``Complete`` also at ``@sent`` (what the selection sends); ``MRR``.
    Values between 0 and 1. A bad part raises
    ``ValueError`` naming it; a metric given twice too.
    """
    parts = [text] if isinstance(text, str) else list(text)
    items = [p.strip() for part in parts for p in part.split(",") if p.strip()]
    if not items:
        raise ValueError("--min: no threshold given; expected e.g. R@10=0.9,Complete@10=0.8")
    out: list[Threshold] = []
    for item in items:
        metric, kk, minimum = _read_threshold(item)
        t = Threshold(metric, kk, minimum)
        if any(o.name == t.name for o in out):
            raise ValueError(f"--min: {t.name} is given twice")
        out.append(t)
    return out


# --------------------------------------------------------------------------------------------
# one run


def selection_policy(top_k: int | None = None, policy: str | PrefixPolicy | None = None
                     ) -> PrefixPolicy:
    """The selection a check measures: ``TopK(top_k)`` or a prefix policy (not both)."""
    if top_k is not None and policy is not None:
        raise ValueError("give a top-K or a policy, not both")
    if policy is None:
        k = DEFAULT_TOP_K if top_k is None else top_k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"--top-k must be an integer >= 1, got {k!r}")
        return TopK(int(k))
    p = parse_policy(policy) if isinstance(policy, str) else get_policy(policy)
    if not isinstance(p, PrefixPolicy):
        raise ValueError(f"policy {policy_spec(p)!r} does not send a prefix of the ranking; "
                         "toolsel check takes " + ", ".join(prefix_policies()))
    return p


def _metric_k(selection: PrefixPolicy) -> int | str:
    """The cut-off the summary is reported at: K of a fixed top-K, else ``"sent"``."""
    return selection.k if type(selection) is TopK else "sent"


@dataclass(frozen=True)
class RequestResult:
    """One labeled request under one scorer.

    ``ranks``: the 1-based rank among the candidates of each required tool (always-include
    tools left out), in the order the request lists them. ``n_sent``: tools the selection sent.
    ``ranking``: the start of the ranking (tool names, best first): in a run, through the
    worst-ranked required tool; read from a baseline, through the last required tool sent.
    ``terms``: per required tool, the request's content terms its text contains.
    """

    id: str
    query: str
    ranks: dict[str, int]
    n_sent: int
    ranking: tuple[str, ...]
    terms: dict[str, tuple[str, ...]]

    def sent(self, tool: str) -> bool:
        return self.ranks[tool] <= self.n_sent

    def top(self) -> tuple[str, ...]:
        """The ranking through the last required tool sent (what a baseline keeps)."""
        depth = max((r for r in self.ranks.values() if r <= self.n_sent), default=0)
        return self.ranking[:depth]


@dataclass
class ScorerRun:
    """Every request under one scorer, and the summary metrics."""

    scorer: str
    requests: list[RequestResult]
    summary: dict[str, float | int | None]
    fit_s: float = 0.0
    """Seconds fitting the scorer (for embeddings: cache look-up and encoding new tools)."""
    score_s: float = 0.0
    """Seconds scoring and ranking the requests (for embeddings: encoding those not cached)."""

    @property
    def seconds(self) -> float:
        return self.fit_s + self.score_s

    def by_id(self) -> dict[str, RequestResult]:
        return {r.id: r for r in self.requests}


@dataclass
class CheckRun:
    """A check's results: the selection, the always-include tools, one run per scorer."""

    selection: PrefixPolicy
    always_include: tuple[str, ...]
    runs: dict[str, ScorerRun]
    n_tools: int = 0
    registry: str | None = None
    """:func:`tool_names_fingerprint` of the registry it ran on (``None``: a baseline recorded
    before fingerprints)."""

    @property
    def selection_spec(self) -> str:
        return policy_spec(self.selection)

    @property
    def fixed_k(self) -> bool:
        return type(self.selection) is TopK


def _round(v: float) -> float | None:
    return None if v is None or math.isnan(v) else round(float(v), 6)


def summary_metrics(requests: Sequence[RequestResult], k: int | str) -> dict[str, Any]:
    """``R@k``, ``Success@k``, ``Complete@k`` (``k`` a cut-off, or ``"sent"``), ``MRR``,
    ``n_queries`` (requests with a required tool to find), and for ``"sent"`` the mean number
    of tools sent; rounded to 6 decimals, ``None`` without a request."""
    valid = [r for r in requests if r.ranks]
    ranks = [list(r.ranks.values()) for r in valid]
    if k == "sent":
        sent = evaluate_sent([sum(r.sent(t) for t in r.ranks) for r in valid],
                             [len(r.ranks) for r in valid])
        out = {name: _mean(v.tolist()) for name, v in sent.items()}
    else:
        m = evaluate(ranks, [k]) if valid else None
        out = {f"{name}@{k}": (_mean(m[f"{name}@k"][:, 0].tolist()) if m else None)
               for name in ("R", "Success", "Complete")}
    out["MRR"] = _mean(evaluate(ranks, [1])["RR"].tolist()) if valid else None
    if k == "sent":
        out["mean_sent"] = _mean([float(r.n_sent) for r in valid])
    out["n_queries"] = len(valid)
    return {key: (_round(v) if isinstance(v, float) else v) for key, v in out.items()}


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def run_check(registry: Sequence[Tool], queries: Sequence[Query], scorers="default", *,
              selection: PrefixPolicy | None = None,
              always_include: Iterable[str] = (), cache_requests: bool = True) -> CheckRun:
    """Rank every request with every scorer and record what :func:`compare` needs.

    Parameters
    ----------
    registry, queries : the registry and its labeled requests (every expected tool in it).
    scorers : scorer names, objects, or a mapping ``{label: scorer}``; each fitted once.
    selection : a prefix policy (:func:`selection_policy`); default ``TopK(10)``.
    always_include : names sent every turn, outside the filter: never ranked, and required
        tools among them are left out (they are visible anyway).
    cache_requests : keep the requests' vectors in the on-disk embedding cache too
        (:func:`~toolsel.scorers.embedding.persist_request_vectors`), so a second check of
        the same requests encodes none of them; a scorer built with ``cache=False`` writes
        nothing regardless.
    """
    reg = as_registry(registry)
    queries = list(queries)
    if not queries:
        raise ValueError("no queries to check")
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"query id {dup!r} appears twice; ids must be unique")
    selection = selection_policy() if selection is None else selection
    always = [always_include] if isinstance(always_include, str) else list(always_include)
    cands = Candidates.of(reg, always)
    fitted = selection.clone().fit(reg)  # token_budget learns each tool's cost here
    pos = cands.position
    cand_index = cands.index
    names = reg.names
    names_arr = np.asarray(names, dtype=object)  # a gather of names per request, in C
    required = [cands.required(q) for q in queries]
    q_terms = [content_terms(q.query) for q in queries]
    t_terms: dict[int, frozenset[str]] = {}
    k_label = _metric_k(selection)
    scorer_items(scorers)  # unknown names fail before any fitting
    runs: dict[str, ScorerRun] = {}
    fitted_scorers = fit_scorers(reg, scorers)
    # the requests' vectors go to disk too: the next check of the same requests encodes none
    with persist_request_vectors(cache_requests):
        while True:
            t0 = time.perf_counter()  # the scorer's fit (embedding cache look-up) included
            try:
                label, sc = next(fitted_scorers)
            except StopIteration:
                break
            t1 = time.perf_counter()
            results: list[RequestResult] = []
            for batch in rank_batches(sc, [q.query for q in queries], cands, matches=False):
                for b, qi in enumerate(range(batch.start, batch.stop)):
                    q, req = queries[qi], required[qi]
                    ranks = batch.ranks_of(b, pos[req]).tolist()
                    order = cand_index[batch.order[b]]
                    n_sent = int(fitted.cutoff(batch.scores[b][order], order))
                    depth = max(ranks, default=0)
                    terms = {}
                    for i in req:
                        if i not in t_terms:
                            t_terms[i] = tool_terms(reg[i])
                        terms[names[i]] = tuple(t for t in q_terms[qi] if t in t_terms[i])
                    results.append(RequestResult(
                        q.id, q.query, {names[i]: int(r) for i, r in zip(req, ranks)}, n_sent,
                        tuple(names_arr[order[:depth]].tolist()), terms))
            runs[label] = ScorerRun(label, results, summary_metrics(results, k_label),
                                    t1 - t0, time.perf_counter() - t1)
    return CheckRun(selection, tuple(always), runs, len(reg), tool_names_fingerprint(reg))


def tool_names_fingerprint(registry: Sequence[Tool]) -> str:
    """The sha256 of a registry's tool names (sorted, one a line): which registry a baseline
    was recorded on. Names, not texts: editing descriptions is what a check is for."""
    names = sorted(t.name for t in registry)
    return hashlib.sha256("\n".join(names).encode("utf-8", "surrogatepass")).hexdigest()


def incomparable(baseline: CheckRun, queries: Sequence[Query],
                 registry: Sequence[Tool]) -> str | None:
    """Why ``baseline`` cannot be compared with a run of ``queries`` on ``registry`` (one
    line), else ``None``: no request id in common, none of the common ids holding the same
    request text, or a baseline recorded on another registry (its fingerprint differs and
    none of the tools its requests need is in this one)."""
    base = {r.id: r for sr in baseline.runs.values() for r in sr.requests}
    common = [q for q in queries if q.id in base]
    if not common:
        return (f"no request in common with the baseline (its {len(base)} request ids are "
                "none of this run's)")
    if not any(base[q.id].query == q.query for q in common):
        return (f"the {len(common)} request ids it shares with this run all hold other "
                "requests: recorded on another query set")
    if baseline.registry is not None and baseline.registry != tool_names_fingerprint(registry):
        names = {t.name for t in registry}
        needed = {t for r in base.values() for t in r.ranks}
        if needed and not needed & names:
            return (f"recorded on another registry: none of the {len(needed)} tools its "
                    "requests need is in this one")
    return None


# --------------------------------------------------------------------------------------------
# the baseline file


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _request_record(r: RequestResult, fixed_k: bool) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": r.id, "query": r.query, "ranks": r.ranks, "top": list(r.top()),
                           "terms": {t: list(v) for t, v in r.terms.items()}}
    if not fixed_k:
        rec["n_sent"] = r.n_sent
    return rec


def baseline_text(run: CheckRun) -> str:
    """The baseline file of ``run``: deterministic JSON, one line per request.

    ``format``, ``selection`` (a policy spec), ``always_include``, then per scorer its
    ``summary`` and its ``queries`` (in the order of the query file; each a one-line object:
    ``id``, ``query``, ``ranks`` {tool: rank}, ``top`` the ranking through the last required
    tool sent, ``terms`` {tool: shared query words}, and ``n_sent`` for a policy).
    """
    lines = ["{", f' "always_include": {_dumps(list(run.always_include))},',
             f' "format": {_dumps(FORMAT)},']
    if run.registry is not None:
        lines.append(f' "registry": {_dumps(run.registry)},')
    lines.append(' "scorers": {')
    labels = list(run.runs)
    for si, label in enumerate(labels):
        sr = run.runs[label]
        lines.append(f"  {_dumps(label)}: {{")
        lines.append('   "queries": [')
        recs = [_dumps(_request_record(r, run.fixed_k)) for r in sr.requests]
        lines += [f"    {rec}{',' if i < len(recs) - 1 else ''}" for i, rec in enumerate(recs)]
        lines.append("   ],")
        lines.append(f'   "summary": {_dumps(sr.summary)}')
        lines.append("  }" + ("," if si < len(labels) - 1 else ""))
    lines += [" },", f' "selection": {_dumps(run.selection_spec)}', "}"]
    return "\n".join(lines) + "\n"


def _line_of(text: str, needle: str, start: int = 0) -> int | None:
    at = text.find(needle, start)
    return None if at < 0 else text.count("\n", 0, at) + 1


_FIELDS = (("id", str), ("query", str), ("ranks", dict), ("top", list), ("terms", dict))
_KIND = {str: "a string", int: "an integer", list: "a list", dict: "an object"}


class _BaselineReader:
    """Reads a baseline file's parsed JSON; every error names the file, line and field."""

    def __init__(self, text: str, path: str | Path) -> None:
        self.text, self.path = text, path

    def err(self, reason: str, where: str | None = None, fld: str | None = None,
            needle: str | None = None, start: int = 0) -> DataError:
        line = _line_of(self.text, needle, start) if needle else None
        loc = ", ".join(p for p in (f"line {line}" if line else None, where) if p)
        return DataError(reason, path=self.path, location=loc or None, field=fld)

    def registry(self, doc: dict) -> str | None:
        """The registry fingerprint the baseline was recorded on (``None``: recorded before
        fingerprints)."""
        fingerprint = doc.get("registry")
        if fingerprint is not None and not (isinstance(fingerprint, str) and
                                            re.fullmatch(r"[0-9a-f]{64}", fingerprint)):
            raise self.err("expected the registry's sha256 (64 hex digits)", fld="registry",
                           needle='"registry"')
        return fingerprint

    def header(self, doc: Any):
        """The selection policy, always-include names and scorers object, checked."""
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
            raise self.err(f"expected {FORMAT!r}, got {got!r}: not a toolsel check baseline "
                           "(write one with toolsel check --update-baseline)", fld="format",
                           needle='"format"')
        try:
            sel = selection_policy(policy=doc.get("selection")) if isinstance(
                doc.get("selection"), str) else None
        except ValueError as exc:
            raise self.err(str(exc), fld="selection", needle='"selection"') from None
        if sel is None:
            raise self.err("expected a policy spec string such as 'top_k:k=10'",
                           fld="selection", needle='"selection"')
        always = doc.get("always_include")
        if not isinstance(always, list) or not all(isinstance(a, str) for a in always):
            raise self.err("expected a list of tool names", fld="always_include",
                           needle='"always_include"')
        scorers = doc.get("scorers")
        if not isinstance(scorers, dict) or not scorers:
            raise self.err("expected an object {scorer: {summary, queries}} with at least "
                           "one scorer", fld="scorers", needle='"scorers"')
        return sel, always, scorers

    def scorer_run(self, label: str, body: Any, sel) -> ScorerRun:
        """One scorer's recorded requests."""
        head = self.text.find(_dumps(label) + ":")
        where = f"scorer {label!r}"
        if not isinstance(body, dict) or not isinstance(body.get("queries"), list) \
                or not isinstance(body.get("summary"), dict):
            raise self.err("expected an object with 'summary' and 'queries' (a list)", where,
                           "scorers", needle=_dumps(label) + ":")
        reqs: list[RequestResult] = []
        seen: set[str] = set()
        for i, rec in enumerate(body["queries"]):
            reqs.append(self.request(rec, f"{where}, queries[{i}]", head, sel, seen))
        return ScorerRun(label, reqs, dict(body["summary"]))

    def request(self, rec: Any, where: str, head: int, sel, seen: set[str]) -> RequestResult:
        """One recorded request: its fields' types, ranks and the tools listed at them."""
        fixed = type(sel) is TopK
        qid = rec.get("id") if isinstance(rec, dict) else None
        needle = f'"id": {_dumps(qid)}' if isinstance(qid, str) else None
        wh = where + (f" (query {qid!r})" if needle else "")
        if not isinstance(rec, dict):
            raise self.err("expected a request object", wh)
        for key, kind in _FIELDS + ((("n_sent", int),) if not fixed else ()):
            v = rec.get(key)
            if not isinstance(v, kind) or isinstance(v, bool):
                raise self.err(f"expected {_KIND[kind]}", wh, key, needle, head)
        if qid in seen:
            raise self.err(f"duplicate query id {qid!r}", wh, "id", needle, head)
        seen.add(qid)
        ranks, top, terms = rec["ranks"], rec["top"], rec["terms"]
        self.check_lists(ranks, top, terms, wh, needle, head)
        n_sent = sel.k if fixed else rec["n_sent"]
        for tool, r in ranks.items():
            if r <= n_sent and (r > len(top) or top[r - 1] != tool):
                raise self.err(f"{tool!r} has rank {r} but 'top' does not list it there", wh,
                               "top", needle, head)
        return RequestResult(qid, rec["query"], dict(ranks), int(n_sent), tuple(top),
                             {t: tuple(v) for t, v in terms.items()})

    def check_lists(self, ranks: dict, top: list, terms: dict, wh: str, needle: str | None,
                    head: int) -> None:
        """Ranks are integers >= 1; ``top`` and ``terms`` hold tool names and words."""
        for tool, r in ranks.items():
            if isinstance(r, bool) or not isinstance(r, int) or r < 1:
                raise self.err(f"rank of {tool!r} must be an integer >= 1, got {r!r}", wh,
                               "ranks", needle, head)
        if not all(isinstance(t, str) for t in top):
            raise self.err("expected a list of tool names", wh, "top", needle, head)
        if not all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                   for v in terms.values()):
            raise self.err("expected {tool: [words]}", wh, "terms", needle, head)


def _no_constant(name: str):
    raise ValueError(f"{name} is not allowed")


def parse_baseline(text: str, path: str | Path = "<baseline>") -> CheckRun:
    """Read a baseline file's text back; :class:`DataError` names the file, line and field."""
    from ..data import MAX_DEPTH, json_depth
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}; not a toolsel check baseline", path=path,
                        location=f"line {exc.lineno}, column {exc.colno}") from None
    except ValueError as exc:
        raise DataError(f"invalid JSON: {exc}", path=path) from None
    except RecursionError:
        doc = None
    if doc is None or json_depth(doc) > MAX_DEPTH:
        raise DataError(f"invalid JSON: nested too deeply (more than {MAX_DEPTH} levels "
                        "allowed); not a toolsel check baseline", path=path)
    reader = _BaselineReader(text, path)
    sel, always, scorers = reader.header(doc)
    fingerprint = reader.registry(doc)
    runs = {label: reader.scorer_run(label, body, sel) for label, body in scorers.items()}
    return CheckRun(sel, tuple(always), runs, registry=fingerprint)


def load_baseline(path: str | Path) -> CheckRun:
    """Read a baseline file written by :func:`baseline_text` (errors name file, line, field)."""
    from ..data import read_text
    path = Path(path)
    if not path.exists():
        raise DataError("baseline file not found; record one with toolsel check "
                        "--update-baseline", path=path)
    try:  # capped in size, no device (/dev/zero), UTF-8
        text = read_text(path)
    except DataError as exc:
        raise DataError(f"{exc.reason}; not a toolsel check baseline", path=path) from None
    return parse_baseline(text, path)


# --------------------------------------------------------------------------------------------
# comparing


#: At most this many words in each list of an ``--explain`` line (a long request would
#: otherwise be listed whole).
MAX_EXPLAIN_WORDS = 8


def _few(words: Sequence[str], n: int = MAX_EXPLAIN_WORDS) -> str:
    if not words:
        return "(none)"
    return ", ".join(words[:n]) + (f" and {len(words) - n} more" if len(words) > n else "")


@dataclass(frozen=True)
class Explanation:
    """Why a tool was lost (``--explain``): its failure mode (:mod:`toolsel.tables.failure_modes`,
    against what is sent now), the request's words its text shared in the baseline and no
    longer does, the request's words its text lacks now, and among those the words the tools
    that passed it have (``passing_terms``: the repair hint). Words as the request writes
    them (``analysis``, not the folded ``analysi``)."""

    mode: str
    lost_terms: tuple[str, ...]
    missing_terms: tuple[str, ...]
    passing_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Change:
    """A required tool whose fate changed: ``kind`` is ``lost`` (a regression), ``found`` (an
    improvement) or ``moved`` (a rank change, sent both times)."""

    scorer: str
    query_id: str
    query: str
    tool: str
    kind: str
    rank_before: int
    rank_after: int
    passed_by: tuple[str, ...] = ()
    n_sent_before: int | None = None
    n_sent_after: int | None = None
    explanation: Explanation | None = None

    def line(self, max_passed_by: int = MAX_PASSED_BY) -> str:
        """``q17 'open an issue…': github__create_issue 3 → 14, passed by a, b``."""
        # ids and names from data: control characters (a newline) shown, never obeyed
        out = (f"{visible(self.query_id)} '{one_line(self.query, MAX_QUERY_CHARS)}': "
               f"{visible(self.tool)} {self.rank_before} → {self.rank_after}")
        if self.kind == "lost":
            if self.passed_by:
                shown = [visible(n) for n in self.passed_by[:max_passed_by]]
                more = len(self.passed_by) - len(shown)
                out += ", passed by " + ", ".join(shown) + (f" and {more} more" if more else "")
            if self.n_sent_before != self.n_sent_after and self.n_sent_after is not None:
                out += f", {self.n_sent_after} sent (was {self.n_sent_before})"
        return out

    def explain_line(self) -> str | None:
        e = self.explanation
        if e is None:
            return None
        line = f"failure mode: {e.mode}; words its text lost: {_few(e.lost_terms)}"
        if e.passing_terms:
            return (line + "; request words the tools passing it have and its text lacks: "
                    + _few(e.passing_terms))
        return line + f"; request words its text lacks: {_few(e.missing_terms)}"


@dataclass(frozen=True)
class ThresholdResult:
    scorer: str
    threshold: Threshold
    value: float | None

    @property
    def passed(self) -> bool:
        return self.value is not None and self.value >= self.threshold.minimum - 1e-12

    def line(self) -> str:
        v = "n/a" if self.value is None else f"{self.value:.3f}"
        return (f"{visible(self.scorer)}: {self.threshold.name} {v} "
                f"{'>=' if self.passed else '<'} {self.threshold.minimum:g}"
                f"{'' if self.passed else ' (missed)'}")


@dataclass
class CheckResult:
    """What a check found: changes against the baseline, threshold results, notes."""

    run: CheckRun
    baseline: CheckRun | None
    changes: list[Change] = field(default_factory=list)
    thresholds: list[ThresholdResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    compared: bool = False

    def of_kind(self, kind: str, scorer: str | None = None) -> list[Change]:
        return [c for c in self.changes if c.kind == kind
                and (scorer is None or c.scorer == scorer)]

    @property
    def regressions(self) -> list[Change]:
        return self.of_kind("lost")

    @property
    def improvements(self) -> list[Change]:
        return self.of_kind("found")

    @property
    def moves(self) -> list[Change]:
        return self.of_kind("moved")

    @property
    def missed_thresholds(self) -> list[ThresholdResult]:
        return [t for t in self.thresholds if not t.passed]

    @property
    def failed(self) -> bool:
        return bool(self.regressions or self.missed_thresholds)

    def request_changes(self, scorer: str, query_id: str) -> list[Change]:
        return [c for c in self.changes if c.scorer == scorer and c.query_id == query_id]


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line: whitespace runs as one space, then what
    :func:`~toolsel.visible.visible` escapes as escapes (nothing a terminal would act on),
    cut to ``limit`` characters with ``…``."""
    s = visible(re.sub(r"\s+", " ", str(text)).strip())
    if limit is not None and len(s) > limit:
        s = s[:limit - 1] + "…"
    return s


def metric_value(sr: ScorerRun, t: Threshold) -> float | None:
    """The value of threshold ``t``'s metric for one scorer's run: the mean over requests
    with a required tool to find (:mod:`toolsel.eval.metrics`), ``None`` without one."""
    if t.metric == "MRR":
        return summary_metrics(sr.requests, 1)["MRR"]
    if t.k == "sent":
        return summary_metrics(sr.requests, "sent")[f"{t.metric}@sent"]
    valid = [list(r.ranks.values()) for r in sr.requests if r.ranks]
    if not valid:
        return None
    return _round(_mean(evaluate(valid, [t.k])[f"{t.metric}@k"][:, 0].tolist()))


def compare(run: CheckRun, baseline: CheckRun | None = None,
            thresholds: Sequence[Threshold] = (), *, registry: Sequence[Tool] | None = None,
            explain: bool = False) -> CheckResult:
    """Compare a run with a baseline (when given; same selection and always-include) and
    thresholds. ``explain`` (needs ``registry``) adds an :class:`Explanation` per regression.
    """
    result = CheckResult(run, baseline)
    for label, sr in run.runs.items():
        for t in thresholds:
            result.thresholds.append(ThresholdResult(label, t, metric_value(sr, t)))
    if baseline is None:
        return result
    if baseline.selection_spec != run.selection_spec or \
            tuple(baseline.always_include) != tuple(run.always_include):
        raise ValueError(settings_mismatch(baseline, run))
    reg = None if registry is None else as_registry(registry)
    if explain and reg is None:
        raise ValueError("explain needs the registry")
    result.compared = True
    for label, sr in run.runs.items():
        old = baseline.runs.get(label)
        if old is None:
            result.notes.append(f"{label}: not in the baseline; nothing compared")
            continue
        _compare_scorer(result, label, sr, old, reg if explain else None)
    return result


def _compare_scorer(result: CheckResult, label: str, sr: ScorerRun, old: ScorerRun,
                    reg: Registry | None) -> None:
    """Add one scorer's changes and notes against its baseline run, request by request,
    then the baseline's requests that are gone."""
    before = old.by_id()
    now_ids = set()
    for r in sr.requests:
        now_ids.add(r.id)
        b = before.get(r.id)
        if b is None:
            result.notes.append(f"{label}: {r.id} is new (not in the baseline)")
            continue
        _compare_request(result, label, b, r, reg)
    for qid in before:
        if qid not in now_ids:
            result.notes.append(f"{label}: {qid} is in the baseline but not in the "
                                "queries")


def _compare_request(result: CheckResult, label: str, b: RequestResult, r: RequestResult,
                     reg: Registry | None) -> None:
    """Add one request's changes and notes: its text, each required tool now, then each
    required tool no longer required."""
    if b.query != r.query:
        result.notes.append(f"{label}: {r.id}: the request's text changed since the "
                            "baseline")
    for tool in r.ranks:
        if tool not in b.ranks:
            result.notes.append(f"{label}: {r.id}: {tool} is newly required (not in "
                                "the baseline)")
            continue
        result.changes.extend(_changes(label, b, r, tool, reg))
    for tool in b.ranks:
        if tool not in r.ranks:
            result.notes.append(f"{label}: {r.id}: {tool} is no longer required")


def settings_mismatch(baseline: CheckRun, run: CheckRun) -> str:
    def desc(r: CheckRun) -> str:
        return (f"selection {r.selection_spec}, always-include "
                f"[{', '.join(r.always_include) or 'none'}]")
    return (f"the baseline was recorded with {desc(baseline)}; this run uses {desc(run)}: "
            "drop --top-k/--policy/--always-include to use the baseline's, or re-record it "
            "with --update-baseline")


def _explanation(r: RequestResult, b: RequestResult, tool: str, passed: tuple[str, ...],
                 reg: Registry) -> Explanation:
    """Why ``tool`` was lost for request ``r`` (baseline ``b``), its words as written."""
    sent = [reg.get(n) for n in r.ranking[:r.n_sent]]
    m = classify_miss(r.query, reg.get(tool), sent)
    now = set(r.terms.get(tool, ()))
    lost = tuple(t for t in b.terms.get(tool, ()) if t not in now)
    theirs = frozenset().union(*(tool_terms(reg.get(n)) for n in passed if n in reg))
    passing = tuple(t for t in m.missing_terms if t in theirs)
    return Explanation(m.mode, *(surface_words(r.query, words)
                                 for words in (lost, m.missing_terms, passing)))


def _changes(label: str, b: RequestResult, r: RequestResult, tool: str,
             reg: Registry | None) -> list[Change]:
    rb, ra = b.ranks[tool], r.ranks[tool]
    sb, sa = b.sent(tool), r.sent(tool)
    common = dict(scorer=label, query_id=r.id, query=r.query, tool=tool, rank_before=rb,
                  rank_after=ra, n_sent_before=b.n_sent, n_sent_after=r.n_sent)
    if sb and not sa:
        above_before = set(b.ranking[:rb - 1])
        passed = tuple(t for t in r.ranking[:ra - 1] if t not in above_before)
        expl = _explanation(r, b, tool, passed, reg) if reg is not None else None
        return [Change(kind="lost", passed_by=passed, explanation=expl, **common)]
    if sa and not sb:
        return [Change(kind="found", **common)]
    if sa and sb and ra != rb:
        return [Change(kind="moved", **common)]
    return []
