"""The explorer's computation on hand-checked tools, and its widgets driven headless."""

import pytest

from toolsel.report.explorer import build_explorer, explore, rankings_markdown
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


def test_a_top_k_past_the_registry_size_is_kept(tiny):
    """A 4-tool registry asked for K=10 sends every tool at K=10; the slider must not clamp it
    (a user's 9-tool registry once failed notebook 04 that way)."""
    pytest.importorskip("ipywidgets")
    ex = build_explorer(tiny, ["bm25"], query="weather in paris", top_k=10)
    ex.update()
    assert ex.panels[0]["top_k"].value == 10
    assert len(ex.views[0].sent) == len(tiny)


def _labeled(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_text('{"id": "x1", "query": "weather in paris", "expected": ["weather_lookup"], '
                    '"split": "dev"}\n')
    return path


def test_labeling_panel_appends_and_shows_impact(tiny, tmp_path):
    pytest.importorskip("ipywidgets")
    from toolsel import load_queries
    from toolsel.data import Registry
    from toolsel.report.explorer import build_labeling_panel
    path = _labeled(tmp_path)
    panel = build_labeling_panel(tiny, path, scorer="jaccard", top=3,
                                 scorers=["jaccard", "bm25"], ks=[1, 3], embed_check=False)
    panel.request.value = "translate <b>text</b> | please"
    assert list(panel.ranking["tool"])[0] == "translate_text" and len(panel.checks) == 3
    assert panel.append() is None and "Nothing appended" in panel.out.value  # nothing ticked
    panel.checks[0].value = True
    q = panel.append()
    assert q.id == "x2" and q.split == "test" and q.expected == ("translate_text",)
    assert [x.id for x in load_queries(path, Registry(tiny))] == ["x1", "x2"]
    assert set(panel.impact["scorer"]) == {"jaccard", "bm25"}
    assert "<b>text</b>" not in panel.out.value and "&lt;b&gt;text&lt;/b&gt;" in panel.out.value
    assert "complete@1" in panel.out.value and "<table>" in panel.out.value


def test_labeling_panel_flags_duplicates_and_escapes(tiny, tmp_path):
    pytest.importorskip("ipywidgets")
    from toolsel.report.explorer import build_labeling_panel
    path = _labeled(tmp_path)
    panel = build_labeling_panel(tiny, path, scorer="jaccard", scorers=["jaccard"],
                                 embed_check=False)
    panel.request.value = "Weather in Paris"
    panel.checks[0].value = True
    panel.split.value = "dev"
    assert panel.append().split == "dev"
    assert "Near-duplicates" in panel.out.value and "x1" in panel.out.value
    before = path.read_bytes()
    panel.request.value = "weather <script>alert(1)</script>"
    panel.checks[0].value = True
    panel.category.value = "<i>x</i>"
    assert panel.append() is not None
    assert "<script>" not in panel.out.value and "<i>x</i>" not in panel.out.value
    assert "&lt;script&gt;" in panel.out.value and "&lt;i&gt;x&lt;/i&gt;" in panel.out.value
    assert path.read_bytes().startswith(before)


def test_rankings_markdown_side_by_side_and_escaped(tiny):
    views = [explore(tiny, "translate text", sc, top_k=1) for sc in ("jaccard", "bm25")]
    text = rankings_markdown(views, rows=3, highlight="translate_text")
    lines = text.splitlines()
    assert lines[0] == "| rank | jaccard: tool | jaccard: score | bm25: tool | bm25: score |"
    assert lines[2].startswith("| 1 | **<code>translate_text</code>** ✓ |")
    assert "✓" not in lines[3]  # rank 2 is not sent at top_k=1
    assert "The first 3 of 4 candidate tools" in text
    assert "| jaccard | name, description | 1 | 1 |" in text or "| jaccard |" in text
    from toolsel import Tool
    evil = [Tool("a|<b>", "translate <script>alert(1)</script> text"), *tiny]
    text = rankings_markdown([explore(evil, "translate text", "jaccard", top_k=1)])
    assert "<b>" not in text and "<script>" not in text and "a&#124;&lt;b&gt;" in text


def test_explorer_sends_the_registrys_always_include_like_selector():
    """K=10 sends what Selector(registry, top_k=10) sends: the 10 best plus the tools the
    registry marks always_include (outside K), and says so."""
    from pathlib import Path

    from toolsel import Selector, load_registry
    reg = load_registry(Path(__file__).resolve().parents[1] / "data" / "registry.json")
    assert reg.always_include  # the bundled registry marks its filesystem core
    query = "file a bug report on the backend repo"
    v = explore(reg, query, "bm25", top_k=10)
    assert v.sent == Selector(reg, "bm25", top_k=10).select(query)
    assert len(v.sent) == 10 + len(reg.always_include)
    assert set(v.always_include) == reg.always_include
    assert f"{len(reg.always_include)} always-include" in v.to_html()
    assert explore(reg, query, "bm25", top_k=10, always_include=()).sent == \
        Selector(reg, "bm25", top_k=10, always_include=()).select(query)


def test_default_panel_names_what_its_bm25_half_indexes(tiny):
    v = explore(tiny, "translate text", "default", top_k=1)
    assert "lexical bm25: name_words ×2, description, param_names" in v.to_html()
    assert r"semantic embedding: name\_words, description" in rankings_markdown([v])
