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

