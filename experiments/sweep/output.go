package sweep

import (
	"bufio"
	"bytes"
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
)

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
}

// openOutput prepares dir for the sweep described by m. Everything that can refuse
// (a folder holding other results, a resume that does not match, a damaged runs.csv) is
// checked before the first byte is written. It returns nil, nil when resuming a sweep that
// is already complete.
func openOutput(dir string, l *layout, m Manifest, sh Shard, resume, overwrite bool) (*output, error) {
	if err := checkFolder(dir); err != nil {
		return nil, err
	}
	have := resultFiles(dir)
	o := &output{dir: dir, l: l, m: m, shard: sh, hash: sha256.New(), codec: newCodec()}
	var err error
	switch {
	case resume && len(have) > 0:
		o, err = o.resume(have)
	case len(have) > 0 && !overwrite:
		return nil, usagef("output folder %s already holds a sweep (%s); resume it, choose another folder, or overwrite it",
			dir, strings.Join(have, ", "))
	default:
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
		return nil, nil
	}
	keep, rows, err := o.check()
	if err != nil {
		return o, err
	}
	o.written = rows
	return o, o.openFiles(keep, keep == 0)
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
	size := o.shard.size(o.l.spec.Runs())
	for {
		line, err := lr.next()
		if err == io.EOF {
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
		keep += int64(len(line))
		rows++
	}
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
		return fmt.Errorf("write %s: %w", filepath.Join(o.dir, RunsFile), err)
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
	return writeAtomic(o.dir, ManifestFile, o.m.encode())
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
	if o.sumFile != nil {
		o.sumFile.Close()
		os.Remove(filepath.Join(o.dir, SummaryFile+".tmp"))
	}
}
