"""Issue 35, items 1-4: paths judged after links are followed, a command never replaces a file
it did not write nor one it reads, bookkeeping only toolsel can write.

Each reproduction of the issue is a test with a hashed sentinel tree around the target: a fake
HOME (``.bashrc``, ``.profile`` absent) and a victim toolsel checkout, every file and link under
them hashed before and after. Commands run as the real CLI in a subprocess
(``python -m toolsel.cli``) with that HOME and a private ``TOOLSEL_STATE``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import DATA, ROOT, refused, snapshot

REG = str(DATA / "registry.json")
QUERIES = str(DATA / "queries.jsonl")


# --------------------------------------------------------------------------------------------
# the sentinel tree and the CLI


class World:
    """A fake HOME, a victim toolsel checkout and a work folder, under ``root``."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        (self.home / ".bashrc").write_text("export PS1='$ '\n")
        (self.home / "notes.md").write_text("my notes\n")
        self.victim = root / "victim"
        for sub in ("toolsel", "data", "tests", "notebooks", ".git", "reports"):
            (self.victim / sub).mkdir(parents=True)
        (self.victim / "pyproject.toml").write_text('[project]\nname = "toolsel"\n')
        (self.victim / "toolsel" / "__init__.py").write_text("# the victim's source\n")
        (self.victim / "reports" / "README.md").write_text("victim reports\n")
        self.work = root / "work"
        self.work.mkdir()
        self.state = root / "state"
        self.before: dict[str, str] = {}
        self.skip: Path | None = None

    def env(self, **extra) -> dict:
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        return {**os.environ, "HOME": str(self.home), "TOOLSEL_STATE": str(self.state),
                "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1", **extra}

    def run(self, *args, cwd: Path | None = None, **env) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "toolsel.cli", *map(str, args)],
                              cwd=cwd or self.work, env=self.env(**env), capture_output=True,
                              text=True, timeout=600)

    def freeze(self, skip: Path | None = None) -> None:
        self.skip = skip
        self.before = snapshot(self.root, skip)

    def changed(self) -> list[str]:
        after = snapshot(self.root, self.skip)
        return sorted(k for k in set(self.before) | set(after)
                      if self.before.get(k) != after.get(k) and not k.startswith("state"))


@pytest.fixture
def world(tmp_path):
    return World(tmp_path)


# --------------------------------------------------------------------------------------------
# item 1 of the issue: a cloned repository with committed links


def _git(*args, cwd):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def clone(world):
    """A repository committing links into HOME, cloned for real: work/clone."""
    src = world.root / "upstream"
    (src / "reports" / "check").mkdir(parents=True)
    (src / "tools").mkdir()
    shutil.copy(DATA / "registry.json", src / "tools" / "registry.json")
    shutil.copy(DATA / "queries.jsonl", src / "tools" / "queries.jsonl")
    links = {"reports/check/summary.md": "../../../../home/.bashrc",
             "reports/check/junit.xml": "../../../../home/notes.md",
             "reports/check/baseline.json": "../../../../home/.profile",  # missing: created?
             "tools/link.json": "../../../home/.bashrc",
             "tools/labels.jsonl": "../../../home/.profile",
             "tools/rc.jsonl": "../../../home/.bashrc"}
    for rel, target in links.items():
        os.symlink(target, src / rel)
    _git("init", "-q", cwd=src)
    _git("add", "-A", cwd=src)
    _git("commit", "-qm", "a repository with links", cwd=src)
    _git("clone", "-q", str(src), str(world.work / "clone"), cwd=world.root)
    repo = world.work / "clone"
    assert (repo / "reports" / "check" / "summary.md").is_symlink()
    assert (repo / "reports" / "check" / "summary.md").resolve() == world.home / ".bashrc"
    return repo


_CHECK = ["check", "--registry", "tools/registry.json", "--queries", "tools/queries.jsonl",
          "--scorers", "jaccard"]


