// The interpreter's timeline, exported two ways: Chrome / Perfetto trace-event JSON for the
// existing viewers, and a self-contained HTML page for reading a run without any tool at all.
//
// Both exports are pure functions of the trace: no clock, no randomness, no unordered iteration,
// so a deterministic run gives byte-identical files that can be diffed and checked in.
#include "stagecraft/interp/trace.hpp"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace stagecraft::interp {
namespace {

using ojson = nlohmann::ordered_json;

char const* kind_name(trace_event::kind k) {
  switch (k) {
    case trace_event::kind::op: return "op";
    case trace_event::kind::async: return "async";
    case trace_event::kind::phase: return "phase";
    case trace_event::kind::diagnostic: return "diagnostic";
    case trace_event::kind::arrival: return "arrival";
  }
  return "unknown";
}

// A malformed event is an interpreter bug; drawing it on a made-up row would hide that bug.
void validate(trace const& t) {
  if (t.ctas < 0) throw std::invalid_argument("trace: ctas is " + std::to_string(t.ctas));
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    auto const& e = t.events[i];
    if (e.cta < 0 || e.cta >= t.ctas)
      throw std::invalid_argument("trace event " + std::to_string(i) + " (\"" + e.label + "\"): cta " +
                                  std::to_string(e.cta) + " is outside [0, " + std::to_string(t.ctas) + ")");
    if (e.lane < 0 || static_cast<std::size_t>(e.lane) >= t.lanes.size())
      throw std::invalid_argument("trace event " + std::to_string(i) + " (\"" + e.label + "\"): lane " +
                                  std::to_string(e.lane) + " is outside [0, " + std::to_string(t.lanes.size()) +
                                  ")");
  }
}

// Labels come from user-chosen names; a stray invalid UTF-8 byte must not make the export throw.
std::string dump(ojson const& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

bool is_box(trace_event::kind k) { return k == trace_event::kind::op || k == trace_event::kind::async; }

// Zero-length boxes would be invisible (and unclickable) in every viewer; both exports stretch
// them to one step so the JSON and the HTML page agree.
std::uint64_t duration(trace_event const& e) { return e.t1 > e.t0 ? e.t1 - e.t0 : 1; }

// Perfetto treats pid 0 / tid 0 as the kernel's idle task, so both are 1-based.
std::int64_t pid_of(int cta) { return std::int64_t{cta} + 1; }

// Which thread each event goes on. Perfetto drops "X" events that overlap on one thread without
// nesting, and an engine lane has several copies in flight at once; so a lane whose boxes
// overlap is spread over extra threads ("tma load", "tma load (2)", ...), first fit in start
// order. A lane that never overlaps keeps exactly one thread. Perfetto also keys threads by tid
// across the whole trace (a tid reused in two processes loses its name), so every thread of
// every CTA gets its own tid.
struct thread_layout {
  std::size_t lanes = 0;
  std::vector<int> threads;          // per (cta, lane) row: how many threads it uses (>= 1)
  std::vector<std::int64_t> extra;   // per row: tid of its thread 1; the rest follow
  std::vector<int> sub;              // per event: which of its row's threads

  std::int64_t tid(int cta, int lane, int k) const {
    auto const row = static_cast<std::size_t>(cta) * lanes + static_cast<std::size_t>(lane);
    return k == 0 ? static_cast<std::int64_t>(row) + 1 : extra[row] + (k - 1);
  }
};

thread_layout layout_threads(trace const& t) {
  thread_layout out;
  out.lanes = t.lanes.size();
  auto const rows = static_cast<std::size_t>(t.ctas) * out.lanes;
  std::vector<std::vector<std::size_t>> boxes(rows);
  for (std::size_t i = 0; i < t.events.size(); ++i)
    if (is_box(t.events[i].what))
      boxes[static_cast<std::size_t>(t.events[i].cta) * out.lanes + static_cast<std::size_t>(t.events[i].lane)]
          .push_back(i);
  out.sub.assign(t.events.size(), 0);
  out.threads.assign(rows, 1);
  for (std::size_t r = 0; r < rows; ++r) {
    auto& idx = boxes[r];
    // Ops are recorded when they finish, so the trace's order is not start order.
    std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return t.events[a].t0 < t.events[b].t0; });
    std::vector<std::uint64_t> ends;  // per thread: where its last box ends
    for (auto i : idx) {
      auto const& e = t.events[i];
      std::size_t k = 0;
      while (k < ends.size() && ends[k] > e.t0) ++k;
      if (k == ends.size()) ends.push_back(0);
      ends[k] = e.t0 + duration(e);
      out.sub[i] = static_cast<int>(k);
    }
    out.threads[r] = std::max<int>(1, static_cast<int>(ends.size()));
  }
  out.extra.resize(rows);
  auto next = static_cast<std::int64_t>(rows) + 1;  // extra threads come after every lane's own
  for (std::size_t r = 0; r < rows; ++r) {
    out.extra[r] = next;
    next += out.threads[r] - 1;
  }
  return out;
}

ojson meta(char const* name, std::int64_t pid, std::int64_t tid, char const* key, ojson value) {
  ojson m;
  m["name"] = name;
  m["ph"] = "M";
  m["pid"] = pid;
  m["tid"] = tid;
  m["args"] = ojson::object({{key, std::move(value)}});
  return m;
}

ojson chrome_event(thread_layout const& threads, trace const& t, trace_event const& e, int sub) {
  ojson j;
  j["name"] = e.label.empty() ? std::string(kind_name(e.what)) : e.label;
  j["cat"] = kind_name(e.what);
  j["ph"] = is_box(e.what) ? "X" : "i";
  j["ts"] = e.t0;
  if (is_box(e.what))
    j["dur"] = duration(e);
  else
    j["s"] = "t";
  j["pid"] = pid_of(e.cta);
  j["tid"] = threads.tid(e.cta, e.lane, sub);
  // chrome://tracing's reserved colour for errors; Perfetto ignores it.
  if (e.what == trace_event::kind::diagnostic) j["cname"] = "terrible";
  j["args"] = ojson::object({{"op", e.op}, {"label", e.label}});
  if (e.op >= 0 && static_cast<std::size_t>(e.op) < t.sources.size()) j["args"]["source"] = t.sources[static_cast<std::size_t>(e.op)];
  return j;
}

