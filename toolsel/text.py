"""Tokenizers and the text a scorer indexes for each tool.

Two tokenizers:

- :func:`tokenize` is the article's: lowercase, then maximal runs of ``[a-z0-9]``.
  ``"github_create_issue"`` gives ``github, create, issue``; ``"getPM2.5Level"`` gives
  ``getpm2, 5level``.
- :func:`split_identifier` first splits identifiers at case and letter/digit boundaries
  (``"getPM2.5Level"`` gives ``get, pm, 2, 5, level``; ``"PDF&URLTool"`` gives
  ``pdf, url, tool``), then tokenizes the same way.

A tool is indexed through *fields* (:data:`FIELDS`): its raw ``name``, the name split into
words (``name_words``), the ``description``, the names of its parameters (``param_names``,
split into words) and the parameters' descriptions (``param_descriptions``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
import threading
from dataclasses import dataclass
from typing import Any

from .data import Tool

__all__ = ["FIELDS", "STOP_WORDS", "LEXICAL_STOP_WORDS", "content_words", "tokenize", "token_set",
           "split_identifier", "field_text", "tool_text", "check_fields", "parameter_items",
           "Tokenizer", "SPLITTERS", "SPLIT_MODES", "STOP_WORD_MODES", "STEMMERS", "STEM_MARK",
           "stem_words"]

_TOKEN = re.compile(r"[a-z0-9]+")
# lower→Upper, UPPER→Upper+lower (PDFTool → PDF Tool), letter↔digit
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])"
                    r"|(?<=[0-9])(?=[A-Za-z])")

#: Fields a scorer can index, in the order their text is joined.
FIELDS = ("name", "name_words", "description", "param_names", "param_descriptions")


def tokenize(text: str) -> list[str]:
    """The article's tokens: lowercase, maximal runs of ``[a-z0-9]``, in order, repeats kept."""
    return _TOKEN.findall(text.lower())


def token_set(text: str) -> set[str]:
    """The set of :func:`tokenize` tokens."""
    return set(_TOKEN.findall(text.lower()))


def split_identifier(text: str) -> list[str]:
    """Tokens of ``text`` with identifiers split at snake_case, camelCase and digit boundaries."""
    return _TOKEN.findall(_CAMEL.sub(" ", text).lower())


def check_fields(fields: Iterable[str]) -> tuple[str, ...]:
    """Validate a field list (a string is one field); return it as a tuple."""
    if isinstance(fields, str):
        fields = (fields,)
    fields = tuple(fields)
    if not fields:
        raise ValueError(f"fields must name at least one of {FIELDS}")
    for f in fields:
        if f not in FIELDS:
            raise ValueError(f"unknown field {f!r}; expected some of {FIELDS}")
    return fields


def parameter_items(schema: Mapping[str, Any] | None, prefix: str = "") -> list[tuple[str, str]]:
    """``(name, description)`` of every property in a JSON Schema, nested objects included."""
    if not isinstance(schema, Mapping):
        return []
    out: list[tuple[str, str]] = []
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for name, sub in props.items():
            if not isinstance(sub, Mapping):
                continue
            desc = sub.get("description")
            out.append((str(name), desc if isinstance(desc, str) else ""))
            out.extend(parameter_items(sub, prefix))
            items = sub.get("items")
            if isinstance(items, Mapping):
                out.extend(parameter_items(items, prefix))
    return out


def field_text(tool: Tool, field: str) -> str:
    """The text of one field of ``tool`` (see :data:`FIELDS`)."""
    if field == "name":
        return tool.name
    if field == "name_words":
        return " ".join(split_identifier(tool.name))
    if field == "description":
        return tool.description
    if field == "param_names":
        return " ".join(" ".join(split_identifier(n)) for n, _ in parameter_items(tool.parameters))
    if field == "param_descriptions":
        return " ".join(d for _, d in parameter_items(tool.parameters) if d)
    raise ValueError(f"unknown field {field!r}; expected one of {FIELDS}")


def tool_text(tool: Tool, fields: Sequence[str] = ("name", "description")) -> str:
    """The fields of ``tool`` joined by spaces; the default is the article's ``"{name} {description}"``."""
    return " ".join(t for t in (field_text(tool, f) for f in fields) if t)


#: English function words that say nothing about which tool is wanted; scorers and the
#: failure-mode classifier each extend this core with their own extras.
STOP_WORDS = frozenset("""
a about above after again all also am an and any are as at be been being below between both
but by can could d did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it it's its just let ll m me more most
my myself no nor not now of off on once only or other our ours out over own please re s same
she should so some such t than that the their theirs them then there these they this those
through to too under until up ve very was we were what when where which while who whom why
will with would you your yours yourself
""".split())


def content_words(text: str) -> str:
    """A search phrase made from a request without any label: its tokens minus
    :data:`STOP_WORDS` (all its tokens if none is left).

    What a model that only drops filler words would pass to ``discover``; the label-free
    counterpart of a labeler-written ``search_term``.
    """
    words = [w for w in tokenize(text) if w not in STOP_WORDS]
    return " ".join(words or tokenize(text)) or text


#: The stop words the lexical scorers drop (``stop_words="query"`` or ``"both"``): the core
#: :data:`STOP_WORDS` plus contractions and reflexives. The lexical half of ``default`` has
#: dropped these from requests since it was first chosen.
LEXICAL_STOP_WORDS = STOP_WORDS | frozenset("""
because before can't don't herself himself i'd i'm i've itself ourselves that's themselves
what's yourselves
""".split())

