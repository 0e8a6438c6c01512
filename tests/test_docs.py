"""The README and the docs/ pages it links: every relative link resolves (file, and heading for
a Markdown anchor), every page is reachable from the README, and the newcomer's path (install,
your registry, the report, CI) is in the README's first 120 lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)|href=\"([^\"]+)\"")


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces -> '-'."""
    text = re.sub(r"<[^>]+>|`", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {_slug(m) for m in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [a or b for a, b in _LINK.findall(text)]


def test_slug_by_hand():
    assert _slug("Which scorer?") == "which-scorer"
    assert _slug("Registry styles (`styles/`)") == "registry-styles-styles"
    assert _slug("Large registries (up to 10,000 tools)") == "large-registries-up-to-10000-tools"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
        elif not dest.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_every_docs_page_is_linked_from_the_readme():
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in _links(ROOT / "README.md")}
    assert PAGES[1:] and all(p.resolve() in linked for p in PAGES[1:])


def test_the_newcomers_path_is_in_the_first_120_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    headings = {line: i + 1 for i, line in enumerate(lines) if line.startswith("## ")}
    for heading in ("## Install and test", "## Your own registry", "## Read the report",
                    "## In CI"):
        assert headings.get(heading, 10**6) <= 120, heading
    first = "\n".join(lines[:120])
    for command in ("make test", "toolsel import", "toolsel validate", "toolsel report",
                    "toolsel check", "examples/ci/toolsel-check.yml"):
        assert command in first, command
