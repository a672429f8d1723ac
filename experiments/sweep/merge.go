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
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MergeOptions tunes Merge.
type MergeOptions struct {
	// Overwrite replaces results already in the output folder.
	Overwrite bool
	// Lock, when set, is the output folder's lock, taken by the caller with LockFolder
	// and still held when Merge returns, so that the caller can draw the figures into the
	// folder before anyone else may write it; the caller unlocks it. When nil, Merge takes
	// the lock and releases it on return.
	Lock *Lock
}

// shardDir is one input of Merge.
type shardDir struct {
	dir   string
	m     *Manifest
	shard Shard
	f     *os.File
	lr    *lineReader
	hash  hash.Hash
}

// Merge joins the complete shard folders dirs (every shard i/n of one sweep, in any order)
// into out: runs.csv, summary.csv and manifest.json byte-identical to those of the same
// sweep run unsharded. It refuses, with nothing written, shards of different sweeps or
// programs, incomplete shards, a missing or repeated shard, rows that are not the shard's
// runs in order, and files whose SHA-256 is not the one their manifest recorded. It reads
// every shard once, in step, holding one line of each, so memory does not grow with the
// sweep.
func Merge(out string, dirs []string, opt MergeOptions) error {
	shards, err := readShards(dirs)
	if err != nil {
		return err
	}
	first := shards[0].m
	spec := first.Spec
	if err := spec.validateShape(); err != nil {
		return usagef("merge: %s: recorded spec: %v", shards[0].dir, err)
	}
	l, err := newLayout(&spec, first.Columns, first.Ratios)
	if err != nil {
		return usagef("merge: %s: recorded columns: %v", shards[0].dir, err)
	}
	if opt.Lock != nil {
		if err := opt.Lock.covers(out); err != nil {
			return err
		}
	} else {
		lock, err := LockFolder(out, "merge")
		if err != nil {
			return err
		}
		defer lock.Unlock()
	}
	if err := checkMergeOut(out, dirs, opt.Overwrite); err != nil {
		return err
	}
	defer func() {
		for _, s := range shards {
			if s.f != nil {
				s.f.Close()
			}
		}
	}()
	if err := openShards(shards, l); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usagef("merge: output folder %s: cannot create: %v", out, unwrapPath(err))
	}
	m := newManifest(&spec, l, Shard{}, first.Tool, first.Commit)
	m.GoVersion = first.GoVersion
	sum, err := mergeRows(out, shards, l)
	if err != nil {
		return err
	}
	m.Complete = true
	m.RunsSHA256 = sum
	return installMerged(out, &m)
}

// readShards reads and cross-checks the manifests, and orders the shards by index.
func readShards(dirs []string) ([]*shardDir, error) {
	if len(dirs) == 0 {
		return nil, usagef("merge: no shard folders given")
	}
	if len(dirs) > MaxShards {
		return nil, usagef("merge: %d folders, at most %d shards allowed", len(dirs), MaxShards)
	}
	var shards []*shardDir
	for _, dir := range dirs {
		m, err := ReadManifest(dir)
		if err != nil {
			return nil, usagef("merge: %s: not a sweep folder: %v", dir, unwrapPath(err))
		}
		sh, err := parseShardText(m.Shard)
		if err != nil {
			return nil, usagef("merge: %s: manifest shard %q: %v", dir, m.Shard, err)
		}
		if !m.Complete {
			return nil, usagef("merge: %s: shard %s is incomplete; resume it first", dir, m.Shard)
		}
		shards = append(shards, &shardDir{dir: dir, m: m, shard: sh})
	}
	n := shards[0].shard.Count
	byIndex := make([]*shardDir, n)
	for _, s := range shards {
		if d := shards[0].m.mismatch(s.m, "in "+shards[0].dir, "in "+s.dir, false); len(d) > 0 {
			return nil, usagef("merge: %s and %s hold different sweeps:\n  %s", shards[0].dir, s.dir, strings.Join(d, "\n  "))
		}
		if s.shard.Count != n {
			return nil, usagef("merge: %s is shard %s but %s is shard %s: different shard counts",
				shards[0].dir, shards[0].m.Shard, s.dir, s.m.Shard)
		}
		if prev := byIndex[s.shard.Index-1]; prev != nil {
			return nil, usagef("merge: shard %s given twice: %s and %s", s.m.Shard, prev.dir, s.dir)
		}
		if want := s.shard.size(s.m.Spec.Runs()); s.m.ShardRuns != want || s.m.Runs != s.m.Spec.Runs() {
			return nil, usagef("merge: %s: manifest counts (%d runs, %d in shard) do not fit its spec (%d runs, %d in shard)",
				s.dir, s.m.Runs, s.m.ShardRuns, s.m.Spec.Runs(), want)
		}
		byIndex[s.shard.Index-1] = s
	}
	var missing []string
	for i, s := range byIndex {
		if s == nil {
			missing = append(missing, fmt.Sprintf("%d/%d", i+1, n))
		}
	}
	if len(missing) > 0 {
		return nil, usagef("merge: missing shard %s", strings.Join(missing, ", "))
	}
	return byIndex, nil
}

