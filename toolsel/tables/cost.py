"""Prompt-cache-aware input cost of a conversation, request by request.

Each request of a replayed conversation (:func:`toolsel.tables.conversations.replay`) is laid out as
the API lays it out: the tools block (one JSON definition per tool, in order), then the
system prompt, then the message history. Every part is a *block* with an exact token count
(:func:`toolsel.eval.metrics.count_tokens`, ``cl100k_base``); role markers and API framing are not
counted (they are the same for every strategy).

**Cache model** (a prefix cache, per conversation):

- Cache breakpoints sit after the system prompt (tools + system: the stable prefix) and on
  the last block of every request (the whole prompt, so the next request can reuse it).
- A breakpoint writes its prefix to the cache when the prefix is at least ``min_cacheable``
  tokens long (default 1024, the smallest cacheable prompt of the larger Anthropic models);
  shorter prefixes are not cached at all.
- A request reads from the cache the longest prefix, counted in whole blocks, that an
  earlier request of the conversation wrote; tokens from there to its last cacheable
  breakpoint are written; tokens after it (all of them, for a short request) are uncached.
- Entries never expire within a conversation (turns are assumed to come within the cache
  lifetime), and nothing is shared between conversations.

So an identical tools block keeps the prefix; a tools block that changes anywhere (the
filtered strategy re-choosing its top-K) invalidates everything after the change, system
prompt and history included, and the whole request is written again.

**Price**: ``cost = uncached × input + cache_write × input × 1.25 + cache_read × input × 0.1``
by default (:class:`Prices`), in base-input-token equivalents; multiply by a price per token
for money.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from .conversations import DISCOVER_TOOL, Replay
from ..eval.metrics import count_tokens, definition_json

__all__ = ["Block", "Prices", "CacheUsage", "DEFAULT_SYSTEM_PROMPT", "prefix_cache_usage",
           "request_blocks", "cost_table", "cost_totals", "fewer_tokens_cost_more",
           "cost_sensitivity"]

#: A plain agent system prompt (about 60 tokens), the same for every strategy.
DEFAULT_SYSTEM_PROMPT = (
    "You are a workplace assistant with access to tools for chat, issue trackers, email, "
    "calendar, documents, CRM and the web. Use the tools to do what the user asks; when no "
    "visible tool fits, call discover_tools with a short description of the tool you need. "
    "Confirm destructive actions before taking them.")


@dataclass(frozen=True)
class Block:
    """One cacheable unit of a request: its content key, token count, and breakpoint flag."""

    key: str
    tokens: int
    breakpoint: bool = False


@dataclass(frozen=True)
class Prices:
    """Price of one input token of each kind, relative to a base input token."""

    input: float = 1.0
    cache_write: float = 1.25
    cache_read: float = 0.1

    def cost(self, uncached: float, cache_write: float, cache_read: float) -> float:
        return (uncached * self.input + cache_write * self.input * self.cache_write
                + cache_read * self.input * self.cache_read)


@dataclass(frozen=True)
class CacheUsage:
    """Input tokens of one request, split by how the cache treats them."""

    uncached: int
    cache_write: int
    cache_read: int

    @property
    def total(self) -> int:
        return self.uncached + self.cache_write + self.cache_read


def prefix_cache_usage(requests: Sequence[Sequence[Block]], *, min_cacheable: int = 1024
                       ) -> list[CacheUsage]:
    """Uncached / cache-write / cache-read tokens of each request of one conversation.

    ``requests`` are the conversation's requests in order, each a list of blocks; see the
    module docstring for the model. Two blocks are the same when their keys are equal.
    """
    if min_cacheable < 0:
        raise ValueError(f"min_cacheable must be >= 0, got {min_cacheable}")
    cached: set[bytes] = set()
    out = []
    for blocks in requests:
        h = hashlib.sha1()
        prefix_ids, cum = [], []
        total = 0
        for b in blocks:
            if b.tokens < 0:
                raise ValueError(f"block {b.key[:40]!r} has a negative token count")
            h.update(len(b.key).to_bytes(8, "little") + b.key.encode("utf-8"))
            prefix_ids.append(h.copy().digest())
            total += b.tokens
            cum.append(total)
        read = max((cum[i] for i, pid in enumerate(prefix_ids) if pid in cached), default=0)
        written_to = read
        for i, b in enumerate(blocks):
            if b.breakpoint and cum[i] >= max(min_cacheable, 1):
                cached.add(prefix_ids[i])
                written_to = max(written_to, cum[i])
        out.append(CacheUsage(total - written_to, written_to - read, read))
    return out


def request_blocks(tools: Sequence[str], messages: Sequence[str], system_prompt: str,
                   token_count, definition) -> list[Block]:
    """Blocks of one request: tool definitions, system prompt (breakpoint), messages (the last
    one a breakpoint). ``definition(name)`` gives a tool's JSON; ``token_count(text)`` counts."""
    blocks = [Block("tool:" + definition(n), token_count(definition(n))) for n in tools]
    blocks.append(Block("system:" + system_prompt, token_count(system_prompt), True))
    for i, m in enumerate(messages):
        blocks.append(Block(f"msg{i}:" + m, token_count(m), i == len(messages) - 1))
    return blocks