// The embedded data sits inside <script>: "</" could close the element early and "<!--" can
// switch the HTML parser into a mode where a later "</script>" no longer ends it. "<\/" and
// "\u003c" are plain JSON escapes, so JSON.parse gives the original text back.
std::string script_safe(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && json.substr(i, 2) == "</") {
      out += "<\\/";
      ++i;
    } else if (json[i] == '<' && json.substr(i, 4) == "<!--") {
      out += "\\u003c";
    } else {
      out += json[i];
    }
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Compact on purpose: a long run has ~100k events, so each is a positional array and labels are
// interned (waits and phases repeat the same few strings thousands of times).
std::string html_data(trace const& t) {
  ojson labels = ojson::array();
  ojson events = ojson::array();
  std::unordered_map<std::string, std::size_t> label_index;  // lookup only; order comes from the trace
  for (auto const& e : t.events) {
    auto [it, fresh] = label_index.try_emplace(e.label, label_index.size());
    if (fresh) labels.push_back(e.label);
    events.push_back(ojson::array({static_cast<int>(e.what), e.t0, e.t1, e.cta, e.lane, e.op, it->second}));
  }
  ojson d;
  d["kernel"] = t.kernel;
  d["ctas"] = t.ctas;
  d["lanes"] = t.lanes;
  d["kinds"] = ojson::array({"op", "async", "phase", "diagnostic", "arrival"});
  d["fields"] = ojson::array({"kind", "t0", "t1", "cta", "lane", "op", "label"});
  d["labels"] = std::move(labels);
  d["events"] = std::move(events);
  d["sources"] = t.sources;
  d["unit"] = t.time_unit;
  return script_safe(dump(d));
}

// ---------------------------------------------------------------------------------------------
// The page. Everything is inline: the file is opened from disk, often on a machine without
// network access, and must not depend on anything but a browser.

constexpr std::string_view page_head = R"page(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>)page";

constexpr std::string_view page_style = R"page(</title>
<style>
:root { --fg: #1f2328; --muted: #667085; --border: #d9dee7; --panel: #f6f8fa; --red: #d62728; }
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; color: var(--fg); background: #fff;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 18px; padding: 10px 16px 8px;
  border-bottom: 1px solid var(--border); }
header h1 { margin: 0; font-size: 16px; font-weight: 600; }
#summary { color: var(--muted); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin-left: auto; color: var(--muted); }
.sw { display: inline-block; width: 12px; height: 12px; margin-right: 5px; border-radius: 2px; vertical-align: -2px; }
.sw.tick { width: 3px; border-radius: 0; }
#diags { max-height: 28vh; overflow: auto; padding: 8px 16px; background: #fff5f5; border-bottom: 1px solid #f0c2c2; }
#diags h2 { margin: 0 0 4px; font-size: 13px; color: var(--red); }
#diags ol { margin: 0; padding-left: 22px; }
#diags li { margin: 2px 0; }
#diags li::marker { color: var(--red); }
#diags button { all: unset; cursor: pointer; border-radius: 3px; padding: 0 3px; }
#diags button:hover, #diags button:focus-visible { background: #fde2e2; }
#diags button.active { background: #f9caca; }
#diags .where { color: var(--muted); }
#diags .what { color: #a11d1e; font-weight: 600; }
#toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; padding: 6px 16px;
  background: var(--panel); border-bottom: 1px solid var(--border); }
#toolbar button { font: inherit; min-width: 30px; padding: 2px 9px; cursor: pointer; color: var(--fg);
  background: #fff; border: 1px solid var(--border); border-radius: 4px; }
#toolbar button:hover { background: #eef2f7; }
#zoom-readout { min-width: 11em; color: var(--muted); }
.hint { margin-left: auto; color: var(--muted); }
#replay { display: inline-flex; align-items: center; gap: 4px; margin-left: 12px; }
#replay-slider { width: 220px; }
#replay-now { color: var(--fg); max-width: 44em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#view { position: relative; flex: 1 1 auto; min-height: 220px; overflow: hidden; }
#cv { position: absolute; left: 0; top: 0; }
#scroller { position: absolute; inset: 0; overflow: auto; }
#spacer { width: 1px; height: 1px; }
#tip { position: absolute; z-index: 2; display: none; max-width: 520px; padding: 6px 9px; pointer-events: none;
  background: #fff; border: 1px solid var(--border); border-radius: 6px; box-shadow: 0 4px 16px rgba(16, 24, 40, .14); }
#tip .ti + .ti { margin-top: 5px; padding-top: 5px; border-top: 1px solid #eef0f4; }
#tip .tl { font-weight: 600; word-break: break-all; }
#tip .tl.k3 { color: var(--red); }
#tip .tm, #tip .more { color: var(--muted); font-size: 12px; }
#status { min-height: 27px; padding: 5px 16px; color: var(--muted); background: var(--panel);
  border-top: 1px solid var(--border); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
#status b { color: var(--fg); }
</style>
</head>
<body>
<header>
  <h1>stagecraft trace: <code id="kernel"></code></h1>
  <span id="summary"></span>
  <span class="legend">
    <span><span class="sw" style="background:#4c78a8"></span>op</span>
    <span><span class="sw" style="background:#a9bfdc"></span>waiting op</span>
    <span><span class="sw" style="background:#e8a33d"></span>async (engine)</span>
    <span><span class="sw tick" style="background:#7a5aa6"></span>barrier phase</span>
    <span><span class="sw tick" style="background:#b9a7d6"></span>arrival / bytes</span>
    <span><span class="sw" style="background:#d62728"></span>diagnostic</span>
  </span>
</header>
<section id="diags" hidden>
  <h2 id="diags-title"></h2>
  <ol id="diag-list"></ol>
</section>
<div id="toolbar">
  <button id="zoom-out" title="Zoom out (-)">&minus;</button>
  <button id="zoom-in" title="Zoom in (+)">+</button>
  <button id="zoom-fit" title="Whole run (0)">Fit</button>
  <span id="zoom-readout"></span>
  <button id="expand-all" title="Show every CTA's lanes">Expand all</button>
  <button id="collapse-all" title="Show one row per CTA">Collapse all</button>
  <span id="replay" title="Replay the schedule event by event">
    <button id="step-back" title="One step back (,)">&#9664;</button>
    <input id="replay-slider" type="range" min="0" value="0" aria-label="scheduler step">
    <button id="step-fwd" title="One step forward (.)">&#9654;</button>
    <button id="replay-all" title="The whole run">All</button>
    <span id="replay-now"></span>
  </span>
  <span class="hint">Ctrl+wheel: zoom &middot; wheel / Shift+wheel / drag: scroll &middot; click a box: details &middot; click a CTA name: fold</span>
</div>
<div id="view">
  <canvas id="cv"></canvas>
  <div id="scroller"><div id="spacer"></div></div>
  <div id="tip"></div>
</div>
<div id="status"></div>
<script type="application/json" id="trace-data">)page";

