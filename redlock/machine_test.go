package redlock_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest/resptest"
)

// TestMachine runs the scripted interactions under testdata/ on the lock algorithms'
// shared harness (redlock/lock/locktest, its commands documented there); `go test
// ./redlock -rewrite` regenerates the expected outputs (read the diff before committing
// it). The Redlock machine's own commands:
//
//	new [seed=N] [knob=value ...]       a machine from DefaultConfig plus knobs (redlock.Knobs)
//	state                               its state, deadline and replies ignored
//
// Its lock value prints as $v1, $v2, ... in order of appearance.
func TestMachine(t *testing.T) {
	locktest.Run(t, "testdata", resptest.Protocol, locktest.Algorithm{Name: "redlock", Build: buildMachine})
}

// buildMachine is the harness's Builder of a Redlock machine.
func buildMachine(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
	cfg := redlock.DefaultConfig()
	seed := uint64(1)
	for _, arg := range args {
		if arg.Key == "seed" {
			seed, _ = strconv.ParseUint(arg.SingleVal(t), 10, 64)
			continue
		}
		if err := cfg.Set(arg.Key, arg.SingleVal(t)); err != nil {
			return locktest.Instance{}, "", err
		}
	}
	m, err := redlock.New(cfg, rand.New(rand.NewPCG(seed, 0)))
	if err != nil {
		return locktest.Instance{}, "", err
	}
	state := func(*testing.T, *datadriven.TestData) string {
		return fmt.Sprintf("state=%v deadline=%v ignored=%d", m.State(), m.Deadline(), m.Ignored())
	}
	c := m.Config()
	return locktest.Instance{
			Client:   m,
			Values:   func() []string { return []string{m.Value()} },
			Commands: map[string]func(*testing.T, *datadriven.TestData) string{"state": state},
		},
		fmt.Sprintf("nodes=%d quorum=%d drift=%v timeout=%v", c.Nodes, m.Quorum(), c.Drift(), c.NodeTimeout()), nil
}

// errOf is an input's error, for tests that read its outputs from Machine.Outputs.
func errOf(_ []lock.Output, err error) error { return err }