def cost_table(replays: Iterable[Replay], *, system_prompt: str = DEFAULT_SYSTEM_PROMPT,
               prices: Prices = Prices(), min_cacheable: int = 1024,
               encoding: str = "cl100k_base") -> pd.DataFrame:
    """One row per request of every replay: token components and cost.

    Columns: ``strategy, policy, conversation_id, split, turn, step, n_tools, tools_tokens,
    system_tokens, message_tokens, input_tokens, uncached, cache_write, cache_read, cost,
    cost_no_cache`` (``cost_no_cache`` prices every token as uncached input).
    """
    counts: dict[str, int] = {}

    def token_count(text: str) -> int:
        if text not in counts:
            counts[text] = count_tokens(text, encoding)
        return counts[text]

    rows = []
    for rp in replays:
        reg = rp.registry
        defs: dict[str, str] = {}

        def definition(name: str) -> str:
            if name not in defs:
                defs[name] = definition_json(DISCOVER_TOOL if name == DISCOVER_TOOL.name
                                             else reg.get(name))
            return defs[name]

        reqs = [request_blocks(rq.tools, rq.messages, system_prompt, token_count, definition)
                for rq in rp.requests]
        usage = prefix_cache_usage(reqs, min_cacheable=min_cacheable)
        for rq, blocks, u in zip(rp.requests, reqs, usage):
            n_tools = len(rq.tools)
            tools_tokens = sum(b.tokens for b in blocks[:n_tools])
            system_tokens = blocks[n_tools].tokens
            rows.append({
                "strategy": rp.strategy, "policy": rp.policy or "",
                "conversation_id": rp.conversation.id, "split": rp.conversation.split,
                "turn": rq.turn, "step": rq.step, "n_tools": n_tools,
                "tools_tokens": tools_tokens, "system_tokens": system_tokens,
                "message_tokens": u.total - tools_tokens - system_tokens,
                "input_tokens": u.total, "uncached": u.uncached, "cache_write": u.cache_write,
                "cache_read": u.cache_read,
                "cost": prices.cost(u.uncached, u.cache_write, u.cache_read),
                "cost_no_cache": prices.cost(u.total, 0, 0),
            })
    return pd.DataFrame(rows)


_SUM = ["input_tokens", "tools_tokens", "uncached", "cache_write", "cache_read", "cost",
        "cost_no_cache"]


def cost_totals(table: pd.DataFrame, by: str | Sequence[str] = ("strategy", "policy")
                ) -> pd.DataFrame:
    """Sums of the token components and cost per group (default: per strategy and policy),
    with the number of requests."""
    by = [by] if isinstance(by, str) else list(by)
    g = table.groupby(by, sort=False)
    out = g[_SUM].sum()
    out.insert(0, "n_requests", g.size())
    return out.reset_index()


def fewer_tokens_cost_more(table: pd.DataFrame, baseline: str = "eager") -> pd.DataFrame:
    """Conversations where a strategy sends fewer input tokens than ``baseline`` yet costs more.

    One row per conversation × (strategy, policy) with both totals and the differences.
    """
    per = cost_totals(table, by=["conversation_id", "strategy", "policy"])
    base = per[per["strategy"] == baseline].set_index("conversation_id")
    rows = []
    for _, r in per[per["strategy"] != baseline].iterrows():
        b = base.loc[r["conversation_id"]]
        if r["input_tokens"] < b["input_tokens"] and r["cost"] > b["cost"]:
            rows.append({"conversation_id": r["conversation_id"], "strategy": r["strategy"],
                         "policy": r["policy"], "input_tokens": int(r["input_tokens"]),
                         f"{baseline}_input_tokens": int(b["input_tokens"]),
                         "cost": r["cost"], f"{baseline}_cost": b["cost"],
                         "token_saving": 1 - r["input_tokens"] / b["input_tokens"],
                         "extra_cost": r["cost"] / b["cost"] - 1})
    return pd.DataFrame(rows, columns=["conversation_id", "strategy", "policy", "input_tokens",
                                       f"{baseline}_input_tokens", "cost", f"{baseline}_cost",
                                       "token_saving", "extra_cost"])


def cost_sensitivity(replays: Sequence[Replay], *, prices: Sequence[Prices] = (Prices(),),
                     min_cacheable: Sequence[int] = (1024,),
                     system_prompt: str = DEFAULT_SYSTEM_PROMPT,
                     encoding: str = "cl100k_base") -> pd.DataFrame:
    """Totals per strategy under several price ratios and minimum cacheable lengths.

    One row per setting × strategy/policy, with ``cache_write_ratio``, ``cache_read_ratio``,
    ``min_cacheable`` and ``cost_vs_eager`` (cost relative to the eager strategy under the
    same setting, when eager is among the replays).
    """
    frames = []
    for m in min_cacheable:
        table = cost_table(replays, system_prompt=system_prompt, min_cacheable=m,
                           encoding=encoding)
        for p in prices:
            t = table.copy()
            t["cost"] = [p.cost(u, w, r) for u, w, r in zip(t["uncached"], t["cache_write"],
                                                            t["cache_read"])]
            t["cost_no_cache"] = t["input_tokens"] * p.input
            tot = cost_totals(t)
            eager = tot.loc[tot["strategy"] == "eager", "cost"]
            tot["cost_vs_eager"] = tot["cost"] / eager.iloc[0] if len(eager) else float("nan")
            tot.insert(0, "min_cacheable", m)
            tot.insert(0, "cache_read_ratio", p.cache_read)
            tot.insert(0, "cache_write_ratio", p.cache_write)
            frames.append(tot)
    return pd.concat(frames, ignore_index=True)


