"""A second, independent MCP client against ``toolsel serve``: the MCP Inspector's CLI (npm,
``@modelcontextprotocol/inspector --cli``), run with the network off.

Installed for the run into a temporary folder from the npm registry (nothing committed, nothing
left behind). Version 0.17.5 runs on Node 20 (this machine's); later ones ask for Node 22.
Skipped, with the reason, when Node or npm is missing or the install fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import ROOT
from mcp_servers import PY, notes_command

pytest.importorskip("mcp")
pytestmark = pytest.mark.slow

INSPECTOR = "@modelcontextprotocol/inspector@0.17.5"


@pytest.fixture(scope="module")
def inspector(tmp_path_factory):
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("the MCP Inspector CLI needs Node and npm (apt-get install nodejs npm)")
    folder = tmp_path_factory.mktemp("inspector")
    proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error",
                           INSPECTOR], cwd=folder, capture_output=True, text=True, timeout=600)
    binary = folder / "node_modules" / ".bin" / "mcp-inspector"
    if proc.returncode != 0 or not binary.exists():
        pytest.skip(f"npm install {INSPECTOR} failed: {proc.stderr.strip()[-300:]}")
    return binary


def _offline() -> list[str]:
    """``unshare -n`` (a new network namespace: no network at all) when it works here."""
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"]).returncode == 0:
        return ["unshare", "-n"]
    return []


def _inspect(binary, *method):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [*_offline(), str(binary), "--cli", PY, "-m", "toolsel.cli", "serve", "--scorers",
           "bm25", "--top-k", "2", notes_command(), *method]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_inspector_cli_lists_searches_and_calls_through_the_gateway(inspector):
    listed = _inspect(inspector, "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]] == ["search_tools", "call_tool"]
    found = _inspect(inspector, "--method", "tools/call", "--tool-name", "search_tools",
                     "--tool-arg", "query=save a note")
    names = [t["name"] for t in found["structuredContent"]["tools"]]
    assert "add_note" in names and len(names) == 2
    assert found["structuredContent"]["tools"][names.index("add_note")]["inputSchema"][
        "required"] == ["title", "text"]
    called = _inspect(inspector, "--method", "tools/call", "--tool-name", "call_tool",
                      "--tool-arg", "name=add_note",
                      "--tool-arg", 'arguments={"title": "t", "text": "x"}')
    assert not called.get("isError") and "saved note 't'" in called["content"][0]["text"]
