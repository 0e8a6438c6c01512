"""One quantity, one number: what several pages (or a page and a doc) both state must agree.

A report states the same comparison in more than one place: page 00's headline pair and its
single-scorer gaps are pairs of page 01's table at the same K; page 06's "default against the
best single scorer" is one of its own single-scorer gaps; the README and ``docs/scorers.md``
quote page 06's tables. :func:`quantities` reads every page table of a report folder that
states a paired difference or an interval of a mean (recognised by its columns, whatever the
page), turns each row into one quantity (the data it is on, what is compared, the metric and
cut-off), oriented one way; :func:`disagreements` lists the quantities two tables state with
different numbers or different verdicts; :func:`cited` lists the quantities a page's claims
cite (``claims.json``), so a check can show it compared what the sentences say.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..eval.inference import verdict
from .claims import CLAIMS_FILE, rows_where

__all__ = ["quantities", "disagreements", "cited", "METRIC_LABELS", "TOLERANCE", "KEY",
           "SCOPE_COLUMNS"]

#: Metric labels of the per-style tables, as the metric and cut-off of a sweep.
METRIC_LABELS = {"R@5": ("R@k", 5), "Complete@10": ("Complete@k", 10), "MRR": ("RR", 0)}
#: Two numbers written with six decimals agree within this.
TOLERANCE = 2e-6
_FLIP = {"ahead": "behind", "behind": "ahead", "tie": "tie"}


def _metric(row) -> tuple[str, int]:
    if "top_k" in row and pd.notna(row.get("top_k")):
        return str(row["metric"]), int(row["top_k"])
    return METRIC_LABELS.get(str(row["metric"]), (str(row["metric"]), 0))


def _difference(scope, metric, k, a, b, diff, low, high, word) -> dict:
    """One paired difference, oriented so that ``a`` sorts first."""
    word = word if isinstance(word, str) and word in _FLIP else verdict(low, high)
    if str(a) > str(b):
        a, b, diff, low, high, word = b, a, -diff, -high, -low, _FLIP[word]
    return {"scope": scope, "kind": "difference", "metric": metric, "k": k, "a": str(a),
            "b": str(b), "value": diff, "low": low, "high": high, "verdict": word}


#: Columns that split a table into parts on different requests (part of a quantity's scope).
SCOPE_COLUMNS = ("style", "suite", "split", "category", "n_required", "subset", "coverage")
#: The counts of a page's ``data.csv`` that identify the data it ran on.
DATA_COUNTS = ("n_tools", "n_always_include", "n_queries", "n_requests", "n_test")


def _data_scope(page: Path) -> str:
    """The data a page ran on, from the counts of its ``data.csv`` ("" without one)."""
    path = page / "data.csv"
    if not path.is_file():
        return ""
    d = pd.read_csv(path).iloc[0]
    return ",".join(f"{c}={d[c]}" for c in DATA_COUNTS if c in d.index)


def _rows(table: pd.DataFrame, data: str = "") -> list[dict]:
    """The quantities of one table (empty when its columns state none); ``data``: the data
    the page ran on (:func:`_data_scope`)."""
    cols = set(table.columns)
    parts = [c for c in SCOPE_COLUMNS if c in cols]
    out = []
    for _, r in table.iterrows():
        scope = ";".join([data, *(f"{c}={r[c]}" for c in parts)])
        if {"a", "b", "diff", "diff_low", "diff_high", "metric"} <= cols:
            m, k = _metric(r)
            out.append(_difference(scope, m, k, r["a"], r["b"], r["diff"], r["diff_low"],
                                   r["diff_high"], r.get("verdict")))
        elif {"scorer", "reference", "gap", "gap_low", "gap_high", "metric"} <= cols:
            m, k = _metric(r)
            out.append(_difference(scope, m, k, r["reference"], r["scorer"], r["gap"],
                                   r["gap_low"], r["gap_high"], r.get("verdict")))
        elif {"candidate", "best_single", "diff", "diff_low", "diff_high"} <= cols:
            m, k = _metric(r)
            out.append(_difference(scope, m, k, r["candidate"], r["best_single"], r["diff"],
                                   r["diff_low"], r["diff_high"], r.get("verdict")))
        elif {"scorer", "metric", "mean", "low", "high"} <= cols:
            m, k = _metric(r)
            out.append({"scope": scope, "kind": "mean", "metric": m, "k": k,
                        "a": str(r["scorer"]), "b": "", "value": r["mean"], "low": r["low"],
                        "high": r["high"], "verdict": ""})
        elif {"scorer", "top_k", "R@k", "R@k_low", "R@k_high"} <= cols:  # a wide headline
            for m in ("R@k", "Complete@k"):
                if {m, f"{m}_low", f"{m}_high"} <= cols:
                    out.append({"scope": scope, "kind": "mean", "metric": m,
                                "k": int(r["top_k"]), "a": str(r["scorer"]), "b": "",
                                "value": r[m], "low": r[f"{m}_low"], "high": r[f"{m}_high"],
                                "verdict": ""})
    return out


KEY = ["scope", "kind", "metric", "k", "a", "b"]


def quantities(report_dir: str | Path) -> pd.DataFrame:
    """Every quantity the page tables of ``report_dir`` state: one row per table row, with
    ``page, source`` (the CSV, relative to the page) and :data:`KEY` columns, ``value, low,
    high, verdict``."""
    rep = Path(report_dir)
    rows = []
    for csv in sorted(rep.glob("[0-9][0-9]_*/**/*.csv")):
        try:
            table = pd.read_csv(csv)
        except (pd.errors.EmptyDataError, pd.errors.ParserError):
            continue
        page = csv.relative_to(rep).parts[0]
        for q in _rows(table, _data_scope(rep / page)):
            rows.append({"page": page, "source": csv.relative_to(rep / page).as_posix(), **q})
    return pd.DataFrame(rows, columns=["page", "source", *KEY, "value", "low", "high",
                                       "verdict"])


def disagreements(report_dir: str | Path, *, across_pages_only: bool = False) -> list[str]:
    """The quantities two tables of ``report_dir`` state with different numbers (beyond
    :data:`TOLERANCE`) or verdicts, one line each; ``across_pages_only``: only pairs of tables
    of different pages."""
    q = quantities(report_dir)
    out = []
    for key, g in q.groupby(KEY, sort=False, dropna=False):
        places = g.drop_duplicates(["page", "source"])
        if len(places) < 2 or (across_pages_only and g["page"].nunique() < 2):
            continue
        first = g.iloc[0]
        for _, r in g.iloc[1:].iterrows():
            off = [c for c in ("value", "low", "high")
                   if not abs(float(r[c]) - float(first[c])) <= TOLERANCE]
            if off or r["verdict"] != first["verdict"]:
                what = dict(zip(KEY, key))
                out.append(f"{what}: {first['page']}/{first['source']} says "
                           f"{first['value']:.6f} [{first['low']:.6f}, {first['high']:.6f}] "
                           f"{first['verdict']}, {r['page']}/{r['source']} says "
                           f"{r['value']:.6f} [{r['low']:.6f}, {r['high']:.6f}] {r['verdict']}")
    return out


def cited(report_dir: str | Path) -> pd.DataFrame:
    """The quantities the pages' claims cite: :func:`quantities` of the rows each claim's
    numbers are read from (``claims.json``), with the ``page`` that says them."""
    rep = Path(report_dir)
    rows = []
    for path in sorted(rep.glob(f"[0-9][0-9]_*/{CLAIMS_FILE}")):
        page = path.parent
        for claim in json.loads(path.read_text(encoding="utf-8"))["claims"]:
            for n in claim.get("numbers", []):
                ref = n.get("ref") or {}
                csv = page / ref.get("source", "")
                if not ref.get("where") or not csv.is_file():
                    continue
                try:
                    part = rows_where(pd.read_csv(csv), ref["where"])
                except (KeyError, ValueError):
                    continue
                rows += [{"page": page.name, "source": ref["source"], **x}
                         for x in _rows(part, _data_scope(page))]
    out = pd.DataFrame(rows, columns=["page", "source", *KEY, "value", "low", "high",
                                      "verdict"])
    return out.drop_duplicates(["page", "source", *KEY]).reset_index(drop=True)
