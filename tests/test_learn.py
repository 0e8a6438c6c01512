"""The learned layer: groups and folds, the estimator contract, exact blind scores for tools
with no labeled request, and cross-fitting that never scores a request with a model that saw
its label. Real data, the real offline embedding model."""

from __future__ import annotations

import numpy as np
import pytest

from toolsel import Query, Selector, get_scorer, load_queries
from toolsel.learn import LearnedScorer, Setting
from toolsel.eval.crossfit import cross_fit, learning_curve, prepare
from toolsel.ranking import ranks_of
from toolsel.learn.groups import group_folds, request_groups
from toolsel.scorers.base import NotFittedError

from conftest import DATA


@pytest.fixture(scope="module")
def requests(registry):
    return load_queries(DATA / "requests.jsonl", registry)


def _q(i, text, *tools, **meta):
    return Query(f"q{i}", text, tuple(tools), metadata=meta)


def test_groups_join_near_duplicates_and_conversations():
    qs = [_q(0, "Send Alice a DM on Slack", "a"),
          _q(1, "send alice a dm on slack!", "a"),           # same normalized text
          _q(2, "please send alice a dm on slack now", "a"),  # 5/7 overlap: its own group
          _q(3, "what's the weather in Paris", "b", conversation="c1"),
          _q(4, "and in Rome?", "b", conversation="c1"),     # same conversation
          _q(5, "book a flight to Oslo tomorrow morning", "c"),
          _q(6, "book a flight to Oslo tomorrow morning please", "c")]  # 6/7 tokens
    g = request_groups(qs)
    assert g[0] == g[1] and g[2] != g[0]
    assert g[3] == g[4] and g[5] == g[6]
    assert len(set(g.tolist())) == 4
    folds = group_folds(g, 3)
    for a in range(len(qs)):
        for b in range(len(qs)):
            if g[a] == g[b]:
                assert folds[a] == folds[b]
    assert set(folds.tolist()) == {0, 1, 2}
    with pytest.raises(ValueError, match="at least 5 groups"):
        group_folds(g, 5)


def _all_pairs_groups(qs, threshold):
    """The grouping rule by brute force: every pair of requests compared."""
    from toolsel.text import tokenize
    toks = [frozenset(tokenize(q.query)) for q in qs]
    comp = list(range(len(qs)))
    for i in range(len(qs)):
        for j in range(i + 1, len(qs)):
            a, b = toks[i], toks[j]
            near = a and b and (a & b) and len(a & b) / len(a | b) >= threshold
            if near or " ".join(tokenize(qs[i].query)) == " ".join(tokenize(qs[j].query)):
                old, new = comp[j], comp[i]
                comp = [new if c == old else c for c in comp]
    number = {}
    return np.asarray([number.setdefault(c, len(number)) for c in comp])


@pytest.mark.parametrize("threshold", [0.0, 0.5, 0.7, 0.8, 1.0])
def test_near_duplicate_groups_are_the_all_pairs_groups(threshold):
    # the prefix filter compares few pairs; it must find every pair all-pairs finds
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(25)]
    for trial in range(60):
        qs = [_q(i, " ".join(rng.choice(vocab[:rng.integers(1, 26)], rng.integers(0, 8))))
              for i in range(int(rng.integers(0, 40)))]
        assert request_groups(qs, near_duplicate=threshold).tolist() == \
            _all_pairs_groups(qs, threshold).tolist(), (trial, threshold)


def test_interleaved_objective_is_the_objective_of_the_whole_interleaving():
    # the dev rule reads R@5 of an interleaving off the two top lists; ranking every tool
    # (interleave, then required_ranks) must give the same numbers, ties, NaN and
    # non-candidates included
    from toolsel.learn.rule import interleaved_objective, objective, required_ranks
    from toolsel.learn.signals import candidate_ranks, interleave
    rng = np.random.default_rng(3)
    for trial in range(200):
        n, m = int(rng.integers(1, 12)), int(rng.integers(1, 30))
        learned = np.round(rng.normal(size=(n, m)), int(rng.integers(0, 2)))
        blind = np.round(rng.normal(size=(n, m)), int(rng.integers(0, 2)))
        learned[rng.random((n, m)) < 0.15] = np.nan
        blind[rng.random((n, m)) < 0.15] = np.nan
        cand = rng.random(m) < 0.8
        req = [list(rng.choice(m, size=int(rng.integers(0, min(m, 4) + 1)), replace=False))
               for _ in range(n)]
        k = int(rng.integers(1, 7))
        ranks = candidate_ranks(blind, cand)
        want = objective(required_ranks(interleave(learned, blind, cand, blind_ranks=ranks),
                                        req, cand), k)
        got = interleaved_objective(learned, ranks, cand, req, k)
        np.testing.assert_array_equal(got, want, err_msg=f"trial {trial}")


