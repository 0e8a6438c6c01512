"""explorer.html: its data against the package's own numbers, and the page in a real browser.

The browser tests open the page in Debian's headless Chromium with the network disabled
(``--proxy-server=127.0.0.1:9``), set the query, K, scorer, threshold and opened tool through
the URL hash the page reads, and compare the DOM it draws with what the package computes
(:func:`toolsel.eval.sweep.sweep`, :class:`toolsel.selection.Selector`). Chrome's net log of
each page load shows every request the page made: none may leave ``file://``. They are
skipped only when no ``chromium`` is installed (CI installs it: ``.ci/run``).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest

from toolsel import Selector, Tool, load_queries, load_registry
from toolsel.data import Query, Registry
from toolsel.eval.metrics import payload_tokens
from toolsel.eval.sweep import sweep
from toolsel.policies import Threshold
from toolsel.report.explorer_data import explorer_data, scorer_fields
from toolsel.report.explorer_page import (EXPLORER_PAGE, embed_json, explorer_links,
                                          render_explorer, report_explorer_inputs,
                                          write_report_explorer)
from toolsel.report.offline import remote_references, strip_scripts

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
SCORERS = ["jaccard", "bm25", "tfidf"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed here (apt-get install "
    "--no-install-recommends chromium chromium-driver); CI installs it in .ci/run")


# --------------------------------------------------------------------------------------------
# the data, against the package

@pytest.fixture(scope="module")
def bundled():
    reg = load_registry(DATA / "registry.json")
    qs = load_queries(DATA / "queries.jsonl", reg)
    return reg, qs, explorer_data(reg, qs, SCORERS, depth=12)


def test_data_ranks_agree_with_the_sweep_and_selector(bundled):
    reg, qs, data = bundled
    always = sorted(reg.always_include)
    assert always and [data["tools"]["name"][i] for i in data["always"]] == \
        sorted(always, key=reg.index)
    res = sweep(reg, qs, SCORERS, [3], always_include=always)
    pq = res.per_query
    for s in data["scorers"]:
        sel = Selector(reg, s["name"], top_k=5)  # the registry's always-include, as the page
        for qi, q in enumerate(qs):
            for j, ti in enumerate(data["queries"]["required"][qi]):
                row = pq[(pq.scorer == s["name"]) & (pq.query_id == q.id)
                         & (pq.tool == reg[ti].name)].iloc[0]
                rank = s["required"][qi][j][0]
                assert rank == (0 if row["always_include"] else int(row["rank"]))
            top = [reg[i].name for i in s["top"][qi][:5]]
            assert sorted(top + always, key=reg.index) == sel.select(q.query)
            assert len(s["top"][qi]) == 12 and not set(s["top"][qi]) & set(data["always"])


def test_required_ranks_are_never_trimmed():
    reg = Registry([Tool(f"tool_{i}", f"does thing number {i} for you") for i in range(30)]
                   + [Tool("needle", "zebra giraffe")])
    q = Query("a", "thing number 3", ("needle",))
    data = explorer_data(reg, [q], ["bm25"], depth=4, always_include=())
    s = data["scorers"][0]
    assert len(s["top"][0]) == 4 and reg.index("needle") not in s["top"][0]
    rank, score, _ = s["required"][0][0]
    assert rank > 4 and score == 0.0


def test_default_scorer_fields_say_what_bm25_indexes():
    from toolsel.scorers.base import get_scorer
    reg = load_registry(DATA / "registry.json")
    text = scorer_fields(get_scorer("default").fit(reg))
    assert "lexical bm25: name_words ×2, description, param_names" in text
    assert "semantic embedding: name_words, description" in text


def test_json_block_cannot_be_closed_by_data():
    evil = {"name": "</script><script>alert(1)</script><!--", "x": "a\u2028b&amp;"}
    text = embed_json(evil)
    assert "<" not in text and ">" not in text and "\u2028" not in text and "&" not in text
    assert json.loads(text) == evil


def test_offline_pages_keep_data_blocks_and_drop_scripts():
    page = ('<head><script src="https://cdn.example/require.js"></script>'
            '<link rel="stylesheet" href="//cdn.example/x.css"/>'
            '<script type="text/x-mathjax-config">MathJax.Hub.Config({})</script></head>'
            '<body><script type="application/vnd.jupyter.widget-state+json">{"a": 1}</script>'
            '<script type="module">import("https://cdn.example/m.mjs")</script>'
            '<a href="https://example.org/doc">a link is not a request</a></body>')
    assert len(remote_references(page)) == 3
    out = strip_scripts(page)
    assert remote_references(out) == []
    assert "widget-state+json" in out and "MathJax" not in out and "a link" in out


def test_report_inputs_follow_the_notebook_defaults():
    reg, qs, scorers, ks, always = report_explorer_inputs(ROOT / "notebooks")
    assert reg == (DATA / "registry.json").resolve()
    assert qs == (DATA / "queries.jsonl").resolve()
    assert scorers and ks and always == []  # the pages' convention: none


def test_report_explorer_is_written_linked_and_removed_without_queries(tmp_path):
    from toolsel.report.plan import UserData
    out = tmp_path / "rep"
    data = UserData(registry=(DATA / "registry.json").resolve(),
                    queries=(DATA / "queries.jsonl").resolve(), scorers=("jaccard",),
                    top_k=(3,))
    page = write_report_explorer(out, ROOT / "notebooks", data)
    assert page == out / EXPLORER_PAGE and page.stat().st_size > 0
    assert explorer_links(out, "md")[2].startswith(f"[{EXPLORER_PAGE}]({EXPLORER_PAGE})")
    assert f'href="{EXPLORER_PAGE}"' in "".join(explorer_links(out, "html"))
    write_report_explorer(out, ROOT / "notebooks",
                          UserData(registry=(DATA / "registry.json").resolve()))
    assert not page.exists()
    mine = out / EXPLORER_PAGE
    mine.write_text("my own page")  # not ours: kept
    write_report_explorer(out, ROOT / "notebooks",
                          UserData(registry=(DATA / "registry.json").resolve()))
    assert mine.read_text() == "my own page"


# --------------------------------------------------------------------------------------------
# the page in a real browser, network off


class _Dom(HTMLParser):
    """Elements of a dumped DOM: tag, attributes and full text, in document order."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
            "source", "track", "wbr"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[dict] = []
        self._open: list[dict] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        el = {"tag": tag, "attrs": dict(attrs), "text": [],
              "parent": self._open[-1] if self._open else None}
        self.elements.append(el)
        if tag not in self.VOID:
            self._open.append(el)

    def handle_endtag(self, tag):
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i]["tag"] == tag:
                del self._open[i:]
                break

    def handle_data(self, data):
        for el in self._open:
            el["text"].append(data)

    def find(self, **attrs) -> list[dict]:
        tag = attrs.pop("tag", None)
        return [e for e in self.elements if (tag is None or e["tag"] == tag)
                and all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items())]

    def within(self, ancestor: dict) -> list[dict]:
        """Elements inside ``ancestor``, in document order."""
        out = []
        for e in self.elements:
            p = e["parent"]
            while p is not None and p is not ancestor:
                p = p["parent"]
            if p is ancestor:
                out.append(e)
        return out

    def text(self, **attrs) -> str:
        found = self.find(**attrs)
        assert len(found) == 1, (attrs, len(found))
        return "".join(found[0]["text"]).strip()


