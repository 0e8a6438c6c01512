"""Issue 35: the final swap of a set goes through descriptors, and attack cases beyond the
issue's list, each with a hashed sentinel tree (or the file it targets) checked after.

Every case runs the real code: the CLI in a subprocess where a command is attacked, the
``toolsel.io`` functions where the attack needs a precise moment (a hook the function has:
``finish``, which runs once the set is staged, just before the swap).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, ROOT, refused, snapshot
from toolsel import load_registry
from toolsel.io import OutputError, write_set

REG = str(DATA / "registry.json")
QUERIES = str(DATA / "queries.jsonl")
MCP = str(DATA / "integrations" / "mcp_github.json")


def _env(tmp: Path, **extra) -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    home = tmp.parent / f"{tmp.name}-home"  # beside, not above, what the test writes
    home.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": path, "HOME": str(home),
            "TOOLSEL_STATE": str(tmp / "state"), "PYTHONDONTWRITEBYTECODE": "1", **extra}


def cli(tmp: Path, *args, cwd: Path | None = None, timeout: float = 600, **env):
    return subprocess.run([sys.executable, "-m", "toolsel.cli", *map(str, args)],
                          cwd=cwd or tmp, env=_env(tmp, **env), capture_output=True,
                          text=True, timeout=timeout)


# --------------------------------------------------------------------------------------------
# the final swap through the folder's descriptor (issue 35, "a swap between check and write
# fails")


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLSEL_STATE", str(tmp_path / "state"))


def _relink_at_finish(victim: Path, moved: Path, other: Path):
    """A ``write_set`` hook ``finish`` that, once the set is staged, plants a folder named like
    the staging folder in ``other``, moves ``victim`` to ``moved`` and puts a link to ``other``
    in its place; and the dict where it keeps ``other``'s snapshot taken just then."""
    seen: dict = {}

    def finish(staging: Path) -> None:
        planted = other / staging.name
        planted.mkdir()
        (planted / "precious.txt").write_text("planted\n")
        victim.rename(moved)
        victim.symlink_to(other)
        seen["other"] = snapshot(other)
    return finish, seen


def test_a_parent_turned_into_a_link_at_the_swap_writes_nothing_there(tmp_path, state):
    """The set is staged; at that moment the output's folder is moved away and a link to
    another folder put in its place, holding a folder named like the staging folder (what a
    path-based swap would exchange with that folder's ``out``, then delete)."""
    parent, out = tmp_path / "p", tmp_path / "p" / "out"
    write_set(out, {"a.csv": "old\n"})
    other = tmp_path / "elsewhere"
    (other / "out").mkdir(parents=True)
    (other / "out" / "precious.txt").write_text("the other folder's file\n")
    finish, seen = _relink_at_finish(parent, tmp_path / "moved", other)
    with pytest.raises(OutputError, match="was replaced while it was written"):
        write_set(out, {"a.csv": "new\n"}, finish=finish)
    assert snapshot(other) == seen["other"]
    moved = tmp_path / "moved"
    assert sorted(os.listdir(moved)) == ["out"]  # no staging folder, no journal left
    assert (moved / "out" / "a.csv").read_text() == "old\n"


@pytest.mark.parametrize("how", ["in_place", "subfolder"])
def test_an_in_place_folder_turned_into_a_link_at_the_commit_writes_nothing_there(
        tmp_path, state, how):
    """Sets moved in entry by entry: at the commit, the output folder becomes a link to
    another folder holding a folder named like this run's staging folder."""
    out = tmp_path / "out"
    out.mkdir()
    if how == "subfolder":
        (out / "sub").mkdir()
    write_set(out, {"a.csv": "old\n"}, in_place=how == "in_place")
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "precious.txt").write_text("the other folder's file\n")
    finish, seen = _relink_at_finish(out, tmp_path / "moved", other)
    with pytest.raises(OutputError, match="was replaced while it was written"):
        write_set(out, {"a.csv": "new\n"}, finish=finish, in_place=how == "in_place")
    assert snapshot(other) == seen["other"]
    moved = tmp_path / "moved"
    assert (moved / "a.csv").read_text() == "old\n"
    assert not [n for n in os.listdir(moved) if n.startswith(".toolsel-")]