def test_unfitted_and_bad_input_errors(registry, requests):
    sc = LearnedScorer(base="bm25")
    with pytest.raises(NotFittedError, match="fit\\(tools, queries\\)"):
        sc.score("send a message")
    with pytest.raises(TypeError, match="needs labeled requests"):
        sc.fit(registry)
    bad = [Query("x1", "do something", ("no_such_tool",))]
    with pytest.raises(KeyError, match="'x1' expects 'no_such_tool'"):
        LearnedScorer(base="bm25").fit(registry, bad)
    with pytest.raises(ValueError, match="setting must be"):
        LearnedScorer(base="bm25", setting="magic").fit(registry, requests)
    # the constructor only stores parameters
    assert LearnedScorer(base="bm25", max_per_tool=2).get_params()["max_per_tool"] == 2


@pytest.mark.parametrize("base", ["default", "bm25"])
def test_tools_without_labels_keep_blind_scores_exactly(registry, requests, base):
    train = requests[:80]
    learned = LearnedScorer(base=base, setting=Setting("fusion", 1.0, mix=(1 / 3, 1 / 3, 1 / 3))
                            ).fit(registry, train)
    blind = get_scorer(base).fit(registry)
    texts = [q.query for q in requests[80:]]
    got, want = learned.score_many(texts), blind.score_many(texts)
    labeled = np.zeros(len(registry), dtype=bool)
    labeled[[registry.index(n) for n in learned.labeled_tools_]] = True
    assert 0 < labeled.sum() < len(registry)
    assert np.array_equal(got[:, ~labeled], want[:, ~labeled])  # bit for bit
    assert not np.array_equal(got[:, labeled], want[:, labeled])  # the labels did something
    # one query at a time agrees with the batch (what Selector.select reads)
    assert np.allclose(learned.score(texts[0]), got[0])
    # a Selector takes the fitted model as it is
    sel = Selector(registry, learned, top_k=5)
    assert sel.scorer is learned


def test_learned_lifts_a_labeled_tool(registry):
    # a request sharing no word with the calculator's description, labeled once
    train = [Query("l1", "crunch some numbers for me", ("calculator",)),
             Query("l2", "post the deploy status in the team channel", ("slack_send_message",))]
    learned = LearnedScorer(base="bm25", setting=Setting("knn", 2.0)).fit(registry, train)
    blind = get_scorer("bm25").fit(registry)
    q = "could you crunch these numbers"
    i = registry.index("calculator")
    rank_learned = ranks_of(learned.score(q), [i])[0]
    rank_blind = ranks_of(blind.score(q), [i])[0]
    assert rank_learned == 1 < rank_blind


def test_knn_signal_is_the_nearest_labeled_request_of_each_tool():
    from toolsel.learn.signals import FLOOR, fit_evidence, learned_signals
    # 3 tools, unit 2-d request vectors; tool 0 labeled by requests 0 and 1, tool 2 by 1
    vecs = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    ev = fit_evidence(3, ["a", "b", "c"], vecs, [[0], [0, 2], [2]])
    q = np.array([[0.8, 0.6]])
    knn = learned_signals(ev, ["q"], q, None)["knn"][0]
    scale = lambda c: max(0.0, (c - FLOOR) / (1 - FLOOR))  # noqa: E731
    # tool 0: nearest of (cos .8 to request 0, .6 to request 1); tool 2: of (.6, .96)
    assert np.allclose(knn, [scale(0.8), 0.0, scale(0.96)])


