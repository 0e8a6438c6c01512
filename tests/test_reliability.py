"""Issue 13: hostile inputs and faults. One regression test per numbered case (2-8, 10),
property-based tests, a kill-the-sweep fault injection, and contended concurrency."""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, ROOT
from toolsel import Tool, load_queries, load_registry
from toolsel import data as data_mod
from toolsel.cli import main
from toolsel.data import DataError, ToolNameWarning, read_records
from toolsel.eval.metrics import complete_at_k, recall_at_k, reciprocal_rank, success_at_k
from toolsel.integrations.importers import MissingDescriptionWarning, import_files
from toolsel.ranking import rank_order, top_k_indices
from toolsel.scorers.fusion import split_clauses
from toolsel.text import tokenize

SWEEP_FILES = ("summary.csv", "query_metrics.csv", "per_query.csv", "misses.csv")
_CLI = "import sys; from toolsel.cli import main; sys.exit(main(sys.argv[1:]))"


def _write(tmp_path, name, content) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content),
                        encoding="utf-8")
    return path


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _sweep_cmd(out, top_k: str) -> list[str]:
    return [sys.executable, "-c", _CLI, "sweep", "--registry", str(DATA / "registry.json"),
            "--queries", str(DATA / "queries.jsonl"), "--scorers", "jaccard", "--top-k", top_k,
            "--out", str(out), "--no-progress", "--no-timings"]


def _sweep_set(out: Path) -> set[str] | None:
    """The top-k set each of the four tables was written for: one value if consistent."""
    if not out.exists():
        return None
    assert sorted(p.name for p in out.iterdir()) == sorted(SWEEP_FILES)
    summary = pd.read_csv(out / "summary.csv")
    qm = pd.read_csv(out / "query_metrics.csv")
    pq = pd.read_csv(out / "per_query.csv")
    misses = pd.read_csv(out / "misses.csv")
    ks = {",".join(map(str, sorted(summary["top_k"].unique()))),
          ",".join(map(str, sorted(qm["top_k"].unique()))),
          ",".join(map(str, sorted(int(c[4:]) for c in pq.columns if c.startswith("hit@"))))}
    if len(misses):
        assert set(misses["top_k"]) <= {int(k) for k in next(iter(ks)).split(",")}
    assert len(qm) == len(summary) * 30
    return ks


# -- item 2: two writers, one folder --------------------------------------------------------

