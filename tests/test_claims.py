"""Findings rendered from their tables (toolsel.report.claims), and the claims check.

The fast tests render claims from tiny hand-made tables (ties, one row, no split, all zero,
n=1) and check them with :func:`check_claims` against CSVs written to ``tmp_path``. The slow
tests execute report notebooks with papermill on two data sets (a style registry with its
split removed, and a registry imported from hand-written MCP ``tools/list`` dumps with queries
that have no split) and check every number of every claim against the CSV it cites, and that
no number in a page's displayed prose is left without a claim. The same check on the bundled
data runs in ``tests/test_notebooks.py``, on the one execution of each page there (the
notebook's own defaults, as ``make report`` runs it).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from toolsel.eval.stats import wilson_interval
from toolsel.pages import default_scorer, escape_hatch, misses, overview, recall_vs_payload
from toolsel.report import claims

ROOT = Path(__file__).resolve().parents[1]
MCP = Path(__file__).resolve().parent / "data" / "mcp"


# --------------------------------------------------------------------------------------------
# Wilson intervals, against values computed by hand (z = 1.959964)


@pytest.mark.parametrize("k, n, low, high", [
    (0, 10, 0.0, 0.277533),    # z²/(n+z²) = 3.841459/13.841459
    (10, 10, 0.722467, 1.0),   # n/(n+z²)
    (5, 10, 0.236593, 0.763407),
    (1, 1, 0.206549, 1.0),     # 1/(1+z²)
    (0, 1, 0.0, 0.793451),
    (3, 5, 0.230724, 0.882379),  # centre 0.556551, half-width 0.325828
])
def test_wilson_interval_matches_hand_computed_values(k, n, low, high):
    lo, hi = wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=1e-6) and hi == pytest.approx(high, abs=1e-6)


def test_wilson_interval_edges():
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    lo, hi = wilson_interval(0, 3)
    assert lo == 0.0 and 0 < hi < 1  # a rate of 0 is not "0% [0, 0]"
    with pytest.raises(ValueError, match="successes <= n"):
        wilson_interval(4, 3)
    with pytest.raises(TypeError):
        wilson_interval(True, 3)
    # a wider level gives a wider interval
    assert wilson_interval(3, 10, 0.99)[1] > wilson_interval(3, 10)[1]


def test_clustered_bootstrap_resamples_whole_groups():
    from toolsel.eval.stats import mean_intervals
    # two conversations: one all 1s (4 turns), one all 0s (4 turns). Resampling turns would
    # give intervals near 0.5 +- 0.35; resampling conversations can only give 0, 0.5 or 1.
    qm = pd.DataFrame({"scorer": "s", "top_k": 0, "query_id": [f"t{i}" for i in range(8)],
                       "conv": ["a"] * 4 + ["b"] * 4, "m": [1.0] * 4 + [0.0] * 4})
    ci = mean_intervals(qm, ["m"], cluster="conv", n_boot=500).iloc[0]
    assert ci["low"] == 0.0 and ci["high"] == 1.0 and ci["mean"] == 0.5
    assert ci["method"] == "bootstrap"
    plain = mean_intervals(qm, ["m"], n_boot=500).iloc[0]  # 4 of 8, independent: Wilson's
    assert plain["method"] == "wilson" and 0 < plain["low"] < 0.5 < plain["high"] < 1
    with pytest.raises(KeyError, match="cluster"):
        mean_intervals(qm, ["m"], cluster="nope")


def test_unclustered_bootstrap_unchanged_by_the_cluster_code():
    from toolsel.eval.stats import mean_intervals
    qm = pd.DataFrame({"scorer": "s", "top_k": 0, "query_id": list("abcde"),
                       "m": [1.0, 0.5, 1.0, float("nan"), 0.0]})
    a = mean_intervals(qm, ["m"], n_boot=300, seed=3)
    b = mean_intervals(qm.assign(c=qm["query_id"]), ["m"], n_boot=300, seed=3, cluster="c")
    pd.testing.assert_frame_equal(a, b)


# --------------------------------------------------------------------------------------------
# claims on tiny tables


def _write(tmp_path: Path, name: str, df: pd.DataFrame) -> None:
    df.to_csv(tmp_path / name, index=False, float_format="%.6f")


def _log(tmp_path: Path, *items) -> list[str]:
    log = claims.ClaimLog(tmp_path)
    for c in items:
        log.add(c)
    return claims.check_claims(tmp_path)


def test_leader_names_the_winner_and_its_margin(tmp_path):
    t = pd.DataFrame({"scorer": ["a", "b", "c"], "R@k": [0.5, 0.625, 0.6]})
    _write(tmp_path, "s.csv", t)
    c = overview.leader(t, "R@k", "s.csv")
    assert c.text == "b has the highest R@k (62.5%), 2.5 points above c (60.0%)."
    assert _log(tmp_path, c) == []


def test_leader_ties_single_row_and_all_equal(tmp_path):
    tie = pd.DataFrame({"scorer": ["a", "b", "c"], "R@k": [0.6, 0.6, 0.1]})
    assert overview.leader(tie, "R@k", "s.csv").text.startswith("a and b share the highest R@k")
    one = pd.DataFrame({"scorer": ["bm25"], "R@k": [0.0]})
    assert overview.leader(one, "R@k", "s.csv").text == "Only bm25 was run: R@k 0.0%."
    zero = pd.DataFrame({"scorer": ["a", "b"], "R@k": [0.0, 0.0]})
    assert overview.leader(zero, "R@k", "s.csv").text == "Every scorer has the same R@k: 0.0%."
    _write(tmp_path, "s.csv", zero)
    assert _log(tmp_path, overview.leader(zero, "R@k", "s.csv")) == []


def test_one_request_from_the_actual_n(tmp_path):
    _write(tmp_path, "d.csv", pd.DataFrame({"n_queries": [16]}))
    c = claims.one_request(16, "d.csv")
    assert c.text == "With 16 requests, one request moves a rate by 6.2 points."
    assert _log(tmp_path, c) == []
    assert "0 or 100%" in claims.one_request(1, "d.csv").text
    assert claims.one_request(0, "d.csv").text == "No requests: no rate."


def test_in_sample_words():
    split = claims.in_sample_words(True)
    assert split["heading"] == "test requests, settings chosen on dev"
    none = claims.in_sample_words(False)
    assert none["heading"] == "in-sample: settings chosen and measured on the same requests"
    assert "dev" not in none["heading"] and "test" not in none["heading"]


def test_mode_summary_ties_zero_modes_and_all_zero(tmp_path):
    counts = pd.DataFrame({"scorer": ["jaccard", "bm25", "tfidf"],
                           "same-domain confusion": [3, 3, 3], "vocabulary gap": [2, 1, 1],
                           "other": [0, 0, 0], "total": [5, 4, 4]}).set_index("scorer")
    counts.to_csv(tmp_path / "m.csv")
    c = misses.mode_summary(counts, "m.csv")
    # the user table: 3 same-domain confusions for every lexical scorer
    assert "3 with jaccard, 3 with bm25, 3 with tfidf (the same for every scorer)" in c.text
    assert "(fewest: bm25 and tfidf)" in c.text
    assert "No scorer has a miss of kind other." in c.text
    assert "remove" not in c.text
    assert _log(tmp_path, c) == []
    zero = counts * 0
    assert misses.mode_summary(zero, "m.csv", k=10).text == \
        "No scorer missed a required tool at K=10."


def test_change_says_leaving_when_nothing_moved(tmp_path):
    _write(tmp_path, "h.csv", pd.DataFrame({"scorer": ["j"], "a": [0.5], "b": [0.5]}))
    r1, r2 = claims.Ref("h.csv", "a", {"scorer": "j"}), claims.Ref("h.csv", "b", {"scorer": "j"})
    assert escape_hatch.change(0.5, 0.5, "Complete@10", "h.csv", r1, r2).text == \
        "leaving Complete@10 at 50%"
    assert escape_hatch.change(0.5, 0.625, "C", "h.csv", r1, r2).text == "raising C from 50% to 62%"
    assert escape_hatch.change(0.5, 0.25, "C", "h.csv", r1, r2).text.startswith("lowering C")


def test_verdict_label_is_the_one_rule():
    from toolsel.eval.inference import verdict
    # an interval reaching zero is a tie, whatever the mean (the page once said "ahead on
    # the mean; interval reaches zero")
    assert default_scorer.verdict_label(verdict(0.0, 0.099)) == "tie (interval includes zero)"
    assert default_scorer.verdict_label(verdict(0.01, 0.1)) == "ahead (interval above zero)"
    assert default_scorer.verdict_label(verdict(-0.1, -0.01)) == "behind (interval below zero)"
    assert default_scorer.verdict_label(verdict(-0.03, 0.07)) == "tie (interval includes zero)"


def _vs(rows):
    return pd.DataFrame(rows, columns=["style", "metric", "best_single", "best_mean",
                                       "candidate", "candidate_mean", "diff", "diff_low",
                                       "diff_high", "matches"])


def test_versus_best_and_rows(tmp_path):
    vs = _vs([["api", "R@5", "embedding", 0.9, "default", 0.95, 0.05, 0.01, 0.1, True],
              ["api", "MRR", "embedding", 0.88, "default", 0.86, -0.02, -0.05, 0.01, True]])
    _write(tmp_path, "v.csv", vs)
    c = default_scorer.versus_best(vs, "v.csv")
    assert "below the best single scorer on api MRR (-0.020 against embedding)" in c.text
    assert "it is ahead on api R@5; behind nowhere; it ties everywhere else" in c.text
    r = default_scorer.versus_rows(vs, "v.csv", style="api")
    assert "R@5 0.950 vs embedding 0.900, +0.050 [+0.010, +0.100]: ahead" in r.text
    assert "MRR 0.860 vs embedding 0.880, -0.020 [-0.050, +0.010]: tie" in r.text
    assert _log(tmp_path, c, r) == []


def test_variant_vs_reports_every_metric_mrr_included(tmp_path):
    # the issue: "at least as well on every style" held for R@5 and Complete@10, not MRR
    t = pd.DataFrame({"style": ["plugin", "plugin", "market", "market"],
                      "scorer": ["default", "apart"] * 2, "R@5": [0.9, 0.8, 0.9, 0.9],
                      "Complete@10": [1.0, 1.0, 0.9, 0.8], "MRR": [0.852, 0.863, 0.8, 0.7]})
    _write(tmp_path, "a.csv", t)
    c = default_scorer.variant_vs(t, "default", "apart", "a.csv")
    assert "at least as well on R@5 and Complete@10 on every style" in c.text
    assert "on MRR lower on plugin (0.852 vs 0.863)" in c.text
    s = default_scorer.signal_alone(t.replace({"apart": "embedding only"}), "a.csv")
    assert "on plugin (embedding only: MRR 0.863 vs 0.852)" in s.text
    assert "plugin the embedding signal alone the" not in s.text
    _write(tmp_path, "a.csv", t.replace({"apart": "embedding only"}))
    assert _log(tmp_path, s) == []


def test_policy_verdict_counts_styles_and_says_in_sample(tmp_path):
    from toolsel.pages.selection_policies import verdict_sentence
    sv = pd.DataFrame({"style": ["plugin", "market", "openapi"],
                       "beats_top_k": [True, False, True], "ties_top_k": [False, True, False]})
    pv = pd.DataFrame({"style": ["plugin", "market", "openapi"] * 2,
                       "policy": ["threshold"] * 3 + ["two_stage"] * 3,
                       "beats": [True, False, True, True, False, True],
                       "dominates": [True, True, True, True, False, True]})
    _write(tmp_path, "sv.csv", sv)
    _write(tmp_path, "pv.csv", pv)
    c = verdict_sentence(sv, pv, in_sample=False, source="sv.csv", policy_source="pv.csv")
    assert "**2 of 3** styles" in c.text and "a policy only ties it on 1" in c.text
    assert "<code>two_stage</code> beats it on 2, dominates a top-K point on 2 (beats it on " \
           "plugin, openapi)" in c.text  # not market
    assert "held-out" not in c.text
    one = verdict_sentence(sv.head(1), pv.head(1), in_sample=True, source="sv.csv",
                           policy_source="pv.csv")
    assert "**beats** it on this style" in one.text and "not a held-out result" in one.text
    assert "of 1" not in one.text
    assert _log(tmp_path, c) == []


def test_benchmark_counts_leave_out_what_the_data_lacks(tmp_path):
    facts = pd.DataFrame([{"n_queries": 16, "n_query_domains": 0, "n_direct": 0,
                           "n_indirect": 0, "n_phrased": 0, "n_multi_tool": 1}])
    _write(tmp_path, "d.csv", facts)
    c = overview.benchmark_counts(facts, "d.csv")
    assert c.text == "**16 labeled queries**; 1 need several tools."
    assert "0 domains" not in c.text and "0 direct" not in c.text
    assert _log(tmp_path, c) == []


def _gap(metric, scorer, n, ms, mr, gap, low, high, rw, sw, family, far, style=None):
    from toolsel.eval.inference import family_level, verdict
    row = {"metric": metric, "scorer": scorer, "reference": "default", "n": n,
           "mean_scorer": ms, "mean_reference": mr, "gap": gap, "gap_low": low,
           "gap_high": high, "reference_wins": rw, "scorer_wins": sw, "family": family,
           "level": family_level(family), "verdict": verdict(low, high),
           "margin": 0.1, "alpha": 0.05, "far": far}
    return {"style": style, **row} if style else row


def test_scorer_gap_warning_names_the_far_scorers_and_cites_every_number(tmp_path):
    gaps = pd.DataFrame([
        _gap("R@5", "jaccard", 40, 0.25, 0.75, 0.5, 0.35, 0.65, 20, 0, 10, True),
        _gap("Complete@10", "jaccard", 40, 0.3, 0.8, 0.5, 0.325, 0.65, 20, 0, 10, True),
        _gap("R@5", "bm25", 40, 0.7, 0.75, 0.05, 0.0, 0.1, 2, 0, 10, False),
        _gap("Complete@10", "bm25", 40, 0.8, 0.8, 0.0, 0.0, 0.0, 0, 0, 10, False)])
    _write(tmp_path, "g.csv", gaps)
    c = overview.scorer_gap_warning(gaps, "g.csv", unit="query")
    assert c.text.startswith("**Warning:** On these 40 labeled queries, <code>jaccard</code> is "
                             "far below <code>default</code>: <code>jaccard</code> R@5 0.250 vs "
                             "0.750 (gap 0.500 [0.350, 0.650]; 20 queries better with")
    assert "bm25" not in c.text  # not far: not named
    assert "a gap of 0.10 or more" in c.text and "lies above zero" in c.text
    assert "each at 99.5%, Bonferroni over 10" in c.text and "p =" not in c.text
    card = overview.scorer_gap_card(gaps)
    assert card.text == ("Warning: <code>jaccard</code> is far below <code>default</code> on "
                         "this labeled data.")
    assert _log(tmp_path, c, card) == []
    # every number cited: change one cell and the check names it
    _write(tmp_path, "g.csv", gaps.assign(gap_low=[0.36, 0.325, 0.0, 0.0]))
    assert any("g.csv gives 0.36" in p for p in claims.check_claims(tmp_path))


@pytest.mark.parametrize("row, says", [
    # a large gap on a few requests: the interval reaches zero
    (("R@5", "tfidf", 8, 0.5, 0.625, 0.125, 0.0, 0.375, 2, 1, 1, False),
     "is 0.125 [0.000, 0.375]: its interval reaches zero, so these requests cannot tell"),
    # a sure but small gap
    (("R@5", "tfidf", 80, 0.925, 1.0, 0.075, 0.025, 0.125, 6, 0, 1, False),
     "is 0.075 [0.025, 0.125]: under the margin."),
    # every scorer at or above the reference
    (("R@5", "tfidf", 20, 0.9, 0.8, -0.1, -0.2, 0.0, 0, 2, 1, False),
     "Every scorer is at or above <code>default</code> on the mean."),
])
def test_scorer_gap_warning_says_nothing_false_where_no_scorer_is_far(tmp_path, row, says):
    gaps = pd.DataFrame([_gap(*row)])
    _write(tmp_path, "g.csv", gaps)
    c = overview.scorer_gap_warning(gaps, "g.csv")
    assert "no single scorer is shown far below <code>default</code>" in c.text
    assert "Warning" not in c.text and says in c.text, c.text
    assert overview.scorer_gap_card(gaps) is None
    assert _log(tmp_path, c) == []


def test_scorer_gap_warning_with_nothing_to_rank(tmp_path):
    nan = float("nan")  # every required tool always included: no request left to compare
    gaps = pd.DataFrame([_gap("R@5", "bm25", 0, nan, nan, nan, nan, nan, 0, 0, 1, False)])
    _write(tmp_path, "g.csv", gaps)
    c = overview.scorer_gap_warning(gaps, "g.csv")
    assert c.text == ("On these 0 labeled requests, no request has a required tool left to "
                      "rank: nothing to compare.")
    assert overview.scorer_gap_card(gaps) is None and _log(tmp_path, c) == []


def test_scorer_gap_warning_per_style(tmp_path):
    gaps = pd.DataFrame([
        _gap("R@5", "embedding", 65, 0.6, 0.75, 0.15, 0.06, 0.19, 30, 6, 10, True, "openapi"),
        _gap("R@5", "embedding", 54, 0.9, 0.92, 0.02, -0.02, 0.05, 3, 2, 10, False, "api")])
    _write(tmp_path, "g.csv", gaps)
    c = overview.scorer_gap_warning(gaps, "g.csv", by="style")
    first, second = c.text.split("\n\n")
    assert first.startswith("**Warning:** On openapi (65 labeled requests), <code>embedding</code>")
    assert second.startswith("On api (54 labeled requests), no single scorer is shown far")
    assert "a gap of 0.10" not in second  # the rule is said once
    assert overview.scorer_gap_card(gaps, by="style").text == (
        "Warning: a single scorer is far below <code>default</code> on openapi (named on the "
        "page).")
    assert _log(tmp_path, c) == []


def test_real_differences_counts_the_pairs(tmp_path):
    from itertools import combinations
    far = ("s0", "s4")
    pairs = [dict(top_k=10, a=a, b=b, diff=0.1 if (a, b) == far else 0.0,
                  diff_low=0.02 if (a, b) == far else -0.05, diff_high=0.18 if (a, b) == far
                  else 0.05, family=10, verdict="ahead" if (a, b) == far else "tie")
             for a, b in combinations([f"s{i}" for i in range(5)], 2)]
    paired = pd.DataFrame(pairs)
    _write(tmp_path, "p.csv", paired)
    _write(tmp_path, "s.csv", pd.DataFrame({"n_queries": [30]}))
    c = recall_vs_payload.real_differences(paired, "p.csv", n_queries=30, n_source="s.csv")
    assert "With the 10 pairs of scorers" in c.text  # not "six"
    assert "s0 ahead of s4 (+10.0 points [+2.0, +18.0])" in c.text
    # "every other pair" is counted from the rule: the 9 ties
    assert "The other 9 of the 10 comparisons tie" in c.text
    assert _log(tmp_path, c) == []
    none = recall_vs_payload.real_differences(paired.assign(verdict="tie"), "p.csv",
                                              n_queries=30, n_source="s.csv")
    assert "every pair ties" in none.text


def test_check_claims_catches_a_wrong_number_and_a_number_without_source(tmp_path):
    t = pd.DataFrame({"scorer": ["a", "b"], "R@k": [0.5, 0.6]})
    _write(tmp_path, "s.csv", t)
    c = overview.leader(t, "R@k", "s.csv")
    log = claims.ClaimLog(tmp_path)
    log.add(c)
    log.add(claims.Claim("Bm25 wins by 13 points."))  # typed, not computed: no source
    assert claims.check_claims(tmp_path) == [
        f"{tmp_path.name}: '13' in 'Bm25 wins by 13 points.' has no source"]
    _write(tmp_path, "s.csv", t.assign(**{"R@k": [0.5, 0.7]}))  # the table moved
    problems = claims.check_claims(tmp_path)
    assert any("s.csv gives 0.7" in p for p in problems)


def test_fill_reads_values_and_aggregates_and_the_check_reads_them_back(tmp_path):
    noise = pd.DataFrame({"scorer": ["a", "b", "a", "b"], "limit": [1, 1, 10, 10],
                          "R@n": [0.27, 0.53, 0.4, 0.78], "tokens": [177.0, 250.0, 747.0, 1234.0],
                          "ok": [True, False, True, float("nan")]})
    _write(tmp_path, "n.csv", noise)
    c = claims.fill(noise, "n.csv", "from {a}–{b} at n=1, {t} tokens, {k} true",
                    where={"limit": 1}, a=("R@n", "min", "pct", 0), b=("R@n", "max", "pct", 0),
                    t=("tokens", "sum", "dec", 0), k=("ok", "count_true"))
    assert c.text == "from 27%–53% at n=1, 427 tokens, 1 true"
    # an empty cell is not true: NaN counted as the check counts it
    assert claims.fill(noise, "n.csv", "{k}", k=("ok", "count_true")).text == "2"
    one = claims.fill(noise, "n.csv", "{v}", where={"limit": 10, "scorer": "b"},
                      v=("tokens", "value", "dec", 0))
    assert one.text == "1,234"
    with pytest.raises(ValueError, match="2 rows match"):
        claims.fill(noise, "n.csv", "{v}", where={"limit": 10}, v="tokens")
    assert _log(tmp_path, c, one) == []
    _write(tmp_path, "n.csv", noise.assign(tokens=[177.0, 251.0, 747.0, 1234.0]))
    assert any("n.csv gives" in p for p in claims.check_claims(tmp_path))


def test_per_row_and_signed_percent(tmp_path):
    t = pd.DataFrame({"strategy": ["eager", "filtered"], "extra": [0.0, 0.0712],
                      "tokens": [268218, 100302]})
    _write(tmp_path, "t.csv", t)
    c = claims.per_row(t, "t.csv", "{key} {n} tokens ({x})", by="strategy", sep="; ",
                       n="tokens", x=("extra", "spct", 0))
    assert c.text == "eager 268,218 tokens (+0%); filtered 100,302 tokens (+7%)"
    assert _log(tmp_path, c) == []


def test_literal_and_prefix_text():
    c = claims.literal("Measured on: {m}.", m="python 3.11 <x>")
    assert c.text == "Measured on: python 3\\.11 &lt;x&gt;." and c.numbers == []
    assert claims.numbers_in(c.text, c.literals) == []
    t = pd.DataFrame({"n": [3]})
    assert ("**A:** " + claims.counts(t, "t.csv", "{n} runs", n="n")).text == "**A:** 3 runs"
    with pytest.raises(ValueError, match="needs their sources"):
        "12 typed " + claims.counts(t, "t.csv", "{n} runs", n="n")


def test_numbers_in_skips_names_code_and_quoted_data():
    assert claims.numbers_in("At K=10 R@5 is 62.5%, `cl100k_base` 3 tools") == ["62.5%", "3"]
    assert claims.numbers_in('the query "what\'s 340 divided by 12" failed 2 times') == ["2"]
    assert claims.numbers_in("see [a.csv](x/2.csv), +3.5 and −1") == ["+3.5", "−1"]


def test_plural():
    assert claims.plural(1, "tool") == "1 tool" and claims.plural(2, "tool") == "2 tools"
    assert claims.plural(0, "query", "queries") == "0 queries"


# --------------------------------------------------------------------------------------------
# executed pages on three data sets (papermill)


def _run(nb: str, out: Path, params: dict) -> tuple[Path, Path]:
    import papermill as pm
    src = ROOT / "notebooks" / f"{nb}.ipynb"
    page = out / nb
    executed = out / f"{nb}.ipynb"
    out.mkdir(parents=True, exist_ok=True)
    pm.execute_notebook(str(src), str(executed), parameters={"out_dir": str(page), **params},
                        kernel_name="python3", cwd=str(ROOT / "notebooks"), progress_bar=False)
    return executed, page


def _shown(executed: Path) -> str:
    nb = json.loads(executed.read_text(encoding="utf-8"))
    return "\n".join("".join(o["data"]["text/markdown"]) for c in nb["cells"]
                     for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))


# --------------------------------------------------------------------------------------------
# the prose test: on data other than the bundled data, no sentence of a page names what only
# the bundled data has (the skip reasons are gathered once, in the report's README)

#: What only the bundled data (the article's registry and queries) has, by a regex each.
BUNDLED_ONLY = {
    "the bundled registry's 61 tools": r"\b61(?:-tool\b| tools\b)",
    "the bundled 30 queries": r"\b30(?:-query\b| (?:labeled )?quer(?:y|ies)\b)",
    "the article's payload (5,523 characters)": r"\b5,?523\b",
    "the article's 67% recall / 84% reduction": r"\b67% recall|\b84% payload",
    "the article's +13 points": r"\+13 points",
    "the article's tool weather_lookup": r"weather_lookup",
}
#: What only data with a dev/test split can say.
SPLIT_ONLY = {
    "dev or test requests": r"\b(?:dev|test) (?:requests?|split|set)\b",
    "on dev / on test": r"\b[Oo]n (?:the )?(?:dev|test)\b(?! ?-)",
    "a held-back set": r"\bheld[- ]back (?:requests?|split|test|sets?)\b",
    "`dev` / `test` named": r"`(?:dev|test)`",
    "a heading about dev vs test": r"^#+ .*\b(?:[Dd]ev|[Tt]est)\b",
}


def page_prose(executed: Path) -> list[str]:
    """Every piece of prose a page shows: its Markdown cells and the Markdown its code
    displayed (tables included: a table may name a tool too)."""
    nb = json.loads(executed.read_text(encoding="utf-8"))
    out = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
           for c in nb["cells"] if c["cell_type"] == "markdown"]
    return out + claims._displayed_markdown(nb)


def bundled_only_sentences(texts: list[str], *, has_split: bool) -> list[str]:
    """The sentences (lines outside tables) of ``texts`` naming what only the bundled data
    (or, without a split, only a split) has: ``"<what>: <line>"`` each; an empty list when
    none does. Table rows are data (a committed benchmark's columns, a user's own tool named
    like the article's), not sentences."""
    import re
    rules = dict(BUNDLED_ONLY, **({} if has_split else SPLIT_ONLY))
    found = []
    for text in texts:
        for line in text.splitlines():
            if line.lstrip().startswith("|"):
                continue
            for what, pattern in rules.items():
                if re.search(pattern, line):
                    found.append(f"{what}: {line.strip()[:160]}")
    return found


def test_the_prose_check_finds_bundled_only_sentences_on_the_committed_bundled_pages():
    """The detector is not blind: the committed bundled report names the 61 tools, the 30
    queries, the article's numbers and weather_lookup, and its dev and test requests."""
    texts = [t for nb in ("00_overview", "01_recall_vs_payload", "03_escape_hatch",
                          "07_discovery", "09_description_repair")
             for t in page_prose(ROOT / "reports" / f"{nb}.ipynb")]
    found = bundled_only_sentences(texts, has_split=False)
    for what in [*BUNDLED_ONLY, "dev or test requests", "a heading about dev vs test"]:
        assert any(f.startswith(what + ":") for f in found), what
    # and it reads lines, not words inside other words or numbers
    assert bundled_only_sentences(["161 tools, 300 queries, 15,523 chars, latest, devices"],
                                  has_split=False) == []
    assert bundled_only_sentences(["## Dev vs test"], has_split=True) == []


def _assert_page(executed: Path, page: Path, *, bundled: bool, has_split: bool) -> None:
    problems = claims.check_claims(page) + claims.uncovered_numbers(executed, page)
    assert not problems, "\n".join(problems)
    recorded = json.loads((page / claims.CLAIMS_FILE).read_text())["claims"]
    assert recorded
    fixed = [c["text"][:80] for c in recorded if c.get("fixed")]
    if not bundled:  # text about the bundled data never shows on other data
        assert not fixed, fixed
        # page 12 makes a seeded split of a file without one, and says so (checked below)
        found = bundled_only_sentences(page_prose(executed),
                                       has_split=has_split or page.name == "12_selection_policies")
        assert not found, "\n".join(found)
    shown = _shown(executed)
    if page.name in ("00_overview", "06_default_scorer"):  # the single-scorer check ran, and
        # its sentence (warning or not) is on the page, every number cited above
        gaps = pd.read_csv(page / "scorer_gaps.csv")
        assert ("**Warning:**" in shown) == bool(gaps["far"].any())
        assert "far below <code>default</code>" in shown
    if not has_split and page.name == "12_selection_policies":
        # no split in the file: the page makes a seeded one and says so (chosen on dev)
        assert "seeded split" in shown and "in-sample" not in shown.lower()
        sizes = pd.read_csv(page / "sizes.csv")
        assert sizes["split"].str.startswith("seeded").all()
    elif not has_split:  # no split: no dev/test words, and the in-sample caveat is said
        for words in ("test requests, settings chosen on dev", "on the test requests",
                      "dev requests"):
            assert words not in shown, words
        if page.name == "06_default_scorer":
            assert "in-sample" in shown.lower()


def _nosplit_style(tmp: Path) -> dict:
    src = ROOT / "data" / "styles" / "plugin"
    dst = tmp / "plugin_nosplit"
    dst.mkdir()
    shutil.copy(src / "registry.json", dst / "registry.json")
    with open(src / "queries.jsonl") as f, open(dst / "queries.jsonl", "w") as g:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                rec.pop("split", None)
                g.write(json.dumps(rec) + "\n")
    return {"registry": str(dst / "registry.json"), "queries": str(dst / "queries.jsonl")}


def _mcp(tmp: Path) -> dict:
    """The MCP ``tools/list`` dumps of tests/data/mcp imported as a user does, with
    ``toolsel import``, and their hand-labeled requests (no split)."""
    from toolsel.cli import main
    path = tmp / "mcp_registry.json"
    assert main(["import", "--from", "mcp", *map(str, sorted(MCP.glob("*.json"))),
                 "--out", str(path)]) == 0
    return {"registry": str(path), "queries": str(MCP / "queries.jsonl")}


DATASETS = {"bundled": lambda tmp: {}, "style_nosplit": _nosplit_style, "mcp": _mcp}
# the bundled data is checked in tests/test_notebooks.py, on the run that checks the tables
CHECKED_ELSEWHERE = {"bundled"}
# the pages whose every finding is rendered by toolsel.report.claims
PAGES = ["00_overview", "01_recall_vs_payload", "02_misses", "03_escape_hatch", "04_explorer",
         "05_scale_benchmark", "06_default_scorer", "07_discovery", "08_conversations",
         "09_description_repair", "10_integrations", "11_recorded_runs",
         "12_selection_policies", "13_labels"]
# what the other data sets give: a registry and labeled queries (also usable as --requests)
_GIVEN = {"registry", "queries", "requests"}


def _runs_on(nb: str, dataset: str) -> bool:
    """Whether the report runs ``nb`` on ``dataset``: the bundled data always; another data
    set when it satisfies the notebook's ``toolsel.needs`` (08 needs conversations, 11 runs,
    10 reports on the project's own data only)."""
    from toolsel.report.plan import notebook_needs
    if dataset == "bundled":
        return True
    needs = notebook_needs(ROOT / "notebooks" / f"{nb}.ipynb")
    return bool(needs) and set(needs) <= _GIVEN


def _params(nb: str, data: dict) -> dict:
    """The data set's files as the notebook's parameters, as ``toolsel report`` passes them
    (the queries file given as ``requests`` too, to a notebook that reads requests)."""
    from toolsel.report.plan import notebook_parameters
    if not data:
        return {}
    declared = notebook_parameters(ROOT / "notebooks" / f"{nb}.ipynb")
    out = {k: v for k, v in data.items() if k in declared}
    if "requests" in declared:
        out["requests"] = data["queries"]
    if "user_timed" in declared:  # 05's timing of the given registry: fewer calls suffice
        out["user_timed"] = 20
    return out


ALL_CASES = [(nb, ds) for nb in PAGES for ds in DATASETS if _runs_on(nb, ds)]
CASES = [pytest.param(nb, ds, id=f"{nb}-{ds}") for nb, ds in ALL_CASES
         if ds not in CHECKED_ELSEWHERE]


@pytest.mark.slow
@pytest.mark.parametrize("nb, dataset", CASES)
def test_every_number_on_the_page_comes_from_its_tables(nb, dataset, tmp_path):
    params = _params(nb, DATASETS[dataset](tmp_path))
    executed, page = _run(nb, tmp_path / "out", params)
    _assert_page(executed, page, bundled=dataset == "bundled", has_split=dataset == "bundled")


def test_pages_run_where_their_needs_are_met():
    """The slow cases: every page on the bundled data (in tests/test_notebooks.py, which
    runs every notebook); on the other two data sets (a registry and queries) every page
    except those needing conversations or runs, or reporting on the project's own data only."""
    from test_notebooks import IDS, _claim_pages
    others = {nb for nb, ds in ALL_CASES if ds == "mcp"}
    assert {"08_conversations", "10_integrations", "11_recorded_runs"}.isdisjoint(others)
    assert {"04_explorer", "05_scale_benchmark", "07_discovery",
            "09_description_repair"} <= others
    assert sum(ds == "bundled" for _, ds in ALL_CASES) == len(PAGES)
    assert [p.stem for p in _claim_pages()] == PAGES and set(PAGES) <= set(IDS)
    assert {ds for _, ds in ALL_CASES} - CHECKED_ELSEWHERE == {"style_nosplit", "mcp"}
    assert {c.values[1] for c in CASES} == {"style_nosplit", "mcp"}


def _check_block(block: str, found: list) -> None:
    prose = "\n".join(ln for ln in block.splitlines() if not ln.startswith("|"))
    for c in found:
        assert c.text in prose
        prose = prose.replace(c.text, " ")
    assert claims.numbers_in(prose) == [], prose  # no number outside a claim
    problems = []
    for c in found:
        shown = [t for n in c.numbers for t in claims.numbers_in(n.text)]
        for tok in claims.numbers_in(c.text, c.literals):
            if tok.lstrip("+") not in [t.lstrip("+") for t in shown]:
                problems.append(f"{tok} in {c.text!r} has no source")
        for n in c.numbers:
            truth = claims._eval(claims._ref_dict(n.ref), ROOT)
            if not math.isclose(truth, n.value, rel_tol=1e-5, abs_tol=2e-6):
                problems.append(f"{n.text} in {c.text!r}: the table says {truth}")
    assert not problems, "\n".join(problems)


def test_readme_generated_blocks_match_the_committed_tables():
    """Every number of the generated blocks of docs/scorers.md ("Which scorer?" verdicts, which policy
    beats top-K, which embedding model) is read from the committed table it cites."""
    from toolsel.pages.which_scorer import (EMBEDDING_MARKERS, POLICY_MARKERS, README_MARKERS,
                                             SCORER_PAGE, relink,
                                             which_embedding_from_reports,
                                             which_policy_from_reports, which_scorer_claims)

    text = (ROOT / SCORER_PAGE).read_text(encoding="utf-8")
    for (start, end), (rendered, found) in ((README_MARKERS, which_scorer_claims(ROOT)),
                                            (POLICY_MARKERS, which_policy_from_reports(ROOT)),
                                            (EMBEDDING_MARKERS,
                                             which_embedding_from_reports(ROOT))):
        block = text.split(start, 1)[1].split(end, 1)[0].strip()
        assert block == relink(rendered, SCORER_PAGE).strip()
        assert found
        _check_block(rendered.strip(), found)  # the page's block is this with its links relinked
    # the per-policy count is the paired-interval "beats", not "dominates on the means"
    policy = which_policy_from_reports(ROOT)[0]
    verdict = pd.read_csv(ROOT / "reports/12_selection_policies/policy_verdict.csv")
    won = list(verdict[(verdict.policy == "two_stage") & verdict.beats]["style"])
    assert ("<code>two_stage</code> beats it on " + str(len(won))) in policy


def test_which_embedding_block_from_hand_made_tables(tmp_path):
    from toolsel.pages.which_scorer import which_embedding_markdown
    cols = ["model", "package", "scorer", "ms_per_query_4000", "api R@5", "api Complete@10"]
    t = pd.DataFrame([["ref", "p0", "embedding", 10.0, 0.9, 0.8],
                      ["ref", "p0", "default", 12.0, 0.95, 0.9],
                      ["a", "p1", "embedding", 20.0, 0.95, 0.8],
                      ["a", "p1", "default", 30.0, 0.9, 0.7],
                      ["b", "p2", "embedding", 1.0, 0.9, 0.8],
                      ["b", "p2", "default", 2.0, 0.95, 0.9],
                      ["gone", "p3", "embedding", None, None, None]], columns=cols)
    _write(tmp_path, "m.csv", t)
    text, found = which_embedding_markdown({"m.csv": t, "other.csv": t[t.model != "ref"]},
                                           reference="ref")
    a, b = text.splitlines()  # no line for a model without numbers, nor for a table without ref
    assert ("ahead of <code>ref</code> on <code>embedding</code> api R@5 (0.950 vs 0.900); "
            "level or behind on every other dev cell, by up to 0.200 on <code>default</code> "
            "api Complete@10: 0.700 vs 0.900.") in a
    assert "<code>default</code> with it: 30.00 ms per request at 4,000 tools, against 12.00." in a
    assert "level with <code>ref</code> on every dev cell." in b
    (tmp_path / "claims.json").unlink(missing_ok=True)
    assert _log(tmp_path, *found) == []


def test_a_rate_gets_wilson_and_a_fraction_the_bootstrap():
    from toolsel.eval.stats import mean_intervals
    qm = pd.DataFrame({"scorer": ["s"] * 4 + ["t"] * 4 + ["u"] * 4, "top_k": 1,
                       "query_id": list("abcd") * 3,
                       "R@k": [1.0] * 4 + [0.5] * 4 + [1.0, 0.5, 0.0, 1.0]})
    ci = mean_intervals(qm, ["R@k"]).set_index("scorer")
    # s: every query 1, a rate: 4 of 4's Wilson interval n / (n + z²) = 4 / 7.841459
    assert ci.loc["s", "method"] == "wilson"
    assert ci.loc["s", "low"] == pytest.approx(0.510109, abs=1e-6)
    assert ci.loc["s", "high"] == 1.0
    # t: every query a half, the bootstrap's point; u: a real bootstrap interval
    assert (ci.loc["t", "low"], ci.loc["t", "high"]) == (0.5, 0.5)
    assert ci.loc["u", "method"] == "bootstrap" and ci.loc["u", "low"] < ci.loc["u", "high"]


def test_figures_keep_their_alt_text_in_the_html_page():
    from toolsel.report.html import NO_ALT, fill_image_alt
    nb = {"cells": [{"outputs": [
        {"data": {"image/png": "x"}, "metadata": {"image/png": {"alt": 'R@k "vs" payload'}}},
        {"data": {"image/png": "y"}, "metadata": {}}]}]}
    page = f'<img src="a" alt="{NO_ALT}"/><img src="b" alt="{NO_ALT}"/>'
    assert fill_image_alt(page, nb) == \
        f'<img src="a" alt="R@k &quot;vs&quot; payload"/><img src="b" alt="{NO_ALT}"/>'
    # counts that do not match: left alone rather than mislabelled
    assert fill_image_alt(page[: page.index("<img", 1)], nb) == page[: page.index("<img", 1)]


def test_plurals_of_units():
    from toolsel.report.claims import one_request, plural, plural_form
    assert [plural_form(w) for w in ("tool", "query", "day", "request")] == \
        ["tools", "queries", "days", "requests"]
    assert plural(1, "query") == "1 query" and plural(2, "query") == "2 queries"
    assert "With 112 queries, one query moves" in one_request(
        112, "data.csv", column="n_queries", unit="query", what="R@k").text


def test_readme_explorer_sizes_are_the_benchmark_table():
    """docs/reports.md's explorer page sizes are the committed benchmark's, to the digits shown."""
    import re
    text = " ".join((ROOT / "docs" / "reports.md").read_text(encoding="utf-8").split())
    m = re.search(r"About ([\d.]+) MB on the bundled data; for 4,000 tools × 2,000 queries × 5 "
                  r"scorers, ([\d.]+) MB with each scorer's top 20 candidates and ([\d.]+) MB "
                  r"with its top 30", text)
    assert m, "the README's explorer sizes sentence changed: update this test with it"
    t = pd.read_csv(ROOT / "reports" / "benchmarks" / "explorer.csv")
    bundled = t[t["tools"] == 61]["page_mb"].iloc[0]
    big = t[t["tools"] == 4000].set_index("depth")["page_mb"]
    for shown, value in zip(m.groups(), (bundled, big[20], big[30])):
        assert shown == f"{value:.2f}", (shown, value)


def test_one_always_include_convention_across_02_and_04():
    """A tool's rank is the same on the misses page and the explorer page (the committed
    bundled report): both rank every tool, the registry's always-include ones competing, as
    the sweep and pages 00-03 do."""
    misses = pd.read_csv(ROOT / "reports" / "02_misses" / "misses.csv")
    compared = 0
    for path in sorted((ROOT / "reports" / "04_explorer").glob("ranking_*.csv")):
        scorer = path.stem.removeprefix("ranking_")
        ranking = pd.read_csv(path).set_index("tool")["rank"]
        rows = misses[(misses["scorer"] == scorer)
                      & (misses["query"] == "file a bug report on the backend repo")]
        for r in rows.itertuples():
            assert ranking[r.expected] == r.rank, (scorer, r.expected)
            compared += 1
    assert compared  # jaccard's github_create_issue at least


def test_leader_says_highest_only_when_the_paired_interval_excludes_zero(tmp_path):
    # the case: 92.08% and 91.67% show as 92.1% and 91.7%: a lead of 0.4 as shown
    # (0.5 from the unrounded values), and a paired interval reaching below zero: a tie
    t = pd.DataFrame({"scorer": ["embedding", "default", "bm25"],
                      "R@k": [0.920833, 0.916667, 0.7]})
    paired = pd.DataFrame({"top_k": 10, "a": ["embedding", "embedding", "default"],
                           "b": ["default", "bm25", "bm25"], "diff": [0.004166, 0.22, 0.21],
                           "diff_low": [-0.1, 0.1, 0.1], "diff_high": [0.05, 0.3, 0.3]})
    _write(tmp_path, "s.csv", t)
    _write(tmp_path, "p.csv", paired)
    tie = overview.leader(t, "R@k", "s.csv", label="R@10", paired=paired, paired_source="p.csv",
                        paired_where={"top_k": 10})
    assert tie.text == ("embedding (92.1%) and default (91.7%) tie on R@10: embedding's lead of "
                        "0.4 points on the mean has a paired 95% bootstrap interval of [-10.0, "
                        "+5.0] points, which includes zero (the top two compared, no other "
                        "pair).")
    assert "highest" not in tie.text
    # the pair stored the other way round (b - a): the interval is read back negated
    flipped = paired.assign(a=["default", "embedding", "default"],
                            b=["embedding", "bm25", "bm25"], diff_low=[-0.05, 0.1, 0.1],
                            diff_high=[0.1, 0.3, 0.3])
    _write(tmp_path, "q.csv", flipped)
    again = overview.leader(t, "R@k", "s.csv", label="R@10", paired=flipped,
                          paired_source="q.csv", paired_where={"top_k": 10})
    assert "[-10.0, +5.0]" in again.text
    # an interval above zero: "highest", with the lead as shown
    sure = paired.assign(diff_low=[0.01, 0.1, 0.1])
    _write(tmp_path, "r.csv", sure)
    win = overview.leader(t, "R@k", "s.csv", label="R@10", paired=sure, paired_source="r.csv",
                        paired_where={"top_k": 10})
    assert win.text.startswith("embedding has the highest R@10 (92.1%), 0.4 points above "
                               "default (91.7%); the paired 95% bootstrap interval of that "
                               "lead, [+1.0, +5.0] points, is above zero")
    (tmp_path / claims.CLAIMS_FILE).unlink(missing_ok=True)
    assert _log(tmp_path, tie, again, win) == []
    # the check reads every number back: a moved interval is caught
    _write(tmp_path, "p.csv", paired.assign(diff_low=[-0.2, 0.1, 0.1]))
    assert any("p.csv gives" in p for p in claims.check_claims(tmp_path))


def test_skipped_sections_are_gathered_once_in_the_readme(tmp_path):
    from toolsel.report.readme import _skipped_sections
    for page, section in (("00_x", "the article's scenario"), ("01_y", "the replication")):
        log = claims.ClaimLog(tmp_path / page)
        note = log.skip(section, "it needs the tools weather_lookup")
        assert note == claims.SKIP_NOTE and "weather_lookup" not in note
        log.skip(section, "it needs the tools weather_lookup")  # recorded once
    assert claims.skipped_sections(tmp_path / "00_x") == [
        {"section": "the article's scenario", "reason": "it needs the tools weather_lookup"}]
    lines = _skipped_sections(tmp_path, ["00_x", "01_y", "02_none"])
    assert lines[1] == "## Sections skipped on this data"
    assert sum(ln.startswith("- ") for ln in lines) == 2
    assert _skipped_sections(tmp_path, ["02_none"]) == []  # nothing skipped: no section