@pytest.mark.parametrize("extra, name", [
    (["--min", "R@10=0.1", "--summary", "reports/check/summary.md"], "summary.md"),
    (["--min", "R@10=0.1", "--junit", "reports/check/junit.xml"], "junit.xml"),
    (["--baseline", "reports/check/baseline.json", "--update-baseline"], "baseline.json"),
    (["--baseline", "tools/b.json", "--update-baseline", "--summary",
      "reports/check/summary.md"], "summary.md"),
])
def test_a_cloned_repositorys_links_never_write_into_home(world, clone, extra, name):
    world.freeze()
    done = world.run(*_CHECK, *extra, cwd=clone)
    refused(done, name, "is a symbolic link")
    assert world.changed() == []
    assert not (world.home / ".profile").exists()


def test_force_replaces_the_committed_link_itself_never_home(world, clone):
    world.freeze(skip=clone / "reports")
    done = world.run(*_CHECK, "--min", "R@10=0.1", "--summary", "reports/check/summary.md",
                     "--junit", "reports/check/junit.xml", "--force", cwd=clone)
    assert done.returncode == 0, done.stderr
    summary = clone / "reports" / "check" / "summary.md"
    assert not summary.is_symlink() and "toolsel check" in summary.read_text()
    assert world.changed() == []


def test_import_out_through_a_committed_link_is_refused(world, clone):
    world.freeze()
    done = world.run("import", "--from", "mcp", DATA / "integrations" / "mcp_github.json",
                     "--out", "tools/link.json", cwd=clone)
    refused(done, "link.json", "is a symbolic link")
    done = world.run("import", "--from", "mcp", DATA / "integrations" / "mcp_github.json",
                     "--out", "tools/new.json", "--queries-out", "tools/rc.jsonl", cwd=clone)
    refused(done, "rc.jsonl", "is a symbolic link")
    assert world.changed() == []


@pytest.mark.parametrize("target, why", [("labels.jsonl", "points to nothing"),
                                         ("rc.jsonl", "")])
def test_label_through_a_committed_link_into_home_writes_nothing(world, clone, target, why):
    """A link to a missing ~/.profile would be created; one to ~/.bashrc is not a labeled
    file: both refused, HOME unchanged."""
    world.freeze()
    done = world.run("label", "--registry", "tools/registry.json", "--queries",
                     f"tools/{target}", "--query", "what is 3 times 4", "--expected",
                     "calculator", "--yes", "--no-embed-check", "--scorers", "jaccard",
                     cwd=clone)
    refused(done, target, why)
    assert world.changed() == []
    assert not (world.home / ".profile").exists()


# --------------------------------------------------------------------------------------------
# item 2: resolve, then judge (lnk -> VICTIM/reports; lnk/../toolsel is the victim's source)


def _lnk(world) -> str:
    (world.work / "lnk").symlink_to(world.victim / "reports")
    return "lnk/../toolsel/x"


@pytest.mark.parametrize("args", [
    ["fit", "--registry", REG, "--queries", QUERIES, "--out", "{x}.json"],
    ["sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--out", "{x}"],
    ["import", "--from", "mcp", str(DATA / "integrations" / "mcp_github.json"), "--out",
     "{x}.json"],
    ["import", "--from", "mcp", str(DATA / "integrations" / "mcp_github.json"), "--out",
     "r.json", "--queries-out", "{x}.jsonl"],
    ["synthetic", "--tools", "20", "--registry-out", "{x}.jsonl"],
    ["synthetic", "--tools", "20", "--n-queries", "3", "--registry-out", "r.jsonl",
     "--queries-out", "{x}.jsonl"],
    ["check", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--min",
     "R@10=0.1", "--junit", "lnk/../.git/j.xml"],
    ["check", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--min",
     "R@10=0.1", "--summary", "{x}.md"],
    ["check", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--baseline",
     "{x}.json", "--update-baseline"],
    ["label", "--registry", REG, "--queries", "{x}.jsonl", "--query", "what is 3 times 4",
     "--expected", "calculator", "--yes", "--no-embed-check", "--scorers", "jaccard"],
    ["explore", "--registry", REG, "--queries", QUERIES, "--out", "{x}", "--no-lab"],
    ["policies", "--registry", REG, "--queries", QUERIES, "--out", "{x}"],
    ["discovery", "--registry", REG, "--queries", QUERIES, "--out", "{x}"],
    ["report", "--registry", REG, "--queries", QUERIES, "--out", "{x}", "--no-html",
     "--only", "01"],
    ["compare", "--registry-a", REG, "--registry-b", REG, "--queries", QUERIES, "--scorers",
     "jaccard", "--out", "{x}"],
    ["conversations", "--registry", REG, "--conversations", str(DATA / "conversations.jsonl"),
     "--scorers", "jaccard", "--out", "{x}"],
    ["runs", str(DATA / "runs"), "--registry", REG, "--out", "{x}"],
], ids=lambda a: "-".join(a[:1] + [x for x in a if x.startswith(("--out", "--junit",
                                                                    "--summary",
                                                                    "--queries-out",
                                                                    "--registry-out",
                                                                    "--baseline"))][-1:]))
