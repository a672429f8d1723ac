// redlock-sim viewer: steps through one run that the server simulated (POST /api/run), draws
// it as a space-time diagram, shows each actor's state at the cursor, and reruns on every
// what-if. Everything the view shows lives in the URL's fragment, so a link reproduces it.
"use strict";

const CLIENT_COLORS = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#8c564b", "#f0e442", "#6e6e6e"];
const RED = "#d62728";
const SVGNS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

const view = {
  catalogue: null,      // /api/scenarios
  req: null,            // the run request: {scenario | file, seed, set}
  run: null,            // the RunResponse
  cursor: 0,            // step index
  selected: -1,         // selected message index
  playing: null,        // interval id
  laneOf: new Map(),    // actor name -> lane index
  lanes: [],            // {name, kind, y, h}
  inflight: null,       // the AbortController of the run request in flight
};

function clientColor(j) { return j < 0 ? "#969696" : CLIENT_COLORS[j % CLIENT_COLORS.length]; }
function inkOn(hex) {
  const r = parseInt(hex.slice(1, 3), 16), g = parseInt(hex.slice(3, 5), 16), b = parseInt(hex.slice(5, 7), 16);
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? "#000" : "#fff";
}
function secs(ns, digits = 3) { return (ns / 1e9).toFixed(digits) + " s"; }
function ms(ns) {
  const v = ns / 1e6;
  return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) + " ms";
}
function el(tag, attrs = {}, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  if (text !== undefined) e.textContent = text;
  return e;
}
function sv(tag, attrs = {}, parent) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
function title(e, text) { sv("title", {}, e).textContent = text; return e; }

// ---- the URL fragment: scenario (or file), seed, settings, cursor time ----

function b64encode(s) {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
function b64decode(s) {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const req = { seed: 1, set: p.getAll("set") };
  if (p.get("file")) req.file = b64decode(p.get("file")); else req.scenario = p.get("scenario") || "gc-pause";
  const seed = Number(p.get("seed"));
  if (p.get("seed") !== null && Number.isInteger(seed) && seed >= 0) req.seed = seed;
  const t = p.get("t");
  return { req, t: t === null ? null : Math.round(Number(t) * 1e9), zoom: p.get("zoom") };
}
function writeHash() {
  if (!view.req) return;
  const p = new URLSearchParams();
  if (view.req.file !== undefined) p.set("file", b64encode(view.req.file)); else p.set("scenario", view.req.scenario);
  p.set("seed", String(view.req.seed));
  for (const s of view.req.set) p.append("set", s);
  if (view.run && view.run.replay.steps.length) p.set("t", (view.run.replay.steps[view.cursor].at_ns / 1e9).toFixed(9).replace(/0+$/, "").replace(/\.$/, ""));
  if ($("zoom").value !== "0") p.set("zoom", $("zoom").value);
  history.replaceState(null, "", "#" + p.toString());
}

// ---- talking to the server ----

async function api(path, body, signal) {
  const init = body === undefined ? { signal } : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), signal };
  const res = await fetch(path, init);
  const data = await res.json().catch(() => ({ error: "the server's answer was not JSON (HTTP " + res.status + ")" }));
  if (!res.ok) throw new Error(data.error || "HTTP " + res.status);
  return data;
}

// load asks the server for a run and shows it, the cursor at time keepT (by default the
// cursor's time now). A newer request cancels an older one still in flight (the server
// stops simulating it), so quick what-ifs never show an outdated run.
async function load(req, keepT) {
  const t = keepT !== undefined ? keepT : (view.run && view.run.replay.steps.length ? view.run.replay.steps[view.cursor].at_ns : null);
  if (view.inflight) view.inflight.abort();
  const ctl = new AbortController();
  view.inflight = ctl;
  document.body.dataset.loading = "1";
  $("status").textContent = "simulating…";
  try {
    const run = await api("/api/run", req, ctl.signal);
    if (view.inflight !== ctl) return;
    view.req = req;
    view.run = run;
    showError(null);
    setup(t);
  } catch (err) {
    if (view.inflight !== ctl) return;
    showError(err.message);
    if (!view.run) $("story").textContent = "";
  } finally {
    if (view.inflight === ctl) {
      view.inflight = null;
      delete document.body.dataset.loading;
      $("status").textContent = view.run ? view.run.replay.steps.length + " events · trace " + view.run.record.trace_hash : "";
    }
  }
}

function showError(msg) {
  const e = $("error");
  e.hidden = !msg;
  e.textContent = msg || "";
}

// ---- a run arrives ----

