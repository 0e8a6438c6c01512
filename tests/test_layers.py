"""The package's layers (pyproject.toml, [tool.importlinter]): no module imports a higher layer."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_import_runs_up_the_layers():
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout



def test_import_toolsel_loads_no_pandas_and_no_table_module():
    code = ("import sys, toolsel; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('pandas', 'matplotlib', 'sklearn', 'onnxruntime') or m.startswith(('toolsel.eval', "
            "'toolsel.tables', 'toolsel.report', 'toolsel.cli'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_an_import_circle_inside_a_folder_breaks_the_contract(tmp_path):
    """The acyclic_siblings contract of pyproject.toml, run on a copy of the package where
    scorers/base.py imports a scorer family (the circle the families' registration once made:
    base -> jaccard -> base), fails and names the folder; the same copy without it passes."""
    import shutil
    shutil.copytree(ROOT / "toolsel", tmp_path / "toolsel",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    lint = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"]
    env = {"PATH": str(Path(sys.executable).parent), "PYTHONPATH": str(tmp_path)}
    clean = subprocess.run(lint, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert clean.returncode == 0, clean.stdout[-3000:] + clean.stderr[-2000:]
    base = tmp_path / "toolsel" / "scorers" / "base.py"
    base.write_text(base.read_text() + "\n\ndef _families():\n    from . import jaccard\n"
                    "    return jaccard\n")
    proc = subprocess.run(lint, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert "No cycles are allowed in toolsel.scorers" in proc.stdout, proc.stdout[-3000:]
    assert ".base -> .jaccard" in proc.stdout or ".jaccard -> .base" in proc.stdout
