import pytest

from toolsel import Tool
from toolsel.text import (check_fields, field_text, parameter_items, split_identifier,
                          token_set, tokenize, tool_text)


def test_article_tokenizer():
    assert tokenize("What's 340 divided by 12?") == ["what", "s", "340", "divided", "by", "12"]
    assert tokenize("github_create_issue") == ["github", "create", "issue"]
    assert tokenize("getPM2.5Level") == ["getpm2", "5level"]
    assert tokenize("") == [] and token_set("a a b") == {"a", "b"}


@pytest.mark.parametrize("name, words", [
    ("getPM2.5Level", ["get", "pm", "2", "5", "level"]),
    ("PDF&URLTool", ["pdf", "url", "tool"]),
    ("github_create_issue", ["github", "create", "issue"]),
    ("HTTPServerError404", ["http", "server", "error", "404"]),
    ("listRepos", ["list", "repos"]),
    ("ÜberTool", ["ber", "tool"]),
])
def test_split_identifier(name, words):
    assert split_identifier(name) == words


def test_fields():
    tool = Tool("getUser", "Fetch a user.", {"type": "object", "properties": {
        "userId": {"type": "string", "description": "The user's id"},
        "opts": {"type": "object", "properties": {"includeTeams": {"type": "boolean"}}}}})
    assert field_text(tool, "name") == "getUser"
    assert field_text(tool, "name_words") == "get user"
    assert field_text(tool, "param_names") == "user id opts include teams"
    assert field_text(tool, "param_descriptions") == "The user's id"
    assert parameter_items(tool.parameters)[0] == ("userId", "The user's id")
    assert tool_text(tool) == "getUser Fetch a user."
    assert tool_text(Tool("x", "y"), ["param_names", "description"]) == "y"


def test_check_fields_rejects_unknown():
    assert check_fields("name") == ("name",)
    with pytest.raises(ValueError, match="unknown field 'title'"):
        check_fields(["name", "title"])
    with pytest.raises(ValueError, match="at least one"):
        check_fields([])