// Note for editors: this script must never contain a closing-tag sequence or a URL; the unit
// test checks the page for both.
constexpr std::string_view page_script = R"page(</script>
<script>
(function () {
'use strict';
var data = JSON.parse(document.getElementById('trace-data').textContent);
var UNIT = data.unit || 'step', UNITS = UNIT === 'ns' ? 'ns' : UNIT + 's';
var OP = 0, ASYNC = 1, PHASE = 2, DIAG = 3, ARRIVAL = 4;
var KIND = data.kinds;
var lanes = data.lanes, labels = data.labels, nL = lanes.length, nC = data.ctas;
var SOURCES = data.sources || [];
var N = data.events.length;

// Columnar copies: the draw loop touches these for every visible event on every frame.
var kind = new Uint8Array(N), ta = new Float64Array(N), tb = new Float64Array(N), t1raw = new Float64Array(N);
var cta = new Int32Array(N), lane = new Int32Array(N), opn = new Int32Array(N), lab = new Int32Array(N);
var trackOf = new Int16Array(N);
var tEnd = 0;
var rowInfo = [];
for (var r = 0; r < nC * nL; ++r) rowInfo.push({ boxes: [], inst: [], tracks: [], reach: [] });
var diags = [], diagsByCta = [];
for (var c = 0; c < nC; ++c) diagsByCta.push([]);
data.events.forEach(function (e, i) {
  kind[i] = e[0]; ta[i] = e[1]; t1raw[i] = e[2]; cta[i] = e[3]; lane[i] = e[4]; opn[i] = e[5]; lab[i] = e[6];
  var box = e[0] === OP || e[0] === ASYNC;
  // Same rule as the JSON export: a box lasts at least one step so it can be seen and clicked.
  tb[i] = box ? Math.max(e[2], e[1] + 1) : e[1];
  tEnd = Math.max(tEnd, box ? tb[i] : e[1] + 1);
  var ri = rowInfo[e[3] * nL + e[4]];
  (box ? ri.boxes : ri.inst).push(i);
  if (e[0] === DIAG) { diags.push(i); diagsByCta[e[3]].push(i); }
});

// Async copies overlap on an engine lane (a ring keeps several loads in flight), so each row is
// packed into tracks of non-overlapping boxes; warpgroup lanes normally need just one.
var MAX_TRACKS = 12;
function byStart(a, b) { return ta[a] - ta[b] || a - b; }
rowInfo.forEach(function (ri) {
  ri.boxes.sort(byStart);
  ri.inst.sort(byStart);
  var ends = [];
  ri.boxes.forEach(function (i) {
    var k = -1;
    for (var j = 0; j < ends.length; ++j) if (ends[j] <= ta[i]) { k = j; break; }
    if (k < 0) {
      if (ends.length < MAX_TRACKS) { k = ends.length; ends.push(0); ri.tracks.push([]); }
      else { k = 0; for (var j2 = 1; j2 < ends.length; ++j2) if (ends[j2] < ends[k]) k = j2; }
    }
    ends[k] = Math.max(ends[k], tb[i]);
    ri.tracks[k].push(i);
    trackOf[i] = k;
  });
  // Running maximum of end times: a binary search on it finds the first box that reaches into
  // the view, even in an overflow track where boxes overlap.
  ri.reach = ri.tracks.map(function (tr) {
    var m = new Float64Array(tr.length), hi = -Infinity;
    tr.forEach(function (i, j) { hi = Math.max(hi, tb[i]); m[j] = hi; });
    return m;
  });
});

// The box a diagnostic is about: the op on its lane that was running when the check fired,
// preferring the same op number.
var failing = new Map();  // box -> diagnostic
var diagBox = new Map();  // diagnostic -> box
diags.forEach(function (d) {
  var best = -1, bestScore = -1;
  rowInfo[cta[d] * nL + lane[d]].boxes.forEach(function (i) {
    if (kind[i] !== OP || ta[i] > ta[d] || ta[d] > tb[i]) return;
    var score = (opn[d] >= 0 && opn[i] === opn[d] ? 2 : 1);
    if (score >= bestScore) { best = i; bestScore = score; }
  });
  if (best >= 0) { diagBox.set(d, best); failing.set(best, d); }
});

var phaseTextW = new Float64Array(labels.length);  // measured lazily, in the SMALL font
var waitLabel = labels.map(function (s) { return /wait/.test(s.split(' ')[0]); });

// ---- layout --------------------------------------------------------------------------------
var AXIS_H = 30, HDR_H = 24, TRACK_H = 20, PAD = 3, RIGHT_PAD = 24, CAP = 4000000;
var FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
var BOLD = '600 ' + FONT;
var SMALL = '11px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
var MONO = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';
var COL = { op: '#4c78a8', wait: '#a9bfdc', async: '#e8a33d', phase: '#7a5aa6', arrival: '#b9a7d6', diag: '#d62728',
  text: '#1f2328', muted: '#667085', grid: '#eceff4', stripe: '#f8f9fb', hdr: '#eef1f6', line: '#d9dee7' };

var view = document.getElementById('view'), cv = document.getElementById('cv');
var sc = document.getElementById('scroller'), spacer = document.getElementById('spacer');
var tip = document.getElementById('tip'), statusBar = document.getElementById('status');
var ctx = cv.getContext('2d');

ctx.font = MONO;
var charW = ctx.measureText('M').width || 7;
var LABEL_W = 110;
ctx.font = BOLD;
LABEL_W = Math.max(LABEL_W, ctx.measureText('\u25BE CTA ' + Math.max(0, nC - 1) + '  \u25CF').width + 24);
ctx.font = FONT;
lanes.forEach(function (s) { LABEL_W = Math.max(LABEL_W, ctx.measureText(s).width + 40); });
LABEL_W = Math.min(Math.ceil(LABEL_W), 260);

var collapsed = new Uint8Array(nC);
var rows = [], contentH = 0, rowY = new Float64Array(nC * nL);
function layout() {
  rows = [];
  var y = 0;
  for (var c = 0; c < nC; ++c) {
    rows.push({ hdr: true, c: c, l: -1, y: y, h: HDR_H });
    y += HDR_H;
    for (var l = 0; l < nL; ++l) {
      var ri = rowInfo[c * nL + l];
      if (collapsed[c]) { rowY[c * nL + l] = -1; continue; }
      var h = Math.max(1, ri.tracks.length) * TRACK_H + 2 * PAD;
      rowY[c * nL + l] = y;
      rows.push({ hdr: false, c: c, l: l, y: y, h: h, ri: ri });
      y += h;
    }
  }
  contentH = y;
}
function rowAt(y) {  // index of the row containing content coordinate y, or -1
  var lo = 0, hi = rows.length - 1;
  if (hi < 0 || y < 0 || y >= contentH) return -1;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (rows[mid].y <= y) lo = mid; else hi = mid - 1; }
  return lo;
}
function firstReaching(arr, t) {  // first j with arr[j] >= t (arr non-decreasing)
  var lo = 0, hi = arr.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid] < t) lo = mid + 1; else hi = mid; }
  return lo;
}
function firstInstant(list, t) {  // first j with ta[list[j]] >= t
  var lo = 0, hi = list.length;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (ta[list[mid]] < t) lo = mid + 1; else hi = mid; }
  return lo;
}

