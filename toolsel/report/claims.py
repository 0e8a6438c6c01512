"""Sentences that state a result, rendered from the table they describe, with their source.

A report page says two kinds of things: what a section measures and how (typed in the
notebook's Markdown), and what came out (which scorer wins and by how much, whether an
interval includes a loss, what a repair changed). The second kind is rendered from the
DataFrame the page also writes as CSV, so the same notebook says the right thing on any data:
ties, a single scorer, no split, all-zero tables and n=1 each get their own wording. This
module is the kernel those sentences are built with (:class:`Builder`, :func:`fill`,
:func:`counts`, :func:`per_row`, :func:`literal`, ...) and checked by; a page's own wording
lives in its page module (:mod:`toolsel.pages`).

Every sentence is a :class:`Claim`: Markdown text plus, for every number in it, the
value it shows and where it comes from (:class:`Ref`: a CSV beside the page, a column, the
rows it is read from). A notebook shows a claim with ``display(Markdown(log.add(claim)))``;
:class:`ClaimLog` writes ``claims.json`` beside the page's CSVs, and :func:`check_claims`
re-reads each cited CSV and checks every number (``tests/test_claims.py`` runs it on executed
pages). :func:`uncovered_numbers` lists numbers in a page's displayed prose that no claim
accounts for: a finding with no source.

Nothing here knows the bundled data: wording that is only true of it stays in the notebooks,
behind :func:`toolsel.tables.replication.is_article_benchmark` or a "bundled data" check.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import markdown as md

__all__ = ["Ref", "Num", "Claim", "Builder", "format_number", "rows_where", "ClaimLog",
           "CLAIMS_FILE", "in_sample_words", "page_warnings", "plural", "plural_form", "and_list", "one_request", "values",
           "page_summary", "skipped_sections", "SKIP_NOTE", "check_claims", "uncovered_numbers",
           "numbers_in", "data_table", "counts", "count_rows", "fill", "per_row", "literal"]

#: The file a page's claims are written to, beside its CSVs.
CLAIMS_FILE = "claims.json"
#: What a page shows where a section about the bundled data is skipped (the README says why).
SKIP_NOTE = ("*A section about the bundled data only is skipped on this data; the report's "
             "README lists it, with why.*")
IN_SAMPLE = "in-sample: settings chosen and measured on the same requests"


# --------------------------------------------------------------------------------------------
# the claim and its numbers


@dataclass(frozen=True)
class Ref:
    """Where a number comes from: ``op`` over ``column`` of the rows of ``source`` matching
    ``where`` (``value``: exactly one row; ``count``: rows matching; ``sum``, ``mean``,
    ``min``, ``max``, ``nunique``; ``count_true``: rows whose column is true). ``minus``: the
    number is this minus another reference. ``inverse``: the number is ``1 / value``.
    ``round_to``: the value rounded to this many decimals before ``minus`` (a difference of
    two numbers as shown); ``negate``: the number is minus the value (an interval of b − a
    read from a table of a − b)."""

    source: str
    column: str | None = None
    where: Mapping[str, object] = field(default_factory=dict)
    op: str = "value"
    minus: Ref | None = None
    inverse: bool = False
    round_to: int | None = None
    negate: bool = False


@dataclass(frozen=True)
class Num:
    """A number as shown (``text``), its value, how it is shown (``kind``, ``digits``), and
    its :class:`Ref`."""

    text: str
    value: float
    kind: str
    digits: int
    ref: Ref


@dataclass
class Claim:
    """A rendered sentence (Markdown), its numbers with their sources, and the data strings
    (escaped) it quotes, whose digits are not numbers of the claim."""

    text: str
    numbers: list[Num] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.text

    @property
    def sources(self) -> list[str]:
        out: list[str] = []
        for n in self.numbers:
            r: Ref | None = n.ref
            while r is not None:
                if r.source not in out:
                    out.append(r.source)
                r = r.minus
        return out

    def __add__(self, other: Claim | str) -> Claim:
        if isinstance(other, str):
            return Claim(self.text + other, list(self.numbers), list(self.literals))
        return Claim(self.text + other.text, self.numbers + other.numbers,
                     self.literals + other.literals)

    def __radd__(self, other: str) -> Claim:
        if not isinstance(other, str):
            return NotImplemented
        if numbers_in(other):
            raise ValueError(f"text with numbers needs their sources: {other!r}")
        return Claim(other + self.text, list(self.numbers), list(self.literals))

    def to_dict(self) -> dict:
        out = {"text": self.text, "sources": self.sources, "literals": self.literals,
               "numbers": [_num_dict(n) for n in self.numbers]}
        if getattr(self, "fixed", None):
            out["fixed"] = self.fixed
        return out


def _py(v: object) -> object:
    return v.item() if hasattr(v, "item") else v


def _ref_dict(r: Ref | None) -> dict | None:
    if r is None:
        return None
    out = {"source": r.source, "column": r.column,
           "where": {str(k): _py(v) for k, v in r.where.items()}, "op": r.op,
           "minus": _ref_dict(r.minus), "inverse": r.inverse}
    if r.round_to is not None:  # written only when set: older claims files stay as they were
        out["round_to"] = r.round_to
    if r.negate:
        out["negate"] = True
    return out


def _num_dict(n: Num) -> dict:
    return {"text": n.text, "value": float(n.value), "kind": n.kind, "digits": n.digits,
            "ref": _ref_dict(n.ref)}


def format_number(value: float, kind: str, digits: int) -> str:
    """A number as a claim shows it (``kind``: int, pct, points, spoints, spct, dec, sdec)."""
    if kind == "int":
        return f"{int(round(value)):,}"
    if kind == "pct":
        return f"{100 * value:.{digits}f}%"
    if kind == "points":
        return f"{100 * value:.{digits}f}"
    if kind == "spoints":
        return f"{100 * value:+.{digits}f}"
    if kind == "spct":
        return f"{100 * value:+.{digits}f}%"
    if kind == "dec":
        return f"{value:,.{digits}f}"
    if kind == "sdec":
        return f"{value:+.{digits}f}"
    raise ValueError(f"unknown number kind {kind!r}")


class Builder:
    """Collects the numbers and literals of one sentence while it is written."""

    def __init__(self) -> None:
        self.numbers: list[Num] = []
        self.literals: list[str] = []

    def num(self, value: float, ref: Ref, kind: str = "int", digits: int = 0) -> str:
        value = float(_py(value))
        text = format_number(value, kind, digits)
        self.numbers.append(Num(text, value, kind, digits, ref))
        return text

    def lit(self, text: object) -> str:
        s = md.escape(text)
        self.literals.append(s)
        return s

    def param(self, text: object) -> str:
        """A setting of the analysis (a significance level), shown as is: not a finding."""
        s = str(text)
        self.literals.append(s)
        return s

    def code(self, text: object) -> str:
        s = md.code(text)
        self.literals.append(s)
        return s

    def claim(self, text: str) -> Claim:
        return Claim(text, self.numbers, self.literals)


def plural_form(word: str) -> str:
    """The English plural of a regular noun: ``tool`` → ``tools``, ``query`` → ``queries``."""
    if word.endswith("y") and word[-2:-1] not in ("", *"aeiou"):
        return word[:-1] + "ies"
    return word + "s"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``"1 tool"``, ``"2 tools"``, ``"0 queries"`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else (many or plural_form(word))}"


def and_list(items: Sequence[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    items = list(items)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def rows_where(df: pd.DataFrame, where: Mapping[str, object]) -> pd.DataFrame:
    """The rows of ``df`` whose columns equal ``where``'s values (compared as text, as the
    claims check reads them back from CSV)."""
    mask = pd.Series(True, index=df.index)
    for col, val in where.items():
        if col not in df.columns:
            raise KeyError(f"no column {col!r} (columns: {list(df.columns)})")
        mask &= df[col].astype(str) == str(_py(val))
    return df[mask]


# --------------------------------------------------------------------------------------------
# wording that depends on the data's split


def in_sample_words(has_split: bool, *, dev: str = "dev", test: str = "test") -> dict[str, str]:
    """Words for a page that chooses settings on one set and reports on another.

    With a split: ``{"heading": "test requests, settings chosen on dev", "reported": "test",
    "chosen": "dev", "note": ""}``. Without: the heading and note say
    ``"in-sample: settings chosen and measured on the same requests"``.
    """
    if has_split:
        return {"heading": f"{test} requests, settings chosen on {dev}", "reported": test,
                "chosen": dev, "note": "", "in_sample": ""}
    return {"heading": IN_SAMPLE, "reported": "every request", "chosen": "every request",
            "note": f"*{IN_SAMPLE[0].upper()}{IN_SAMPLE[1:]}: a description of this set, not a "
                    "held-out estimate.*", "in_sample": " (in-sample)"}


def one_request(n: int, source: str, *, column: str = "n_queries",
                where: Mapping[str, object] | None = None, unit: str = "request",
                what: str = "a rate") -> Claim:
    """"With 16 requests, one request moves a rate by 6.2 points." from the actual ``n``."""
    b = Builder()
    ref = Ref(source, column, dict(where or {}), "value" if where else "max")
    if n <= 0:
        return b.claim(f"No {plural_form(unit)}: no rate.")
    n_text = b.num(n, ref)
    if n == 1:
        return b.claim(f"With {n_text} {unit}, {what} is 0 or 100%: read it as one example.")
    # one decimal, or as many as show the first significant digit (0.04 points for 2,451
    # requests, never "0.0")
    digits = max(1, -int(math.floor(math.log10(100 / n)))) if n > 0 else 1
    pts = b.num(1 / n, Ref(source, column, dict(where or {}), ref.op, inverse=True),
                "points", digits)
    return b.claim(f"With {n_text} {plural_form(unit)}, one {unit} moves {what} by {pts} "
                   "points.")








# --------------------------------------------------------------------------------------------
# each row's value


def values(table: pd.DataFrame, metric: str, source: str, *, by: str = "scorer",
           where: Mapping[str, object] | None = None, kind: str = "dec",
           digits: int = 3) -> Claim:
    """Each row's ``metric``: ``"jaccard 0.404, bm25 0.485"`` (rows in table order)."""
    b = Builder()
    where = dict(where or {})
    part = rows_where(table, where) if where else table
    return b.claim(", ".join(
        f"{b.lit(r[by])} {b.num(r[metric], Ref(source, metric, {**where, by: r[by]}), kind, digits)}"
        for _, r in part.iterrows()))