function setup(t) {
  const run = view.run, rp = run.replay, tl = rp.timeline;
  stop();
  view.selected = -1;
  view.runNo = (view.runNo || 0) + 1;
  // lanes: the nodes, then the clients
  view.lanes = [];
  view.laneOf = new Map();
  tl.nodes.forEach((n, i) => {
    view.laneOf.set(n.name, view.lanes.length);
    if (!view.laneOf.has(n.group)) view.laneOf.set(n.group, view.lanes.length);
    view.lanes.push({ name: n.name, kind: "node", i });
  });
  tl.clients.forEach((c, j) => {
    view.laneOf.set(c.name, view.lanes.length);
    view.lanes.push({ name: c.name, kind: "client", i: j });
  });
  const sel = $("scenario");
  if (view.req.file !== undefined) {
    let opt = sel.querySelector("option[data-file]");
    if (!opt) { opt = el("option", { "data-file": "1" }); sel.prepend(opt); }
    opt.value = "\u0000file";
    opt.textContent = run.scenario.name + " (your file)";
    sel.value = opt.value;
  } else {
    sel.value = run.scenario.name;
  }
  $("seed").value = run.seed;
  const story = $("story");
  story.textContent = "";
  story.append(el("b", {}, run.scenario.name + ": "), run.scenario.story + " ");
  if (run.scenario.expect) story.append(el("span", { class: "expect" }, "Expected: " + run.scenario.expect + "."));
  if (run.replay_note) story.append(" ", el("span", { class: "expect", id: "replay-note" }, run.replay_note));
  const scrub = $("scrub");
  scrub.max = Math.max(0, rp.steps.length - 1);
  let c = 0;
  if (t !== null && t !== undefined) {
    for (let i = 0; i < rp.steps.length && rp.steps[i].at_ns <= t; i++) c = i;
  }
  renderVerdict();
  renderWhatIf();
  view.cursor = -1;
  setCursor(c);
  document.body.dataset.ready = String((Number(document.body.dataset.ready) || 0) + 1);
}

function setCursor(i) {
  const steps = view.run.replay.steps;
  if (!steps.length) { draw(); return; }
  i = Math.max(0, Math.min(steps.length - 1, i));
  const changed = i !== view.cursor;
  view.cursor = i;
  $("scrub").value = i;
  const st = steps[i];
  $("clock").textContent = "t = " + secs(st.at_ns) + "  ·  " + (i + 1) + "/" + steps.length;
  document.body.dataset.cursor = String(i);
  if (st.msg >= 0 && changed) view.selected = -1;
  renderTrace();
  renderState();
  renderMessage();
  markActiveViolation();
  draw();
  writeHash();
}

function stop() {
  if (view.playing) clearInterval(view.playing);
  view.playing = null;
  $("play").textContent = "▶ play";
}
function togglePlay() {
  if (view.playing) { stop(); return; }
  if (!view.run) return;
  if (view.cursor >= view.run.replay.steps.length - 1) setCursor(0);
  $("play").textContent = "⏸ pause";
  view.playing = setInterval(() => {
    if (view.cursor >= view.run.replay.steps.length - 1) { stop(); return; }
    setCursor(view.cursor + 1);
  }, Number($("speed").value));
}

// ---- the verdict panel ----

function renderVerdict() {
  const run = view.run, box = $("verdict");
  box.textContent = "";
  box.append(el("h2", {}, "Verdict"));
  const lockSafe = run.record.safety.lock_safe, resSafe = run.record.safety.resource_safe;
  box.append(el("div", { class: "v " + (lockSafe ? "safe" : "unsafe"), id: "lock-verdict" }, "lock: " + run.lock_verdict));
  box.append(el("div", { class: "v " + (resSafe ? "safe" : "unsafe"), id: "resource-verdict" }, "resource: " + run.resource_verdict));
  const lv = run.record.liveness;
  const live = [lv.acquired + " acquired in " + lv.attempts + " attempt" + (lv.attempts === 1 ? "" : "s")];
  if (lv.acquire_latency_ms && lv.acquire_latency_ms.max !== null) live.push("slowest acquire " + ms(lv.acquire_latency_ms.max * 1e6));
  live.push(lv.split_brain_rounds + " split-brain round" + (lv.split_brain_rounds === 1 ? "" : "s"));
  box.append(el("div", { id: "liveness", class: "live" }, "liveness: " + live.join(" · ")));
  const vs = run.replay.timeline.violations || [];
  const ul = el("ul", { id: "violations" });
  vs.forEach((v, k) => {
    const step = run.replay.steps.findIndex((s) => s.violation === k);
    const label = violationText(v) + " at " + v.start_s.toFixed(3) + " s";
    const b = el("button", { type: "button", "data-violation": String(k), title: (v.faults || []).join("\n") || "no fault in effect" }, label);
    b.addEventListener("click", () => { stop(); if (step >= 0) setCursor(step); });
    const li = el("li");
    li.append(b);
    ul.append(li);
  });
  if (!vs.length) ul.append(el("li", {}, "No violation in this run."));
  box.append(ul);
}

// violationText says a violation in words: who overlapped with whom, or whose write was
// stale because whom held the lock.
function violationText(v) {
  switch (v.kind) {
    case "stale_write": return "stale write by " + v.first + " (" + v.second + " held the lock)";
    case "fenced_write_rejected": return "fencing rejected " + v.first + "'s write (" + v.second + " held the lock)";
    default: return v.kind.replace(/_/g, " ") + ": " + v.first + " and " + v.second;
  }
}

