"""Selection policies (toolsel.policies), Selector(policy=...), and their evaluation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from toolsel import Selector, Tool, load_queries, load_registry
from toolsel.eval.policies import (dominates_top_k, best_at_comparable_payload, default_grid,
                                   dev_choice, evaluate_policies, frontier, summarize_policies)
from toolsel.policies import (AdaptiveK, Threshold, TokenBudget, TopK, TwoStage,
                              as_policies, available_policies, get_policy, parse_policy,
                              policy_grid, policy_spec)
from toolsel.ranking import top_k_indices

ROOT = Path(__file__).resolve().parents[1]

# registry order 0..5; ties: 1 and 4 (0.9), 2 and 5 (0.3)
S = np.array([0.1, 0.9, 0.3, 0.2, 0.9, 0.3])


def tools(domains):
    return [Tool(f"t{i}", "a tool", metadata={"domain": d} if d else {})
            for i, d in enumerate(domains)]


# -- TopK --------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, 2, 3, 6, 9])
def test_top_k_equals_top_k_indices(k):
    assert TopK(k).select(S).tolist() == top_k_indices(S, k).tolist()


def test_top_k_equals_top_k_indices_on_random_scores():
    rng = np.random.default_rng(0)
    for _ in range(200):
        s = rng.integers(0, 4, size=12).astype(float)  # many ties
        mask = rng.random(12) < 0.7
        k = int(rng.integers(0, 14))
        assert TopK(k).select(s, mask).tolist() == top_k_indices(s, k, mask).tolist()


def test_top_k_ties_go_to_the_earlier_tool():
    assert TopK(3).select(S).tolist() == [1, 2, 4]  # 0.3 tie: tool 2 before tool 5


# -- Threshold ---------------------------------------------------------------------------------

def test_threshold_sends_everything_at_or_above():
    assert Threshold(0.3, scale="raw").select(S).tolist() == [1, 2, 4, 5]
    assert Threshold(0.9, scale="raw").select(S).tolist() == [1, 4]


def test_threshold_min_and_max_bounds():
    assert Threshold(0.95, min_k=1, scale="raw").select(S).tolist() == [1]  # nobody reaches it
    assert Threshold(0.95, min_k=3, scale="raw").select(S).tolist() == [1, 2, 4]
    assert Threshold(0.0, max_k=3, scale="raw").select(S).tolist() == [1, 2, 4]  # tie 2/5: the earlier
    assert Threshold(0.0, max_k=None, scale="raw").select(S).tolist() == list(range(6))


def test_threshold_respects_candidates_and_nan():
    mask = np.array([True, False, True, True, True, True])
    assert Threshold(0.3, scale="raw").select(S, mask).tolist() == [2, 4, 5]
    s = S.copy()
    s[4] = np.nan  # a failed score ranks last and never passes
    assert Threshold(0.3, scale="raw").select(s).tolist() == [1, 2, 5]


def test_threshold_relative_scale_by_hand():
    # S: mean 0.45, best 0.9 -> relative (s - 0.45) / 0.45 = -0.78, 1, -0.33, -0.56, 1, -0.33
    assert Threshold(0.3).select(S).tolist() == [1, 4]
    assert Threshold(-0.4).select(S).tolist() == [1, 2, 4, 5]
    np.testing.assert_allclose(Threshold().relative(np.sort(S)[::-1]),
                               (np.sort(S)[::-1] - 0.45) / 0.45)
    # the same threshold on scores 100 times larger (an unbounded scorer) selects the same
    assert Threshold(-0.4).select(S * 100).tolist() == [1, 2, 4, 5]
    assert Threshold(0.5, min_k=2).select(np.full(4, 3.0)).tolist() == [0, 1]  # flat: min_k
    with pytest.raises(ValueError, match="scale must be one of"):
        Threshold(0.5, scale="minmax")


# -- AdaptiveK ---------------------------------------------------------------------------------

def test_adaptive_gap_cuts_at_the_largest_drop():
    # sorted: 0.9 0.9 | 0.3 0.3 0.2 0.1: the drop after the 2nd is the largest
    assert AdaptiveK(1, 5).select(S).tolist() == [1, 4]
    s = np.array([1.0, 0.95, 0.9, 0.2, 0.1])
    assert AdaptiveK(1, 4).select(s).tolist() == [0, 1, 2]


def test_adaptive_bounds():
    s = np.array([1.0, 0.98, 0.9, 0.2, 0.1])  # gaps .02, .08, .7, .1
    assert AdaptiveK(1, 4).select(s).tolist() == [0, 1, 2]
    assert AdaptiveK(1, 2).select(s).tolist() == [0, 1]  # max_k caps the cut
    assert AdaptiveK(4, 5).select(s).tolist() == [0, 1, 2, 3]  # min_k floors it
    assert AdaptiveK(3, 10).select(s[:2]).tolist() == [0, 1]  # fewer candidates: all


def test_adaptive_equal_gaps_and_flat_ranking_take_the_smaller_k():
    assert AdaptiveK(1, 5).select(np.array([3.0, 2.0, 1.0, 0.0])).tolist() == [0]
    assert AdaptiveK(2, 5).select(np.zeros(6)).tolist() == [0, 1]
    assert AdaptiveK(2, 5, rule="knee").select(np.zeros(6)).tolist() == [0, 1]


def test_adaptive_knee():
    # sorted [1, .9, .3, .25, .2] (max_k=4 → 5 points); chord 1 → .2: furthest below at the 3rd
    s = np.array([0.2, 1.0, 0.3, 0.25, 0.9, 0.0])
    assert AdaptiveK(1, 4, rule="knee").select(s).tolist() == [1, 2, 4]
    assert AdaptiveK(1, 4, rule="gap").select(s).tolist() == [1, 4]


# -- TokenBudget -------------------------------------------------------------------------------

def test_token_budget_fills_by_score_and_stops_at_the_first_misfit():
    pol = TokenBudget(10).fit(tools([None] * 6), costs=[1, 4, 3, 1, 5, 2])
    # best first: 1 (4), 4 (5) → 9; next 2 (3) would make 12: stop (5 would fit, not slipped in)
    assert pol.select(S).tolist() == [1, 4]
    assert TokenBudget(12).fit(tools([None] * 6), costs=[1, 4, 3, 1, 5, 2]).select(S).tolist() \
        == [1, 2, 4]


def test_token_budget_is_never_exceeded_except_by_the_best_tool():
    costs = np.array([1, 40, 3, 1, 5, 2])
    pol = TokenBudget(10).fit(tools([None] * 6), costs=costs)
    assert pol.select(S).tolist() == [1]  # the best tool alone exceeds it: sent anyway
    assert TokenBudget(10, min_k=0).fit(tools([None] * 6), costs=costs).select(S).tolist() == []
    rng = np.random.default_rng(1)
    for _ in range(100):
        c = rng.integers(1, 20, size=6)
        budget = int(rng.integers(0, 60))
        sent = TokenBudget(budget).fit(tools([None] * 6), costs=c).select(S)
        assert c[sent].sum() <= budget or len(sent) == 1


def test_token_budget_counts_definition_tokens_by_default():
    from toolsel.tokens import definition_tokens
    ts = tools([None] * 3)
    pol = TokenBudget(100).fit(ts)
    assert pol.costs_.tolist() == [definition_tokens(t) for t in ts]
    with pytest.raises(RuntimeError, match="not fitted"):
        TokenBudget(100).select(S)
    with pytest.raises(ValueError, match="costs"):
        TokenBudget(100).fit(ts, costs=[1, 2])


# -- TwoStage ----------------------------------------------------------------------------------

def test_two_stage_picks_servers_then_tools():
    #          a    a    b    b    c    c
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.95, 0.1])
    pol = TwoStage(2, k_per_server=1).fit(tools("aabbcc"))
    assert pol.select(s).tolist() == [0, 4]  # servers c (0.95) and a (0.9): their best tool
    assert TwoStage(2, k=3).fit(tools("aabbcc")).select(s).tolist() == [0, 1, 4]
    # by sum: a 1.7, b 1.3, c 1.05
    assert TwoStage(1, k_per_server=2, by="sum").fit(tools("aabbcc")).select(s).tolist() == [0, 1]


def test_two_stage_ties_and_candidates():
    s = np.array([0.5, 0.5, 0.5, 0.5])
    pol = TwoStage(1, k_per_server=5).fit(tools("abab"))
    assert pol.select(s).tolist() == [0, 2]  # equal servers: the one listed first
    mask = np.array([False, True, False, True])
    assert pol.select(s, mask).tolist() == [1, 3]  # server a has no candidate left
    # a tool without a domain is a server of its own
    assert TwoStage(1, k_per_server=3).fit(tools(["a", None, "a"])).select(
        np.array([0.1, 0.9, 0.2])).tolist() == [1]


# -- errors, names, grids ----------------------------------------------------------------------

@pytest.mark.parametrize("make, match", [
    (lambda: TopK(-1), "k must be"), (lambda: TopK(2.5), "k must be"),
    (lambda: Threshold("high"), "min_score"), (lambda: Threshold(0.5, min_k=5, max_k=2), "max_k"),
    (lambda: AdaptiveK(0, 5), "min_k"), (lambda: AdaptiveK(1, 5, rule="elbow"), "rule"),
    (lambda: TokenBudget(-5), "tokens"), (lambda: TwoStage(2), "exactly one"),
    (lambda: TwoStage(2, 3, k=4), "exactly one"), (lambda: TwoStage(0, k=3), "n_servers"),
    (lambda: TwoStage(2, k=3, by="mean"), "by must"),
    (lambda: get_policy("topk", depth=3), "no parameter"), (lambda: get_policy("nope"), "unknown"),
])
def test_bad_parameters_say_what_is_wrong(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_get_policy_names_aliases_and_grid():
    assert set(available_policies()) == {"top_k", "threshold", "adaptive_k", "token_budget",
                                         "two_stage"}
    assert get_policy("topk", k=3) == TopK(3)
    pol = Threshold(0.4)
    assert get_policy(pol) is pol
    assert policy_grid("adaptive_k", rule=["gap", "knee"], max_k=[5, 10]) == [
        AdaptiveK(max_k=5), AdaptiveK(max_k=10), AdaptiveK(max_k=5, rule="knee"),
        AdaptiveK(max_k=10, rule="knee")]
    assert repr(TwoStage(2, k=8)) == "TwoStage(n_servers=2, k_per_server=None, k=8, by='max')"


# -- spec strings ------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, expected", [
    ("threshold:min_score=0.5,max_k=10", Threshold(min_score=0.5, min_k=1, max_k=10)),
    ("threshold:min_score=0.5,min_k=1,max_k=10", Threshold(0.5, min_k=1, max_k=10)),
    ("threshold:min_score=1,max_k=none", Threshold(1.0, max_k=None)),
    ("adaptive_k:max_k=10,rule=knee", AdaptiveK(1, 10, rule="knee")),
    ("adaptive_k", AdaptiveK()),
    ("top_k:k=5", TopK(5)),
    ("topk:k=5", TopK(5)),
    (" top_k : k = 5 ", TopK(5)),
    ("two_stage:n_servers=2,k=10", TwoStage(2, k=10)),
    ("two_stage:n_servers=3,k_per_server=2,by=sum", TwoStage(3, 2, by="sum")),
    ("token_budget:tokens=1500,max_k=None", TokenBudget(1500)),
])
def test_parse_policy(spec, expected):
    got = parse_policy(spec)
    assert got == expected and type(got) is type(expected)


def test_policy_spec_round_trips_the_default_grid():
    grid = default_grid()
    specs = [policy_spec(p) for p in grid]
    assert [parse_policy(s) for s in specs] == grid
    assert policy_spec(Threshold(0.5, max_k=10)) == ("threshold:min_score=0.5,min_k=1,max_k=10,"
                                                     "scale=relative")
    with pytest.raises(ValueError, match="encoding='a,b' cannot be written"):
        policy_spec(TokenBudget(100, encoding="a,b"))


@pytest.mark.parametrize("spec, match", [
    ("threshold:nope=1", r"^policy spec 'threshold:nope=1': Threshold has no parameter\(s\) "
                         r"\['nope'\]"),
    ("wat", r"^policy spec 'wat': unknown policy 'wat'"),
    ("threshold:min_score", r"^policy spec 'threshold:min_score': 'min_score' is not key=value"),
    ("threshold:=0.5", r"'=0.5' is not key=value"),
    ("threshold:min_score=", r"'min_score=' is not key=value"),
    ("threshold:", r"'' is not key=value"),
    ("top_k:k=3,,", r"'' is not key=value"),
    ("top_k:k=3,k=4", r"'k' is given twice"),
    (":k=3", r"no policy name"),
    ("", r"no policy name"),
    ("top_k:k=2.5", r"^policy spec 'top_k:k=2.5': k must be an integer"),
    ("adaptive_k:rule=elbow", r"rule must be one of"),
    ("two_stage", r"^policy spec 'two_stage': give exactly one of k_per_server and k"),
])
def test_parse_policy_errors_name_the_spec_and_the_part(spec, match):
    with pytest.raises(ValueError, match=match) as info:
        parse_policy(spec)
    assert "\n" not in str(info.value)


def test_as_policies():
    pol = TopK(3)
    got = as_policies([pol, "threshold:min_score=0.4", "adaptive_k"])
    assert got[0] is pol and got[1:] == [Threshold(0.4), AdaptiveK()]
    assert as_policies("top_k:k=2") == [TopK(2)] and as_policies(pol) == [pol]
    assert as_policies(()) == []
    with pytest.raises(ValueError, match=r"listed twice: TopK\(k=3\)$"):
        as_policies(["topk:k=3", TopK(3), "adaptive_k"])
    with pytest.raises(TypeError, match="spec is a string"):
        as_policies([3])


# -- Selector(policy=...) ----------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 3, 10])
def test_selector_with_top_k_policy_equals_the_default_selector(registry, queries, k):
    plain = Selector(registry, "bm25", top_k=k)
    with_policy = Selector(registry, plain.scorer, top_k=k, policy=TopK(k))
    for q in queries:
        assert with_policy.select(q.query) == plain.select(q.query)
        assert with_policy.select(q.query, ["calculator"]) == plain.select(q.query,
                                                                           ["calculator"])


def test_selector_policy_is_a_fitted_clone_and_top_k_overrides_it(registry):
    pol = TokenBudget(300)
    sel = Selector(registry, "bm25", policy=pol)
    assert not hasattr(pol, "costs_") and hasattr(sel.policy, "costs_")
    always = set(sel.always_include)
    sent = [n for n in sel.select("post the release notes in slack") if n not in always]
    assert sum(sel.policy.costs_[registry.index(n)] for n in sent) <= 300 or len(sent) == 1
    assert len([n for n in sel.select("post in slack", top_k=4) if n not in always]) == 4


def test_selector_policy_by_name_and_session(registry):
    sel = Selector(registry, "bm25", policy=get_policy("two_stage", n_servers=1,
                                                        k_per_server=2))
    session = sel.session(["calculator"])
    got = session.select("send a direct message to alice on slack")
    filtered = [n for n in got if n not in set(sel.always_include) | {"calculator"}]
    assert len(filtered) == 2 and all(n.startswith("slack_") for n in filtered)
    with pytest.raises(ValueError, match="exactly one"):
        Selector(registry, "bm25", policy="two_stage")


# -- evaluation --------------------------------------------------------------------------------

def test_evaluate_policies_agrees_with_select(registry, queries):
    pols = [TopK(3), Threshold(0.5, min_k=1, max_k=8), AdaptiveK(1, 6), TokenBudget(400),
            TwoStage(2, k_per_server=2)]
    pq = evaluate_policies(registry, queries, "bm25", pols)
    assert len(pq) == len(pols) * len(queries)
    sel = {p.name: Selector(registry, "bm25", always_include=(), policy=p) for p in pols}
    for r in pq.itertuples():
        q = next(x for x in queries if x.id == r.query_id)
        sent = sel[r.policy].select(q.query)
        assert r.n_sent == len(sent)
        assert r.found == len(set(q.expected) & set(sent))
    topk = pq[pq["policy"] == "top_k"]
    assert (topk["n_sent"] == 3).all()
    sm = summarize_policies(pq)
    assert list(sm["config"]) == [repr(p) for p in pols]
    assert sm["payload_reduction"].between(0, 1).all()


def test_frontier_on_a_hand_made_table():
    df = pd.DataFrame({"policy": ["top_k", "top_k", "top_k", "threshold", "threshold", "x"],
                       "config": ["TopK(k=1)", "TopK(k=3)", "TopK(k=5)", "t1", "t2", "x1"],
                       "payload_reduction": [0.9, 0.7, 0.5, 0.8, 0.7, 0.5],
                       "R@sent": [0.5, 0.7, 0.8, 0.7, 0.6, 0.8]})
    marked = frontier(df)
    # t1 dominates TopK(k=3) (more reduction, same R); t2 is dominated; x1 ties TopK(k=5)
    assert marked["pareto"].tolist() == [True, False, True, True, False, True]
    beats = dominates_top_k(df).set_index("policy")
    assert beats.loc["threshold", "dominates"] and beats.loc["threshold", "config"] == "t1"
    assert beats.loc["threshold", "dominated"] == "TopK(k=3)"
    assert not beats.loc["x", "dominates"]  # equal is not better
    chosen = dev_choice(df)
    assert set(chosen["config"]) == {"TopK(k=1)", "TopK(k=3)", "TopK(k=5)", "t1", "x1"}
    comp = best_at_comparable_payload(df, ks=[3]).iloc[0]
    assert comp["best_config"] == "t1" and comp["gain"] == 0.0


def test_frontier_by_group():
    df = pd.DataFrame({"style": ["a", "a", "b"], "payload_reduction": [0.5, 0.4, 0.1],
                       "R@sent": [0.5, 0.4, 0.1]})
    assert frontier(df, by="style")["pareto"].tolist() == [True, False, True]


# -- the notebook ------------------------------------------------------------------------------

@pytest.mark.slow
def test_notebook_runs_on_a_given_registry(tmp_path):
    pytest.importorskip("papermill")
    from toolsel.report import execute_notebook
    nb = ROOT / "notebooks" / "12_selection_policies.ipynb"
    style = ROOT / "data" / "styles" / "plugin"
    out = tmp_path / "out"
    execute_notebook(nb, tmp_path / nb.name, out, cwd=ROOT / "notebooks",
                     parameters={"registry": str(style / "registry.json"),
                                 "queries": str(style / "queries.jsonl"), "n_boot": 200})
    assert not (out / "scorers_test.csv").exists()  # the scorer table is notebook 06's
    for name in ("policies_dev.csv", "policies_test.csv",
                 "policy_frontier.csv", "policy_verdict.csv", "comparable_payload.csv",
                 "style_verdict.csv"):
        assert (out / name).exists(), name
    verdict = pd.read_csv(out / "policy_verdict.csv")
    assert set(verdict["style"]) == {"plugin"}


def test_policies_command_writes_the_frontier(tmp_path, capsys):
    import pandas as pd

    from toolsel.cli import main
    out = tmp_path / "pol"
    assert main(["policies", "--registry", "data/registry.json", "--queries",
                 "data/queries.jsonl", "--scorer", "bm25", "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["policy"]) == {"top_k", "threshold", "adaptive_k", "token_budget",
                                      "two_stage"}
    assert summary["pareto"].any() and (summary["R@sent"].between(0, 1)).all()
    beats = pd.read_csv(out / "dominates_top_k.csv")
    assert "top_k" not in set(beats["policy"])
    assert "on the frontier" in capsys.readouterr().out


def test_a_policy_added_to_the_table_is_read_by_every_command(tmp_path, monkeypatch, capsys):
    """A new policy is one class with register_policy: get_policy and parse_policy know it,
    its grid joins default_grid, and `toolsel policies` evaluates and lists it."""
    import math

    import pandas as pd

    from toolsel import policies
    from toolsel.cli import main
    monkeypatch.setattr(policies, "POLICIES", dict(policies.POLICIES))

    @policies.register_policy
    class TopShare(policies.PrefixPolicy):
        """The best ``share`` of the candidates (rounded up)."""

        name = "top_share"
        aliases = ("share",)
        sweep_param = "share"
        grid = ({"share": [0.05, 0.2]},)

        def __init__(self, share: float = 0.1):
            self.share = float(share)

        def cutoff(self, ranked_scores, ranked):
            return math.ceil(self.share * len(ranked))

    assert policies.parse_policy("SHARE:share=0.5") == TopShare(0.5)
    assert policies.policy_spec(TopShare(0.25)) == "top_share:share=0.25"
    assert "top_share" in policies.prefix_policies()
    assert policies.default_grid()[-2:] == [TopShare(0.05), TopShare(0.2)]
    out = tmp_path / "pol"
    assert main(["policies", "--registry", "data/registry.json", "--queries",
                 "data/queries.jsonl", "--scorer", "bm25", "--out", str(out)]) == 0
    summary = pd.read_csv(out / "summary.csv")
    mine = summary[summary["policy"] == "top_share"]
    assert len(mine) == 2 and set(mine["param_name"]) == {"share"}
    # 61 tools: 5% sends 4 (ceil 3.05), 20% sends 13 (ceil 12.2)
    assert sorted(mine["n_sent"]) == [4.0, 13.0]
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    assert "top_share" in capsys.readouterr().out
