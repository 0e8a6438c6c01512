"""Issue 31: files toolsel wrote earlier are untrusted input; nothing outside the target is
ever touched.

One regression test per reproduction (1-12) and the new cases of the closing note. Every test
builds a sentinel tree around the target (a fake home folder with a victim file, siblings of
the output folder, files in its parent) and checks, by hashing every file and link of it
before and after, that the command changed nothing outside its target. Commands run for real
(``toolsel.cli.main`` in process, papermill kernels for reports, processes for concurrency).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, ROOT, snapshot
from toolsel import load_queries, load_registry
from toolsel.cli import main
from toolsel.data import read_records
from toolsel.io import write_jsonl
from toolsel.report.output import MANIFEST

# the new functions are imported where used, so that this file also runs on the code before
# the fix (every test then fails on its own, for the closing note's table)


# --------------------------------------------------------------------------------------------
# the sentinel tree


class Sentinel:
    """A fake home and a work folder around the target ``work/<name>``."""

    def __init__(self, root: Path, monkeypatch):
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        (self.home / "victim.txt").write_text("the user's file in their home\n")
        (self.home / ".bashrc").write_text("export PS1='$ '\n")
        monkeypatch.setenv("HOME", str(self.home))
        self.work = root / "work"
        (self.work / "outside").mkdir(parents=True)
        (self.work / "outside" / "v1.txt").write_text("beside the output\n")
        (self.work / "docs").mkdir()
        for n in ("a.md", "b.md"):
            (self.work / "docs" / n).write_text(f"doc {n}\n")
        (self.work / "notes.txt").write_text("parent file\n")
        self.before: dict[str, str] = {}

    def freeze(self, target: Path) -> None:
        self.target = target
        self.before = snapshot(self.root, target)

    def unchanged(self) -> None:
        after = snapshot(self.root, self.target)
        changed = {k for k in set(self.before) | set(after) if self.before.get(k) != after.get(k)}
        assert not changed, f"changed outside the target: {sorted(changed)}"


@pytest.fixture
def sentinel(tmp_path, monkeypatch, tmp_path_factory):
    # kernels and plotting write their own files under HOME: away from the sentinel tree
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "MPLCONFIGDIR", "IPYTHONDIR",
                "XDG_CACHE_HOME"):
        monkeypatch.setenv(var, str(elsewhere / var.lower()))
    return Sentinel(tmp_path, monkeypatch)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def _sweep(out: Path) -> int:
    return main(["sweep", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "queries.jsonl"), "--scorers", "bm25", "--top-k", "3",
                 "--out", str(out), "--no-progress", "--no-timings"])


def _notebook(path: Path) -> Path:
    """A tiny notebook of the report convention (registry and queries needed)."""
    cells = [
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": f"# {path.stem}"},
        {"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]}, "outputs": [],
         "execution_count": None,
         "source": 'registry: str = "r"  # registry\nqueries: str = "q"  # queries\n'
                   'out_dir: str = "out"  # where tables go'},
        {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import pathlib\np = pathlib.Path(out_dir)\np.mkdir(parents=True, "
                   "exist_ok=True)\n(p / 'a.csv').write_text('x\\n1\\n')"}]
    meta = {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"},
            "toolsel": {"needs": ["registry", "queries"]}}
    path.write_text(json.dumps({"cells": cells, "metadata": meta, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def _report(nb: Path, out: Path, *extra: str) -> int:
    return main(["report", "--notebooks", str(nb), "--registry", str(DATA / "registry.json"),
                 "--queries", str(DATA / "queries.jsonl"), "--scorers", "jaccard", "--top-k",
                 "3", "--out", str(out), "--no-html", *extra])


def _nb(root: Path) -> Path:
    nb = root / "nb"
    nb.mkdir()
    _notebook(nb / "01_t.ipynb")
    return nb


def _forged_journal(out: Path, sentinel: Sentinel, name: str = ".toolsel-commit-x") -> None:
    """Reproduction 1: a commit journal whose removal list names files outside ``out``."""
    (out / name).mkdir(parents=True)
    (out / name / ".remove").write_text(f"{sentinel.home / 'victim.txt'}\n../outside/v1.txt\n"
                                        "../notes.txt\n")


# --------------------------------------------------------------------------------------------
# 1-3: journals, links, folders named like ours


def test_1_journal_paths_never_leave_the_folder_sweep(sentinel, capsys):
    out = sentinel.work / "sw"
    _forged_journal(out, sentinel)
    sentinel.freeze(out)
    assert _sweep(out) == 0
    sentinel.unchanged()
    assert (out / ".toolsel-commit-x" / ".remove").exists()  # not ours: left as it was
    assert (out / "summary.csv").is_file()


def test_2_a_symlinked_journal_is_never_followed(sentinel):
    out = sentinel.work / "sw"
    out.mkdir()
    (out / ".toolsel-commit-zzz").symlink_to(sentinel.work / "docs")
    (out / ".toolsel-staging-zzz").symlink_to(sentinel.work / "outside")
    sentinel.freeze(out)
    assert _sweep(out) == 0
    sentinel.unchanged()
    assert sorted(p.name for p in (sentinel.work / "docs").iterdir()) == ["a.md", "b.md"]
    assert not (out / "a.md").exists() and (out / ".toolsel-commit-zzz").is_symlink()


def test_3_folders_named_like_leftovers_beside_a_sweep_are_kept(sentinel):
    out = sentinel.work / "sw"
    assert _sweep(out) == 0
    for name in (".sw.old-mine", ".sw.staging-area", ".sw.toolsel-journal-abc"):
        (sentinel.work / name).mkdir()
        (sentinel.work / name / "keep.txt").write_text("mine\n")
    # a journal copied from elsewhere (another machine, a clone): its folder is not this one
    (sentinel.work / ".sw.toolsel-journal-0123").write_text(json.dumps(
        {"kind": "toolsel set journal", "id": "0123", "out": "sw", "parent": [1, 2],
         "old": None}))
    (sentinel.work / ".sw.staging-0123").mkdir()
    (sentinel.work / ".sw.staging-0123" / "keep.txt").write_text("mine\n")
    (out / "sub").mkdir()  # a sub-folder: the in-place path, with its journals inside
    for name in (".toolsel-staging-2024", ".toolsel-build-notes"):
        (out / name).mkdir()
        (out / name / "keep.txt").write_text("mine\n")
    sentinel.freeze(out)
    assert _sweep(out) == 0
    sentinel.unchanged()
    for name in (".toolsel-staging-2024", ".toolsel-build-notes"):
        assert (out / name / "keep.txt").read_text() == "mine\n"


@pytest.mark.slow  # two reports (papermill)
@pytest.mark.parametrize("force", [False, True])
def test_1_to_3_hostile_leftovers_in_and_around_a_report_folder(sentinel, capsys, force):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    if force:  # a user's folder the report was added to
        rep.mkdir()
        (rep / "mine.txt").write_text("the user's\n")
    assert _report(nb, rep, *(["--force"] if force else [])) == 0
    _forged_journal(rep, sentinel)
    (rep / ".toolsel-commit-zzz").symlink_to(sentinel.work / "docs")
    for name in (".toolsel-build-notes", ".toolsel-staging-2024"):
        (rep / name).mkdir()
        (rep / name / "keep.txt").write_text("mine\n")
    for name in (".rep.old-backup", ".rep.staging-area"):
        (sentinel.work / name).mkdir()
        (sentinel.work / name / "keep.txt").write_text("mine\n")
    from toolsel.io import make_private_dir
    killed = make_private_dir(rep / ".toolsel-build-killed")  # a real leftover: cleaned
    (killed / "x.csv").write_text("partial\n")
    sentinel.freeze(rep)
    assert _report(nb, rep, *(["--force"] if force else [])) == 0
    sentinel.unchanged()
    assert not killed.exists()
    for name in (".toolsel-build-notes", ".toolsel-staging-2024"):
        assert (rep / name / "keep.txt").read_text() == "mine\n"
    assert (rep / ".toolsel-commit-zzz").is_symlink()
    if force:
        assert (rep / "mine.txt").read_text() == "the user's\n"


# --------------------------------------------------------------------------------------------
# 4, 5, 12a: the manifest


def _users_files(folder: Path) -> dict[str, bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notes.txt").write_text("my notes\n")
    (folder / "data").mkdir()
    (folder / "data" / "x.csv").write_text("a,b\n1,2\n")
    (folder / "README.md").write_text("# my readme\n")
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*")
            if p.is_file()}


@pytest.mark.slow  # a report (papermill)
def test_4_a_forged_manifest_never_makes_a_report_replace_user_files(sentinel, capsys):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    mine = _users_files(rep)
    # forged as toolsel writes it (sizes and hashes), but for other content: all kept
    from toolsel.report.output import manifest_text
    fake = {rel: {"size": 1, "sha256": "0" * 64} for rel in mine}
    (rep / MANIFEST).write_text(manifest_text(fake))
    sentinel.freeze(rep)
    assert _report(nb, rep) == 0
    sentinel.unchanged()
    for rel, content in mine.items():
        assert (rep / rel).read_bytes() == content
    out = capsys.readouterr().out
    assert "changed since the last report: kept: README.md, data/x.csv, notes.txt" in out
    # the next run still knows they are the user's
    assert _report(nb, rep) == 0
    for rel, content in mine.items():
        assert (rep / rel).read_bytes() == content


@pytest.mark.parametrize("files, why", [(["notes.txt", "data/", "README.md"], "'data/', not a "
                                          "relative path"),
                                         (["notes.txt", "data/x.csv", "README.md"],
                                          "without their content hashes")])
def test_4_a_forged_manifest_without_hashes_is_refused(sentinel, capsys, files, why):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    mine = _users_files(rep)
    (rep / MANIFEST).write_text(json.dumps({"kind": "toolsel report output", "files": files}))
    sentinel.freeze(rep)
    assert _report(nb, rep) == 2
    assert why in _one_line_error(capsys)
    sentinel.unchanged()
    assert {p.relative_to(rep).as_posix(): p.read_bytes() for p in rep.rglob("*")
            if p.is_file() and p.name != MANIFEST} == mine


@pytest.mark.parametrize("text", ["[]", '"a"', "1", "null", '{"kind": "toolsel report '
                                  'output", "files": {"../outside/v1.txt": {"size": 1, '
                                  '"sha256": "' + "0" * 64 + '"}}}',
                                  '{"kind": "toolsel report output", "files": ["/etc/passwd"]}',
                                  "{not json", '{"kind": "toolsel report output", "files": '
                                  '{"a.csv": 3}}'])
def test_12_a_manifest_that_is_not_a_manifest_is_one_line(sentinel, capsys, text):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    rep.mkdir()
    (rep / MANIFEST).write_text(text)
    sentinel.freeze(rep)
    assert _report(nb, rep) == 2
    err = _one_line_error(capsys)
    assert MANIFEST in err
    sentinel.unchanged()
    assert os.listdir(rep) == [MANIFEST]


@pytest.mark.slow  # three reports (papermill)
def test_5_a_force_folder_keeps_explorer_html_on_reruns(sentinel, capsys):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "shared"
    rep.mkdir()
    (rep / "mine.txt").write_text("the user's\n")
    for _ in range(3):
        assert _report(nb, rep, "--force") == 0
        assert (rep / "explorer.html").is_file()
        assert "explorer.html" in (rep / "README.md").read_text()
        assert "explorer.html" in (rep / "index.html").read_text()
    assert (rep / "mine.txt").read_text() == "the user's\n"


@pytest.mark.slow  # two reports (papermill)
def test_5_a_user_csv_in_a_table_folder_survives(sentinel, capsys):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    assert _report(nb, rep) == 0
    (rep / "01_t" / "mine.csv").write_text("the user's\n")
    (rep / "01_t" / "a.csv").write_text("edited by the user\n")  # changed since: kept
    sentinel.freeze(rep)
    assert _report(nb, rep) == 0
    sentinel.unchanged()
    assert (rep / "01_t" / "mine.csv").read_text() == "the user's\n"
    assert (rep / "01_t" / "a.csv").read_text() == "edited by the user\n"
    assert "changed since the last report: kept: 01_t/a.csv" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# 6: places no command writes


def _fake_checkout(root: Path) -> Path:
    co = root / "other-checkout"
    for d in ("toolsel", "data", "tests", "notebooks"):
        (co / d).mkdir(parents=True)
    (co / "toolsel" / "__init__.py").write_text("")
    (co / "pyproject.toml").write_text('[project]\nname = "toolsel"\nversion = "0"\n')
    (co / "data" / "q.jsonl").write_text("")
    return co


def _writers(out: Path, file: Path) -> dict[str, list[str]]:
    reg, q = str(DATA / "registry.json"), str(DATA / "queries.jsonl")
    return {
        "sweep": ["sweep", "--registry", reg, "--queries", q, "--scorers", "jaccard",
                  "--top-k", "1", "--out", str(out), "--no-progress"],
        "report": ["report", "--registry", reg, "--queries", q, "--out", str(out), "--force",
                   "--no-html"],
        "explore": ["explore", "--registry", reg, "--out", str(out), "--no-lab"],
        "runs": ["runs", str(DATA / "runs"), "--registry", reg, "--out", str(out)],
        "import": ["import", "--from", "openai", str(ROOT / "tests" / "data" / "mcp_hostile.json"),
                   "--out", str(file)],
        "synthetic": ["synthetic", "--tools", "5", "--registry-out", str(file)],
        "check-summary": ["check", "--registry", reg, "--queries", q, "--min", "R@1=0",
                          "--summary", str(file)],
        "check-baseline": ["check", "--registry", reg, "--queries", q, "--baseline",
                           str(file), "--update-baseline"],
        "label": ["label", "--registry", reg, "--queries", str(file), "--query", "x y",
                  "--expected", "calculator", "--yes", "--no-embed-check"],
    }


@pytest.mark.parametrize("command", ["sweep", "report", "explore", "runs"])
@pytest.mark.parametrize("where", ["home", "root", "checkout", "checkout/toolsel",
                                   "checkout/data", "this/tests", "this/."])
def test_6_folder_outputs_never_go_to_home_root_or_a_checkout(sentinel, capsys, command, where):
    co = _fake_checkout(sentinel.root)
    out = {"home": sentinel.home, "root": Path("/"), "checkout": co,
           "checkout/toolsel": co / "toolsel", "checkout/data": co / "data",
           "this/tests": ROOT / "tests", "this/.": ROOT}[where]
    sentinel.freeze(sentinel.root / "nothing")
    this = snapshot(ROOT / "tests", None) if where.startswith("this") else None
    assert main(_writers(out, out / "x.json")[command]) == 2
    err = _one_line_error(capsys)
    assert "never writes there" in err or "source folder" in err or "checkout" in err, err
    sentinel.unchanged()
    if this is not None:
        assert snapshot(ROOT / "tests", None) == this


@pytest.mark.parametrize("command", ["import", "synthetic", "check-summary", "check-baseline",
                                     "label"])
@pytest.mark.parametrize("where", ["root", "checkout", "checkout/toolsel", "checkout/tests",
                                   "checkout/notebooks"])
def test_6_file_outputs_never_go_to_root_or_a_checkouts_sources(sentinel, capsys, command,
                                                                where):
    co = _fake_checkout(sentinel.root)
    folder = {"root": Path("/"), "checkout": co, "checkout/toolsel": co / "toolsel",
              "checkout/tests": co / "tests", "checkout/notebooks": co / "notebooks"}[where]
    file = folder / "toolsel-test-output.json"
    sentinel.freeze(sentinel.root / "nothing")
    assert main(_writers(sentinel.work / "o", file)[command]) == 2
    assert "never writes there" in _one_line_error(capsys)
    sentinel.unchanged()
    assert not file.exists()


def test_6_a_checkouts_data_takes_labels_and_baselines(sentinel, capsys):
    """``toolsel label`` and ``make check CHECK_ARGS=--update-baseline`` maintain the project's
    own data/: allowed there (and only those)."""
    co = _fake_checkout(sentinel.root)
    (co / "data" / "q.jsonl").unlink()
    w = _writers(sentinel.work / "o", co / "data" / "q.jsonl")
    assert main(w["label"]) == 0
    assert main(_writers(sentinel.work / "o", co / "data" / "b.json")["check-baseline"]) == 0
    assert main(w["import"]) == 2  # not import
    assert "never writes there" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# 7: what toolsel writes, it reads back


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d",
                                  "\x1e", "\r"])
def test_7_label_then_every_reader(sentinel, capsys, char):
    q = sentinel.work / "q.jsonl"
    reg = str(DATA / "registry.json")
    sentinel.freeze(q)
    text = f"what's 340 divided{char}by 12"
    assert main(["label", "--registry", reg, "--queries", str(q), "--query", text,
                 "--expected", "calculator", "--yes", "--no-embed-check", "--scorers",
                 "jaccard"]) == 0
    assert main(["label", "--registry", reg, "--queries", str(q), "--query", "another one",
                 "--expected", "calculator", "--yes", "--no-embed-check", "--scorers",
                 "jaccard"]) == 0
    assert main(["validate", "--registry", reg, "--queries", str(q)]) == 0
    queries = load_queries(q, load_registry(DATA / "registry.json"))
    assert [x.query for x in queries] == [text, "another one"]
    assert len(q.read_bytes().split(b"\n")) == 3  # two lines, whatever the text holds
    assert main(["check", "--registry", reg, "--queries", str(q), "--scorers", "jaccard",
                 "--min", "R@10=0"]) == 0
    sentinel.unchanged()


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",))), min_size=1, max_size=5))
def test_7_jsonl_round_trip_over_arbitrary_text(tmp_path, texts):
    from toolsel.io import jsonl_line, jsonl_text
    records = [{"id": f"q{i}", "query": t, "expected": [t[:3]]} for i, t in enumerate(texts)]
    path = write_jsonl(records, tmp_path / "rt.jsonl")
    assert [rec for _, rec in read_records(path)] == records
    raw = path.read_text(encoding="utf-8")
    assert raw.count("\n") == len(records) and not any(
        c in raw for c in ("\u2028", "\u2029", "\x85"))
    assert all(jsonl_line(r) + "\n" == line + "\n" for r, line in
               zip(records, raw.split("\n")))
    assert jsonl_text(records) == raw


def test_7_import_writes_queries_every_reader_reads(sentinel, capsys):
    src = sentinel.work / "tools.json"
    src.write_text(json.dumps({"calc\u2028x": "evaluate\x85 arithmetic", "weather": "wx"}))
    csv = sentinel.work / "q.csv"
    csv.write_text("Query,Tool\n\"what is\u2028 2+2\",calc\u2028x\n", encoding="utf-8")
    sentinel.freeze(sentinel.work / "out")
    out = sentinel.work / "out"
    assert main(["import", "--from", "metatool", str(src), str(csv), "--out",
                 str(out / "r.json"), "--queries-out", str(out / "q.jsonl")]) == 0
    reg = load_registry(out / "r.json")
    qs = load_queries(out / "q.jsonl", reg)
    assert qs[0].query == "what is\u2028 2+2" and qs[0].expected == ("calc\u2028x",)
    assert "\u2028" not in (out / "q.jsonl").read_text()
    sentinel.unchanged()


# --------------------------------------------------------------------------------------------
# 8: writes through links


def test_8_label_through_a_link_updates_the_linked_file(sentinel, capsys):
    real = sentinel.work / "real" / "q.jsonl"
    real.parent.mkdir()
    real.write_text('{"id": "q1", "query": "send a dm", "expected": ["slack_send_dm"]}\n')
    link = sentinel.work / "link.jsonl"
    link.symlink_to(real)
    sentinel.freeze(real.parent)
    assert main(["label", "--registry", str(DATA / "registry.json"), "--queries", str(link),
                 "--query", "what's 3 times 4", "--expected", "calculator", "--yes",
                 "--no-embed-check", "--scorers", "jaccard"]) == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert len(real.read_text().splitlines()) == 2
    sentinel.unchanged()  # the link (outside the real file's folder) is as it was


def test_8_baseline_link_is_never_written_through(sentinel, capsys):
    """Issue 35 changed this: a link at --baseline is refused (it could point anywhere, e.g.
    into HOME, in a cloned repository); --force replaces the link itself, never its target."""
    real = sentinel.work / "ci" / "baseline.json"
    real.parent.mkdir()
    link = sentinel.work / "baseline.json"
    link.symlink_to(Path("ci") / "baseline.json")  # a relative link
    args = ["check", "--registry", str(DATA / "registry.json"), "--queries",
            str(DATA / "queries.jsonl"), "--scorers", "jaccard", "--baseline", str(link)]
    sentinel.freeze(link)
    assert main(args + ["--update-baseline"]) == 2
    assert "is a symbolic link" in _one_line_error(capsys)
    assert link.is_symlink() and not real.exists()
    assert main(args + ["--update-baseline", "--force"]) == 0
    assert not link.is_symlink() and link.is_file() and not real.exists()
    assert main(args) == 0
    sentinel.unchanged()


# --------------------------------------------------------------------------------------------
# 9: pairs


# the imports start together (once the file argv[1] exists) and the registry's write waits a
# random 0-1 s first: the window where two imports could interleave their registry and
# queries is wide open (the last to write its queries is seldom the last to write its
# registry), so only the lock keeps the pair whole
_IMPORT = textwrap.dedent("""
    import os, random, sys, time
    from toolsel import io
    from toolsel.cli import main
    real = io.write_text
    def slow(text, path, *a, **k):
        if str(path).endswith(".json"):
            time.sleep(random.random())
        return real(text, path, *a, **k)
    io.write_text = slow
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.01)
    sys.exit(main(sys.argv[2:]))
