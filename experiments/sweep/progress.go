package sweep

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress receives a sweep's progress. The engine only reports counts; how (and whether)
// to show them is the caller's choice. Calls never overlap and come in order: Begin once
// and End once from Run's goroutine, Advance after each row is written from the worker
// that wrote it (while it holds the writing lock, so it should be quick).
type Progress interface {
	// Begin says the shard has total runs of which done are already written (resume).
	Begin(total, done int)
	// Advance says done runs are now written.
	Advance(done int)
	// End says the sweep stopped, complete or not.
	End()
}

type nopProgress struct{}

func (nopProgress) Begin(int, int) {}
func (nopProgress) Advance(int)    {}
func (nopProgress) End()           {}

// IsTerminal reports whether f is a terminal, where a redrawn progress bar makes sense
// (rather than a log file or a CI console, which want plain lines).
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// ProgressFor returns what a command-line interface should report to f: nothing when
// quiet, a progress bar when f is a terminal, a plain line every 10 seconds otherwise.
func ProgressFor(f *os.File, quiet bool) Progress {
	switch {
	case quiet:
		return nopProgress{}
	case IsTerminal(f):
		return NewBar(f)
	}
	return NewLines(f, 10*time.Second)
}

// Bar draws a progress bar (github.com/schollz/progressbar/v3): done/total, runs per
// second and the time left. Build one with NewBar.
type Bar struct {
	w            io.Writer
	bar          *progressbar.ProgressBar
	start, total int
	began        time.Time
}

// barSettle is how long the bar waits before its first redraw: a rate measured over the
// first run's microseconds ("77101 runs/s") is noise.
const barSettle = 250 * time.Millisecond

// NewBar returns a Progress drawing a bar on w, meant for a terminal.
func NewBar(w io.Writer) *Bar { return &Bar{w: w} }

// Begin starts the bar over the runs still to do, so that the rate and the time left are
// not inflated by rows a resume found already written.
func (b *Bar) Begin(total, done int) {
	desc := "sweep"
	if done > 0 {
		desc = fmt.Sprintf("sweep (%d of %d already done)", done, total)
	}
	b.start, b.total, b.began = done, total, time.Now()
	b.bar = progressbar.NewOptions(total-done,
		progressbar.OptionSetWriter(b.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.w) }),
	)
	_ = b.bar.RenderBlank() // starts the bar's clock now, not at the first run's end
}

// Advance moves the bar.
func (b *Bar) Advance(done int) {
	if done < b.total && time.Since(b.began) < barSettle {
		return
	}
	b.bar.Set(done - b.start)
}

// End leaves the bar as it is and moves to a new line if the sweep stopped early.
func (b *Bar) End() {
	if !b.bar.IsFinished() {
		fmt.Fprintln(b.w)
	}
}

// Lines writes a plain progress line at most once per interval, and a last one at the
// end, for logs and consoles that cannot redraw. Build one with NewLines.
type Lines struct {
	w              io.Writer
	every          time.Duration
	now            func() time.Time
	total, start   int
	began, printed time.Time
	done           int
}

// NewLines returns a Progress writing to w at most once per every.
func NewLines(w io.Writer, every time.Duration) *Lines {
	return &Lines{w: w, every: every, now: time.Now}
}

// Begin notes the starting point.
func (l *Lines) Begin(total, done int) {
	l.total, l.start, l.done = total, done, done
	l.began = l.now()
	l.printed = l.began
}

// Advance prints a line when the interval has passed.
func (l *Lines) Advance(done int) {
	l.done = done
	if t := l.now(); t.Sub(l.printed) >= l.every {
		l.printed = t
		l.print(t)
	}
}

// End prints the last line.
func (l *Lines) End() { l.print(l.now()) }

func (l *Lines) print(t time.Time) {
	elapsed := t.Sub(l.began)
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(l.done-l.start) / s
	}
	pct := 100.0
	if l.total > 0 {
		pct = 100 * float64(l.done) / float64(l.total)
	}
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(l.total-l.done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(l.w, "sweep: %d/%d runs (%.1f%%), %.1f runs/s, elapsed %s, left %s\n",
		l.done, l.total, pct, rate, elapsed.Round(time.Second), eta)
}
