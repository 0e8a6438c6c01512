"""The explorer's computation on hand-checked tools, and its widgets driven headless."""

import pytest

from toolsel.report.explorer import build_explorer, explore
from toolsel.eval.metrics import payload_chars


def test_explore_ranks_every_tool_and_sends_top_k(tiny):
    v = explore(tiny, "translate text please", "jaccard", top_k=1)
    assert list(v.ranking["tool"])[0] == "translate_text"
    assert len(v.ranking) == 4 and list(v.ranking["rank"]) == [1, 2, 3, 4]
    assert v.sent == ["translate_text"]
    assert v.payload_chars == payload_chars([tiny[2]])
    assert v.payload_reduction == pytest.approx(1 - v.payload_chars / payload_chars(tiny))
    assert "translate_text" in v.to_html()


def test_always_include_is_sent_and_ranked_apart(tiny):
    v = explore(tiny, "translate text", "jaccard", top_k=1, always_include=["calculator"])
    assert v.sent == ["translate_text", "calculator"]  # registry order
    calc = v.ranking.set_index("tool").loc["calculator"]
    assert calc["rank"] == 0 and bool(calc["always_include"]) and bool(calc["sent"])
    with pytest.raises(Exception, match="calculater"):
        explore(tiny, "x", "jaccard", always_include=["calculater"])


def test_fields_change_what_is_indexed(tiny):
    by_desc = explore(tiny, "calculator", "jaccard", fields=["description"], top_k=1)
    by_name = explore(tiny, "calculator", "jaccard", fields=["name"], top_k=1)
    assert by_name.sent == ["calculator"]
    assert by_desc.ranking["score"].max() == 0.0  # the word is only in the name
    assert by_desc.fields == ("description",)


def test_widgets_update_headless(tiny):
    pytest.importorskip("ipywidgets")
    ex = build_explorer(tiny, ["jaccard", "bm25"], query="weather in paris", top_k=2)
    views = ex.update()
    assert [v.scorer for v in views] == ["jaccard", "bm25"]
    assert all("weather_lookup" in v.sent for v in views)
    ex.query.value = "translate text"
    assert ex.views[0].ranking.iloc[0]["tool"] == "translate_text"
    ex.panels[1]["top_k"].value = 1
    assert len(ex.views[1].sent) == 1
    ex.panels[0]["scorer"].value = "tfidf"
    assert ex.views[0].scorer == "tfidf"
    assert "<table>" in ex.panels[0]["out"].value