#: How text is cut into tokens: ``"words"`` splits identifiers (:func:`split_identifier`),
#: ``"article"`` keeps them whole (:func:`tokenize`, the article's tokenizer).
SPLITTERS = {"words": split_identifier, "article": tokenize}
#: ``split`` values of a :class:`Tokenizer`: the :data:`SPLITTERS`, and ``"tool_words"``:
#: identifiers split in tool texts, but a query lowercased first (so a brand typed
#: ``"SkyCast"`` stays ``skycast``, as tool names spell it; snake_case and letter-digit
#: boundaries still split).
SPLIT_MODES = (*SPLITTERS, "tool_words")
#: Where stop words are dropped: from the query only, from query and tool texts, or nowhere.
STOP_WORD_MODES = ("query", "both", None)
#: Stemmers: Snowball's English stemmer (PyStemmer, the C Snowball library);
#: ``"snowball+exact"``, each word as written and its Snowball stem as a term of its own,
#: marked with a leading ``~`` (the idea of Lucene's ``KeywordRepeatFilter``, with stems kept
#: apart from words: a word spelled as in the tool matches two terms, one sharing only its
#: stem matches one, and ``bm25`` can weigh the stem terms down); or none.
STEMMERS = ("snowball", "snowball+exact", None)
#: The mark of a stem term under ``stem="snowball+exact"`` (no token contains it).
STEM_MARK = "~"

_local = threading.local()  # a PyStemmer object is not safe to share between threads


def stem_words(words: list[str]) -> list[str]:
    """Snowball (English) stems of ``words``, in order (``"invoices"`` → ``"invoic"``)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        try:
            import Stemmer
        except ImportError as exc:  # a core dependency; only a broken install lacks it
            raise ImportError("stem='snowball' needs PyStemmer (pip install PyStemmer)") \
                from exc
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer.stemWords(words)


@dataclass(frozen=True)
class Tokenizer:
    """How a lexical scorer turns tool texts and queries into terms; one object shared by
    ``jaccard``, ``bm25``, ``tfidf`` and the lexical half of ``fusion``/``default``.

    Parameters
    ----------
    split : {"words", "article", "tool_words"}
        ``"words"``: lowercase ``[a-z0-9]+`` runs after splitting snake_case/camelCase
        identifiers and letter-digit boundaries; ``"article"``: the same without splitting;
        ``"tool_words"``: ``"words"`` for tool texts, queries lowercased before splitting
        (no camelCase split; what the lexical half of ``default`` has always done).
    stop_words : {"query", "both", None}
        Drop :data:`LEXICAL_STOP_WORDS` from the query only, from the query and every tool
        text, or keep every token. A query made only of stop words then has no terms and
        matches nothing.
    stem : {"snowball", "snowball+exact", None}
        Reduce every token (query and tools alike) to its Snowball English stem, after the
        stop-word check; ``"snowball+exact"`` keeps the token as written, followed by its
        stem marked with ``~`` (``"invoices"`` gives ``invoices, ~invoic``; ``"void"`` gives
        ``void, ~void``): a word and a stem never share a term, so an exact match counts
        more than a match of stems alone.

    ``Tokenizer()`` (words, no stop words, no stemming) is the tokenization every lexical
    scorer used before these options existed; with the same tokens, ``bm25`` scores exactly
    as ``rank_bm25.BM25Okapi``.

    >>> Tokenizer(stop_words="query", stem="snowball").query("Void the open invoices")
    ['void', 'open', 'invoic']
    """

    split: str = "words"
    stop_words: str | None = None
    stem: str | None = None

    def __post_init__(self):
        if self.split not in SPLIT_MODES:
            raise ValueError(f"unknown tokenizer {self.split!r}; expected one of "
                             f"{list(SPLIT_MODES)}")
        if self.stop_words not in STOP_WORD_MODES:
            raise ValueError(f"stop_words must be one of {list(STOP_WORD_MODES)}, got "
                             f"{self.stop_words!r}")
        if self.stem not in STEMMERS:
            raise ValueError(f"stem must be one of {list(STEMMERS)}, got {self.stem!r}")
        if self.stem is not None:
            stem_words(["check"])  # fail at fit time, not at the first query

    def _finish(self, toks: list[str], drop: bool) -> list[str]:
        if drop:
            toks = [t for t in toks if t not in LEXICAL_STOP_WORDS]
        if self.stem is not None and toks:
            stems = stem_words(toks)
            if self.stem == "snowball+exact":
                return [w for t, s in zip(toks, stems) for w in (t, STEM_MARK + s)]
            toks = stems
        return toks

    def keeping_stop_words(self) -> Tokenizer:
        """The same tokenizer with every stop word kept (``stop_words=None``): what a
        scorer's backoff reads a request with when its content words match no tool."""
        return Tokenizer(split=self.split, stop_words=None, stem=self.stem)

    def document(self, text: str) -> list[str]:
        """Terms of a tool text, in order, repeats kept."""
        split = "words" if self.split == "tool_words" else self.split
        return self._finish(SPLITTERS[split](text), self.stop_words == "both")

    def query(self, text: str) -> list[str]:
        """Terms of a query, in order, repeats kept."""
        if self.split == "tool_words":
            # stop words are whole lowercase runs ("90s" is kept, then split to 90, s)
            toks = tokenize(text)
            if self.stop_words is not None:
                toks = [t for t in toks if t not in LEXICAL_STOP_WORDS]
            return self._finish([w for t in toks for w in split_identifier(t)], False)
        return self._finish(SPLITTERS[self.split](text), self.stop_words is not None)