// ---- view state ----------------------------------------------------------------------------
// The horizontal scroll range is virtual: browsers cap element widths, and a long run zoomed
// in is far wider than that, so the native scrollbar maps proportionally onto px.
var W = 0, H = 0, dpr = 1, plotW = 1, scale = 1, px = 0, lastSL = 0;
var minScale = 1, maxScale = 200, selected = -1, flashUntil = 0, mouse = null, drag = null;
function clampScale(s) { return Math.min(maxScale, Math.max(minScale, s)); }
function extent() {
  var contentW = Math.max(plotW, tEnd * scale + RIGHT_PAD), virt = Math.min(contentW, CAP);
  return { maxPx: contentW - plotW, maxScroll: virt - plotW, virt: virt };
}
function resize() {
  W = sc.clientWidth; H = sc.clientHeight; dpr = window.devicePixelRatio || 1;
  cv.style.width = W + 'px'; cv.style.height = H + 'px';
  cv.width = Math.max(1, Math.round(W * dpr)); cv.height = Math.max(1, Math.round(H * dpr));
  plotW = Math.max(20, W - LABEL_W);
  minScale = Math.max(plotW - RIGHT_PAD, 10) / Math.max(tEnd, 1);
  maxScale = Math.max(200, minScale);
  scale = clampScale(scale);
}
function sync() {
  // Growing or shrinking the spacer can add or remove a scrollbar, which changes the visible
  // size; settle that here rather than in a ResizeObserver, which would loop on it.
  for (var pass = 0; pass < 3; ++pass) {
    var e = extent();
    spacer.style.width = (LABEL_W + e.virt) + 'px';
    spacer.style.height = (AXIS_H + contentH + 16) + 'px';
    if (sc.clientWidth === W && sc.clientHeight === H) break;
    var atFit = scale <= minScale * 1.0001;
    resize();
    if (atFit) scale = minScale;
  }
  e = extent();
  px = Math.min(Math.max(px, 0), Math.max(0, e.maxPx));
  sc.scrollLeft = e.maxPx > 0 ? px * e.maxScroll / e.maxPx : 0;
  lastSL = sc.scrollLeft;
  readout();
  schedule();
}
function zoomAt(s, ax) {  // keep the step under plot x = ax where it is
  var t = (px + ax) / scale;
  scale = clampScale(s);
  px = t * scale - ax;
  sync();
}
function fit() { scale = minScale; px = 0; sync(); }
function readout() {
  document.getElementById('zoom-readout').textContent = scale >= 1
    ? (scale < 10 ? scale.toFixed(1) : Math.round(scale)) + ' px per ' + UNIT
    : '1 px = ' + (1 / scale < 10 ? (1 / scale).toFixed(1) : Math.round(1 / scale)) + ' ' + UNITS;
}

var pending = false;
function schedule() { if (!pending) { pending = true; requestAnimationFrame(draw); } }
function X(t) { return LABEL_W + t * scale - px; }
function tickStep() {
  var raw = 90 / scale, p = Math.pow(10, Math.floor(Math.log10(raw)));
  var m = [1, 2, 5, 10].find(function (f) { return f * p >= raw; });
  return Math.max(1, m * p);
}
function fitText(s, avail) {  // monospace, so the cut point is exact without measuring
  var n = Math.floor(avail / charW);
  if (n < 2) return '';
  return s.length <= n ? s : s.slice(0, n - 1) + '\u2026';
}

