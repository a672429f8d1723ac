package sweep

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Options says where and how Run runs a sweep.
type Options struct {
	// Dir is the output folder; it is created if needed.
	Dir string
	// Workers is the number of runs in flight at once; 0 means runtime.NumCPU().
	Workers int
	// Shard restricts the sweep to one part of it; the zero Shard is the whole sweep.
	Shard Shard
	// Resume continues the sweep recorded in Dir (or starts it if Dir holds none). A
	// recorded sweep with another spec, shard, columns or program (tool, commit, Go
	// version) is refused, because its rows would not be the rows this call would write.
	Resume bool
	// Verify, with Resume, re-runs every kept row (of an incomplete sweep or a complete
	// one) and refuses the folder unless each gives its row byte for byte. Without it resume
	// trusts runs.csv.sums (or the manifest's SHA-256) and re-runs a sample: enough against
	// accidents, not against someone who edited both a row and its sum (see SumsFile).
	Verify bool
	// Overwrite replaces a sweep already in Dir. Without it (and without Resume) a folder
	// holding results is refused: results are never clobbered silently.
	Overwrite bool
	// Lock, when set, is Dir's lock, taken by the caller with LockFolder and still held
	// when Run returns, so that the caller can draw the figures into the folder before
	// anyone else may write it; the caller unlocks it. When nil, Run takes the lock and
	// releases it on return.
	Lock *Lock
	// Tool and Commit identify the program in the manifest (version string, VCS revision).
	Tool, Commit string
	// Progress receives progress reports; nil means none.
	Progress Progress
}

// Stats counts what Run did.
type Stats struct {
	Runs    int // runs of this shard (of the whole sweep when unsharded)
	Resumed int // runs found already written in runs.csv
	Ran     int // runs executed and written by this call
	// Rederived counts the kept rows that resume ran again to check them (see SumsFile):
	// all of them with Options.Verify.
	Rederived int
	// Afresh is set when Resume found no sweep in the folder and started one.
	Afresh bool
	// SummaryRewritten is set when resuming a complete sweep rewrote its summary.csv,
	// which was missing or did not match runs.csv.
	SummaryRewritten bool
}

// Run runs the sweep spec with r into opt.Dir and returns when every run of the shard is
// written, or on the first failure, or when ctx is cancelled. In the last two cases the
// folder is left resumable: runs.csv holds a prefix of the shard's runs in order, the
// manifest says incomplete, and the error says how far it got (errors.Is(err,
// context.Canceled) after a cancellation).
//
// Runs go to Workers goroutines; finished runs wait in a reorder window of
// windowSize(Workers) slots until every earlier run is written, and no run is started
// beyond the window (back-pressure), so memory stays bounded however the runs' durations
// vary, and runs.csv comes out in run order whatever the completion order. Problems with
// the spec, the options or the folder are *UsageError values returned before any file is
// touched.
func Run(ctx context.Context, r Runner, spec *Spec, opt Options) (Stats, error) {
	if err := opt.Validate(); err != nil {
		return Stats{}, err
	}
	workers, _ := opt.workers()
	if err := spec.Validate(r); err != nil {
		return Stats{}, err
	}
	l, err := newLayout(spec, r.Columns(), ratiosOf(r))
	if err != nil {
		return Stats{}, err
	}
	m := newManifest(spec, l, opt.Shard, opt.Tool, opt.Commit)
	st := Stats{Runs: m.ShardRuns}
	if err := checkFolder(opt.Dir); err != nil {
		return st, err
	}
	if opt.Lock != nil {
		if err := opt.Lock.covers(opt.Dir); err != nil {
			return st, err
		}
	} else {
		lock, err := lockFolder(opt.Dir, "sweep")
		if err != nil {
			return st, err
		}
		defer lock.Unlock()
	}
	out, err := openOutput(ctx, r, l, m, workers, opt)
	if err != nil {
		return st, err
	}
	if out.done { // resumed a complete sweep: nothing to run
		st.Resumed, st.Rederived, st.SummaryRewritten = st.Runs, out.rederived, out.rewrote
		return st, nil
	}
	defer out.close()
	st.Resumed, st.Rederived, st.Afresh = out.written, out.rederived, out.afresh
	p := opt.Progress
	if p == nil {
		p = nopProgress{}
	}
	p.Begin(st.Runs, st.Resumed)
	err = execute(ctx, r, out, workers, p)
	st.Ran = out.written - st.Resumed
	p.End()
	if err != nil {
		return st, err
	}
	return st, out.finish()
}

