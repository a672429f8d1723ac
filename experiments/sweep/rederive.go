package sweep

import (
	"bytes"
	"sync"
)

// rederiver re-runs kept rows on resume and compares each with its recorded line, on
// several goroutines: resume with Options.Verify re-runs every row, which on one
// goroutine would take as long as the sweep took on one core. Rows are handed to it in
// run order, at most a window of them waiting, so memory stays bounded; the problem it
// reports is that of the first row in run order whose run differs or fails, whatever the
// order in which the goroutines finish, so a refusal names the same row every time.
type rederiver struct {
	o    *output
	jobs chan rederiveJob
	wg   sync.WaitGroup

	mu       sync.Mutex
	failedAt int // the smallest failed row so far; -1 while none has
	failure  error
}

// rederiveJob is one kept row to re-run: the shard's j-th run, line n of runs.csv.
type rederiveJob struct {
	line []byte
	j, n int
}

// newRederiver starts workers goroutines that re-run the rows check hands them.
func newRederiver(o *output, workers int) *rederiver {
	rd := &rederiver{o: o, jobs: make(chan rederiveJob, windowSize(workers)), failedAt: -1}
	for range max(1, workers) {
		rd.wg.Go(rd.work)
	}
	return rd
}

func (rd *rederiver) work() {
	c := newCodec()
	for job := range rd.jobs {
		if rd.failedBefore(job.j) {
			continue // an earlier row already failed: it is the one to report
		}
		if err := rd.o.rederive(c, job.line, job.j, job.n); err != nil {
			rd.fail(job.j, err)
		}
	}
}

func (rd *rederiver) failedBefore(j int) bool {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	return rd.failedAt >= 0 && rd.failedAt < j
}

func (rd *rederiver) fail(j int, err error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.failedAt < 0 || j < rd.failedAt {
		rd.failedAt, rd.failure = j, err
	}
}

// check queues the shard's j-th run (line n of runs.csv, recorded as line) to be re-run
// and compared. It returns false, queuing nothing, once a row has failed: the caller may
// stop reading, since wait will report that row or an earlier one.
func (rd *rederiver) check(line []byte, j, n int) bool {
	rd.mu.Lock()
	failed := rd.failedAt >= 0
	rd.mu.Unlock()
	if failed {
		return false
	}
	rd.o.rederived++
	rd.jobs <- rederiveJob{line: bytes.Clone(line), j: j, n: n}
	return true
}

// wait waits for every queued row and returns the problem of the first (in run order)
// that failed, or nil. It must be called once, after the last check.
func (rd *rederiver) wait() error {
	close(rd.jobs)
	rd.wg.Wait()
	return rd.failure
}
