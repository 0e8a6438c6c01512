"""Build ``data/styles/pooled/registry.json``: every source registry pooled into one.

The pooled style models an agent connected to many servers at once: the 61-tool workspace
registry (``data/registry.json``), hand-written near-duplicate servers that offer almost the
same tools under other names (``pooled/near_duplicates.json``: Mattermost, Teams and Discord
next to Slack; GitLab and Bitbucket next to GitHub; Asana, Trello and Zendesk next to Linear
and Jira; Outlook next to Gmail and Calendar; Dropbox and OneDrive next to Drive; Confluence
next to Notion; Salesforce next to the CRM; several SQL warehouses), then the API-style and
plugin-style registries as further distractors. Order is fixed (registry order breaks ties),
so the output is byte-identical on every run.

Run from the repository root: ``python data/styles/build_pooled.py``. The queries
(``pooled/queries.jsonl``) are written by hand, not generated.
"""

from __future__ import annotations

import json
from pathlib import Path

STYLES = Path(__file__).resolve().parent
SOURCES = [STYLES.parent / "registry.json", STYLES / "pooled" / "near_duplicates.json",
           STYLES / "api" / "registry.json", STYLES / "plugin" / "registry.json"]
OUT = STYLES / "pooled" / "registry.json"


def build() -> list[dict]:
    """The pooled records, in source order; fails on a name two sources share."""
    seen: dict[str, Path] = {}
    pooled = []
    for src in SOURCES:
        for i, rec in enumerate(json.loads(src.read_text(encoding="utf-8"))):
            name = rec["name"]
            if name in seen:
                raise SystemExit(f"{src}, item {i}: tool name {name!r} already comes from "
                                 f"{seen[name]}")
            seen[name] = src
            pooled.append(rec)
    return pooled


def main() -> None:
    tools = build()
    OUT.write_text("[\n" + ",\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
                   + "\n]\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(tools)} tools)")


if __name__ == "__main__":
    main()