# --------------------------------------------------------------------------------------------
# policies against fixed top-K




# --------------------------------------------------------------------------------------------
# counts that describe a benchmark


def data_table(registry, queries) -> pd.DataFrame:
    """One row of counts describing a page's data (tools, servers, payload, queries by
    phrasing, dev/test/unsplit queries): written as ``data.csv`` so sentences can cite it."""
    from ..tables.replication import benchmark_facts
    row = dict(benchmark_facts(registry, queries))
    row["n_phrased"] = row["n_direct"] + row["n_indirect"]
    row["n_dev"] = sum(q.split == "dev" for q in queries)
    row["n_test"] = sum(q.split == "test" for q in queries)
    row["n_unsplit"] = sum(not q.split for q in queries)
    return pd.DataFrame([row])


def counts(frame: pd.DataFrame, source: str, template: str, *,
           where: Mapping[str, object] | None = None, **columns: str) -> Claim:
    """A sentence of counts read from one row of ``frame`` (the row matching ``where``):
    ``template`` with ``{name}`` placeholders, each filled from the column ``columns[name]``
    (thousands separators)."""
    b = Builder()
    where = dict(where or {})
    part = rows_where(frame, where) if where else frame
    if len(part) != 1:
        raise ValueError(f"counts: {len(part)} rows match {where}, expected one")
    row = part.iloc[0]
    values = {name: b.num(row[col], Ref(source, col, where)) for name, col in columns.items()}
    return b.claim(template.format(**values))


