package viewer_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/cmd/redlock-sim/viewer"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

var rewrite = flag.Bool("rewrite", false, "write the viewer's screenshots into docs/img")

// chromium returns the path of a Chromium the test can drive, or skips the test (fails it
// where REDLOCK_SIM_REQUIRE_CHROMIUM is set: CI installs Chromium, so it never skips there).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REDLOCK_SIM_REQUIRE_CHROMIUM") != "" {
		t.Fatal("no Chromium on PATH, and REDLOCK_SIM_REQUIRE_CHROMIUM is set (Debian: apt-get install chromium)")
	}
	t.Skip("no Chromium on PATH: the viewer's browser test needs one (Debian: apt-get install chromium)")
	return ""
}

// browser starts a headless Chromium with a 1280×720 window against a fresh viewer.
func browser(t *testing.T) (context.Context, string) {
	exe := chromium(t)
	srv, err := viewer.New(nil)
	require.NoError(t, err)
	hs := httptest.NewServer(srv) // a free loopback port
	t.Cleanup(hs.Close)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.WindowSize(1280, 720),
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("font-render-hinting", "none"),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(cancelB)
	ctx, cancelC := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelC)
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 720)))
	return ctx, hs.URL
}

// waitReady waits until the viewer has shown its n-th run and no request is in flight. It
// asks again after an error: while a page loads, its JavaScript context can vanish under
// a question ("Cannot find context with specified id").
func waitReady(t *testing.T, ctx context.Context, n int) {
	t.Helper()
	expr := `Number(document.body && document.body.dataset.ready || 0) >= ` + strconv.Itoa(n) + ` && !document.body.dataset.loading`
	deadline := time.Now().Add(60 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		var ok bool
		if ok, err = chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the viewer did not show run %d within a minute (last error: %v)", n, err)
}

// shot takes a 1280×720 screenshot, checks its size, and keeps it in docs/img with -rewrite.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(t, err)
	cfg, err := png.DecodeConfig(bytes.NewReader(buf))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1280, 720}, [2]int{cfg.Width, cfg.Height}, "screenshot %s", name)
	dir := t.TempDir()
	if *rewrite {
		dir = filepath.Join("..", "..", "..", "docs", "img")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf, 0o644))
}

func text(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err, "text of %s", sel)
	return s
}

func eval[T any](ctx context.Context, t *testing.T, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, "evaluating %s", js)
	return v
}