// Validate checks the options alone, as Run does first, so that a dry run refuses what a
// real run would. The error is a *UsageError.
func (opt Options) Validate() error {
	if _, err := opt.workers(); err != nil {
		return err
	}
	if !opt.Shard.valid() {
		return badParam("shard", opt.Shard.String(), fmt.Sprintf("i/n with 1 ≤ i ≤ n ≤ %d", MaxShards))
	}
	if opt.Dir == "" {
		return usagef("no output folder given")
	}
	if opt.Resume && opt.Overwrite {
		return usagef("resume and overwrite exclude each other: continue the sweep in %s, or replace it", opt.Dir)
	}
	if opt.Verify && !opt.Resume {
		return usagef("verify re-runs the rows a resume keeps: use it with resume")
	}
	return nil
}

func (opt Options) workers() (int, error) {
	switch {
	case opt.Workers == 0:
		return runtime.NumCPU(), nil
	case opt.Workers < 0 || opt.Workers > MaxWorkers:
		return 0, badParam("workers", opt.Workers, fmt.Sprintf("[1, %d], or 0 for the number of CPUs", MaxWorkers))
	}
	return opt.Workers, nil
}

// windowSize is the number of runs that may be started but not yet written. Sixteen per
// worker lets a run take sixteen times longer than its neighbours before the workers
// stall behind it; the floor keeps one worker busy across small hiccups.
func windowSize(workers int) int { return max(64, 16*workers) }

// result is one finished run waiting for its turn to be written.
type result struct {
	fields []string // runs.csv fields
	line   []byte   // fields encoded, newline included
	err    error
}

// pipeline hands out the shard's runs in order and writes their rows in order. There is
// no dispatcher or writer goroutine: a worker takes the next position under the lock,
// runs it unlocked, and on return writes every finished row that is next in line. A
// separate writer goroutine was measured to starve on a busy 2-core machine (the workers
// keep both processors, the writer waits for preemption, the window fills and the workers
// stall: 1.3× instead of 1.9× for 2 workers); writing from the worker that completes the
// line keeps every processor on useful work.
type pipeline struct {
	ctx    context.Context
	r      Runner
	out    *output
	p      Progress
	total  int
	window int

	mu      sync.Mutex
	cond    *sync.Cond // signalled when rows are written or the pipeline stops
	next    int        // next position to hand out
	ring    []*result  // finished, unwritten runs, by position mod window
	stopped bool       // on failure or cancellation: hand out nothing more
	failed  error
}

// execute runs the shard's remaining runs and writes them in order.
func execute(ctx context.Context, r Runner, out *output, workers int, p Progress) error {
	total := out.shard.size(out.l.spec.Runs())
	if out.written == total {
		return nil
	}
	workers = min(workers, total-out.written)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	pl := &pipeline{ctx: runCtx, r: r, out: out, p: p, total: total, window: windowSize(workers),
		next: out.written}
	pl.cond = sync.NewCond(&pl.mu)
	pl.ring = make([]*result, pl.window)
	unwatch := context.AfterFunc(runCtx, pl.stop)
	defer unwatch()

	var wg sync.WaitGroup
	for range workers {
		wg.Go(pl.work)
	}
	wg.Wait()
	if err := ctx.Err(); err != nil && out.written < total {
		return fmt.Errorf("sweep interrupted after %d of %d runs; resume to finish: %w", out.written, total, err)
	}
	if pl.failed == nil && out.written < total {
		panic(fmt.Sprintf("sweep: workers stopped after %d of %d runs with no error", out.written, total))
	}
	return pl.failed
}