def count_rows(frame: pd.DataFrame, source: str, template: str, *,
               where: Mapping[str, object] | None = None) -> Claim:
    """``template`` with ``{n}`` the number of rows of ``frame`` (matching ``where``)."""
    b = Builder()
    where = dict(where or {})
    part = rows_where(frame, where) if where else frame
    return b.claim(template.format(n=b.num(len(part), Ref(source, None, where, "count"))))


def _spec(spec) -> tuple[str, str, str, int]:
    """``"col"`` or ``(col, op[, kind[, digits]])`` as ``(col, op, kind, digits)``."""
    if isinstance(spec, str):
        return spec, "value", "int", 0
    col, op, *rest = spec
    kind = rest[0] if rest else "int"
    digits = rest[1] if len(rest) > 1 else 0
    return col, op, kind, digits


_OPS = ("value", "sum", "mean", "min", "max", "nunique", "count_true")


def fill(frame: pd.DataFrame, source: str, template: str, *,
         where: Mapping[str, object] | None = None, **specs) -> Claim:
    """``template`` with each ``{name}`` read from the rows of ``frame`` matching ``where``:
    ``specs[name]`` is a column (its one value, thousands separators) or ``(column, op,
    kind, digits)`` with ``op`` one of value, sum, mean, min, max, nunique, count_true and
    ``kind`` as shown (int, pct, points, dec, ...): e.g. the range of a column over rows,
    ``lo=("R@n", "min", "pct", 0), hi=("R@n", "max", "pct", 0)``."""
    b = Builder()
    where = dict(where or {})
    part = rows_where(frame, where) if where else frame
    values = {}
    for name, spec in specs.items():
        col, op, kind, digits = _spec(spec)
        if op not in _OPS:
            raise ValueError(f"fill: unknown op {op!r} for {name!r}")
        if col not in part.columns:
            raise KeyError(f"fill: no column {col!r} (columns: {list(part.columns)})")
        s = part[col]
        if op == "value":
            if len(s) != 1:
                raise ValueError(f"fill: {len(s)} rows match {where}, expected one")
            v = s.iloc[0]
        elif op == "count_true":  # as the check reads it back: empty is not true
            v = int(s.astype(str).str.lower().isin(["true", "1", "1.0", "yes"]).sum())
        else:
            if s.empty:
                raise ValueError(f"fill: no rows match {where} for {op} of {col!r}")
            v = getattr(s, op)()
        values[name] = b.num(v, Ref(source, col, where, op), kind, digits)
    return b.claim(template.format(**values))