// ---- drawing -------------------------------------------------------------------------------
function boxGeom(i) {
  var y = rowY[cta[i] * nL + lane[i]];
  if (y < 0) return null;
  var top = AXIS_H + y - sc.scrollTop + PAD + trackOf[i] * TRACK_H + 1;
  var x0 = X(ta[i]), x1 = Math.max(X(tb[i]), x0 + 1);
  return { x0: x0, x1: x1, y: top, h: TRACK_H - 2 };
}
function drawBoxes(ri, y, tL, tR) {
  var bh = TRACK_H - 2, by, runFill = null, runX0 = 0, runX1 = -Infinity;
  // Zoomed out, most boxes are a few pixels wide: they merge into runs of one colour, and a
  // sub-pixel box inside a pixel already painted is skipped, so a frame costs about one fill per
  // pixel column rather than one per event.
  function flush() {
    if (runFill) { ctx.fillStyle = runFill; ctx.fillRect(runX0, by, runX1 - runX0, bh); }
    runFill = null; runX1 = -Infinity;
  }
  for (var k = 0; k < ri.tracks.length; ++k) {
    var tr = ri.tracks[k];
    by = y + PAD + k * TRACK_H + 1;
    for (var j = firstReaching(ri.reach[k], tL); j < tr.length; ++j) {
      var i = tr[j];
      if (ta[i] > tR) break;
      var x0 = X(ta[i]), x1 = X(tb[i]), bad = failing.has(i);
      if (x1 - x0 < 1) {
        if (x1 <= runX1) continue;
        x0 = Math.floor(x0); x1 = x0 + 1;
      }
      if (bad && x1 - x0 < 3) { x0 -= 1; x1 = x0 + 3; }  // the failing op stays visible at any zoom
      var w = x1 - x0;
      var fill = bad ? COL.diag : kind[i] === ASYNC ? COL.async : waitLabel[lab[i]] ? COL.wait : COL.op;
      if (w <= 4 && !bad) {
        if (fill === runFill && x0 <= runX1 + 1) { runX1 = Math.max(runX1, x1); continue; }
        flush();
        runFill = fill; runX0 = x0; runX1 = x1;
        continue;
      }
      flush();
      ctx.fillStyle = fill;
      ctx.fillRect(x0, by, w - 1, bh);  // a hairline gap keeps back-to-back boxes apart
      runX1 = x1;
      if (w > 2 * charW + 8) {
        var tx = Math.max(x0, LABEL_W) + 4, s = fitText(labels[lab[i]], Math.min(x1, W) - tx - 4);
        if (s) {
          ctx.fillStyle = bad || (kind[i] === OP && !waitLabel[lab[i]]) ? '#fff' : kind[i] === ASYNC ? '#3d2606' : '#1c2b44';
          ctx.fillText(s, tx, by + bh / 2 + 0.5);
        }
      }
    }
    flush();
  }
}
function drawInstants(ri, y, h, tL, tR) {
  var list = ri.inst, labelEnd = -Infinity, lastPx = -Infinity, from = firstInstant(list, tL - 160 / scale), j, i, x;
  // A long run has thousands of phase ticks: pixel-aligned rects are the cheap way to draw them,
  // and the diamond heads only come once ticks are far enough apart to tell apart.
  var heads = new Path2D(), bad = [];
  ctx.fillStyle = COL.phase;
  for (j = firstInstant(list, tL - 1); j < list.length && ta[i = list[j]] <= tR + 1; ++j) {
    if (kind[i] === DIAG) { bad.push(i); continue; }
    x = Math.round(X(ta[i]));
    if (kind[i] === ARRIVAL) {  // thin and pale: the phase ticks stay what the eye finds first
      ctx.fillStyle = COL.arrival; ctx.fillRect(x, y + 6, 1, h - 9); ctx.fillStyle = COL.phase;
      continue;
    }
    if (x < lastPx + 2) continue;
    ctx.fillRect(x - 1, y + 3, 2, h - 5);
    if (x >= lastPx + 9) { heads.moveTo(x, y + 1); heads.lineTo(x + 4, y + 5); heads.lineTo(x, y + 9); heads.lineTo(x - 4, y + 5); heads.closePath(); }
    lastPx = x;
  }
  ctx.fill(heads);
  ctx.strokeStyle = COL.diag; ctx.fillStyle = COL.diag; ctx.lineWidth = 2;
  bad.forEach(function (d) {
    var xd = Math.round(X(ta[d])) + 0.5;
    ctx.beginPath(); ctx.moveTo(xd, y + 2); ctx.lineTo(xd, y + h - 2); ctx.stroke();
    ctx.beginPath(); ctx.moveTo(xd - 5, y + 1); ctx.lineTo(xd + 5, y + 1); ctx.lineTo(xd, y + 8); ctx.fill();
  });
  // Start a little left of the view so a tick just off-screen still shows its label. A
  // diagnostic's label goes on its CTA's header row instead, where it cannot cover the boxes.
  ctx.font = SMALL;
  for (j = from; j < list.length && ta[i = list[j]] <= tR + 1; ++j) {
    var s = labels[lab[i]];
    x = Math.round(X(ta[i])) + 0.5;
    if (kind[i] === DIAG || kind[i] === ARRIVAL || !s || x + 6 <= labelEnd + 8) continue;
    // Only where the text fits before the next tick; a dense band of ticks gets no labels.
    var gap = j + 1 < list.length && ta[list[j + 1]] !== ta[i] ? X(ta[list[j + 1]]) - x : Infinity;
    if (gap < 30) continue;
    var tw = phaseTextW[lab[i]] || (phaseTextW[lab[i]] = ctx.measureText(s).width);
    if (gap < tw + 12) continue;
    ctx.lineWidth = 3; ctx.strokeStyle = 'rgba(255,255,255,0.9)';
    ctx.strokeText(s, x + 6, y + h / 2 + 2);
    ctx.fillStyle = '#4b3570';
    ctx.fillText(s, x + 6, y + h / 2 + 2);
    labelEnd = x + 6 + tw;
  }
  ctx.font = MONO;
}
function draw() {
  pending = false;
  var now = performance.now();
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.textBaseline = 'middle';
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, W, H);
  var st = sc.scrollTop, tL = px / scale, tR = (px + plotW) / scale, step = tickStep();
  var first = Math.max(0, rowAt(st)), t;
  var visible = [];
  for (var k = first; k < rows.length && rows[k].y < st + H - AXIS_H; ++k) visible.push(rows[k]);

  ctx.save();
  ctx.beginPath(); ctx.rect(LABEL_W, AXIS_H, W - LABEL_W, H - AXIS_H); ctx.clip();
  visible.forEach(function (row) {
    var y = AXIS_H + row.y - st;
    if (row.hdr) { ctx.fillStyle = COL.hdr; ctx.fillRect(LABEL_W, y, W, row.h); }
    else if (row.l % 2) { ctx.fillStyle = COL.stripe; ctx.fillRect(LABEL_W, y, W, row.h); }
  });
  ctx.fillStyle = COL.grid;
  for (t = Math.ceil(tL / step) * step; t <= tR; t += step) ctx.fillRect(Math.round(X(t)), AXIS_H, 1, H);
  if (tEnd * scale - px < plotW) {  // shade past the end of the run
    ctx.fillStyle = '#f3f4f6';
    ctx.fillRect(X(tEnd), AXIS_H, W, H);
  }
  ctx.font = MONO;
  visible.forEach(function (row) {
    var y = AXIS_H + row.y - st;
    if (row.hdr) {
      // The header row is free space: it names the checks that fired, even when folded.
      var labelEnd = -Infinity;
      ctx.font = '600 ' + SMALL;
      diagsByCta[row.c].forEach(function (d) {
        var x = Math.round(X(ta[d])) + 0.5;
        if (x < LABEL_W - 400 || x > W + 6) return;
        ctx.fillStyle = COL.diag;
        ctx.beginPath(); ctx.moveTo(x - 5, y + 5); ctx.lineTo(x + 5, y + 5); ctx.lineTo(x, y + row.h - 5); ctx.fill();
        if (x + 9 > labelEnd + 8) {
          ctx.fillText(labels[lab[d]], x + 9, y + row.h / 2 + 0.5);
          labelEnd = x + 9 + ctx.measureText(labels[lab[d]]).width;
        }
      });
      ctx.font = MONO;
      return;
    }
    drawBoxes(row.ri, y, tL, tR);
    drawInstants(row.ri, y, row.h, tL, tR);
    ctx.font = MONO;
  });
  // A dashed line through the whole CTA shows what every other lane was doing when a check fired.
  ctx.setLineDash([4, 3]); ctx.lineWidth = 1; ctx.strokeStyle = 'rgba(214,39,40,0.55)';
  diags.forEach(function (d) {
    var c = cta[d];
    if (collapsed[c] || ta[d] < tL - 1 || ta[d] > tR + 1) return;
    var y0 = rowY[c * nL], yl = rowY[c * nL + nL - 1];
    var last = rows[rowAt(yl)];
    var x = Math.round(X(ta[d])) + 0.5;
    ctx.beginPath(); ctx.moveTo(x, AXIS_H + y0 - st); ctx.lineTo(x, AXIS_H + last.y + last.h - st); ctx.stroke();
  });
  ctx.setLineDash([]);
  if (selected >= 0 && kind[selected] <= ASYNC) {
    var g = boxGeom(selected);
    if (g) {
      if (now < flashUntil) {
        var a = 0.35 + 0.35 * Math.sin((flashUntil - now) / 90);
        ctx.strokeStyle = 'rgba(255,196,0,' + a.toFixed(3) + ')'; ctx.lineWidth = 8;
        ctx.strokeRect(g.x0 - 3, g.y - 3, g.x1 - g.x0 + 6, g.h + 6);
      }
      ctx.strokeStyle = '#111827'; ctx.lineWidth = 2;
      ctx.strokeRect(g.x0 - 1, g.y - 1, g.x1 - g.x0 + 2, g.h + 2);
    }
  } else if (selected >= 0) {
    var yy = rowY[cta[selected] * nL + lane[selected]];
    if (yy >= 0) {
      var row = rows[rowAt(yy)], sx = Math.round(X(ta[selected])) + 0.5;
      ctx.strokeStyle = now < flashUntil ? '#ffc400' : '#111827'; ctx.lineWidth = 2;
      ctx.strokeRect(sx - 6, AXIS_H + row.y - st + 1, 12, row.h - 2);
    }
  }
  if (mouse && !drag && mouse.x >= LABEL_W && mouse.y >= AXIS_H) {
    ctx.fillStyle = 'rgba(31,35,40,0.35)';
    ctx.fillRect(Math.round(mouse.x), AXIS_H, 1, H);
  }
  if (replayAt < stops.length) {  // replaying: what the schedule has not reached yet is veiled
    var tNow = stops[replayAt], xv = Math.max(LABEL_W, Math.round(X(tNow + 1)));
    ctx.fillStyle = 'rgba(255,255,255,0.86)';
    ctx.fillRect(xv, AXIS_H, W, H);
    ctx.fillStyle = '#e8590c';
    ctx.fillRect(Math.round(X(tNow)) - 1, AXIS_H, 2, H);
  }
  ctx.restore();

  // Lane names stay put while the plot scrolls sideways.
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, AXIS_H, LABEL_W, H);
  visible.forEach(function (row) {
    var y = AXIS_H + row.y - st;
    if (row.hdr) {
      ctx.fillStyle = COL.hdr; ctx.fillRect(0, y, LABEL_W, row.h);
      ctx.fillStyle = COL.line; ctx.fillRect(0, y, W, 1);
      ctx.font = BOLD; ctx.fillStyle = COL.text;
      var s = (collapsed[row.c] ? '\u25B8' : '\u25BE') + ' CTA ' + row.c;
      ctx.fillText(s, 10, y + row.h / 2 + 0.5);
      if (diagsByCta[row.c].length) {
        ctx.fillStyle = COL.diag;
        ctx.fillText('\u25CF', 14 + ctx.measureText(s).width, y + row.h / 2 + 0.5);
      }
    } else {
      if (row.l % 2) { ctx.fillStyle = COL.stripe; ctx.fillRect(0, y, LABEL_W, row.h); }
      ctx.font = FONT; ctx.fillStyle = COL.text;
      ctx.fillText(lanes[row.l], 26, y + Math.min(row.h, TRACK_H + 2 * PAD) / 2 + 0.5);
    }
  });
  ctx.fillStyle = COL.line; ctx.fillRect(LABEL_W, AXIS_H, 1, H);

  // Time axis, in scheduler steps.
  ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, W, AXIS_H);
  ctx.fillStyle = COL.line; ctx.fillRect(0, AXIS_H - 1, W, 1);
  ctx.save();
  ctx.beginPath(); ctx.rect(LABEL_W, 0, W - LABEL_W, AXIS_H); ctx.clip();
  ctx.font = SMALL;
  for (t = Math.ceil(tL / step) * step; t <= tR + step; t += step) {
    var x = Math.round(X(t)) + 0.5;
    ctx.fillStyle = COL.muted; ctx.fillRect(x - 0.5, AXIS_H - 7, 1, 6);
    ctx.fillText(String(t), x + 3, AXIS_H / 2 - 1);
  }
  if (mouse && !drag && mouse.x >= LABEL_W) {
    var s2 = UNIT + ' ' + Math.floor((mouse.x - LABEL_W + px) / scale), w2 = ctx.measureText(s2).width + 10;
    var bx = Math.min(Math.max(mouse.x - w2 / 2, LABEL_W), W - w2);
    ctx.fillStyle = '#1f2328'; ctx.fillRect(bx, 4, w2, AXIS_H - 10);
    ctx.fillStyle = '#fff'; ctx.fillText(s2, bx + 5, AXIS_H / 2 - 1);
  }
  ctx.restore();
  ctx.font = SMALL; ctx.fillStyle = COL.muted;
  ctx.fillText(UNITS, 10, AXIS_H / 2 - 1);
  if (!N) {
    ctx.font = FONT; ctx.fillStyle = COL.muted;
    ctx.fillText('This run recorded no events.', LABEL_W + 16, AXIS_H + 40);
  }
  if (now < flashUntil) schedule();
}

