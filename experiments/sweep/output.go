package sweep

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// refusal explains why a fresh sweep will not write into dir, which holds the sweep files
// have, and names the three ways on: whether the sweep there is complete or partial
// decides what --resume would do.
func refusal(dir string, have []string) string {
	const elsewhere = "--out DIR to write this sweep elsewhere, or --overwrite to replace it"
	m, err := ReadManifest(dir)
	switch {
	case err != nil:
		return fmt.Sprintf("output folder %s already holds sweep files (%s) but no readable %s, so --resume cannot continue it; %s",
			dir, strings.Join(have, ", "), ManifestFile, elsewhere)
	case m.Complete:
		return fmt.Sprintf("output folder %s already holds a complete sweep (%d runs); to go on: --resume to keep it (it checks the files and reruns nothing), %s",
			dir, m.ShardRuns, elsewhere)
	}
	return fmt.Sprintf("output folder %s already holds a partial sweep (%d of %d runs written); to go on: --resume to finish it, %s",
		dir, countRows(filepath.Join(dir, RunsFile)), m.ShardRuns, elsewhere)
}

// countRows counts the complete rows of a runs.csv (lines after the header).
func countRows(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 64<<10)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			return max(0, n-1)
		}
	}
}

// output is a sweep folder being written: runs.csv open for appending, the running
// SHA-256 of its bytes, and (for a whole sweep) summary.csv.tmp being filled point by
// point.
type output struct {
	dir     string
	l       *layout
	m       Manifest
	shard   Shard
	runs    *os.File
	hash    hash.Hash
	sumFile *os.File
	sumBuf  *bufio.Writer
	sum     *summarizer // nil for a shard of several: its points are partial
	codec   *codec      // for reading rows back
	written int         // rows of this shard in runs.csv
	closed  bool

	ctx       context.Context // for the runs that re-derive kept rows on resume
	r         Runner
	workers   int      // goroutines that re-derive kept rows
	verify    bool     // re-derive every kept row, not a sample
	sums      *os.File // runs.csv.sums, open for appending while the sweep is incomplete
	sumsKeep  int64    // bytes of runs.csv.sums that resume verified and keeps
	sumsAdd   []byte   // row sums resume computed for kept rows that had none
	rederived int      // kept rows re-run on resume to check them
	afresh    bool     // resume found nothing to resume and started the sweep
	done      bool     // resume found the sweep complete: nothing to write
	rewrote   bool     // resume of a complete sweep rewrote a missing or wrong summary.csv
}

// SumsFile holds, while a sweep is incomplete, one line per row of runs.csv: the first 16
// hex digits of the row's SHA-256, appended right after the row. Resume checks every kept
// row against it, so a row edited after it was written (attempts+1, a flipped bool, a
// changed trace_hash) is caught without re-running it; a row with no sum (a kill between
// the two appends, or a folder from before this file existed) is re-derived by running it
// again. Re-running every kept row would be the surest check and is cheap for the default
// study (measured on 2 cores: 0.2 to 7 ms a run, 1.8 to 6.7 s for a whole sweep), but a
// resume would then cost as much as the runs it saves, and a sweep of hour-long worlds is
// exactly what one resumes; a sum per row catches every edit of a kept row for 17 bytes a
// row, and the deterministic sample of re-runs (see resampleRows) catches the rest: a
// program that gives other rows under the same version and commit.
// The file is removed when the sweep completes, whose manifest then records the SHA-256
// of the whole of runs.csv instead.
//
// The sums guard against accidents (a torn write, a truncated file, an edited runs.csv),
// not against someone who edits a row and its sum (or a complete runs.csv and its
// manifest's SHA-256) to match: a sum is no signature, and the sample re-runs only some
// rows. Options.Verify re-runs every kept row, which catches that too.
const SumsFile = "runs.csv.sums"

// rowSumLen is the length of one line of SumsFile, newline included.
const rowSumLen = 17

