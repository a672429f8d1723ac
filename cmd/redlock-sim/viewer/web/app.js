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
  openGroups: new Set(), // the what-if panel's knob groups the user opened
  anchor: null,         // the logical moment the cursor is at (anchorOf), kept over what-if reruns
  playT: null,          // while playing in proportional time: the true time shown
};

// clientColor gives client j its colour: the Okabe–Ito palette for the first eight, then
// hues a golden angle apart at alternating lightness, so that no two clients of any number
// share a colour and neighbours differ in greyscale too.
function clientColor(j) {
  if (j < 0) return "#969696";
  if (j < CLIENT_COLORS.length) return CLIENT_COLORS[j];
  const h = (j * 137.508) % 360, l = j % 2 ? 0.32 : 0.62;
  return hslHex(h, 0.7, l);
}
function hslHex(h, s, l) {
  const f = (n) => {
    const k = (n + h / 30) % 12, a = s * Math.min(l, 1 - l);
    const c = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255).toString(16).padStart(2, "0");
  };
  return "#" + f(0) + f(8) + f(4);
}
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

// lockOf is what governs the run's lock (report.LockSettings): a Redis lock's TTL, or
// another service's settings; service is "" for Redis.
function lockOf(run) { return (run || view.run).replay.timeline.lock || {}; }
// isService says the lock is another service's alone (Curator's on ZooKeeper): no keys,
// no votes, no validity to count down. The hybrid lock has Redis nodes beside its
// ensemble, and reads as Redlock where it takes its keys.
function isService(run) {
  const r = run || view.run;
  return !!lockOf(r).service && !r.replay.timeline.nodes.some((n) => !n.service);
}
// token renders a fencing token as the lock's tokens read: a ZooKeeper czxid as the zxid
// ZooKeeper prints (0x100000004: epoch 1, counter 4), else the whole number.
function token(t, run) {
  if (lockOf(run).tokens !== "zxid") return String(t);
  return "0x" + Number(t).toString(16);
}
// zxidWords says a zxid as its two halves: "epoch 1 · counter 4".
function zxidWords(t) {
  const n = Number(t), epoch = Math.floor(n / 2 ** 32);
  return "epoch " + epoch + " · counter " + (n - epoch * 2 ** 32);
}

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
  const t = p.get("t"), e = p.get("e"), msg = p.get("msg");
  const pos = {};
  if (e !== null && Number.isInteger(Number(e))) pos.e = Number(e);
  else if (t !== null) pos.t = Math.round(Number(t) * 1e9); // a link from before events were named
  if (msg !== null && Number.isInteger(Number(msg))) pos.msg = Number(msg);
  return { req, pos, zoom: p.get("zoom"), compare: p.get("compare") };
}
function writeHash() {
  if (!view.req) return;
  const p = new URLSearchParams();
  if (view.req.file !== undefined) p.set("file", b64encode(view.req.file)); else p.set("scenario", view.req.scenario);
  p.set("seed", String(view.req.seed));
  for (const s of view.req.set) p.append("set", s);
  if (view.run && view.run.replay.steps.length) p.set("e", String(view.cursor));
  if (view.selected >= 0) p.set("msg", String(view.selected));
  if ($("zoom").value !== "auto") p.set("zoom", $("zoom").value);
  if (view.compare) p.set("compare", view.compare);
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

// load asks the server for a run and shows it, the cursor at pos ({e: event index, t: a
// time, msg: a selected message}), or by default at the same logical moment as now (the
// anchor). A newer request cancels an older one still in flight (the server stops
// simulating it), so quick what-ifs never show an outdated run.
async function load(req, pos) {
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
    setup(pos);
    loadCompare();
  } catch (err) {
    if (view.inflight !== ctl) return;
    showError(err.message);
    if (!view.run) $("story").textContent = "";
  } finally {
    if (view.inflight === ctl) {
      view.inflight = null;
      delete document.body.dataset.loading;
      $("status").textContent = view.run ? view.run.replay.steps.length + " events · trace " + view.run.record.trace_hash : "";
      if (view.run && view.cursorNote) $("status").textContent = view.cursorNote;
    }
  }
}

function showError(msg) {
  const e = $("error");
  e.hidden = !msg;
  e.textContent = msg || "";
}

// ---- a run arrives ----

function setup(pos) {
  const run = view.run, rp = run.replay, tl = rp.timeline;
  stop();
  view.selected = -1;
  view.unfinished = unfinishedAttempts();
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
  renderStory();
  const scrub = $("scrub");
  scrub.max = Math.max(0, rp.steps.length - 1);
  const zoomOpt = $("zoom").querySelector('option[value="auto"]');
  zoomOpt.textContent = run.crop_ns[0] > 0 || run.crop_ns[1] < tl.duration_ns ? "crop " + secs(run.crop_ns[0], 2) + "–" + secs(run.crop_ns[1], 2) : "whole run";
  view.cursorNote = "";
  let c = 0;
  if (pos && pos.e !== undefined) c = Math.max(0, Math.min(rp.steps.length - 1, pos.e));
  else if (pos && pos.t !== undefined && pos.t !== null) c = stepAtOrBefore(pos.t);
  else if (view.anchor) c = findAnchor(view.anchor);
  renderVerdict();
  renderWhatIf();
  renderLegend();
  renderExercise();
  view.cursor = -1;
  setCursor(c, !pos);
  if (pos && pos.msg !== undefined && rp.messages[pos.msg]) { view.selected = pos.msg; renderMessage(); draw(); writeHash(); }
  document.body.dataset.ready = String((Number(document.body.dataset.ready) || 0) + 1);
}

// setCursor moves the cursor to step i. keepAnchor (a what-if's rerun) leaves the logical
// moment it was asked for as it was, so that undoing the what-if finds it again even when
// this run lacks it; any other move makes step i the moment to keep.
function setCursor(i, keepAnchor) {
  const steps = view.run.replay.steps;
  if (!steps.length) { draw(); return; }
  i = Math.max(0, Math.min(steps.length - 1, i));
  const changed = i !== view.cursor;
  view.cursor = i;
  if (!keepAnchor || !view.anchor) { view.anchor = anchorOf(i); if (!keepAnchor) view.cursorNote = ""; }
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
  if (view.playing && view.playing.interval) clearInterval(view.playing.interval);
  if (view.playing && view.playing.frame) cancelAnimationFrame(view.playing.frame);
  const was = view.playing;
  view.playing = null;
  view.playT = null;
  $("play").textContent = "▶ play";
  if (was && was.frame !== undefined && view.run) draw();
}

// togglePlay plays the run in proportional time (the speed is simulated seconds per
// second: a 1.5 s pause takes as long as 1.5 s of traffic), messages in flight drawn as
// they travel; or one event at a time, at the speed "event by event".
function togglePlay() {
  if (view.playing) { stop(); return; }
  if (!view.run) return;
  const steps = view.run.replay.steps;
  if (view.cursor >= steps.length - 1) setCursor(0);
  $("play").textContent = "⏸ pause";
  const speed = $("speed").value;
  if (speed.startsWith("ev")) {
    view.playing = { interval: setInterval(() => {
      if (view.cursor >= steps.length - 1) { stop(); return; }
      setCursor(view.cursor + 1);
    }, Number(speed.slice(2))) };
    return;
  }
  const rate = Number(speed), end = view.run.replay.timeline.duration_ns;
  view.playT = steps[view.cursor].at_ns;
  let last = null;
  const frame = (now) => {
    if (!view.playing) return;
    if (last !== null) view.playT += (now - last) * 1e6 * rate;
    last = now;
    const lastStep = steps[steps.length - 1].at_ns;
    if (view.playT >= Math.min(end, lastStep)) { view.playT = null; setCursor(steps.length - 1); stop(); return; }
    const c = stepAtOrBefore(view.playT);
    if (c !== view.cursor) setCursor(c); else draw();
    view.playing.frame = requestAnimationFrame(frame);
  };
  view.playing = { frame: requestAnimationFrame(frame) };
}