// TestViewerInChromium drives the viewer as a teacher would: the gc-pause story to its
// first violation, a what-if that makes it safe, and the shared link of that.
func TestViewerInChromium(t *testing.T) {
	ctx, url := browser(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"/#scenario=gc-pause&seed=1")))
	waitReady(t, ctx, 1)
	assert.Equal(t, "gc-pause", eval[string](ctx, t, `document.getElementById("scenario").value`))
	assert.Contains(t, text(ctx, t, "#story"), "client1 pauses (GC)")
	assert.Contains(t, text(ctx, t, "#lock-verdict"), "UNSAFE (1 usage overlap)")
	assert.Contains(t, text(ctx, t, "#resource-verdict"), "UNSAFE")
	assert.True(t, eval[bool](ctx, t, `document.getElementById("lock-verdict").classList.contains("unsafe")`),
		"the verdict's colour follows the record's lock_safe, not its words")
	assert.Equal(t, "rgb(0, 114, 178)", eval[string](ctx, t, `getComputedStyle(document.querySelector("#clients .chip")).backgroundColor`),
		"client1's chip has its colour under the content security policy")
	shot(t, ctx, "viewer-gc-pause.png")

	// Stepping: forward and back move the cursor by one event.
	cursor := func() int { return eval[int](ctx, t, `Number(document.body.dataset.cursor)`) }
	require.Equal(t, 0, cursor())
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#fwd")), chromedp.Click(chromedp.CSS("#fwd"))))
	assert.Equal(t, 2, cursor())
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#back"))))
	assert.Equal(t, 1, cursor())

	// The first reply: clicking its line shows the command in redis-cli form and the reply.
	reply := eval[int](ctx, t, `Number([...document.querySelectorAll("#trace li[data-step]")].find(li => li.textContent.includes("← redis")).dataset.step)`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#trace li[data-step="`+strconv.Itoa(reply)+`"]`))))
	assert.Equal(t, reply, cursor())
	assert.Regexp(t, `^redis\d> SET lock \S+ NX PX 1000$`, text(ctx, t, "#msg-command"))
	assert.Equal(t, "OK", text(ctx, t, "#msg-reply"))
	assert.Equal(t, 2, eval[int](ctx, t, `document.querySelectorAll("#messages .msg.current").length`), "the reply and the request it answers are drawn highlighted")

	// Step to the first violation: its line and its band are red, and the verdict panel
	// names the two clients.
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#violations button[data-violation="0"]`))))
	assert.Contains(t, text(ctx, t, "#trace li.current"), "VIOLATION usage_overlap on lock: client1 and client2")
	assert.True(t, eval[bool](ctx, t, `document.querySelector("#trace li.current").classList.contains("violation")`))
	assert.Equal(t, "rgb(214, 39, 40)", eval[string](ctx, t, `getComputedStyle(document.querySelector("#trace li.current")).color`), "the violation's line is red")
	assert.Equal(t, 1, eval[int](ctx, t, `document.querySelectorAll("#diagram .viol-band.active").length`), "the violation's band is highlighted")
	v := text(ctx, t, "#violations button.active")
	assert.Contains(t, v, "usage overlap: client1 and client2")
	assert.Contains(t, text(ctx, t, "#clients"), "expired", "client1 still believes in a lock whose deadline passed")
	violationAt := eval[int](ctx, t, `Number(document.body.dataset.cursor)`)
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("right").scrollTop = 0`)))
	shot(t, ctx, "viewer-gc-pause-violation.png")

	// What if the pause were shorter than the validity? The run is safe, and the cursor,
	// whose violation this run lacks, stays at the same time and says so.
	tBefore := eval[float64](ctx, t, `view.run.replay.steps[view.cursor].at_ns / 1e9`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`input[data-knob="pause"]`), "500ms"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[data-knob="pause"]').dispatchEvent(new Event("change"))`)))
	waitReady(t, ctx, 2)
	assert.Contains(t, text(ctx, t, "#lock-verdict"), "lock: SAFE")
	assert.Contains(t, text(ctx, t, "#resource-verdict"), "resource: SAFE")
	assert.True(t, eval[bool](ctx, t, `document.getElementById("resource-verdict").classList.contains("safe")`))
	assert.Contains(t, text(ctx, t, "#violations"), "No violation")
	assert.True(t, eval[bool](ctx, t, `(() => { const s = view.run.replay.steps, T = `+strconv.FormatFloat(tBefore*1e9, 'f', 0, 64)+`;
		return s[view.cursor].at_ns <= T && (view.cursor + 1 >= s.length || s[view.cursor + 1].at_ns > T); })()`),
		"the cursor is on the last event at or before the time it was at")
	assert.Contains(t, text(ctx, t, "#status"), "is not in this run: the cursor is at the nearest time")
	shot(t, ctx, "viewer-gc-pause-whatif.png")

	// The shared link reproduces the same state in a fresh page.
	link := eval[string](ctx, t, `location.href`)
	assert.Contains(t, link, "set=pause%3D500ms")
	cur, ltext := cursor(), text(ctx, t, "#trace li.current")
	tab, closeTab := chromedp.NewContext(ctx) // a new tab, as a student opening the link
	defer closeTab()
	require.NoError(t, chromedp.Do(tab, chromedp.EmulateViewport(1280, 720), chromedp.Navigate(link)))
	ctx = tab
	waitReady(t, ctx, 1)
	assert.Equal(t, "500ms", eval[string](ctx, t, `document.querySelector('input[data-knob="pause"]').value`))
	assert.Contains(t, text(ctx, t, "#lock-verdict"), "lock: SAFE")
	assert.Equal(t, cur, cursor())
	assert.Equal(t, ltext, text(ctx, t, "#trace li.current"))
	assert.NotEqual(t, violationAt, -1)
}

// TestViewerBadInput: a value without its unit is refused in the user's words, and the
// previous run stays on screen.
func TestViewerBadInput(t *testing.T) {
	ctx, url := browser(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"/#scenario=clock-jump")))
	waitReady(t, ctx, 1)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`input[data-knob="ttl"]`), "5"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[data-knob="ttl"]').dispatchEvent(new Event("change"))`),
		chromedp.Poll[chromedp.Void](`!document.getElementById("error").hidden`, chromedp.WithPollingTimeout(30*time.Second))))
	assert.Contains(t, text(ctx, t, "#error"), "ttl")
	assert.Contains(t, text(ctx, t, "#error"), "needs a unit")
	assert.Contains(t, text(ctx, t, "#story"), "clock-jump")
}

