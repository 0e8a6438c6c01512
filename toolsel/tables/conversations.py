"""Labeled multi-turn conversations, and replaying them turn by turn with a selection strategy.

A conversation is a list of user turns, each labeled with the tools it needs. Replaying one
with :func:`replay` produces what a middleware would send, request by request:

- ``eager``: every tool on every request (no filter, no ``discover``).
- ``filtered``: a :class:`~toolsel.selection.Session` re-chooses the top-K from the latest user
  message every turn (plus always-include and pinned tools, plus the ``discover_tools`` tool);
  the tools block changes from turn to turn.
- ``deferred``: the tools block holds only the always-include tools and ``discover_tools``,
  and never changes; each ``discover`` call loads its hits (up to ``discover_limit``) by
  appending their definitions to the message history, where they stay.

**Discover simulation.** When a required tool is not visible, the model calls ``discover``
with the turn's ``search_terms`` in order (the turn text when it has none), one call per
term, until every required tool is visible or the terms run out. Each call is one more
request. ``filtered`` pins the hits (``discover_limit`` 1 by default: the article's
``discover``); ``deferred`` loads them (``discover_limit`` 5 by default, the server-side tool
search's default).

**Context policy** (``filtered`` only; a middleware sees only the latest user message):

- ``"latest"``: select from the latest user message alone.
- ``"carry_if_dependent"`` (default): when :func:`looks_context_dependent` flags the message
  ("do it", "same for Bob", "and MSFT?"), the filtered tools visible on the previous turn
  stay visible. Through a run of such messages the set grows (each adds its own top-K);
  the first message that is not flagged resets it. Tools found by ``discover`` are pinned
  anyway.
- ``"carry_if_labeled"``: the same, using the turn's ``context_dependent`` label (an oracle:
  an upper bound for a detector).

**Message history** (for token counting): each turn appends the user message; each discover
call appends the call (JSON) and its result (``filtered``: the names found; ``deferred``: the
JSON definitions loaded); the turn ends with one assistant message naming the tools it called.
The calls that do the turn's work and their results are folded into that message: they are
the same under every strategy.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from ..data import Registry
from ..datasets import Conversation
from ..eval.metrics import count_tokens, definition_json
from ..selection import DISCOVER_TOOL, Selector
from ..text import tokenize

__all__ = ["DISCOVER_TOOL", "STRATEGIES", "POLICIES", "looks_context_dependent",
           "detector_agreement",
           "ModelRequest", "TurnResult", "Replay", "replay", "replay_table", "replay_summary"]

STRATEGIES = ("eager", "filtered", "deferred")
POLICIES = ("latest", "carry_if_dependent", "carry_if_labeled")


# --------------------------------------------------------------------------------------------
# loading


# --------------------------------------------------------------------------------------------
# the context detector

_LEADS = {"and", "also", "same", "now", "then", "ok", "okay", "do", "try", "yes", "actually"}
_REFERS = {"it", "that", "them", "those", "there", "both", "her", "him"}
_DUMMY_IT = {"is", "was", "s"}  # "is it going to rain", "what time is it": no referent


def looks_context_dependent(text: str, *, max_tokens: int = 3) -> bool:
    """Whether a user message probably refers back to the conversation.

    True when it has at most ``max_tokens`` tokens, starts with a continuation word ("and",
    "same", "now", "do", "ok", ...), starts with "what about"/"how about", or refers to
    something by a pronoun ("it", "that", "them", ...; not the "it" of "is it", "what time is
    it"). A cheap rule a middleware can run;
    it errs towards carrying tools over (a false positive only sends a few more).
    """
    tokens = tokenize(text)
    if len(tokens) <= max_tokens:
        return True
    if tokens[0] in _LEADS or tokens[:2] in (["what", "about"], ["how", "about"]):
        return True
    return any(t in _REFERS and not (t == "it" and i and tokens[i - 1] in _DUMMY_IT)
               for i, t in enumerate(tokens))


def detector_agreement(conversations: Iterable[Conversation], **kwargs) -> dict[str, float]:
    """How :func:`looks_context_dependent` agrees with the turns' ``context_dependent`` labels.

    Returns counts (``true_pos``, ``false_pos``, ``false_neg``, ``true_neg``) and
    ``precision``/``recall`` of the detector (first turns included; ``kwargs`` go to the
    detector).
    """
    tp = fp = fn = tn = 0
    for conv in conversations:
        for turn in conv.turns:
            got = looks_context_dependent(turn.user, **kwargs)
            tp += got and turn.context_dependent
            fp += got and not turn.context_dependent
            fn += (not got) and turn.context_dependent
            tn += (not got) and not turn.context_dependent
    return {"true_pos": tp, "false_pos": fp, "false_neg": fn, "true_neg": tn,
            "precision": tp / (tp + fp) if tp + fp else float("nan"),
            "recall": tp / (tp + fn) if tp + fn else float("nan")}


# --------------------------------------------------------------------------------------------
# replay


@dataclass(frozen=True)
class ModelRequest:
    """One request to the model: its tools block and its message history (texts, in order).

    ``step`` is 0 for the turn's first request and ``i`` for the request after its ``i``-th
    discover call.
    """

    turn: int
    step: int
    tools: tuple[str, ...]
    messages: tuple[str, ...]


@dataclass(frozen=True)
class TurnResult:
    """What one turn needed and got."""

    turn: int
    user: str
    expected: tuple[str, ...]
    required: tuple[str, ...]          # expected minus always-include
    context_dependent: bool
    carried: bool                      # previous turn's tools kept visible
    visible_at_start: tuple[str, ...]  # required tools visible before any discover call
    discover_calls: int
    discovered: tuple[str, ...]        # tools pinned/loaded by this turn's discover calls
    available: tuple[str, ...]         # required tools visible at the end of the turn
    pins: int                          # pinned (filtered) or loaded (deferred) so far


@dataclass
class Replay:
    """The requests and per-turn results of replaying one conversation with one strategy."""

    conversation: Conversation
    strategy: str
    policy: str | None
    registry: Registry
    requests: list[ModelRequest]
    turns: list[TurnResult]


def _names_in_order(registry: Registry, names: Iterable[str]) -> tuple[str, ...]:
    names = set(names)
    return tuple(n for n in registry.names if n in names)


class _Replayer:
    """The state of one replay (the session, the history, the requests so far) and its steps."""

    def __init__(self, selector: Selector, strategy: str, policy: str, discover_limit: int,
                 max_discover_calls: int) -> None:
        self.selector = selector
        self.strategy = strategy
        self.policy = policy
        self.discover_limit = discover_limit
        self.max_discover_calls = max_discover_calls
        self.reg = selector.registry
        self.always = selector.always_include
        self.session = selector.session()
        self.loaded: list[str] = []       # deferred: definitions appended to the history
        self.messages: list[str] = []
        self.requests: list[ModelRequest] = []
        self.previous: set[str] = set()   # filtered: tools visible on the previous turn
        self.base: set[str] = set()       # filtered: this turn's selection (and carried tools)

    def _dependent(self, turn) -> bool:
        """Whether the context policy treats ``turn`` as referring back."""
        if self.policy == "carry_if_dependent":
            return looks_context_dependent(turn.user)
        if self.policy == "carry_if_labeled":
            return turn.context_dependent
        return False

    def start_turn(self, turn) -> bool:
        """Select this turn's tools (``filtered``); whether the previous turn's were carried."""
        if self.strategy != "filtered":
            return False
        carried = self._dependent(turn) and bool(self.previous)
        self.base = set(self.session.select(turn.user)) | (self.previous if carried else set())
        return carried

    def visible(self) -> set[str]:
        """The tools the model can call right now."""
        if self.strategy == "eager":
            return set(self.reg.names)
        if self.strategy == "filtered":
            return self.base | set(self.session.pinned)
        return set(self.always) | set(self.loaded)

    def tools_block(self) -> tuple[str, ...]:
        """The request's tools block, in registry order."""
        if self.strategy == "eager":
            return tuple(self.reg.names)
        if self.strategy == "filtered":
            return _names_in_order(self.reg, self.visible()) + (DISCOVER_TOOL.name,)
        return _names_in_order(self.reg, self.always) + (DISCOVER_TOOL.name,)

    def request(self, turn_no: int, step: int) -> None:
        """Record one request to the model, as it stands now."""
        self.requests.append(ModelRequest(turn_no, step, self.tools_block(),
                                          tuple(self.messages)))

    def _pin(self, hits: list[str]) -> list[str]:
        """``filtered``: pin a discover call's hits; the ones not visible before."""
        new = [h for h in hits if h not in self.visible()]
        for h in hits:
            self.session.pin(h)
        self.messages.append(json.dumps({"tool_result": {"found": hits}}) if hits
                             else json.dumps({"tool_result": "no matching tool"}))
        return new

    def _load(self, hits: list[str]) -> list[str]:
        """``deferred``: append the definitions of a discover call's new hits to the history."""
        new = [h for h in hits if h not in self.always and h not in self.loaded]
        self.loaded.extend(new)
        self.messages.append(json.dumps(
            {"tool_result": [json.loads(definition_json(self.reg.get(h))) for h in new]}
            if new else {"tool_result": "no new tool"}))
        return new

    def discover(self, turn, turn_no: int, required: tuple[str, ...]) -> tuple[int, list[str]]:
        """The turn's discover calls until its required tools are visible: (calls, found)."""
        calls, found = 0, []
        terms = list(turn.search_terms) or [turn.user]
        if self.strategy == "eager":
            return calls, found
        for term in terms:
            if all(t in self.visible() for t in required) or calls >= self.max_discover_calls:
                break
            calls += 1
            hits = [t.name for t in self.selector.search(term, limit=self.discover_limit)]
            self.messages.append(json.dumps({"tool_use": DISCOVER_TOOL.name,
                                             "input": {"query": term}}))
            new = self._pin(hits) if self.strategy == "filtered" else self._load(hits)
            found.extend(h for h in new if h not in found)
            self.request(turn_no, calls)
        return calls, found

    def play(self, turn_no: int, turn) -> TurnResult:
        """Replay one turn: its first request, its discover calls, and the closing message."""
        required = tuple(t for t in turn.expected if t not in self.always)
        carried = self.start_turn(turn)
        self.messages.append(turn.user)
        self.request(turn_no, 0)
        at_start = tuple(t for t in required if t in self.visible())
        calls, found = self.discover(turn, turn_no, required)
        vis = self.visible()
        available = tuple(t for t in required if t in vis)
        self.messages.append(f"Called {', '.join(turn.expected)}." if turn.expected else "OK.")
        if self.strategy == "filtered":
            self.previous = vis - set(self.always) - set(self.session.pinned)
        pins = len(self.session.pinned) if self.strategy == "filtered" else len(self.loaded)
        return TurnResult(turn_no, turn.user, turn.expected, required, turn.context_dependent,
                          carried, at_start, calls, tuple(found), available, pins)


def replay(conversation: Conversation, selector: Selector, strategy: str = "filtered", *,
           policy: str = "carry_if_dependent", discover_limit: int | None = None,
           max_discover_calls: int = 3) -> Replay:
    """Replay ``conversation`` turn by turn; see the module docstring for the model.

    Parameters
    ----------
    selector : Selector
        Registry, scorer, ``top_k`` and always-include set. A fresh session per replay, so
        pins never leak between conversations.
    strategy : ``"eager"``, ``"filtered"`` or ``"deferred"``
    policy : context policy for ``filtered`` (ignored otherwise)
    discover_limit : int, optional
        Tools a discover call returns: default 1 for ``filtered``, 5 for ``deferred``.
    max_discover_calls : int
        At most this many discover calls per turn.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}, got {policy!r}")
    if discover_limit is None:
        discover_limit = 5 if strategy == "deferred" else 1
    if discover_limit < 1:
        raise ValueError(f"discover_limit must be >= 1, got {discover_limit}")
    replayer = _Replayer(selector, strategy, policy, discover_limit, max_discover_calls)
    results = [replayer.play(ti, turn) for ti, turn in enumerate(conversation.turns, start=1)]
    return Replay(conversation, strategy, policy if strategy == "filtered" else None,
                  replayer.reg, replayer.requests, results)


def replay_table(replays: Sequence[Replay], *, encoding: str = "cl100k_base") -> pd.DataFrame:
    """One row per conversation × turn: availability, discover calls, pins, payload.

    ``tools_tokens`` sums the JSON-definition tokens of the tools blocks of the turn's
    requests (plus, for ``deferred``, the definitions loaded by its discover calls);
    ``all_tools_tokens`` is the same number of turns sending every registry tool once.
    ``recovered`` is 1/0 for turns where a required tool was missing at the start, else
    empty.
    """
    rows = []
    cache: dict[str, int] = {}

    def tokens(name: str, reg: Registry) -> int:
        if name not in cache:
            tool = DISCOVER_TOOL if name == DISCOVER_TOOL.name else reg.get(name)
            cache[name] = count_tokens(definition_json(tool), encoding)
        return cache[name]

    for rp in replays:
        reg = rp.registry
        all_tokens = sum(tokens(n, reg) for n in reg.names)
        for tr in rp.turns:
            reqs = [r for r in rp.requests if r.turn == tr.turn]
            sent = sum(tokens(n, reg) for r in reqs for n in r.tools)
            if rp.strategy == "deferred":
                sent += sum(tokens(n, reg) for n in tr.discovered)
            missing_at_start = len(tr.required) - len(tr.visible_at_start)
            rows.append({
                "strategy": rp.strategy, "policy": rp.policy or "",
                "conversation_id": rp.conversation.id, "split": rp.conversation.split,
                "turn": tr.turn, "user": tr.user,
                "context_dependent": tr.context_dependent, "carried": tr.carried,
                "n_expected": len(tr.expected), "n_required": len(tr.required),
                "available_at_start": (float(missing_at_start == 0) if tr.required
                                       else float("nan")),
                "discover_calls": tr.discover_calls,
                "recovered": (float(len(tr.available) == len(tr.required))
                              if missing_at_start else float("nan")),
                "available": float(len(tr.available) == len(tr.required)) if tr.required
                else float("nan"),
                "pins": tr.pins, "n_requests": len(reqs),
                "tools_sent": len(reqs[0].tools), "tools_tokens": sent,
                "all_tools_tokens": all_tokens,
            })
    return pd.DataFrame(rows)


def replay_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per strategy (and policy): turn availability, discover calls, recovery, pins, payload.

    ``tools_tokens`` is the total over all conversations; ``reduction`` compares it with
    sending every tool on every turn (``all_tools_tokens``).
    """
    rows = []
    for (strategy, policy), g in table.groupby(["strategy", "policy"], sort=False):
        needs = g["n_required"] > 0
        last = g.groupby("conversation_id", sort=False)["pins"].last()
        tools = int(g["tools_tokens"].sum())
        everything = int(g["all_tools_tokens"].sum())
        rows.append({
            "strategy": strategy, "policy": policy,
            "n_conversations": g["conversation_id"].nunique(), "n_turns": len(g),
            "available_at_start": g.loc[needs, "available_at_start"].mean(),
            "available": g.loc[needs, "available"].mean(),
            "discover_calls": int(g["discover_calls"].sum()),
            "turns_missing": int((g["available_at_start"] == 0).sum()),
            "recovered": int((g["recovered"] == 1).sum()),
            "pins_per_conversation": float(last.mean()),
            "n_requests": int(g["n_requests"].sum()),
            "tools_tokens": tools, "all_tools_tokens": everything,
            "reduction": 1 - tools / everything if everything else 0.0,
        })
    return pd.DataFrame(rows)