// stepAtOrBefore returns the last step at or before true time t (the first step before them all).
function stepAtOrBefore(t) {
  const steps = view.run.replay.steps;
  let lo = 0, hi = steps.length - 1;
  if (!steps.length || steps[0].at_ns > t) return 0;
  while (lo < hi) {
    const m = (lo + hi + 1) >> 1;
    if (steps[m].at_ns <= t) lo = m; else hi = m - 1;
  }
  return lo;
}

// ---- the cursor's logical moment, kept over what-if reruns ----

// stepKey names what a step is about, independently of when it happens: a violation by
// its kind and clients, any other line by its actor and its first words ("client2
// acquired", "redis3 crash", "client1 ← redis3:").
function stepKey(st) {
  if (st.violation >= 0) {
    const v = view.run.replay.timeline.violations[st.violation];
    return "violation " + v.kind + " " + v.first + " " + v.second;
  }
  return st.actor + " " + st.text.split(" ").slice(0, 2).join(" ");
}

// anchorOf is the logical moment of step i: its key, which of the steps with that key it
// is (the n-th), its time, and the step's words for a note.
function anchorOf(i) {
  const steps = view.run.replay.steps, key = stepKey(steps[i]);
  let n = 0;
  for (let j = 0; j < i; j++) if (stepKey(steps[j]) === key) n++;
  const st = steps[i];
  const what = st.violation >= 0 ? violationText(view.run.replay.timeline.violations[st.violation]) : st.actor + " " + st.text.split(" ")[0];
  return { key, n, t: st.at_ns, what };
}

// findAnchor finds anchor a in the run shown: the same violation or the same actor's n-th
// such event, or else the last step at or before its time, and says so (view.cursorNote).
function findAnchor(a) {
  const steps = view.run.replay.steps;
  let n = 0;
  for (let j = 0; j < steps.length; j++) {
    if (stepKey(steps[j]) !== a.key) continue;
    if (n === a.n) { view.cursorNote = ""; return j; }
    n++;
  }
  const c = stepAtOrBefore(a.t);
  view.cursorNote = "the cursor's event (" + a.what + ") is not in this run: the cursor is at the nearest time, " + secs(steps[c].at_ns);
  return c;
}

// jump moves the cursor to the next (dir 1) or previous (dir -1) step that is a fault, a
// violation or an acquisition.
function jump(what, dir) {
  const steps = view.run.replay.steps;
  const is = {
    fault: (s) => s.marker === "!!",
    violation: (s) => s.violation >= 0 && !isFenced(s.violation),
    acquire: (s) => /^acquired\b/.test(s.text) && view.laneOf.has(s.actor),
  }[what];
  for (let i = view.cursor + dir; i >= 0 && i < steps.length; i += dir) {
    if (is(steps[i])) { stop(); setCursor(i); return true; }
  }
  $("status").textContent = "no " + (dir > 0 ? "later " : "earlier ") + what;
  return false;
}

function isFenced(k) {
  const v = view.run.replay.timeline.violations[k];
  return !!v && v.kind === "fenced_write_rejected";
}

// ---- the story and the verdict panel ----

// renderStory shows the story, its expected outcome, and whether this run keeps to it: a
// what-if can make a run depart from the story, and the page must not claim otherwise.
function renderStory() {
  const run = view.run, story = $("story");
  story.textContent = "";
  story.append(el("b", {}, run.scenario.name + ": "), run.scenario.story + " ");
  const lk = lockOf(run);
  if (lk.service) story.append(el("span", { class: "expect", id: "lock-settings" }, "The lock: " + lk.algorithm + " on " + (isService(run) ? "" : "Redis and ") + lk.service + ", " + (lk.settings || []).join(", ") +
    (lk.tokens === "zxid" ? "; its fencing token is the lock node's czxid, a zxid (0x100000004: epoch 1, counter 4)" : "") + ". "));
  if (run.scenario.expect) {
    const check = run.check || [];
    const missed = check.filter((c) => !c.held);
    const exp = el("span", { class: "expect", id: "expect" });
    const own = !view.req.set.length;
    const why = own ? "with seed " + run.seed : "with " + view.req.set.join(", ");
    exp.textContent = (own ? "Expected: " : "Expected with the story's own settings: ") + run.scenario.expect + ". ";
    if (!check.length) { if (!own) exp.append("Your settings depart from the story's: " + view.req.set.join(", ") + "."); }
    else if (!missed.length) exp.append(own ? "This run shows it." : "This run, " + why + ", still shows it.");
    else exp.append(el("b", { class: "departs" }, "This run, " + why + ", departs from it (" + missed.map((c) => c.rule).join("; ") + ": not so here)."));
    story.append(exp);
  }
  if (run.replay_note) story.append(" ", el("span", { class: "expect", id: "replay-note" }, run.replay_note));
}

// unfinishedAttempts lists the acquire attempts still going on at the run's end, which the
// record's liveness figures (finished attempts) and the timeline leave out: for each, the
// client, when it began and the OKs it has.
function unfinishedAttempts() {
  const rp = view.run.replay, out = [];
  if (rp.truncated || !rp.steps.length) return out;
  const last = rp.states[rp.steps[rp.steps.length - 1].state];
  rp.timeline.clients.forEach((c, j) => {
    const cs = last.clients[j];
    if (!cs || cs.status !== "acquiring") return;
    let from = -1, oks = 0, waits = "";
    const watch = new RegExp("^← " + c.name + ": (?:get|exists) \\S*-lock-0*(\\d+) watch$");
    rp.steps.forEach((s, i) => {
      if (isService() && s.actor !== c.name) { // a ZooKeeper lock: the node it watches
        const m = from >= 0 && watch.exec(s.text);
        if (m) waits = m[1];
        return;
      }
      if (s.actor !== c.name) return;
      if (/^acquire-start\b/.test(s.text) || /^attempt-ended\b/.test(s.text)) { from = i; oks = 0; waits = ""; }
      else if (/^← \S+: OK$/.test(s.text)) oks++;
    });
    if (from >= 0) out.push({ client: j, name: c.name, from_ns: rp.steps[from].at_ns, oks, waits });
  });
  return out;
}

function renderVerdict() {
  const run = view.run, box = $("verdict");
  box.textContent = "";
  box.append(el("h2", {}, "Verdict"));
  const lockSafe = run.record.safety.lock_safe, resSafe = run.record.safety.resource_safe;
  box.append(el("div", { class: "v " + (lockSafe ? "safe" : "unsafe"), id: "lock-verdict" }, "lock: " + run.lock_verdict));
  box.append(el("div", { class: "v " + (resSafe ? "safe" : "unsafe"), id: "resource-verdict" }, "resource: " + run.resource_verdict));
  const lv = run.record.liveness;
  const live = [lv.acquired + " acquired in " + lv.attempts + " finished attempt" + (lv.attempts === 1 ? "" : "s")];
  if (lv.acquire_latency_ms && lv.acquire_latency_ms.max !== null) live.push("slowest acquire " + ms(lv.acquire_latency_ms.max * 1e6));
  if (!isService()) live.push(lv.split_brain_rounds + " split-brain round" + (lv.split_brain_rounds === 1 ? "" : "s")); // a ZooKeeper lock takes no votes
  const lvBox = el("div", { id: "liveness", class: "live" }, "liveness: " + live.join(" · "));
  for (const u of view.unfinished) {
    lvBox.append(el("div", { class: "unfinished" }, u.name + "'s attempt from " + secs(u.from_ns) + " is unfinished at the run's end, " + (isService()
      ? (u.waits ? "waiting on lock node " + u.waits + " (its watch has not fired)" : "still without the lock")
      : "with " + u.oks + " OK" + (u.oks === 1 ? "" : "s") + " of " + run.replay.timeline.nodes.length + " so far (it waits for replies that never come)")));
  }
  box.append(lvBox);
  const vs = run.replay.timeline.violations || [];
  const ul = el("ul", { id: "violations" }), fenced = el("ul", { id: "fenced" });
  vs.forEach((v, k) => {
    const step = run.replay.steps.findIndex((s) => s.violation === k);
    const label = violationText(v) + " at " + v.start_s.toFixed(3) + " s";
    const b = el("button", { type: "button", "data-violation": String(k), title: (v.faults || []).join("\n") || "no fault in effect" }, label);
    b.addEventListener("click", () => { stop(); if (step >= 0) setCursor(step); });
    const li = el("li");
    li.append(b);
    (v.kind === "fenced_write_rejected" ? fenced : ul).append(li);
  });
  if (!ul.children.length) ul.append(el("li", {}, "No violation in this run."));
  box.append(ul);
  if (fenced.children.length) {
    box.append(el("h3", {}, "Fencing at work (not violations: the storage refused the stale writes)"));
    box.append(fenced);
  }
}

