package viewer_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// page drives one tab of the viewer as a lecturer does: it opens a lesson's link, presses
// keys, and changes what-ifs through the panel, waiting for each rerun to be shown.
type page struct {
	t    *testing.T
	ctx  context.Context
	base string
	runs int // runs shown so far (document.body.dataset.ready)
}

func newPage(t *testing.T) *page {
	ctx, url := browser(t)
	return &page{t: t, ctx: ctx, base: url}
}

// open opens the viewer at fragment (a lesson's link) in a fresh tab.
func (p *page) open(fragment string) {
	p.t.Helper()
	tab, cancel := chromedp.NewContext(p.ctx)
	p.t.Cleanup(cancel)
	require.NoError(p.t, chromedp.Do(tab, chromedp.EmulateViewport(1280, 720), chromedp.Navigate(p.base+"/#"+fragment)))
	p.ctx, p.runs = tab, 1
	waitReady(p.t, p.ctx, 1)
}

// set changes a what-if in the panel, as a user does (a new value, then change), and
// waits for the rerun.
func (p *page) set(knob, value string) {
	p.t.Helper()
	sel := `[data-knob="` + knob + `"]`
	require.True(p.t, p.bool(`!!document.querySelector('`+sel+`')`), "the panel offers %s", knob)
	require.NoError(p.t, chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](`(() => { const e = document.querySelector('`+sel+`');
		e.value = `+strconv.Quote(value)+`; e.dispatchEvent(new Event("change")); })()`)))
	p.runs++
	waitReady(p.t, p.ctx, p.runs)
	require.True(p.t, p.bool(`document.getElementById("error").hidden`), "%s=%s: %s", knob, value, p.text("#error"))
}

// key presses a key, sent to whatever has the focus.
func (p *page) key(k string) {
	p.t.Helper()
	require.NoError(p.t, chromedp.Do(p.ctx, chromedp.KeyEvent(k)))
}

func (p *page) text(sel string) string {
	p.t.Helper()
	return eval[string](p.ctx, p.t, `(document.querySelector(`+strconv.Quote(sel)+`) || {textContent: ""}).textContent`)
}
func (p *page) bool(js string) bool { p.t.Helper(); return eval[bool](p.ctx, p.t, js) }
func (p *page) int(js string) int   { p.t.Helper(); return eval[int](p.ctx, p.t, js) }
func (p *page) cursorAt() float64 {
	p.t.Helper()
	return eval[float64](p.ctx, p.t, `view.run.replay.steps[view.cursor].at_ns / 1e9`)
}
func (p *page) current() string { p.t.Helper(); return p.text("#trace li.current") }
func (p *page) laneState(lane string) string {
	p.t.Helper()
	return p.text(`#diagram .lane-state[data-lane="` + lane + `"]`)
}

