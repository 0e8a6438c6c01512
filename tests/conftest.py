"""Shared fixtures: the real data files, and a tiny hand-checkable registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsel import Tool, load_queries, load_registry

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


@pytest.fixture(scope="session")
def registry():
    return load_registry(DATA / "registry.json")


@pytest.fixture(scope="session")
def queries(registry):
    return load_queries(DATA / "queries.jsonl", registry)


@pytest.fixture
def tiny():
    """Four tools whose Jaccard scores are easy to work out by hand."""
    return [
        Tool("weather_lookup", "current weather for a city"),
        Tool("stock_price", "latest stock price for a ticker"),
        Tool("translate_text", "translate text into another language"),
        Tool("calculator", "evaluate a basic arithmetic expression"),
    ]