def test_an_output_folder_turned_into_a_link_at_the_swap_is_refused(tmp_path, state):
    """``out`` itself replaced by a link just before the swap: the swap refuses a name that
    is no longer a folder; the link and its target stay as they are."""
    out = tmp_path / "out"
    write_set(out, {"a.csv": "old\n"})
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "a.csv").write_text("theirs\n")

    def finish(staging: Path) -> None:
        out.rename(tmp_path / "moved")
        out.symlink_to(other)

    with pytest.raises(OutputError, match="no longer a folder"):
        write_set(out, {"a.csv": "new\n"}, finish=finish)
    assert (other / "a.csv").read_text() == "theirs\n" and out.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "moved", "out", "state"]


# --------------------------------------------------------------------------------------------
# attack cases beyond the list (the table is in the closing note)


@pytest.fixture
def world(tmp_path):
    """A work folder with copies of the inputs and a hashed sentinel tree beside it."""
    (tmp_path / "work").mkdir()
    sentinel = tmp_path / "sentinel"
    (sentinel / "sub").mkdir(parents=True)
    (sentinel / "notes.txt").write_text("a user's notes\n")
    (sentinel / "sub" / "data.csv").write_text("a,b\n1,2\n")
    for name in ("registry.json", "queries.jsonl"):
        shutil.copy(DATA / name, tmp_path / "work" / name)
    return tmp_path


def _work(world: Path) -> Path:
    return world / "work"


def test_01_a_named_pipe_as_an_input_never_hangs(world):
    os.mkfifo(world / "fifo.json")
    refused(cli(world, "validate", "--registry", "fifo.json", timeout=60), "fifo.json", "empty")
    refused(cli(world, "sweep", "--registry", REG, "--queries", "fifo.json", "--out", "o",
                timeout=60), "fifo.json", "empty")


def test_02_a_named_pipe_as_an_output_is_refused(world):
    os.mkfifo(world / "out.json")
    refused(cli(world, "import", "--from", "mcp", MCP, "--out", "out.json", "--force",
                timeout=60), "out.json", "not a regular file")
    assert stat.S_ISFIFO(os.lstat(world / "out.json").st_mode)


def test_03_a_named_pipe_at_the_explorer_pages_name_is_left_alone(world):
    (world / "ex").mkdir()
    os.mkfifo(world / "ex" / "explore_registry.html")
    done = cli(world, "explore", "--registry", REG, "--queries", QUERIES, "--out", "ex",
               "--no-lab", timeout=120)
    assert done.returncode == 0, done.stderr
    assert "is not an explorer page toolsel wrote: left alone" in done.stdout
    assert stat.S_ISFIFO(os.lstat(world / "ex" / "explore_registry.html").st_mode)


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_04_dev_stdout_as_a_summary_is_refused(world, force):
    """``/dev/stdout`` is a link: without --force refused as one; with --force it would be
    replaced as a link (as root, for every program on the machine): refused as a system
    folder, --force or not."""
    before = os.readlink("/dev/stdout")
    refused(cli(world, "check", "--registry", REG, "--queries", QUERIES, "--scorers",
                "jaccard", "--min", "R@10=0.1", "--summary", "/dev/stdout", *force),
            "/dev/stdout")
    assert os.readlink("/dev/stdout") == before
    refused(cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
                "jaccard", "--out", "/proc/self/x"), "system")


def test_05_a_hard_link_to_a_users_file_as_an_output(world):
    work = _work(world)
    notes = world / "sentinel" / "notes.txt"
    os.link(notes, work / "hl.json")
    refused(cli(world, "import", "--from", "mcp", MCP, "--out", "hl.json", cwd=work),
            "hl.json", "not written by toolsel")
    done = cli(world, "import", "--from", "mcp", MCP, "--out", "hl.json", "--force", cwd=work)
    assert done.returncode == 0, done.stderr
    assert notes.read_text() == "a user's notes\n"  # the name replaced, never the file
    assert os.stat(notes).st_ino != os.stat(work / "hl.json").st_ino