// resampleRows is about how many kept rows resume re-runs even when their sums match:
// evenly spaced, plus the last, so that a program whose rows differ from the recorded
// ones under an unchanged version string is refused, at the cost of a few runs.
const resampleRows = 16

func rowSum(line []byte) []byte {
	h := sha256.Sum256(line)
	out := make([]byte, rowSumLen)
	hex.Encode(out, h[:(rowSumLen-1)/2])
	out[rowSumLen-1] = '\n'
	return out
}

// openOutput prepares dir for the sweep described by m. Everything that can refuse
// (a folder holding other results, a resume that does not match, a damaged runs.csv) is
// checked before the first byte is written. It returns nil, nil when resuming a sweep that
// is already complete.
func openOutput(ctx context.Context, r Runner, l *layout, m Manifest, workers int, opt Options) (*output, error) {
	dir := opt.Dir
	if err := checkFolder(dir); err != nil {
		return nil, err
	}
	have := resultFiles(dir)
	o := &output{dir: dir, l: l, m: m, shard: opt.Shard, hash: sha256.New(), codec: newCodec(), ctx: ctx, r: r,
		workers: workers, verify: opt.Verify}
	var err error
	switch {
	case opt.Resume && len(have) > 0:
		o, err = o.resume(have)
	case len(have) > 0 && !opt.Overwrite:
		return nil, &UsageError{Err: errors.New(refusal(dir, have))}
	default:
		o.afresh = opt.Resume
		err = o.fresh(have)
	}
	if err != nil {
		if o != nil {
			o.close()
		}
		return nil, err
	}
	return o, nil
}

// fresh starts a new sweep: the manifest (incomplete) first, so a folder with runs.csv
// always says which sweep it belongs to; the old manifest goes first when overwriting, so a
// crash in between never leaves old rows under a new manifest.
func (o *output) fresh(old []string) error {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return usagef("output folder %s: cannot create: %v", o.dir, unwrapPath(err))
	}
	for _, name := range old {
		if err := os.Remove(filepath.Join(o.dir, name)); err != nil {
			return fmt.Errorf("overwrite %s: %w", o.dir, err)
		}
	}
	if err := os.Remove(filepath.Join(o.dir, SumsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("overwrite %s: %w", o.dir, err)
	}
	if err := writeAtomic(o.dir, ManifestFile, o.m.encode()); err != nil {
		return usagef("output folder %s: cannot write: %v", o.dir, unwrapPath(err))
	}
	return o.openFiles(0, true)
}

// resume continues the sweep recorded in the folder after checking that it is this very
// sweep and that runs.csv is a clean prefix of it (only a torn last line is dropped).
func (o *output) resume(have []string) (*output, error) {
	old, err := ReadManifest(o.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("output folder %s holds %s but no %s: not a sweep that can be resumed; move it aside",
			o.dir, strings.Join(have, ", "), ManifestFile)
	}
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("resume refused: %w", err)}
	}
	if d := old.mismatch(&o.m, "recorded", "now", true); len(d) > 0 {
		return nil, usagef("resume refused: %s holds a different sweep:\n  %s\nrun it into another folder, or overwrite this one",
			o.dir, strings.Join(d, "\n  "))
	}
	if old.Complete {
		o.done = true
		return o, o.checkComplete(old)
	}
	keep, rows, err := o.check()
	if err != nil {
		return o, err
	}
	o.written = rows
	return o, o.openFiles(keep, keep == 0)
}

