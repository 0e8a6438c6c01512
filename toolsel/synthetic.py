"""Deterministic synthetic registries and labeled queries, for scale tests and benchmarks.

A registry is built server by server, the way MCP registries grow: each server has a made-up
product name, one naming style (``snake_case``, ``camelCase`` or ``dotted``), a handful of
resource types and a few operations on each, with descriptions and JSON-Schema parameters
written from varied templates. A small always-include filesystem core comes first.

Queries are written from *held-out* paraphrase templates: the verbs and nouns a user types
are synonyms of those in the descriptions most of the time, so lexical scorers miss some of
them, as on real registries. Everything is a function of ``(n, seed)``: the same call gives
the same tools and queries on every machine.

>>> reg = synthetic_registry(1000, seed=0)
>>> len(reg), len(synthetic_queries(reg, 200, seed=0))
(1000, 200)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .data import Query, Registry, Tool

__all__ = ["synthetic_registry", "grown_registry", "synthetic_queries", "write_registry",
           "write_queries", "NAME_STYLES"]

#: How a server spells its tool names.
NAME_STYLES = ("snake", "camel", "dotted")

# operation -> (verbs used in descriptions, held-out verbs used only in queries)
_ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "create": (("create", "add", "open"), ("make a new", "set up a", "start a new")),
    "get": (("get", "fetch", "retrieve"), ("show me the", "look up the", "pull up the")),
    "list": (("list", "enumerate"), ("show all the", "go through the", "run down the")),
    "update": (("update", "modify", "edit"), ("change the", "tweak the", "adjust the")),
    "delete": (("delete", "remove"), ("get rid of the", "throw away the", "drop the")),
    "search": (("search", "find", "query"), ("hunt for", "look for", "track down")),
    "archive": (("archive", "close"), ("put away the", "shelve the", "wrap up the")),
    "export": (("export", "download"), ("save a copy of the", "pull out the", "dump the")),
    "share": (("share", "send"), ("pass along the", "forward the", "let others see the")),
    "assign": (("assign", "delegate"), ("hand off the", "give the", "put someone on the")),
    "comment": (("comment on", "annotate"), ("leave a note on the", "reply on the",
                                             "write feedback on the")),
    "sync": (("sync", "refresh"), ("bring up to date the", "reload the", "re-pull the")),
}

# resource -> (words used in descriptions, held-out words used only in queries)
_RESOURCES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "issue": (("issue", "bug"), ("problem", "defect")),
    "ticket": (("ticket", "case"), ("support request", "help request")),
    "message": (("message", "post"), ("note", "chat")),
    "channel": (("channel", "room"), ("group chat", "conversation space")),
    "invoice": (("invoice", "bill"), ("payment request", "charge")),
    "customer": (("customer", "client"), ("buyer", "account holder")),
    "event": (("event", "meeting"), ("appointment", "calendar slot")),
    "file": (("file", "document"), ("attachment", "upload")),
    "folder": (("folder", "directory"), ("collection", "workspace area")),
    "task": (("task", "todo"), ("chore", "action item")),
    "project": (("project", "initiative"), ("program", "effort")),
    "user": (("user", "member"), ("teammate", "person")),
    "report": (("report", "summary"), ("overview", "digest")),
    "order": (("order", "purchase"), ("sale", "checkout")),
    "product": (("product", "item"), ("sku", "catalog entry")),
    "repository": (("repository", "repo"), ("codebase", "source tree")),
    "pipeline": (("pipeline", "workflow"), ("build", "ci run")),
    "dashboard": (("dashboard", "chart"), ("graph", "metrics view")),
    "contact": (("contact", "lead"), ("prospect", "address book entry")),
    "page": (("page", "wiki page"), ("article", "doc page")),
    "shipment": (("shipment", "parcel"), ("delivery", "package")),
    "alert": (("alert", "incident"), ("outage", "page notification")),
    "subscription": (("subscription", "plan"), ("membership", "recurring payment")),
    "record": (("record", "row"), ("entry", "data point")),
}

_DOMAINS = ("chat", "code hosting", "issue tracking", "email", "calendar", "storage",
            "notes", "crm", "billing", "commerce", "analytics", "monitoring", "hr",
            "logistics", "support", "marketing", "finance", "devops")

_QUALIFIERS = ("by id", "with optional filters", "for the current workspace",
               "in a given team", "across all projects", "for the signed-in account",
               "including metadata", "with pagination", "from the archive",
               "owned by a user", "created since a date", "in bulk")

_DESC_TEMPLATES = (
    "{Verb} a {res} in {server}{qual}.",
    "{Verb} {server} {res}s{qual}. Returns the {res} object.",
    "Use this to {verb} a {res} on {server} ({domain}){qual}.",
    "{server}: {verb} one {res}{qual}; fails if the {res} does not exist.",
    "{Verb} the {res} of a {server} {domain} workspace{qual}.",
)

_QUERY_TEMPLATES = (
    "{hverb} {hres} in {server}",
    "can you {hverb} {hres} for me",
    "i need to {hverb} {hres} on {server}",
    "please {hverb} {hres}",
    "{hverb} {hres} {extra}",
)
_EXTRAS = ("asap", "from last week", "for the q3 launch", "that alice mentioned",
           "for the new hire", "before the demo", "in the staging team", "for acme corp")

_SYLLABLES = ("ka", "lo", "mi", "zen", "tra", "vo", "qui", "pel", "dor", "nix", "ra", "sol",
              "bri", "fa", "gu", "hex", "ju", "lum", "ner", "ox", "pra", "sy", "tor", "ul",
              "ve", "wix", "ya", "zo", "cre", "dal")

_PARAM_TYPES = (("string", "the {res} title"), ("string", "free text body"),
                ("integer", "maximum number of results"), ("boolean", "include archived"),
                ("string", "ISO 8601 date"), ("string", "the owner email"),
                ("array", "labels to apply"), ("string", "sort order, asc or desc"))
_PARAM_NAMES = ("title", "body", "limit", "include_archived", "since", "owner_email",
                "labels", "sort_order")

_CORE = (
    ("read_file", "Read the contents of a file from the local workspace.",
     {"path": ("string", "Path of the file to read")}),
    ("write_file", "Write text to a file in the local workspace, replacing it.",
     {"path": ("string", "Path of the file"), "content": ("string", "Text to write")}),
    ("list_directory", "List files and folders in a local directory.",
     {"path": ("string", "Directory path")}),
    ("todo_write", "Create or update the agent's task list for this session.",
     {"todos": ("array", "The task items")}),
)


#: Largest registry :func:`synthetic_registry` makes (about 1 GB of tools in memory).
MAX_TOOLS = 1_000_000


def _server_name(rng: np.random.Generator, used: set[str]) -> str:
    # 2-3 syllables give about 27,000 names; once draws keep colliding (registries past
    # ~100,000 tools) a number makes the name unique instead of drawing forever
    for _ in range(16):
        name = "".join(rng.choice(_SYLLABLES, size=int(rng.integers(2, 4))))
        if name not in used:
            used.add(name)
            return name
    i = 2
    while f"{name}{i}" in used:
        i += 1
    used.add(f"{name}{i}")
    return f"{name}{i}"


def _tool_name(style: str, server: str, action: str, resource: str) -> str:
    if style == "snake":
        return f"{server}_{action}_{resource}"
    if style == "camel":
        return f"{server}{action.capitalize()}{resource.capitalize()}"
    return f"{server}.{resource}.{action}"


def _schema(rng: np.random.Generator, res: str, resource: str) -> dict:
    props: dict[str, dict] = {f"{resource}_id": {"type": "string",
                                                 "description": f"Identifier of the {res}"}}
    for j in rng.choice(len(_PARAM_NAMES), size=int(rng.integers(1, 4)), replace=False):
        typ, desc = _PARAM_TYPES[int(j)]
        p: dict = {"type": typ, "description": desc.format(res=res)}
        if typ == "array":
            p["items"] = {"type": "string"}
        props[_PARAM_NAMES[int(j)]] = p
    return {"type": "object", "properties": props, "required": [f"{resource}_id"]}


def synthetic_registry(n_tools: int, *, seed: int = 0, core: bool = True) -> Registry:
    """A registry of exactly ``n_tools`` tools from many made-up servers.

    Parameters
    ----------
    n_tools : int
        Registry size, 1 to :data:`MAX_TOOLS`.
    seed : int
        Everything is a function of ``(n_tools, seed)``.
    core : bool
        Start with 4 always-include filesystem/task tools (when ``n_tools`` allows).

    Each generated tool's ``metadata`` holds ``domain`` (the server), ``server_domain``,
    ``action`` and ``resource``: :func:`synthetic_queries` writes its labeled queries from
    them.
    """
    if not isinstance(n_tools, (int, np.integer)) or n_tools < 1:
        raise ValueError(f"n_tools must be a positive integer, got {n_tools!r}")
    if n_tools > MAX_TOOLS:
        raise ValueError(f"n_tools={n_tools:,} is more than the {MAX_TOOLS:,} tools a synthetic "
                         "registry can have (toolsel.synthetic.MAX_TOOLS)")
    rng = np.random.default_rng(seed)
    tools: list[Tool] = []
    if core:
        for name, desc, params in _CORE[:max(0, min(len(_CORE), n_tools - 1))]:
            schema = {"type": "object",
                      "properties": {k: {"type": t, "description": d} | (
                          {"items": {"type": "string"}} if t == "array" else {})
                          for k, (t, d) in params.items()},
                      "required": list(params)[:1]}
            tools.append(Tool(name, desc, schema, {"domain": "filesystem",
                                                   "always_include": True}))
    actions, resources = list(_ACTIONS), list(_RESOURCES)
    used: set[str] = set()
    while len(tools) < n_tools:
        server = _server_name(rng, used)
        style = NAME_STYLES[int(rng.integers(len(NAME_STYLES)))]
        domain = _DOMAINS[int(rng.integers(len(_DOMAINS)))]
        for r in rng.choice(len(resources), size=int(rng.integers(1, 4)), replace=False):
            resource = resources[int(r)]
            for a in sorted(rng.choice(len(actions), size=int(rng.integers(2, 5)),
                                       replace=False)):
                if len(tools) >= n_tools:
                    break
                action = actions[int(a)]
                verbs, _ = _ACTIONS[action]
                nouns, _ = _RESOURCES[resource]
                verb = verbs[int(rng.integers(len(verbs)))]
                res = nouns[int(rng.integers(len(nouns)))]
                qual = (" " + _QUALIFIERS[int(rng.integers(len(_QUALIFIERS)))]
                        if rng.random() < 0.6 else "")
                template = _DESC_TEMPLATES[int(rng.integers(len(_DESC_TEMPLATES)))]
                desc = template.format(Verb=verb.capitalize(), verb=verb, res=res,
                                       server=server.capitalize(), domain=domain, qual=qual)
                tools.append(Tool(_tool_name(style, server, action, resource), desc,
                                  _schema(rng, res, resource),
                                  {"domain": server, "server_domain": domain,
                                   "action": action, "resource": resource}))
    return Registry(tools)


def grown_registry(registry: Sequence[Tool], factor: int = 10, *, seed: int = 0) -> Registry:
    """``registry`` grown to ``factor`` times its size: its own tools first, unchanged and in
    order, then synthetic ones (:func:`synthetic_registry` without its core, as the scale
    benchmark grows registries), skipping any whose name the registry already has.

    >>> reg = synthetic_registry(30, seed=1)
    >>> grown = grown_registry(reg, 10)
    >>> len(grown), list(grown)[:30] == list(reg)
    (300, True)
    """
    tools = list(registry)
    if not isinstance(factor, (int, np.integer)) or factor < 1:
        raise ValueError(f"factor must be a positive integer, got {factor!r}")
    need = len(tools) * (factor - 1)
    if need == 0:
        return Registry(tools)
    names = {t.name for t in tools}
    # a larger synthetic registry starts with the smaller one's tools: draw more until
    # enough of them have names the registry does not (each round adds the clashes found)
    size, extra = need, []
    while len(extra) < need:
        extra = [t for t in synthetic_registry(size, seed=seed, core=False)
                 if t.name not in names]
        size += need - len(extra)
    return Registry(tools + extra[:need])


def synthetic_queries(registry: Sequence[Tool], n_queries: int, *, seed: int = 0) -> list[Query]:
    """``n_queries`` labeled queries, each expecting one generated tool of ``registry``.

    Targets are drawn uniformly (with replacement once every tool is used) from the tools
    :func:`synthetic_registry` generated (those with ``action``/``resource`` metadata). About
    a third of the queries are ``direct`` (the description's own verb and noun), the rest
    ``indirect`` (held-out synonyms); about half name the server.
    """
    if not isinstance(n_queries, (int, np.integer)) or n_queries < 1:
        raise ValueError(f"n_queries must be a positive integer, got {n_queries!r}")
    targets = [t for t in registry if "action" in t.metadata and "resource" in t.metadata]
    if not targets:
        raise ValueError("the registry has no synthetic tools (action/resource metadata); "
                         "build it with synthetic_registry()")
    rng = np.random.default_rng([seed, 1])
    picks = (rng.permutation(len(targets)) if n_queries <= len(targets)
             else rng.integers(len(targets), size=n_queries))[:n_queries]
    width = len(str(n_queries))
    out: list[Query] = []
    for i, p in enumerate(picks):
        tool = targets[int(p)]
        action, resource = tool.metadata["action"], tool.metadata["resource"]
        direct = rng.random() < 1 / 3
        verbs = _ACTIONS[action][0 if direct else 1]
        nouns = _RESOURCES[resource][0 if direct else 1]
        hverb = verbs[int(rng.integers(len(verbs)))]
        hres = nouns[int(rng.integers(len(nouns)))]
        if direct:
            hres = f"the {hres}"
        template = _QUERY_TEMPLATES[int(rng.integers(len(_QUERY_TEMPLATES)))]
        if "{server}" not in template and rng.random() < 0.5:
            template += " in {server}"
        text = template.format(hverb=hverb, hres=hres, server=str(tool.metadata["domain"]),
                               extra=_EXTRAS[int(rng.integers(len(_EXTRAS)))])
        out.append(Query(f"s{i:0{width}d}", text, (tool.name,), domain=tool.domain,
                         phrasing="direct" if direct else "indirect", tags=("synthetic",)))
    return out


def registry_text(registry: Sequence[Tool]) -> str:
    """The JSONL text :func:`write_registry` writes (toolsel's mark, then one tool a line)."""
    from .io import jsonl_mark, jsonl_text
    return jsonl_mark("synthetic") + jsonl_text(t.to_record() for t in registry)


def queries_text(queries: Sequence[Query]) -> str:
    """The JSONL text :func:`write_queries` writes."""
    def record(q: Query) -> dict:
        rec = {"id": q.id, "query": q.query, "expected": list(q.expected)}
        for key in ("domain", "phrasing", "search_term", "split", "category"):
            if getattr(q, key) is not None:
                rec[key] = getattr(q, key)
        if q.tags:
            rec["tags"] = list(q.tags)
        return rec
    from .io import jsonl_mark, jsonl_text
    return jsonl_mark("synthetic") + jsonl_text(record(q) for q in queries)


def write_registry(registry: Sequence[Tool], path: str | Path, **rules) -> Path:
    """Write ``registry`` as JSONL (one tool record a line) that :func:`load_registry` reads,
    after toolsel's mark (a first ``//`` line, which the readers skip). ``rules``: those of
    :func:`toolsel.io.write_text` (``force``, ``owned``, ``judged``)."""
    from .io import write_text
    return write_text(registry_text(registry), path, **rules)


def write_queries(queries: Sequence[Query], path: str | Path, **rules) -> Path:
    """Write ``queries`` as JSONL that :func:`load_queries` reads (marked as
    :func:`write_registry`)."""
    from .io import write_text
    return write_text(queries_text(queries), path, **rules)