// violationText says a violation in words: who overlapped with whom, or whose write was
// stale because whom held the lock.
function violationText(v) {
  switch (v.kind) {
    case "stale_write": return "stale write by " + v.first + " (" + v.second + " held the lock)";
    case "fenced_write_rejected": return "the storage rejected " + v.first + "'s stale write (" + v.second + " held the lock)";
    default: return v.kind.replace(/_/g, " ") + ": " + v.first + " and " + v.second;
  }
}

function markActiveViolation() {
  const st = view.run.replay.steps[view.cursor];
  document.querySelectorAll("#verdict button[data-violation]").forEach((b) => b.classList.toggle("active", st && Number(b.dataset.violation) === st.violation));
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
    const cls = [s.violation >= 0 && isFenced(s.violation) ? "fenced" : s.kind === "violations" ? "violation" : s.kind === "faults" ? "fault" : "",
      s.cleanup ? "cleanup" : "", i === view.cursor ? "current" : ""].filter(Boolean).join(" ");
    const text = (s.at_ns / 1e9).toFixed(3).padStart(8) + "s " + (s.marker || "  ") + " " + s.actor.padEnd(9) + " " + (s.local || "").padEnd(16) + " " + s.text;
    const li = el("li", { class: cls, "data-step": String(i), title: s.clock ? "no event marks a clock jump: the viewer adds this line where it happens (run --trace has none)" : "" }, text);
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
  const ct = el("table", { id: "clients" });
  const svc = isService();
  ct.append(row("th", ["client", "state", svc ? "holds" : "believes valid for", "token", "clock"]));
  tl.clients.forEach((c, j) => {
    const cs = s.clients[j];
    const tr = el("tr", { "data-client": c.name });
    const name = el("td");
    name.append(clientChip(j, c.name));
    tr.append(name);
    tr.append(el("td", {}, cs.status + (cs.paused ? ", PAUSED" : "")));
    const v = el("td", { class: "num" });
    if (svc) { // no validity to count down: a ZooKeeper lock is held while its session lives
      v.textContent = cs.valid_ns ? "yes" : "—";
      v.title = "a ZooKeeper lock has no validity: it is held while its session lives";
    }
    else if (cs.valid_ns > 0) v.textContent = ms(cs.valid_ns);
    else if (cs.valid_ns < 0) { v.textContent = "expired " + ms(-cs.valid_ns) + " ago"; v.className += " warn"; }
    else v.textContent = "—";
    tr.append(v);
    const tk = el("td", { class: "num" }, cs.token ? token(cs.token) : "—");
    if (cs.token && lockOf().tokens === "zxid") tk.title = "the czxid: " + zxidWords(cs.token);
    tr.append(tk);
    tr.append(skew(cs.mono_ns - st.at_ns - rp.states[0].clients[j].mono_ns + rp.steps[0].at_ns));
    ct.append(tr);
  });
  box.append(ct);
  const tokens = s.tokens || [];
  const highest = tokens.some((t) => t > 0) ? tokens.map((t) => token(t)).join(", ") : "none yet";
  box.append(el("p", { id: "storage" }, "Storage: highest fencing token accepted: " + highest));
  // the clients first: what they believe and their tokens stay above the fold at 720p
  const nt = el("table", { id: "nodes" });
  nt.append(row("th", svc ? ["server", "state", "role", "", "clock"] : ["node", "state", "key held by", "PTTL", "clock"]));
  tl.nodes.forEach((n, i) => {
    const ns = s.nodes[i];
    const tr = el("tr", { "data-node": n.name });
    tr.append(el("td", {}, n.name));
    tr.append(el("td", { class: ns.status === "up" ? "" : "down" }, ns.status));
    const keys = ns.keys || [];
    const held = el("td");
    if (svc || ns.role) held.textContent = ns.role || "—";
    else if (!keys.length) held.textContent = "—";
    for (const k of keys) {
      const who = k.client >= 0 ? tl.clients[k.client].name : "?";
      const chip = clientChip(k.client, (keys.length > 1 ? k.resource + ": " : "") + who);
      chip.title = "GET " + k.resource + " → " + k.value;
      held.append(chip, " ");
    }
    tr.append(held);
    tr.append(el("td", { class: "num" }, keys.map((k) => (k.pttl_ms < 0 ? "no TTL" : k.pttl_ms + " ms")).join(" ") || ""));
    tr.append(skew(ns.wall_ns - st.at_ns - rp.states[0].nodes[i].wall_ns + rp.steps[0].at_ns));
    nt.append(tr);
  });
  box.append(nt);
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

// renderWhatIf shows the settings in effect (from the panel or the link alike), the story's
// own parameters, and every knob that can change this run: searchable, grouped as the
// registry groups them, the stories' common ones first. A knob that cannot change the run
// (the server asks experiments.CheckInert, as run --set does) is left out, and listed.
function renderWhatIf() {
  const run = view.run, sets = currentSets();
  const pbox = $("params"), kbox = $("knobs"), effect = $("in-effect");
  pbox.textContent = "";
  kbox.textContent = "";
  effect.textContent = "";
  effect.append(el("span", { class: "label" }, "In effect: "));
  if (!view.req.set.length) effect.append(el("span", { class: "none" }, "the story's own settings"));
  for (const [name, value] of sets) {
    const p = run.scenario.params.find((q) => q.name === name);
    const was = p ? p.default : undefined;
    const chip = el("span", { class: "setting", "data-setting": name }, name + " = " + value + (was !== undefined ? " (story: " + was + ")" : ""));
    const x = el("button", { type: "button", class: "unset", title: "back to the story's value", "aria-label": "unset " + name }, "×");
    x.addEventListener("click", () => whatIf(name, ""));
    chip.append(x);
    effect.append(chip);
  }
  for (const p of run.scenario.params) {
    const value = sets.has(p.name) ? sets.get(p.name) : p.default;
    pbox.append(control(p.name, value, p.default, null, p.help, sets.has(p.name)));
  }
  if (!run.scenario.params.length) pbox.append(el("p", { class: "help" }, "This story has no parameters of its own; every knob below can change it."));
  const search = el("input", { id: "knob-search", type: "search", placeholder: "find a knob: jitter, timeout, hold…", "aria-label": "find a knob", spellcheck: "false" });
  search.value = view.knobQuery || "";
  kbox.append(search);
  const groups = new Map();
  const inert = run.inert || {};
  let left = [];
  for (const k of view.catalogue.knobs) {
    if (inert[k.name] && !sets.has(k.name)) { left.push(k.name + ": " + inert[k.name]); continue; }
    const g = k.common ? "used by the stories" : k.group;
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(k);
  }
  for (const [g, ks] of groups) {
    const details = el("details", { class: "knob-group", "data-group": g });
    const key = "open:" + g;
    if (ks.some((k) => sets.has(k.name)) || view.openGroups.has(key)) details.open = true;
    details.addEventListener("toggle", () => { if (details.open) view.openGroups.add(key); else view.openGroups.delete(key); });
    details.append(el("summary", {}, g + " (" + ks.length + ")"));
    for (const k of ks) {
      const value = sets.has(k.name) ? sets.get(k.name) : run.record.config[k.name];
      details.append(control(k.name, value, run.record.config[k.name], k.choices, k.help + " (" + k.allowed + ")", sets.has(k.name)));
    }
    kbox.append(details);
  }
  if (left.length) {
    const d = el("details", { id: "inert-knobs" });
    d.append(el("summary", {}, left.length + " knobs left out: they cannot change this run"));
    const ul = el("ul");
    for (const t of left) ul.append(el("li", {}, t));
    d.append(ul);
    kbox.append(d);
  }
  search.addEventListener("input", () => filterKnobs(search.value));
  if (search.value) filterKnobs(search.value);
}

// filterKnobs shows the knobs whose name or help has q, and opens their groups.
function filterKnobs(q) {
  view.knobQuery = q;
  q = q.trim().toLowerCase();
  for (const d of document.querySelectorAll("#knobs details.knob-group")) {
    let any = false;
    for (const label of d.querySelectorAll("label")) {
      const hit = !q || label.textContent.toLowerCase().includes(q);
      label.hidden = !hit;
      any = any || hit;
    }
    d.hidden = !any;
    if (q && any) d.open = true;
  }
}

function control(name, value, initial, choices, help, changed) {
  const label = el("label", {}, "");
  label.append(el("span", { class: "name" }, name));
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

// shownAt is the true time the diagram shows: the played time, or the cursor's.
function shownAt() {
  const rp = view.run.replay;
  if (view.forceT !== undefined && view.forceT !== null) return view.forceT;
  if (view.playT !== null) return view.playT;
  return rp.steps.length ? rp.steps[view.cursor].at_ns : 0;
}

// window_ is the interval of true time the diagram shows: the crop of `run --timeline`
// (while the cursor is in it), the whole run, or a zoom around the cursor.
function window_() {
  if (view.forceWindow) return view.forceWindow;
  const run = view.run, dur = run.replay.timeline.duration_ns, t = shownAt();
  const zv = $("zoom").value;
  if (zv === "auto") {
    const [a, b] = run.crop_ns;
    if (b > a && t >= a && t <= b) return [a, b];
    return [0, dur];
  }
  const z = Number(zv);
  if (!z || z >= dur) return [0, dur];
  let a = t - z * 0.4;
  a = Math.max(0, Math.min(dur - z, a));
  return [a, a + z];
}

// scale is how much larger than its pixels the diagram draws: more on a large screen, most
// in presentation mode, so that its words read from the back of a room.
function scale() {
  if (document.body.classList.contains("present")) return 1.5;
  return window.innerWidth >= 1800 ? 1.3 : 1;
}

// draw draws the diagram. What does not depend on the cursor (lanes, keys, faults,
// violations, the arrows when there are few enough to show) is drawn once per run, window
// and size, in #static; the cursor, the state column and the highlighted messages are
// redrawn in #dynamic on every step, so that stepping through a long run stays quick.
function draw(into) {
  const svg = into || $("diagram");
  if (!view.size) { // read once per size: a read forces a layout
    svg.style.height = "";
    view.size = [svg.clientWidth || 800, svg.clientHeight || 300, scale()];
  }
  const [cw, ch, k] = view.size;
  if (!view.run) { svg.textContent = ""; view.staticKey = ""; return; }
  const rp = view.run.replay, tl = rp.timeline;
  const W = cw / k;
  MARGIN.right = W < 760 ? 150 : 200;
  // Lanes never get thinner than 14 px: with many nodes and clients the diagram grows
  // taller than its box (which scrolls) instead of drawing lanes over one another and
  // over the axis.
  const nLanes = view.lanes.length, minLane = 14;
  const H = Math.max(ch / k, MARGIN.top + MARGIN.bottom + 10 + nLanes * minLane);
  if (H * k > ch + 1) svg.style.height = Math.ceil(H * k) + "px";
  const [t0, t1] = window_();
  const key = [view.runNo, t0, t1, W, H].join("|");
  const x = (t) => MARGIN.left + ((t - t0) / (t1 - t0)) * (W - MARGIN.left - MARGIN.right);
  const inView = (a, b) => b >= t0 && a <= t1;
  const clampX = (t) => x(Math.max(t0, Math.min(t1, t)));
  const n = view.lanes.length;
  const gap = 10;
  const laneH = Math.max(minLane, Math.min(44, (H - MARGIN.top - MARGIN.bottom - gap) / n));
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
  // Where they do not fit, arrows are grouped: one per sender, receiver and few pixels of
  // sending time, as thick as it is many.
  if (key !== view.staticKey) {
    view.staticKey = key;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.textContent = "";
    view.markRows = new Map();
    drawStatic(sv("g", { id: "static" }, svg), { W, H, t0, t1, x, inView, clampX, laneH, y, mid, visible, showAll });
    sv("g", { id: "dynamic" }, svg);
  }
  drawDynamic(svg, { W, H, t0, t1, x, y, mid, visible, showAll });
  if (!into && view.other) drawOther();
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
  // network faults: a band on the lanes they cut, saying from whom (the cuts of one lane
  // that start together in one label: "cut from redis4, redis5")
  const cuts = new Map(); // lane and start → the label's words
  for (const f of tl.net_faults || []) {
    if (!inView(f.from_ns, f.to_ns)) continue;
    if (f.text === undefined) f.text = f.Text || f.kind; // the timeline's field has no JSON name of its own
    const ks = [f.a, f.b].map((nm) => view.laneOf.get(nm)).filter((k) => k !== undefined);
    for (const k of ks.length ? ks : view.lanes.map((_, i) => i)) {
      const x0 = clampX(f.from_ns), w = Math.max(1, clampX(f.to_ns) - x0);
      title(sv("rect", { class: "cut", x: x0, y: view.lanes[k].y, width: w, height: laneH, fill: "#dfe3f3" }, svg), f.text);
      const other = view.lanes[k].name === f.a ? f.b : f.a;
      const key = k + "|" + Math.round(x0) + "|" + (f.kind === "clog" ? "clog" : "cut");
      const c = cuts.get(key) || { k, x0, w, others: [], kind: f.kind, text: f.text };
      if (other && !c.others.includes(other)) c.others.push(other);
      c.w = Math.max(c.w, w);
      cuts.set(key, c);
    }
  }
  view.cutLabels = []; // drawn over the lanes, once they are drawn
  const rows = new Map(); // lane → the right ends of its labels, so that they stack
  for (const c of cuts.values()) {
    const words = c.others.length ? (c.kind === "clog" ? "clogged to " : "cut from ") + c.others.join(", ") : c.kind === "isolate" ? "cut from everyone" : c.text || "network fault";
    const row = rows.get(c.k) || [];
    const slot = row.filter((r) => r > c.x0 - 4).length;
    if (c.w > 60 && laneH >= 16 && (slot === 0 || (slot === 1 && laneH >= 30))) {
      view.cutLabels.push({ x: c.x0 + 3, y: view.lanes[c.k].y + 11 + slot * 11, words });
      row.push(c.x0 + words.length * 6.5);
      rows.set(c.k, row);
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
      if (g.ownerSVGElement.id !== "diagram") return;
      const step = rp.steps.findIndex((s) => s.violation === k);
      if (step >= 0) { stop(); setCursor(step); }
    });
  });
  // lanes
  view.lanes.forEach((l, k) => {
    const ly = l.y, h = l.h;
    const lab = sv("text", { class: "lane-label", x: 6, y: ly + h / 2 + Math.min(5, h / 3) }, svg);
    lab.textContent = l.name;
    if (h < 18) lab.style.fontSize = Math.max(9, h - 2) + "px"; // thin lanes (many actors): labels that do not overlap
    sv("line", { x1: MARGIN.left, x2: W - MARGIN.right, y1: ly + h / 2, y2: ly + h / 2, stroke: "#ddd" }, svg);
    if (l.kind === "node") {
      const nl = tl.nodes[l.i];
      for (const s of nl.down || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + 2, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h - 4, fill: "#cdcdcd" }, svg), "down");
      for (const s of nl.paused || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { x: clampX(s.from_ns), y: ly + 2, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h - 4, fill: "url(#hatch)" }, svg), "paused");
      // a ZooKeeper server's role: a band along the lane's top, labelled where it fits
      for (const r of nl.roles || []) {
        if (!inView(r.from_ns, r.to_ns)) continue;
        const x0 = clampX(r.from_ns), w = Math.max(1, clampX(r.to_ns) - x0), words = r.role === "leader" ? "leader, epoch " + r.epoch : r.role === "looking" ? "election" : "follower";
        title(sv("rect", { class: "role " + r.role, x: x0, y: ly + 1, width: w, height: Math.max(4, h * 0.22), fill: ROLES[r.role] || "#eee", stroke: "#999", "stroke-width": 0.5 }, svg), words + ", " + secs(r.from_ns) + " to " + secs(r.to_ns));
        if (w > words.length * 6.5 + 6 && h >= 26) sv("text", { class: "role-label", x: x0 + 3, y: ly + 1 + Math.max(4, h * 0.22) + 10, "font-size": 11, fill: "#555", "pointer-events": "none" }, svg).textContent = words;
      }
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
      // the pause first, as a background: what the client believed and did during it
      // stays readable on top of the hatching
      for (const s of cl.pauses || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { class: "pause", x: clampX(s.from_ns), y: ly + 1, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h - 2, fill: "url(#hatch)", "fill-opacity": 0.55, stroke: "#555" }, svg), "stop-the-world pause " + ms(s.to_ns - s.from_ns));
      for (const s of cl.validity || []) {
        if (!inView(s.from_ns, s.to_ns)) continue;
        title(sv("rect", { class: "validity", x: clampX(s.from_ns), y: ly + 2, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h * 0.4, fill: c, "fill-opacity": 0.3, stroke: c }, svg), "believes it holds the lock, " + secs(s.from_ns) + " to " + secs(s.to_ns));
        // where the validity ends inside a pause or while the client still works, say so:
        // it is the contrast a class must see
        const working = (cl.work || []).some((wk) => wk.from_ns < s.to_ns && wk.to_ns > s.to_ns + 1e6);
        if (working && s.to_ns >= t0 && s.to_ns <= t1) {
          sv("line", { class: "validity-end", x1: x(s.to_ns), x2: x(s.to_ns), y1: ly, y2: ly + h, stroke: RED, "stroke-width": 2, "stroke-dasharray": "4 2" }, svg);
          if (h >= 18) sv("text", { class: "mark-label validity-end-label", x: x(s.to_ns) + 3, y: ly + h * 0.4 - 1, fill: RED }, svg).textContent = (isService() ? "lock lost " : "validity ends ") + secs(s.to_ns); // a ZooKeeper lock ends when Curator says LOST
        }
      }
      for (const s of cl.work || []) if (inView(s.from_ns, s.to_ns)) title(sv("rect", { class: "work", x: clampX(s.from_ns), y: ly + h * 0.5, width: Math.max(1, clampX(s.to_ns) - clampX(s.from_ns)), height: h * 0.3, fill: c }, svg), "working on the resource, " + secs(s.from_ns) + " to " + secs(s.to_ns));
      for (const a of cl.attempts || []) if (inView(a.from_ns, a.to_ns)) title(sv("rect", { class: "attempt " + (a.won ? "won" : "lost"), x: clampX(a.from_ns), y: ly + h * 0.8, width: Math.max(5, clampX(a.to_ns) - clampX(a.from_ns)), height: Math.max(5, h * 0.2), fill: a.won ? c : "#9a9a9a", stroke: "#333", "stroke-width": 0.8 }, svg), "attempt: " + (a.won ? "won" : "lost, " + a.reason) + (a.text ? " (" + a.text + ")" : " (" + a.oks + "/" + tl.nodes.length + " OK)"));
      for (const u of view.unfinished) if (u.client === l.i && inView(u.from_ns, t1)) title(sv("rect", { class: "attempt unfinished", x: clampX(u.from_ns), y: ly + h * 0.8, width: Math.max(5, clampX(tl.duration_ns) - clampX(u.from_ns)), height: Math.max(5, h * 0.2), fill: "#fff", stroke: "#333", "stroke-width": 1.2, "stroke-dasharray": "4 3" }, svg), "attempt unfinished at the run's end (" + (isService() ? (u.waits ? "waiting on lock node " + u.waits : "no lock yet") : u.oks + "/" + tl.nodes.length + " OK so far") + ")");
      const lost = (cl.attempts || []).filter((a) => !a.won && inView(a.from_ns, a.to_ns)).length;
      if (lost >= 3 && h >= 18) {
        const first = (cl.attempts || []).find((a) => !a.won && inView(a.from_ns, a.to_ns));
        sv("text", { class: "mark-label", x: clampX(first.from_ns), y: ly + h * 0.8 - 2, fill: "#444" }, svg).textContent = lost + " attempts lost";
      }
      // writes: several at one pixel stand side by side, so two stale writes read as two
      const placed = new Map();
      let lastTok = null; // a zxid token's label, and where: the same one close by is not written again
      for (const w of cl.writes || []) {
        const at = w.arrived ? w.at_ns : w.sent_ns;
        if (!inView(at, at)) continue;
        const px0 = Math.round(x(at));
        const n = placed.get(px0) || 0;
        placed.set(px0, n + 1);
        const px = px0 + n * 11, cy = ly + h * 0.62;
        const tok = w.token ? " (token " + token(w.token) + ")" : "";
        if (w.stale) title(sv("path", { class: "write stale", d: "M " + px + " " + (cy - 7) + " l 7 12 l -14 0 z", fill: RED, stroke: "#000" }, svg), "stale write accepted" + tok);
        else if (w.arrived && !w.accepted) title(sv("path", { class: "write rejected", d: "M " + (px - 5) + " " + (cy - 5) + " l 10 10 m 0 -10 l -10 10", stroke: "#000", "stroke-width": 3 }, svg), "write rejected by the storage: its fencing token is old" + tok);
        else title(sv("circle", { class: "write", cx: px, cy, r: 4.5, fill: w.accepted ? "#333" : "#fff", stroke: "#333" }, svg), "write " + (w.arrived ? "accepted" : "lost") + tok);
        const zx = lockOf().tokens === "zxid";
        if (w.token && h >= 22 && !(zx && lastTok && lastTok.t === w.token && px - lastTok.x < 90)) {
          sv("text", { class: "token", x: px, y: cy + 15, "text-anchor": "middle" }, svg).textContent = zx ? token(w.token) : "t" + w.token;
          lastTok = { t: w.token, x: px };
        }
      }
      for (const m of cl.marks || []) drawMark(svg, m, x, inView, ly, h);
    }
  });
  for (const c of view.cutLabels) sv("text", { class: "cut-label", x: c.x, y: c.y }, svg).textContent = c.words;
  if (showAll) {
    const g = sv("g", { id: "messages" }, svg);
    for (const i of visible) drawMessage(g, rp.messages[i], i, x, mid);
  } else if (visible.length) {
    const g = sv("g", { id: "message-groups" }, svg), groups = new Map();
    for (const i of visible) {
      const m = rp.messages[i], a = view.laneOf.get(m.from), b = view.laneOf.get(m.to);
      const key = a + "|" + b + "|" + Math.round(x(m.sent_ns) / 6);
      const gr = groups.get(key);
      if (gr) { gr.n++; gr.last = i; } else groups.set(key, { i, last: i, n: 1, a, b });
      if (groups.size > 4000) break;
    }
    for (const gr of groups.values()) {
      const m = rp.messages[gr.i], e = rp.messages[gr.last];
      const line = sv("line", { class: "msg-group", "data-msg": String(gr.i), x1: x(m.sent_ns), y1: mid(gr.a), x2: Math.max(x(e.at_ns), x(m.sent_ns) + 2), y2: mid(gr.b),
        stroke: m.kind === "reply" || m.kind === "ack" ? "#999" : "#555", "stroke-width": Math.min(5, 0.8 + Math.log2(gr.n)), "stroke-opacity": 0.6 }, g);
      title(line, (gr.n > 1 ? gr.n + " messages " : "") + m.from + " → " + m.to + (gr.n > 1 ? " (zoom in to see each)" : ": " + m.text));
      line.addEventListener("click", (ev) => { ev.stopPropagation(); view.selected = gr.i; renderMessage(); draw(); writeHash(); });
    }
  }
  // click empty diagram space: move the cursor to that time
  if (svg.ownerSVGElement.id !== "diagram") return; // the compared run follows the first's cursor
  svg.ownerSVGElement.onclick = (ev) => {
    if (ev.target.closest(".msg, .msg-group, .viol-band")) return;
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
    const small = view.lanes.length && view.lanes[0].h < 18 ? Math.max(9, view.lanes[0].h - 2) : 0;
    sv("rect", { x: W - MARGIN.right + 2, y: MARGIN.top - 18, width: MARGIN.right - 4, height: y - MARGIN.top + 20, fill: "#f6f6f4" }, svg);
    sv("text", { x: cx, y: MARGIN.top - 5, "font-size": 13, fill: "#555" }, svg).textContent = "at the cursor";
    view.lanes.forEach((l) => {
      const ty = l.y + l.h / 2 + 5;
      const g = sv("g", { class: "lane-state", "data-lane": l.name }, svg);
      if (l.kind === "node") {
        const ns = s.nodes[l.i], k = (ns.keys || [])[0];
        if (ns.status !== "up") sv("text", { x: cx, y: ty, "font-size": small || 15, "font-style": "italic", fill: "#666" }, g).textContent = ns.status;
        else if (isService() || tl.nodes[l.i].service) sv("text", { x: cx, y: ty, "font-size": small || 15, fill: "#555" }, g).textContent = ns.role || "up";
        else if (!k) sv("text", { x: cx, y: ty, "font-size": small || 15, fill: "#999" }, g).textContent = "no key";
        if (k) {
          const c = clientColor(k.client), name = k.client >= 0 ? tl.clients[k.client].name : "?";
          const x0 = ns.status === "up" ? cx : cx + 62;
          sv("rect", { x: x0, y: l.y + 3, width: 70, height: l.h - 6, rx: 3, fill: c }, g);
          sv("text", { x: x0 + 35, y: ty, "text-anchor": "middle", "font-size": small || 14, "font-weight": "bold", fill: inkOn(c) }, g).textContent = name;
          sv("text", { x: x0 + 76, y: ty, "font-size": small || 14 }, g).textContent = k.pttl_ms < 0 ? "no TTL" : k.pttl_ms + " ms";
        }
      } else {
        const cs = s.clients[l.i];
        let text = cs.paused ? "PAUSED" : cs.status, warn = false;
        if (isService()) { /* a ZooKeeper lock has no validity: it is held while the session lives */ }
        else if (cs.valid_ns > 0) text += " · " + ms(cs.valid_ns);
        else if (cs.valid_ns < 0) { text += " · expired"; warn = true; }
        sv("text", { x: cx, y: ty, "font-size": small || 14, "font-weight": warn ? "bold" : "normal", fill: warn ? RED : "#1a1a1a" }, g).textContent = text;
      }
    });
  }
  // messages in flight at the instant shown, drawn as far as they have travelled
  const T = shownAt();
  if (T >= t0 && T <= t1) {
    const g = sv("g", { id: "in-flight" }, svg);
    // messages are in the order they end: skip those ended by T, then look a little ahead
    let lo = 0, hi = rp.messages.length;
    while (lo < hi) { const k = (lo + hi) >> 1; if (rp.messages[k].at_ns <= T) lo = k + 1; else hi = k; }
    let n = 0;
    for (let i = lo; i < rp.messages.length && i < lo + 3000 && n < 300; i++) {
      const m = rp.messages[i];
      if (m.sent_ns > T || m.fate === "held" || !view.laneOf.has(m.from) || !view.laneOf.has(m.to)) continue;
      const f = (T - m.sent_ns) / Math.max(1, m.at_ns - m.sent_ns);
      const y1 = mid(view.laneOf.get(m.from)), y2 = mid(view.laneOf.get(m.to));
      const hx = x(m.sent_ns) + (x(m.at_ns) - x(m.sent_ns)) * f, hy = y1 + (y2 - y1) * f;
      sv("line", { class: "flight", x1: x(m.sent_ns), y1, x2: hx, y2: hy, stroke: "#e69f00", "stroke-width": 2 }, g);
      title(sv("circle", { class: "flight-head", cx: hx, cy: hy, r: 4, fill: "#e69f00", stroke: "#000" }, g), m.from + " → " + m.to + " in flight: " + m.text);
      n++;
    }
  }
  // the cursor: at the played time while playing, else at the step's
  if (st) {
    sv("line", { id: "cursor", x1: x(T), x2: x(T), y1: MARGIN.top - 16, y2: H - MARGIN.bottom, stroke: "#e69f00", "stroke-width": 2.5 }, svg);
    sv("text", { x: Math.min(W - 60, x(T) + 4), y: 13, "font-size": 13, fill: "#8a5a00" }, svg).textContent = secs(T);
  }
  old.replaceWith(svg);
}