// checkComplete verifies a complete folder before resume reports it done: runs.csv must
// have the SHA-256 its manifest recorded (a truncated or edited file is refused), every
// row must be its run's (with verify, each is re-run and compared byte for byte), and a
// whole sweep's summary.csv is recomputed from it and rewritten when missing or different,
// since it is derived from runs.csv alone.
func (o *output) checkComplete(old *Manifest) error {
	path := filepath.Join(o.dir, RunsFile)
	if _, err := os.Stat(path); err != nil {
		return usagef("resume refused: %s: the manifest says complete but %v; move the folder aside or rerun with --overwrite", o.dir, unwrapPath(err))
	}
	if err := o.openSummary(); err != nil {
		return err
	}
	defer o.close()
	var rd *rederiver
	if o.verify {
		rd = newRederiver(o, o.workers)
	}
	scan, err := scanRuns(path, o.l, o.shard, o.codec, func(fields []string, line []byte, j, n int) error {
		if rd != nil && !rd.check(line, j, n) {
			return errStopScan
		}
		if o.sum != nil {
			return o.sum.add(fields)
		}
		return nil
	})
	if rd != nil {
		if werr := rd.wait(); werr != nil {
			return werr
		}
	}
	if err != nil {
		return usagef("resume refused: %s: %v", path, err)
	}
	if scan.sha256 != old.RunsSHA256 || scan.rows != old.ShardRuns || scan.torn {
		return usagef("resume refused: %s has SHA-256 %s but the manifest recorded %s (%s): the file changed after the sweep finished; move the folder aside or rerun with --overwrite",
			path, scan.sha256, old.RunsSHA256, scan.detail(old.ShardRuns))
	}
	if scan.bad != nil { // the SHA-256 matches a file the manifest should never have called complete
		return usagef("resume refused: %s %v; move the folder aside or rerun with --overwrite", path, scan.bad)
	}
	os.Remove(filepath.Join(o.dir, SumsFile)) // left by a kill between the last two writes
	if o.sum == nil {
		return nil
	}
	return o.installSummary()
}

// installSummary puts the summary just recomputed in place of summary.csv when that is
// missing or differs, and removes it otherwise.
func (o *output) installSummary() error {
	if err := o.sumBuf.Flush(); err != nil {
		return err
	}
	if err := o.sumFile.Close(); err != nil {
		return err
	}
	o.sumFile = nil
	tmp, dst := filepath.Join(o.dir, SummaryFile+".tmp"), filepath.Join(o.dir, SummaryFile)
	want, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	if have, err := os.ReadFile(dst); err == nil && bytes.Equal(have, want) {
		return os.Remove(tmp)
	}
	o.rewrote = true
	os.Remove(tmp)
	return writeAtomic(o.dir, SummaryFile, want)
}