def per_row(frame: pd.DataFrame, source: str, template: str, *, by: str = "scorer",
            where: Mapping[str, object] | None = None, sep: str = ", ", **specs) -> Claim:
    """``template`` once per row of ``frame`` matching ``where`` (table order), joined by
    ``sep``: ``{key}`` is the row's ``by`` (quoted data), each other ``{name}`` its column
    ``specs[name]`` (a column name, or ``(column, kind, digits)``)."""
    b = Builder()
    where = dict(where or {})
    part = rows_where(frame, where) if where else frame
    out = []
    for _, r in part.iterrows():
        w = {**where, by: r[by]}
        vals = {"key": b.lit(r[by])}
        for name, spec in specs.items():
            col, kind, digits = (spec, "int", 0) if isinstance(spec, str) else (
                spec[0], spec[1] if len(spec) > 1 else "int", spec[2] if len(spec) > 2 else 0)
            vals[name] = b.num(r[col], Ref(source, col, w), kind, digits)
        out.append(template.format(**vals))
    return b.claim(sep.join(out))


def literal(template: str, **values: object) -> Claim:
    """A sentence whose only numbers are data strings (a machine's description, a target's
    name) or settings of the analysis (a smoke run's size): ``template`` with each
    ``{name}`` the escaped value (ints with thousands separators), recorded as a literal so
    the claims check does not take its digits for findings."""
    b = Builder()
    shown = {name: b.lit(f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else v)
             for name, v in values.items()}
    return b.claim(template.format(**shown))


# --------------------------------------------------------------------------------------------
# the log beside a page's CSVs, and the checks


class ClaimLog:
    """The claims a page shows, written to ``claims.json`` in its out_dir after every add."""

    def __init__(self, out_dir: str | Path, page: str | None = None) -> None:
        self.dir = Path(out_dir)
        self.page = page or self.dir.name
        self.claims: list[Claim] = []
        self.skipped: list[dict[str, str]] = []
        self.warnings: list[str] = []
        self._summary: str | None = None

    def skip(self, section: str, reason: str) -> str:
        """Record a section skipped on this data because it is about the bundled data (the
        article's registry, queries or scenario), with why; the report's README gathers
        these once (:func:`skipped_sections`). Returns the page's note, which names
        neither: on a user's data the page says nothing about the bundled data."""
        entry = {"section": section, "reason": reason}
        if entry not in self.skipped:
            self.skipped.append(entry)
            self.write()
        return SKIP_NOTE

    def summary(self, claim: Claim | str, *extra: Claim | str) -> str:
        """Record the page's one-line summary of what ran on this data (the index card's
        text, :func:`page_summary`); the claim is checked like any other."""
        text = self.add(claim, *extra)
        plain = _plain(text)
        self._summary = plain[:1].upper() + plain[1:]
        self.write()
        return text

    def warn(self, claim: Claim) -> str:
        """Record a warning the report's README repeats (:func:`page_warnings`); a warning
        states no number (the page's own claims carry those). Returns its Markdown."""
        text = claim.text
        if numbers_in(text, claim.literals):
            raise ValueError(f"a warning states no number: {text!r}")
        if text not in self.warnings:
            self.warnings.append(text)
            self.write()
        return text

    def fixed(self, text: str, source: str) -> str:
        """Record text whose numbers describe a fixed source (the article, the bundled
        recording), shown only on the bundled data; its digits are not checked against a
        table, and ``claims.json`` marks it ``fixed`` so a test can require that no such
        text appears on other data."""
        claim = Claim(text, [], [], )
        claim.fixed = source
        if all(c.text != text for c in self.claims):
            self.claims.append(claim)
            self.write()
        return text

    def add(self, claim: Claim | str, *extra: Claim | str) -> str:
        """Record ``claim`` (and ``extra`` parts joined with spaces); return its Markdown."""
        for part in extra:
            claim = claim + " " + part if isinstance(claim, Claim) else claim + " " + str(part)
        if not isinstance(claim, Claim):
            claim = Claim(str(claim))
            if numbers_in(claim.text):
                raise ValueError(f"a claim with numbers needs their sources: {claim.text!r}")
        # the same sentence read from other rows ("(4 misses)" for two scorers) is kept twice
        if all(c.to_dict() != claim.to_dict() for c in self.claims):
            self.claims.append(claim)
            self.write()
        return claim.text

    def write(self) -> Path:
        from ..io import write_json
        self.dir.mkdir(parents=True, exist_ok=True)
        data = {"page": self.page, "claims": [c.to_dict() for c in self.claims]}
        if self._summary:
            data["summary"] = self._summary
        if self.skipped:
            data["skipped"] = self.skipped
        if self.warnings:
            data["warnings"] = self.warnings
        return write_json(data, self.dir / CLAIMS_FILE)