// MARKS are how the diagram draws an instant on a lane, as the static figure's legend
// names them: a glyph, its colour, and whether its words go beside it.
const MARKS = {
  "clock-jump": { color: "#8e24aa" },
  "clock-slew": { color: "#8e24aa" },
  "session-expired": { color: "#8c4614" },
  crash: { color: "#000" },
  restart: { color: "#009e73" },
  failover: { color: "#0072b2" },
  extend: { color: "#555" },
  "extend-failed": { color: RED },
};

// ROLES are the fills of a ZooKeeper server's roles, as the static figure draws them.
const ROLES = { leader: "#f0d78c", follower: "#f4f4f4", looking: "#e3c6ea" };

// drawMark draws an instant on a lane with its words ("crash", "restart, 0 keys", "clock
// +2s"); marks whose words would overlap the previous one's on the lane go a row lower.
function drawMark(svg, m, x, inView, ly, h) {
  if (!inView(m.at_ns, m.at_ns)) return;
  const k = MARKS[m.kind] || { color: "#333" };
  const px = x(m.at_ns);
  const g = sv("g", { class: "mark", "data-kind": m.kind }, svg);
  sv("line", { x1: px, x2: px, y1: ly, y2: ly + h, stroke: k.color, "stroke-width": 2 }, g);
  title(sv("path", { d: "M " + px + " " + (ly + 1) + " l 6 -9 l -12 0 z", fill: k.color }, g), m.text + " at " + secs(m.at_ns));
  if (m.kind === "extend") return; // frequent and quiet: the tooltip is enough
  const lane = (view.markRows = view.markRows || new Map()).get(ly) || [];
  let row = 0;
  while (lane[row] !== undefined && lane[row] > px - 2) row++;
  const words = m.text;
  if (h >= 16 && row < 3) {
    sv("text", { class: "mark-label", x: px + 3, y: ly + 12 + row * 12, fill: k.color }, g).textContent = words;
    lane[row] = px + 3 + words.length * 6.6;
    view.markRows.set(ly, lane);
  }
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
  mg.addEventListener("click", (ev) => { ev.stopPropagation(); if (mg.ownerSVGElement.id !== "diagram") return; view.selected = i; renderMessage(); draw(); writeHash(); });
}