def test_dotdot_after_a_link_is_judged_where_the_kernel_writes(world, args):
    x = _lnk(world)
    world.freeze()
    done = world.run(*[a.format(x=x) for a in args])
    err = refused(done, "toolsel never writes there")
    assert "victim" in err or "lnk" in err
    assert "executing notebooks" not in done.stdout  # report: refused before any notebook
    assert world.changed() == []


@pytest.mark.parametrize("cmd", [
    ["sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard"],
    ["policies", "--registry", REG, "--queries", QUERIES],
    ["compare", "--registry-a", REG, "--registry-b", REG, "--queries", QUERIES, "--scorers",
     "jaccard"],
    ["conversations", "--registry", REG, "--conversations", str(DATA / "conversations.jsonl"),
     "--scorers", "jaccard"],
])
def test_link_dotdot_into_home_is_the_home_folder(world, cmd):
    (world.home / "sub").mkdir()
    (world.work / "link").symlink_to(world.home / "sub")
    world.freeze()
    refused(world.run(*cmd, "--out", "link/.."), "the home folder")
    assert world.changed() == []


# --------------------------------------------------------------------------------------------
# item 4 of the issue (3 of the brief): inputs are never overwritten


@pytest.fixture
def inputs(world):
    for name in ("registry.json", "queries.jsonl"):
        shutil.copy(DATA / name, world.work / name)
    return world.work


def test_check_summary_and_junit_never_replace_the_labels_and_registry(world, inputs):
    world.freeze()
    done = world.run("check", "--registry", "registry.json", "--queries", "queries.jsonl",
                     "--scorers", "jaccard", "--min", "R@10=0.1", "--summary", "queries.jsonl",
                     "--junit", "registry.json")
    refused(done, "queries.jsonl")
    assert world.changed() == []


def test_check_summary_never_replaces_the_baseline(world, inputs):
    args = ["check", "--registry", "registry.json", "--queries", "queries.jsonl",
            "--scorers", "jaccard", "--baseline", "b.json"]
    assert world.run(*args, "--update-baseline").returncode == 0
    world.freeze()
    refused(world.run(*args, "--summary", "b.json"), "b.json", "--baseline")
    refused(world.run(*args, "--junit", "b.json", "--force"), "b.json", "--baseline")
    assert world.changed() == []


def test_a_hard_link_of_an_input_is_the_input(world, inputs):
    os.link(inputs / "queries.jsonl", inputs / "copy.md")
    world.freeze()
    refused(world.run("check", "--registry", "registry.json", "--queries", "queries.jsonl",
                      "--scorers", "jaccard", "--min", "R@10=0.1", "--summary", "copy.md",
                      "--force"), "copy.md", "--queries")
    assert world.changed() == []


def test_import_never_replaces_a_users_file_or_its_input(world, inputs):
    (inputs / "notes.txt").write_text("my notes about tools\n")
    mcp = shutil.copy(DATA / "integrations" / "mcp_github.json", inputs / "mcp.json")
    world.freeze()
    refused(world.run("import", "--from", "mcp", "mcp.json", "--out", "notes.txt"),
            "notes.txt", "not written by toolsel")
    refused(world.run("import", "--from", "mcp", "mcp.json", "--out", "mcp.json",
                      "--force"), "mcp.json", "INPUT")
    refused(world.run("import", "--from", "mcp", "mcp.json", "--out", "r.json",
                      "--queries-out", "r.json"), "r.json")
    assert world.changed() == []
    assert Path(mcp).is_file()