function markActiveViolation() {
  const st = view.run.replay.steps[view.cursor];
  document.querySelectorAll("#violations button").forEach((b) => b.classList.toggle("active", st && Number(b.dataset.violation) === st.violation));
}

// ---- the narrated trace ----

// renderTrace shows the narrated lines around the cursor, the current one highlighted. It
// renders a window of lines and only moves the highlight while the cursor stays inside it.
function renderTrace() {
  const steps = view.run.replay.steps, ol = $("trace");
  const w = view.trace || {};
  if (w.run === view.runNo && view.cursor >= w.from + 20 && (view.cursor < w.to - 40 || w.to === steps.length)) {
    const prev = ol.querySelector("li.current");
    if (prev) prev.classList.remove("current");
    const cur = ol.querySelector('li[data-step="' + view.cursor + '"]');
    if (cur) { cur.classList.add("current"); scrollTrace(ol, cur); }
    return;
  }
  const from = Math.max(0, view.cursor - 60), to = Math.min(steps.length, view.cursor + 140);
  view.trace = { run: view.runNo, from, to };
  ol.textContent = "";
  for (let i = from; i < to; i++) {
    const s = steps[i];
    const cls = [s.kind === "violations" ? "violation" : s.kind === "faults" ? "fault" : "", s.cleanup ? "cleanup" : "", i === view.cursor ? "current" : ""].filter(Boolean).join(" ");
    const text = (s.at_ns / 1e9).toFixed(3).padStart(8) + "s " + (s.marker || "  ") + " " + s.actor.padEnd(9) + " " + (s.local || "").padEnd(16) + " " + s.text;
    const li = el("li", { class: cls, "data-step": String(i) }, text);
    li.addEventListener("click", () => { stop(); setCursor(i); });
    ol.append(li);
    if (s.notes) for (const n of s.notes) ol.append(el("li", { class: "note" }, n));
  }
  const cur = ol.querySelector("li.current");
  if (cur) scrollTrace(ol, cur);
}

// scrollTrace keeps the current line a third of the way down the list. It waits for the
// next frame: reading a position right after changing the page makes the browser lay it
// out again at once, on every step.
function scrollTrace(ol, cur) {
  if (view.scrollPending) return;
  view.scrollPending = true;
  requestAnimationFrame(() => {
    view.scrollPending = false;
    const c = ol.querySelector("li.current") || cur;
    ol.scrollTop = Math.max(0, c.offsetTop - ol.offsetTop - ol.clientHeight / 3);
  });
}

// ---- the state at the cursor ----

// clientChip is a client's name on its colour. The colours are set through the style
// object: the page's content security policy refuses style attributes.
function clientChip(j, text) {
  const c = clientColor(j), chip = el("span", { class: "chip" }, text);
  chip.style.background = c;
  chip.style.color = inkOn(c);
  return chip;
}

function renderState() {
  const run = view.run, rp = run.replay, tl = rp.timeline, st = rp.steps[view.cursor], s = rp.states[st.state];
  const box = $("state");
  box.textContent = "";
  box.append(el("h2", {}, "At " + secs(st.at_ns)));
  const nt = el("table", { id: "nodes" });
  nt.append(row("th", ["node", "state", "key held by", "PTTL", "clock"]));
  tl.nodes.forEach((n, i) => {
    const ns = s.nodes[i];
    const tr = el("tr", { "data-node": n.name });
    tr.append(el("td", {}, n.name));
    tr.append(el("td", { class: ns.status === "up" ? "" : "down" }, ns.status));
    const keys = ns.keys || [];
    const held = el("td");
    if (!keys.length) held.textContent = "—";
    for (const k of keys) {
      const who = k.client >= 0 ? tl.clients[k.client].name : "?";
      const chip = clientChip(k.client, (keys.length > 1 ? k.resource + ": " : "") + who);
      chip.title = "GET " + k.resource + " → " + k.value;
      held.append(chip, el("span", { class: "value", title: k.value }, " " + k.value.slice(0, 6) + "…"));
    }
    tr.append(held);
    tr.append(el("td", { class: "num" }, keys.map((k) => (k.pttl_ms < 0 ? "no TTL" : k.pttl_ms + " ms")).join(" ") || ""));
    tr.append(skew(ns.wall_ns - st.at_ns - rp.states[0].nodes[i].wall_ns + rp.steps[0].at_ns));
    nt.append(tr);
  });
  box.append(nt);
  const ct = el("table", { id: "clients" });
  ct.append(row("th", ["client", "state", "believes valid for", "token", "clock"]));
  tl.clients.forEach((c, j) => {
    const cs = s.clients[j];
    const tr = el("tr", { "data-client": c.name });
    const name = el("td");
    name.append(clientChip(j, c.name));
    tr.append(name);
    tr.append(el("td", {}, cs.status + (cs.paused ? ", PAUSED" : "")));
    const v = el("td", { class: "num" });
    if (cs.valid_ns > 0) v.textContent = ms(cs.valid_ns);
    else if (cs.valid_ns < 0) { v.textContent = "expired " + ms(-cs.valid_ns) + " ago"; v.className += " warn"; }
    else v.textContent = "—";
    tr.append(v);
    tr.append(el("td", { class: "num" }, cs.token ? String(cs.token) : "—"));
    tr.append(skew(cs.mono_ns - st.at_ns - rp.states[0].clients[j].mono_ns + rp.steps[0].at_ns));
    ct.append(tr);
  });
  box.append(ct);
  const tokens = s.tokens || [];
  const highest = tokens.some((t) => t > 0) ? tokens.join(", ") : "none yet";
  box.append(el("p", { id: "storage" }, "Storage: highest fencing token accepted: " + highest));
}

