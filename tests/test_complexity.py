"""The complexity gate: no function in ``toolsel/`` above cyclomatic complexity 20 (radon's
measure). Refactored to get here: ``tables/check.py parse_baseline`` (45 → 4, a reader
class of small checks),
``report/claims.py leader`` (26 → 19), ``mode_summary`` (21 → 14) and
``report/plan.py notebook_plan`` (22 → 9), ``integrations/importers.py import_files``
(22 → 10) and ``integrations/sources.py detect_format`` (25 → 17), both reading the table of
tool-file formats; ``cli/check.py _run`` (82 → 18: refusals, loading, report and outputs
each a step), ``cli/importers.py _import`` (31 → 11), ``report/plan.py check_user_data``
(24 → 2) and ``tables/labeling.py read_requests`` (22 → 5, one function per format);
``report/runner.py _write`` (44 → 11) and ``report/output.py _load_manifest`` (23 → 3),
split into named steps of the report's write and the manifest's checks;
``integrations/benchmarks.py from_beir`` (42 → 3: layout, corpus, query texts,
one step per qrels file and row, query records);
``from_bfcl`` (33 → 9: answers, an entry's tools, its query, orphan answers);
``from_toolbench`` (23 → 10: an API's tool record, a query's expected tools);
``from_metatool`` (23 → 10: tool file, CSV queries, JSON queries);
``integrations/sources.py import_sources`` (30 → 3: input formats, inputs read in
order, benchmark groups read together);
``integrations/anthropic_runs.py load_runs`` (21 → 13: the transcript files, an inline label);
``tables/runs.py _evaluate_run`` (51 → 15: the required tools split, the search rows,
each diagnosis's evidence and the search and usage columns each a function) and
``tables/conversations.py replay`` (42 → 8: a replayer whose steps are the turn's
selection, the tools visible, the discover calls, pinning or loading their hits);
``tables/scenario.py escape_hatch`` (35 → 11: a tally per scorer, filled query by
query, with the discover hits, their calls and payload, the miss rows and the summary
each a function); ``tables/check.py parse_thresholds`` (21 → 9: a threshold's metric,
cut-off and value each read by a function, checked in the same order) and ``compare``
(21 → 12: one scorer's run, then one request, compared with the baseline's).
``report/explorer_data.py explorer_data`` (40 → 17: inputs checked, each query's
required tools and terms, each scorer's entry, its scale and required ranks a function).
``report/check_outputs.py markdown_summary`` (32 → 7: inputs line, summary, thresholds
and notes sections) and ``junit_xml`` (25 → 4: a suite, a request's testcase, a rank line).
``report/site.py render_index`` (31 → 11: headline, figures, a card and its links).
``report/markdown.py table`` (28 → 11: flattened frame, alignment row, a cell, the footer).
``report/readme.py render_user_readme`` (24 → 14: the scorer-gap warning, a notebook run).
``eval/sweep.py sweep`` (37 → 11, each batch's rows a step); ``data.py _check_subschema``
(32 → 4, one check per keyword) and ``read_records`` (21 → 6, JSON document or JSONL lines);
``scorers/fusion.py FusionScorer._fit`` (30 → 3: parameter checks, lexical, semantic signals);
``pages/which_scorer.py which_scorer_markdown`` (30 → 15, one style's rows a step) and
``which_embedding_markdown`` (28 → 10, one model's finding a step); ``eval/policies.py
evaluate_policies`` (26 → 10: fitting the policies, a selection's cost, the table).
"""

from __future__ import annotations

from pathlib import Path

import pytest

radon = pytest.importorskip("radon.complexity")
from radon.visitors import Function  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: The most any function of the package may reach.
LIMIT = 20


def complexities(package: Path = ROOT / "toolsel") -> dict[tuple[str, str], int]:
    """Every function and method of ``package``: (file, qualified name) → complexity."""
    out: dict[tuple[str, str], int] = {}
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        for block in radon.cc_visit(path.read_text(encoding="utf-8")):
            for f in [block, *getattr(block, "methods", [])]:
                if isinstance(f, Function):
                    key = (rel, f.fullname)
                    out[key] = max(out.get(key, 0), f.complexity)
    return out


def test_no_function_above_the_limit():
    found = complexities()
    assert len(found) > 1000  # the whole package was read
    over = [f"toolsel/{path} {name}: {cc} (limit {LIMIT})"
            for (path, name), cc in sorted(found.items()) if cc > LIMIT]
    assert not over, "split these functions:\n" + "\n".join(over)


def test_the_gate_sees_a_complex_function(tmp_path):
    """The measure is real: a function of 21 branches is over the limit."""
    body = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(21))
    (tmp_path / "m.py").write_text(f"def f(x):\n{body}    return -1\n")
    assert complexities(tmp_path) == {("m.py", "f"): 22}
