"""Loading and validating registries and query files, on the real data and on bad input."""

import json

import pytest

from toolsel import DataError, Registry, Tool, load_queries, load_registry
from toolsel.eval.metrics import payload_chars

ARTICLE_TOOLS = ["github_create_issue", "github_create_pr", "jira_create_issue",
                 "jira_transition_issue", "slack_send_dm", "slack_search_messages", "read_file",
                 "write_file", "calculator", "weather_lookup", "stock_price", "translate_text"]


# -- the real data files ------------------------------------------------------------------------

def test_registry_is_the_61_tool_benchmark(registry):
    assert len(registry) == 61
    for name in ARTICLE_TOOLS:
        assert name in registry
    # the article's unfiltered name+description payload was 5,523 characters
    assert abs(payload_chars(registry) - 5523) / 5523 < 0.03
    assert {"read_file", "write_file"} <= registry.always_include
    assert all(t.parameters and t.parameters["type"] == "object" for t in registry)
    assert all(t.domain for t in registry)


def test_queries_are_the_30_labeled_queries(queries):
    assert len(queries) == 30
    assert sum(q.phrasing == "direct" for q in queries) == 15
    assert sum(q.phrasing == "indirect" for q in queries) == 15
    assert 16 <= len({q.domain for q in queries}) <= 20
    texts = {q.query for q in queries}
    for article_query in ["file a bug report on the backend repo",
                          "mark this jira ticket as in progress", "what's 340 divided by 12",
                          "send a direct message to alice on slack",
                          "let the team know in the channel that the deploy finished"]:
        assert article_query in texts


# -- formats ------------------------------------------------------------------------------------

def _write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.mark.parametrize("key", ["parameters", "input_schema", "inputSchema"])
def test_schema_key_aliases(tmp_path, key):
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    path = _write(tmp_path, "r.json", [{"name": "search", "description": "Search.", key: schema}])
    (tool,) = load_registry(path)
    assert tool.parameters == schema


def test_null_schema_means_no_parameters(tmp_path):
    path = _write(tmp_path, "r.json", [{"name": "ping", "description": "Ping.",
                                        "parameters": None}])
    (tool,) = load_registry(path)
    assert tool.parameters is None and "parameters" not in tool.metadata


def test_jsonl_openai_wrapper_and_mcp_tools_list(tmp_path):
    jsonl = _write(tmp_path, "r.jsonl", '{"name": "a", "description": "A."}\n\n'
                   '{"type": "function", "function": {"name": "b", "description": "B."}}\n')
    assert load_registry(jsonl).names == ["a", "b"]
    mcp = _write(tmp_path, "mcp.json", {"result": {"tools": [
        {"name": "c", "description": "C.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": True}}]}})
    (tool,) = load_registry(mcp)
    assert tool.metadata["annotations"] == {"readOnlyHint": True}


def test_tool_value_semantics():
    a = Tool("calculator", "evaluate")
    assert a == Tool("calculator", "evaluate") and hash(a) == hash(Tool("calculator", "evaluate"))
    with pytest.raises(AttributeError):
        a.name = "x"  # frozen
    rec = Tool("x", "y", {"type": "object"}, {"domain": "d"}).to_record()
    assert rec == {"name": "x", "description": "y", "domain": "d",
                   "parameters": {"type": "object"}}


# -- bad input: each gets its own clear error ---------------------------------------------------

@pytest.mark.parametrize("content, location, field, reason", [
    ('[{"name": "a", "description": "A"}, {"name": "a", "description": "B"}]',
     "item 2", "name", "duplicate tool name 'a' (first at item 1)"),
    ('[{"name": "a", "description": "  "}]', "item 1 (tool 'a')", "description", "is empty"),
    ('[{"name": "a"}]', "item 1 (tool 'a')", "description", "missing"),
    ('[{"description": "x"}]', "item 1", "name", "missing"),
    ('[{"name": 3, "description": "x"}]', "item 1", "name", "expected a string, got int"),
    ('[{"name": "a", "description": "A", "parameters": []}]', "item 1 (tool 'a')",
     "parameters", "expected a JSON Schema object, got list"),
    ('[{"name": "a", "description": "A", "inputSchema": {"type": "string"}}]',
     "item 1 (tool 'a')", "inputSchema", "type 'object'"),
    ('[{"name": "a", "description": "A", "parameters": {"type": "object", "properties": '
     '{"x": {}}, "required": ["y"]}}]', "item 1 (tool 'a')", "parameters.required", "'y'"),
    ('[{"name": "a", "description": "A", "parameters": {}, "input_schema": {}}]',
     "item 1 (tool 'a')", "input_schema", "give the schema once"),
    ('[{"name": "a", "description": "A", "always_include": "yes"}]', "item 1 (tool 'a')",
     "always_include", "true or false"),
    ('{"name": "a", "description": "A"}\n{"name": "b" "description": "B"}\n', "line 2", None,
     "invalid JSON"),
    ('[1, 2]', "item 1", None, "expected a tool object, got int"),
])
def test_registry_errors(tmp_path, content, location, field, reason):
    path = _write(tmp_path, "bad.jsonl" if content.startswith("{") else "bad.json", content)
    with pytest.raises(DataError) as err:
        load_registry(path)
    e = err.value
    assert e.path == str(path) and e.location == location and e.field == field
    assert reason in e.reason
    assert str(path) in str(e) and location in str(e)