// skew is a cell saying how far an actor's clock has run ahead of (or behind) true time
// since the run began: drift, jumps and slews, which only the simulator can see.
function skew(d) {
  const td = el("td", { class: "num", title: "how far this clock has moved ahead of true time since the run began (drift, jumps, slews)" });
  if (Math.abs(d) < 500000) td.textContent = "±0";
  else { td.textContent = (d > 0 ? "+" : "−") + ms(Math.abs(d)); td.className += " warn"; }
  return td;
}

function row(tag, cells) {
  const tr = el("tr");
  for (const c of cells) tr.append(el(tag, {}, c));
  return tr;
}

// ---- one message ----

function renderMessage() {
  const rp = view.run.replay, box = $("message");
  const st = rp.steps[view.cursor];
  const i = view.selected >= 0 ? view.selected : st.msg;
  box.textContent = "";
  if (i < 0 || !rp.messages[i]) { box.hidden = true; return; }
  box.hidden = false;
  const m = rp.messages[i];
  let req = m, rep = null;
  if (m.kind === "reply") { rep = m; req = m.pair >= 0 ? rp.messages[m.pair] : null; } else if (m.pair >= 0) rep = rp.messages[m.pair];
  box.append(el("h2", {}, "Message " + m.from + " → " + m.to));
  if (req) {
    box.append(el("div", {}, (req.kind === "request" ? "redis-cli form, sent at " : req.kind + ", sent at ") + secs(req.sent_ns) + ":"));
    box.append(el("code", { id: "msg-command" }, (req.kind === "request" ? req.to + "> " : "") + req.text));
    box.append(el("div", {}, fateText(req)));
  }
  if (rep) {
    box.append(el("div", {}, "reply " + rep.from + " → " + rep.to + ", " + fateText(rep) + ":"));
    box.append(el("code", { id: "msg-reply" }, rep.text));
  } else if (req && req.kind === "request") {
    box.append(el("div", {}, "no reply reached the client"));
  }
}

function fateText(m) {
  if (m.fate === "dropped") return "dropped at " + secs(m.at_ns) + (m.reason ? " (" + m.reason + ")" : "");
  if (m.fate === "held") return "held by a clogged link at " + secs(m.at_ns);
  return "arrived at " + secs(m.at_ns) + " after " + ms(m.at_ns - m.sent_ns);
}

// ---- what if ----

function currentSets() {
  const m = new Map();
  for (const s of view.req.set) {
    const k = s.indexOf("=");
    if (k > 0) m.set(s.slice(0, k).trim(), s.slice(k + 1).trim());
  }
  return m;
}

function renderWhatIf() {
  const run = view.run, sets = currentSets();
  const pbox = $("params"), kbox = $("knobs");
  pbox.textContent = "";
  kbox.textContent = "";
  if (!run.scenario.params.length) pbox.append(el("p", { class: "help" }, "This story has no parameters of its own; try the knobs."));
  for (const p of run.scenario.params) {
    const value = sets.has(p.name) ? sets.get(p.name) : p.default;
    pbox.append(control(p.name, value, p.default, null, p.help, sets.has(p.name)));
  }
  const details = el("details", { id: "more-knobs" });
  const changed = view.catalogue.knobs.some((k) => sets.has(k.name));
  if (changed || kbox.dataset.open === "1") details.open = true;
  details.addEventListener("toggle", () => { kbox.dataset.open = details.open ? "1" : ""; });
  details.append(el("summary", {}, "Knobs (ttl, fencing, persistence, …)"));
  for (const k of view.catalogue.knobs) {
    const value = sets.has(k.name) ? sets.get(k.name) : run.record.config[k.name];
    details.append(control(k.name, value, run.record.config[k.name], k.choices, k.help + " (" + k.allowed + ")", sets.has(k.name)));
  }
  kbox.append(details);
}

function control(name, value, initial, choices, help, changed) {
  const label = el("label", {}, "");
  label.append(el("span", {}, name));
  let input;
  if (choices) {
    input = el("select", { name, "data-knob": name });
    for (const c of choices) input.append(el("option", { value: c }, c));
    if (!choices.includes(value)) input.append(el("option", { value }, value));
    input.value = value;
  } else {
    input = el("input", { name, "data-knob": name, value, spellcheck: "false" });
  }
  if (changed) input.classList.add("changed");
  input.addEventListener("change", () => whatIf(name, input.value.trim()));
  label.append(input);
  label.append(el("span", { class: "help" }, help));
  return label;
}