// ---- the legend ----

// renderLegend says what each mark of the diagram means, as the static figure's legend
// does, listing what this run draws.
function renderLegend() {
  const tl = view.run.replay.timeline, box = $("legend");
  box.textContent = "";
  const clients = tl.clients, any = (f) => clients.some(f), nodes = (f) => tl.nodes.some(f);
  const items = [];
  const item = (draw, words, cls) => items.push({ draw, words, cls });
  const c0 = clientColor(0);
  if (!isService()) item((g) => sv("rect", { x: 1, y: 4, width: 26, height: 10, fill: c0, stroke: "#333", "stroke-width": 0.5 }, g), "a node holds the client's key", "key");
  if (nodes((n) => (n.roles || []).some((r) => r.role === "leader"))) item((g) => sv("rect", { x: 1, y: 5, width: 26, height: 6, fill: ROLES.leader, stroke: "#999" }, g), "ZooKeeper leader (its epoch)", "leader");
  if (nodes((n) => (n.roles || []).some((r) => r.role === "looking"))) item((g) => sv("rect", { x: 1, y: 5, width: 26, height: 6, fill: ROLES.looking, stroke: "#999" }, g), "ZooKeeper election", "election");
  item((g) => sv("rect", { x: 1, y: 3, width: 26, height: 8, fill: c0, "fill-opacity": 0.3, stroke: c0 }, g), "validity: the client believes it holds the lock", "validity");
  item((g) => sv("rect", { x: 1, y: 6, width: 26, height: 6, fill: c0 }, g), "working on the resource", "work");
  item((g) => { sv("rect", { x: 1, y: 6, width: 11, height: 6, fill: c0, stroke: "#333" }, g); sv("rect", { x: 15, y: 6, width: 11, height: 6, fill: "#9a9a9a", stroke: "#333" }, g); }, "acquire attempt won / lost", "attempt");
  if (view.unfinished.length) item((g) => sv("rect", { x: 1, y: 6, width: 26, height: 6, fill: "#fff", stroke: "#333", "stroke-dasharray": "4 3" }, g), "attempt unfinished at the run's end", "unfinished");
  if (any((c) => (c.pauses || []).length) || nodes((n) => (n.paused || []).length)) item((g) => sv("rect", { x: 1, y: 2, width: 26, height: 14, fill: "url(#hatch)", stroke: "#555" }, g), "stop-the-world pause", "pause");
  if (nodes((n) => (n.down || []).length)) item((g) => sv("rect", { x: 1, y: 2, width: 26, height: 14, fill: "#cdcdcd" }, g), "node down", "down");
  if ((tl.net_faults || []).length) item((g) => sv("rect", { x: 1, y: 2, width: 26, height: 14, fill: "#dfe3f3" }, g), "network cut (the lane says from whom)", "cut");
  const kinds = new Set();
  for (const l of [...tl.nodes, ...clients]) for (const m of l.marks || []) kinds.add(m.kind);
  const words = { crash: "crash", restart: "restart (its words say the keys it kept)", "clock-jump": "clock step (its words say by how much)", failover: "replica promoted", "extend-failed": "extension failed",
    "session-expired": "the leader expired a session (its ephemeral lock node goes with it)", "clock-slew": "a server's clock starts to slew or drift (its words say how fast)" };
  for (const k of ["crash", "restart", "clock-jump", "clock-slew", "failover", "extend-failed", "session-expired"]) {
    if (!kinds.has(k)) continue;
    item((g) => { sv("line", { x1: 14, x2: 14, y1: 8, y2: 18, stroke: MARKS[k].color, "stroke-width": 2 }, g); sv("path", { d: "M 14 9 l 6 -9 l -12 0 z", fill: MARKS[k].color }, g); }, words[k], "mark-" + k);
  }
  const writes = clients.flatMap((c) => c.writes || []);
  if (writes.length) item((g) => sv("circle", { cx: 14, cy: 9, r: 4.5, fill: "#333" }, g), lockOf().tokens === "zxid" ? "write accepted (0x100000004: its fencing token, the lock node's czxid)" : "write accepted (t1: its fencing token)", "write");
  if (writes.some((w) => w.stale)) item((g) => sv("path", { d: "M 14 2 l 7 12 l -14 0 z", fill: RED, stroke: "#000" }, g), "stale write accepted", "stale");
  if (writes.some((w) => w.arrived && !w.accepted)) item((g) => sv("path", { d: "M 9 4 l 10 10 m 0 -10 l -10 10", stroke: "#000", "stroke-width": 3 }, g), "write rejected (old fencing token)", "rejected");
  if ((tl.violations || []).some((v) => v.kind !== "fenced_write_rejected")) item((g) => sv("rect", { x: 1, y: 2, width: 26, height: 14, fill: RED, "fill-opacity": 0.25 }, g), "violation", "violation");
  item((g) => { sv("line", { x1: 1, y1: 9, x2: 24, y2: 9, stroke: "#333", "stroke-width": 1.3 }, g); sv("path", { d: "M 20 5 L 27 9 L 20 13 z", fill: "#333" }, g); }, "message (dashed: reply)", "message");
  for (const it of items) {
    const span = el("span", { class: "legend-item", "data-legend": it.cls });
    const svg = document.createElementNS(SVGNS, "svg");
    svg.setAttribute("width", "28");
    svg.setAttribute("height", "18");
    svg.setAttribute("aria-hidden", "true");
    it.draw(svg);
    span.append(svg, " " + it.words);
    box.append(span);
  }
}

