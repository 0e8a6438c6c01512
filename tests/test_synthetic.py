"""The synthetic registry and query generator: deterministic, sized, valid through the loaders."""

from __future__ import annotations

import re

import pytest

from toolsel import Selector, Tool, load_queries, load_registry
from toolsel.synthetic import (synthetic_queries, synthetic_registry, write_queries,
                               write_registry)


@pytest.fixture(scope="module")
def reg():
    return synthetic_registry(1000, seed=0)


def test_sizes_and_determinism(reg):
    assert len(reg) == 1000
    again = synthetic_registry(1000, seed=0)
    assert [t.to_record() for t in again] == [t.to_record() for t in reg]
    other = synthetic_registry(1000, seed=1)
    assert [t.name for t in other] != [t.name for t in reg]
    # a smaller registry from the same seed is a prefix of the larger one
    assert synthetic_registry(300, seed=0).names == reg.names[:300]
    for n in (1, 2, 5, 61):
        assert len(synthetic_registry(n)) == n
    qs = synthetic_queries(reg, 250, seed=0)
    assert len(qs) == 250 and qs == synthetic_queries(reg, 250, seed=0)
    assert qs != synthetic_queries(reg, 250, seed=1)
    assert len(synthetic_queries(reg, 3000)) == 3000  # more queries than tools


def test_registry_is_varied(reg):
    names = reg.names
    assert len(set(names)) == len(names)
    assert reg.always_include == {"read_file", "write_file", "list_directory", "todo_write"}
    assert names[:4] == ["read_file", "write_file", "list_directory", "todo_write"]
    styles = {"snake": r"^[a-z]+_[a-z]+_[a-z]+$", "camel": r"^[a-z]+[A-Z][a-z]+[A-Z][a-z]+$",
              "dotted": r"^[a-z]+\.[a-z]+\.[a-z]+$"}
    counts = {s: sum(bool(re.match(p, n)) for n in names[4:]) for s, p in styles.items()}
    assert all(c > 100 for c in counts.values()) and sum(counts.values()) == len(names) - 4
    servers = {t.domain for t in reg}
    assert len(servers) > 100
    assert len({t.description for t in reg}) > 0.9 * len(reg)
    for t in list(reg)[4:]:
        props = t.parameters["properties"]
        assert t.parameters["type"] == "object" and f"{t.metadata['resource']}_id" in props
        assert all(p["description"] for p in props.values())


def test_queries_are_labeled_with_registry_tools(reg):
    qs = synthetic_queries(reg, 400, seed=0)
    assert len({q.id for q in qs}) == len(qs)
    assert all(len(q.expected) == 1 and q.expected[0] in reg for q in qs)
    assert {q.phrasing for q in qs} == {"direct", "indirect"}
    assert not any(reg.get(q.expected[0]).always_include for q in qs)
    # indirect queries use held-out words: the tool's action verb is not in the query
    indirect = [q for q in qs if q.phrasing == "indirect"]
    shared = sum(reg.get(q.expected[0]).metadata["action"] in q.query.split() for q in indirect)
    assert shared < 0.1 * len(indirect)


def test_written_files_load_back(reg, tmp_path):
    qs = synthetic_queries(reg, 100, seed=2)
    rpath = write_registry(reg, tmp_path / "reg.jsonl")
    qpath = write_queries(qs, tmp_path / "q.jsonl")
    loaded = load_registry(rpath)
    assert [t.to_record() for t in loaded] == [t.to_record() for t in reg]
    assert load_queries(qpath, loaded) == qs
    assert not list(tmp_path.glob(".*"))  # no temporary files left


def test_lexical_scorers_find_most_direct_queries(reg):
    qs = synthetic_queries(reg, 300, seed=0)
    direct = [q for q in qs if q.phrasing == "direct"]
    sel = Selector(reg, "bm25", top_k=10)
    hits = sum(q.expected[0] in sel.select(q.query) for q in direct)
    assert hits > 0.8 * len(direct)


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_tools"):
        synthetic_registry(0)
    with pytest.raises(ValueError, match="n_queries"):
        synthetic_queries(synthetic_registry(10), 0)
    with pytest.raises(ValueError, match="no synthetic tools"):
        synthetic_queries([Tool("calculator", "evaluate arithmetic")], 5)


def test_cli_writes_loadable_files(tmp_path, capsys):
    from toolsel.cli import main
    r, q = tmp_path / "r.jsonl", tmp_path / "q.jsonl"
    assert main(["synthetic", "--tools", "300", "--n-queries", "20", "--seed", "3",
                 "--registry-out", str(r), "--queries-out", str(q)]) == 0
    assert "300 tools" in capsys.readouterr().out
    reg = load_registry(r)
    assert reg.names == synthetic_registry(300, seed=3).names
    assert load_queries(q, reg) == synthetic_queries(reg, 20, seed=3)