function whatIf(name, value) {
  const sets = view.req.set.filter((s) => s.slice(0, s.indexOf("=")).trim() !== name);
  if (value !== "") sets.push(name + "=" + value);
  load({ ...view.req, set: sets });
}

// ---- the space-time diagram ----

const MARGIN = { left: 92, right: 200, top: 30, bottom: 30 };

function window_() {
  const rp = view.run.replay, dur = rp.timeline.duration_ns;
  const z = Number($("zoom").value);
  if (!z || z >= dur) return [0, dur];
  const t = rp.steps.length ? rp.steps[view.cursor].at_ns : 0;
  let a = t - z * 0.4;
  a = Math.max(0, Math.min(dur - z, a));
  return [a, a + z];
}

// draw draws the diagram. What does not depend on the cursor (lanes, keys, faults,
// violations, the arrows when there are few enough to show) is drawn once per run, window
// and size, in #static; the cursor, the state column and the highlighted messages are
// redrawn in #dynamic on every step, so that stepping through a long run stays quick.
function draw() {
  const svg = $("diagram");
  if (!view.size) view.size = [svg.clientWidth || 800, svg.clientHeight || 300]; // read once: a read forces a layout
  const [W, H] = view.size;
  if (!view.run) { svg.textContent = ""; view.staticKey = ""; return; }
  const rp = view.run.replay, tl = rp.timeline;
  const [t0, t1] = window_();
  const key = [view.runNo, t0, t1, W, H].join("|");
  const x = (t) => MARGIN.left + ((t - t0) / (t1 - t0)) * (W - MARGIN.left - MARGIN.right);
  const inView = (a, b) => b >= t0 && a <= t1;
  const clampX = (t) => x(Math.max(t0, Math.min(t1, t)));
  const n = view.lanes.length;
  const gap = 10;
  const laneH = Math.max(14, Math.min(44, (H - MARGIN.top - MARGIN.bottom - gap) / n));
  let y = MARGIN.top;
  view.lanes.forEach((l, k) => {
    if (k === tl.nodes.length) y += gap;
    l.y = y;
    l.h = laneH;
    y += laneH;
  });
  const mid = (k) => view.lanes[k].y + view.lanes[k].h / 2;
  const visible = [];
  rp.messages.forEach((m, i) => {
    if (inView(m.sent_ns, m.at_ns) && view.laneOf.has(m.from) && view.laneOf.has(m.to)) visible.push(i);
  });
  // Arrows shorter than a few pixels are only clutter: then only the current and the
  // selected message (and its pair) are drawn; zoom in to see every one.
  let px = 0;
  for (const i of visible) px += x(rp.messages[i].at_ns) - x(rp.messages[i].sent_ns);
  const showAll = visible.length <= 600 && visible.length > 0 && px / visible.length >= 4;
  if (key !== view.staticKey) {
    view.staticKey = key;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.textContent = "";
    drawStatic(sv("g", { id: "static" }, svg), { W, H, t0, t1, x, inView, clampX, laneH, y, mid, visible, showAll });
    sv("g", { id: "dynamic" }, svg);
  }
  drawDynamic(svg, { W, H, t0, t1, x, y, mid, visible, showAll });
}

