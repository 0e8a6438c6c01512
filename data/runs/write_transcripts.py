"""Write ``transcripts.jsonl``: the hand-written recorded runs, as full Messages API exchanges.

The scripts below are written by hand: each task's user turns, what the model answered (text,
searches, calls and their arguments), what each search returned and what each tool returned.
This file only expands them into the exact request/response shapes an agent would have
recorded (every request repeats the tools and the whole conversation so far) and fills in
``usage`` from one cache model, so the numbers are consistent with each other:

- the prefix (tool-use system overhead, system prompt, every non-deferred tool definition,
  and the tool search tool's own overhead when present) carries a ``cache_control``
  breakpoint: the first request of each task writes it (``cache_creation_input_tokens``), the
  later requests of the task read it (``cache_read_input_tokens``); each task was recorded in
  its own session, more than five minutes after the previous one;
- the messages are not cached (``input_tokens``), and neither are the definitions of the
  deferred tools a search loaded: they are expanded where their ``tool_reference`` sits, from
  the response that loaded them on (appending them keeps the prefix cache valid);
- token counts are cl100k counts of the JSON sent (a stand-in for the model's tokenizer).

Run ``python data/runs/write_transcripts.py`` after editing a script; the test suite checks
that the committed file matches.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from toolsel.data import load_registry  # noqa: E402
from toolsel.eval.metrics import count_tokens  # noqa: E402

MODEL = "claude-sonnet-4-5-20250929"
SYSTEM = ("You are the operations assistant of Acme's engineering team. You act in Slack, "
          "GitHub, Jira, Linear, Google Workspace, Notion and the CRM through the tools you "
          "are given. Use a tool when the user asks for an action; if the tool you need is "
          "not visible, search for it first. Keep replies short and say what you did.")
TOOL_USE_OVERHEAD = 346      # tokens the API adds to a request that defines tools
SEARCH_TOOL_OVERHEAD = 312   # assumed: the tool search tool's definition and instructions
CLIENT_SEARCH_TOOL = {
    "name": "search_tools",
    "description": "Search the catalogue of deferred tools by what they do. Returns "
                   "references to the best matches, which become callable.",
    "input_schema": {"type": "object", "properties": {
        "query": {"type": "string", "description": "What the tool should do, in a few words"},
        "limit": {"type": "integer", "description": "Most results to return (default 3)"}},
        "required": ["query"]},
}


# --------------------------------------------------------------------------------------------
# the scripts (hand-written)
# A script is a list of steps: ("user", text) | ("assistant", [blocks], stop_reason) |
# ("results", [content, ...]) answering the client calls of the previous assistant step in
# order. Blocks: ("text", str) | ("search", query, [refs]) (server-side, bm25) |
# ("call", name, input).

R01 = ("r01", "File a bug report on the backend repo: login returns 500 since yesterday's "
       "deploy.")
R02 = ("r02", "Mark PROJ-88 as in progress, I've started on it.")
R03 = ("r03", "Find the Q3 planning doc in Drive, share it with dana@acme.com as an editor, "
       "and post the link in #planning.")
R04 = ("r04", "what's 340 divided by 12")
R05 = ("r05", "Translate 'the release is delayed to Friday' into German.")
R06 = ("r06", "Save the current weather in Lisbon to notes/lisbon.md")

ISSUE_ARGS = {"owner": "acme", "repo": "backend",
              "title": "Login returns 500 since yesterday's deploy",
              "body": "POST /login has returned HTTP 500 since yesterday's deploy. "
                      "Steps: sign in with any account. Expected 200, got 500.",
              "labels": ["bug"]}
ISSUE_RESULT = json.dumps({"number": 482, "html_url":
                           "https://github.com/acme/backend/issues/482", "state": "open"})
DRIVE_FOUND = json.dumps({"files": [{"id": "1xQ3planV2", "name": "Q3 planning",
                                     "mimeType": "application/vnd.google-apps.document",
                                     "webViewLink": "https://docs.google.com/document/d/"
                                                    "1xQ3planV2/edit"}]})
SHARE_ARGS = {"file_id": "1xQ3planV2", "email": "dana@acme.com", "role": "writer",
              "notify": True}
SHARE_RESULT = json.dumps({"id": "perm_81", "role": "writer", "emailAddress":
                           "dana@acme.com"})
LINK = "https://docs.google.com/document/d/1xQ3planV2/edit"

SCRIPTS = [
    # r01, eager: all 61 tools visible, the model picks the right one at once
    ("eager", R01, [
        ("user", R01[1]),
        ("assistant", [("text", "I'll open an issue on acme/backend."),
                       ("call", "github_create_issue", ISSUE_ARGS)], "tool_use"),
        ("results", [ISSUE_RESULT]),
        ("assistant", [("text", "Filed acme/backend#482: "
                                "https://github.com/acme/backend/issues/482")], "end_turn"),
    ]),
    # r01, deferred: one search loads the tool, then the same call
    ("deferred", R01, [
        ("user", R01[1]),
        ("assistant", [("search", "github issue bug report",
                        ["github_create_issue", "github_list_issues", "jira_create_issue",
                         "jira_get_issue", "linear_add_comment"]),
                       ("text", "I'll open an issue on acme/backend."),
                       ("call", "github_create_issue", ISSUE_ARGS)], "tool_use"),
        ("results", [ISSUE_RESULT]),
        ("assistant", [("text", "Filed acme/backend#482: "
                                "https://github.com/acme/backend/issues/482")], "end_turn"),
    ]),
    # r02, eager: the right transition
    ("eager", R02, [
        ("user", R02[1]),
        ("assistant", [("call", "jira_transition_issue",
                        {"issue_key": "PROJ-88", "transition_id": "21"})], "tool_use"),
        ("results", [json.dumps({"issue_key": "PROJ-88", "status": "In Progress"})]),
        ("assistant", [("text", "PROJ-88 is now In Progress.")], "end_turn"),
    ]),
    # r02, deferred: discovery works, then the model comments instead of transitioning
    ("deferred", R02, [
        ("user", R02[1]),
        ("assistant", [("search", "jira issue status transition",
                        ["jira_transition_issue", "jira_get_issue", "jira_create_issue",
                         "jira_add_comment", "jira_search_issues"]),
                       ("call", "jira_add_comment",
                        {"issue_key": "PROJ-88",
                         "body": "Started working on this; moving it to In Progress."})],
         "tool_use"),
        ("results", [json.dumps({"id": "10231", "issue_key": "PROJ-88"})]),
        ("assistant", [("text", "Done: I noted on PROJ-88 that you've started and it is "
                                "in progress.")], "end_turn"),
    ]),
    # r03, eager: three tools, all visible, all called
    ("eager", R03, [
        ("user", R03[1]),
        ("assistant", [("call", "drive_search_files", {"query": "Q3 planning"})], "tool_use"),
        ("results", [DRIVE_FOUND]),
        ("assistant", [("call", "drive_share_file", SHARE_ARGS)], "tool_use"),
        ("results", [SHARE_RESULT]),
        ("assistant", [("call", "slack_send_message",
                        {"channel_id": "#planning", "text": f"Q3 planning doc: {LINK}"})],
         "tool_use"),
        ("results", [json.dumps({"ok": True, "channel": "C04PLANNING",
                                 "ts": "1764480112.000200"})]),
        ("assistant", [("text", "Shared the Q3 planning doc with Dana (editor) and posted "
                                "the link in #planning.")], "end_turn"),
    ]),
    # r03, deferred: Drive tools found; the Slack search is worded after the goal and misses
    ("deferred", R03, [
        ("user", R03[1]),
        ("assistant", [("search", "google drive find file",
                        ["drive_read_file", "drive_upload_file", "drive_share_file",
                         "drive_search_files", "drive_create_folder"]),
                       ("call", "drive_search_files", {"query": "Q3 planning"})], "tool_use"),
        ("results", [DRIVE_FOUND]),
        ("assistant", [("call", "drive_share_file", SHARE_ARGS)], "tool_use"),
        ("results", [SHARE_RESULT]),
        ("assistant", [("search", "share link with team",
                        ["drive_share_file", "linear_create_issue", "linear_search_issues",
                         "github_list_issues", "web_search"]),
                       ("text", "I shared the Q3 planning doc with Dana as an editor, but I "
                                f"found no tool to post in #planning. Here is the link: "
                                f"{LINK}")], "end_turn"),
    ]),
    # r04, deferred: the first search returns nothing, the second finds the calculator
    ("deferred", R04, [
        ("user", R04[1]),
        ("assistant", [("search", "divide numbers", []),
                       ("text", "Nothing matched; trying a broader term."),
                       ("search", "arithmetic", ["calculator"]),
                       ("call", "calculator", {"expression": "340 / 12"})], "tool_use"),
        ("results", ["28.333333333333332"]),
        ("assistant", [("text", "340 ÷ 12 = 28.33 (28 remainder 4).")], "end_turn"),
    ]),
    # r05, client-side search (search_tools returns tool_reference blocks), two user turns
    ("client-search", R05, [
        ("user", R05[1]),
        ("assistant", [("call", "search_tools", {"query": "translate text"})], "tool_use"),
        ("results", [["translate_text", "slack_send_dm", "slack_send_message"]]),
        ("assistant", [("call", "translate_text",
                        {"text": "the release is delayed to Friday",
                         "target_language": "de"})], "tool_use"),
        ("results", [json.dumps({"translation": "Die Veröffentlichung ist auf Freitag "
                                                "verschoben.", "source_language": "en"})]),
        ("assistant", [("text", "German: \"Die Veröffentlichung ist auf Freitag "
                                "verschoben.\"")], "end_turn"),
        ("user", "Great, DM that to Bob (U024BE7LH)."),
        ("assistant", [("call", "search_tools", {"query": "slack direct message"})],
         "tool_use"),
        ("results", [["slack_send_dm", "slack_send_message", "slack_add_reaction"]]),
        ("assistant", [("call", "slack_send_dm",
                        {"user_id": "U024BE7LH",
                         "text": "Die Veröffentlichung ist auf Freitag verschoben."})],
         "tool_use"),
        ("results", [json.dumps({"ok": True, "channel": "D07BOB", "ts": "1764480550.000100"})]),
        ("assistant", [("text", "Sent to Bob.")], "end_turn"),
    ]),
    # r06, deferred: one deferred tool found, the other (write_file) always visible
    ("deferred", R06, [
        ("user", R06[1]),
        ("assistant", [("search", "weather current city",
                        ["weather_lookup", "weather_forecast", "get_current_time",
                         "currency_convert"]),
                       ("call", "weather_lookup", {"city": "Lisbon", "units": "metric"})],
         "tool_use"),
        ("results", [json.dumps({"city": "Lisbon", "temperature_c": 17.5, "humidity": 72,
                                 "conditions": "partly cloudy", "wind_kph": 14})]),
        ("assistant", [("call", "write_file",
                        {"path": "notes/lisbon.md",
                         "content": "# Lisbon weather\n\n17.5 °C, partly cloudy, humidity "
                                    "72%, wind 14 km/h.\n"})], "tool_use"),
        ("results", ["Wrote 71 bytes to notes/lisbon.md"]),
        ("assistant", [("text", "Saved the current Lisbon weather to notes/lisbon.md.")],
         "end_turn"),
    ]),
]


# --------------------------------------------------------------------------------------------
# expansion


def _id(prefix: str, *parts) -> str:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    n = int(digest, 16)
    out = ""
    for _ in range(24):
        n, r = divmod(n, 62)
        out += alphabet[r]
    return f"{prefix}_01{out}"


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tokens(value) -> int:
    return count_tokens(value if isinstance(value, str) else _dumps(value))


def _tool_def(tool, deferred: bool) -> dict:
    out = {"name": tool.name, "description": tool.description,
           "input_schema": dict(tool.parameters or {"type": "object", "properties": {}})}
    if deferred:
        out["defer_loading"] = True
    return out


def expand(run: str, task: tuple[str, str], script, registry) -> list[dict]:
    task_id = task[0]
    core = registry.always_include
    if run == "eager":
        tools = [_tool_def(t, False) for t in registry]
    elif run == "client-search":
        tools = [dict(CLIENT_SEARCH_TOOL)] + [_tool_def(t, t.name not in core)
                                              for t in registry]
    else:
        tools = [{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}]
        tools += [_tool_def(t, t.name not in core) for t in registry]
    definitions = {t["name"]: _tokens({k: v for k, v in t.items() if k != "defer_loading"})
                   for t in tools if "input_schema" in t}
    prefix = TOOL_USE_OVERHEAD + _tokens(SYSTEM) + sum(
        definitions[t["name"]] for t in tools if "input_schema" in t
        and not t.get("defer_loading"))
    if run not in ("eager", "client-search"):
        prefix += SEARCH_TOOL_OVERHEAD
    messages: list[dict] = []
    loaded: list[str] = []           # deferred tools expanded in the conversation so far
    pending: list[str] = []          # ids of the last assistant step's client calls
    records = []
    n_request = 0
    for step in script:
        if step[0] == "user":
            messages.append({"role": "user", "content": step[1]})
        elif step[0] == "results":
            assert len(step[1]) == len(pending), (task_id, step)
            blocks = []
            for use_id, content in zip(pending, step[1]):
                if isinstance(content, list):     # a client search: tool_reference blocks
                    blocks.append({"type": "tool_result", "tool_use_id": use_id, "content": [
                        {"type": "tool_reference", "tool_name": n} for n in content]})
                    loaded.extend(n for n in content if n not in loaded)
                else:
                    blocks.append({"type": "tool_result", "tool_use_id": use_id,
                                   "content": content})
            messages.append({"role": "user", "content": blocks})
        else:
            _, spec, stop = step
            n_request += 1
            content, pending, new_loads, server_result_tokens = [], [], [], 0
            for b, block in enumerate(spec):
                if block[0] == "text":
                    content.append({"type": "text", "text": block[1]})
                elif block[0] == "search":
                    sid = _id("srvtoolu", task_id, run, n_request, b)
                    content.append({"type": "server_tool_use", "id": sid,
                                    "name": "tool_search_tool_bm25",
                                    "input": {"query": block[1]}})
                    result = {"type": "tool_search_tool_result", "tool_use_id": sid,
                              "content": {"type": "tool_search_tool_search_result",
                                          "tool_references": [
                                              {"type": "tool_reference", "tool_name": n}
                                              for n in block[2]]}}
                    content.append(result)
                    server_result_tokens += _tokens(result)
                    new_loads.extend(n for n in block[2] if n not in loaded + new_loads)
                else:
                    uid = _id("toolu", task_id, run, n_request, b)
                    content.append({"type": "tool_use", "id": uid, "name": block[1],
                                    "input": block[2]})
                    pending.append(uid)
            request = {"model": MODEL, "max_tokens": 4096,
                       "system": [{"type": "text", "text": SYSTEM,
                                   "cache_control": {"type": "ephemeral"}}],
                       "tools": tools, "messages": json.loads(_dumps(messages))}
            # the server expands what a search loads and samples on: that request pays for it
            uncached = (_tokens(messages) + sum(definitions[n] for n in loaded)
                        + server_result_tokens + sum(definitions[n] for n in new_loads))
            first = n_request == 1
            usage = {"input_tokens": uncached,
                     "cache_creation_input_tokens": prefix if first else 0,
                     "cache_read_input_tokens": 0 if first else prefix,
                     "output_tokens": 9 + _tokens([c for c in content
                                                   if c["type"] != "tool_search_tool_result"])}
            response = {"id": _id("msg", task_id, run, n_request), "type": "message",
                        "role": "assistant", "model": MODEL, "content": content,
                        "stop_reason": stop, "stop_sequence": None, "usage": usage}
            records.append({"task_id": task_id, "run": run, "request": request,
                            "response": response})
            loaded.extend(new_loads)
            messages.append({"role": "assistant", "content": content})
    return records


def render(registry_path: Path = HERE.parent / "registry.json") -> str:
    """The JSONL text of every script, expanded."""
    registry = load_registry(registry_path)
    lines = []
    for run, task, script in SCRIPTS:
        lines.extend(_dumps(r) for r in expand(run, task, script, registry))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (HERE / "transcripts.jsonl").write_text(render(), encoding="utf-8")
    print(f"wrote {HERE / 'transcripts.jsonl'}")
