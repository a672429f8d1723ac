package sweep

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// runsScan is what scanRuns found in a runs.csv.
type runsScan struct {
	sha256 string // of every byte read, a torn last line included
	rows   int    // whole rows after the header
	torn   bool   // the file ends in a line without its line end
	bad    error  // the first header or row that is not the sweep's: "line N: column …"
}

// detail says how the scanned file differs from a complete shard of want rows, for a
// refusal whose SHA-256 does not match.
func (s runsScan) detail(want int) string {
	d := fmt.Sprintf("%d rows, the sweep has %d", s.rows, want)
	if s.torn {
		d += "; the last line is torn (no line end)"
	}
	if s.bad != nil {
		d += "; first bad " + s.bad.Error()
	}
	return d
}

// errStopScan, returned by scanRuns's each, stops the scan where it is.
var errStopScan = errors.New("scan stopped")

// scanRuns reads the runs.csv at path to its end, hashing every byte, and checks its
// header and each whole row against l: row j must be the shard's j-th run, each field
// parsing as its column's kind. Each good row is handed to each (its fields, its line,
// j and its line number) until the first bad one, which is recorded in the result; the
// rest of the file is still hashed and counted, so that a refusal can give both. It is
// the one reading of a finished runs.csv, shared by resume of a complete sweep and by
// VerifyFolder. Its error is for a file that cannot be read to its end, or an error of
// each other than errStopScan.
func scanRuns(path string, l *layout, sh Shard, c *codec, each func(fields []string, line []byte, j, n int) error) (runsScan, error) {
	var s runsScan
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	lr := newLineReader(f)
	h := sha256.New()
	header := encodeRow(l.runsHeader)
	size := sh.size(l.spec.Runs())
	for {
		line, err := lr.next()
		h.Write(line)
		if err == io.EOF {
			s.torn = len(line) > 0
			break
		}
		if err != nil {
			return s, err
		}
		if lr.line == 1 {
			if !bytes.Equal(line, header) {
				s.bad = fmt.Errorf("line 1: header %q differs from the sweep's %q",
					strings.TrimSpace(string(line)), strings.TrimSpace(string(header)))
			}
			continue
		}
		j := s.rows
		s.rows++
		if s.bad != nil {
			continue
		}
		if j >= size {
			s.bad = fmt.Errorf("line %d: more rows than the shard's %d runs", lr.line, size)
			continue
		}
		fields, err := l.decodeRow(c, line, sh.run(j))
		if err != nil {
			s.bad = fmt.Errorf("line %d: %w", lr.line, err)
			continue
		}
		if err := each(fields, line, j, lr.line); err != nil {
			if err == errStopScan {
				return s, nil
			}
			return s, err
		}
	}
	s.sha256 = hex.EncodeToString(h.Sum(nil))
	return s, nil
}

// decodeRow decodes line and checks it is run k's row, naming the column at fault.
func (l *layout) decodeRow(c *codec, line []byte, k int) ([]string, error) {
	fields, err := c.decode(line)
	if err != nil {
		return nil, l.decodeError(line, err)
	}
	return fields, l.checkRow(fields, k)
}

// decodeError rewords a CSV parse error of one runs.csv line (whose own line and column
// count from that line alone) to name the column it fell in, by the header.
func (l *layout) decodeError(line []byte, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return err
	}
	at := min(max(pe.Column-1, 0), len(line)) // ParseError.Column is 1-based, in bytes
	field, quoted := 0, false
	for _, b := range line[:at] {
		switch {
		case b == '"':
			quoted = !quoted
		case b == ',' && !quoted:
			field++
		}
	}
	name := fmt.Sprintf("field %d", field+1)
	if field < len(l.runsHeader) {
		name = fmt.Sprintf("column %s (field %d)", l.runsHeader[field], field+1)
	}
	return fmt.Errorf("%s: %v (at byte %d of the line)", name, pe.Err, pe.Column)
}

// VerifyFolder checks the sweep folder dir, running and writing nothing, with the checks
// resume makes before it trusts a folder: manifest.json is readable and describes a sweep
// this program can read; runs.csv's header and every whole row are the sweep's (each row
// the run it claims to be, by point, replicate, seed and knob values, with every field
// parsing as its column's kind); and when the manifest says complete, runs.csv has the
// SHA-256 and the number of rows it recorded. It returns the manifest and the number of
// whole rows (an incomplete folder's torn last line, which resume drops, is not counted),
// so that a reader can say how far an incomplete sweep got. Figures are drawn only from a
// folder that passes (redlock-sim plot). Problems are *UsageError values naming the file
// and line, and the column at fault where there is one; a missing manifest.json is one
// that also matches fs.ErrNotExist.
func VerifyFolder(dir string) (*Manifest, int, error) {
	m, err := ReadManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, &UsageError{Err: fmt.Errorf("sweep folder %s has no %s, so its rows cannot be checked: %w", dir, ManifestFile, fs.ErrNotExist)}
	}
	if err != nil {
		return nil, 0, usagef("sweep folder %s: %v", dir, unwrapPath(err))
	}
	mpath := filepath.Join(dir, ManifestFile)
	if m.Format != FormatVersion {
		return nil, 0, usagef("%s: format %d, this program reads format %d", mpath, m.Format, FormatVersion)
	}
	sh, err := parseShardText(m.Shard)
	if err != nil {
		return nil, 0, usagef("%s: shard %q: %v", mpath, m.Shard, err)
	}
	spec := m.Spec
	if err := spec.validateShape(); err != nil {
		return nil, 0, usagef("%s: recorded spec: %v", mpath, err)
	}
	l, err := newLayout(&spec, m.Columns, m.Ratios)
	if err != nil {
		return nil, 0, usagef("%s: recorded columns: %v", mpath, err)
	}
	if want := sh.size(spec.Runs()); m.ShardRuns != want {
		return nil, 0, usagef("%s: shard_runs %d does not fit its spec (%d runs in shard %s)", mpath, m.ShardRuns, want, m.Shard)
	}
	path := filepath.Join(dir, RunsFile)
	scan, err := scanRuns(path, l, sh, newCodec(), func([]string, []byte, int, int) error { return nil })
	if err != nil {
		return nil, 0, usagef("sweep folder %s: %s: %v", dir, RunsFile, unwrapPath(err))
	}
	if m.Complete && (scan.sha256 != m.RunsSHA256 || scan.rows != m.ShardRuns || scan.torn) {
		return nil, 0, usagef("%s has SHA-256 %s but %s recorded %s (%s): the file changed after the sweep finished",
			path, scan.sha256, mpath, m.RunsSHA256, scan.detail(m.ShardRuns))
	}
	if scan.bad != nil {
		return nil, 0, usagef("%s %v", path, scan.bad)
	}
	return m, scan.rows, nil
}
