"""The one place toolsel decides what a number's interval is and whether two numbers differ.

Every page, command, docs generator and benchmark asks this module; none computes its own
interval, p-value or verdict word. The rule, stated once (:data:`RULE` is the same text, and
the report's README repeats it):

- **A 0/1 rate** over independent requests (Complete@k, Success@k, or R@k where every request
  scored 0 or 1): the Wilson score interval (:func:`wilson_interval`).
- **Any other mean**, and any mean over requests that come in groups (near-duplicates, the
  turns of one conversation): the percentile bootstrap that resamples whole groups (every
  request its own group where the data has none); where every value is the same and that
  bootstrap collapses to a point, Wilson's over the groups (:func:`mean_interval`).
- **A difference of two means on the same requests**: the paired bootstrap of the
  per-request differences, resampling whole groups (:func:`paired_difference`).
- **Different** means the interval of the paired difference excludes zero, at a family-wise
  level of 95% (Bonferroni): in a family of ``m`` comparisons each interval is a
  ``1 − 0.05 / m`` interval (:func:`family_level`). No p-value, sign test or margin decides.
- **The family** is the comparisons one table makes on one metric at one cut-off: every pair
  of the ``s`` scorers (or settings) it holds, ``s(s − 1) / 2`` (:func:`pairs_in`), even where
  a sentence names only some of them; or, where a table sets candidates against a reference,
  one comparison per candidate. So the same pair on the same requests gets the same interval
  and the same verdict on every page that shows it.
- **The words**: ``"ahead"`` where the interval lies above zero, ``"behind"`` where it lies
  below, ``"tie"`` otherwise (:func:`verdict`); best/chosen settings are picked on data other
  than the data they are reported on, or the sentence says in-sample.

Resampling is deterministic: the resampled groups depend only on the seed, the number of
groups and the number of resamples, so two tables holding the same requests draw the same
resamples. A narrower tail needs more resamples: :func:`resamples` raises ``n_boot`` so that at
least 20 resamples lie beyond each end of the interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist

import numpy as np

__all__ = ["ALPHA", "RULE", "RULE_SHORT", "WORDS", "family_level", "pairs_in", "resamples",
           "wilson_interval", "mean_interval", "paired_difference", "verdict", "level_words",
           "is_rate"]

#: The family-wise error rate of every test in toolsel.
ALPHA = 0.05

#: The rule in prose, for a report's README and a page's method section.
RULE = (
    "Intervals and verdicts follow one rule (`toolsel.eval.inference`). A 0/1 rate over "
    "independent requests (Complete@k, or R@k where every request scored 0 or 1) gets the "
    "Wilson score interval; any other mean, and any mean over requests that come in groups, "
    "a percentile bootstrap resampling whole groups (Wilson's over the groups where every "
    "value is alike). A difference of two means on the same requests gets the paired "
    "bootstrap, resampling whole groups. Two numbers differ only where that paired interval "
    "excludes zero at a family-wise 95% (Bonferroni: in a family of m comparisons each "
    "interval is at 1 − 0.05/m), the family being the comparisons one table makes on one "
    "metric at one cut-off (every pair of its scorers, even where a sentence names only "
    "some). Then one side is *ahead* and the other *behind*; otherwise they *tie*. A setting "
    "called best or chosen is picked on other requests than it is reported on, or the "
    "sentence says in-sample.")

#: The rule in one clause, for a sentence that uses it.
RULE_SHORT = ("ahead or behind only where the paired interval excludes zero at a family-wise "
              "95% (Bonferroni over the family), a tie otherwise")

#: The three verdicts.
WORDS = ("ahead", "behind", "tie")


def family_level(family: int = 1, alpha: float = ALPHA) -> float:
    """The level of each interval in a family of ``family`` comparisons (Bonferroni)."""
    if isinstance(family, bool) or int(family) != family or family < 1:
        raise ValueError(f"a family has at least one comparison, got {family!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    return 1.0 - alpha / int(family)


def pairs_in(n_entries: int) -> int:
    """The size of the family of every pair of ``n_entries`` scorers (at least 1)."""
    return max(1, n_entries * (n_entries - 1) // 2)


def level_words(family: int = 1, alpha: float = ALPHA) -> str:
    """The level in words: "95%" for one comparison, else "family-wise 95% (each at 99.5%,
    Bonferroni over 10)"."""
    fw = f"{100 * (1 - alpha):g}%"
    if family == 1:
        return fw
    each = 100 * family_level(family, alpha)
    return f"family-wise {fw} (each at {each:.4g}%, Bonferroni over {family})"


def resamples(level: float, n_boot: int = 2000) -> int:
    """``n_boot`` raised so that at least 20 resamples lie beyond each end of a ``level``
    interval (a 99.5% interval from 2,000 resamples would rest on 5 of them)."""
    tail = (1 - level) / 2
    return max(int(n_boot), math.ceil(20 / tail))


@lru_cache(maxsize=64)
def _draws(seed: int, n_groups: int, n_boot: int) -> np.ndarray:
    """The resampled groups: ``n_boot`` rows of ``n_groups`` group positions; the same for
    the same seed, group count and resample count, whichever table asks."""
    out = np.random.default_rng(seed).integers(0, n_groups, size=(n_boot, n_groups))
    out.setflags(write=False)
    return out