// ---- picking -------------------------------------------------------------------------------
function hitTest(x, y) {
  var out = [];
  if (x < LABEL_W || y < AXIS_H) return out;
  var cy = y - AXIS_H + sc.scrollTop, k = rowAt(cy);
  if (k < 0) return out;
  var row = rows[k], t = (x - LABEL_W + px) / scale, tol = 4 / scale;
  if (row.hdr) {
    diagsByCta[row.c].forEach(function (d) { if (Math.abs(ta[d] - t) <= tol + 1 / scale) out.push(d); });
    return out;
  }
  var ri = row.ri, near = [];
  for (var j = firstInstant(ri.inst, t - tol); j < ri.inst.length && ta[ri.inst[j]] <= t + tol; ++j) near.push(ri.inst[j]);
  near.sort(function (a, b) { return (kind[b] === DIAG) - (kind[a] === DIAG) || Math.abs(ta[a] - t) - Math.abs(ta[b] - t) || a - b; });
  out = out.concat(near);
  var tr = Math.floor((cy - row.y - PAD) / TRACK_H);
  if (tr >= 0 && tr < ri.tracks.length) {
    var track = ri.tracks[tr], boxes = [], slack = 1 / scale;
    for (var j2 = firstReaching(ri.reach[tr], t - slack); j2 < track.length && ta[track[j2]] <= t + slack; ++j2) {
      var i = track[j2];
      if (ta[i] - slack <= t && t <= tb[i] + slack) boxes.push(i);
    }
    boxes.sort(function (a, b) {
      var ia = ta[a] <= t && t < tb[a], ib = ta[b] <= t && t < tb[b];
      return ib - ia || a - b;
    });
    out = out.concat(boxes);
  }
  return out;
}
function describe(i) {
  var parts = [KIND[kind[i]], 'CTA ' + cta[i] + ' \u00b7 ' + lanes[lane[i]]];
  if (opn[i] >= 0) parts.push('op #' + opn[i] + (SOURCES[opn[i]] ? ' \u00b7 ' + SOURCES[opn[i]] : ''));
  if (kind[i] <= ASYNC) parts.push(UNITS + ' ' + ta[i] + '\u2013' + t1raw[i] + ' (' + (tb[i] - ta[i]) + ' ' + (tb[i] - ta[i] === 1 ? UNIT : UNITS) + ')');
  else parts.push(UNIT + ' ' + ta[i]);
  if (failing.has(i)) parts.push('failing op');
  return parts.join('  \u00b7  ');
}
function showTip(hits) {
  if (!hits.length || !mouse) { tip.style.display = 'none'; return; }
  tip.replaceChildren();
  hits.slice(0, 5).forEach(function (i) {
    var d = document.createElement('div'), h = document.createElement('div'), m = document.createElement('div');
    d.className = 'ti'; h.className = 'tl k' + kind[i]; m.className = 'tm';
    h.textContent = labels[lab[i]] || KIND[kind[i]];
    m.textContent = describe(i);
    d.append(h, m);
    if (failing.has(i)) {
      var f = document.createElement('div');
      f.className = 'tl k3';
      f.textContent = labels[lab[failing.get(i)]];
      d.append(f);
    }
    tip.append(d);
  });
  if (hits.length > 5) {
    var more = document.createElement('div');
    more.className = 'more';
    more.textContent = '+' + (hits.length - 5) + ' more here; zoom in to separate them';
    tip.append(more);
  }
  tip.style.display = 'block';
  var tw = tip.offsetWidth, th = tip.offsetHeight;
  var x = mouse.x + 16, y = mouse.y + 16;
  if (x + tw > W) x = Math.max(4, mouse.x - tw - 12);
  if (y + th > H) y = Math.max(4, mouse.y - th - 12);
  tip.style.left = x + 'px'; tip.style.top = y + 'px';
}
function setStatus() {
  statusBar.replaceChildren();
  if (selected < 0) {
    statusBar.textContent = N ? 'Hover over a box for details; click to select it.' : '';
    return;
  }
  var b = document.createElement('b');
  b.textContent = labels[lab[selected]] || KIND[kind[selected]];
  statusBar.append(b, '  \u00b7  ' + describe(selected));
}
function select(i) { selected = i; setStatus(); schedule(); }