// ---- exercises ----

// EXERCISES are docs/teaching.md's exercises: a question on screen for each lesson's
// story, its answer revealed on request.
const EXERCISES = {
  "gc-pause": { q: "Step to the first violation. Where does client1 believe it holds the lock after its keys expired, and why can't it know better?",
    a: "Under the pause: its validity ended at 0.99 s (the dashed red line), its keys expired at 1.001 s, but it is frozen until 1.6 s, so it cannot read its clock; the column says PAUSED · expired while every node holds client2's key. It resumes and writes as if it still held the lock." },
  "clock-jump": { q: "Step just after the purple mark on redis3. How long does redis3 think client1's key has left, and how long did it have a moment before?",
    a: "None: redis3's wall clock jumped +2 s at 0.150 s, so the key it set with PX 2000 at 0.000 s has expired on its clock (its clock column reads +2000 ms), although about 1.85 s of the TTL were left in true time." },
  "restart-no-persistence": { q: "Step to redis3's restart. What does it hold, and why does that let client2 in?",
    a: "Nothing: it restarted with 0 keys (no persistence), so it answers client2's SET with OK while client1 still counts redis3 among its three nodes; client2 gets C, D and E, a second majority." },
  "split-brain-no-jitter": { q: "Press v, then a. Why does nobody get the lock for so long, and what would a random retry delay change?",
    a: "There is no violation to jump to: the five clients retry in lockstep and the four live nodes split their votes every round (10 split-brain rounds). With retry_jitter = 1ms the clients drift apart and the rounds fall to 2." },
  "restart-delayed": { q: "Where does client1's validity end, and where does it stop working? What does the red band say?",
    a: "Its validity ends at 1.98 s but it works on to 3.1 s: the red band is a usage overlap, gc-pause's story, which no restart delay can prevent." },
  "zk-gc-pause": { q: "Step to client1's write at 11.031 s, after its pause. Why does the storage accept it, and what would refuse it?",
    a: "client1 sends no token (fence_token none: InterProcessMutex hands out none), so the storage cannot tell its late write from client2's. The leader expired client1's session at 5.000 s, while it was paused, and client2 took the lock at 5.004 s; Curator could not tell client1: a paused process hears nothing. With fence_token = czxid its token is its lock node's czxid, 0x100000004 (epoch 1, counter 4), older than client2's 0x100000006, and the storage refuses it: a zxid only grows." },
  "zk-partitioned-holder": { q: "client1 is cut off at 1.020 s. When does it stop working, and when would it have stopped had it heeded SUSPENDED?",
    a: "At 6.120 s, when Curator says LOST, a whole session (3 s) after SUSPENDED at 3.120 s; meanwhile the leader expired its session at 5.000 s and client2 took the lock at 5.004 s. With on_suspended = stop it stops at 3.120 s, before the expiry: the run is safe." },
};

