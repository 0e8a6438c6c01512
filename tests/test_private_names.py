"""No module of toolsel/ uses another module's private name (``_name``).

A name with a leading underscore is its module's own business; a second module that needs it
needs a public name (or the helper belongs elsewhere). Checked on the source with ``ast``:
``from toolsel.x import _name``, ``from .x import _name`` and ``x._name`` where ``x`` is a
toolsel module imported under that name.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _source_module(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    if node.level == 0:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(root: Path) -> list[str]:
    """``file:line: module._name`` for each private name of one toolsel module used in another."""
    files = sorted((root / "toolsel").rglob("*.py"))
    modules = {_module_name(p, root) for p in files}
    found = []
    for path in files:
        module = _module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: dict[str, str] = {}  # local name -> the toolsel module it is
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                src = _source_module(node, module, path.name == "__init__.py")
                if not src or src.split(".")[0] != "toolsel":
                    continue
                for alias in node.names:
                    if _private(alias.name) and src != module:
                        found.append(f"{path.relative_to(root)}:{node.lineno}: {src}.{alias.name}")
                    if f"{src}.{alias.name}" in modules:
                        bound[alias.asname or alias.name] = f"{src}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "toolsel":
                        bound[alias.asname or "toolsel"] = alias.name if alias.asname else "toolsel"
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                owner = ".".join([bound[value.id], *reversed(chain)])
                if owner in modules and owner != module:
                    found.append(f"{path.relative_to(root)}:{node.lineno}: {owner}.{node.attr}")
    return found


def test_no_private_name_is_used_across_modules():
    found = private_uses(ROOT)
    assert not found, "private names used by another module:\n" + "\n".join(found)


@pytest.mark.parametrize("line", [
    "from toolsel.io import _secret",
    "from ..io import _secret",
    "from .. import io\nio._secret()",
    "import toolsel.io\ntoolsel.io._secret()",
])
def test_each_way_of_reaching_a_private_name_is_found(tmp_path, line):
    (tmp_path / "toolsel" / "cli").mkdir(parents=True)
    for name in ("toolsel/__init__.py", "toolsel/cli/__init__.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "toolsel" / "io.py").write_text("def _secret():\n    return 1\n\n\n"
                                                "def own():\n    return _secret()\n")
    (tmp_path / "toolsel" / "cli" / "run.py").write_text(line + "\n")
    assert private_uses(tmp_path) == [f"{Path('toolsel/cli/run.py')}:"
                                      f"{line.count(chr(10)) + 1}: toolsel.io._secret"]
    (tmp_path / "toolsel" / "cli" / "run.py").write_text("from toolsel.io import own\n")
    assert private_uses(tmp_path) == []