def _chromium(url: str, tmp: Path, *, dump: bool = True, screenshot: Path | None = None
              ) -> tuple[str, list[str]]:
    """Load ``url`` in headless Chromium with the network off; ``(dom, requests)`` where
    ``requests`` are the URLs the page asked for outside ``file://`` (Chrome's net log)."""
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    netlog = profile.with_suffix(".netlog.json")
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-quic", "--no-first-run", f"--user-data-dir={profile}",
            "--proxy-server=127.0.0.1:9", f"--log-net-log={netlog}",
            "--virtual-time-budget=5000", "--window-size=1400,2000"]
    args += [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
    proc = subprocess.run(args + [url], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = json.loads(netlog.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    requests = [e["params"]["url"] for e in log["events"] if e["type"] == start
                and "file://" in e["params"].get("network_isolation_key", "")
                and not e["params"]["url"].startswith(("file:", "data:"))]
    return proc.stdout, requests


def _url(page: Path, **params) -> str:
    return page.resolve().as_uri() + "#" + "&".join(
        f"{quote(k, safe='.')}={quote(str(v), safe='')}" for k, v in params.items())


@pytest.fixture(scope="module")
def page(bundled, tmp_path_factory):
    reg, qs, data = bundled
    path = tmp_path_factory.mktemp("explorer") / EXPLORER_PAGE
    path.write_text(render_explorer(data), encoding="utf-8")
    return path


@needs_chromium
@pytest.mark.slow
@pytest.mark.parametrize("scorer,k", [("bm25", 5), ("jaccard", 3)])
def test_browser_shows_the_package_numbers(bundled, page, tmp_path, scorer, k):
    reg, qs, data = bundled
    q = next(q for q in qs if q.id == "q03")
    dom_text, requests = _chromium(_url(page, q=q.id, k=k, scorer=scorer,
                                        tool=q.expected[0]), tmp_path)
    assert requests == []
    dom = _Dom(dom_text)
    assert dom.find(tag="body", data_ready="1")
    # the whole query set at this K, against the sweep with the registry's always-include
    summary = sweep(reg, qs, SCORERS, [k], always_include=sorted(reg.always_include)).summary
    for name in SCORERS:
        row = summary[summary.scorer == name].iloc[0]
        for metric, col in (("recall", "R@k"), ("complete", "Complete@k"),
                            ("tokens", "payload_tokens"),
                            ("reduction", "payload_tokens_reduction")):
            cell = [e for e in dom.find(tag="td", data_metric=metric)
                    if e in _row_cells(dom, name)]
            assert len(cell) == 1
            assert float(cell[0]["attrs"]["data-value"]) == pytest.approx(row[col], abs=1e-6)
        assert "".join(_row_text(dom, name, "recall")) == f"{100 * row['R@k']:.1f}%"
    # the chosen query, K and scorer: what is sent, as Selector sends it
    assert dom.text(id="query-id") == q.id and dom.text(id="query-text") == q.query
    sent = Selector(reg, scorer, top_k=k).select(q.query)
    shown = [e["attrs"]["data-tool"] for e in dom.find(tag="li")
             if "data-tool" in e["attrs"] and e in _children(dom, "sent-names")]
    assert shown == sent
    assert dom.text(id="sent-scorer") == scorer
    tokens = payload_tokens([reg.get(n) for n in sent])
    assert int(dom.find(id="sent-tokens")[0]["attrs"]["data-value"]) == tokens
    # each scorer's column: its K marked sent, the required tool at the package's rank
    for s in data["scorers"]:
        col = _column(dom, s["name"])
        ranked = [e for e in col if e["tag"] == "tr" and "data-rank" in e["attrs"]]
        assert len(ranked) == data["depth"]
        assert [e["attrs"]["class"].split()[0] for e in ranked] == \
            ["sent"] * k + ["unsent"] * (data["depth"] - k)
        rank = s["required"][qs.index(q)][0][0]
        marked = [e for e in col if e["attrs"].get("data-tool") == q.expected[0]
                  and e["attrs"].get("data-rank")]
        assert [int(e["attrs"]["data-rank"]) for e in marked] == [rank]
    # the opened tool: its definition, the scorers that miss it at this K and why
    # (toolsel.tables.failure_modes on the sweep's misses), and the repair hint
    from toolsel.tables.failure_modes import classify_misses, repair_hints
    res = sweep(reg, qs, SCORERS, [k], always_include=sorted(reg.always_include))
    classified = classify_misses(res.misses, reg)
    assert json.loads(dom.text(id="tool-def")) == reg.get(q.expected[0]).definition()
    mine = classified[classified.expected == q.expected[0]]
    for s in data["scorers"]:
        li = dom.find(tag="li", data_scorer=s["name"])
        rows = mine[mine.scorer == s["name"]]
        assert li and li[0]["attrs"]["data-misses"] == str(len(rows))
        text = "".join(li[0]["text"])
        for r in rows.itertuples():
            assert f"{r.query_id} (rank {r.rank}, {r.mode})" in text
    hint = repair_hints(mine)
    if len(hint):
        assert dom.text(id="tool-hint") == hint["missing_terms"].iloc[0]


@needs_chromium
@pytest.mark.slow
def test_browser_threshold_is_the_threshold_policy(bundled, page, tmp_path):
    reg, qs, data = bundled
    q = next(q for q in qs if q.id == "q03")
    s = data["scorers"][SCORERS.index("bm25")]
    mean, best = s["scale"][qs.index(q)]
    rel = [(x - mean) / (best - mean) for x in s["scores"][qs.index(q)] if x is not None]
    t = round((rel[2] + rel[3]) / 2, 3)  # between the 3rd and 4th scores: no rounding tie
    dom, requests = _chromium(_url(page, q=q.id, k=8, scorer="bm25", **{"thr.bm25": t}),
                              tmp_path)
    assert requests == []
    dom = _Dom(dom)
    sent = Selector(reg, "bm25", policy=Threshold(t, min_k=1, max_k=8)).select(q.query)
    shown = [e["attrs"]["data-tool"] for e in dom.find(tag="li")
             if "data-tool" in e["attrs"] and e in _children(dom, "sent-names")]
    assert shown == sent and len(sent) == 3 + len(reg.always_include)


def _children(dom: _Dom, id_: str) -> list[dict]:
    return dom.within(dom.find(id=id_)[0])


def _column(dom: _Dom, scorer: str) -> list[dict]:
    return dom.within(dom.find(tag="section", data_scorer=scorer)[0])


def _row_cells(dom: _Dom, scorer: str) -> list[dict]:
    return dom.within(dom.find(tag="tr", data_scorer=scorer)[0])


def _row_text(dom: _Dom, scorer: str, metric: str) -> list[str]:
    return ["".join(e["text"]).strip() for e in _row_cells(dom, scorer)
            if e["attrs"].get("data-metric") == metric]


@needs_chromium
@pytest.mark.slow
def test_browser_renders_hostile_names_as_text(tmp_path):
    evil_name = '<img src=x onerror="document.title=1">'
    evil_desc = "</script><script>document.title='pwned'</script> send <b>mail</b>"
    reg = Registry([Tool(evil_name, evil_desc), Tool("send_mail", "send an email message"),
                    Tool("__proto__", "constructor toString"),
                    Tool("calendar", "create a calendar event")])
    q = Query("<i>q1</i>", "send <b>mail</b> now </script>", (evil_name, "__proto__"))
    data = explorer_data(reg, [q], ["jaccard", "bm25"], depth=4, always_include=())
    path = tmp_path / EXPLORER_PAGE
    path.write_text(render_explorer(data), encoding="utf-8")
    dom_text, requests = _chromium(_url(path, q=q.id, k=2, tool=evil_name), tmp_path)
    assert requests == []
    dom = _Dom(dom_text)
    assert dom.find(tag="body", data_ready="1")  # the script ran to the end
    assert not dom.find(tag="img") and not dom.find(tag="i")
    assert not [b for b in dom.find(tag="b") if "mail" in "".join(b["text"])]
    assert "&lt;b&gt;mail&lt;/b&gt;" in dom_text  # shown as text
    assert dom.text(id="query-text") == q.query and dom.text(id="query-id") == q.id
    assert dom.text(id="tool-name") == evil_name
    assert "<title>toolsel explorer</title>" in dom_text  # no handler changed it
    assert len(dom.find(tag="button", data_tool="__proto__")) >= 2


@needs_chromium
@pytest.mark.slow
def test_exported_pages_request_nothing(tmp_path):
    """Every committed executed notebook, exported now: no remote reference in the page, and
    Chromium loading it asks the network for nothing."""
    from toolsel.report.execute import export_html
    executed = sorted((ROOT / "reports").glob("[0-9][0-9]_*.ipynb"))
    assert executed
    for nb in executed:
        html = export_html(nb, tmp_path / f"{nb.stem}.html")
        text = html.read_text(encoding="utf-8")
        assert remote_references(text) == [], nb.name
        assert "<script src=" not in text and "require.min.js" not in text
    for name in ("04_explorer.html", "01_recall_vs_payload.html"):
        _, requests = _chromium((tmp_path / name).as_uri(), tmp_path)
        assert requests == [], name


@needs_chromium
@pytest.mark.slow
def test_netlog_sees_a_page_request(tmp_path):
    """The net-log check can fail: a page with a remote script shows its request."""
    page = tmp_path / "remote.html"
    page.write_text('<html><body><script src="https://cdn.invalid/x.js"></script></body>'
                    "</html>")
    _, requests = _chromium(page.as_uri(), tmp_path)
    assert requests == ["https://cdn.invalid/x.js"]


def test_index_and_readme_link_the_explorer(tmp_path):
    from toolsel.report.site import render_index
    from toolsel.report.readme import render_readme
    assert "explorer.html" not in render_index(tmp_path, [])
    (tmp_path / EXPLORER_PAGE).write_text("<html></html>")
    assert f'<a href="{EXPLORER_PAGE}">' in render_index(tmp_path, [])
    assert f"[{EXPLORER_PAGE}]({EXPLORER_PAGE})" in render_readme(tmp_path, [])


# --------------------------------------------------------------------------------------------
# driven by hand: Debian's chromedriver over the W3C WebDriver protocol (plain HTTP, no client
# library): type in the search box, click a query, type a K, pick a scorer, open a tool

CHROMEDRIVER = shutil.which("chromedriver")
_ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class _Driver:
    def __init__(self, tmp: Path):
        import socket
        import time
        import urllib.request
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([CHROMEDRIVER, f"--port={port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._open = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for _ in range(100):
            try:
                if self._call("GET", "/status")["ready"]:
                    break
            except OSError:
                time.sleep(0.1)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-quic",
                "--no-first-run", f"--user-data-dir={tmp / 'wd-profile'}",
                "--proxy-server=127.0.0.1:9", "--window-size=1400,2000"]
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions":
                                                 {"binary": CHROMIUM, "args": args}}}}
        self.session = self._call("POST", "/session", caps)["sessionId"]

    def _call(self, method: str, path: str, body: dict | None = None):
        import urllib.request
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with self._open.open(req, timeout=60) as resp:
            return json.loads(resp.read())["value"]

    def cmd(self, method: str, path: str, body: dict | None = None):
        return self._call(method, f"/session/{self.session}{path}", body)

    def find(self, css: str) -> str:
        return self.cmd("POST", "/element", {"using": "css selector", "value": css})[_ELEMENT]

    def type(self, css: str, text: str) -> None:
        el = self.find(css)
        self.cmd("POST", f"/element/{el}/clear", {})
        self.cmd("POST", f"/element/{el}/value", {"text": text})

    def click(self, css: str) -> None:
        self.cmd("POST", f"/element/{self.find(css)}/click", {})

    def text(self, css: str) -> str:
        return self.cmd("GET", f"/element/{self.find(css)}/text")

    def js(self, script: str, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def close(self) -> None:
        try:
            self.cmd("DELETE", "")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@needs_chromium
@pytest.mark.skipif(CHROMEDRIVER is None, reason="Debian's chromium-driver is not installed "
                    "here; CI installs it in .ci/run")
@pytest.mark.slow
def test_driven_by_hand_the_page_follows(bundled, page, tmp_path):
    reg, qs, data = bundled
    driver = _Driver(tmp_path)
    try:
        driver.cmd("POST", "/url", {"url": page.resolve().as_uri()})
        assert driver.js("return document.body.dataset.ready") == "1"
        # search by words of the request, then click the query found
        q = next(q for q in qs if q.id == "q03")
        driver.type("#f-search", "bug report")
        listed = driver.js("return [...document.querySelectorAll('#query-list button')]"
                           ".map(b => b.dataset.query)")
        assert listed == [x.id for x in qs if "bug report" in x.query.lower()]
        driver.click(f'#query-list button[data-query="{q.id}"]')
        assert driver.text("#query-text") == q.query
        # type K = 3, pick bm25 as the scorer in detail
        driver.type("#k-num", "3\ue007")
        driver.click('#focus option[value="%d"]' % SCORERS.index("bm25"))
        assert driver.text("#k-label") == "3" and driver.text("#sent-scorer") == "bm25"
        sent = driver.js("return [...document.querySelectorAll('#sent-names li')]"
                         ".map(li => li.dataset.tool)")
        assert sent == Selector(reg, "bm25", top_k=3).select(q.query)
        summary = sweep(reg, qs, SCORERS, [3], always_include=sorted(reg.always_include)).summary
        for name in SCORERS:
            value = driver.js("return document.querySelector("
                              "'tr[data-scorer=\"' + arguments[0] + '\"] td[data-metric=complete]')"
                              ".dataset.value", name)
            want = summary[summary.scorer == name]["Complete@k"].iloc[0]
            assert float(value) == pytest.approx(want, abs=1e-6)
        # the filter "missed at K by jaccard" lists exactly the queries the sweep says
        el = driver.find("#f-search")  # select all, delete: as a reader empties the box
        driver.cmd("POST", f"/element/{el}/value", {"text": "\ue009a\ue000\ue003"})
        assert driver.js("return document.getElementById('f-search').value") == ""
        driver.js("const s = document.getElementById('f-missed'); s.value = 'jaccard';"
                  "s.dispatchEvent(new Event('change'));")
        listed = driver.js("return [...document.querySelectorAll('#query-list button')]"
                           ".map(b => b.dataset.query)")
        res = sweep(reg, qs, ["jaccard"], [3], always_include=sorted(reg.always_include))
        assert listed == list(dict.fromkeys(res.misses["query_id"]))
        # open a tool from a column: its definition shows; the hash records the view
        driver.click(f'section[data-scorer="bm25"] button[data-tool="{q.expected[0]}"]')
        assert json.loads(driver.text("#tool-def")) == reg.get(q.expected[0]).definition()
        url = driver.cmd("GET", "/url")
        assert f"q={q.id}" in url and "k=3" in url and "scorer=bm25" in url
        requests = driver.js("return performance.getEntriesByType('resource')"
                             ".map(e => e.name)")
        assert requests == []
    finally:
        driver.close()


@pytest.mark.slow
def test_a_users_report_has_a_linked_offline_explorer(tmp_path):
    """``toolsel report --registry R --queries Q --out DIR`` (notebook 04 only, to be quick):
    DIR/explorer.html on the user's data, linked from index.html and README.md; the exported
    page references nothing remote; the executed notebook names its table folder beside it."""
    from toolsel.report.plan import UserData
    from toolsel.report.runner import generate_reports
    out = tmp_path / "report"
    data = UserData(registry=(DATA / "registry.json").resolve(),
                    queries=(DATA / "queries.jsonl").resolve(), scorers=("jaccard", "bm25"),
                    top_k=(5,))
    runs = generate_reports(ROOT / "notebooks", out, only=["04"], data=data)
    assert [r.error for r in runs] == [None]
    page = (out / EXPLORER_PAGE).read_text(encoding="utf-8")
    blob = page.split('id="explorer-data">', 1)[1].split("</script>", 1)[0]
    assert [s["name"] for s in json.loads(blob)["scorers"]] == ["jaccard", "bm25"]
    assert f'href="{EXPLORER_PAGE}"' in (out / "index.html").read_text(encoding="utf-8")
    assert f"]({EXPLORER_PAGE})" in (out / "README.md").read_text(encoding="utf-8")
    html = (out / "04_explorer.html").read_text(encoding="utf-8")
    assert remote_references(html) == [] and 'href="explorer.html"' in html
    nb = json.loads((out / "04_explorer.ipynb").read_text(encoding="utf-8"))
    injected = "".join(next(c["source"] for c in nb["cells"]
                            if "injected-parameters" in c["metadata"].get("tags", [])))
    assert 'out_dir = "04_explorer"' in injected
    assert remote_references(page) == []


# --------------------------------------------------------------------------------------------
# layout at reading widths: screenshots, and the DOM measured in the browser

LONG_TOOLS = [
    Tool("getUserSubmissionHistoryForContest", "Get the submission history of a user in a "
         "programming contest"),
    Tool("slack_send_direct_message_to_member", "Send a direct message to one member of a "
         "slack workspace"),
    Tool("io.github.servers.filesystem.read_text_file", "Read a text file from the disk"),
    Tool("calculator", "evaluate a basic arithmetic expression"),
]


@pytest.fixture(scope="module")
def layout_page(tmp_path_factory):
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    base = synthetic_registry(60, seed=0)  # snake_case, camelCase and dotted names
    reg = Registry([*base, *LONG_TOOLS])
    qs = [*synthetic_queries(base, 12, seed=0),
          Query("long1", "show the submission history of this user in the contest",
                ("getUserSubmissionHistoryForContest",)),
          Query("long2", "send a direct message to a member on slack",
                ("slack_send_direct_message_to_member",)),
          Query("long3", "read the text file from the disk",
                ("io.github.servers.filesystem.read_text_file",)),
          Query("zero", "crunch numbers", ("calculator",))]
    data = explorer_data(reg, qs, ["jaccard", "bm25", "tfidf", "embedding", "default"],
                         depth=20)
    path = tmp_path_factory.mktemp("layout") / EXPLORER_PAGE
    path.write_text(render_explorer(data), encoding="utf-8")
    return reg, qs, data, path


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


# every rank row of every column: the name's boxes (each line of it) inside the name cell and
# left of the score cell, the score's text inside its cell
_OVERLAPS = """
const bad = [];
for (const tr of document.querySelectorAll('table.rank tr[data-rank]')) {
  const [, nameTd, scoreTd] = tr.children;
  const s = scoreTd.getBoundingClientRect(), n = nameTd.getBoundingClientRect();
  for (const child of nameTd.children) {
    for (const r of child.getClientRects()) {
      if (r.width && (r.right > s.left + 0.5 || r.right > n.right + 0.5 || r.left < n.left - 0.5))
        bad.push([tr.dataset.tool, 'name', r.left, r.right, s.left]);
    }
  }
  const range = document.createRange();
  range.selectNodeContents(scoreTd);
  const t = range.getBoundingClientRect();
  if (t.right > s.right + 0.5 || t.left < s.left - 0.5) bad.push([tr.dataset.tool, 'score']);
}
return bad;
"""


@needs_chromium
@pytest.mark.skipif(CHROMEDRIVER is None, reason="Debian's chromium-driver is not installed "
                    "here; CI installs it in .ci/run")
@pytest.mark.slow
@pytest.mark.parametrize("width", [900, 1200, 1600])
def test_layout_reads_well_at_this_width(layout_page, tmp_path, width):
    reg, qs, data, page = layout_page
    driver = _Driver(tmp_path)
    try:
        driver.cmd("POST", "/window/rect", {"width": width, "height": 1000})
        driver.cmd("POST", "/url", {"url": page.resolve().as_uri() + "#q=long1&k=5"})
        assert driver.js("return document.body.dataset.ready") == "1"
        inner = driver.js("return window.innerWidth")
        assert width - 40 <= inner <= width
        shot = tmp_path / f"explorer-{width}.png"
        shot.write_bytes(base64.b64decode(driver.cmd("GET", "/screenshot")))
        assert _png_size(shot.read_bytes())[0] == inner  # the page as a reader sees it
        # no sideways scroll
        assert driver.js("return document.documentElement.scrollWidth") <= \
            driver.js("return document.documentElement.clientWidth")
        # the filters are all on screen, none cut off
        for f in ("f-search", "f-split", "f-missed", "f-mode", "f-tool"):
            r = driver.js(f"return document.getElementById('{f}').getBoundingClientRect()"
                          ".toJSON()")
            assert r["width"] > 40 and r["left"] >= 0 and r["right"] <= inner, (f, r)
        # no tool name runs into its score; no score is clipped
        assert driver.js(_OVERLAPS) == []
        # names wrap only at "_", ".", camelCase boundaries: a <wbr> at each, and no piece
        # between two of them broken across lines
        pieces = driver.js(
            "const b = document.querySelector('section[data-scorer=\"default\"] "
            "button[data-tool=\"getUserSubmissionHistoryForContest\"]');"
            "const out = [];"
            "for (const n of b.childNodes) { if (n.nodeType !== 3) continue;"
            "  const r = document.createRange(); r.selectNodeContents(n);"
            "  out.push([n.textContent, new Set([...r.getClientRects()].filter(x => x.width)"
            "    .map(x => Math.round(x.top))).size, b.parentNode.getBoundingClientRect().width]); }"
            "return [out, b.querySelectorAll('wbr').length, b.getClientRects().length];")
        assert [p[0] for p in pieces[0]] == ["get", "User", "Submission", "History", "For",
                                             "Contest"]
        assert all(p[1] == 1 for p in pieces[0]) and pieces[1] == 5, pieces
        driver.js("location.hash = '#q=long3&k=5'")
        dotted = driver.js("return [...document.querySelectorAll('button[data-tool=\"io.github"
                           ".servers.filesystem.read_text_file\"]')].map(b => "
                           "b.querySelectorAll('wbr').length)")
        assert dotted and set(dotted) == {6}  # io. github. servers. filesystem. read_ text_ file
        # the scorer in detail is `default`, first of the columns and of the scorer list
        assert driver.js("return document.querySelector('#focus option:checked').textContent") \
            == "default"
        assert driver.js("return document.querySelector('#columns section').dataset.scorer") \
            == "default"
        assert driver.text("#sent-scorer") == "default"
        # the curve has a legend: one entry per scorer, every curve its own color and dashes
        legend = driver.js("return [...document.querySelectorAll('#curve-legend li')]"
                           ".map(li => [li.dataset.legend, li.textContent])")
        assert [name for name, _ in legend] == ["default", "jaccard", "bm25", "tfidf",
                                                "embedding"]
        assert all("R@K" in text for _, text in legend)
        styles = driver.js("return [...document.querySelectorAll('#curve polyline')]"
                           ".map(p => p.getAttribute('stroke') + ' ' + "
                           "p.getAttribute('stroke-dasharray'))")
        assert len(set(styles)) == 5
        # the sticky K bar does not cover a row brought into view
        covered = driver.js(
            "const row = document.querySelector('section[data-scorer=\"bm25\"] "
            "tr[data-rank=\"1\"]'); row.scrollIntoView({block: 'start'});"
            "return [row.getBoundingClientRect().top,"
            " document.querySelector('.controls').getBoundingClientRect().bottom]")
        assert covered[0] >= covered[1] - 0.5, covered
        # the tool panel opens where the reader clicked, on screen, inside the page's width
        driver.js("document.querySelector('section[data-scorer=\"tfidf\"] "
                  "tr[data-rank=\"3\"]').scrollIntoView({block: 'center'})")
        tool = driver.js("return document.querySelector('section[data-scorer=\"tfidf\"] "
                         "tr[data-rank=\"3\"]').dataset.tool")
        driver.click(f'section[data-scorer="tfidf"] tr[data-rank="3"] button.tool')
        panel, row = driver.js(
            "return [document.getElementById('tool-panel').getBoundingClientRect().toJSON(),"
            " document.querySelector('section[data-scorer=\"tfidf\"] tr[data-rank=\"3\"]')"
            ".getBoundingClientRect().toJSON()]")
        assert driver.text("#tool-name") == tool
        assert 0 <= panel["top"] < driver.js("return window.innerHeight")
        assert row["bottom"] - 2 <= panel["top"] <= row["bottom"] + 40, (row, panel)
        assert panel["left"] >= 0 and panel["right"] <= inner
        assert driver.js("return document.documentElement.scrollWidth") <= \
            driver.js("return document.documentElement.clientWidth")
        (tmp_path / f"explorer-{width}-tool.png").write_bytes(
            base64.b64decode(driver.cmd("GET", "/screenshot")))
        driver.js("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
        assert driver.js("return document.getElementById('tool-panel').hidden") is True
    finally:
        driver.close()


@needs_chromium
@pytest.mark.skipif(CHROMEDRIVER is None, reason="Debian's chromium-driver is not installed "
                    "here; CI installs it in .ci/run")
@pytest.mark.slow
def test_search_finds_tool_names_and_zero_scores_are_marked(layout_page, tmp_path):
    reg, qs, data, page = layout_page
    driver = _Driver(tmp_path)
    try:
        driver.cmd("POST", "/url", {"url": page.resolve().as_uri() + "#q=zero&k=5"})
        assert driver.js("return document.body.dataset.ready") == "1"
        # a tool name, whole or by its words, finds the queries that require it
        for typed in ("slack_send_direct", "send direct message", "SubmissionHistory",
                      "submission history for"):
            driver.type("#f-search", typed)
            listed = driver.js("return [...document.querySelectorAll('#query-list button')]"
                               ".map(b => b.dataset.query)")
            want = "long2" if "send" in typed else "long1"
            assert listed == [want], (typed, listed)
        # sent with score 0: marked in the columns and in the list of what is sent
        marks = driver.js(
            "return [...document.querySelectorAll('section[data-scorer=\"jaccard\"] "
            "tr[data-rank]')].map(tr => [+tr.dataset.rank, tr.children[2].textContent,"
            " tr.classList.contains('zero-score'), tr.querySelector('.zero') !== null])")
        top = data["scorers"][0]  # jaccard
        qi = [q.id for q in qs].index("zero")
        scores = top["scores"][qi]
        assert scores[:5] == [0.0] * 5  # no word of the request is in any tool's text
        for rank, text, cls, mark in marks:
            assert cls == mark == (rank <= 5), (rank, text)  # sent, score 0
        assert driver.js("return document.querySelector('section[data-scorer=\"jaccard\"] "
                         ".sends').dataset.zero") == "5"
        bm25 = [m for m in driver.js(  # bm25 scores "crunch" nowhere either; default does
            "return [...document.querySelectorAll('section[data-scorer]')].map(s => "
            "[s.dataset.scorer, s.querySelector('.sends').dataset.zero])")]
        assert dict(bm25)["bm25"] == "5" and dict(bm25)["default"] == "0"
        driver.js("const s = document.getElementById('focus');"
                  "s.value = [...s.options].find(o => o.textContent === 'jaccard').value;"
                  "s.dispatchEvent(new Event('change'))")
        zero_sent = driver.js("return [...document.querySelectorAll('#sent-names li')]"
                              ".filter(li => li.dataset.zero).map(li => li.dataset.tool)")
        assert sorted(zero_sent) == sorted(reg[i].name for i in top["top"][qi][:5])
    finally:
        driver.close()


# --------------------------------------------------------------------------------------------
# 1200 px, a common laptop width (issue 38): the scorer table shows every column (no sideways
# scroll box), and no tool name in a rank table breaks inside one of its pieces

# every column header of the scorer table inside its box, which does not scroll sideways
_SUMMARY_CLIPPED = """
const wrap = document.querySelector('#summary').closest('.table-wrap');
const box = wrap.getBoundingClientRect(), bad = [];
if (wrap.scrollWidth > wrap.clientWidth + 0.5) bad.push(['scrolls', wrap.scrollWidth, wrap.clientWidth]);
for (const th of document.querySelectorAll('#summary thead th')) {
  const r = th.getBoundingClientRect();
  if (r.right > box.right + 0.5 || r.left < box.left - 0.5 || r.right > window.innerWidth)
    bad.push([th.textContent, r.left, r.right, box.right]);
}
return bad;
"""

# each piece of a name (the text between two <wbr>: "get", "User", "interfacetemplates_") on
# one line, in every row of every rank table, unless the piece alone is wider than its cell;
# and every name cell wide enough for a piece of 20 characters (narrow cells were what broke
# names inside their pieces)
_BROKEN_PIECES = """
const bad = [];
for (const b of document.querySelectorAll('table.rank tr[data-rank] button.tool')) {
  const td = b.closest('td'), st = getComputedStyle(td);
  const room = td.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
  const probe = document.createElement('span');
  probe.style.whiteSpace = 'nowrap';
  probe.textContent = 'x'.repeat(20);
  b.appendChild(probe);
  if (probe.getBoundingClientRect().width > room) bad.push([b.dataset.tool, 'narrow', room]);
  for (const n of [...b.childNodes]) {
    if (n.nodeType !== 3 || !n.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const lines = new Set([...range.getClientRects()].filter(r => r.width)
                          .map(r => Math.round(r.top)));
    probe.textContent = n.textContent;
    if (lines.size > 1 && probe.getBoundingClientRect().width <= room)
      bad.push([b.dataset.tool, n.textContent, lines.size, room]);
  }
  probe.remove();
}
return bad;
"""

LONG_PIECES = [
    Tool("netbox_dcim_interfacetemplates_list", "List the interface templates of a device "
         "type in NetBox DCIM"),
    Tool("kubernetes.autoscaling.horizontalpodautoscalers.read", "Read a horizontal pod "
         "autoscaler of a Kubernetes namespace"),
]


@pytest.fixture(scope="module")
def wide_page(tmp_path_factory):
    from toolsel.synthetic import synthetic_queries, synthetic_registry
    base = synthetic_registry(60, seed=0)
    reg = Registry([*base, *LONG_TOOLS, *LONG_PIECES])
    qs = [*synthetic_queries(base, 8, seed=0),
          Query("long1", "show the submission history of this user in the contest",
                ("getUserSubmissionHistoryForContest",)),
          Query("long4", "list the interface templates of this device type in netbox",
                ("netbox_dcim_interfacetemplates_list",)),
          Query("long5", "read the horizontal pod autoscaler of the api namespace",
                ("kubernetes.autoscaling.horizontalpodautoscalers.read",))]
    data = explorer_data(reg, qs, ["jaccard", "bm25", "tfidf", "embedding", "default"],
                         depth=20)
    path = tmp_path_factory.mktemp("wide") / EXPLORER_PAGE
    path.write_text(render_explorer(data), encoding="utf-8")
    return path


@needs_chromium
@pytest.mark.skipif(CHROMEDRIVER is None, reason="Debian's chromium-driver is not installed "
                    "here; CI installs it in .ci/run")
@pytest.mark.slow
def test_at_1200_px_no_scorer_column_is_clipped_and_names_break_only_between_pieces(
        wide_page, tmp_path):
    driver = _Driver(tmp_path)
    try:
        driver.cmd("POST", "/window/rect", {"width": 1200, "height": 1000})
        for q in ("long4", "long5", "long1"):
            driver.cmd("POST", "/url", {"url": wide_page.resolve().as_uri() + f"#q={q}&k=5"})
            assert driver.js("return document.body.dataset.ready") == "1"
            assert 1160 <= driver.js("return window.innerWidth") <= 1200
            assert driver.js(_SUMMARY_CLIPPED) == [], q
            # the long pieces are on the page, in rank tables, each on one line
            shown = driver.js("return [...document.querySelectorAll('table.rank "
                              "button.tool')].map(b => b.dataset.tool)")
            assert {t.name for t in LONG_PIECES} & set(shown) or q == "long1", q
            assert driver.js(_BROKEN_PIECES) == [], q
            assert driver.js(_OVERLAPS) == [], q
            assert driver.js("return document.documentElement.scrollWidth") <= \
                driver.js("return document.documentElement.clientWidth")
        (tmp_path / "explorer-1200.png").write_bytes(
            base64.b64decode(driver.cmd("GET", "/screenshot")))
    finally:
        driver.close()
