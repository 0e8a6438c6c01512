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