def _plain(markdown_text: str) -> str:
    """Markdown inline text as plain text (emphasis, code, escapes and tags dropped)."""
    import html as _html
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", markdown_text)
    text = re.sub(r"<[^>]*>", "", text)
    text = re.sub(r"[`*]|\\(?=[^\w\s])", "", text)
    return re.sub(r"\s+", " ", _html.unescape(text)).strip()


def _recorded(page_dir: str | Path, key: str):
    """What a page recorded under ``key`` in its ``claims.json``, or ``None`` (no file, or one
    that cannot be read as a JSON object)."""
    path = Path(page_dir) / CLAIMS_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get(key) if isinstance(data, dict) else None


def skipped_sections(page_dir: str | Path) -> list[dict[str, str]]:
    """The sections a page skipped as bundled-only (:meth:`ClaimLog.skip`), with why."""
    return list(_recorded(page_dir, "skipped") or [])


def page_warnings(page_dir: str | Path) -> list[str]:
    """The warnings a page recorded (:meth:`ClaimLog.warn`), as Markdown."""
    return list(_recorded(page_dir, "warnings") or [])


def page_summary(page_dir: str | Path) -> str | None:
    """The one-line summary a page recorded of what ran (``claims.json``), or ``None``."""
    return _recorded(page_dir, "summary") or None


_NUMBER = re.compile(r"(?<![\w.\-/=@,])[+\-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\w])")
_CODE = re.compile(r"<code>.*?</code>|`[^`]*`")
# quoted data (a request, a tool's text): its digits are the data's, not a finding
_QUOTED = re.compile(r'"[^"\n]*"|&quot;.*?&quot;|“[^”]*”|\*[^*\n]+\*(?!\*)')
_LINK = re.compile(r"\]\([^)]*\)")
# the level of an interval ("95% interval", "bootstrap 95% CI"): a setting, not a finding
_LEVEL = re.compile(r"\b\d+% (?=(?:[\w-]+ )?(?:interval|CI|confidence))|\[95%\]|\(95%\)")


def numbers_in(text: str, literals: Sequence[str] = ()) -> list[str]:
    """The numbers a reader sees in Markdown ``text``: code spans, link targets, quoted or
    italic data (a request in quotes, an example in *...*) and the data strings a claim
    quotes (``literals``) left out; "K=10" and "R@5" count as names."""
    for lit in sorted(literals, key=len, reverse=True):
        if lit:
            text = text.replace(lit, " ")
    text = _LINK.sub("]", _CODE.sub(" ", text))
    text = _LEVEL.sub(" ", _QUOTED.sub(" ", text.replace("**", "")))
    return [m.group(0) for m in _NUMBER.finditer(text)]


def _parse(token: str) -> float:
    return float(token.replace(",", "").replace("%", "").replace("−", "-"))