// TestLesson1GCPause follows docs/teaching.md's lesson 1 on screen: the first violation,
// then the what-ifs pause = 500ms, back to 1500ms (the cursor returns to the violation),
// and fencing = one.
func TestLesson1GCPause(t *testing.T) {
	p := newPage(t)
	p.open("scenario=gc-pause")
	assert.Contains(t, p.text("#exercise"), "Where does client1 believe it holds the lock")
	assert.True(t, p.bool(`document.getElementById("answer").hidden`), "the answer waits to be asked for")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS("#show-answer"))))
	assert.False(t, p.bool(`document.getElementById("answer").hidden`))

	p.key("v") // the first violation
	assert.InDelta(t, 1.214, p.cursorAt(), 0.001)
	assert.Contains(t, p.current(), "VIOLATION usage_overlap on lock: client1 and client2")
	assert.Equal(t, "PAUSED · expired", p.laneState("client1"))
	for i := 1; i <= 5; i++ {
		assert.Contains(t, p.laneState("redis"+strconv.Itoa(i)), "client2", "every node holds client2's key")
	}
	assert.Contains(t, p.text("#diagram .validity-end-label"), "validity ends 0.988 s", "the validity's end under the pause is marked")
	assert.Equal(t, 2, p.int(`document.querySelectorAll("#diagram .write.stale").length`), "two stale writes draw as two")
	assert.True(t, p.bool(`[...document.querySelectorAll("#diagram .mark-label")].some((e) => e.textContent === "6 attempts lost")`), "client2's lost attempts are counted")
	assert.Contains(t, p.text("#expect"), "This run shows it")

	p.set("pause", "500ms")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
	assert.Contains(t, p.text("#expect"), "departs from it", "the Expected line no longer claims the story's outcome")
	assert.Contains(t, p.text("#in-effect"), "pause = 500ms (story: 1500ms)")
	assert.Contains(t, p.text("#status"), "is not in this run")
	p.set("pause", "1500ms")
	assert.InDelta(t, 1.214, p.cursorAt(), 0.001, "the round trip returns the cursor to the violation (issue 38, point 6)")
	assert.Contains(t, p.current(), "VIOLATION usage_overlap")

	p.set("fencing", "one")
	assert.Contains(t, p.text("#lock-verdict"), "UNSAFE (1 usage overlap)")
	assert.Contains(t, p.text("#resource-verdict"), "resource: SAFE")
	assert.Equal(t, 2, p.int(`document.querySelectorAll("#fenced button").length`), "the storage rejected client1's two writes")
	assert.NotContains(t, p.text("#violations"), "rejected", "a rejection is no violation")
	assert.Equal(t, 2, p.int(`document.querySelectorAll("#diagram .write.rejected").length`))
	assert.Contains(t, p.text("#legend"), "write rejected")
	assert.True(t, p.bool(`[...document.querySelectorAll("#diagram .token")].some((e) => e.textContent === "t2")`), "fencing tokens are drawn")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#fenced button`))))
	assert.Contains(t, p.current(), "fenced_write_rejected")
	assert.True(t, p.bool(`document.querySelector("#trace li.current").classList.contains("fenced")`), "a rejection's line is not drawn as a violation")
	assert.False(t, p.bool(`document.querySelector("#trace li.current").classList.contains("violation")`))
}

// TestLesson2ClockJump: a click just after the purple mark stops on the jump itself,
// where redis3's clock reads +2000 ms; then two holders at 0.300 s; jump = 1s is safe and
// 1500ms is not.
func TestLesson2ClockJump(t *testing.T) {
	p := newPage(t)
	p.open("scenario=clock-jump")
	assert.Contains(t, p.text(`#diagram .mark[data-kind="clock-jump"]`), "clock +2s")
	xy := eval[[]float64](p.ctx, p.t, `(() => { const r = document.querySelector('#diagram .mark[data-kind="clock-jump"] line').getBoundingClientRect();
		return [r.left + r.width / 2 + 3, r.top + r.height / 2]; })()`)
	require.NoError(t, chromedp.Do(p.ctx, chromedp.MouseClickXY(xy[0], xy[1])))
	assert.InDelta(t, 0.150, p.cursorAt(), 0.0005, "the jump is an event the cursor stops on")
	assert.Contains(t, p.current(), "redis3")
	assert.Contains(t, p.current(), "clock-step by=+2s")
	assert.Equal(t, "+2000 ms", p.text(`#nodes tr[data-node="redis3"] td:last-child`))
	assert.Equal(t, "no key", p.laneState("redis3"), "client1's key expired on the jumped clock")
	p.key("v")
	assert.InDelta(t, 0.300, p.cursorAt(), 0.001)
	assert.Contains(t, p.text("#legend"), "clock step")
	p.set("jump", "1s")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
	p.set("jump", "1500ms")
	assert.Contains(t, p.text("#lock-verdict"), "UNSAFE")
}