// Bring an event into view: unfold its CTA, zoom in until a box is readable, centre it.
function focusEvent(i) {
  var c = cta[i];
  if (collapsed[c]) { collapsed[c] = 0; layout(); }
  var box = kind[i] <= ASYNC, a = ta[i], b = box ? tb[i] : ta[i] + 1;
  var want = Math.min(140 / (b - a), plotW * 0.5 / (b - a));
  if (scale < want) scale = clampScale(want);
  px = (a + b) / 2 * scale - plotW / 2;
  var y = rowY[c * nL + lane[i]] + (box ? PAD + trackOf[i] * TRACK_H : 0);
  sc.scrollTop = Math.max(0, y - (H - AXIS_H) / 2);
  flashUntil = performance.now() + 1600;
  select(i);
  sync();
}

// ---- input ---------------------------------------------------------------------------------
function local(e) { var r = sc.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; }
sc.addEventListener('scroll', function () {
  if (Math.abs(sc.scrollLeft - lastSL) >= 1) {
    var e = extent();
    px = e.maxScroll > 0 ? sc.scrollLeft * e.maxPx / e.maxScroll : 0;
    lastSL = sc.scrollLeft;
  }
  tip.style.display = 'none';
  schedule();
});
sc.addEventListener('wheel', function (e) {
  if (!(e.ctrlKey || e.metaKey)) return;  // plain and shift+wheel scroll natively
  e.preventDefault();
  var unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? H : 1, p = local(e);
  zoomAt(scale * Math.exp(-e.deltaY * unit * 0.002), Math.min(Math.max(p.x - LABEL_W, 0), plotW));
}, { passive: false });
sc.addEventListener('mousedown', function (e) {
  var p = local(e);
  if (e.button !== 0 || p.x >= sc.clientWidth || p.y >= sc.clientHeight) return;  // scrollbars
  drag = { x: e.clientX, y: e.clientY, px: px, st: sc.scrollTop, moved: false, at: p };
  e.preventDefault();
});
window.addEventListener('mousemove', function (e) {
  if (drag) {
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
    drag.moved = true;
    tip.style.display = 'none';
    px = drag.px - dx;
    sc.scrollTop = drag.st - dy;
    sync();
  }
});
window.addEventListener('mouseup', function () {
  if (!drag) return;
  var d = drag;
  drag = null;
  if (d.moved) return;
  var p = d.at;
  if (p.y < AXIS_H) return;
  var k = rowAt(p.y - AXIS_H + sc.scrollTop);
  if (k >= 0 && rows[k].hdr && p.x < LABEL_W) {
    collapsed[rows[k].c] ^= 1;
    layout(); sync();
    return;
  }
  var hits = hitTest(p.x, p.y);
  if (!hits.length) { select(-1); return; }
  var i = hits[0];
  select(i);
  if (kind[i] === DIAG) markDiag(i);
});
sc.addEventListener('mousemove', function (e) {
  mouse = local(e);
  if (!drag) showTip(hitTest(mouse.x, mouse.y));
  var k = mouse.y >= AXIS_H ? rowAt(mouse.y - AXIS_H + sc.scrollTop) : -1;
  sc.style.cursor = k >= 0 && rows[k].hdr && mouse.x < LABEL_W ? 'pointer' : 'default';
  schedule();
});
sc.addEventListener('mouseleave', function () { mouse = null; tip.style.display = 'none'; schedule(); });
window.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  var handled = true;
  if (e.key === '+' || e.key === '=') zoomAt(scale * 1.5, plotW / 2);
  else if (e.key === '-' || e.key === '_') zoomAt(scale / 1.5, plotW / 2);
  else if (e.key === '0') fit();
  else if (e.key === 'ArrowLeft') { px -= plotW * 0.2; sync(); }
  else if (e.key === 'ArrowRight') { px += plotW * 0.2; sync(); }
  else if (e.key === 'Escape') select(-1);
  else handled = false;
  if (handled) e.preventDefault();
});
document.getElementById('zoom-in').onclick = function () { zoomAt(scale * 1.5, plotW / 2); };
document.getElementById('zoom-out').onclick = function () { zoomAt(scale / 1.5, plotW / 2); };
document.getElementById('zoom-fit').onclick = fit;
document.getElementById('expand-all').onclick = function () { collapsed.fill(0); layout(); sync(); };
document.getElementById('collapse-all').onclick = function () { collapsed.fill(1); layout(); sync(); };
if (nC < 2) {
  document.getElementById('expand-all').hidden = true;
  document.getElementById('collapse-all').hidden = true;
}

