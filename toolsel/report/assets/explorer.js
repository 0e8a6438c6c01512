// toolsel explorer: every labeled query ranked by every scorer, computed by the toolsel package
// and embedded in this page as JSON. No network, no library: plain DOM. Every string from the
// data is inserted with textContent or setAttribute, never as markup.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("explorer-data").textContent);
  var T = D.tools, Q = D.queries, NQ = Q.id.length;
  // the package's own scorer, "default", first (and so the scorer in detail) when present
  var S = D.scorers.filter(function (s) { return s.name === "default"; })
    .concat(D.scorers.filter(function (s) { return s.name !== "default"; }));
  var NS = S.length;
  var DASHES = ["", "7 4", "2 3", "10 3 2 3", "4 2", "1 4", "12 4", "6 2 2 2"];
  var SVGNS = "http://www.w3.org/2000/svg";  // a namespace name, never fetched
  var COLORS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#0a7e8c", "#6e7781",
                "#d4a72c"];
  var MAX_LIST = 300;

  // ---- state ------------------------------------------------------------------------------
  var st = {q: 0, k: Math.min(10, D.depth), focus: 0, tool: -1,
            thr: S.map(function () { return null; }),
            search: "", split: "*", missedBy: "", mode: "", reqTool: "", allRows: false};
  var byId = Object.create(null), byTool = Object.create(null), byScorer = Object.create(null);
  Q.id.forEach(function (id, i) { byId[id] = i; });
  T.name.forEach(function (n, i) { byTool[n] = i; });
  S.forEach(function (s, i) { byScorer[s.name] = i; });
  var alwaysSet = Object.create(null);
  D.always.forEach(function (i) { alwaysSet[i] = true; });
  var alwaysTokens = sum(D.always.map(function (i) { return T.tokens[i]; }));
  var alwaysJson = sum(D.always.map(function (i) { return T.json_tokens[i]; }));
  var alwaysChars = sum(D.always.map(function (i) { return T.chars[i]; }));
  var allTokens = sum(T.tokens);
  // what the search box matches in a tool name: the name, and its words (split at "_", ".",
  // "-", "/", ":" and camelCase), so "send dm" finds slack_send_dm
  var toolText = T.name.map(function (n) {
    var words = String(n).replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_.\/:-]+/g, " ");
    return (n + " " + words).toLowerCase();
  });
  var needs = T.name.map(function () { return []; });  // tool -> [query, position in required]
  Q.required.forEach(function (req, qi) {
    req.forEach(function (ti, j) { needs[ti].push([qi, j]); });
  });
  // prefix sums of the top-ranked tools' payload, per scorer and query
  var cum = S.map(function (s) {
    return s.top.map(function (top) {
      var c = [0], t = 0;
      top.forEach(function (ti) { t += T.tokens[ti]; c.push(t); });
      return c;
    });
  });

  function sum(a) { var t = 0; for (var i = 0; i < a.length; i++) t += a[i]; return t; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var a in attrs) if (attrs[a] !== null && attrs[a] !== undefined) e.setAttribute(a, attrs[a]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function svg(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    for (var a in attrs) e.setAttribute(a, attrs[a]);
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); return e; }
  function $(id) { return document.getElementById(id); }
  function pct(x) { return isNaN(x) ? "–" : (100 * x).toFixed(1) + "%"; }
  function fmt(x) { return x === null ? "–" : String(x); }
  function num(x) { return Math.round(x).toLocaleString("en-US"); }
  function tools(n) { return n + (n === 1 ? " tool" : " tools"); }

  // ---- the package's rules, applied to the embedded ranks ---------------------------------
  // how many candidates scorer s sends for query qi at K: the fixed top K, or with a score
  // threshold the Threshold policy (every candidate scoring >= t, at least 1, at most K)
  function cutoff(s, qi, K) {
    var n = Math.min(K, D.n_candidates), t = st.thr[s];
    if (t === null) return n;
    // on the relative scale the package's Threshold uses: the average candidate 0, the best 1
    var sc = S[s].scores[qi], c = 0, mb = S[s].scale[qi], mean = mb[0], span = mb[1] - mb[0];
    for (var i = 0; i < sc.length; i++) {
      if (sc[i] === null || mean === null) continue;
      var rel = span > 0 ? (sc[i] - mean) / span : 0;
      if (rel >= t) c++;
    }
    return Math.min(Math.max(c, 1), n);
  }
  function missMode(s, qi, j, kq) {
    var info = S[s].required[qi][j], terms = Q.terms[qi][j];
    if (terms[0] > 0 && info[2] > 0 && info[2] <= kq) return D.same_domain_mode;
    return terms[1];
  }
  // R@K, Complete@K (queries whose required tools are all always-include left out) and the
  // mean payload per query for scorer s at K
  function metrics(s, K) {
    var r = 0, c = 0, n = 0, tok = 0, sent = 0;
    for (var qi = 0; qi < NQ; qi++) {
      var kq = cutoff(s, qi, K), info = S[s].required[qi], m = 0, hit = 0;
      for (var j = 0; j < info.length; j++) {
        if (info[j][0] === 0) continue;
        m++;
        if (info[j][0] <= kq) hit++;
      }
      if (m) { n++; r += hit / m; if (hit === m) c++; }
      tok += cum[s][qi][kq];
      sent += kq;
    }
    return {recall: n ? r / n : NaN, complete: n ? c / n : NaN, n: n,
            tokens: alwaysTokens + tok / NQ, sent: D.always.length + sent / NQ};
  }

  // ---- URL hash: the page's state, so a view can be linked (and tests can set it) ---------
  function readHash() {
    var h = location.hash.replace(/^#/, "");
    if (!h) return;
    h.split("&").forEach(function (part) {
      var eq = part.indexOf("="), key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      var v = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, " "));
      if (key === "q" && v in byId) st.q = byId[v];
      else if (key === "k" && /^\d+$/.test(v)) st.k = Math.max(1, Math.min(D.depth, +v));
      else if (key === "scorer" && v in byScorer) st.focus = byScorer[v];
      else if (key === "tool") st.tool = v in byTool ? byTool[v] : -1;
      else if (key.indexOf("thr.") === 0 && key.slice(4) in byScorer) {
        st.thr[byScorer[key.slice(4)]] = v === "" || isNaN(+v) ? null : +v;
      }
      else if (key === "search") st.search = v;
      else if (key === "rows") st.allRows = v === "all";
      else if (key === "missed") st.missedBy = v in byScorer ? v : "";
    });
  }
  function writeHash() {
    var parts = ["q=" + encodeURIComponent(Q.id[st.q]), "k=" + st.k,
                 "scorer=" + encodeURIComponent(S[st.focus].name)];
    if (st.tool >= 0) parts.push("tool=" + encodeURIComponent(T.name[st.tool]));
    if (st.allRows) parts.push("rows=all");
    st.thr.forEach(function (t, s) {
      if (t !== null) parts.push("thr." + encodeURIComponent(S[s].name) + "=" + t);
    });
    var h = "#" + parts.join("&");
    if (location.hash !== h && history.replaceState) history.replaceState(null, "", h);
  }

  // ---- controls ---------------------------------------------------------------------------
  function buildControls() {
    var k = $("k"), kn = $("k-num");
    k.max = kn.max = D.depth;
    k.oninput = function () { setK(+k.value); };
    kn.onchange = function () { setK(+kn.value); };
    var focus = $("focus");
    S.forEach(function (s, i) { focus.appendChild(el("option", {value: i}, s.name)); });
    focus.onchange = function () { st.focus = +focus.value; render(); };
    var missed = $("f-missed"), mode = $("f-mode"), split = $("f-split");
    missed.appendChild(el("option", {value: ""}, "any or no scorer"));
    missed.appendChild(el("option", {value: "*"}, "some scorer"));
    S.forEach(function (s) { missed.appendChild(el("option", {value: s.name}, s.name)); });
    mode.appendChild(el("option", {value: ""}, "any failure mode"));
    D.modes.forEach(function (m, i) { mode.appendChild(el("option", {value: String(i)}, m)); });
    split.appendChild(el("option", {value: "*"}, "every split"));
    Object.keys(Q.split.reduce(function (o, s) { o[s] = 1; return o; }, Object.create(null))).sort()
      .forEach(function (s) { split.appendChild(el("option", {value: s}, s || "(no split)")); });
    var tl = $("tool-names");
    T.name.forEach(function (n) { tl.appendChild(el("option", {value: n})); });
    $("f-search").oninput = function () { st.search = this.value; renderList(); };
    split.onchange = function () { st.split = this.value; renderList(); };
    missed.onchange = function () { st.missedBy = this.value; renderList(); };
    mode.onchange = function () { st.mode = this.value; renderList(); };
    $("f-tool").oninput = function () { st.reqTool = this.value; renderList(); };
  }
  function setK(v) {
    if (!(v >= 1)) return;
    st.k = Math.max(1, Math.min(D.depth, Math.round(v)));
    render();
  }

  // ---- summary over the whole query set -----------------------------------------------------
  function renderSummary() {
    $("k").value = st.k;
    $("k-num").value = st.k;
    $("k-label").textContent = String(st.k);
    $("focus").value = String(st.focus);
    $("all-rows").checked = st.allRows;
    var body = clear($("summary-body"));
    S.forEach(function (s, i) {
      var m = metrics(i, st.k);
      var tr = el("tr", {"data-scorer": s.name, "class": i === st.focus ? "focus" : null});
      var name = el("td");
      var sw = el("span", {"class": "swatch", style: "background:" + COLORS[i % COLORS.length]});
      name.appendChild(sw);
      name.appendChild(document.createTextNode(s.name));
      tr.appendChild(name);
      tr.appendChild(el("td", {"class": "fields"}, s.fields));
      var thr = el("td");
      var inp = el("input", {type: "number", step: "any", placeholder: "none",
                             "aria-label": "score threshold for " + s.name, "data-scorer": s.name});
      if (st.thr[i] !== null) inp.value = st.thr[i];
      inp.onchange = function () {
        st.thr[i] = this.value === "" || isNaN(+this.value) ? null : +this.value; render();
      };
      thr.appendChild(inp);
      tr.appendChild(thr);
      [["recall", m.recall, pct(m.recall)], ["complete", m.complete, pct(m.complete)],
       ["sent", m.sent, m.sent.toFixed(1)], ["tokens", m.tokens, num(m.tokens)],
       ["reduction", 1 - m.tokens / allTokens, pct(1 - m.tokens / allTokens)]]
        .forEach(function (c) {
          tr.appendChild(el("td", {"class": "num", "data-metric": c[0],
                                   "data-value": isNaN(c[1]) ? "nan" : c[1].toFixed(6)}, c[2]));
        });
      body.appendChild(tr);
    });
    $("n-valid").textContent = String(metrics(0, st.k).n);
    renderCurve();
  }

  function renderCurve() {
    var box = clear($("curve"));
    var W = 560, H = 300, L = 56, R = 12, TOP = 12, B = 40;
    var curves = S.map(function (s, i) {
      var pts = [];
      for (var K = 1; K <= D.depth; K++) { var m = metrics(i, K); pts.push([m.tokens, m.recall, K]); }
      return pts;
    });
    var xmax = 1, xmin = Infinity;
    curves.forEach(function (c) { c.forEach(function (p) { xmax = Math.max(xmax, p[0]); xmin = Math.min(xmin, p[0]); }); });
    xmin = Math.min(xmin, alwaysTokens);
    var x = function (v) { return L + (W - L - R) * (v - 0) / (xmax * 1.05); };
    var y = function (v) { return TOP + (H - TOP - B) * (1 - (isNaN(v) ? 0 : v)); };
    var g = svg("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
                        "aria-label": "R@K against mean payload tokens per query, K = 1 to " + D.depth});
    g.appendChild(svg("rect", {x: L, y: TOP, width: W - L - R, height: H - TOP - B, fill: "#fff",
                               stroke: "#d0d7de"}));
    for (var t = 0; t <= 1.0001; t += 0.25) {
      g.appendChild(svg("line", {x1: L, x2: W - R, y1: y(t), y2: y(t), stroke: "#eaeef2"}));
      var lab = svg("text", {x: L - 6, y: y(t) + 4, "text-anchor": "end", "font-size": 11});
      lab.textContent = (100 * t).toFixed(0) + "%";
      g.appendChild(lab);
    }
    var step = niceStep(xmax * 1.05 / 5);
    for (var v = 0; v <= xmax * 1.05; v += step) {
      var xl = svg("text", {x: x(v), y: H - B + 16, "text-anchor": "middle", "font-size": 11});
      xl.textContent = num(v);
      g.appendChild(xl);
      g.appendChild(svg("line", {x1: x(v), x2: x(v), y1: H - B, y2: H - B + 4, stroke: "#57606a"}));
    }
    var xt = svg("text", {x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "font-size": 12});
    xt.textContent = "payload per query: tokens of name + description sent (always-include included)";
    g.appendChild(xt);
    var yt = svg("text", {x: 14, y: (TOP + H - B) / 2, "text-anchor": "middle", "font-size": 12,
                          transform: "rotate(-90 14 " + (TOP + H - B) / 2 + ")"});
    yt.textContent = "R@K";
    g.appendChild(yt);
    curves.forEach(function (pts, i) {
      var color = COLORS[i % COLORS.length];
      g.appendChild(svg("polyline", {fill: "none", stroke: color, "stroke-width": i === st.focus ? 2.5 : 1.5,
        "stroke-dasharray": DASHES[i % DASHES.length] || "none", "data-scorer": S[i].name,
        points: pts.map(function (p) { return x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1); }).join(" ")}));
      var cur = pts[st.k - 1];
      var dot = svg("circle", {cx: x(cur[0]), cy: y(cur[1]), r: 5, fill: color, stroke: "#fff",
                               "stroke-width": 1.5, "class": "current", "data-scorer": S[i].name});
      var tip = svg("title", {});
      tip.textContent = S[i].name + " at K=" + st.k + ": R@K " + pct(cur[1]) + ", " + num(cur[0]) + " tokens";
      dot.appendChild(tip);
      g.appendChild(dot);
    });
    box.appendChild(g);
    var legend = clear($("curve-legend"));
    curves.forEach(function (pts, i) {
      var cur = pts[st.k - 1];
      var li = el("li", {"data-legend": S[i].name, "class": i === st.focus ? "focus" : null});
      var key = svg("svg", {width: 34, height: 12, "aria-hidden": "true"});
      key.appendChild(svg("line", {x1: 1, x2: 33, y1: 6, y2: 6, stroke: COLORS[i % COLORS.length],
                                   "stroke-width": 2.5, "stroke-dasharray": DASHES[i % DASHES.length] || "none"}));
      li.appendChild(key);
      li.appendChild(el("span", null, S[i].name + ": R@K " + pct(cur[1]) + ", " + num(cur[0]) + " tokens at K=" + st.k));
      legend.appendChild(li);
    });
  }
  function niceStep(raw) {
    var p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    var f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  // ---- query list and filters -----------------------------------------------------------
  function queryMatches(qi) {
    if (st.split !== "*" && Q.split[qi] !== st.split) return false;
    if (st.search) {
      var s = st.search.toLowerCase().trim();
      if (Q.id[qi].toLowerCase().indexOf(s) < 0 && Q.text[qi].toLowerCase().indexOf(s) < 0 &&
          !Q.required[qi].some(function (ti) { return toolText[ti].indexOf(s) >= 0; })) return false;
    }
    if (st.reqTool) {
      var r = st.reqTool.toLowerCase();
      if (!Q.required[qi].some(function (ti) { return T.name[ti].toLowerCase().indexOf(r) >= 0; })) return false;
    }
    if (st.missedBy || st.mode !== "") {
      var scorers = st.missedBy && st.missedBy !== "*" ? [byScorer[st.missedBy]] : S.map(function (_, i) { return i; });
      var any = scorers.some(function (s) {
        var kq = cutoff(s, qi, st.k), info = S[s].required[qi];
        for (var j = 0; j < info.length; j++) {
          if (info[j][0] === 0 || info[j][0] <= kq) continue;
          if (st.mode === "" || missMode(s, qi, j, kq) === +st.mode) return true;
        }
        return false;
      });
      if (!any) return false;
    }
    return true;
  }
  function renderList() {
    var list = clear($("query-list")), n = 0;
    for (var qi = 0; qi < NQ; qi++) {
      if (!queryMatches(qi)) continue;
      n++;
      if (n > MAX_LIST) continue;
      var li = el("li", {"class": qi === st.q ? "current" : null});
      var b = el("button", {type: "button", "data-query": Q.id[qi]});
      b.appendChild(el("span", {"class": "qid"}, Q.id[qi]));
      b.appendChild(document.createTextNode(" " + Q.text[qi]));
      b.onclick = (function (i) { return function () { st.q = i; render(); }; })(qi);
      li.appendChild(b);
      list.appendChild(li);
    }
    $("list-count").textContent = n + " of " + NQ + " queries" + (n > MAX_LIST ? " (first " + MAX_LIST + " listed; narrow the search)" : "");
  }

  // ---- one query: the registry ranked by each scorer ----------------------------------------
  // a name as text with line-break opportunities after "_", ".", "/", ":", "-" and between a
  // lower-case letter or digit and an upper-case one (camelCase); each piece is a text node,
  // joined by <wbr> elements: no markup from the data
  function breakable(parent, text) {
    var parts = String(text).split(/(?<=[_.\/:-])|(?<=[a-z0-9])(?=[A-Z])/);
    parts.forEach(function (p, i) {
      if (i) parent.appendChild(document.createElement("wbr"));
      parent.appendChild(document.createTextNode(p));
    });
    return parent;
  }
  function toolButton(ti) {
    var b = breakable(el("button", {type: "button", "class": "tool", "data-tool": T.name[ti],
                                    title: T.name[ti]}), T.name[ti]);
    b.onclick = function () { openTool(ti, b); };
    return b;
  }
  function renderQuery() {
    var qi = st.q, req = Q.required[qi];
    $("query-id").textContent = Q.id[qi];
    $("query-text").textContent = Q.text[qi];
    $("query-split").textContent = Q.split[qi] || "none";
    var rl = clear($("query-required"));
    req.forEach(function (ti, j) {
      var li = el("li");
      li.appendChild(toolButton(ti));
      if (alwaysSet[ti]) li.appendChild(el("span", {"class": "note"}, " always included (not ranked)"));
      var miss = Q.terms[qi][j][2];
      if (miss) li.appendChild(el("span", {"class": "note"}, " · query words its text lacks: " + miss));
      rl.appendChild(li);
    });
    var cols = clear($("columns"));
    var reqSet = Object.create(null);
    req.forEach(function (ti) { reqSet[ti] = true; });
    S.forEach(function (s, si) {
      var kq = cutoff(si, qi, st.k);
      var col = el("section", {"class": "col" + (si === st.focus ? " focus" : ""), "data-scorer": s.name,
                               "data-sent": String(kq + D.always.length)});
      var h = el("h3");
      var pick = el("button", {type: "button", "class": "pick"}, s.name);
      pick.onclick = function () { st.focus = si; render(); };
      h.appendChild(pick);
      col.appendChild(h);
      col.appendChild(el("div", {"class": "fields"}, "indexes " + s.fields));
      var tok = alwaysTokens + cum[si][qi][kq];
      var nzero = zeroSent(si, qi, kq);
      col.appendChild(el("div", {"class": "sends", "data-zero": String(nzero)}, "sends " + tools(kq + D.always.length) + ", " +
                         num(tok) + " tokens" + (st.thr[si] !== null ? " (threshold " + st.thr[si] + ")" : "") +
                         (nzero ? "; " + nzero + " of them with score 0 (registry order)" : "")));
      if (D.always.length) {
        col.appendChild(el("div", {"class": "always"}, "+ always: " + D.always.map(function (i) { return T.name[i]; }).join(", ")));
      }
      var table = el("table", {"class": "rank"});
      var thead = el("tr");
      ["rank", "tool", "score"].forEach(function (c) { thead.appendChild(el("th", null, c)); });
      table.appendChild(thead);
      var top = s.top[qi], sc = s.scores[qi];
      var shown = st.allRows ? top.length : Math.min(top.length, Math.max(st.k + 5, 15));
      for (var r = 0; r < shown; r++) {
        var ti = top[r];
        var zero = r < kq && isZero(sc[r]);
        var cls = (r < kq ? "sent" : "unsent") + (reqSet[ti] ? " required" : "") +
          (ti === st.tool ? " opened" : "") + (zero ? " zero-score" : "");
        var tr = el("tr", {"class": cls, "data-tool": T.name[ti], "data-rank": String(r + 1)});
        tr.appendChild(el("td", {"class": "num"}, r + 1));
        var td = el("td");
        td.appendChild(toolButton(ti));
        if (reqSet[ti]) td.appendChild(el("span", {"class": "mark", title: "required by this query"}, " ★"));
        if (zero) td.appendChild(el("span", {"class": "zero", title: "sent with score 0: only registry order put it in the top K"}, " score 0"));
        tr.appendChild(td);
        tr.appendChild(el("td", {"class": "num"}, fmt(sc[r])));
        table.appendChild(tr);
        if (r + 1 === kq && r + 1 < shown) {
          var cut = el("tr", {"class": "cut"});
          cut.appendChild(el("td", {colspan: "3"}, "cut: " + kq + " sent above" + (kq < st.k ? " (threshold)" : ", K=" + st.k)));
          table.appendChild(cut);
        }
      }
      col.appendChild(table);
      var deep = [];
      s.required[qi].forEach(function (info, j) {
        if (info[0] > shown) deep.push([req[j], info]);
      });
      if (deep.length) {
        var dl = el("ul", {"class": "deep"});
        deep.forEach(function (d) {
          var li = el("li", {"data-tool": T.name[d[0]], "data-rank": String(d[1][0])});
          li.appendChild(el("span", null, "★ rank " + d[1][0] + " "));
          li.appendChild(toolButton(d[0]));
          li.appendChild(el("span", null, " score " + fmt(d[1][1])));
          dl.appendChild(li);
        });
        col.appendChild(el("div", {"class": "note"}, "required, ranked below the " + shown + " shown:"));
        col.appendChild(dl);
      }
      cols.appendChild(col);
    });
    renderSent();
  }

  function renderSent() {
    var si = st.focus, qi = st.q, kq = cutoff(si, qi, st.k);
    var picked = S[si].top[qi].slice(0, kq).concat(D.always);
    picked.sort(function (a, b) { return a - b; });  // registry order, as Selector.select
    $("sent-scorer").textContent = S[si].name;
    $("sent-k").textContent = st.thr[si] !== null ? "threshold " + st.thr[si] + ", at most K=" + st.k : "K=" + st.k;
    var list = clear($("sent-names"));
    var zeroSet = Object.create(null), top = S[si].top[qi], sc = S[si].scores[qi];
    for (var r = 0; r < kq; r++) if (isZero(sc[r])) zeroSet[top[r]] = true;
    picked.forEach(function (ti) {
      var li = el("li", {"data-tool": T.name[ti], "data-zero": zeroSet[ti] ? "1" : null});
      li.appendChild(toolButton(ti));
      li.appendChild(el("span", {"class": "note"}, " " + T.tokens[ti] + " tokens" + (alwaysSet[ti] ? " · always" : "")));
      if (zeroSet[ti]) li.appendChild(el("span", {"class": "zero", title: "sent with score 0: only registry order put it in the top K"}, " score 0"));
      list.appendChild(li);
    });
    var tok = sum(picked.map(function (ti) { return T.tokens[ti]; }));
    var js = sum(picked.map(function (ti) { return T.json_tokens[ti]; }));
    var ch = sum(picked.map(function (ti) { return T.chars[ti]; }));
    $("sent-count").textContent = tools(picked.length);
    $("sent-tokens").textContent = num(tok);
    $("sent-tokens").setAttribute("data-value", String(tok));
    $("sent-json").textContent = num(js);
    $("sent-chars").textContent = num(ch);
  }

  // a score of 0 (or none): the scorer found nothing of the query in the tool; sent, such a
  // tool fills a place of K only because ties keep registry order (a negative cosine is
  // still a score)
  function isZero(x) { return x === 0 || x === null; }
  function zeroSent(s, qi, kq) {
    var sc = S[s].scores[qi], n = 0;
    for (var r = 0; r < kq && r < sc.length; r++) if (isZero(sc[r])) n++;
    return n;
  }

  // ---- one tool ---------------------------------------------------------------------------
  // the panel opens where the reader is: just below the element clicked (kept inside the
  // page's width), or below the query's required tools when opened from the URL
  function placeTool(rect) {
    var panel = $("tool-panel");
    panel.hidden = false;
    if (!rect) {
      var a = $("query-required").getBoundingClientRect();
      rect = {left: a.left + window.scrollX, bottom: a.bottom + window.scrollY};
    }
    var width = panel.offsetWidth, page = document.documentElement.clientWidth;
    panel.style.left = Math.max(8, Math.min(rect.left, page - width - 8)) + "px";
    panel.style.top = (rect.bottom + 4) + "px";
  }
  function openTool(ti, anchor) {
    var a = anchor.getBoundingClientRect();  // before render() redraws the element clicked
    var rect = {left: a.left + window.scrollX, bottom: a.bottom + window.scrollY};
    st.tool = ti;
    render();
    placeTool(rect);
    var r = $("tool-panel").getBoundingClientRect();
    if (r.bottom > window.innerHeight) {  // show as much as fits, its top still in view
      window.scrollBy(0, Math.max(0, Math.min(r.bottom - window.innerHeight + 8,
                                              r.top - barHeight() - 8)));
    }
  }
  function barHeight() {
    var c = document.querySelector(".controls");
    return c ? c.getBoundingClientRect().height : 0;
  }
  function setBarHeight() {  // anchors and scrollIntoView stop below the sticky K bar
    document.documentElement.style.setProperty("--bar-height", (barHeight() + 8) + "px");
  }

  function renderTool() {
    var panel = $("tool-panel"), ti = st.tool;
    panel.hidden = ti < 0;
    if (ti < 0) return;
    $("tool-name").textContent = T.name[ti];
    $("tool-meta").textContent = "server " + T.domain[ti] + " · " + T.tokens[ti] + " tokens (name + description), " +
      T.json_tokens[ti] + " tokens as JSON" + (alwaysSet[ti] ? " · always included" : "");
    $("tool-def").textContent = JSON.stringify(T.definition[ti], null, 2);
    var ql = clear($("tool-queries"));
    needs[ti].forEach(function (p) {
      var li = el("li");
      var b = el("button", {type: "button", "data-query": Q.id[p[0]]});
      b.appendChild(el("span", {"class": "qid"}, Q.id[p[0]]));
      b.appendChild(document.createTextNode(" " + Q.text[p[0]]));
      b.onclick = function () { st.q = p[0]; render(); };
      li.appendChild(b);
      ql.appendChild(li);
    });
    $("tool-nqueries").textContent = String(needs[ti].length);
    var ml = clear($("tool-misses")), counts = Object.create(null), order = [];
    S.forEach(function (s, si) {
      var ids = [];
      needs[ti].forEach(function (p) {
        var info = s.required[p[0]][p[1]], kq = cutoff(si, p[0], st.k);
        if (info[0] === 0 || info[0] <= kq) return;
        ids.push(Q.id[p[0]] + " (rank " + info[0] + ", " + D.modes[missMode(si, p[0], p[1], kq)] + ")");
        Q.terms[p[0]][p[1]][2].split(" ").forEach(function (w) {
          if (!w) return;
          if (!(w in counts)) { counts[w] = 0; order.push(w); }
          counts[w]++;
        });
      });
      var li = el("li", {"data-scorer": s.name, "data-misses": String(ids.length)},
                  s.name + ": " + (ids.length ? "misses it in " + ids.length + " of " + needs[ti].length + ": " + ids.join("; ") : "sends it every time"));
      ml.appendChild(li);
    });
    var hint = $("tool-hint");
    if (order.length) {
      order.sort(function (a, b) { return counts[b] - counts[a]; });  // stable: first seen wins ties
      hint.textContent = order.map(function (w) { return w + " (" + counts[w] + ")"; }).join(", ");
    } else {
      var all = Object.create(null);
      needs[ti].forEach(function (p) { Q.terms[p[0]][p[1]][2].split(" ").forEach(function (w) { if (w) all[w] = 1; }); });
      var words = Object.keys(all);
      hint.textContent = "no miss at K=" + st.k + (words.length ? "; words of its queries its text lacks: " + words.join(", ") : "");
    }
  }

  function render() {
    renderSummary();
    renderList();
    renderQuery();
    renderTool();
    writeHash();
  }

  buildControls();
  $("close-tool").onclick = function () { st.tool = -1; render(); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && st.tool >= 0) { st.tool = -1; render(); }
  });
  setBarHeight();
  window.addEventListener("resize", setBarHeight);
  $("all-rows").onchange = function () { st.allRows = this.checked; render(); };
  readHash();
  $("f-search").value = st.search;
  $("f-missed").value = st.missedBy;
  window.addEventListener("hashchange", function () {
    var before = st.tool;
    readHash();
    render();
    if (st.tool >= 0 && st.tool !== before) placeTool(null);  // a tool named by the URL
  });
  render();
  if (st.tool >= 0) placeTool(null);  // opened from the URL: below the required tools
  document.body.setAttribute("data-ready", "1");
})();