def test_06_a_link_loop_on_the_way_is_one_line(world):
    os.symlink("loop", world / "loop")
    before = snapshot(world / "sentinel")
    refused(cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
                "jaccard", "--out", "loop/x"), "leads nowhere")
    refused(cli(world, "import", "--from", "mcp", MCP, "--out", "loop/x.json"), "leads nowhere")
    assert snapshot(world / "sentinel") == before


def test_07_a_trailing_slash_after_a_file_name_names_a_folder(world):
    (world / "f.json").write_text("{}\n")
    for args in (["import", "--from", "mcp", MCP, "--out", "f.json/", "--force"],
                 ["check", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
                  "--min", "R@10=0.1", "--junit", "f.json/", "--force"],
                 ["fit", "--registry", REG, "--queries", QUERIES, "--out", "f.json/"]):
        done = cli(world, *args)
        assert done.returncode == 2 and "names a folder" in done.stderr, done.stderr
    refused(cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
                "jaccard", "--out", "f.json/"), "not a folder")
    assert (world / "f.json").read_text() == "{}\n"


def test_08_an_output_folder_holding_the_inputs_keeps_them(world):
    work = _work(world)
    ids = {n: (os.stat(work / n).st_ino, (work / n).read_bytes())
           for n in ("registry.json", "queries.jsonl")}
    done = cli(world, "sweep", "--registry", "registry.json", "--queries", "queries.jsonl",
               "--scorers", "jaccard", "--out", ".", cwd=work)
    assert done.returncode == 0, done.stderr
    assert {n: (os.stat(work / n).st_ino, (work / n).read_bytes()) for n in ids} == ids
    assert (work / "summary.csv").is_file()


def test_09_a_state_folder_reached_through_a_link(world):
    """A link on the way to TOOLSEL_STATE is followed (the user's own setting), the key is
    made private in the folder it leads to; the state folder itself a link: refused."""
    real = world / "real-state-parent"
    real.mkdir()
    os.symlink(real, world / "lnk")
    done = cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
               "--out", "o", TOOLSEL_STATE=str(world / "lnk" / "state"))
    assert done.returncode == 0, done.stderr
    key = real / "state" / "record-key"
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(real / "state").st_mode) == 0o700
    os.symlink(real / "state", world / "state-link")
    refused(cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
                "--out", "o", TOOLSEL_STATE=str(world / "state-link")), "state folder")


def test_10_a_genuine_record_replayed_in_another_folder_is_not_followed(world, state):
    """A private folder and a journal a real run signed, moved (same inode) next to another
    output: their records name the folder they were made in, so nothing follows them."""
    from toolsel.io import make_private_dir, recover_set
    a, b = world / "a", world / "b"
    a.mkdir()
    b.mkdir()
    (b / "mine.txt").write_text("b's file\n")
    made = make_private_dir(a / ".toolsel-commit-r1", id="r1", remove=["mine.txt"])
    (made / "planted.txt").write_text("from a\n")
    os.rename(made, b / ".toolsel-commit-r1")
    write_set(world / "c" / "out", {"x.csv": "1\n"})  # a real journal's shape, then replayed
    before = snapshot(b)
    recover_set(b)
    write_set(b, {"y.csv": "2\n"}, in_place=True)
    assert (b / "mine.txt").read_text() == "b's file\n" and not (b / "planted.txt").exists()
    assert (b / ".toolsel-commit-r1" / "planted.txt").is_file()
    assert {k: v for k, v in snapshot(b).items() if not k.startswith("y.csv")} == before


