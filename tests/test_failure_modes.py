"""Failure-mode classification and repair hints, on hand-made tools and on the article's misses."""

import pandas as pd
import pytest

from toolsel import Tool
from toolsel.tables.failure_modes import (MODES, OTHER, SAME_DOMAIN, SHORT_GENERIC, VOCABULARY_GAP,
                                   classify_miss, classify_misses, content_terms, mode_counts,
                                   repair_hints, tool_domain)

ISSUE = Tool("github_create_issue", "Create a new issue in a GitHub repo.", metadata={"domain": "github"})
PR = Tool("github_create_pr", "Create a pull request on a GitHub repo.", metadata={"domain": "github"})
CALC = Tool("calculator", "Evaluate a basic arithmetic expression.")
WEATHER = Tool("weather_forecast", "Daily weather forecast for a location.")
SLACK = Tool("slack_send_message", "Post a message to a Slack channel.")


def test_content_terms_drop_function_words_fold_plurals_keep_order():
    assert content_terms("What's 340 divided by 12?") == ["340", "divided", "12"]
    assert content_terms("search the emails, then emails twice") == ["search", "email", "twice"]
    assert content_terms("getPM2.5Level") == ["pm", "2", "5", "level"]
    assert content_terms("the a of") == []


def test_tool_domain_from_metadata_else_name_prefix():
    assert tool_domain(ISSUE) == "github"
    assert tool_domain(Tool("jira_get_issue", "x")) == "jira"
    assert tool_domain(CALC) == "calculator"


def test_same_domain_confusion_needs_a_sibling_sent_and_a_shared_word():
    m = classify_miss("file a bug report on the backend repo", ISSUE, [PR, CALC])
    assert m.mode == SAME_DOMAIN
    assert m.siblings_sent == ("github_create_pr",)
    assert m.shared_terms == ("repo",)
    assert m.missing_terms == ("file", "bug", "report", "backend")
    # the same words with no sibling sent: one shared word of five is a vocabulary gap
    assert classify_miss("file a bug report on the backend repo", ISSUE,
                         [CALC, SLACK]).mode == VOCABULARY_GAP


def test_sibling_sent_without_shared_words_is_not_confusion():
    m = classify_miss("did anyone from legal get back about the contract", ISSUE, [PR])
    assert m.siblings_sent == ("github_create_pr",) and m.shared_terms == ()
    assert m.mode == VOCABULARY_GAP


def test_short_generic_query_numbers_not_counted_and_not_hints():
    m = classify_miss("what's 340 divided by 12", CALC, [SLACK])
    assert m.mode == SHORT_GENERIC
    assert m.n_query_terms == 1 and m.missing_terms == ("divided",)
    assert classify_miss("crunch some numbers", CALC, [SLACK]).mode == SHORT_GENERIC


def test_vocabulary_gap_and_other():
    assert classify_miss("is it going to rain in seattle this weekend", WEATHER,
                         [SLACK]).mode == VOCABULARY_GAP
    m = classify_miss("post a message to the slack channel", SLACK, [CALC])
    assert m.mode == OTHER and m.missing_terms == ()


def test_thresholds_are_parameters():
    q = "evaluate arithmetic now"
    assert classify_miss(q, CALC, [SLACK]).mode == OTHER  # 2 shared words
    assert classify_miss(q, CALC, [SLACK], gap_max_shared=2, short_max_terms=3).mode == \
        SHORT_GENERIC


@pytest.fixture
def misses():
    return pd.DataFrame([
        {"scorer": "a", "top_k": 1, "query_id": "q1", "query": "file a bug on the repo",
         "expected": "github_create_issue", "rank": 2, "sent_instead": "github_create_pr"},
        {"scorer": "a", "top_k": 1, "query_id": "q2", "query": "crunch numbers",
         "expected": "calculator", "rank": 4, "sent_instead": "slack_send_message"},
        {"scorer": "b", "top_k": 1, "query_id": "q2", "query": "crunch numbers",
         "expected": "calculator", "rank": 3, "sent_instead": "github_create_pr"},
    ])


def test_classify_misses_table_and_counts(misses):
    reg = [ISSUE, PR, CALC, WEATHER, SLACK]
    c = classify_misses(misses, reg)
    assert list(c["mode"]) == [SAME_DOMAIN, SHORT_GENERIC, SHORT_GENERIC]
    assert c.loc[0, "siblings_sent"] == "github_create_pr"
    assert c.loc[1, "missing_terms"] == "crunch number"
    counts = mode_counts(c, scorers=["a", "b", "c"])
    assert list(counts.columns) == [*MODES, "total"]
    assert counts.loc["a", SAME_DOMAIN] == 1 and counts.loc["a", "total"] == 2
    assert counts.loc["c", "total"] == 0  # a scorer without misses stays, as zeros
    hints = repair_hints(c)
    assert hints.loc[0, "expected"] == "calculator" and hints.loc[0, "misses"] == 2
    assert hints.loc[0, "missing_terms"] == "crunch (2), number (2)"
    assert hints.loc[0, "scorers"] == "a b"


def test_classify_misses_errors_name_the_problem(misses):
    with pytest.raises(KeyError, match="sent_instead"):
        classify_misses(misses.drop(columns="sent_instead"), [ISSUE, PR, CALC, SLACK])
    with pytest.raises(KeyError, match="calculator"):
        classify_misses(misses, [ISSUE, PR, SLACK])


def test_article_misses_classify_as_the_article_says(registry, queries):
    from toolsel.eval.sweep import sweep
    res = sweep(registry, queries, ["jaccard"], [10], progress=False)
    c = classify_misses(res.misses, registry).set_index("query_id")
    assert c.loc["q03", "mode"] == SAME_DOMAIN and "github_create_pr" in c.loc["q03", "siblings_sent"]
    assert c.loc["q04", "mode"] == SAME_DOMAIN and "jira_create_issue" in c.loc["q04", "siblings_sent"]
    assert c.loc["q05", "mode"] == SHORT_GENERIC
    assert c.loc["q06", "mode"] == SHORT_GENERIC
