"""Learning that is fair to unlabeled tools, and what is estimated is what ships (issue 36).

Real data (the bundled registry and labeled requests), the real embedding model, real model
files on disk and the real CLI."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from conftest import DATA
from toolsel import DataError, Registry, Tool, load_queries
from toolsel.cli import main
from toolsel.eval.crossfit import (cross_fit, fit_estimated, gain_table, learned_label,
                                   prepare)
from toolsel.eval.inference import paired_difference as clustered_gain
from toolsel.learn import LearnedScorer
from toolsel.learn.artifact import load_model, read_model, save_model
from toolsel.learn.ltr import FEATURES, description_signal, fit_ltr
from toolsel.learn.rule import FLOOR_UNCOVERED, choose
from toolsel.learn.signals import SETTINGS, Setting, interleave


@pytest.fixture(scope="module")
def labeled(registry):
    return load_queries(DATA / "requests.jsonl", registry)


@pytest.fixture(scope="module")
def prep(registry, labeled):
    return prepare(registry, labeled, "default", bases=["default", "bm25"])


def _rows(prep):
    reg = prep.registry
    tools_of = [[reg.index(n) for n in q.expected] for q in prep.queries]
    required = [[t for t in ts if prep.scorer.candidates_[t]] for ts in tools_of]
    return tools_of, required


def test_interleaving_never_buries_a_tool_the_blind_scorer_ranked_well():
    rng = np.random.default_rng(3)
    learned, blind = rng.normal(size=(20, 50)), rng.normal(size=(20, 50))
    merged = interleave(learned, blind)

    def ranks(x):
        return np.argsort(np.argsort(-x, axis=1, kind="stable"), axis=1, kind="stable") + 1
    rm, rl, rb = ranks(merged), ranks(learned), ranks(blind)
    assert (rm <= 2 * rb).all() and (rm <= 2 * rl - 1).all()
    # the first place is the learned first, the second the blind first (when they differ)
    first = np.argmax(learned, axis=1)
    assert (np.argmax(merged, axis=1) == first).all()


def test_ltr_never_lifts_a_tool_for_having_labels(prep):
    tools_of, required = _rows(prep)
    desc = description_signal(prep.vectors, prep.scorer.description_vectors_
                              if hasattr(prep.scorer, "description_vectors_")
                              else prep.scorer.description_vectors())
    coef = fit_ltr(prep.blind, prep.vectors, tools_of, required, prep.scorer.candidates_,
                   prep.groups, desc)
    assert coef is not None and len(coef) == len(FEATURES) + 1
    assert coef[1 + FEATURES.index("labeled")] <= 0
    assert coef[1 + FEATURES.index("blind_rel")] > 0  # the blind score still counts
    # a single group has nothing to learn from
    assert fit_ltr(prep.blind[:3], prep.vectors[:3], tools_of[:3], required[:3],
                   prep.scorer.candidates_, np.zeros(3, dtype=int), desc[:3]) is None


def test_the_rule_chooses_only_candidates_within_the_floor_on_uncovered_requests(prep):
    tools_of, required = _rows(prep)
    base, setting, rows = choose(prep.blinds, [q.query for q in prep.queries], prep.vectors,
                                 tools_of, required, prep.scorer.candidates_, prep.groups,
                                 description_vectors=prep.scorer.description_vectors())
    assert len(rows) == 2 * len(SETTINGS)
    ref = rows[0]
    assert ref["base"] == "default" and ref["method"] == "blind" and ref["eligible"]
    assert ref["n_uncovered"] > 0  # tool-held-out inner folds make uncovered requests
    for r in rows:
        assert r["eligible"] == (r is ref or round(r["uncovered_score"] - ref["uncovered_score"],
                                                   12) >= -FLOOR_UNCOVERED)
    (chosen,) = [r for r in rows if r["chosen"]]
    assert chosen["eligible"] and (chosen["base"], chosen["setting"]) == (base, setting.label)
    best = max(r["dev_score"] for r in rows if r["eligible"])
    assert chosen["dev_score"] == best


def test_tool_held_out_folds_never_train_on_the_hidden_tools(registry, prep):
    cf = cross_fit(registry, prep.queries, prepared=prep, ks=(5, 10), tool_holdout=0.3, k=3)
    qm = cf.query_metrics
    assert set(qm["coverage"]) <= {"all", "some", "none"} and "none" in set(qm["coverage"])
    for f, model in enumerate(cf.models):
        test = [prep.queries[j] for j in np.flatnonzero(cf.folds == f)]
        seen = set(model.train_ids_)
        assert not seen & {q.id for q in test}  # a model never grades itself
        labeled = set(model.labeled_tools_)
        for q in test:
            row = qm[(qm["query_id"] == q.id) & (qm["scorer"] == cf.base)].iloc[0]
            need = [n for n in q.expected if prep.scorer.candidates_[registry.index(n)]]
            n_lab = sum(n in labeled for n in need)
            want = "all" if n_lab == len(need) else ("none" if n_lab == 0 else "some")
            assert row["coverage"] == want
    g = gain_table(cf)
    assert list(g["subset"][:4]) == ["every request", "all", "some", "none"]
    assert g.loc[0, "n"] == g.loc[1:3, "n"].sum()


def test_what_is_estimated_is_what_ships(registry, prep):
    model, est = fit_estimated(registry, prep.queries, prepared=prep)
    assert est.cross_fit is not None
    # the shipped model is the procedure fit on every request: the same choice as a fresh fit
    fresh = LearnedScorer(base="default", bases=["default", "bm25"]).fit(registry,
                                                                         prep.queries)
    r5 = est.gains[(est.gains["metric"] == "R@5") & (est.gains["subset"] == "every request")]
    assert est.ships == bool(r5["low"].iloc[0] > 0)
    if est.ships:
        assert (model.base_name_, model.setting_) == (fresh.base_name_, fresh.setting_)
        texts = [q.query for q in prep.queries[:20]]
        assert np.allclose(model.score_many(texts), fresh.score_many(texts))
    else:
        assert model.setting_.method == "blind"


def test_labels_with_nothing_left_to_gain_ship_blind_and_say_so(prep, tmp_path, capsys):
    # only the requests blind default already serves (every required tool in its top 5): no
    # learned model can gain R@5 on them, so the estimate's interval cannot lie above zero
    from toolsel.learn.rule import required_ranks
    tools_of, required = _rows(prep)
    ranks = required_ranks(prep.blinds["default"], required, prep.scorer.candidates_)
    easy = [q for q, r in zip(prep.queries, ranks) if len(r) and (r <= 5).all()]
    assert len(easy) >= 60
    path = tmp_path / "easy.jsonl"
    path.write_text("".join(json.dumps({"id": q.id, "query": q.query,
                                        "expected": list(q.expected)}) + "\n" for q in easy),
                    encoding="utf-8")
    out = tmp_path / "model.json"
    assert main(["fit", "--registry", str(DATA / "registry.json"), "--queries", str(path),
                 "--bases", "default,bm25", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "decision: ships blind default (the labels unused): cross-fitted R@5 1.000 blind" \
        in text
    assert "the interval is not above zero" in text
    rec = json.loads(out.read_text())
    assert rec["settings"]["setting"]["method"] == "blind" and rec["base"] == "default"
    assert rec["estimate"]["ships"] is False


def test_fit_setting_blind_estimates_blind(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["fit", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "queries.jsonl"), "--setting", "blind", "--bases", "default",
                 "--out", str(out), "--cross-fit"]) == 0
    text = capsys.readouterr().out
    per_fold = [ln for ln in text.splitlines() if "chosen per fold" in ln][0]
    assert per_fold.count("blind") == per_fold.count("default:")  # every fold: blind
    assert "+0.000 [+0.000, +0.000]" in text
    assert "default: blind" in text  # blind's dev row is printed


def test_clustered_interval_resamples_groups():
    a = np.r_[np.ones(10), np.zeros(10)]
    b = np.zeros(20)
    alone = clustered_gain(a, b)
    # the ten wins are one group's ten near-duplicates: one piece of evidence, not ten
    grouped = clustered_gain(a, b, np.r_[np.zeros(10), np.arange(1, 11)])
    assert alone["diff"] == grouped["diff"] == 0.5
    assert grouped["high"] - grouped["low"] > alone["high"] - alone["low"]
    assert grouped["n_groups"] == 11 and alone["n_groups"] == 20


@pytest.fixture(scope="module")
def model_path(tmp_path_factory, registry, labeled):
    m = LearnedScorer(base="bm25", setting=Setting("knn", 1.0)).fit(registry, labeled)
    path = tmp_path_factory.mktemp("m") / "model.json"
    save_model(m, registry, path)
    return path


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_in_a_model_file_is_refused(model_path, tmp_path, value):
    text = model_path.read_text(encoding="utf-8").replace('"weight": 1.0', f'"weight": {value}',
                                                          1)
    assert value in text
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match="not a number a model file may hold"):
        read_model(bad)


def test_unreadable_model_files_are_one_line_and_exit_2(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    for bad in (deep, "/dev/zero"):
        with pytest.raises(DataError):
            read_model(bad)
        code = main(["sweep", "--registry", str(DATA / "registry.json"), "--queries",
                     str(DATA / "queries.jsonl"), "--out", str(tmp_path / "o"),
                     "--model", str(bad), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and str(bad) in err


def test_a_model_with_no_usable_tool_is_refused(model_path):
    other = Registry([Tool("alpha_tool", "does alpha things"), Tool("beta_tool", "beta")])
    with pytest.raises(DataError, match="none of the .* tools the model learned about"):
        load_model(model_path, other)


def test_a_model_fit_with_another_embedding_model_loads(tmp_path, registry, labeled):
    m = LearnedScorer(base="bm25", setting=Setting("knn", 1.0),
                      model="paraphrase-MiniLM-L3-v2").fit(registry, labeled)
    path = tmp_path / "l3.json"
    save_model(m, registry, path)
    back = load_model(path, registry)
    assert back.embedder_.encoder_.model_id == m.embedder_.encoder_.model_id
    texts = ["tell the team the deploy finished", "what's 340 divided by 12"]
    assert np.allclose(back.score_many(texts), m.score_many(texts))


def test_in_sample_note_also_matches_the_same_texts_under_new_ids(model_path, tmp_path,
                                                                  capsys, labeled):
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps({"id": f"new-{i}", "query": q.query,
                                           "expected": list(q.expected)}) + "\n"
                               for i, q in enumerate(labeled[:10])), encoding="utf-8")
    assert main(["sweep", "--registry", str(DATA / "registry.json"), "--queries", str(renamed),
                 "--out", str(tmp_path / "o"), "--model", str(model_path),
                 "--no-progress"]) == 0
    assert "10 of the 10 requests evaluated were used to fit" in capsys.readouterr().out
    assert learned_label("bm25") == "bm25+labels"


def test_the_report_explorer_shows_the_model_as_one_more_panel(model_path, tmp_path):
    from toolsel.report.explorer_page import write_explorer
    page = write_explorer(tmp_path / "explorer.html", DATA / "registry.json",
                          DATA / "queries.jsonl", ["bm25"], model=model_path)
    html = page.read_text(encoding="utf-8")
    assert '"name":"bm25"' in html and '"name":"bm25+labels"' in html
    assert "learned from 162 labeled requests: knn(weight=1)" in html
    assert str(tmp_path) not in html and str(model_path.parent) not in html


@pytest.mark.parametrize("setting", [
    Setting("blind"), Setting("knn", 1.0), Setting("tool2vec", 1.0, alpha=0.5),
    Setting("ltr"), Setting("ltr", interleave=True), Setting("knn", 2.0, interleave=True),
    Setting("expand", 1.0), Setting("centroid", 1.0, alpha=0.5),
    Setting("fusion", 1.0, mix=(1 / 3, 1 / 3, 1 / 3))], ids=lambda s: s.label[:30])
def test_every_method_fits_saves_loads_and_scores_the_same(setting, registry, labeled,
                                                            tmp_path):
    """The methods' table: each way of using the labels (the rule's and the older lifts)
    fits, is written, read back and scores exactly as fitted."""
    from toolsel.learn.signals import METHODS
    assert setting.method in METHODS
    m = LearnedScorer(base="bm25", setting=setting).fit(registry, labeled)
    assert m.setting_.method in (setting.method, "blind")
    if setting.method == "ltr":
        assert len(m.setting_.coef) == len(FEATURES) + 1
    path = tmp_path / "m.json"
    save_model(m, registry, path)
    back = load_model(path, registry)
    assert back.setting_ == m.setting_
    texts = ["tell the team the deploy finished", "open a ticket for the flaky login test"]
    assert np.allclose(back.score_many(texts), m.score_many(texts))


def test_the_learning_curve_starts_at_blind_under_the_rule():
    """With no label per tool the curve's point is the blind scorer, whatever the rule could
    do with descriptions alone (tool2vec, ltr: on the plugin style it once moved R@5)."""
    from toolsel.datasets import load_style
    from toolsel.eval.crossfit import learning_curve
    reg, qs = load_style("plugin")
    prep = prepare(reg, qs, "default")
    curve = learning_curve(prep, caps=(0,), k=3)
    blind = cross_fit(reg, qs, prepared=prep, k=3, ks=(5, 10), setting=Setting("blind"))
    qm = blind.query_metrics
    r5 = qm[(qm["scorer"] == "default") & (qm["top_k"] == 5)]["R@k"].mean()
    assert curve["R@5"].iloc[0] == pytest.approx(r5)
