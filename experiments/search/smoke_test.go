package search

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSmoke(t *testing.T) {
	var as []Assumption
	for _, s := range []string{"ttl=1s", "pause_len<=2s"} {
		a, err := ParseAssumption(s)
		require.NoError(t, err)
		as = append(as, a)
	}
	faults, err := ParseFaults([]string{"pause_client"})
	require.NoError(t, err)
	s := &Spec{Assume: as, Faults: faults, Seed: 1, MaxSplitBrain: -1}
	c := s.Draw(5)
	os.Stdout.Write(c.YAML("x", "y", "z", "w"))
	dir := t.TempDir()
	res, err := Run(context.Background(), s, Options{Dir: dir, Runs: 50, Workers: 2, Log: os.Stdout})
	require.NoError(t, err)
	require.NoError(t, res.WriteTable(os.Stdout))
	b, _ := os.ReadFile(dir + "/findings.csv")
	os.Stdout.Write(b)
	for _, f := range res.Findings {
		b, _ := os.ReadFile(f.File)
		os.Stdout.Write(b)
	}
}