def wilson_interval(successes: int, n: int, level: float = 1 - ALPHA) -> tuple[float, float]:
    """The Wilson score interval of the rate ``successes / n``: ``(low, high)``.

    Unlike a bootstrap over ``n`` requests, it does not collapse to a point at 0 or 1 (0 of 10
    gives about ``[0, 0.278]``) and keeps its coverage on small ``n``. ``n == 0`` gives
    ``(nan, nan)``.
    """
    if isinstance(successes, bool) or isinstance(n, bool):
        raise TypeError("wilson_interval takes counts, not booleans")
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n, got {successes} of {n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if n == 0:
        return float("nan"), float("nan")
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = max(0.0, center - half), min(1.0, center + half)
    # exact ends: 0 successes reach 0, n successes reach 1 (no rounding just above/below)
    return (0.0 if successes == 0 else float(low)), (1.0 if successes == n else float(high))


def is_rate(values: np.ndarray) -> bool:
    """Whether every value is 0 or 1 (a yes-or-no outcome per request)."""
    return bool(len(values)) and bool(np.isin(values, (0.0, 1.0)).all())


def _groups(values: np.ndarray, groups: Sequence | None) -> tuple[np.ndarray, int]:
    """Group positions ``0..G-1`` in first-seen order, and ``G``."""
    if groups is None:
        return np.arange(len(values)), len(values)
    g = np.asarray(groups)
    if len(g) != len(values):
        raise ValueError(f"groups has {len(g)} entries for {len(values)} values")
    _, first, inv = np.unique(g, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first, kind="stable"), kind="stable")
    return order[inv.ravel()], len(first)


def _boot_means(values: np.ndarray, gpos: np.ndarray, n_groups: int, n_boot: int,
                seed: int) -> np.ndarray:
    sums = np.bincount(gpos, weights=values, minlength=n_groups)
    counts = np.bincount(gpos, minlength=n_groups).astype(np.float64)
    draws = _draws(int(seed), int(n_groups), int(n_boot))
    return sums[draws].sum(axis=1) / counts[draws].sum(axis=1)


def mean_interval(values: Sequence[float], groups: Sequence | None = None, *,
                  level: float = 1 - ALPHA, n_boot: int = 2000, seed: int = 0) -> dict:
    """The mean of ``values`` (``nan`` left out) and its interval by the rule: Wilson's for a
    0/1 rate over independent requests, else the bootstrap resampling whole ``groups``
    (Wilson's over the groups where every value is alike and the bootstrap is a point).

    Returns ``{"mean", "low", "high", "n", "n_groups", "method"}`` (``method``: ``"wilson"``
    or ``"bootstrap"``).
    """
    v = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(v)
    g = None if groups is None else np.asarray(groups)[keep]
    v = v[keep]
    n = len(v)
    if not n:
        nan = float("nan")
        return {"mean": nan, "low": nan, "high": nan, "n": 0, "n_groups": 0,
                "method": "none"}
    gpos, n_groups = _groups(v, g)
    mean = float(v.mean())
    if is_rate(v) and n_groups == n:
        low, high = wilson_interval(int(v.sum()), n, level)
        return {"mean": mean, "low": low, "high": high, "n": n, "n_groups": n_groups,
                "method": "wilson"}
    if is_rate(v) and (v == v[0]).all():  # grouped, every value alike: the bootstrap is a point
        low, high = wilson_interval(int(round(v[0] * n_groups)), n_groups, level)
        return {"mean": mean, "low": low, "high": high, "n": n, "n_groups": n_groups,
                "method": "wilson"}
    boot = _boot_means(v, gpos, n_groups, resamples(level, n_boot), seed)
    q = (1 - level) / 2
    return {"mean": mean, "low": float(np.quantile(boot, q)),
            "high": float(np.quantile(boot, 1 - q)), "n": n, "n_groups": n_groups,
            "method": "bootstrap"}


def verdict(low: float, high: float) -> str:
    """The word for a paired difference whose interval (at the family's level) is
    ``[low, high]``: ``"ahead"`` when it lies above zero, ``"behind"`` when below, ``"tie"``
    otherwise (an interval touching zero, or none)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "tie"
    if low > 0:
        return "ahead"
    if high < 0:
        return "behind"
    return "tie"


def paired_difference(a: Sequence[float], b: Sequence[float], groups: Sequence | None = None,
                      *, family: int = 1, alpha: float = ALPHA, n_boot: int = 2000,
                      seed: int = 0) -> dict:
    """``a − b`` over the same requests: the paired bootstrap interval at the family's level
    (:func:`family_level`), resampling whole ``groups`` (every request its own group when
    ``None``), and its :func:`verdict`. Requests where either value is ``nan`` are left out.

    Returns ``{"mean_a", "mean_b", "diff", "low", "high", "won", "lost", "ties", "n",
    "n_groups", "family", "level", "verdict"}`` (``won``: requests where ``a`` is higher).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) != len(b):
        raise ValueError(f"paired_difference: {len(a)} values against {len(b)}")
    level = family_level(family, alpha)
    both = ~(np.isnan(a) | np.isnan(b))
    g = None if groups is None else np.asarray(groups)[both]
    a, b = a[both], b[both]
    n = len(a)
    base = {"family": int(family), "level": level}
    if not n:
        nan = float("nan")
        return {"mean_a": nan, "mean_b": nan, "diff": nan, "low": nan, "high": nan, "won": 0,
                "lost": 0, "ties": 0, "n": 0, "n_groups": 0, **base, "verdict": "tie"}
    d = a - b
    gpos, n_groups = _groups(d, g)
    boot = _boot_means(d, gpos, n_groups, resamples(level, n_boot), seed)
    q = (1 - level) / 2
    low, high = float(np.quantile(boot, q)), float(np.quantile(boot, 1 - q))
    won, lost = int((d > 0).sum()), int((d < 0).sum())
    return {"mean_a": float(a.mean()), "mean_b": float(b.mean()), "diff": float(d.mean()),
            "low": low, "high": high, "won": won, "lost": lost, "ties": n - won - lost,
            "n": n, "n_groups": n_groups, **base, "verdict": verdict(low, high)}