// ---- replay --------------------------------------------------------------------------------
// The schedule event by event: stops are the steps at which something starts; at stop i the
// page shows what ran up to it, veils the rest and names what happened at it. A URL ending in
// #step=N opens at step N (how the Chromium test looks at a replayed page).
var stops = Array.from(new Set(Array.from(ta))).sort(function (a, b) { return a - b; });
var replayAt = stops.length;  // stops.length: the whole run
var slider = document.getElementById('replay-slider');
slider.max = String(stops.length);
function replay(i) {
  replayAt = Math.min(Math.max(i, 0), stops.length);
  slider.value = String(replayAt);
  var now = document.getElementById('replay-now');
  if (replayAt === stops.length) { now.textContent = 'whole run'; schedule(); return; }
  var t = stops[replayAt], here = [];
  for (var i2 = 0; i2 < N; ++i2)
    if (ta[i2] === t) here.push('CTA ' + cta[i2] + ' ' + lanes[lane[i2]] + ': ' + (labels[lab[i2]] || KIND[kind[i2]]));
  now.textContent = UNIT + ' ' + t + ' (' + (replayAt + 1) + ' of ' + stops.length + '): ' + here.join(' \u00b7 ');
  now.title = here.join('\n');
  var x = X(t);  // keep the cursor in view
  if (x < LABEL_W + 20 || x > W - 40) { px = t * scale - plotW * 0.6; sync(); }
  schedule();
}
slider.oninput = function () { replay(Number(slider.value)); };
document.getElementById('step-back').onclick = function () { replay((replayAt === stops.length ? stops.length : replayAt) - 1); };
document.getElementById('step-fwd').onclick = function () { replay(replayAt + 1); };
document.getElementById('replay-all').onclick = function () { replay(stops.length); };
window.addEventListener('keydown', function (e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === ',') { replay(replayAt - 1); e.preventDefault(); }
  else if (e.key === '.') { replay(replayAt + 1); e.preventDefault(); }
});

// ---- page furniture ------------------------------------------------------------------------
document.getElementById('kernel').textContent = data.kernel || '(unnamed kernel)';
document.getElementById('summary').textContent = [
  nC + (nC === 1 ? ' CTA' : ' CTAs'), nL + (nL === 1 ? ' lane' : ' lanes') + ' each',
  N + (N === 1 ? ' event' : ' events'), tEnd + ' ' + (tEnd === 1 ? UNIT : UNITS)].join(' \u00b7 ');
var diagButtons = new Map();
function markDiag(d) {
  diagButtons.forEach(function (btn, k) { btn.classList.toggle('active', k === d); });
}
if (diags.length) {
  document.getElementById('diags').hidden = false;
  document.getElementById('diags-title').textContent = diags.length === 1
    ? '1 diagnostic (click it to show the failing op)'
    : diags.length + ' diagnostics (click one to show the failing op)';
  var list = document.getElementById('diag-list');
  diags.forEach(function (d) {
    var li = document.createElement('li'), btn = document.createElement('button');
    var what = document.createElement('span'), where = document.createElement('span');
    what.className = 'what'; where.className = 'where';
    what.textContent = labels[lab[d]] || 'diagnostic';
    where.textContent = '  \u2014  CTA ' + cta[d] + ' \u00b7 ' + lanes[lane[d]] + ' \u00b7 ' + UNIT + ' ' + ta[d] +
      (opn[d] >= 0 ? ' \u00b7 op #' + opn[d] : '');
    btn.append(what, where);
    btn.onclick = function () { markDiag(d); focusEvent(diagBox.has(d) ? diagBox.get(d) : d); };
    diagButtons.set(d, btn);
    li.append(btn);
    list.append(li);
  });
}

layout();
resize();
scale = minScale;
sync();
setStatus();
var stepHash = /^#step=(\d+)$/.exec(location.hash);
if (stepHash) {
  var want = Number(stepHash[1]), at = 0;
  while (at + 1 < stops.length && stops[at + 1] <= want) ++at;
  replay(at);
} else replay(stops.length);
new ResizeObserver(function () {
  if (sc.clientWidth === W && sc.clientHeight === H) return;
  var atFit = scale <= minScale * 1.0001, mid = (px + plotW / 2) / scale;
  resize();
  scale = atFit ? minScale : scale;
  px = mid * scale - plotW / 2;
  sync();
}).observe(view);
})();
</script>
</body>
</html>
)page";

}  // namespace

std::string to_chrome_json(trace const& t) {
  validate(t);
  auto const threads = layout_threads(t);
  std::vector<ojson> events;
  events.reserve(static_cast<std::size_t>(std::max(t.ctas, 0)) * (2 + 2 * t.lanes.size()) + t.events.size());
  for (int c = 0; c < t.ctas; ++c) {
    auto const pid = pid_of(c), first = threads.tid(c, 0, 0);
    events.push_back(meta("process_name", pid, first, "name", "CTA " + std::to_string(c)));
    events.push_back(meta("process_sort_index", pid, first, "sort_index", c));
    int position = 0;  // a lane's extra threads sort right below it
    for (std::size_t l = 0; l < t.lanes.size(); ++l) {
      auto const lane = static_cast<int>(l);
      for (int k = 0; k < threads.threads[static_cast<std::size_t>(c) * t.lanes.size() + l]; ++k) {
        auto const tid = threads.tid(c, lane, k);
        auto name = k == 0 ? t.lanes[l] : t.lanes[l] + " (" + std::to_string(k + 1) + ")";
        events.push_back(meta("thread_name", pid, tid, "name", std::move(name)));
        events.push_back(meta("thread_sort_index", pid, tid, "sort_index", position++));
      }
    }
  }
  for (std::size_t i = 0; i < t.events.size(); ++i) events.push_back(chrome_event(threads, t, t.events[i], threads.sub[i]));

  ojson other;
  other["kernel"] = t.kernel;
  other["time_unit"] = t.time_unit == "step" ? std::string("1 us = 1 scheduler step") : "1 us = 1 " + t.time_unit + " (MODEL)";
  other["ctas"] = t.ctas;
  other["lanes"] = t.lanes;
  // One event per line: the file stays small yet greps and diffs well.
  std::string out = "{\"otherData\":" + dump(other) + ",\n\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i) {
    out += dump(events[i]);
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

std::string to_html(trace const& t) {
  validate(t);
  std::string out;
  out += page_head;
  out += html_escape("stagecraft trace: " + t.kernel);
  out += page_style;
  out += html_data(t);
  out += page_script;
  return out;
}

}  // namespace stagecraft::interp