func parseShardText(s string) (Shard, error) {
	is, ns, _ := strings.Cut(s, "/")
	i, errI := strconv.Atoi(is)
	n, errN := strconv.Atoi(ns)
	sh := Shard{Index: i, Count: n}
	if errI != nil || errN != nil || sh == (Shard{}) || !sh.valid() {
		return Shard{}, errors.New("want i/n")
	}
	return sh, nil
}

// checkMergeOut refuses an output folder that holds results (unless overwriting) or that
// is one of the inputs, which the merge would destroy while reading it.
func checkMergeOut(out string, dirs []string, overwrite bool) error {
	if err := checkFolder(out); err != nil {
		return err
	}
	if fo, err := os.Stat(out); err == nil {
		for _, d := range dirs {
			if fd, err := os.Stat(d); err == nil && os.SameFile(fo, fd) {
				return usagef("merge: the output folder %s is also an input", out)
			}
		}
	}
	if have := resultFiles(out); len(have) > 0 && !overwrite {
		return usagef("merge: output folder %s already holds results (%s); choose another folder or overwrite it",
			out, strings.Join(have, ", "))
	}
	return nil
}

func openShards(shards []*shardDir, l *layout) error {
	header := encodeRow(l.runsHeader)
	for _, s := range shards {
		f, err := os.Open(filepath.Join(s.dir, RunsFile))
		if err != nil {
			return usagef("merge: %s: %v", s.dir, unwrapPath(err))
		}
		s.f, s.lr, s.hash = f, newLineReader(f), sha256.New()
		line, err := s.lr.next()
		if err != nil || !bytes.Equal(line, header) {
			return usagef("merge: %s: %s does not start with the expected header", s.dir, RunsFile)
		}
		s.hash.Write(line)
	}
	return nil
}

// mergeRows interleaves the shards' rows into out/runs.csv.tmp and summarises them into
// out/summary.csv.tmp, checking every row and every shard's SHA-256; it returns the
// SHA-256 of the merged runs.csv.
func mergeRows(out string, shards []*shardDir, l *layout) (string, error) {
	runsTmp, sumTmp := filepath.Join(out, RunsFile+".tmp"), filepath.Join(out, SummaryFile+".tmp")
	ok := false
	defer func() {
		if !ok {
			os.Remove(runsTmp)
			os.Remove(sumTmp)
		}
	}()
	rf, rw, err := createBuffered(runsTmp)
	if err != nil {
		return "", err
	}
	defer rf.Close()
	sf, sw, err := createBuffered(sumTmp)
	if err != nil {
		return "", err
	}
	defer sf.Close()
	h := sha256.New()
	dst := io.MultiWriter(rw, h)
	header := encodeRow(l.runsHeader)
	dst.Write(header)
	sum, err := newSummarizer(l, sw)
	if err != nil {
		return "", err
	}
	n := len(shards)
	c := newCodec()
	for k := range l.spec.Runs() {
		s := shards[k%n]
		line, err := s.lr.next()
		if err != nil {
			return "", usagef("merge: %s: %s line %d: %v (want %d rows)", s.dir, RunsFile, s.lr.line+1, eofText(err), s.m.ShardRuns)
		}
		fields, err := c.decode(line)
		if err == nil {
			err = l.checkRow(fields, k)
		}
		if err != nil {
			return "", usagef("merge: %s: %s line %d: %v", s.dir, RunsFile, s.lr.line, err)
		}
		s.hash.Write(line)
		if _, err := dst.Write(line); err != nil {
			return "", err
		}
		if err := sum.add(fields); err != nil {
			return "", err
		}
	}
	for _, s := range shards {
		if line, err := s.lr.next(); err != io.EOF || len(line) > 0 {
			return "", usagef("merge: %s: %s has more than its %d rows", s.dir, RunsFile, s.m.ShardRuns)
		}
		if got := hex.EncodeToString(s.hash.Sum(nil)); got != s.m.RunsSHA256 {
			return "", usagef("merge: %s: %s has SHA-256 %s but its manifest recorded %s; the file changed after the shard finished",
				s.dir, RunsFile, got, s.m.RunsSHA256)
		}
	}
	for _, c := range []struct {
		f *os.File
		w *bufio.Writer
	}{{rf, rw}, {sf, sw}} {
		if err := c.w.Flush(); err != nil {
			return "", err
		}
		if err := c.f.Sync(); err != nil {
			return "", err
		}
	}
	ok = true
	return hex.EncodeToString(h.Sum(nil)), nil
}

func eofText(err error) error {
	if err == io.EOF {
		return errors.New("the file ends early")
	}
	return err
}

func createBuffered(path string) (*os.File, *bufio.Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, nil, usagef("merge: cannot write %s: %v", path, unwrapPath(err))
	}
	return f, bufio.NewWriterSize(f, 64<<10), nil
}

// installMerged moves the checked files into place: the old manifest goes first and the
// new one comes last, so the folder never shows a complete manifest over other files.
func installMerged(out string, m *Manifest) error {
	if err := os.Remove(filepath.Join(out, ManifestFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, name := range []string{RunsFile, SummaryFile} {
		if err := os.Rename(filepath.Join(out, name+".tmp"), filepath.Join(out, name)); err != nil {
			return err
		}
	}
	return writeAtomic(out, ManifestFile, m.encode())
}