function drawStatic(svg, { W, H, t0, t1, x, inView, clampX, laneH, y, mid, visible, showAll }) {
  const rp = view.run.replay, tl = rp.timeline;
  const defs = sv("defs", {}, svg);
  const hatch = sv("pattern", { id: "hatch", width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
  sv("rect", { width: 8, height: 8, fill: "#d0d0d0" }, hatch);
  sv("line", { x1: 0, y1: 0, x2: 0, y2: 8, stroke: "#777", "stroke-width": 2 }, hatch);
  for (const [id, color] of [["arrow", "#444"], ["arrow-sel", "#000"]]) {
    const m = sv("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 10, markerHeight: 10, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" }, defs);
    sv("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: color }, m);
  }
  // axis and grid
  const axis = sv("g", { class: "axis" }, svg);
  const span = t1 - t0;
  const stepNs = niceStep(span / 8);
  for (let t = Math.ceil(t0 / stepNs) * stepNs; t <= t1; t += stepNs) {
    sv("line", { x1: x(t), x2: x(t), y1: MARGIN.top - 4, y2: H - MARGIN.bottom, stroke: "#eee" }, axis);
    sv("text", { x: x(t), y: H - MARGIN.bottom + 16, "text-anchor": "middle" }, axis).textContent = fmtTick(t, stepNs);
  }
  sv("text", { x: W - MARGIN.right, y: H - 4, "text-anchor": "end" }, axis).textContent = "true time — only the simulator knows it";
  // network faults: a band on the lanes they cut
  for (const f of tl.net_faults || []) {
    if (!inView(f.from_ns, f.to_ns)) continue;
    const ks = [f.a, f.b].map((nm) => view.laneOf.get(nm)).filter((k) => k !== undefined);
    for (const k of ks.length ? ks : view.lanes.map((_, i) => i)) {
      title(sv("rect", { x: clampX(f.from_ns), y: view.lanes[k].y, width: Math.max(1, clampX(f.to_ns) - clampX(f.from_ns)), height: laneH, fill: "#e8eaf3" }, svg), f.text);
    }
  }
  // violations: red bands over every lane
  (tl.violations || []).forEach((v, k) => {
    const a = v.start_s * 1e9, b = v.end_s * 1e9 > a ? v.end_s * 1e9 : a + (t1 - t0) / 400;
    if (!inView(a, b)) return;
    const g = sv("g", { class: "viol-band", "data-violation": String(k) }, svg);
    sv("rect", { class: "band", x: clampX(a), y: MARGIN.top - 14, width: Math.max(3, clampX(b) - clampX(a)), height: y - MARGIN.top + 14, fill: RED, "fill-opacity": 0.12 }, g);
    sv("rect", { x: clampX(a), y: MARGIN.top - 14, width: Math.max(3, clampX(b) - clampX(a)), height: 8, fill: RED }, g);
    title(g, violationText(v));
    g.addEventListener("click", () => {
      const step = rp.steps.findIndex((s) => s.violation === k);
      if (step >= 0) { stop(); setCursor(step); }
    });
  });
  // lanes
  view.lanes.forEach((l, k) => {
    const ly = l.y, h = l.h;
    sv("text", { class: "lane-label", x: 6, y: ly + h / 2 + 5 }, svg).textContent = l.name;
    sv("line", { x1: MARGIN.left, x2: W - MARGIN.right, y1: ly + h / 2, y2: ly + h / 2, stroke: "#ddd" }, svg);
    if (l.kind === "node") {
      const nl = tl.nodes[l.i];
      for (const s of nl.down || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + 2, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h - 4, fill: "#cdcdcd" }, svg), "down");
      for (const s of nl.paused || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + 2, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h - 4, fill: "url(#hatch)" }, svg), "paused");
      for (const ks of nl.keys || []) {
        if (!inView(ks.from_ns, ks.to_ns)) continue;
        const c = clientColor(ks.client), x0 = clampX(ks.from_ns), w = Math.max(1, clampX(ks.to_ns) - x0);
        const r = sv("rect", { x: x0, y: ly + 4, width: w, height: h - 8, fill: c, stroke: "#333", "stroke-width": 0.5 }, svg);
        title(r, (ks.client >= 0 ? tl.clients[ks.client].name : ks.value) + "'s key, " + secs(ks.from_ns) + " to " + secs(ks.to_ns) + " (" + ks.ended + ")");
        if (w > 60 && h >= 18) sv("text", { x: x0 + w / 2, y: ly + h / 2 + 5, "text-anchor": "middle", fill: inkOn(c), "font-size": 13, "pointer-events": "none" }, svg).textContent = ks.client >= 0 ? tl.clients[ks.client].name : "?";
      }
      for (const m of nl.marks || []) drawMark(svg, m, x, inView, ly, h);
    } else {
      const cl = tl.clients[l.i], c = clientColor(l.i);
      for (const s of cl.validity || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + 2, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h * 0.4, fill: c, "fill-opacity": 0.3, stroke: c }, svg), "believes it holds the lock");
      for (const s of cl.work || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + h * 0.5, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h * 0.3, fill: c }, svg), "working on the resource");
      for (const s of cl.pauses || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + 1, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h - 2, fill: "url(#hatch)", "fill-opacity": 0.7, stroke: "#555" }, svg), "stop-the-world pause " + ms(s.to_ns - s.from_ns));
      for (const a of cl.attempts || []) if (inView(a.from_ns, a.to_ns)) title(sv("rect", { x: clampX(a.from_ns), y: ly + h * 0.84, width: Math.max(2, clampX(a.to_ns) - clampX(a.from_ns)), height: h * 0.14, fill: a.won ? c : "#bbb", stroke: "#666", "stroke-width": 0.5 }, svg), "attempt: " + (a.won ? "won" : a.reason) + " (" + a.oks + "/" + tl.nodes.length + " OK)");
      for (const w of cl.writes || []) {
        const at = w.arrived ? w.at_ns : w.sent_ns;
        if (!inView(at, at)) continue;
        if (w.stale) title(sv("path", { d: "M " + x(at) + " " + (ly + h * 0.45) + " l 7 12 l -14 0 z", fill: RED, stroke: "#000" }, svg), "stale write accepted (token " + w.token + ")");
        else title(sv("circle", { cx: x(at), cy: ly + h * 0.65, r: 4.5, fill: w.accepted ? "#333" : "#fff", stroke: "#333" }, svg), "write " + (w.arrived ? (w.accepted ? "accepted" : "rejected") : "lost"));
      }
      for (const m of cl.marks || []) drawMark(svg, m, x, inView, ly, h);
    }
  });
  if (showAll) {
    const g = sv("g", { id: "messages" }, svg);
    for (const i of visible) drawMessage(g, rp.messages[i], i, x, mid);
  }
  // click empty diagram space: move the cursor to that time
  svg.ownerSVGElement.onclick = (ev) => {
    if (ev.target.closest(".msg, .viol-band")) return;
    const r = svg.ownerSVGElement.getBoundingClientRect();
    const px = ((ev.clientX - r.left) / r.width) * W;
    if (px < MARGIN.left || px > W - MARGIN.right) return;
    const t = t0 + ((px - MARGIN.left) / (W - MARGIN.left - MARGIN.right)) * (t1 - t0);
    let c = 0;
    for (let i = 0; i < rp.steps.length && rp.steps[i].at_ns <= t; i++) c = i;
    stop();
    setCursor(c);
  };
}