// check reads runs.csv, verifies every complete row, and replays the rows into the hash
// and the summary; it returns the byte length and row count of the prefix to keep.
func (o *output) check() (keep int64, rows int, err error) {
	path := filepath.Join(o.dir, RunsFile)
	if err := o.openSummary(); err != nil {
		return 0, 0, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	lr := newLineReader(f)
	header := encodeRow(o.l.runsHeader)
	line, err := lr.next()
	if err == io.EOF && bytes.HasPrefix(header, line) {
		return 0, 0, nil // killed while writing the header
	}
	if err != nil && err != io.EOF {
		return 0, 0, usagef("resume refused: %s: %v", path, err)
	}
	if !bytes.Equal(line, header) {
		return 0, 0, usagef("resume refused: %s: header %q differs from %q", path, strings.TrimSpace(string(line)), strings.TrimSpace(string(header)))
	}
	o.hash.Write(header)
	keep = int64(len(header))
	rd := newRederiver(o, o.workers)
	keep, rows, err = o.checkRows(lr, keep, rd)
	if werr := rd.wait(); werr != nil {
		return 0, 0, werr // an earlier row than any problem checkRows met
	}
	return keep, rows, err
}

// checkRows is check's loop over the rows after the header, handing the rows to re-run
// to rd.
func (o *output) checkRows(lr *lineReader, keep int64, rd *rederiver) (int64, int, error) {
	path := filepath.Join(o.dir, RunsFile)
	size := o.shard.size(o.l.spec.Runs())
	sums := o.readSums()
	every := max(1, len(sums)/rowSumLen/resampleRows)
	if o.verify {
		every = 1
	}
	var last []byte
	rows, lastChecked := 0, false
	for {
		line, err := lr.next()
		if err == io.EOF {
			if rows > 0 && !lastChecked { // the last kept row is always re-derived
				rd.check(last, rows-1, lr.line)
			}
			return keep, rows, nil // a torn last line, if any, is dropped
		}
		if err != nil {
			return 0, 0, usagef("resume refused: %s: %v", path, err)
		}
		if rows == size {
			return 0, 0, usagef("resume refused: %s: more rows than the shard's %d runs", path, size)
		}
		if err := o.replay(line, rows); err != nil {
			return 0, 0, usagef("resume refused: %s line %d: %v; the file is damaged or from another sweep, move it aside",
				path, lr.line, err)
		}
		// Sums are trusted up to the first one missing or wrong; every row after that is
		// re-derived, and gets its sum written anew.
		sum := rowSum(line)
		matched := o.sumsKeep == int64(rows)*rowSumLen && int64(len(sums)) >= o.sumsKeep+rowSumLen &&
			bytes.Equal(sums[o.sumsKeep:o.sumsKeep+rowSumLen], sum)
		if matched {
			o.sumsKeep += rowSumLen
		} else {
			o.sumsAdd = append(o.sumsAdd, sum...)
		}
		lastChecked = !matched || rows%every == 0
		if lastChecked && !rd.check(line, rows, lr.line) {
			return 0, 0, nil // a row re-run gave another: rd.wait says which
		}
		last = append(last[:0], line...)
		keep += int64(len(line))
		rows++
	}
}

// readSums returns the whole lines of runs.csv.sums (none when it is missing).
func (o *output) readSums() []byte {
	b, err := os.ReadFile(filepath.Join(o.dir, SumsFile))
	if err != nil {
		return nil
	}
	return b[:len(b)/rowSumLen*rowSumLen]
}

// rederive runs the shard's j-th run again and refuses the folder when its row differs
// from the recorded line (line n of runs.csv) by a single byte, naming the run, its seed
// and the first column that differs. c is the calling goroutine's codec.
func (o *output) rederive(c *codec, line []byte, j, n int) error {
	res := runOne(o.ctx, o.r, o.l, o.shard, j, c)
	if res.err != nil {
		return fmt.Errorf("resume: re-deriving %s line %d: %w", RunsFile, n, res.err)
	}
	if bytes.Equal(res.line, line) {
		return nil
	}
	got, _ := c.decode(line)
	what := "the row"
	for i := range min(len(got), len(res.fields)) {
		if got[i] != res.fields[i] {
			what = fmt.Sprintf("column %s: recorded %q, re-derived %q", o.l.runsHeader[i], got[i], res.fields[i])
			break
		}
	}
	k := o.shard.run(j)
	p, r := k/o.l.spec.Replicates, k%o.l.spec.Replicates
	return usagef("resume refused: %s line %d (point %d, replicate %d, seed %d) is not what its run gives: %s; the file was changed after it was written, or by another program; move the folder aside or rerun with --overwrite",
		filepath.Join(o.dir, RunsFile), n, p, r, RunSeed(o.l.spec.Seed, p, r), what)
}

func (o *output) replay(line []byte, j int) error {
	fields, err := o.codec.decode(line)
	if err != nil {
		return err
	}
	if err := o.l.checkRow(fields, o.shard.run(j)); err != nil {
		return err
	}
	o.hash.Write(line)
	if o.sum != nil {
		return o.sum.add(fields)
	}
	return nil
}

func (o *output) openSummary() error {
	if o.shard.norm().Count != 1 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(o.dir, SummaryFile+".tmp"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return usagef("output folder %s: cannot write: %v", o.dir, unwrapPath(err))
	}
	o.sumFile, o.sumBuf = f, bufio.NewWriter(f)
	o.sum, err = newSummarizer(o.l, o.sumBuf)
	return err
}

// openFiles opens runs.csv for appending after cutting it to keep bytes, writing the
// header when the file has none.
func (o *output) openFiles(keep int64, header bool) error {
	if o.sumFile == nil {
		if err := o.openSummary(); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(filepath.Join(o.dir, RunsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return usagef("output folder %s: cannot write: %v", o.dir, unwrapPath(err))
	}
	o.runs = f
	if err := f.Truncate(keep); err != nil {
		return err
	}
	sf, err := os.OpenFile(filepath.Join(o.dir, SumsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return usagef("output folder %s: cannot write: %v", o.dir, unwrapPath(err))
	}
	o.sums = sf
	if err := sf.Truncate(o.sumsKeep); err != nil {
		return err
	}
	if _, err := sf.Write(o.sumsAdd); err != nil {
		return err
	}
	o.sumsAdd = nil
	if header {
		h := encodeRow(o.l.runsHeader)
		if _, err := f.Write(h); err != nil {
			return err
		}
		o.hash.Write(h)
	}
	return nil
}

// write appends one finished run: one write call, so a kill -9 can tear at most this row.
func (o *output) write(fields []string, line []byte) error {
	if _, err := o.runs.Write(line); err != nil {
		return writeError(filepath.Join(o.dir, RunsFile), err)
	}
	if _, err := o.sums.Write(rowSum(line)); err != nil {
		return writeError(filepath.Join(o.dir, SumsFile), err)
	}
	o.hash.Write(line)
	o.written++
	if o.sum != nil {
		return o.sum.add(fields)
	}
	return nil
}

// finish completes the folder: runs.csv synced, summary.csv renamed into place, the
// manifest marked complete with the SHA-256 of runs.csv, last.
func (o *output) finish() error {
	if err := o.runs.Sync(); err != nil {
		return err
	}
	if err := o.runs.Close(); err != nil {
		return err
	}
	o.runs = nil
	if o.sum != nil {
		if err := o.sumBuf.Flush(); err != nil {
			return err
		}
		if err := o.sumFile.Sync(); err != nil {
			return err
		}
		if err := o.sumFile.Close(); err != nil {
			return err
		}
		o.sumFile = nil
		if err := os.Rename(filepath.Join(o.dir, SummaryFile+".tmp"), filepath.Join(o.dir, SummaryFile)); err != nil {
			return err
		}
	}
	o.m.Complete = true
	o.m.RunsSHA256 = hex.EncodeToString(o.hash.Sum(nil))
	o.closed = true
	if err := writeAtomic(o.dir, ManifestFile, o.m.encode()); err != nil {
		return err
	}
	// The manifest's SHA-256 now covers every row; a kill before this line leaves the
	// sums file behind, which a later resume removes.
	o.sums.Close()
	o.sums = nil
	return os.Remove(filepath.Join(o.dir, SumsFile))
}

// close releases an unfinished output; runs.csv stays as it is, ready to resume, and the
// partial summary goes.
func (o *output) close() {
	if o.closed {
		return
	}
	o.closed = true
	if o.runs != nil {
		o.runs.Sync()
		o.runs.Close()
	}
	if o.sums != nil {
		o.sums.Close()
	}
	if o.sumFile != nil {
		o.sumFile.Close()
		os.Remove(filepath.Join(o.dir, SummaryFile+".tmp"))
	}
}

// writeError says that writing path failed and why, naming the path once (the os error
// names it again), and for a full disk what to do: every row written before is kept, so
// the sweep continues with --resume once there is room.
func writeError(path string, err error) error {
	cause := unwrapPath(err)
	if errors.Is(cause, syscall.ENOSPC) {
		return fmt.Errorf("write %s: the disk is full; free some space, then continue with --resume (the rows written so far are kept): %w", path, cause)
	}
	return fmt.Errorf("write %s: %w", path, cause)
}
