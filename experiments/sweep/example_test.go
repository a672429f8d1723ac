package sweep_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/redlock-sim/redlock-sim/experiments/sweep"
	"github.com/redlock-sim/redlock-sim/sim"
)

// coins is a toy world: flips coins with bias p and reports whether any came up heads.
type coins struct{}

func (coins) Knob(name, value string) (string, error) {
	if name != "p" && name != "flips" {
		return "", fmt.Errorf("unknown knob %q", name)
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil || v < 0 || (name == "p" && v > 1) {
		return "", sim.BadParam(name, value, "[0, 1]")
	}
	return strconv.FormatFloat(v, 'g', -1, 64), nil
}

func (coins) Columns() []sweep.Column {
	return []sweep.Column{{Name: "any_heads", Kind: sweep.KindBool}, {Name: "heads", Kind: sweep.KindCount}}
}

func (coins) Run(_ context.Context, knobs []sweep.KV, seed uint64) ([]sweep.Value, error) {
	p, _ := strconv.ParseFloat(knobs[1].Value, 64)
	n, _ := strconv.Atoi(knobs[0].Value)
	rng := sim.NewRand(seed, "coins")
	heads := 0
	for range n {
		if rng.Float64() < p {
			heads++
		}
	}
	return []sweep.Value{sweep.BoolValue(heads > 0), sweep.IntValue(int64(heads))}, nil
}

func ExampleRun() {
	spec, err := sweep.ParseSpec("coins.yaml", []byte(`
base: {flips: 4}
axes:
  p: [0, 0.5]
replicates: 3
seed: 7
`), coins{})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "sweep-example")
	defer os.RemoveAll(dir)
	st, err := sweep.Run(context.Background(), coins{}, spec, sweep.Options{Dir: dir, Workers: 2, Tool: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", st)
	summary, _ := os.ReadFile(filepath.Join(dir, sweep.SummaryFile))
	fmt.Print(string(summary))
	// Output:
	// {Runs:6 Resumed:0 Ran:6 Rederived:0 Afresh:false SummaryRewritten:false}
	// point,p,runs,any_heads_frac,any_heads_lo,any_heads_hi,heads_mean
	// 0,0,3,0,0,0.561497,0
	// 1,0.5,3,1,0.438503,1,2
}

func ExampleParseSpec_error() {
	_, err := sweep.ParseSpec("coins.yaml", []byte("axes:\n  p: [0.5, 2]\nreplicates: 3\nseed: 7\n"), coins{})
	fmt.Println(err)
	fmt.Println("usage error:", sweep.IsUsage(err))
	// Output:
	// spec coins.yaml:2: p = 2: out of range, allowed [0, 1]
	// usage error: true
}