function renderExercise() {
  const box = $("exercise"), ex = EXERCISES[view.run.scenario.name];
  box.textContent = "";
  box.hidden = !ex;
  if (!ex) return;
  box.append(el("b", {}, "Question: "), ex.q + " ");
  const btn = el("button", { type: "button", id: "show-answer" }, "show the answer");
  const ans = el("span", { id: "answer", hidden: "" }, ex.a);
  btn.addEventListener("click", () => { ans.hidden = !ans.hidden; btn.textContent = ans.hidden ? "show the answer" : "hide the answer"; btn.blur(); });
  box.append(btn, " ", ans);
}

// ---- compare two runs ----

// loadCompare runs the same story with one more setting (the compare field, name=value)
// and draws it under the first, its cursor at the first's time: fencing none against one,
// a pause of 500 ms against 1,500 ms.
async function loadCompare() {
  const box = $("compare-view");
  if (!view.compare || !view.run) { box.hidden = true; view.other = null; return; }
  const [name] = view.compare.split("=");
  const set = view.req.set.filter((s) => s.slice(0, s.indexOf("=")).trim() !== name.trim()).concat([view.compare]);
  const req = { ...view.req, set };
  try {
    const run = await api("/api/run", req);
    view.other = { run, req };
    box.hidden = false;
    $("compare-title").textContent = "with " + view.compare + ": lock " + run.lock_verdict + " · resource " + run.resource_verdict;
    $("compare-title").className = run.record.safety.lock_safe && run.record.safety.resource_safe ? "safe" : "unsafe";
    drawOther();
  } catch (err) {
    box.hidden = true;
    showError("compare " + view.compare + ": " + err.message);
  }
}