// TestLesson3RestartNoPersistence: redis3's crash and restart are labelled events; at
// 0.300 s redis3 holds client2's key while client1 believes in its lock; down = 2100ms and
// persistence = aof-always are safe.
func TestLesson3RestartNoPersistence(t *testing.T) {
	p := newPage(t)
	p.open("scenario=restart-no-persistence")
	labels := eval[[]string](p.ctx, t, `[...document.querySelectorAll("#diagram .mark-label")].map((e) => e.textContent)`)
	assert.Contains(t, labels, "crash")
	assert.Contains(t, labels, "restart, 0 keys")
	assert.True(t, p.bool(`[...document.querySelectorAll("#diagram .cut-label")].some((e) => e.textContent === "cut from client2")`), "a cut says from whom")
	for !strings.Contains(p.current(), "restart") {
		before := p.int(`view.cursor`)
		p.key("f")
		require.Greater(t, p.int(`view.cursor`), before, "f moves to the next fault")
		require.Equal(t, "!!", eval[string](p.ctx, t, `view.run.replay.steps[view.cursor].marker`))
	}
	assert.InDelta(t, 0.120, p.cursorAt(), 0.0005)
	assert.Equal(t, "no key", p.laneState("redis3"))
	p.key("v")
	assert.InDelta(t, 0.300, p.cursorAt(), 0.001)
	assert.Contains(t, p.laneState("redis3"), "client2")
	assert.Contains(t, p.laneState("client1"), "holding")
	p.set("down", "2100ms")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
	p.set("down", "")
	p.set("persistence", "aof-always")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
}

// TestLesson4SplitBrain: ten split-brain rounds; the panel's search finds retry_jitter,
// although the story has no parameter of its own; 1 ms gives 2 rounds, 100 ms gives 1.
func TestLesson4SplitBrain(t *testing.T) {
	p := newPage(t)
	p.open("scenario=split-brain-no-jitter")
	assert.Contains(t, p.text("#liveness"), "10 split-brain rounds")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.SendKeys(chromedp.CSS("#knob-search"), "jitter")))
	assert.True(t, p.bool(`document.querySelector('[data-knob="retry_jitter"]').offsetParent !== null`), "the search shows retry_jitter")
	assert.True(t, p.bool(`document.querySelector('[data-knob="ttl"]').offsetParent === null`), "and hides what does not match")
	p.set("retry_jitter", "1ms")
	assert.Contains(t, p.text("#liveness"), "2 split-brain rounds")
	p.set("retry_jitter", "100ms")
	assert.Contains(t, p.text("#liveness"), "1 split-brain round")
	assert.Contains(t, p.text("#in-effect"), "retry_jitter = 100ms")
	p.key("a")
	assert.Regexp(t, `^acquired\b`, eval[string](p.ctx, t, `view.run.replay.steps[view.cursor].text`), "a jumps to the next acquisition")
}

// TestLesson5NodeRedlock: the lesson's link sets client = node-redlock, which the panel
// shows in effect; the run is safe, nobody acquires, and client1's unfinished attempt is
// drawn and told; client = node-redlock-5 makes it unsafe.
func TestLesson5NodeRedlock(t *testing.T) {
	p := newPage(t)
	p.open("scenario=restart-no-persistence&set=client%3Dnode-redlock")
	assert.Contains(t, p.text("#in-effect"), "client = node-redlock", "a setting from the link is shown in effect")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
	assert.Contains(t, p.text("#liveness"), "0 acquired")
	assert.Contains(t, p.text("#liveness"), "client1's attempt from 0.000 s is unfinished at the run's end, with 0 OKs of 5 so far",
		"node-redlock 4.2.0 counts its votes once every server answered")
	assert.Equal(t, 2, p.int(`document.querySelectorAll("#diagram .attempt.unfinished").length`))
	p.set("client", "node-redlock-5")
	assert.Contains(t, p.text("#lock-verdict"), "UNSAFE")
}