def test_cross_fit_never_scores_a_request_with_a_model_that_saw_it(registry, requests):
    qs = requests[:60]
    p = prepare(registry, qs, "bm25")
    fixed = Setting("knn", 1.0)
    cf = cross_fit(registry, qs, prepared=p, setting=fixed, k=4)
    assert len(cf.models) == 4
    for i, q in enumerate(qs):
        model = cf.models[cf.folds[i]]
        assert q.id not in model.train_ids_
        # nor any request of its group (near-duplicates, one conversation)
        same = {qs[j].id for j in np.flatnonzero(cf.groups == cf.groups[i])}
        assert not same & set(model.train_ids_)
        # the held-out row is what this fold's model gives (alone, not batched: the encoder
        # pads a batch, which moves vectors in the 7th decimal)
        assert np.allclose(cf.learned_scores[i], model.score_many([q.query])[0], atol=1e-5)
    # a model that learned from the request itself scores it differently: the request is its
    # own nearest labeled neighbour
    seen = LearnedScorer(base="bm25", setting=fixed).fit(registry, qs)
    differ = [i for i, q in enumerate(qs)
              if np.abs(seen.score(q.query) - cf.learned_scores[i]).max() > 1e-3]
    assert len(differ) > len(qs) // 2
    # every request is scored exactly once, blind and learned on the same requests
    qm = cf.query_metrics
    assert set(qm["scorer"]) == {"bm25", "bm25+labels"}
    assert qm.groupby("scorer")["query_id"].nunique().eq(len(qs)).all()


def test_learning_curve_starts_at_blind(registry, requests):
    p = prepare(registry, requests[:60], "bm25")
    curve = learning_curve(p, caps=(0, 1, None), setting=Setting("knn", 1.0), k=3)
    assert list(curve["labels_per_tool"]) == ["0", "1", "all"]
    assert curve["n_labeled_tools"].iloc[0] == 0
    blind = cross_fit(registry, requests[:60], prepared=p, k=3, ks=(5, 10))
    qm = blind.query_metrics
    r5 = qm[(qm["scorer"] == "bm25") & (qm["top_k"] == 5)]["R@k"].mean()
    assert curve["R@5"].iloc[0] == pytest.approx(r5)
    assert curve["n_labeled_tools"].iloc[1] <= curve["n_labeled_tools"].iloc[2]


@pytest.mark.slow
def test_page_13_degrades_with_a_clear_reason_on_too_few_labels(tmp_path, registry):
    """A registry whose labeled requests form one group: the page runs and says why it
    cannot cross-fit, with no table."""
    import json

    import papermill as pm

    from conftest import ROOT
    qs = tmp_path / "one.jsonl"
    qs.write_text(json.dumps({"id": "a", "query": "send alice a dm", "expected":
                              ["slack_send_dm"]}) + "\n")
    out = tmp_path / "page"
    pm.execute_notebook(str(ROOT / "notebooks" / "13_labels.ipynb"), str(tmp_path / "nb.ipynb"),
                        parameters={"registry": str(DATA / "registry.json"),
                                    "queries": str(qs), "out_dir": str(out)},
                        kernel_name="python3", cwd=str(ROOT / "notebooks"), progress_bar=False)
    shown = (tmp_path / "nb.ipynb").read_text()
    assert "Nothing to cross-fit on this registry" in shown and "at least 2 groups" in shown
    assert not (out / "comparison.csv").exists()
    from toolsel.report import claims
    assert claims.check_claims(out) == []


def test_learning_curve_reuses_the_uncapped_cross_fit_exactly(registry, requests):
    """The uncapped point, and a cap no tool reaches, are the cross-fit already run (page 13
    fits it once): the same curve as fitting them again."""
    from collections import Counter
    qs = requests[:60]
    p = prepare(registry, qs, "bm25")
    knn = Setting("knn", 1.0)
    most = max(Counter(t for q in qs for t in set(q.expected)).values())
    caps = (0, 1, most, None)
    fitted = learning_curve(p, caps=caps, setting=knn, k=3)
    uncapped = cross_fit(registry, qs, prepared=p, k=3, setting=knn, ks=(5, 10))
    reused = learning_curve(p, caps=caps, setting=knn, k=3, uncapped=uncapped)
    assert reused.equals(fitted)
    assert reused.iloc[2].drop("labels_per_tool").equals(reused.iloc[3].drop("labels_per_tool"))