def test_synthetic_never_replaces_labels(world, inputs):
    world.freeze()
    refused(world.run("synthetic", "--tools", "20", "--n-queries", "5", "--registry-out",
                      "r.jsonl", "--queries-out", "queries.jsonl"),
            "queries.jsonl", "not written by toolsel")
    assert world.changed() == []
    assert not (inputs / "r.jsonl").exists()  # refused before anything is written


def test_fit_never_replaces_its_inputs_even_with_force(world, inputs):
    world.freeze()
    refused(world.run("fit", "--registry", "registry.json", "--queries", "queries.jsonl",
                      "--out", "queries.jsonl", "--force"), "queries.jsonl", "--queries")
    assert world.changed() == []


def test_toolsels_own_outputs_are_replaced_on_the_next_run(world, inputs):
    """The marks: the same outputs written twice; a mark-less earlier file needs --force."""
    check = ["check", "--registry", "registry.json", "--queries", "queries.jsonl",
             "--scorers", "jaccard", "--min", "R@10=0.1", "--summary", "s.md", "--junit",
             "j.xml"]
    for _ in range(2):
        assert world.run(*check).returncode == 0
    assert (inputs / "s.md").read_text().endswith("<!-- written by toolsel check -->\n")
    assert 'name="written_by" value="toolsel check"' in (inputs / "j.xml").read_text()
    imp = ["import", "--from", "mcp", DATA / "integrations" / "mcp_github.json", "--out",
           "r.json"]
    for _ in range(2):
        assert world.run(*imp).returncode == 0
    assert json.loads((inputs / "r.json").read_text())["_meta"]["written_by"] == "toolsel import"
    syn = ["synthetic", "--tools", "20", "--n-queries", "4", "--registry-out", "syn.jsonl",
           "--queries-out", "synq.jsonl"]
    for _ in range(2):
        assert world.run(*syn).returncode == 0
    from toolsel import load_queries, load_registry
    reg = load_registry(inputs / "syn.jsonl")
    assert len(reg) == 20 and len(load_queries(inputs / "synq.jsonl", reg)) == 4
    assert len(load_registry(inputs / "r.json")) > 0
    # an earlier summary without the mark (a user's, or an older toolsel's): --force
    (inputs / "s.md").write_text("## toolsel check: passed\n")
    refused(world.run(*check), "s.md", "not written by toolsel", "--force")
    assert world.run(*check, "--force").returncode == 0


# --------------------------------------------------------------------------------------------
# item 3 of the issue (4 of the brief): bookkeeping only toolsel can write


def _sweep(world, out, **env) -> subprocess.CompletedProcess:
    return world.run("sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
                     "--top-k", "3", "--out", out, **env)


def _forge_commit(out: Path, token: str, remove: list[str], mac: str | None = None,
                  plant: str | None = None) -> Path:
    d = out / f".toolsel-commit-{token}"
    d.mkdir()
    st = os.lstat(d)
    rec = {"kind": "toolsel private folder", "dir": [st.st_dev, st.st_ino],
           "in": str(out.resolve()), "id": token, "remove": remove}
    if mac is not None:
        rec["mac"] = mac
    (d / ".toolsel-private.json").write_text(json.dumps(rec))
    if plant:
        (d / plant).write_text("planted by the forger\n")
    return d


@pytest.mark.parametrize("mac", [None, "0" * 64, "forged-with-another-key"])
def test_a_forged_commit_folder_deletes_and_plants_nothing(world, mac):
    out = world.work / "OUT"
    assert _sweep(world, out).returncode == 0
    (out / "my_analysis.txt").write_text("a user's file\n")
    if mac == "forged-with-another-key":
        import hmac as hmac_mod
        body = {"kind": "toolsel private folder"}
        mac = hmac_mod.new(os.urandom(32), json.dumps(body).encode(), "sha256").hexdigest()
    forged = _forge_commit(out, "abc123", ["my_analysis.txt"], mac=mac, plant="planted.csv")
    world.freeze(skip=out)
    assert _sweep(world, out).returncode == 0
    assert (out / "my_analysis.txt").read_text() == "a user's file\n"
    assert not (out / "planted.csv").exists()
    assert (forged / "planted.csv").is_file()  # not followed: left as a folder of the user's
    assert world.changed() == []