function drawDynamic(root, { W, H, t0, t1, x, y, mid, visible, showAll }) {
  const rp = view.run.replay, tl = rp.timeline;
  const old = root.querySelector("#dynamic");
  const svg = sv("g", { id: "dynamic" });
  const st = rp.steps[view.cursor];
  const curMsg = st ? st.msg : -1;
  const related = (i) => i === curMsg || i === view.selected || (curMsg >= 0 && rp.messages[curMsg].pair === i);
  root.querySelectorAll(".viol-band").forEach((g) => g.classList.toggle("active", !!st && Number(g.dataset.violation) === st.violation));
  if (showAll) {
    root.querySelectorAll("#messages .msg.current, #messages .msg.selected").forEach((g) => g.classList.remove("current", "selected"));
    for (const i of [curMsg, view.selected, curMsg >= 0 ? rp.messages[curMsg].pair : -1]) {
      const g = i >= 0 && root.querySelector('#messages .msg[data-msg="' + i + '"]');
      if (g) g.classList.add(i === view.selected ? "selected" : "current");
    }
  } else {
    const g = sv("g", { id: "messages" }, svg);
    for (const i of visible) if (related(i)) drawMessage(g, rp.messages[i], i, x, mid, true);
  }
  // each lane's state at the cursor, in a column at the right: what a node holds and for
  // how long on its own clock, what a client believes
  if (st) {
    const s = rp.states[st.state], cx = W - MARGIN.right + 8;
    sv("rect", { x: W - MARGIN.right + 2, y: MARGIN.top - 18, width: MARGIN.right - 4, height: y - MARGIN.top + 20, fill: "#f6f6f4" }, svg);
    sv("text", { x: cx, y: MARGIN.top - 5, "font-size": 13, fill: "#555" }, svg).textContent = "at the cursor";
    view.lanes.forEach((l) => {
      const ty = l.y + l.h / 2 + 5;
      const g = sv("g", { class: "lane-state", "data-lane": l.name }, svg);
      if (l.kind === "node") {
        const ns = s.nodes[l.i], k = (ns.keys || [])[0];
        if (ns.status !== "up") sv("text", { x: cx, y: ty, "font-size": 15, "font-style": "italic", fill: "#666" }, g).textContent = ns.status;
        else if (!k) sv("text", { x: cx, y: ty, "font-size": 15, fill: "#999" }, g).textContent = "no key";
        if (k) {
          const c = clientColor(k.client), name = k.client >= 0 ? tl.clients[k.client].name : "?";
          const x0 = ns.status === "up" ? cx : cx + 62;
          sv("rect", { x: x0, y: l.y + 3, width: 70, height: l.h - 6, rx: 3, fill: c }, g);
          sv("text", { x: x0 + 35, y: ty, "text-anchor": "middle", "font-size": 14, "font-weight": "bold", fill: inkOn(c) }, g).textContent = name;
          sv("text", { x: x0 + 76, y: ty, "font-size": 14 }, g).textContent = k.pttl_ms < 0 ? "no TTL" : k.pttl_ms + " ms";
        }
      } else {
        const cs = s.clients[l.i];
        let text = cs.paused ? "PAUSED" : cs.status, warn = false;
        if (cs.valid_ns > 0) text += " · " + ms(cs.valid_ns);
        else if (cs.valid_ns < 0) { text += " · expired"; warn = true; }
        sv("text", { x: cx, y: ty, "font-size": 14, "font-weight": warn ? "bold" : "normal", fill: warn ? RED : "#1a1a1a" }, g).textContent = text;
      }
    });
  }
  // the cursor
  if (st) {
    sv("line", { id: "cursor", x1: x(st.at_ns), x2: x(st.at_ns), y1: MARGIN.top - 16, y2: H - MARGIN.bottom, stroke: "#e69f00", "stroke-width": 2.5 }, svg);
    sv("text", { x: Math.min(W - 60, x(st.at_ns) + 4), y: 13, "font-size": 13, fill: "#8a5a00" }, svg).textContent = secs(st.at_ns);
  }
  old.replaceWith(svg);
}