// TestLesson6RedlockOrZooKeeper: zk-gc-pause says what governs its lock (a session, not a
// TTL, and no fencing token), its first violation at 5.004 s shows client1 paused, zk3
// leading and marking the session it expired, client2's attempt by its lock node;
// client1's late write is a stale write; fence_token = czxid refuses it, zxid tokens
// drawn; session_timeout = 12s is safe and pause = 15s unsafe again; zk-partitioned-holder
// is unsafe until on_suspended = stop.
func TestLesson6RedlockOrZooKeeper(t *testing.T) {
	p := newPage(t)
	p.open("scenario=zk-gc-pause")
	assert.Contains(t, p.text("#exercise"), "Why does the storage accept it")
	assert.Contains(t, p.text("#lock-settings"), "curator on zookeeper, session 3s, zk_tick_time 1s, on_suspended carry-on, fence_token none, recipe curator")
	assert.NotContains(t, p.text("#liveness"), "split-brain", "a ZooKeeper lock takes no votes")

	p.key("v")
	assert.InDelta(t, 5.004, p.cursorAt(), 0.001)
	assert.Contains(t, p.current(), "VIOLATION usage_overlap on lock: client1 and client2")
	assert.Equal(t, "PAUSED", p.laneState("client1"))
	assert.Equal(t, "leader", p.laneState("zk3"))
	assert.Equal(t, "follower", p.laneState("zk1"))
	assert.Contains(t, p.text(`#diagram .mark[data-kind="session-expired"]`), "client1's session expired")
	assert.True(t, p.bool(`[...document.querySelectorAll("#diagram .role.leader title")].some((e) => e.textContent.startsWith("leader, epoch 1"))`), "the leader's band")
	assert.True(t, p.bool(`[...document.querySelectorAll("#diagram .attempt.won title")].some((e) => e.textContent === "attempt: won (node 1, waited on 0 (client1))")`),
		"client2's attempt says what it did")
	assert.Equal(t, "yes", p.text(`#clients tr[data-client="client1"] td:nth-child(3)`), "a ZooKeeper lock has no validity to count down")
	assert.Equal(t, "leader", p.text(`#nodes tr[data-node="zk3"] td:nth-child(3)`))
	assert.Contains(t, p.text("#legend"), "the leader expired a session")
	assert.NotContains(t, p.text("#legend"), "a node holds the client's key")
	assert.Contains(t, p.text("#resource-verdict"), "UNSAFE (2 stale writes accepted)", "no token: client1's late writes land")
	assert.Contains(t, p.text("#diagram .validity-end-label"), "lock lost 11.667 s", "client1 believes in its lock until Curator says LOST, and works on")

	p.set("fence_token", "czxid")
	assert.Contains(t, p.text("#lock-verdict"), "UNSAFE")
	assert.Contains(t, p.text("#resource-verdict"), "resource: SAFE")
	assert.Equal(t, 2, p.int(`document.querySelectorAll("#fenced button").length`), "the storage refused client1's two late writes")
	assert.Equal(t, "0x100000004", p.text(`#clients tr[data-client="client1"] td:nth-child(4)`))
	assert.True(t, p.bool(`[...document.querySelectorAll("#diagram .token")].some((e) => e.textContent === "0x100000006")`), "tokens drawn as zxids")
	assert.Contains(t, p.text("#lock-settings"), "its fencing token is the lock node's czxid")

	p.set("session_timeout", "12s")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
	assert.Contains(t, p.text("#lock-settings"), "session 12s")
	p.set("pause", "15s")
	assert.Contains(t, p.text("#lock-verdict"), "UNSAFE")
	assert.Contains(t, p.text("#resource-verdict"), "resource: SAFE")

	p.open("scenario=zk-partitioned-holder")
	assert.Contains(t, p.text("#exercise"), "had it heeded SUSPENDED")
	assert.Contains(t, p.text("#lock-verdict"), "UNSAFE")
	p.set("on_suspended", "stop")
	assert.Contains(t, p.text("#lock-verdict"), "lock: SAFE")
	assert.Contains(t, p.text("#in-effect"), "on_suspended = stop")
}

// TestViewerLinkNamesTheEvent: a link reopens the very event, with its highlight, and the
// selected message (issue 38, point 7), at every one of gc-pause's events.
func TestViewerLinkNamesTheEvent(t *testing.T) {
	p := newPage(t)
	p.open("scenario=gc-pause")
	p.key("v")
	// a message arrow at the violation's zoom
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](`(() => { const m = view.run.replay.messages.findIndex((m) => m.kind === "request" && m.sent_ns > 1.2e9);
		view.selected = m; renderMessage(); draw(); writeHash(); })()`)))
	link, at, cur, msg := eval[string](p.ctx, t, `location.href`), p.int(`view.cursor`), p.current(), p.text("#message")
	assert.Contains(t, link, "e="+strconv.Itoa(at))
	assert.Contains(t, link, "msg=")
	p.open(link[strings.Index(link, "#")+1:])
	assert.Equal(t, at, p.int(`view.cursor`))
	assert.Equal(t, cur, p.current())
	assert.Equal(t, 1, p.int(`document.querySelectorAll("#diagram .viol-band.active").length`), "with its highlight")
	assert.Equal(t, msg, p.text("#message"))
	n := p.int(`view.run.replay.steps.length`)
	bad := p.int(`(() => { let bad = 0; const n = view.run.replay.steps.length;
		for (let e = 0; e < n; e++) { setCursor(e); const h = new URLSearchParams(location.hash.slice(1)); if (Number(h.get("e")) !== e) bad++; }
		return bad; })()`)
	assert.Zero(t, bad, "every one of the %d events is named by its link", n)
}