// TestViewerStepsThroughEveryLesson opens each story of docs/teaching.md's lesson plan, and
// a few with replicas, crashes and partitions, and the ZooKeeper and hybrid stories, and moves the cursor over about 120 of its
// events, every fault and every violation among them: the page must draw each instant
// without a script error.
func TestViewerStepsThroughEveryLesson(t *testing.T) {
	ctx, url := browser(t)
	var errs []string
	for _, name := range []string{"gc-pause", "clock-jump", "restart-no-persistence", "split-brain-no-jitter",
		"failover-race", "holder-crash", "partition-unavailability", "unsafe-release",
		"zk-gc-pause", "zk-gc-pause-fenced", "zk-partitioned-holder", "zk-leader-crash", "zk-clock-jump", "zk-herd",
		"hybrid-split", "hybrid-arbiter"} {
		tab, closeTab := chromedp.NewContext(ctx)
		require.NoError(t, chromedp.Do(tab, chromedp.EmulateViewport(1280, 720), chromedp.Navigate(url+"/#scenario="+name)))
		waitReady(t, tab, 1)
		assert.Contains(t, text(tab, t, "#story"), name+":")
		assert.True(t, eval[bool](tab, t, `document.getElementById("error").hidden`), name)
		n := eval[int](tab, t, `(() => {
			const errors = [], steps = view.run.replay.steps, stride = Math.max(1, Math.floor(steps.length / 120));
			for (let i = 0; i < steps.length; i++) {
				if (i % stride && i !== steps.length - 1 && steps[i].violation < 0 && steps[i].marker !== "!!") continue;
				try { setCursor(i); } catch (e) { errors.push(i + ": " + e.message); }
			}
			window.__errors = errors;
			return steps.length; })()`)
		assert.Greater(t, n, 30, name)
		errs = append(errs, eval[[]string](tab, t, `window.__errors`)...)
		assert.Equal(t, n-1, eval[int](tab, t, `Number(document.body.dataset.cursor)`), name)
		closeTab()
	}
	assert.Empty(t, errs)
}

// TestViewerScenarioFile: a scenario file opened from the disk runs, and its link carries
// the file, so the link alone reproduces it.
func TestViewerScenarioFile(t *testing.T) {
	ctx, url := browser(t)
	path, err := filepath.Abs("../../../examples/scenarios/kill-not-power-loss.yaml")
	require.NoError(t, err)
	sc, err := scenarios.LoadFile(path)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"/#scenario=baseline")))
	waitReady(t, ctx, 1)
	assert.Contains(t, text(ctx, t, "#replay-note"), "The replay stops after the run's first 10,000 events", "the baseline's minute is cut short, and the page says so")
	require.NoError(t, chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{path})))
	waitReady(t, ctx, 2)
	assert.Contains(t, text(ctx, t, "#story"), sc.Name+": "+sc.Story)
	assert.Equal(t, sc.Name+" (your file)", eval[string](ctx, t, `document.querySelector("#scenario option:checked").textContent`))
	hash := eval[string](ctx, t, `view.run.record.trace_hash`)
	link := eval[string](ctx, t, `location.href`)
	assert.Contains(t, link, "#file=")

	tab, closeTab := chromedp.NewContext(ctx)
	defer closeTab()
	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(link)))
	waitReady(t, tab, 1)
	assert.Equal(t, hash, eval[string](tab, t, `view.run.record.trace_hash`))
	assert.Contains(t, text(tab, t, "#story"), sc.Story)
}

// TestViewerLatestWhatIfWins: what-ifs changed faster than the server answers end on the
// last one asked, never on an older answer that arrived late.
func TestViewerLatestWhatIfWins(t *testing.T) {
	ctx, url := browser(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"/#scenario=gc-pause")))
	waitReady(t, ctx, 1)
	require.NoError(t, chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`(() => {
		const input = document.querySelector('input[data-knob="pause"]');
		for (const v of ["500ms", "600ms", "1400ms", "700ms"]) { input.value = v; input.dispatchEvent(new Event("change")); }
	})()`)))
	waitReady(t, ctx, 2)
	assert.Equal(t, []string{"pause=700ms"}, eval[[]string](ctx, t, `view.req.set`))
	assert.Contains(t, text(ctx, t, "#lock-verdict"), "lock: SAFE")
	assert.Contains(t, eval[string](ctx, t, `location.hash`), "set=pause%3D700ms")
}

// TestViewerKeysStepAfterADropDown: after the zoom (or the scenario) is chosen from its
// drop-down, → steps through the run, as before the choice, instead of changing the
// drop-down again (a real key press, sent to whatever has the focus).
func TestViewerKeysStepAfterADropDown(t *testing.T) {
	ctx, url := browser(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(url+"/#scenario=gc-pause&seed=1")))
	waitReady(t, ctx, 1)
	cursor := func() int { return eval[int](ctx, t, `Number(document.body.dataset.cursor)`) }
	zoom := eval[string](ctx, t, `(() => { const z = document.getElementById("zoom"); return z.options[z.options.length - 1].value; })()`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS("#zoom")),
		chromedp.SetValue(chromedp.CSS("#zoom"), zoom),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("zoom").dispatchEvent(new Event("change"))`)))
	assert.NotEqual(t, "zoom", eval[string](ctx, t, `document.activeElement.id`), "the drop-down let go of the focus")
	before := cursor()
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)))
	assert.Equal(t, before+1, cursor(), "→ stepped to the next event")
	assert.Equal(t, zoom, eval[string](ctx, t, `document.getElementById("zoom").value`), "and left the zoom as chosen")
}