def test_registry_file_errors(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        load_registry(tmp_path / "nope.json")
    with pytest.raises(DataError, match="file is empty"):
        load_registry(_write(tmp_path, "empty.json", "  \n"))
    with pytest.raises(DataError, match="line 1, column"):
        load_registry(_write(tmp_path, "broken.json", "[{]"))


def test_in_memory_registry_rejects_duplicates():
    with pytest.raises(DataError, match="duplicate tool name 'a'"):
        Registry([Tool("a", "x"), Tool("a", "y")])
    with pytest.raises(KeyError, match="did you mean 'calculator'"):
        Registry([Tool("calculator", "x")]).index("calculater")


@pytest.fixture
def small_registry(tmp_path):
    return load_registry(_write(tmp_path, "r.json", [
        {"name": "github_create_issue", "description": "Create an issue."},
        {"name": "github_create_pr", "description": "Open a pull request."}]))


@pytest.mark.parametrize("line, field, reason", [
    ('{"id": "q1", "query": "x", "expected": ["github_create_isue"]}', "expected",
     "'github_create_isue' is not a tool in the registry; did you mean 'github_create_issue'"),
    ('{"id": "q1", "query": "", "expected": ["github_create_pr"]}', "query", "is empty"),
    ('{"id": "q1", "query": "x", "expected": []}', "expected", "non-empty list"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr", "github_create_pr"]}',
     "expected", "twice"),
    ('{"query": "x", "expected": ["github_create_pr"]}', "id", "missing"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], "phrasing": "oblique"}',
     "phrasing", "direct"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], "split": "validation"}',
     "split", "dev"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], "grades": [2]}',
     "grades", "expected an object {tool: grade}, got list"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], '
     '"grades": {"github_create_issue": 2}}',
     "grades.github_create_issue", "not in 'expected'"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], '
     '"grades": {"github_create_pr": 0}}', "grades.github_create_pr", "integer grade >= 1"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], '
     '"grades": {"github_create_pr": 1.5}}', "grades.github_create_pr", "integer grade >= 1"),
    ('{"id": "q1", "query": "x", "expected": ["github_create_pr"], "tags": [1]}', "tags",
     "list of strings"),
])
def test_query_errors(tmp_path, small_registry, line, field, reason):
    good = '{"id": "q0", "query": "open a pr", "expected": ["github_create_pr"]}\n'
    path = _write(tmp_path, "q.jsonl", good + line + "\n")
    with pytest.raises(DataError) as err:
        load_queries(path, small_registry)
    assert err.value.location.startswith("line 2")
    assert err.value.field == field and reason in err.value.reason


def test_query_grades_and_train_split(tmp_path, small_registry):
    path = _write(tmp_path, "q.jsonl", '{"id": "q1", "query": "x", "expected": ["github_create_pr"'
                  ', "github_create_issue"], "grades": {"github_create_pr": 2}, "split": "train"}\n')
    (q,) = load_queries(path, small_registry)
    assert q.grades == {"github_create_pr": 2} and "grades" not in q.metadata
    assert q.gain("github_create_pr") == 2 and q.gain("github_create_issue") == 1
    assert q.split == "train"


def test_duplicate_query_ids(tmp_path, small_registry):
    line = '{"id": "q1", "query": "x", "expected": ["github_create_pr"]}\n'
    with pytest.raises(DataError, match=r"q.jsonl, line 2: field 'id': duplicate query id "
                                        r"'q1' \(first at line 1\)"):
        load_queries(_write(tmp_path, "q.jsonl", line * 2), small_registry)


def test_queries_without_registry_skip_name_check(tmp_path):
    path = _write(tmp_path, "q.jsonl", '{"id": 7, "query": "x", "expected": "anything"}\n')
    (q,) = load_queries(path)
    assert q.id == "7" and q.expected == ("anything",)
