"""The page registry (toolsel.pages.PAGES): each entry is a module with a notebook of its name."""

from pathlib import Path

import pytest

from toolsel.pages import PAGES, page_module

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("number", sorted(PAGES))
def test_each_page_has_its_module_and_notebook_pair(number):
    module = page_module(number)
    assert module.__doc__, module.__name__
    stem = f"{number}_{PAGES[number]}"
    assert (ROOT / "notebooks" / f"{stem}.py").is_file()
    assert (ROOT / "notebooks" / f"{stem}.ipynb").is_file()


def test_an_unknown_page_names_the_known_ones():
    with pytest.raises(KeyError, match="13_labels"):
        page_module("99")


def test_every_bundled_notebook_is_a_registered_page():
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert stems == [f"{n}_{m}" for n, m in sorted(PAGES.items())]
