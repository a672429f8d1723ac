package sweep

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The files of a sweep folder.
const (
	RunsFile     = "runs.csv"
	SummaryFile  = "summary.csv"
	ManifestFile = "manifest.json"
	// FormatVersion is the version of the folder layout, recorded in the manifest so that
	// a later layout can refuse to resume or merge an older one.
	FormatVersion = 1
)

// Manifest describes a sweep folder: what produced it, the normalised spec, and whether
// runs.csv is complete. It holds no timestamps or host names, so that a merged or resumed
// sweep's manifest is byte-identical to an uninterrupted one's.
type Manifest struct {
	Format    int    `json:"format"`
	Tool      string `json:"tool"`             // version string of the program, from the caller
	Commit    string `json:"commit,omitempty"` // VCS revision when the caller knows it
	GoVersion string `json:"go_version"`       // runtime.Version()
	// Complete is false from the start of a sweep until runs.csv holds every run of the
	// shard, summary.csv is in place (unsharded) and RunsSHA256 is set.
	Complete   bool     `json:"complete"`
	Shard      string   `json:"shard"` // "i/n"; "1/1" for a whole sweep
	Seed       uint64   `json:"seed"`
	Points     int      `json:"points"`
	Replicates int      `json:"replicates"`
	Runs       int      `json:"runs"`       // runs of the whole sweep
	ShardRuns  int      `json:"shard_runs"` // runs this folder holds when complete
	Columns    []Column `json:"columns"`
	Ratios     []Ratio  `json:"ratios,omitempty"`          // derived summary.csv columns
	RunsSHA256 string   `json:"runs_csv_sha256,omitempty"` // hex SHA-256 of runs.csv
	Spec       Spec     `json:"spec"`
}

func newManifest(spec *Spec, l *layout, sh Shard, tool, commit string) Manifest {
	return Manifest{
		Format: FormatVersion, Tool: tool, Commit: commit, GoVersion: runtime.Version(),
		Shard: sh.String(), Seed: spec.Seed, Points: spec.Points(), Replicates: spec.Replicates,
		Runs: spec.Runs(), ShardRuns: sh.size(spec.Runs()), Columns: slices.Clone(l.cols), Ratios: slices.Clone(l.ratios),
		Spec: spec.normalised(),
	}
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

func (m *Manifest) encode() []byte {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		panic("sweep: manifest failed to marshal: " + err.Error())
	}
	return append(b, '\n')
}

// mismatch explains how the sweep recorded in m differs from o, naming them la and lb
// ("recorded", "now"); empty when they are the same sweep run by the same program. The
// shard is compared only when withShard is set (a merge expects different shards).
func (m *Manifest) mismatch(o *Manifest, la, lb string, withShard bool) []string {
	var d []string
	field := func(name, a, b string) {
		if a != b {
			d = append(d, fmt.Sprintf("%s: %s %s, %s %s", name, a, la, b, lb))
		}
	}
	quoted := func(s string) string { return fmt.Sprintf("%q", s) }
	field("format", fmt.Sprint(m.Format), fmt.Sprint(o.Format))
	field("tool", quoted(m.Tool), quoted(o.Tool))
	field("commit", quoted(m.Commit), quoted(o.Commit))
	field("go_version", m.GoVersion, o.GoVersion)
	if withShard {
		field("shard", m.Shard, o.Shard)
	}
	a, b := &m.Spec, &o.Spec
	field("base", kvText(a.Base), kvText(b.Base))
	field("axes", axesText(a.Axes), axesText(b.Axes))
	field("combine", string(a.Combine), string(b.Combine))
	field("replicates", fmt.Sprint(a.Replicates), fmt.Sprint(b.Replicates))
	field("seed", fmt.Sprint(a.Seed), fmt.Sprint(b.Seed))
	field("columns", columnsText(m.Columns), columnsText(o.Columns))
	field("ratios", ratiosText(m.Ratios), ratiosText(o.Ratios))
	return d
}

func kvText(kv []KV) string {
	parts := make([]string, len(kv))
	for i, x := range kv {
		parts[i] = x.Name + "=" + x.Value
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func axesText(axes []Axis) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = a.Knob + "=[" + strings.Join(a.Values, " ") + "]"
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func ratiosText(rs []Ratio) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%s=%s/%s×%g", r.Name, r.Num, r.Den, r.Scale)
		if r.Proportion {
			parts[i] += "(proportion)"
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func columnsText(cols []Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + ":" + c.Kind.String()
	}
	return strings.Join(parts, " ")
}

// writeAtomic replaces dir/name with data so that a reader (or a crash) sees the old file
// or the new one, never a mix: write a temporary file, sync it, rename it, sync the folder.
func writeAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir makes renames and creations in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}

// resultFiles lists which of the sweep files exist in dir.
func resultFiles(dir string) []string {
	var have []string
	for _, name := range []string{ManifestFile, RunsFile, SummaryFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			have = append(have, name)
		}
	}
	return have
}

// checkFolder refuses a path that exists but is not a folder, before anything is written.
func checkFolder(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usagef("output folder %s: %v", dir, unwrapPath(err))
	case !fi.IsDir():
		return usagef("output folder %s: exists and is not a folder", dir)
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lineReader reads runs.csv back line by line with a bound on line length, so that a
// damaged file cannot make it read gigabytes into memory.
type lineReader struct {
	r    *bufio.Reader
	buf  []byte
	line int // lines returned so far
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the next line with its '\n'. At the end it returns io.EOF together with
// whatever followed the last '\n' (empty, or a torn last line). The slice is valid until
// the next call.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.buf = append(lr.buf, chunk...)
		if len(lr.buf) > MaxRowBytes {
			return nil, fmt.Errorf("line %d is longer than %d bytes", lr.line+1, MaxRowBytes)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == nil {
			lr.line++
		}
		return lr.buf, err
	}
}