def test_a_record_copied_from_a_real_run_is_not_accepted(world, monkeypatch):
    """A genuine, signed record copied into a folder of the forger's making: bound to its own
    folder's real path, device and inode, it names no other."""
    monkeypatch.setenv("TOOLSEL_STATE", str(world.state))
    from toolsel.io import is_private_dir, make_private_dir, private_dir_record
    real = make_private_dir(world.work / ".toolsel-staging-aaa", id="aaa", remove=["x"])
    assert is_private_dir(real) and private_dir_record(real)["remove"] == ["x"]
    copy = world.work / "copy"
    copy.mkdir()
    shutil.copy(real / ".toolsel-private.json", copy / ".toolsel-private.json")
    assert not is_private_dir(copy)
    # the forger rewrites the copy's identity to its own folder: the MAC no longer verifies
    rec = json.loads((copy / ".toolsel-private.json").read_text())
    st = os.lstat(copy)
    rec["dir"], rec["in"] = [st.st_dev, st.st_ino], str(copy.parent.resolve())
    (copy / ".toolsel-private.json").write_text(json.dumps(rec))
    assert not is_private_dir(copy)
    # a genuine record under another user's key (another TOOLSEL_STATE): not this user's
    monkeypatch.setenv("TOOLSEL_STATE", str(world.root / "other-state"))
    assert not is_private_dir(real)


def test_a_real_killed_in_place_run_is_still_rolled_forward(world, monkeypatch):
    monkeypatch.setenv("TOOLSEL_STATE", str(world.state))
    from toolsel.io import make_private_dir, recover_set
    out = world.work / "out"
    out.mkdir()
    (out / "old.csv").write_text("old\n")
    staging = make_private_dir(out / ".toolsel-staging-t1", id="t1", remove=["old.csv"])
    (staging / "new.csv").write_text("new\n")
    os.rename(staging, out / ".toolsel-commit-t1")  # killed right after the set was complete
    recover_set(out)
    assert sorted(os.listdir(out)) == ["new.csv"]


def _forge_journal(out: Path, token: str, old: Path) -> Path:
    st_parent, st_old = os.stat(out.parent), os.lstat(old)
    rec = {"kind": "toolsel set journal", "id": token, "out": out.name,
           "parent": [st_parent.st_dev, st_parent.st_ino],
           "parent_path": str(out.parent.resolve()), "old": [st_old.st_dev, st_old.st_ino],
           "mac": "1" * 64}
    j = out.parent / f".{out.name}.toolsel-journal-{token}"
    j.write_text(json.dumps(rec))
    return j


def test_a_forged_journal_renames_nothing_into_the_output(world):
    out = world.work / "OUT"  # not written yet: a journal could "put the old set back"
    old = world.work / ".OUT.old-zzz"
    old.mkdir()
    (old / "summary.csv").write_text("forged table\n")
    (old / "evil.txt").write_text("planted\n")
    _forge_journal(out, "zzz", old)
    stage = world.work / ".OUT.staging-zzz"
    stage.mkdir()
    (stage / "keep.txt").write_text("the forger's folder\n")
    world.freeze(skip=out)
    assert _sweep(world, out).returncode == 0
    assert not (out / "evil.txt").exists()
    assert "forged" not in (out / "summary.csv").read_text()
    assert world.changed() == []


def test_the_key_is_private_made_once_and_only_when_a_record_is_written(world):
    state = world.state
    assert world.run("validate", "--registry", REG, "--queries", QUERIES).returncode == 0
    assert world.run("check", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
                     "--min", "R@10=0.1").returncode == 0
    assert not state.exists()  # nothing recorded, no key
    assert _sweep(world, world.work / "s").returncode == 0
    key = state / "record-key"
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600 and key.stat().st_size == 32
    first = key.read_bytes()
    assert _sweep(world, world.work / "s").returncode == 0
    assert key.read_bytes() == first and os.listdir(state) == ["record-key"]
    # a key others can read is refused, not used
    os.chmod(key, 0o644)
    refused(_sweep(world, world.work / "s"), "record-key", "only you can read")
    os.chmod(key, 0o600)
    # a state folder that is a link: refused
    other = world.root / "elsewhere"
    other.mkdir(mode=0o700)
    link = world.root / "state-link"
    link.symlink_to(other)
    refused(_sweep(world, world.work / "t", TOOLSEL_STATE=str(link)), "state folder")
    assert list(other.iterdir()) == []