def _eval(ref: dict, base: Path) -> float:
    path = base / ref["source"]
    df = pd.read_csv(path)
    rows = rows_where(df, ref.get("where") or {})
    op, col = ref["op"], ref.get("column")
    if op == "count":
        v = float(len(rows))
    else:
        if col not in df.columns:
            raise KeyError(f"{path.name}: no column {col!r}")
        s = rows[col]
        if op == "value":
            if len(s) != 1:
                raise ValueError(f"{path.name}: {len(s)} rows match {ref.get('where')}, "
                                 "expected one")
            v = float(s.iloc[0])
        elif op == "count_true":
            v = float(s.astype(str).str.lower().isin(["true", "1", "1.0", "yes"]).sum())
        elif op in ("sum", "mean", "min", "max", "nunique"):
            v = float(getattr(s, op)())
        else:
            raise ValueError(f"unknown op {op!r}")
    if ref.get("round_to") is not None:
        v = float(f"{v:.{ref['round_to']}f}")  # as format_number rounds what is shown
    if ref.get("minus"):
        v -= _eval(ref["minus"], base)
    if ref.get("negate"):
        v = -v
    if ref.get("inverse"):
        v = 1 / v
    return v


def _matches(shown: str, value: float, kind: str, digits: int) -> bool:
    x = _parse(shown)
    scale = 100 if kind in ("pct", "points", "spoints", "spct") else 1
    return abs(x - scale * value) <= 0.5 * 10 ** -digits + 1e-9


def check_claims(page_dir: str | Path) -> list[str]:
    """Problems with the claims of one page (``claims.json`` in ``page_dir``), as lines.

    For every claim: each number in its text must be one of its recorded numbers; each
    recorded number must show its value (to the digits shown) and equal what its source CSV
    holds (to the CSV's 6 decimals). An empty list: every claim matches its tables.
    """
    base = Path(page_dir)
    path = base / CLAIMS_FILE
    if not path.exists():
        return [f"{path}: no claims file"]
    data = json.loads(path.read_text(encoding="utf-8"))
    problems = []
    for c in data["claims"]:
        if c.get("fixed"):
            continue
        shown = [n["text"] for n in c["numbers"]]
        tokens = [t for s in shown for t in numbers_in(s)]
        for tok in numbers_in(c["text"], c.get("literals", ())):
            if tok not in tokens and tok.lstrip("+") not in [t.lstrip("+") for t in tokens]:
                problems.append(f"{base.name}: {tok!r} in {c['text']!r} has no source")
        for n in c["numbers"]:
            if n["text"] not in c["text"]:
                problems.append(f"{base.name}: recorded {n['text']!r} not in {c['text']!r}")
            if not _matches(n["text"], n["value"], n["kind"], n["digits"]):
                problems.append(f"{base.name}: {n['text']!r} does not show {n['value']}")
            try:
                truth = _eval(n["ref"], base)
            except (OSError, KeyError, ValueError) as exc:
                problems.append(f"{base.name}: {n['text']!r} in {c['text']!r}: {exc}")
                continue
            if not math.isclose(truth, n["value"], rel_tol=1e-5, abs_tol=2e-6):
                problems.append(f"{base.name}: {n['text']!r} in {c['text']!r} is {n['value']}"
                                f" but {n['ref']['source']} gives {truth}")
    return problems


def _displayed_markdown(executed: dict) -> list[str]:
    out = []
    for cell in executed.get("cells", []):
        for o in cell.get("outputs", []):
            text = o.get("data", {}).get("text/markdown")
            if text:
                out.append("".join(text) if isinstance(text, list) else text)
    return out


def uncovered_numbers(executed_ipynb: str | Path, page_dir: str | Path) -> list[str]:
    """Numbers in the prose a page displays (its Markdown outputs, tables and headings
    aside) that no recorded claim accounts for: findings without a source."""
    nb = json.loads(Path(executed_ipynb).read_text(encoding="utf-8"))
    path = Path(page_dir) / CLAIMS_FILE
    claims = json.loads(path.read_text(encoding="utf-8"))["claims"] if path.exists() else []
    texts = sorted((c["text"] for c in claims), key=len, reverse=True)
    literals = [lit for c in claims for lit in c.get("literals", ())]
    problems = []
    for block in _displayed_markdown(nb):
        for t in texts:
            block = block.replace(t, " ")
        prose = "\n".join(ln for ln in block.splitlines()
                          if not ln.lstrip().startswith(("|", "#")))
        # a table's caption (how many of its rows it shows) belongs to the table
        prose = re.sub(r"The first \d[\d,]* of \d[\d,]* (?:rows|candidate tools)", " ",
                       prose)
        for tok in numbers_in(prose, literals):
            problems.append(f"{Path(page_dir).name}: {tok!r} in {prose.strip()[:160]!r}")
    return problems
