"""The CI examples run as a user runs them, not only parsed: examples/ci/toolsel-check.yml through
three workflow linters that work offline (actionlint, zizmor, check-jsonschema's bundled GitHub
workflow schema), its install line through pip, and the pre-commit hooks of
.pre-commit-hooks.yaml through pre-commit on a sample git repository, configured as the CI
guide (docs/ci.md) shows."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import DATA, ROOT

WORKFLOW = ROOT / "examples" / "ci" / "toolsel-check.yml"
ZIZMOR_CONFIG = ROOT / "examples" / "ci" / "zizmor.yml"
CI_GUIDE = ROOT / "docs" / "ci.md"
BIN = Path(sys.executable).parent

# What each action or command of the workflow needs from the job's token, from each one's own
# documentation (no linter knows a third-party action's needs)
NEEDS = {
    "actions/checkout": {"contents": "read"},
    "mikepenz/action-junit-report": {"checks": "write"},
    "gh pr comment": {"pull-requests": "write"},
}


def _tool(name: str) -> str:
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed: pip install -e '.[test]'")
    return str(path)


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_actionlint_finds_nothing():
    done = subprocess.run([_tool("actionlint"), "-no-color", str(WORKFLOW)],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def test_zizmor_offline_finds_nothing():
    done = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", "--color", "never",
                           "--config", str(ZIZMOR_CONFIG), str(WORKFLOW)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout


def test_github_workflow_schema_accepts_it():
    done = subprocess.run([_tool("check-jsonschema"), "--builtin-schema",
                           "vendor.github-workflows", str(WORKFLOW)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_step_has_the_permissions_it_needs():
    wf = _workflow()
    assert wf["permissions"] == {}  # nothing granted by default: each job says what it needs
    for job in wf["jobs"].values():
        granted = job.get("permissions", {})
        for step in job["steps"]:
            what = step.get("uses", "").split("@")[0] or next(
                (cmd for cmd in NEEDS if cmd in step.get("run", "")), None)
            for scope, level in NEEDS.get(what, {}).items():
                assert granted.get(scope) in ({level} | ({"write"} if level == "read" else set())), \
                    (step.get("name", what), scope)
        # a fork's pull request gets a read-only token: the steps writing to the pull request
        # or the checks tab may fail, the gate may not
        for step in job["steps"]:
            writes = step.get("uses", "").startswith("mikepenz/") or "gh pr" in step.get("run", "")
            assert step.get("continue-on-error", False) is writes, step.get("name")


@pytest.mark.slow  # clones this repository and builds the package's metadata (about 15 s)
def test_install_line_installs_from_a_commit_without_a_tag(tmp_path):
    """The workflow's install step, run as written with TOOLSEL_SOURCE pointing at this
    repository's current commit (a git URL at a commit, as the comment advises)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the install line installs from a git URL")
    job = next(iter(_workflow()["jobs"].values()))
    source = job["env"]["TOOLSEL_SOURCE"]
    assert source.startswith("git+https://") and not re.search(r"@v\d", source)  # no tag
    (install,) = [s["run"] for s in job["steps"] if s.get("name") == "Install toolsel"]
    assert install.startswith("python -m pip install ")
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    # the interpreter's path and the repository's URL may hold spaces or non-ASCII letters
    # (a clone in "~/My projects/"): the path is quoted for the shell, the URL percent-encoded
    line = install.replace("python -m pip install",
                           f"{shlex.quote(sys.executable)} -m pip install --dry-run --no-deps "
                           "--ignore-installed --no-cache-dir", 1)
    url = "git+" + ROOT.as_uri() + "@" + commit
    done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "TOOLSEL_SOURCE": url})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Would install toolsel-" in done.stdout


def _guide_config() -> str:
    """The .pre-commit-config.yaml block of the CI guide."""
    blocks = re.findall(r"```yaml\n(.*?)```", CI_GUIDE.read_text(encoding="utf-8"), re.S)
    (config,) = [b for b in blocks if "toolsel-check" in b and "rev:" in b]
    return config


@pytest.mark.slow  # pre-commit installs toolsel and its dependencies into its own venv (~90 s)
def test_precommit_hooks_run_on_a_sample_repository(tmp_path):
    """The hooks as a user's repository uses them: the guide's config, its repository and rev
    replaced by this repository at its current commit; pre-commit installs the hook
    environment with pip (language: python) and runs both hooks; a registry change that
    loses a labeled tool fails the commit."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("pre-commit clones the hooks' repository: needs git and a git checkout")
    config = _guide_config()
    rev = re.search(r"^\s*rev:\s*(\S+)", config, re.M).group(1)
    assert not re.fullmatch(r"v\d.*", rev), "a release tag this repository does not have"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    config = re.sub(r"(-\s*repo:\s*)\S.*", rf"\g<1>{ROOT}", config, count=1)
    config = re.sub(r"(rev:\s*)\S+.*", rf"\g<1>{commit}", config, count=1)
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    shutil.copy(DATA / "registry.json", repo / "tools" / "registry.json")
    shutil.copy(DATA / "queries.jsonl", repo / "tools" / "requests.jsonl")
    (repo / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    # pre-commit's own store in tmp_path; HOME kept, so pip reuses its wheel cache
    env = {"PATH": f"{BIN}:/usr/bin:/bin", "HOME": os.environ.get("HOME", str(tmp_path)),
           "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}

    def run(*args):
        return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True)

    assert run("git", "init", "-q").returncode == 0
    baseline = run(sys.executable, "-m", "toolsel.cli", "check", "--registry",
                   "tools/registry.json", "--queries", "tools/requests.jsonl", "--baseline",
                   "tools/check_baseline.json", "--scorers", "bm25", "--update-baseline")
    assert baseline.returncode == 0, baseline.stdout + baseline.stderr
    assert run("git", "add", "-A").returncode == 0
    done = run(str(BIN / "pre-commit"), "run", "--all-files", "--color", "never")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"toolsel validate\.+Passed", done.stdout)
    assert re.search(r"toolsel check\.+Passed", done.stdout)
    # a registry change that loses a labeled tool (its description emptied of meaning, twelve
    # others now carrying the request's words): the check hook fails, naming the tool
    first = json.loads((repo / "tools" / "requests.jsonl").read_text(encoding="utf-8")
                       .splitlines()[0])
    needed = first["expected"][0]
    tools = json.loads((repo / "tools" / "registry.json").read_text(encoding="utf-8"))
    crowd = [t for t in tools if t["name"] not in first["expected"]][:12]
    for tool in tools:
        if tool["name"] == needed:
            tool["description"] = "zzz"
        elif tool in crowd:
            tool["description"] = f"{first['query']} {tool['description']}"
    (repo / "tools" / "registry.json").write_text(json.dumps(tools, indent=2), encoding="utf-8")
    assert run("git", "add", "-A").returncode == 0
    done = run(str(BIN / "pre-commit"), "run", "--all-files", "--color", "never")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"toolsel validate\.+Passed", done.stdout)
    assert re.search(r"toolsel check\.+Failed", done.stdout)
    assert needed in done.stdout and "→" in done.stdout
