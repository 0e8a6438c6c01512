"""One flag per concept across the subcommands (toolsel/cli/common.py)."""

import argparse

import pytest

from toolsel.cli import build_parser, main
from toolsel.cli.common import DEFAULT_SPLIT, csv_list, int_list


def _subparsers():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices


def _actions(p):
    return {opt: a for a in p._actions for opt in a.option_strings}


def test_every_command_names_one_concept_one_way():
    for name, p in _subparsers().items():
        acts = _actions(p)
        if "--scorers" in acts:
            assert acts["--scorers"].type is csv_list, name
        if "--scorer" in acts:  # only as the hidden alias of --scorers (or label's --rank-by)
            assert acts["--scorer"].help == argparse.SUPPRESS, name
            assert acts["--scorer"].dest in ("scorers", "rank_by"), name
        if "--top-k" in acts:
            assert acts["--top-k"].type is int_list, name
        if "--split" in acts and name != "label":  # label's --split is where a new label goes
            assert acts["--split"].default == DEFAULT_SPLIT, name
        if "--queries" in acts and name != "validate":
            assert acts["--queries"].type is not int, name  # a path; counts are --n-queries
        if "--policy" in acts and name not in ("sweep", "check", "serve"):  # a selection policy
            assert acts["--policy"].help == argparse.SUPPRESS, name
    for name in ("sweep", "discovery", "compare", "conversations", "policies"):
        acts = _actions(_subparsers()[name])
        assert "--scorers" in acts and "--split" in acts, name


def test_old_flags_still_parse_as_the_new_ones():
    parser = build_parser()
    a = parser.parse_args(["compare", "--registry-a", "r", "--repairs", "p", "--queries", "q",
                           "--scorer", "bm25", "--top-k", "5"])
    assert a.scorers == ["bm25"] and a.top_k == [5] and a.split == "all"
    a = parser.parse_args(["conversations", "--registry", "r", "--conversations", "c",
                           "--policy", "latest"])
    assert a.carry == "latest" and a.scorers == ["default"] and a.top_k == [10]
    a = parser.parse_args(["label", "--registry", "r", "--queries", "q", "--scorer", "bm25"])
    assert a.rank_by == "bm25"


def test_synthetic_counts_queries_with_n_queries(tmp_path, capsys):
    with pytest.raises(SystemExit, match="--n-queries needs --queries-out"):
        main(["synthetic", "--tools", "20", "--n-queries", "3",
              "--registry-out", str(tmp_path / "r.jsonl")])


def test_every_readme_command_parses():
    """Every `toolsel ...` line of a bash block in README.md and the docs/ pages it links."""
    import re
    import shlex
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    text = "\n".join(p.read_text(encoding="utf-8")
                     for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))])
    parser = build_parser()
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#")[0].strip()
            if line.startswith("toolsel "):
                commands.append([a for a in shlex.split(line)[1:]
                                 if not (a.startswith("[") or a.endswith("]"))])
    assert len(commands) >= 10
    for args in commands:
        parser.parse_args(args)  # exits (fails the test) on an unknown flag
