"""The model file: `toolsel fit` writes it, Selector / sweep load it, changed tool texts fall
back to blind scores with one warning, bad files name the file and the field."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from conftest import DATA
from toolsel import DataError, Registry, Selector, Tool, get_scorer, load_queries
from toolsel.cli import main
from toolsel.learn.artifact import LearnedModelWarning, load_model, read_model


@pytest.fixture(scope="module")
def fitted(tmp_path_factory, registry):
    out = tmp_path_factory.mktemp("model") / "model.json"
    code = main(["fit", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "requests.jsonl"), "--out", str(out), "--setting", "knn"])
    assert code == 0
    return out


def test_fit_writes_a_versioned_model_that_scores_like_the_fit(fitted, registry):
    rec = json.loads(fitted.read_text())
    assert rec["format"] == "toolsel-learned-model" and rec["format_version"] == 2
    assert rec["base"] == "default" and rec["labels"]["n_requests"] == 162
    assert set(rec["tools"]) and all(len(v["text_hash"]) == 32 for v in rec["tools"].values())
    model = load_model(fitted, registry)
    assert model.setting_.method in ("knn", "blind")
    queries = load_queries(DATA / "requests.jsonl", registry)
    from toolsel.learn import LearnedScorer
    again = LearnedScorer(base="default", setting="knn").fit(registry, queries)
    texts = ["post the release notes to the team channel", "what's 17 times 23"]
    assert np.allclose(model.score_many(texts), again.score_many(texts), atol=1e-5)
    sel = Selector(registry, model=fitted, top_k=5)
    assert sel.scorer.train_ids_ == again.train_ids_
    assert len(sel.select(texts[0])) >= 5


def test_changed_tool_text_falls_back_to_blind_with_one_warning(fitted, registry):
    rec = json.loads(fitted.read_text())
    learned = [n for n in rec["tools"] if n in registry]
    edited = learned[0]
    tools = [Tool(t.name, t.description + " (edited)", t.parameters, t.metadata)
             if t.name == edited else t for t in registry]
    reg2 = Registry(tools)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_model(fitted, reg2)
    lines = [w for w in caught if issubclass(w.category, LearnedModelWarning)]
    assert len(lines) == 1
    assert "1 labeled tool(s) changed" in str(lines[0].message) and edited in \
        str(lines[0].message)
    assert edited not in model.labeled_tools_ and len(model.labeled_tools_) == len(learned) - 1
    blind = get_scorer("default").fit(reg2)
    q = [r["text"] for r in rec["requests"] if edited in r["tools"]][:3]
    i = reg2.index(edited)
    got, want = model.score_many(q), blind.score_many(q)
    assert np.array_equal(got[:, i], want[:, i])
    # the model is not blind: the other labeled tools still learn
    assert model.setting_.method == "knn"
    others = [reg2.index(n) for n in model.labeled_tools_]
    assert not np.allclose(got[:, others], want[:, others])


@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(format="something-else"), "format"),
    (lambda r: r.update(format_version=99), "format_version"),
    (lambda r: r["settings"].update(setting={"method": "magic"}), "settings.setting"),
    (lambda r: r["vectors"].update(base64=r["vectors"]["base64"][:-8]), "vectors.base64"),
    (lambda r: r["requests"][0].update(tools=["nope"]), "requests[0].tools"),
    (lambda r: r.pop("labels"), "labels"),
])
def test_bad_model_files_name_the_file_and_field(fitted, tmp_path, registry, edit, field):
    rec = json.loads(fitted.read_text())
    edit(rec)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    with pytest.raises(DataError) as err:
        read_model(bad)
    assert err.value.field == field and str(bad) in str(err.value)
    assert str(err.value).count(str(bad)) == 1  # named once, not wrapped twice


def test_a_missing_setting_is_named_once(fitted, tmp_path):
    rec = json.loads(fitted.read_text())
    del rec["settings"]["setting"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rec))
    with pytest.raises(DataError) as err:
        read_model(bad)
    assert err.value.field == "settings.setting"
    assert str(err.value).count(str(bad)) == 1 and "missing; expected dict" in str(err.value)


def test_fit_never_overwrites_a_file_it_did_not_write(fitted, tmp_path, capsys):
    mine = tmp_path / "notes.json"
    mine.write_text('{"my": "notes"}')
    args = ["fit", "--registry", str(DATA / "registry.json"), "--queries",
            str(DATA / "queries.jsonl"), "--setting", "blind"]
    assert main(args + ["--out", str(mine)]) == 2
    assert mine.read_text() == '{"my": "notes"}'
    assert "refusing to overwrite" in capsys.readouterr().err
    own = tmp_path / "own.json"
    own.write_text(fitted.read_text())
    assert main(args + ["--out", str(own)]) == 0  # a model file it wrote: replaced
    assert json.loads(own.read_text())["labels"]["n_requests"] == 30


def test_sweep_with_model_says_when_numbers_are_in_sample(fitted, tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["sweep", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "requests.jsonl"), "--scorers", "default", "--top-k", "5",
                 "--model", str(fitted), "--out", str(out), "--no-timings", "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "162 of the 162 requests evaluated were used to fit" in text
    summary = (out / "summary.csv").read_text()
    assert "default+labels" in summary


def test_selector_learns_from_examples(registry):
    queries = load_queries(DATA / "requests.jsonl", registry)
    sel = Selector(registry, "bm25", examples=queries[:40], top_k=3)
    assert sel.scorer.base_.name == "bm25" and sel.scorer.train_ids_[0] == queries[0].id
    with pytest.raises(ValueError, match="not both"):
        Selector(registry, examples=queries, model="x.json")


def test_report_refuses_a_bad_model_file_before_running_anything(tmp_path, capsys):
    bad = tmp_path / "model.json"
    bad.write_text('{"format": "toolsel-learned-model", "format_version": "one"}')
    code = main(["report", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "requests.jsonl"), "--model", str(bad), "--only", "13",
                 "--out", str(tmp_path / "rep")])
    assert code == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "field 'format_version'" in err
    assert not (tmp_path / "rep").exists()


def test_the_plan_passes_the_model_only_to_pages_that_take_it(fitted):
    from toolsel.report.plan import UserData, notebook_plan
    from conftest import ROOT
    nbs = [ROOT / "notebooks" / "07_discovery.ipynb", ROOT / "notebooks" / "13_labels.ipynb"]
    plan = notebook_plan(nbs, UserData(DATA / "registry.json", queries=DATA / "requests.jsonl",
                                       requests=DATA / "requests.jsonl", model=fitted))
    assert "model" not in plan[0].parameters and plan[1].parameters["model"] == str(fitted)


def test_another_registry_version_without_learned_changes_says_so_in_one_line(fitted, registry):
    rec = json.loads(fitted.read_text())
    extra = Registry([*registry, Tool("brand_new_tool", "Does something new")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = load_model(fitted, extra)
    lines = [str(w.message) for w in caught if issubclass(w.category, LearnedModelWarning)]
    assert len(lines) == 1 and "another version of this registry" in lines[0]
    assert set(model.labeled_tools_) == {n for n in rec["tools"]}