// TestViewerRefusesInertKnobs: the panel does not offer a knob that cannot change the run
// and says why (issue 38, point 10); a link that sets one is refused in words.
func TestViewerRefusesInertKnobs(t *testing.T) {
	p := newPage(t)
	p.open("scenario=failover-race")
	assert.False(t, p.bool(`!!document.querySelector('[data-knob="nodes"]')`))
	assert.Contains(t, p.text("#inert-knobs"), "nodes: it is N")
	assert.True(t, p.bool(`!!document.querySelector('[data-knob="replication_delay"]')`), "failover-race has a replica")
	tab, cancel := chromedp.NewContext(p.ctx)
	defer cancel()
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(p.base+"/#scenario=failover-race&set=nodes%3D5"),
		chromedp.Poll[chromedp.Void](`!document.getElementById("error").hidden`, chromedp.WithPollingTimeout(30*time.Second))))
	p.ctx = tab
	assert.Contains(t, p.text("#error"), "nodes = 5 cannot change this run")
}

// TestViewerPlaysInTime: playing moves the cursor's time between events (a pause takes
// time), messages in flight are drawn as they travel, and the fault key stops on faults.
func TestViewerPlaysInTime(t *testing.T) {
	p := newPage(t)
	p.open("scenario=gc-pause")
	assert.Positive(t, p.int(`document.querySelectorAll("#diagram #in-flight .flight-head").length`), "client1's SETs are in flight at 0.000 s")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.SetValue(chromedp.CSS("#speed"), "1"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("speed").dispatchEvent(new Event("change"))`)))
	p.key("f") // the pause at 0.1 s
	assert.Contains(t, p.current(), "client1")
	assert.Equal(t, "!!", eval[string](p.ctx, t, `view.run.replay.steps[view.cursor].marker`))
	p.key(" ")
	// while client1 is paused no event happens for about a second: playing in proportional
	// time, the time shown goes on between two events
	_, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`view.playT !== null && view.playT > view.run.replay.steps[view.cursor].at_ns + 100e6 &&
		(view.cursor + 1 >= view.run.replay.steps.length || view.playT < view.run.replay.steps[view.cursor + 1].at_ns)`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the played time runs between events")
	p.key(" ")
	assert.True(t, p.bool(`view.playing === null`))
}

// TestViewerFitsTheScreen: the details a class needs stay above the fold at 1280×720, the
// diagram keeps its width at 1024×768, words grow at 1920×1080 and in presentation mode,
// many clients get distinct colours and many nodes lanes that do not overlap the axis
// (issue 38, points 5 and 11).
func TestViewerFitsTheScreen(t *testing.T) {
	p := newPage(t)
	p.open("scenario=gc-pause")
	assert.Positive(t, p.int(`document.querySelectorAll("#diagram #message-groups line, #diagram #messages .msg").length`), "arrows at the whole-run crop")
	p.key("v")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](`(() => { view.selected = view.run.replay.messages.findIndex((m) => m.kind === "request"); renderMessage(); })()`)))
	assert.True(t, p.bool(`document.getElementById("message").getBoundingClientRect().bottom <= innerHeight`), "a clicked message's details are above the fold")
	assert.True(t, p.bool(`document.getElementById("clients").getBoundingClientRect().bottom <= innerHeight`), "the client table with the tokens is above the fold")
	crop := eval[[]float64](p.ctx, t, `window_()`)
	assert.Equal(t, eval[[]float64](p.ctx, t, `view.run.crop_ns`), crop, "the diagram opens on run --timeline's crop")
	small := eval[float64](p.ctx, t, `parseFloat(getComputedStyle(document.documentElement).fontSize)`)
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS("#present"))))
	assert.Greater(t, eval[float64](p.ctx, t, `parseFloat(getComputedStyle(document.body).fontSize)`), small*1.3, "presentation mode")

	require.NoError(t, chromedp.Do(p.ctx, chromedp.EmulateViewport(1024, 768)))
	p.open("scenario=gc-pause")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.EmulateViewport(1024, 768)))
	assert.GreaterOrEqual(t, p.int(`document.getElementById("diagram").getBoundingClientRect().width`), 650)
	require.NoError(t, chromedp.Do(p.ctx, chromedp.EmulateViewport(1920, 1080)))
	assert.GreaterOrEqual(t, eval[float64](p.ctx, t, `parseFloat(getComputedStyle(document.documentElement).fontSize)`), 22.0)

	p.open("scenario=split-brain-no-jitter&set=clients%3D14&set=nodes%3D25")
	colours := eval[[]string](p.ctx, t, `[...document.querySelectorAll("#clients .chip")].map((c) => getComputedStyle(c).backgroundColor)`)
	require.Len(t, colours, 14)
	seen := map[string]bool{}
	for _, c := range colours {
		assert.False(t, seen[c], "colour %s used twice", c)
		seen[c] = true
	}
	assert.True(t, p.bool(`(() => { const ls = [...document.querySelectorAll("#diagram .lane-label")].map((e) => e.getBBox());
		const axis = [...document.querySelectorAll("#diagram .axis text")].map((e) => e.getBBox().y);
		for (let i = 1; i < ls.length; i++) if (ls[i].y < ls[i - 1].y + ls[i - 1].height - 1) return false;
		return Math.min(...axis) >= ls[ls.length - 1].y + ls[ls.length - 1].height - 1; })()`), "39 lanes neither overlap one another nor the axis")
}

// TestViewerHandoutAndCompare: printing hides the controls and lists the lines around the
// violation; a compared run (fencing = one) is drawn under the first with its verdict, its
// cursor at the same time.
func TestViewerHandoutAndCompare(t *testing.T) {
	p := newPage(t)
	p.open("scenario=gc-pause")
	p.key("v")
	require.NoError(t, chromedp.Do(p.ctx, chromedp.Evaluate[chromedp.Void](`window.dispatchEvent(new Event("beforeprint"))`)))
	_, err := chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
	require.NoError(t, err)
	assert.Equal(t, "none", eval[string](p.ctx, t, `getComputedStyle(document.getElementById("controls")).display`))
	assert.Equal(t, "none", eval[string](p.ctx, t, `getComputedStyle(document.getElementById("whatif")).display`))
	assert.Equal(t, "block", eval[string](p.ctx, t, `getComputedStyle(document.getElementById("print-trace")).display`))
	assert.Contains(t, p.text("#print-trace li.current"), "VIOLATION usage_overlap")
	assert.NotEqual(t, "none", eval[string](p.ctx, t, `getComputedStyle(document.getElementById("legend")).display`))
	_, err = chromedp.Call(p.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	require.NoError(t, err)

	require.NoError(t, chromedp.Do(p.ctx, chromedp.SetValue(chromedp.CSS("#compare"), "fencing=one"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("compare").dispatchEvent(new Event("change"))`)))
	_, err = chromedp.Run(p.ctx, chromedp.Poll[bool](`!document.getElementById("compare-view").hidden`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	assert.Contains(t, p.text("#compare-title"), "resource SAFE")
	assert.Equal(t, 2, p.int(`document.querySelectorAll("#diagram2 .write.rejected").length`))
	assert.Equal(t, eval[string](p.ctx, t, `document.querySelector("#diagram #cursor").getAttribute("x1")`),
		eval[string](p.ctx, t, `document.querySelector("#diagram2 #cursor").getAttribute("x1")`), "the cursors are linked")
	assert.Contains(t, eval[string](p.ctx, t, `location.hash`), "compare=fencing%3Done")
}