def test_two_sweeps_into_one_folder_never_interleave(tmp_path):
    out = tmp_path / "same"
    procs = [subprocess.Popen(_sweep_cmd(out, k), env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in ("1,3", "5,10")]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert _sweep_set(out) in ({"1,3"}, {"5,10"})
    assert sorted(os.listdir(tmp_path)) == ["same"]  # no staging or temp leftovers


# -- item 3: a killed sweep leaves the old set or the new one -------------------------------

@pytest.mark.slow
def test_killed_sweep_leaves_a_complete_old_or_new_set(tmp_path):
    out = tmp_path / "out"
    assert subprocess.run(_sweep_cmd(out, "1,3"), env=_env(), capture_output=True).returncode == 0
    rng = random.Random(13)
    seen = set()
    for i in range(6):
        proc = subprocess.Popen(_sweep_cmd(out, "5,10" if i % 2 else "1,3,20"), env=_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.5, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state = _sweep_set(out)
        assert state is not None and len(state) == 1, state
        seen |= state
    # the next run cleans whatever the killed ones left beside the folder
    assert subprocess.run(_sweep_cmd(out, "3"), env=_env(), capture_output=True).returncode == 0
    assert _sweep_set(out) == {"3"} and sorted(os.listdir(tmp_path)) == ["out"]


def test_kill_at_every_step_of_a_set_write(tmp_path):
    """Deterministic fault injection: the process dies (os._exit) at each step of write_set."""
    import toolsel.io as io
    out = tmp_path / "out"
    io.write_set(out, {"a.txt": "old", "b.txt": "old"})
    steps = ["stage", "exchange", "cleanup"]
    for step in steps:
        pid = os.fork()
        if pid == 0:  # child: die at `step`
            try:
                if step == "stage":
                    io.write_set(out, {"a.txt": "new", "b.txt": lambda p: os._exit(9)})
                elif step == "exchange":
                    io._exchange_at = lambda dfd, a, b: os._exit(9)
                    io.write_set(out, {"a.txt": "new", "b.txt": "new"})
                else:
                    io.shutil.rmtree = lambda *a, **k: os._exit(9)
                    io.write_set(out, {"a.txt": "new", "b.txt": "new"})
            finally:
                os._exit(1)
        os.waitpid(pid, 0)
        contents = {(out / n).read_text() for n in ("a.txt", "b.txt")}
        assert contents in ({"old"}, {"new"}), (step, contents)
    io.write_set(out, {"a.txt": "last", "b.txt": "last"})
    assert sorted(os.listdir(tmp_path)) == ["out"]


# -- item 4: several processes fitting into one cache ---------------------------------------

_CACHE_WORKER = """
import sys, warnings, numpy as np
from toolsel.scorers.embedding_cache import EmbeddingCache, text_hash
warnings.simplefilter("error")
cache = EmbeddingCache("fake-model", sys.argv[1])
seed = int(sys.argv[2])
def encode(texts):
    return np.stack([np.frombuffer(text_hash(t), dtype=np.uint8)[:8].astype(np.float32)
                     for t in texts])
for i in range(40):
    texts = [f"text {seed} {i} {j}" for j in range(3)] + [f"shared {i % 7}"]
    vectors, _ = cache.get_or_encode(texts, encode, dim=8)
    assert np.array_equal(vectors, encode(texts))
"""


def test_processes_fitting_into_one_cache_lose_nothing(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _CACHE_WORKER, str(tmp_path), str(s)],
                              env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for s in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    from toolsel.scorers.embedding_cache import EmbeddingCache, text_hash
    cache = EmbeddingCache("fake-model", tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = cache.load(8)
    wanted = {f"text {s} {i} {j}" for s in range(3) for i in range(40) for j in range(3)}
    assert {text_hash(t) for t in wanted} <= set(table)  # every process's vectors are there
    assert not [p for p in cache.directory.iterdir() if p.suffix == ".part"]


def test_cache_files_follow_umask_and_temp_names_never_match_shards(tmp_path):
    from toolsel.scorers.embedding_cache import EmbeddingCache
    old = os.umask(0o022)
    try:
        cache = EmbeddingCache("m", tmp_path)
        cache.store(["a"], np.ones((1, 4), np.float32))
        (cache.directory / ".half.npz.part").write_bytes(b"PK\x03\x04 half written")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(cache.load(4)) == 1
        (shard,) = cache._shards()
        assert stat.S_IMODE(shard.stat().st_mode) == 0o644
        assert (cache.directory / ".half.npz.part").exists()  # another writer's file: kept
    finally:
        os.umask(old)


# -- item 5: tracebacks become one-line errors ----------------------------------------------

def _registry_error(path) -> DataError:
    with pytest.raises(DataError) as err:
        load_registry(path)
    return err.value


def test_folder_unreadable_device_and_oversized_inputs(tmp_path, monkeypatch):
    assert "is a folder" in str(_registry_error(tmp_path))
    monkeypatch.setattr(data_mod, "MAX_INPUT_BYTES", 1024)
    err = _registry_error("/dev/zero")
    assert err.path == "/dev/zero" and "is a device" in err.reason  # refused before reading
    big = _write(tmp_path, "big.json", "[" + ",".join(['{"name": "a", "description": "b"}'] * 100)
                 + "]")
    assert "larger than" in _registry_error(big).reason
    if os.geteuid() != 0:
        secret = _write(tmp_path, "secret.json", "[]")
        secret.chmod(0)
        assert "cannot read it: Permission denied" in str(_registry_error(secret))


def test_deep_nesting_huge_numbers_and_non_json_constants(tmp_path):
    schema = '{"type": "object", "properties": {"a": ' * 250 + "{}" + "}}" * 250  # 500 levels
    deep = _write(tmp_path, "deep.json", '[{"name": "deep_tool", "description": "x", '
                  f'"parameters": {schema}}}]')
    err = _registry_error(deep)
    assert "nested more than" in err.reason and "deep_tool" in err.location
    assert err.field.startswith("parameters.properties")
    very_deep = _write(tmp_path, "vd.json", "[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in _registry_error(very_deep).reason
    digits = _write(tmp_path, "d.jsonl", '{"name": "a", "description": "b", "n": ' + "9" * 5000
                    + "}\n")
    err = _registry_error(digits)
    assert err.location == "line 1" and "digits" in err.reason and "sys.set_int" not in err.reason
    for constant in ("NaN", "Infinity", "-Infinity", "1e999"):
        bad = _write(tmp_path, "c.json", '[{"name": "a", "description": "b", "parameters": '
                     '{"type": "object", "maximum": %s}}]' % constant)
        assert "invalid JSON" in _registry_error(bad).reason, constant


def test_cli_out_problems_are_refused_before_any_work(tmp_path, capsys, monkeypatch):
    import toolsel.cli.sweep as cli_sweep
    monkeypatch.setattr(cli_sweep, "load_registry",
                        lambda *a, **k: pytest.fail("loaded data before checking --out"))
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir" / "summary.csv").mkdir(parents=True)
    args = ["sweep", "--registry", str(DATA / "registry.json"), "--queries",
            str(DATA / "queries.jsonl"), "--scorers", "jaccard", "--out"]
    assert main(args + [str(tmp_path / "file")]) == 2
    assert "file: exists and is not a folder" in capsys.readouterr().err
    assert main(args + [str(tmp_path / "dir")]) == 2
    assert "summary.csv: is a folder" in capsys.readouterr().err
    assert main(["import", "--from", "mcp", str(DATA / "registry.json"), "--out",
                 str(tmp_path / "dir")]) == 2
    assert "is a folder; give a file name" in capsys.readouterr().err
    assert main(["synthetic", "--tools", "10", "--registry-out",
                 str(tmp_path / "file" / "r.jsonl")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_cli_turns_any_oserror_into_one_line(tmp_path, capsys, monkeypatch):
    import toolsel.cli.validate as cli_validate

    def denied(*a, **k):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x.json"))
    monkeypatch.setattr(cli_validate, "load_registry", denied)
    assert main(["validate", "--registry", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert err == f"toolsel validate: error: {tmp_path / 'x.json'}: Permission denied\n"


# -- item 6: consistent acceptance ----------------------------------------------------------

def test_paged_tools_list_is_refused_by_load_registry(tmp_path):
    page = _write(tmp_path, "page.json", {"jsonrpc": "2.0", "id": 1, "result": {
        "tools": [{"name": "a", "description": "b", "inputSchema": {"type": "object"}}],
        "nextCursor": "page-2"}})
    err = _registry_error(page)
    assert err.field == "nextCursor" and "one page of a paged tools/list" in err.reason
    with pytest.raises(DataError, match="one page"):
        import_files([page], "mcp")


def test_lone_surrogates_are_refused_at_validate_time(tmp_path):
    bad = _write(tmp_path, "s.jsonl", '{"name": "a", "description": "fine"}\n'
                 '{"name": "b", "description": "bad \\ud800 text"}\n')
    err = _registry_error(bad)
    assert (err.location, err.field) == ("line 2 (tool 'b')", "description")
    assert "lone surrogate" in err.reason
    pair = _write(tmp_path, "ok.jsonl", '{"name": "a", "description": "emoji \\ud83d\\ude00"}\n')
    assert load_registry(pair)[0].description == "emoji \U0001F600"  # a valid pair is fine


@pytest.mark.parametrize("name", ["has space", "emoji\U0001F600", "../etc", "x" * 300, "a&b"])
def test_names_apis_refuse_warn_and_strict_refuses(tmp_path, name):
    path = _write(tmp_path, "r.json", [{"name": "ok_name", "description": "d"},
                                       {"name": name, "description": "d"}])
    with pytest.warns(ToolNameWarning, match=r"r\.json: field 'name': 1 tool name") as rec:
        assert len(load_registry(path)) == 2
    assert "(item 2)" in str(rec[0].message)
    with pytest.raises(DataError) as err:
        load_registry(path, strict=True)
    assert err.value.field == "name" and err.value.location.startswith("item 2 (tool ")


def test_mcp_dotted_names_pass_by_default_and_strict_checks_openai_rules(tmp_path):
    path = _write(tmp_path, "r.json", [{"name": "server.tool", "description": "d"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_registry(path)
    with pytest.raises(DataError, match="OpenAI and Anthropic"):
        load_registry(path, strict=True)
    assert main(["validate", "--strict", "--registry", str(path)]) == 2


def test_bom_is_accepted_and_items_are_1_based(tmp_path):
    bom = _write(tmp_path, "bom.json", b"\xef\xbb\xbf" + json.dumps(
        [{"name": "a", "description": "b"}]).encode())
    assert load_registry(bom).names == ["a"]
    bomq = _write(tmp_path, "q.jsonl", b"\xef\xbb\xbf" + b'{"id": 1, "query": "x", '
                  b'"expected": ["a"]}\n')
    assert load_queries(bomq, load_registry(bom))[0].id == "1"
    dup = _write(tmp_path, "dup.json", [{"name": "a", "description": "b"},
                                        {"name": "a", "description": "c"}])
    err = _registry_error(dup)
    assert err.location == "item 2" and "first at item 1" in err.reason


# -- item 7: MCP tools without a description ------------------------------------------------

def test_mcp_tool_without_description_is_imported_with_fallback(tmp_path, capsys):
    dump = _write(tmp_path, "srv.json", {"tools": [
        {"name": "create_issue", "title": "Create an issue", "inputSchema": {"type": "object"}},
        {"name": "listOpenRepos", "inputSchema": {"type": "object"}},
        {"name": "ok", "description": "Fine", "inputSchema": {"type": "object"}}]})
    with pytest.warns(MissingDescriptionWarning, match="2 MCP tool"):
        reg = import_files([dump], "mcp")
    assert [t.description for t in reg] == ["Create an issue", "list open repos", "Fine"]
    assert [t.metadata.get("description_fallback") for t in reg] == ["title", "name", None]
    out = tmp_path / "reg.json"
    assert main(["import", "--from", "mcp", str(dump), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2 tools had no description" in captured.out
    assert captured.err.startswith("toolsel import: warning: ") and "srv.json: 2 MCP" in captured.err
    assert load_registry(out)[1].description == "list open repos"
    assert main(["import", "--strict", "--from", "mcp", str(dump), "--out",
                 str(tmp_path / "r2.json")]) == 2
    assert "field 'description'" in capsys.readouterr().err
    assert not (tmp_path / "r2.json").exists()


# -- item 8: synthetic sizes ----------------------------------------------------------------

def test_synthetic_never_hangs(monkeypatch):
    import toolsel.synthetic as synthetic
    with pytest.raises(ValueError, match="MAX_TOOLS"):
        synthetic.synthetic_registry(synthetic.MAX_TOOLS + 1)
    # a pool of 12 server names runs dry after a few dozen tools: numbers take over
    monkeypatch.setattr(synthetic, "_SYLLABLES", ("ka", "lo"))
    reg = synthetic.synthetic_registry(600, seed=1)
    assert len(reg) == 600 and len(set(reg.names)) == 600


# -- item 10: umask for import --------------------------------------------------------------

def test_import_output_follows_umask(tmp_path):
    dump = _write(tmp_path, "srv.json", {"tools": [{"name": "a", "description": "b",
                                                    "inputSchema": {"type": "object"}}]})
    old = os.umask(0o022)
    try:
        assert main(["import", "--from", "mcp", str(dump), "--out", str(tmp_path / "r.json")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644


# -- property-based -------------------------------------------------------------------------

scores_st = st.lists(st.one_of(st.integers(-3, 3).map(float), st.just(float("nan"))),
                     min_size=1, max_size=30)


@settings(deadline=None)
@given(scores_st, st.integers(0, 35))
def test_top_k_is_the_head_of_the_ranking_in_registry_order(scores, k):
    s = np.asarray(scores)
    order = rank_order(s)
    assert sorted(order.tolist()) == list(range(len(s)))  # a permutation
    clean = np.where(np.isnan(s), -np.inf, s)
    for a, b in zip(order[:-1], order[1:]):  # best first; ties keep registry order
        assert clean[a] > clean[b] or (clean[a] == clean[b] and a < b)
    top = top_k_indices(s, k)
    assert top.tolist() == sorted(order[:k].tolist())


@settings(deadline=None)
@given(st.lists(st.integers(1, 50), max_size=6), st.integers(1, 60))
def test_metric_bounds_and_monotonicity_in_k(ranks, k):
    r, s, c = recall_at_k(ranks, k), success_at_k(ranks, k), complete_at_k(ranks, k)
    if not ranks:
        assert np.isnan([r, s, c, reciprocal_rank(ranks)]).all()
        return
    assert 0 <= c <= r <= s <= 1
    assert 0 < reciprocal_rank(ranks) <= 1
    assert recall_at_k(ranks, k + 1) >= r and success_at_k(ranks, k + 1) >= s
    assert complete_at_k(ranks, k + 1) >= c


_WORDS = st.sampled_from(["find", "book", "a", "hotel", "and", "then", "also", ",", ".", "!",
                          ";", "Hi", "plus", "flights", "Rome", "\n", "as well as"])


@settings(deadline=None)
@given(st.lists(_WORDS, max_size=25).map(" ".join))
def test_split_clauses_keeps_the_words_in_order(query):
    clauses = split_clauses(query)
    assert clauses
    words = [w for c in clauses for w in tokenize(c)]
    rest = iter(tokenize(query))
    assert all(w in rest for w in words)  # a subsequence: nothing invented or reordered


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                     | st.text(max_size=10),
                     lambda children: st.lists(children, max_size=4)
                     | st.dictionaries(st.sampled_from(["name", "description", "tools",
                                                        "parameters", "type", "properties",
                                                        "id", "query", "expected", "x"]),
                                       children, max_size=5), max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=200), _json.map(lambda v: json.dumps(v).encode())))
def test_loaders_raise_only_data_error(tmp_path, payload):
    for name in ("f.json", "f.jsonl"):
        path = tmp_path / name
        path.write_bytes(payload)
        for load in (load_registry, load_queries, read_records,
                     lambda p: import_files([p], "mcp"), lambda p: import_files([p], "openai")):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    load(path)
            except DataError:
                pass


# -- contended threads -----------------------------------------------------------------------

def test_many_threads_on_one_selector_and_one_session(registry, queries):
    from toolsel import Selector
    selector = Selector(registry, "bm25", top_k=5)
    texts = [q.query for q in queries]
    expected = [selector.select_definitions(t) for t in texts]
    session = selector.session()
    hits = {t: selector.discover(t) for t in texts}
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(offset):
        try:
            barrier.wait()
            for i in range(len(texts) * 2):
                j = (i + offset) % len(texts)
                assert selector.select_definitions(texts[j]) == expected[j]
                session.discover(texts[j])
                pinned = session.pinned
                assert len(pinned) == len(set(pinned))
                assert set(session.select(texts[j])) >= set(pinned)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert set(session.pinned) == {h.name for h in hits.values() if h is not None}