function drawMark(svg, m, x, inView, ly, h) {
  if (!inView(m.at_ns, m.at_ns)) return;
  const colors = { "clock-jump": "#8e24aa", crash: "#000", restart: "#009e73", failover: "#0072b2", extend: "#555", "extend-failed": RED };
  const px = x(m.at_ns);
  title(sv("path", { d: "M " + px + " " + (ly + 1) + " l 6 -9 l -12 0 z", fill: colors[m.kind] || "#333" }, svg), m.text);
}

function drawMessage(g, m, i, x, mid, related) {
  const a = view.laneOf.get(m.from), b = view.laneOf.get(m.to);
  const cls = "msg" + (!related ? "" : i === view.selected ? " selected" : " current");
  const mg = sv("g", { class: cls, "data-msg": String(i) }, g);
  const x1 = x(m.sent_ns), y1 = mid(a), x2 = x(m.at_ns), y2 = mid(b);
  const color = m.kind === "reply" || m.kind === "ack" ? "#777" : "#333";
  const dash = m.kind === "reply" ? "5 3" : m.fate === "held" ? "2 3" : "";
  sv("line", { class: "hit", x1, y1, x2, y2 }, mg);
  sv("line", { class: "arrow", x1, y1, x2, y2, stroke: color, "stroke-width": 1.3, "stroke-dasharray": dash, "marker-end": m.fate === "dropped" ? "" : "url(#arrow)" }, mg);
  if (m.fate === "dropped") sv("path", { d: "M " + (x2 - 5) + " " + (y2 - 5) + " l 10 10 m 0 -10 l -10 10", stroke: RED, "stroke-width": 2.5 }, mg);
  title(mg, m.from + " → " + m.to + ": " + m.text);
  mg.addEventListener("click", (ev) => { ev.stopPropagation(); view.selected = i; renderMessage(); draw(); writeHash(); });
}

function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
function fmtTick(t, step) {
  const digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step / 1e9))));
  return (t / 1e9).toFixed(digits);
}

// ---- start ----

async function main() {
  view.catalogue = await api("/api/scenarios");
  const sel = $("scenario");
  for (const sc of view.catalogue.scenarios) sel.append(el("option", { value: sc.name, title: sc.story }, sc.name));
  sel.addEventListener("change", () => {
    sel.blur(); // the arrow keys step through the run again, not through the list
    if (sel.value === "\u0000file") return;
    load({ scenario: sel.value, seed: Number($("seed").value) || 0, set: [] }, null);
  });
  $("seed").addEventListener("change", () => {
    const seed = Number($("seed").value);
    if (!Number.isInteger(seed) || seed < 0) { showError("seed " + $("seed").value + ": want a whole number, 0 or more"); return; }
    load({ ...view.req, seed });
  });
  $("open-file").addEventListener("click", () => $("file").click());
  $("file").addEventListener("change", async () => {
    const f = $("file").files[0];
    if (f) load({ file: await f.text(), seed: Number($("seed").value) || 0, set: [] }, null);
    $("file").value = "";
  });
  $("share").addEventListener("click", async () => {
    writeHash();
    try { await navigator.clipboard.writeText(location.href); $("status").textContent = "link copied"; } catch (e) { prompt("Copy this link:", location.href); }
  });
  $("reset").addEventListener("click", () => load({ ...view.req, set: [] }));
  $("first").addEventListener("click", () => { stop(); setCursor(0); });
  $("back").addEventListener("click", () => { stop(); setCursor(view.cursor - 1); });
  $("fwd").addEventListener("click", () => { stop(); setCursor(view.cursor + 1); });
  $("play").addEventListener("click", togglePlay);
  $("scrub").addEventListener("input", () => { stop(); setCursor(Number($("scrub").value)); });
  $("zoom").addEventListener("change", () => { $("zoom").blur(); draw(); writeHash(); });
  $("speed").addEventListener("change", () => { $("speed").blur(); if (view.playing) { stop(); togglePlay(); } });
  window.addEventListener("resize", () => { view.size = null; if (view.run) draw(); });
  document.addEventListener("keydown", (ev) => {
    if (!view.run || ev.target.closest("input, select, textarea")) return;
    if (ev.key === "ArrowRight") { stop(); setCursor(view.cursor + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { stop(); setCursor(view.cursor - 1); ev.preventDefault(); }
    else if (ev.key === " ") { togglePlay(); ev.preventDefault(); }
    else if (ev.key === "Home") { stop(); setCursor(0); ev.preventDefault(); }
    else if (ev.key === "End") { stop(); setCursor(view.run.replay.steps.length - 1); ev.preventDefault(); }
  });
  window.addEventListener("hashchange", () => {
    const h = readHash();
    if (JSON.stringify(h.req) !== JSON.stringify(view.req)) start(h);
  });
  start(readHash());
}

function start(h) {
  if (h.zoom && [...$("zoom").options].some((o) => o.value === h.zoom)) $("zoom").value = h.zoom;
  load(h.req, h.t);
}

main().catch((err) => showError(err.message));