""")


def _metatool_inputs(folder: Path, i: int) -> list[str]:
    tools = folder / f"tools{i}.json"
    tools.write_text(json.dumps({f"tool_{i}_{j}": f"does thing {j} of run {i}"
                                 for j in range(3)}))
    csv = folder / f"q{i}.csv"
    csv.write_text("Query,Tool\n" + "".join(f"thing {j} please,tool_{i}_{j}\n"
                                            for j in range(3)))
    return [str(tools), str(csv)]


@pytest.mark.slow  # 8 processes
def test_9_concurrent_imports_leave_a_registry_and_queries_of_one_run(sentinel,
                                                                      tmp_path_factory):
    inputs = sentinel.work / "inputs"
    inputs.mkdir()
    out = sentinel.work / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    files = [_metatool_inputs(inputs, i) for i in range(8)]
    sentinel.freeze(out)
    go = tmp_path_factory.mktemp("gate") / "go"  # outside the sentinel tree
    procs = [subprocess.Popen([sys.executable, "-c", _IMPORT, str(go), "import", "--from",
                               "metatool", *files[i], "--out", str(out / "reg.json"),
                               "--queries-out", str(out / "q.jsonl")], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i in range(8)]
    time.sleep(3)  # every process imported and waiting
    go.touch()
    assert [p.wait(timeout=300) for p in procs] == [0] * 8
    reg = load_registry(out / "reg.json")
    qs = load_queries(out / "q.jsonl", reg)  # every label's tool is in the registry
    runs = {t.name.split("_")[1] for t in reg} | {q.expected[0].split("_")[1] for q in qs}
    assert len(runs) == 1, runs
    sentinel.unchanged()


def test_9_an_import_without_labels_says_what_happens_to_the_old_queries(sentinel, capsys):
    out = sentinel.work / "out"
    inputs = sentinel.work / "inputs"
    inputs.mkdir()
    assert main(["import", "--from", "metatool", *_metatool_inputs(inputs, 1), "--out",
                 str(out / "reg.json"), "--queries-out", str(out / "q.jsonl")]) == 0
    before = (out / "q.jsonl").read_bytes()
    tools = inputs / "plain.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "other", "description": "another tool", "parameters": {"type": "object"}}}]))
    capsys.readouterr()
    assert main(["import", "--from", "openai", str(tools), "--out", str(out / "reg.json"),
                 "--queries-out", str(out / "q.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "q.jsonl: these inputs hold no labeled queries; the file there" in printed
    assert "may not match this registry" in printed
    assert (out / "q.jsonl").read_bytes() == before  # a user's file is never deleted


# --------------------------------------------------------------------------------------------
# 10: a gate that compares nothing


def _check(reg, q, baseline, *extra) -> int:
    return main(["check", "--registry", str(reg), "--queries", str(q), "--scorers", "jaccard",
                 "--top-k", "3", "--baseline", str(baseline), *extra])


def test_10_a_baseline_of_another_registry_or_suite_is_refused(sentinel, capsys):
    base = sentinel.work / "base.json"
    assert _check(DATA / "registry.json", DATA / "queries.jsonl", base,
                  "--update-baseline") == 0
    other = sentinel.work / "other"
    other.mkdir()
    (other / "r.json").write_text(json.dumps([{"name": "zz_tool", "description": "zz thing"},
                                              {"name": "yy_tool", "description": "yy"}]))
    (other / "q.jsonl").write_text('{"id": "q01", "query": "zz", "expected": ["zz_tool"]}\n')
    (other / "ids.jsonl").write_text('{"id": "n1", "query": "zz", "expected": ["zz_tool"]}\n')
    rec = json.loads((DATA / "queries.jsonl").read_text().splitlines()[0])
    (other / "same.jsonl").write_text(json.dumps({**rec, "expected": ["zz_tool"]}) + "\n")
    sentinel.freeze(sentinel.work / "nothing")
    capsys.readouterr()
    assert _check(other / "r.json", other / "ids.jsonl", base) == 2
    assert "no request in common" in _one_line_error(capsys)
    assert _check(other / "r.json", other / "q.jsonl", base) == 2
    assert "another query set" in _one_line_error(capsys)
    # same ids and texts, another registry
    assert _check(other / "r.json", other / "same.jsonl", base) == 2
    assert "another registry" in _one_line_error(capsys)
    sentinel.unchanged()
    # an old baseline (no registry recorded): compared by request ids
    old = json.loads(base.read_text())
    old.pop("registry")
    base.write_text(json.dumps(old))
    assert _check(other / "r.json", other / "ids.jsonl", base) == 2
    assert "no request in common" in _one_line_error(capsys)
    assert _check(DATA / "registry.json", DATA / "queries.jsonl", base) == 0
    # asked to record a new one: fine
    assert _check(other / "r.json", other / "ids.jsonl", base, "--update-baseline") == 0


# --------------------------------------------------------------------------------------------
# 11: characters that rewrite the terminal, in every channel


_SHOWN = ("\r", "\u202e", "\u2066", "\x1b", "\u2028", "\x85")


def test_11_check_and_label_show_control_and_bidi_characters(sentinel, capsys):
    reg = sentinel.work / "reg.json"
    tools = [{"name": "cr\rOVERWRITE", "description": "weather forecast \u202etxet desrever"},
             {"name": "plain", "description": "weather \u2066isolate\u2069 and \x1b[2J"},
             {"name": "other", "description": "something else entirely"}]
    reg.write_text(json.dumps(tools))
    q = sentinel.work / "q.jsonl"
    q.write_text(json.dumps({"id": "r\rid", "query": "weather\u2028forecast \u202eplease",
                             "expected": ["cr\rOVERWRITE"]}) + "\n")
    base, md, junit = (sentinel.work / n for n in ("b.json", "s.md", "j.xml"))
    sentinel.freeze(sentinel.work / "nothing")
    capsys.readouterr()
    assert main(["check", "--registry", str(reg), "--queries", str(q), "--scorers", "jaccard",
                 "--top-k", "1", "--baseline", str(base), "--update-baseline"]) == 0
    tools[0]["description"] = "nothing in common"
    reg.write_text(json.dumps(tools))
    assert main(["check", "--registry", str(reg), "--queries", str(q), "--scorers", "jaccard",
                 "--top-k", "1", "--baseline", str(base), "--summary", str(md), "--junit",
                 str(junit)]) == 1
    assert main(["label", "--registry", str(reg), "--queries", str(q), "--query",
                 "weather \u202e\rnow", "--expected", "plain", "--yes", "--no-embed-check",
                 "--scorers", "jaccard", "--rank-by", "jaccard"]) == 0
    shown = capsys.readouterr()
    for text in (shown.out, shown.err, md.read_text(), junit.read_text()):
        assert not any(c in text for c in _SHOWN), repr(text[:400])
    assert "cr\\rOVERWRITE" in shown.out and "\\u202e" in shown.out
    assert "cr\\\\rOVERWRITE" in md.read_text() or "cr\\rOVERWRITE" in md.read_text()
    assert "cr\\rOVERWRITE" in junit.read_text()


def test_11_markdown_escape_shows_them_in_report_pages():
    from toolsel.report.markdown import code, escape
    for f in (escape, code):
        out = f("a\rb\u202ec\u2066d\u2028e\x85f\x1bg")
        assert not any(c in out for c in _SHOWN), out


# --------------------------------------------------------------------------------------------
# 12b, and new cases


@pytest.mark.parametrize("spec", ["R@99999999999999999999=0.5", "R@1000000001=0.5",
                                  "R@0=0.5", "R@1e3=0.5", "R@10=1e999", "R@10=nan"])
def test_12_threshold_cut_offs_out_of_range_are_one_line(capsys, spec):
    assert main(["check", "--registry", str(DATA / "registry.json"), "--queries",
                 str(DATA / "queries.jsonl"), "--min", spec]) == 2
    assert "--min" in _one_line_error(capsys)


def test_new_a_journal_beside_a_linked_sweep_folder_touches_neither_side(sentinel):
    real = sentinel.work / "real"
    assert _sweep(real) == 0
    link = sentinel.work / "sw"
    link.symlink_to(real)
    _forged_journal(real, sentinel)
    sentinel.freeze(real)
    assert _sweep(link) == 0
    sentinel.unchanged()
    assert link.is_symlink()


def test_new_a_crlf_jsonl_file_reads(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"id": "a", "query": "send a dm", "expected": ["slack_send_dm"]}\r\n'
                     b'{"id": "b", "query": "2+2", "expected": ["calculator"]}\r\n')
    qs = load_queries(path, load_registry(DATA / "registry.json"))
    assert [q.id for q in qs] == ["a", "b"]


def test_new_a_killed_in_place_sweep_is_still_rolled_forward(sentinel):
    """The journal's own record (its inode) is what the next run trusts: a real leftover of
    a killed run is finished; a copy of it (another inode) would not be."""
    out = sentinel.work / "sw"
    (out / "sub").mkdir(parents=True)
    code = textwrap.dedent("""
        import os, sys
        from toolsel import io
        real, n = os.replace, []
        def replace(a, b, **kw):
            if "src_dir_fd" in kw and not str(a).startswith("."):  # a commit folder's entry
                n.append(a)
                if len(n) == 2:
                    os._exit(9)
            return real(a, b, **kw)
        io.os.replace = replace
        io.write_set(sys.argv[1], {"a.txt": "new", "b.txt": "new", "c.txt": "new"})
    """)
    proc = subprocess.run([sys.executable, "-c", code, str(out)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 9
    commit = [p for p in out.iterdir() if p.name.startswith(".toolsel-commit-")]
    assert len(commit) == 1
    copy = out / ".toolsel-commit-copy"
    subprocess.run(["cp", "-a", str(commit[0]), str(copy)], check=True)
    sentinel.freeze(out)
    assert _sweep(out) == 0
    sentinel.unchanged()
    assert {(out / n).read_text() for n in ("a.txt", "b.txt", "c.txt")} == {"new"}
    assert not commit[0].exists() and copy.is_dir()  # the copy is not this run's: kept


def test_new_a_manifest_that_is_a_link_is_refused(sentinel, capsys):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    rep.mkdir()
    (rep / "README.md").write_text("mine\n")
    (sentinel.work / "outside" / "m.json").write_text(json.dumps(
        {"kind": "toolsel report output", "files": {}}))
    (rep / MANIFEST).symlink_to(sentinel.work / "outside" / "m.json")
    sentinel.freeze(rep)
    assert _report(nb, rep) == 2
    assert "symbolic link" in _one_line_error(capsys)
    sentinel.unchanged()
    assert (rep / "README.md").read_text() == "mine\n"


@pytest.mark.slow  # a report (papermill)
def test_new_a_table_folder_turned_into_a_link_is_refused(sentinel, capsys):
    nb = _nb(sentinel.root)
    rep = sentinel.work / "rep"
    assert _report(nb, rep) == 0
    import shutil
    shutil.rmtree(rep / "01_t")
    (rep / "01_t").symlink_to(sentinel.work / "docs")
    sentinel.freeze(rep)
    capsys.readouterr()
    assert _report(nb, rep) == 2
    assert "symbolic link where the report writes its folder" in _one_line_error(capsys)
    sentinel.unchanged()