def test_the_report_names_the_state_folder_among_its_outside_writes(world, monkeypatch):
    monkeypatch.setenv("TOOLSEL_STATE", str(world.state))
    from toolsel.report.runner import other_writes
    assert ("toolsel's state (its record key)", world.state) in other_writes()


# --------------------------------------------------------------------------------------------
# another user as forger, in a shared sticky folder


@pytest.fixture
def shared():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to run a forger as the user nobody (runuser)")
    if shutil.which("runuser") is None:
        pytest.skip("runuser is not installed")
    d = Path(tempfile.mkdtemp(prefix="toolsel-shared-", dir="/tmp"))
    os.chmod(d, 0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _as_nobody(script: str) -> None:
    done = subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-ec", script],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_forger_running_as_another_user_deletes_and_plants_nothing(world, shared):
    """A shared sticky output folder: root's sweep output and root's file in it; nobody (whom
    the kernel refuses to delete root's file) forges a commit folder and a journal with the
    right identities."""
    out = shared / "out"
    out.mkdir()
    os.chmod(out, 0o1777)
    (out / "root_notes.txt").write_text("root's file\n")
    assert _sweep(world, out).returncode == 0
    os.chmod(out, 0o1777)
    _as_nobody(f"""
        cd {out}
        rm -f root_notes.txt 2>/dev/null || true
        mkdir .toolsel-commit-n1
        set -- $(stat -c '%d %i' .toolsel-commit-n1)
        printf '{{"kind": "toolsel private folder", "dir": [%s, %s], "in": "{out}", "id": "n1", "remove": ["root_notes.txt", "summary.csv"], "mac": "%064d"}}' $1 $2 0 > .toolsel-commit-n1/.toolsel-private.json
        echo planted > .toolsel-commit-n1/planted.csv
        cd {shared}
        mkdir .out.old-n2 && echo planted > .out.old-n2/evil.txt
        set -- $(stat -c '%d %i' .) $(stat -c '%d %i' .out.old-n2)
        printf '{{"kind": "toolsel set journal", "id": "n2", "out": "out", "parent": [%s, %s], "parent_path": "{shared}", "old": [%s, %s], "mac": "%064d"}}' $1 $2 $3 $4 0 > .out.toolsel-journal-n2
    """)
    assert (out / "root_notes.txt").is_file()  # the kernel refused nobody
    before = snapshot(shared, out)
    assert _sweep(world, out).returncode == 0
    assert (out / "root_notes.txt").read_text() == "root's file\n"
    assert (out / "summary.csv").is_file() and not (out / "planted.csv").exists()
    assert not (out / "evil.txt").exists()
    assert (out / ".toolsel-commit-n1" / "planted.csv").is_file()  # left alone
    assert snapshot(shared, out) == before


# --------------------------------------------------------------------------------------------
# the final write checks what it opened


def test_a_folder_swapped_for_a_link_after_the_check_is_refused(tmp_path):
    from toolsel.io import OutputError, check_output_file, write_text
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    judged = check_output_file(tmp_path / "out" / "s.md")
    (tmp_path / "out").rename(tmp_path / "moved")
    (tmp_path / "out").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputError, match="where it was checked"):
        write_text("x", tmp_path / "out" / "s.md", judged=judged)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_file_swapped_for_a_link_after_the_check_is_not_followed(tmp_path):
    from toolsel.io import OutputError, check_output_file, has_mark, write_text
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    judged = check_output_file(tmp_path / "s.md", owned=has_mark)
    (tmp_path / "s.md").symlink_to(victim)
    with pytest.raises(OutputError, match="symbolic link"):
        write_text("x", tmp_path / "s.md", judged=judged, owned=has_mark)
    assert victim.read_text() == "keep me\n"
    write_text("x", tmp_path / "s.md", judged=judged, force=True)  # the link replaced
    assert victim.read_text() == "keep me\n" and (tmp_path / "s.md").read_text() == "x"


def test_a_fifo_or_device_is_never_an_output(tmp_path):
    from toolsel.io import OutputError, check_output_file
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OutputError, match="not a regular file"):
        check_output_file(tmp_path / "fifo", force=True)
    with pytest.raises(OutputError, match="not a regular file|system's devices"):
        check_output_file("/dev/null", force=True)
