"""environment.yml must give conda users the same Python and pins as the pip route."""

import re
import sys
import tomllib

import yaml

from conftest import ROOT


def _pins(reqs):
    out = {}
    for r in reqs:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(\S+)", r.strip())
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_environment_yml_matches_pyproject_pins():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for name, extra in project["optional-dependencies"].items():
        if name in ("notebooks", "test", "mcp", "anthropic", "langchain"):
            reqs += extra
    pip_pins = _pins(reqs)
    # every requirement of the default route is pinned exactly
    assert len(pip_pins) == len([r for r in reqs if not r.startswith("toolsel")])

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    python = [d for d in deps if isinstance(d, str) and d.startswith("python")]
    assert python == ["python=3.11"]
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert "-e ." in pip_section
    assert _pins(pip_section) == pip_pins


def test_running_python_matches_environment():
    assert sys.version_info[:2] >= (3, 11)
