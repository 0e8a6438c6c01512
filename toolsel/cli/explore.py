"""``toolsel explore``: the explorer notebook on your registry, opened in JupyterLab.

Writes a copy of the explorer notebook (04) with its parameters set to your files into
``--out`` (default ``./toolsel-explore``), never into the project's ``notebooks/`` or
``reports/`` and never over an existing file, then opens it in JupyterLab (``--no-lab``: just
write it and print its path). The report folder's ``explorer.html`` is the no-kernel
alternative.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from .common import command, csv_list, int_list


def _args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--registry", type=Path, required=True, help="tool registry JSON")
    p.add_argument("--queries", type=Path, default=None,
                   help="labeled queries JSONL (optional: its first query is shown when the "
                        "default query's tool is not in the registry)")
    p.add_argument("--out", type=Path, default=Path("toolsel-explore"),
                   help="folder for the notebook and its tables (default: ./toolsel-explore)")
    p.add_argument("--scorers", type=csv_list, default=None,
                   help="comma-separated scorers, one panel each (default: the notebook's)")
    p.add_argument("--top-k", type=int_list, default=None,
                   help="comma-separated cut-offs (the explorer shows the headline one first)")
    p.add_argument("--notebooks", type=Path, default=None,
                   help="folder holding NN_explorer.ipynb (default: ./notebooks, else the "
                        "repository's)")
    p.add_argument("--no-lab", action="store_true",
                   help="write the notebook and print its path; do not start JupyterLab")


@command("explore", "write the explorer notebook on your --registry (and --queries) outside "
         "the project and open it in JupyterLab", _args)
def _explore(args: argparse.Namespace) -> int:
    from ..report.explore_notebook import write_explore_notebook
    from .report import _default_notebooks
    notebooks = args.notebooks if args.notebooks is not None else _default_notebooks()
    path = write_explore_notebook(notebooks, args.registry, args.out, queries=args.queries,
                                  scorers=args.scorers, top_k=args.top_k)
    print(f"wrote {path} (tables go to {path.with_suffix('')}/)", flush=True)
    if args.no_lab:
        return 0
    cmd = [sys.executable, "-m", "jupyterlab", path.name]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    print("opening it in JupyterLab (Ctrl-C to stop)", flush=True)
    try:
        return subprocess.call(cmd, cwd=path.parent)
    except KeyboardInterrupt:
        return 130