// drawOther draws the compared run in the second diagram, sharing the first's window and
// cursor time (the cursors are linked).
function drawOther() {
  if (!view.other) return;
  const keep = { run: view.run, lanes: view.lanes, laneOf: view.laneOf, cursor: view.cursor, selected: view.selected, size: view.size,
    staticKey: view.staticKey, unfinished: view.unfinished, markRows: view.markRows, runNo: view.runNo };
  const t = shownAt(), win = window_();
  try {
    view.run = view.other.run;
    view.runNo = "other" + keep.runNo;
    view.lanes = [];
    view.laneOf = new Map();
    view.run.replay.timeline.nodes.forEach((n, i) => { view.laneOf.set(n.name, view.lanes.length); if (!view.laneOf.has(n.group)) view.laneOf.set(n.group, view.lanes.length); view.lanes.push({ name: n.name, kind: "node", i }); });
    view.run.replay.timeline.clients.forEach((c, j) => { view.laneOf.set(c.name, view.lanes.length); view.lanes.push({ name: c.name, kind: "client", i: j }); });
    view.unfinished = [];
    view.cursor = view.run.replay.steps.length ? stepAtOrBefore(t) : 0;
    view.selected = -1;
    view.staticKey = view.otherKey;
    view.size = null;
    view.forceWindow = win;
    view.forceT = t;
    draw($("diagram2"));
    view.otherKey = view.staticKey;
  } finally {
    view.forceWindow = null;
    view.forceT = null;
    Object.assign(view, keep);
  }
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
    view.anchor = null;
    load({ scenario: sel.value, seed: Number($("seed").value) || 0, set: [] }, { e: 0 });
  });
  $("seed").addEventListener("change", () => {
    const seed = Number($("seed").value);
    if (!Number.isInteger(seed) || seed < 0) { showError("seed " + $("seed").value + ": want a whole number, 0 or more"); return; }
    load({ ...view.req, seed });
  });
  $("open-file").addEventListener("click", () => $("file").click());
  $("file").addEventListener("change", async () => {
    const f = $("file").files[0];
    if (f) { view.anchor = null; load({ file: await f.text(), seed: Number($("seed").value) || 0, set: [] }, { e: 0 }); }
    $("file").value = "";
  });
  $("share").addEventListener("click", async () => {
    writeHash();
    try { await navigator.clipboard.writeText(location.href); $("status").textContent = "link copied"; } catch (e) { prompt("Copy this link:", location.href); }
  });
  $("reset").addEventListener("click", () => load({ ...view.req, set: [] }));
  $("next-fault").addEventListener("click", () => jump("fault", 1));
  $("next-violation").addEventListener("click", () => jump("violation", 1));
  $("next-acquire").addEventListener("click", () => jump("acquire", 1));
  $("present").addEventListener("click", () => {
    document.body.classList.toggle("present");
    $("present").blur();
    view.size = null;
    if (view.run) { view.staticKey = ""; draw(); }
  });
  $("print").addEventListener("click", () => { $("print").blur(); window.print(); });
  $("compare").addEventListener("change", () => {
    const v = $("compare").value.trim();
    $("compare").blur();
    if (v && !/^[a-z_]+=.+$/.test(v)) { showError("compare " + v + ": want name=value, e.g. fencing=one or pause=500ms"); return; }
    view.compare = v || null;
    view.otherKey = "";
    loadCompare();
    writeHash();
  });
  $("first").addEventListener("click", () => { stop(); setCursor(0); });
  $("back").addEventListener("click", () => { stop(); setCursor(view.cursor - 1); });
  $("fwd").addEventListener("click", () => { stop(); setCursor(view.cursor + 1); });
  $("play").addEventListener("click", togglePlay);
  $("scrub").addEventListener("input", () => { stop(); setCursor(Number($("scrub").value)); });
  $("zoom").addEventListener("change", () => { $("zoom").blur(); draw(); writeHash(); });
  $("speed").addEventListener("change", () => { $("speed").blur(); if (view.playing) { stop(); togglePlay(); } });
  window.addEventListener("resize", () => { view.size = null; view.otherKey = ""; if (view.run) draw(); });
  window.addEventListener("beforeprint", () => { view.size = null; view.staticKey = ""; if (view.run) { renderPrintTrace(); draw(); } });
  document.addEventListener("keydown", (ev) => {
    if (!view.run || ev.target.closest("input, select, textarea") || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (ev.key === "ArrowRight") { stop(); setCursor(view.cursor + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { stop(); setCursor(view.cursor - 1); ev.preventDefault(); }
    else if (ev.key === " ") { togglePlay(); ev.preventDefault(); }
    else if (ev.key === "Home") { stop(); setCursor(0); ev.preventDefault(); }
    else if (ev.key === "End") { stop(); setCursor(view.run.replay.steps.length - 1); ev.preventDefault(); }
    else if (ev.key === "f" || ev.key === "F") { jump("fault", ev.shiftKey ? -1 : 1); ev.preventDefault(); }
    else if (ev.key === "v" || ev.key === "V") { jump("violation", ev.shiftKey ? -1 : 1); ev.preventDefault(); }
    else if (ev.key === "a" || ev.key === "A") { jump("acquire", ev.shiftKey ? -1 : 1); ev.preventDefault(); }
  });
  window.addEventListener("hashchange", () => {
    const h = readHash();
    if (JSON.stringify(h.req) !== JSON.stringify(view.req)) start(h);
  });
  start(readHash());
}

function start(h) {
  if (h.zoom && [...$("zoom").options].some((o) => o.value === h.zoom)) $("zoom").value = h.zoom;
  view.compare = h.compare || null;
  $("compare").value = view.compare || "";
  view.otherKey = "";
  load(h.req, h.pos.e !== undefined || h.pos.t !== undefined ? h.pos : { e: 0, msg: h.pos.msg });
}

// renderPrintTrace fills the handout's narrated lines: those around the first violation
// (or the cursor, in a run without one), which the print stylesheet shows under the
// diagram instead of the scrolling list.
function renderPrintTrace() {
  const steps = view.run.replay.steps, ol = $("print-trace");
  ol.textContent = "";
  let c = steps.findIndex((s) => s.violation >= 0 && !isFenced(s.violation));
  if (c < 0) c = view.cursor;
  for (let i = Math.max(0, c - 12); i < Math.min(steps.length, c + 8); i++) {
    const s = steps[i];
    ol.append(el("li", { class: i === c ? "current" : "" }, (s.at_ns / 1e9).toFixed(3).padStart(8) + "s " + (s.marker || "  ") + " " + s.actor.padEnd(9) + " " + s.text));
  }
}

main().catch((err) => showError(err.message));
