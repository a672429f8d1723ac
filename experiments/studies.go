package experiments

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
)

// studyFiles holds the default study: one sweep spec per question, run in file-name order
// by `redlock-sim sweep` without --spec. It is embedded so that the binary alone, on a
// fresh machine, reproduces the study.
//
//go:embed studies/default/*.yaml
var studyFiles embed.FS

// Study is one sweep of the default study.
type Study struct {
	Name string // folder name under the output folder, e.g. "ttl"
	File string // the spec's name in error messages, e.g. "default/1-ttl.yaml"
	Spec *sweep.Spec
}

// DefaultStudy returns the default study's sweeps, each parsed and checked against the
// knob registry: TTL against pauses and partitions, drift_factor against clock drift, N
// against crash-restarts, retry_jitter against split brain.
func DefaultStudy() ([]Study, error) {
	entries, err := fs.Glob(studyFiles, "studies/default/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []Study
	for _, e := range entries { // fs.Glob returns names sorted, so the order is the files'
		data, err := studyFiles.ReadFile(e)
		if err != nil {
			return nil, err
		}
		file := strings.TrimPrefix(e, "studies/")
		spec, err := sweep.ParseSpec(file, data, SweepRunner())
		if err != nil {
			return nil, fmt.Errorf("embedded default study: %w", err)
		}
		name := strings.TrimSuffix(path.Base(e), ".yaml")
		if i := strings.IndexByte(name, '-'); i >= 0 {
			name = name[i+1:] // "1-ttl" → "ttl"; the number only orders the files
		}
		out = append(out, Study{Name: name, File: file, Spec: spec})
	}
	return out, nil
}
