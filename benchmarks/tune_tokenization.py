"""Choose the lexical scorers' tokenization on dev, report it on test, and compare with bm25s.

For each scorer family (``bm25``, ``tfidf``, ``jaccard``, and ``default``'s lexical half) every
combination of name splitting (``tokenizer``: ``words``, ``tool_words``, ``article``), stop
words (``stop_words``: none, query, both) and stemming (``stem``: none, Snowball, Snowball
beside the exact word), and for ``bm25`` and ``default`` the idf (rank-bm25's Okapi with its
epsilon floor, or Lucene's) and, with Snowball beside the exact word, a stem term's weight
against a word's (``stem_weight`` 1 or 0.5), and for ``bm25``, ``tfidf`` and ``default`` the backoff of a
request whose content words match no tool (``backoff``; only where stop words are dropped,
elsewhere it changes nothing) is evaluated on the dev split of every registry style
(``data/styles/*``) and of the workspace registry (``data/requests.jsonl``), the same six sets
as ``benchmarks/tune_default.py``. The rule is that script's
(:func:`toolsel.eval.tuning.choose`): the best dev mean over sets of
``(R@5 + Complete@10) / 2`` among the settings that lose at most one query's worth of either
metric on any set against the family's current setting (``before``: the defaults chosen by
the previous run of this script; ``--max-loss-queries``). Then every setting is reported on
test, with bootstrap intervals (:func:`toolsel.eval.stats.mean_intervals`), and
compared with the current setting, paired per request
(:func:`toolsel.eval.stats.paired_comparison`): the chosen setting, the best dev score
whether eligible or not, and the current setting with the backoff.

``bm25s`` (a separate BM25 package, installed with the ``test`` extra) out of the box —
its tokenizer (lowercase, ``\\w\\w+``, its English stop words) with and without its
recommended PyStemmer stemmer, its default Lucene BM25 — indexes the same fields as
``bm25`` and is compared with ``bm25``'s chosen setting the same way.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/tune_tokenization.py \\
        --out reports/benchmarks

Writes ``tokenization.csv`` (split, style, family, setting: R@5, Complete@10, MRR with 95%
intervals, which setting was the current one and which was chosen), ``tokenization_paired.csv``
(test: chosen − before, best dev score − before, before with backoff − before and chosen −
the setting before issue 23 per family,
and ``bm25`` − bm25s, per style and metric, with paired bootstrap intervals) and ``tokenization_dev_ranking.csv`` (the rule's ranking per family).
The tables are deterministic (fixed bootstrap seed); nothing is timed.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tune_default import load_sets  # noqa: E402

from toolsel.eval.stats import mean_intervals, paired_comparison  # noqa: E402
from toolsel.eval.tuning import METRICS, choose, evaluate_variants, query_metrics  # noqa: E402
from toolsel.scorers.base import Scorer  # noqa: E402
from toolsel.scorers.bm25 import Bm25Scorer  # noqa: E402
from toolsel.scorers.fusion import FusionScorer  # noqa: E402
from toolsel.scorers.jaccard import JaccardScorer  # noqa: E402
from toolsel.scorers.tfidf import TfidfScorer  # noqa: E402

SETS = ("api", "plugin", "pooled", "marketplace", "openapi", "workspace")
SPLITS = ("words", "tool_words", "article")
STOPS = (None, "query", "both")
STEMS = (None, "snowball", "snowball+exact")
BACKOFF = {"backoff": (False, True)}
#: with ``stem="snowball+exact"``, a stem term weighs as much as a word (1) or half (0.5)
STEM_WEIGHT = {"stem_weight": (1.0, 0.5)}

#: The default scorer's configuration, spelled out (as ``tune_default.py`` chose it) so the
#: grid varies only tokenization whatever the defaults become.
DEFAULT_CONFIG = dict(lexical_fields=("name_words", "name_words", "description", "param_names"),
                      semantic_fields=("name_words", "description"), weights=(0.4, 0.6),
                      clauses=True, clause_vectors="in_context", whole_bonus=0.1)

#: Each family's setting before issue 23 tuned tokenization (before ``tokenizer``,
#: ``stop_words`` and ``stem`` existed): the start of the issue's before/after comparison.
START = {"bm25": dict(tokenizer="words", stop_words=None, stem=None, idf="okapi"),
         "tfidf": dict(tokenizer="words", stop_words=None, stem=None),
         "jaccard": dict(tokenizer="article", stop_words=None, stem=None),
         "default": dict(tokenizer="tool_words", stop_words="query", stem=None, idf="okapi")}

#: ``{family: (scorer class, fixed parameters, extra knobs, the current setting)}``;
#: every family varies ``tokenizer`` × ``stop_words`` × ``stem`` (and its extra knobs). The
#: current settings are the defaults the previous run chose (from ``words``, no stop words,
#: no stemming, Okapi idf for ``bm25`` and ``tfidf``; ``tool_words`` with request stop words
#: for ``default``).
FAMILIES = {
    # idf "lucene" (no negative idf, no epsilon floor) is bm25s's formula
    "bm25": (Bm25Scorer, {}, {"idf": ("okapi", "lucene"), **STEM_WEIGHT, **BACKOFF},
             dict(tokenizer="article", stop_words="both", stem="snowball", idf="lucene")),
    "tfidf": (TfidfScorer, {}, BACKOFF,
              dict(tokenizer="article", stop_words="query", stem="snowball")),
    "jaccard": (JaccardScorer, {}, {}, dict(tokenizer="article", stop_words=None, stem=None)),
    "default": (FusionScorer, DEFAULT_CONFIG,
                {"idf": ("okapi", "lucene"), **STEM_WEIGHT, **BACKOFF},
                dict(tokenizer="article", stop_words="query", stem=None, idf="okapi")),
}


def label(family: str, setting: dict) -> str:
    parts = [setting["tokenizer"], f"stop={setting['stop_words'] or 'none'}",
             f"stem={setting['stem'] or 'none'}"]
    parts += [f"{k}={v}" for k, v in setting.items()
              if k not in ("tokenizer", "stop_words", "stem", "backoff", "stem_weight")]
    if setting.get("stem_weight", 1.0) != 1.0:
        parts.append(f"stem_weight={setting['stem_weight']:g}")
    if setting.get("backoff"):
        parts.append("backoff")
    return f"{family} | {', '.join(parts)}"


def grid(families) -> tuple[dict, dict]:
    """``{label: scorer}`` and ``{label: (family, setting)}``."""
    variants, meta = {}, {}
    for family in families:
        cls, fixed, extra, _ = FAMILIES[family]
        axes = {"tokenizer": SPLITS, "stop_words": STOPS, "stem": STEMS, **extra}
        for values in itertools.product(*axes.values()):
            setting = dict(zip(axes, values))
            if setting.get("backoff") and setting["stop_words"] is None:
                continue  # nothing is dropped, so nothing to back off from: the same scores
            if setting.get("stem_weight", 1.0) != 1.0 and setting["stem"] != "snowball+exact":
                continue  # only stem terms of snowball+exact have a weight
            lab = label(family, setting)
            variants[lab] = cls(**fixed, **setting)
            meta[lab] = (family, setting)
    return variants, meta


class Bm25sScorer(Scorer):
    """bm25s out of the box over the same tool fields as ``bm25`` (benchmark only)."""

    def __init__(self, *, stem: bool = True, fields=None):
        super().__init__(fields=fields)
        self.stem = stem

    def _tok(self, texts):
        import bm25s
        return bm25s.tokenize(texts, stopwords="en", stemmer=self.stemmer_, return_ids=False,
                              show_progress=False)

    def _fit(self, tools) -> None:
        import bm25s
        import Stemmer
        self.stemmer_ = Stemmer.Stemmer("english") if self.stem else None
        self.model_ = bm25s.BM25()
        self.model_.index(self._tok(self.texts_), show_progress=False)

    def _score_many(self, queries):
        # a request of stop words only has no tokens: it scores nothing
        return np.vstack([self.model_.get_scores(q).astype(np.float64) if q
                          else np.zeros(self.n_tools_) for q in self._tok(queries)])


BM25S = {"bm25s (stem)": Bm25sScorer(stem=True), "bm25s (no stem)": Bm25sScorer(stem=False)}


def intervals(table: pd.DataFrame, split: str, meta: dict, before: dict,
              chosen: dict) -> pd.DataFrame:
    """One row per style × variant: the three metrics with 95% intervals by the one rule."""
    qm = query_metrics(table)
    rows = []
    for style, g in qm.groupby("style", sort=False):
        ci = {}
        for name, (col, k) in METRICS.items():
            b = mean_intervals(g[g["top_k"] == k], [col])
            for r in b.itertuples():
                ci[(r.scorer, name)] = (r.mean, r.low, r.high, r.n_queries)
        for var in dict.fromkeys(g["scorer"]):
            family, setting = meta.get(var, ("bm25s", {"tokenizer": "bm25s", "stop_words": "en",
                                                       "stem": var}))
            row = {"split": split, "style": style, "family": family, "setting": var,
                   "tokenizer": setting["tokenizer"],
                   "stop_words": setting["stop_words"] or "none",
                   "stem": setting["stem"] or "none", "idf": setting.get("idf", ""),
                   "stem_weight": setting.get("stem_weight", ""),
                   "backoff": bool(setting.get("backoff", False)),
                   "before": before.get(family) == var, "chosen": chosen.get(family) == var,
                   "n": ci[(var, "R@5")][3]}
            for name in METRICS:
                mean, low, high, _ = ci[(var, name)]
                row[name], row[f"{name}_low"], row[f"{name}_high"] = mean, low, high
            rows.append(row)
    return pd.DataFrame(rows)


def paired(qm: pd.DataFrame, a: str, b: str, what: str) -> pd.DataFrame:
    rows = []
    n_styles = max(1, qm["style"].nunique())
    for style, g in qm.groupby("style", sort=False):
        for name, (col, k) in METRICS.items():
            if a == b:  # e.g. the current setting chosen again
                v = float(g.loc[(g["scorer"] == a) & (g["top_k"] == k), col].mean())
                pc = dict(mean_a=v, mean_b=v, diff=0.0, diff_low=0.0, diff_high=0.0,
                          a_wins=0, b_wins=0, family=n_styles, verdict="tie")
            else:  # the family: one comparison per style on each metric
                pc = paired_comparison(g, col, scorers=[a, b], top_k=[k],
                                       family=n_styles).iloc[0]
            rows.append({"comparison": what, "style": style, "metric": name, "a": a, "b": b,
                         **{c: pc[c] for c in ("mean_a", "mean_b", "diff", "diff_low",
                                               "diff_high", "a_wins", "b_wins", "family",
                                               "verdict")}})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="folder for the three CSV tables")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--max-loss-queries", type=float, default=1.0)
    ap.add_argument("--no-bm25s", action="store_true", help="skip the bm25s comparison")
    args = ap.parse_args()
    pd.set_option("display.width", 220, "display.max_columns", 40, "display.max_rows", 500)
    sets = load_sets(args.sets.split(","))
    families = args.families.split(",")
    variants, meta = grid(families)
    if not args.no_bm25s:
        variants.update(BM25S)
    before = {f: label(f, FAMILIES[f][3]) for f in families}

    dev = evaluate_variants(sets, variants, split="dev")
    chosen, rankings = {}, []
    for family in families:
        labels = [v for v in variants if meta.get(v, ("",))[0] == family]
        sub = dev[dev["variant"].isin(labels)]
        qm = pd.DataFrame(dev.attrs["query_metrics"])
        sub.attrs["query_metrics"] = qm[qm["scorer"].isin(labels)].to_dict("list")
        c = choose(sub, before[family], max_loss_queries=args.max_loss_queries)
        chosen[family] = c.variant
        rankings.append(c.ranking.assign(family=family))
        print(f"\n== {family}: dev ranking (rule: best mean of R@5 and Complete@10 losing at "
              f"most {args.max_loss_queries:g} query's worth on any set vs the setting "
              f"before) ==")
        print(c.ranking.head(8).round(4).to_string(index=False))
        print(f"chosen: {c.variant}  (before: {before[family]})")
    test = evaluate_variants(sets, variants, split="test")
    table = pd.concat([intervals(dev, "dev", meta, before, chosen),
                       intervals(test, "test", meta, before, chosen)], ignore_index=True)
    qm = query_metrics(test)
    pairs = []
    for f, r in zip(families, rankings):
        pairs.append(paired(qm, chosen[f], before[f], f"{f}: chosen - before"))
        pairs.append(paired(qm, r["variant"].iloc[0], before[f],
                            f"{f}: best dev score - before"))
        if "backoff" in FAMILIES[f][2]:
            twin = label(f, {**FAMILIES[f][3], "backoff": True})
            pairs.append(paired(qm, twin, before[f], f"{f}: before with backoff - before"))
        pairs.append(paired(qm, chosen[f], label(f, START[f]),
                            f"{f}: chosen - before issue 23"))
    if not args.no_bm25s and "bm25" in families:
        for b in BM25S:
            pairs.append(paired(qm, chosen["bm25"], b, f"bm25 chosen - {b}"))
            pairs.append(paired(qm, before["bm25"], b, f"bm25 before - {b}"))
    pairs = pd.concat(pairs, ignore_index=True)
    ranking = pd.concat(rankings, ignore_index=True)

    show = table[(table["split"] == "test") & (table["before"] | table["chosen"]
                                                | (table["family"] == "bm25s"))]
    print("\n== test: the setting before and the chosen one (95% bootstrap intervals) ==")
    print(show.drop(columns=["tokenizer", "stop_words", "stem", "idf", "stem_weight",
                           "backoff"]).round(3).to_string(index=False))
    print("\n== test: paired differences ==")
    print(pairs.round(3).to_string(index=False))
    if args.out:
        from toolsel.io import write_table
        args.out.mkdir(parents=True, exist_ok=True)
        write_table(table, args.out / "tokenization.csv")
        write_table(pairs, args.out / "tokenization_paired.csv")
        write_table(ranking, args.out / "tokenization_dev_ranking.csv")
        print(f"\nwrote tokenization.csv, tokenization_paired.csv, "
              f"tokenization_dev_ranking.csv to {args.out}")


if __name__ == "__main__":
    main()