func (pl *pipeline) stop() {
	pl.mu.Lock()
	pl.stopped = true
	pl.cond.Broadcast()
	pl.mu.Unlock()
}

// work is one worker's loop.
func (pl *pipeline) work() {
	c := newCodec()
	for {
		j, ok := pl.take()
		if !ok {
			return
		}
		res := runOne(pl.ctx, pl.r, pl.out.l, pl.out.shard, j, c)
		pl.finish(j, &res)
	}
}

// take hands out the next position, waiting while the window is full: at most window
// runs are started and unwritten, which bounds the memory held by finished rows however
// long one slow run holds up the line.
func (pl *pipeline) take() (int, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for !pl.stopped && pl.next < pl.total && pl.next >= pl.out.written+pl.window {
		pl.cond.Wait()
	}
	// The context is read here too, not only through the AfterFunc that sets stopped: a
	// cancellation is then seen at the next run boundary, synchronously, so that one
	// worker stops exactly after the run during whose write it was cancelled.
	if pl.stopped || pl.ctx.Err() != nil || pl.next >= pl.total {
		return 0, false
	}
	j := pl.next
	pl.next++
	return j, true
}

// finish files run j's result and writes every row that is now next in line.
func (pl *pipeline) finish(j int, res *result) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.ring[j%pl.window] = res
	wrote := false
	for pl.failed == nil {
		k := pl.out.written % pl.window
		next := pl.ring[k]
		if next == nil {
			break
		}
		pl.ring[k] = nil
		err := next.err
		if err == nil {
			err = pl.out.write(next.fields, next.line)
		}
		if err != nil {
			pl.failed, pl.stopped = err, true
			break
		}
		wrote = true
		pl.p.Advance(pl.out.written)
	}
	if wrote || pl.stopped {
		pl.cond.Broadcast()
	}
}

// runOne runs the shard's j-th run and renders its row.
func runOne(ctx context.Context, r Runner, l *layout, sh Shard, j int, c *codec) result {
	k := sh.run(j)
	p, rep := k/l.spec.Replicates, k%l.spec.Replicates
	seed := RunSeed(l.spec.Seed, p, rep)
	var res result
	vals, err := runGuarded(ctx, r, l.spec.knobs(p), seed)
	if err != nil {
		res.err = fmt.Errorf("run %d (point %d, replicate %d, seed %d): %w", k, p, rep, seed, err)
		return res
	}
	if res.fields, err = l.row(k, vals); err != nil {
		res.err = fmt.Errorf("run %d (point %d, replicate %d, seed %d): %w", k, p, rep, seed, err)
		return res
	}
	res.line = c.encode(res.fields)
	if len(res.line) > MaxRowBytes {
		res.err = fmt.Errorf("run %d: row of %d bytes, at most %d allowed", k, len(res.line), MaxRowBytes)
	}
	return res
}

// runGuarded runs one world, turning a panic inside it into the run's error: a bug in a
// model is one run's failure, reported with the run's point and seed (which reproduce it)
// and where it happened, not a crash of every worker with the finished rows unflushed.
func runGuarded(ctx context.Context, r Runner, knobs []KV, seed uint64) (vals []Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			vals, err = nil, fmt.Errorf("panicked (a bug in redlock-sim: this run's knobs and seed reproduce it): %v\n%s", p, debug.Stack())
		}
	}()
	return r.Run(ctx, knobs, seed)
}

// row renders run k's values as runs.csv fields, checking them against the columns.
func (l *layout) row(k int, vals []Value) ([]string, error) {
	if len(vals) != len(l.cols) {
		return nil, fmt.Errorf("runner returned %d values for %d columns", len(vals), len(l.cols))
	}
	fields := l.runFields(k)
	for c, col := range l.cols {
		f, err := vals[c].format(col.Kind)
		if err != nil {
			return nil, fmt.Errorf("column %s (%s): %w", col.Name, col.Kind, err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}
