"""Every notebook: conventions, executed once with papermill, tables equal to the committed.

Notebooks are found by glob (``notebooks/[0-9][0-9]_*.ipynb``), so a new notebook is covered
without touching this file. The checks:

1. conventions: kernelspec ``python3``, outputs stripped, a first code cell tagged
   ``parameters`` that sets ``out_dir`` and whose every line papermill can read (a line it
   cannot parse is silently not a parameter, so ``toolsel report`` could not set it), valid
   ``toolsel.needs`` metadata (:func:`toolsel.report.plan.notebook_needs`), and a
   ``py:percent`` pair in sync with the ipynb;
2. executed with papermill on its own defaults (as ``toolsel report`` does, with ``out_dir``
   in a temporary folder): every CSV it writes must equal, byte for byte, the committed copy
   under ``reports/<NN_slug>/`` (timing tables under ``benchmarks/`` excepted) — a change that
   moves a number fails here until ``make report`` is rerun and its output committed — and
   nothing under ``reports/`` changes. This is the one execution per notebook: it covers
   what a separate ``pytest --nbval-lax`` run used to (the defaults run, nothing is written
   into the real ``reports/``);
3. on that same execution (the bundled data, as ``make report`` runs it), every number of every
   claim is checked against the CSV it cites and no number of the page's prose is left without
   a claim (``tests/test_claims.py`` runs the pages on two other data sets).
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import pytest

from toolsel.report.stable import equal_within_tolerance

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
REPORTS = ROOT / "reports"
NOTEBOOKS = sorted(NB_DIR.glob("[0-9][0-9]_*.ipynb"))
IDS = [p.stem for p in NOTEBOOKS]

pytest.importorskip("papermill")


def _source(cell) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def test_notebooks_exist():
    assert NOTEBOOKS, f"no notebooks matching [0-9][0-9]_*.ipynb in {NB_DIR}"
    assert len({p.name[:2] for p in NOTEBOOKS}) == len(NOTEBOOKS), "two notebooks share a number"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_conventions(nb_path):
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code):
        assert not cell.get("outputs"), f"code cell {i} has outputs: strip them"
        assert cell.get("execution_count") is None, f"code cell {i} has an execution count"
    assert code and "parameters" in code[0].get("metadata", {}).get("tags", []), \
        "the first code cell must be tagged 'parameters'"
    params = _source(code[0])
    assert f'out_dir: str = "../reports/{nb_path.stem}"' in params, \
        f"the parameters cell must set out_dir: str = \"../reports/{nb_path.stem}\""
    assert nb["metadata"].get("jupytext", {}).get("formats") == "ipynb,py:percent"


_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]+)?=", re.MULTILINE)


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_parameters_are_readable_and_needs_valid(nb_path):
    from toolsel.report.plan import DATA_PARAMS, notebook_needs, notebook_parameters
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    params_src = _source(next(c for c in nb["cells"] if c["cell_type"] == "code"))
    assigned = _ASSIGNMENT.findall(params_src)
    declared = notebook_parameters(nb_path)
    assert list(declared) == assigned, (
        f"papermill reads {list(declared)} from the parameters cell, which assigns "
        f"{assigned}: keep one `name: type = value  # help` per line (no '=' or parentheses "
        "in the help comment)")
    needs = notebook_needs(nb_path)  # raises on a malformed toolsel.needs
    assert set(needs) <= set(declared), f"needs {needs} but declares only {list(declared)}"
    for name in set(DATA_PARAMS) & set(declared):
        assert declared[name] == "str", f"{name} must be a path: `{name}: str = ...`"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
def test_paired_text_is_in_sync(nb_path):
    jupytext = pytest.importorskip("jupytext")
    py = nb_path.with_suffix(".py")
    assert py.exists(), f"{py.name} (the py:percent pair) is missing"
    from_py = jupytext.read(py)
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    a = [(c.cell_type, c.source.strip()) for c in from_py.cells]
    b = [(c["cell_type"], _source(c).strip()) for c in nb["cells"]]
    assert a == b, (f"{nb_path.name} and {py.name} differ: run "
                    f"`jupytext --sync notebooks/{py.name}`")


def _snapshot(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*")}


def _diff(new: Path, old: Path) -> str:
    lines = difflib.unified_diff(old.read_text().splitlines(), new.read_text().splitlines(),
                                 "committed", "regenerated", n=0, lineterm="")
    return "\n".join(list(lines)[:12])


# one papermill run per notebook, shared by the two checks below (both in this file, so
# `--dist loadfile` keeps them on one worker): {stem: (folder, executed, out_dir, reports kept)}
_RUNS: dict[str, tuple[Path, Path, Path, bool]] = {}


def _executed(nb_path: Path, tmp_path_factory) -> tuple[Path, Path, Path, bool]:
    """``nb_path`` executed with papermill on its own defaults, as ``toolsel report`` runs it
    (``out_dir`` in a temporary folder), once per session; whether ``reports/`` was left alone
    during the run. A failed run is not kept: the next test that needs it runs it again."""
    if nb_path.stem not in _RUNS:
        from toolsel.report import execute_notebook
        folder = tmp_path_factory.mktemp(nb_path.stem)
        out = folder / nb_path.stem
        before = _snapshot(REPORTS)
        execute_notebook(nb_path, folder / nb_path.name, out, cwd=NB_DIR)
        _RUNS[nb_path.stem] = (folder, folder / nb_path.name, out, _snapshot(REPORTS) == before)
    return _RUNS[nb_path.stem]


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=IDS)
@pytest.mark.slow
def test_executes_and_tables_match_committed(nb_path, tmp_path_factory):
    tmp_path, _, out, reports_kept = _executed(nb_path, tmp_path_factory)
    assert reports_kept, "the notebook wrote into reports/ (use out_dir)"
    written = sorted(out.rglob("*.csv")) if out.exists() else []
    stale = []
    for csv in written:
        rel = csv.relative_to(tmp_path)
        if "benchmarks" in rel.parts:  # timings: never compared
            continue
        committed = REPORTS / rel
        if not committed.exists():
            stale.append(f"reports/{rel.as_posix()} is not committed")
        # a float model's last digits differ by CPU: equal within toolsel.report.stable's
        # stated tolerance (rank, count and every other text exact)
        elif not equal_within_tolerance(csv.read_bytes(), committed.read_bytes()):
            stale.append(f"reports/{rel.as_posix()} differs:\n{_diff(csv, committed)}")
    assert not stale, ("committed tables are out of date; run `make report` and commit "
                       "reports/:\n" + "\n".join(stale))


def _claim_pages() -> list[Path]:
    from test_claims import PAGES
    return [NB_DIR / f"{nb}.ipynb" for nb in PAGES]


@pytest.mark.parametrize("nb_path", _claim_pages(), ids=lambda p: p.stem)
@pytest.mark.slow
def test_every_number_on_the_page_comes_from_its_tables_on_the_bundled_data(nb_path,
                                                                          tmp_path_factory):
    """The claims check of ``tests/test_claims.py`` on the bundled data, on the run above."""
    from test_claims import _assert_page
    _, executed, page, _ = _executed(nb_path, tmp_path_factory)
    _assert_page(executed, page, bundled=True, has_split=True)