def test_11_a_huge_request_and_an_oversized_label_file(world):
    work = _work(world)
    lines = (work / "queries.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["query"] = "send " * 6_000_000  # one 30 MB line
    (work / "huge.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    done = cli(world, "validate", "--registry", REG, "--queries", "huge.jsonl", cwd=work)
    assert done.returncode == 0, done.stderr
    with open(work / "big.jsonl", "wb") as fh:  # sparse: 300 MB, past the 256 MB cap
        fh.truncate(300 << 20)
    refused(cli(world, "validate", "--registry", REG, "--queries", "big.jsonl", cwd=work),
            "big.jsonl", "larger than 256 MB")


def test_12_a_nul_in_a_request_id_is_shown_escaped(world):
    import xml.etree.ElementTree as ET
    work = _work(world)
    lines = (work / "queries.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["id"] = "q\x00x"
    (work / "nul.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    done = cli(world, "check", "--registry", REG, "--queries", "nul.jsonl", "--scorers",
               "jaccard", "--min", "R@10=0.1", "--junit", "j.xml", "--summary", "s.md",
               cwd=work)
    assert done.returncode == 0, done.stderr
    assert "\x00" not in done.stdout + done.stderr
    names = [c.get("name") or "" for s in ET.parse(work / "j.xml").getroot() for c in s]
    assert any(n.startswith("q\\x00x ") for n in names), names[:3]
    assert "\x00" not in (work / "s.md").read_text()


def test_13_a_registry_nested_a_million_deep_is_one_line(world):
    (world / "deep.json").write_text("[" * 10**6 + "]" * 10**6)
    refused(cli(world, "validate", "--registry", "deep.json"), "deep.json", "nested too deeply")


def test_14_unicode_normalization_twins_stay_two(world):
    """``café`` composed (NFC) and decomposed (NFD): two request ids, two output folders,
    never one written over the other."""
    import unicodedata
    work = _work(world)
    nfc, nfd = (unicodedata.normalize(f, "caf\u00e9") for f in ("NFC", "NFD"))
    assert nfc != nfd
    lines = (work / "queries.jsonl").read_text().splitlines()
    recs = [json.loads(ln) for ln in lines[:2]]
    recs[0]["id"], recs[1]["id"] = nfc, nfd
    (work / "twins.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    for name in (nfc, nfd):
        done = cli(world, "sweep", "--registry", REG, "--queries", "twins.jsonl", "--scorers",
                   "jaccard", "--out", name, cwd=work)
        assert done.returncode == 0, done.stderr
    assert {nfc, nfd} <= set(os.listdir(work))
    per_query = (work / nfc / "per_query.csv").read_text()
    assert nfc in per_query and nfd in per_query


def test_15_a_folder_another_process_holds_the_lock_on(world, state):
    from toolsel.io import write_pair
    out = world / "o"
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; "
                               "fd = os.open(sys.argv[1], os.O_RDONLY); "
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); "
                               "time.sleep(60)", str(world)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match="another process is writing it"):
            write_set(out, {"a.csv": "1\n"}, timeout=0.5)
        with pytest.raises(OutputError, match="another process is writing it"):
            write_pair([(world / "r.json", "{}", world / "r.json")], timeout=0.5)
    finally:
        holder.kill()
        holder.wait()
    assert not out.exists() and not (world / "r.json").exists()
    write_set(out, {"a.csv": "1\n"}, timeout=5)


def test_16_umask_000_never_opens_a_staging_folder_to_others(world, state):
    """With umask 000 a staging folder made 0o777 would let any user add a file to the set
    (moved into the output as toolsel's): staging folders are 0o700 while filled; the output
    folder then takes the old folder's mode, or a new folder's (0o777 minus the umask)."""
    modes = []

    def finish(staging: Path) -> None:
        modes.append(stat.S_IMODE(os.stat(staging).st_mode))

    old = os.umask(0)
    try:
        write_set(world / "new", {"a.csv": "1\n"}, finish=finish)
        (world / "kept").mkdir(mode=0o750)
        os.chmod(world / "kept", 0o750)
        write_set(world / "kept", {"a.csv": "1\n"}, finish=finish)
        (world / "inplace" / "sub").mkdir(parents=True)
        write_set(world / "inplace", {"a.csv": "1\n"}, finish=finish)
    finally:
        os.umask(old)
    assert modes == [0o700, 0o700, 0o700]
    assert stat.S_IMODE(os.stat(world / "new").st_mode) == 0o777
    assert stat.S_IMODE(os.stat(world / "kept").st_mode) == 0o750


@pytest.fixture
def mount(world):
    """A tmpfs mounted under ``world`` (root only): ``mount(options) -> folder``."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    made = []

    def make(options: str) -> Path:
        d = world / f"mnt{len(made)}"
        d.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(d)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"mount -t tmpfs is not allowed here: {done.stderr.strip()}")
        made.append(d)
        return d
    yield make
    for d in made:
        subprocess.run(["umount", str(d)], capture_output=True)


def test_17_a_read_only_folder_is_one_line(world, mount):
    ro = mount("size=1m,ro")
    refused(cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
                "jaccard", "--out", ro / "sw"), "not writable")
    refused(cli(world, "import", "--from", "mcp", MCP, "--out", ro / "r.json"), "not writable")


def test_18_a_full_disk_is_one_line_naming_the_file_and_keeps_the_old_one(world, mount):
    small = mount("size=200k")
    assert cli(world, "import", "--from", "mcp", MCP, "--out", small / "r.json").returncode == 0
    old = (small / "r.json").read_bytes()
    (world / "big.json").write_text(json.dumps({f"T{j}": "does thing " * 20
                                                for j in range(3000)}))
    refused(cli(world, "import", "big.json", "--out", small / "r.json"), "r.json",
            "No space left on device")
    assert (small / "r.json").read_bytes() == old and os.listdir(small) == ["r.json"]
    with open(small / "fill", "wb") as fh:
        fh.write(b"\0" * (small_free := shutil.disk_usage(small).free - 4096))
    assert small_free > 0
    assert cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
               "jaccard", "--out", small / "sw").returncode == 2
    assert sorted(os.listdir(small)) == ["fill", "r.json"]


def test_19_toolsels_state_folder_is_never_an_output(world):
    assert cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
               "--out", "o").returncode == 0
    key = (world / "state" / "record-key").read_bytes()
    refused(cli(world, "import", "--from", "mcp", MCP, "--out", "state/record-key", "--force"),
            "state folder")
    refused(cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
                "jaccard", "--out", "state/x"), "state folder")
    assert (world / "state" / "record-key").read_bytes() == key


@pytest.fixture
def sticky(world):
    """A shared folder (mode 1777) holding a link of the user ``nobody`` (root only)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a link to another user (nobody)")
    import pwd
    nobody = pwd.getpwnam("nobody").pw_uid
    shared = world / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    target = world / "sentinel"
    for name, to in (("rep", target / "sub"), ("s.md", target / "notes.txt")):
        os.symlink(to, shared / name)
        os.lchown(shared / name, nobody, -1)
    return shared


@pytest.mark.parametrize("args", [
    ["sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--out",
     "shared/rep"],
    ["sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--out",
     "shared/rep/deeper"],
    ["import", "--from", "mcp", MCP, "--out", "shared/rep/r.json"],
    ["check", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard", "--min",
     "R@10=0.1", "--summary", "shared/s.md", "--force"],
    ["label", "--registry", REG, "--queries", "shared/rep/q.jsonl", "--query", "what is 3 "
     "times 4", "--expected", "calculator", "--yes", "--no-embed-check", "--scorers", "jaccard"],
], ids=["sweep", "sweep-deeper", "import", "check-force", "label"])
def test_20_another_users_link_in_a_shared_folder_is_never_followed(world, sticky, args):
    """``/tmp/report -> /etc/cron.d``: toolsel resolves paths itself, so it makes the
    refusal the kernel's protected_symlinks makes; a link of this user there is followed."""
    before = snapshot(world / "sentinel")
    refused(cli(world, *args), "a symbolic link of another user", "shared folder")
    assert snapshot(world / "sentinel") == before
    os.lchown(sticky / "rep", os.geteuid(), -1)  # the same link, this user's: followed
    done = cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
               "--out", "shared/rep")
    assert done.returncode == 0, done.stderr
    assert (world / "sentinel" / "sub" / "summary.csv").is_file()


def test_21_pipes_and_a_huge_sparse_file_named_like_journals(world):
    work = _work(world)
    for name in (".out.toolsel-journal-aaaaaaaaaaaa", ".r.json.toolsel-pair-bbbbbbbbbbbb",
                 ".r.json.toolsel-paircommit-cccccccccccc"):
        os.mkfifo(work / name)
    with open(work / ".out.toolsel-journal-dddddddddddd", "wb") as fh:
        fh.truncate(2 << 30)
    before = snapshot(work)
    for args in (["sweep", "--registry", REG, "--queries", QUERIES, "--scorers", "jaccard",
                  "--out", "out"], ["import", "--from", "mcp", MCP, "--out", "r.json"]):
        done = cli(world, *args, cwd=work, timeout=120)
        assert done.returncode == 0, done.stderr
    after = snapshot(work)
    assert {k: v for k, v in after.items() if k in before} == before


def test_22_ids_and_tool_names_that_look_like_paths_name_no_file(world):
    work = _work(world)
    reg = json.loads((work / "registry.json").read_text())
    ren = {"calculator": "../../../escape", "weather_lookup": "/tmp/toolsel-abs-escape"}
    for t in reg:
        t["name"] = ren.get(t["name"], t["name"])
    (work / "trav.json").write_text(json.dumps(reg))
    out = []
    for ln in (work / "queries.jsonl").read_text().splitlines():
        q = json.loads(ln)
        q["expected"] = [ren.get(e, e) for e in q["expected"]]
        q["id"] = "../../" + q["id"]
        out.append(json.dumps(q))
    (work / "trav.jsonl").write_text("\n".join(out) + "\n")
    before = snapshot(world, skip=work)
    for args in (["sweep", "--scorers", "jaccard", "--out", "s/x"],
                 ["explore", "--out", "e/x", "--no-lab"],
                 ["check", "--scorers", "jaccard", "--min", "R@10=0.1", "--junit", "j.xml",
                  "--summary", "s.md", "--baseline", "b.json", "--update-baseline"]):
        done = cli(world, args[0], "--registry", "trav.json", "--queries", "trav.jsonl",
                   *args[1:], cwd=work)
        assert done.returncode == 0, done.stderr
    assert {k: v for k, v in snapshot(world, skip=work).items()
            if not k.startswith(("state", "home"))} == \
        {k: v for k, v in before.items() if not k.startswith(("state", "home"))}
    assert not Path("/tmp/toolsel-abs-escape").exists()


def test_23_one_file_for_two_outputs_under_two_spellings(world):
    work = _work(world)
    os.symlink(".", work / "here")
    for summary, junit in (("s.md", "./s.md"), ("s.md", "here/s.md")):
        refused(cli(world, "check", "--registry", REG, "--queries", QUERIES, "--scorers",
                    "jaccard", "--min", "R@10=0.1", "--summary", summary, "--junit", junit,
                    cwd=work), "which this command writes")
    assert not (work / "s.md").exists()


def test_24_a_name_at_the_length_limit_is_an_output(world):
    """Names of 255 bytes (the limit), in ASCII and in two-byte characters, are outputs like
    any other: written, replaced with --force, nothing left beside them (toolsel's temporary
    and journal names beside a long name use its first bytes and a digest,
    ``toolsel.io.side_stem``). A 256-byte name is refused by the file system in one line."""
    from toolsel.io import side_stem
    work = _work(world)
    inputs = sorted(os.listdir(work))
    for stem in ("a" * 250, "é" * 125):  # 250 bytes + ".json"
        name = f"{stem}.json"
        assert len(os.fsencode(name)) == 255
        assert len(os.fsencode(side_stem(name))) + 33 <= 255
        for force in ((), ("--force",)):
            done = cli(world, "import", "--from", "mcp", MCP, "--out", name, *force, cwd=work)
            assert done.returncode == 0, done.stderr
        assert len(load_registry(work / name)) > 0
        os.unlink(work / name)
    folder = "b" * 255
    for _ in range(2):  # written, then replaced (a sweep's own folder)
        done = cli(world, "sweep", "--registry", REG, "--queries", QUERIES, "--scorers",
                   "jaccard", "--out", folder, cwd=work)
        assert done.returncode == 0, done.stderr
    assert (work / folder / "summary.csv").is_file()
    assert sorted(os.listdir(work)) == sorted([*inputs, folder])  # no side name left
    refused(cli(world, "import", "--from", "mcp", MCP, "--out", "c" * 251 + ".json", cwd=work),
            "too long")


@pytest.fixture
def as_nobody(world):
    if os.geteuid() != 0:
        pytest.skip("needs root to run a forger as the user nobody (runuser)")
    if shutil.which("runuser") is None:
        pytest.skip("runuser is not installed")

    def run(script: str) -> None:
        done = subprocess.run(["runuser", "-u", "nobody", "--", "sh", "-ec", script],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    return run


@pytest.fixture
def shared_tmp():
    """A shared folder (mode 1777) under /tmp, which another user can reach."""
    import tempfile
    d = Path(tempfile.mkdtemp(prefix="toolsel-shared-", dir="/tmp"))
    os.chmod(d, 0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_25_another_user_forges_a_pair_journal_beside_roots_import(world, as_nobody,
                                                                    shared_tmp):
    shared = shared_tmp
    assert cli(world, "import", "--from", "mcp", MCP, "--out", shared / "r.json").returncode == 0
    (shared / "root.txt").write_text("root's file\n")
    as_nobody(f"""
        cd {shared}
        echo planted > .q.jsonl.aaaaaaaaaaaa.tmp
        set -- $(stat -c '%d %i' .)
        printf '{{"kind": "toolsel pair journal", "id": "aaaaaaaaaaaa", "out": "r.json", "parent": [%s, %s], "parent_path": "{shared}", "files": [["{shared}", "q.jsonl", ".q.jsonl.aaaaaaaaaaaa.tmp", [%s, %s]], ["{shared}", "root.txt", ".root.txt.aaaaaaaaaaaa.tmp", [%s, %s]]], "mac": "%064d"}}' $1 $2 $1 $2 $1 $2 0 > .r.json.toolsel-paircommit-aaaaaaaaaaaa
    """)
    planted = snapshot(shared)
    done = cli(world, "import", "--from", "mcp", MCP, "--out", shared / "r.json")
    assert done.returncode == 0, done.stderr
    after = snapshot(shared)
    # everything but the registry this run wrote is as the forger left it: the planted file
    # is not renamed over the labels or root's file, the forged journal is not removed
    assert {k: v for k, v in after.items() if k != "r.json"} == \
        {k: v for k, v in planted.items() if k != "r.json"}
    assert ".q.jsonl.aaaaaaaaaaaa.tmp" in after and "root.txt" in after


def test_26_label_through_a_hard_link_to_another_users_file(world):
    """``label`` appends by writing a new file in the folder and renaming it over the name:
    through a hard link to another user's labeled file, that file keeps its content."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user (nobody)")
    import pwd
    theirs = world / "sentinel" / "theirs.jsonl"
    shutil.copy(DATA / "queries.jsonl", theirs)
    os.chown(theirs, pwd.getpwnam("nobody").pw_uid, -1)
    os.link(theirs, _work(world) / "q.jsonl")
    before = snapshot(world / "sentinel")
    done = cli(world, "label", "--registry", REG, "--queries", "q.jsonl", "--query",
               "what is 3 times 4 please", "--expected", "calculator", "--yes",
               "--no-embed-check", "--scorers", "jaccard", cwd=_work(world))
    assert done.returncode == 0, done.stderr
    assert snapshot(world / "sentinel") == before
    assert "what is 3 times 4 please" in (_work(world) / "q.jsonl").read_text()
