"""``toolsel import --from mcp-server``: tools read from MCP servers that really run (the notes
server written with the SDK in tests/mcp_servers, and mcp-server-time from PyPI), over stdio
and streamable HTTP, one at a time, several at once, and from a client config file."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT
from mcp_servers import PY, notes_command, notes_over_http, time_command

pytest.importorskip("mcp")
pytestmark = pytest.mark.slow


def _cli(*args, cwd, timeout=240):
    env = {k: v for k, v in __import__("os").environ.items()}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "toolsel.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=env)


def _registry(path):
    return json.loads(path.read_text())["tools"]


def test_two_stdio_servers_and_one_over_http_in_one_registry(tmp_path):
    with notes_over_http("--name", "web") as (url, _):
        proc = _cli("import", "--from", "mcp-server", time_command(),
                    notes_command("--name", "desk"), url, "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"  {time_command()}: mcp-time: 2 tools over stdio" in out
    assert f"  {notes_command('--name', 'desk')}: desk: 3 tools over stdio" in out
    assert f"  {url}: web: 3 tools over streamable HTTP" in out
    tools = _registry(tmp_path / "reg.json")
    names = [t["name"] for t in tools]
    # the notes tools exist on two servers: qualified on both, as the file importer does
    assert names == ["get_current_time", "convert_time",
                     "desk__add_note", "desk__search_notes", "desk__delete_note",
                     "web__add_note", "web__search_notes", "web__delete_note"]
    by = {t["name"]: t for t in tools}
    assert by["desk__add_note"]["original_name"] == "add_note"
    assert by["web__add_note"]["server"] == "web"
    assert by["get_current_time"]["server"] == "mcp-time"
    # the full schema and MCP metadata as the server lists them
    assert by["get_current_time"]["parameters"]["required"] == ["timezone"]
    assert by["get_current_time"]["annotations"]["readOnlyHint"] is True
    assert "output_schema" in by["convert_time"]
    assert "desk, mcp-time, web" in out


def test_a_server_that_fails_is_one_line_and_the_others_are_imported(tmp_path):
    hang = shlex.join([PY, "-c", "import time; time.sleep(60)"])
    dies = shlex.join([PY, "-c", "import sys; print('no config file found', file=sys.stderr); "
                                 "sys.exit(3)"])
    proc = _cli("import", "--from", "mcp-server", notes_command(), "no-such-mcp-server-cmd",
                hang, dies, "http://127.0.0.1:9/mcp", "--timeout", "4", "--out", "reg.json",
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "each has 4 s (--timeout)" in lines[0]
    assert f"  {notes_command()}: notes: 3 tools over stdio" in lines
    assert ("  no-such-mcp-server-cmd: not imported: cannot start 'no-such-mcp-server-cmd': "
            "no such command or file") in lines
    assert f"  {hang}: not imported: no answer within 4 s (--timeout)" in lines
    died = next(ln for ln in lines if ln.startswith(f"  {dies}: "))
    assert "closed the connection" in died and "no config file found" in died
    refused = next(ln for ln in lines if ln.startswith("  http://127.0.0.1:9/mcp: "))
    assert "not imported: cannot connect to http://127.0.0.1:9/mcp" in refused
    assert "  4 server(s) gave no tools and are left out (above); the others are imported" \
        in lines
    assert [t["name"] for t in _registry(tmp_path / "reg.json")] == [
        "add_note", "search_notes", "delete_note"]


def test_when_every_server_fails_nothing_is_written(tmp_path):
    proc = _cli("import", "--from", "mcp-server", "no-such-mcp-server-cmd", "--out", "reg.json",
                cwd=tmp_path)
    assert proc.returncode == 2
    assert "no tools in the 1 input(s): each was skipped (see above); nothing written" \
        in proc.stderr
    assert not (tmp_path / "reg.json").exists()


def test_a_client_config_file_starts_its_servers(tmp_path):
    config = {"mcpServers": {
        "clock": {"command": PY, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
        "notes": {"command": PY, "args": [str(ROOT / "tests/mcp_servers/notes_server.py")],
                  "env": {"UNUSED": "1"}},
        "off": {"command": "no-such-cmd", "disabled": True},
        "gateway": {"command": "toolsel", "args": ["serve", "x.json"]},
    }}
    (tmp_path / "claude_desktop_config.json").write_text(json.dumps(config))
    proc = _cli("import", "--from", "mcp-server", "claude_desktop_config.json", "--out",
                "reg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "  clock (" in proc.stdout and "): clock: 2 tools over stdio" in proc.stdout
    assert "): notes: 3 tools over stdio" in proc.stdout
    assert "server 'off' is disabled in the config: left out" in proc.stdout
    assert "server 'gateway' is toolsel serve itself: left out" in proc.stdout
    assert {t["server"] for t in _registry(tmp_path / "reg.json")} == {"clock", "notes"}
    # the config is an input: never the output
    proc = _cli("import", "--from", "mcp-server", "claude_desktop_config.json", "--out",
                "claude_desktop_config.json", "--force", cwd=tmp_path)
    assert proc.returncode == 2 and "INPUT" in proc.stderr
    assert json.loads((tmp_path / "claude_desktop_config.json").read_text()) == config


def test_a_config_without_from_mcp_server_is_not_started_and_says_how(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"mcpServers": {"x": {"command": "true"}}}))
    proc = _cli("import", "c.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "an MCP client config" in proc.stderr and "--from mcp-server" in proc.stderr


@pytest.mark.parametrize("entry, field", [
    ({"command": ""}, "command"),
    ({"command": "x", "args": "a b"}, "args"),
    ({"command": "x", "env": {"A": 1}}, "env"),
    ({"url": "ftp://host/mcp"}, "url"),
    ({"url": "http://h/sse", "type": "sse"}, "type"),
])
def test_a_bad_config_entry_names_the_file_the_entry_and_the_field(tmp_path, entry, field):
    (tmp_path / "c.json").write_text(json.dumps({"mcpServers": {"srv": entry}}))
    proc = _cli("import", "--from", "mcp-server", "c.json", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert "c.json" in proc.stderr and "mcpServers.srv" in proc.stderr
    assert field in proc.stderr
    assert not (tmp_path / "reg.json").exists()


def test_server_names_given_with_server_and_a_name_given_twice_is_refused(tmp_path):
    proc = _cli("import", "--from", "mcp-server", notes_command(), notes_command(),
                "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 2 and "'notes'" in proc.stderr and "--server" in proc.stderr
    proc = _cli("import", "--from", "mcp-server", notes_command(), notes_command(),
                "--server", "home", "--server", "work", "--out", "reg.json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = [t["name"] for t in _registry(tmp_path / "reg.json")]
    assert names[:3] == ["home__add_note", "home__search_notes", "home__delete_note"]
