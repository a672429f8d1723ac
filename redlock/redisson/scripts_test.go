package redisson

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest"
	"github.com/redlock-sim/redlock-sim/redlock/lock/locktest/resptest"
)

// TestScripts runs the scripted interactions under testdata/ on the lock algorithms'
// shared harness (redlock/lock/locktest documents its commands); `go test
// ./redlock/redisson -rewrite` regenerates the expected outputs (read the diff before
// committing it). The algorithms, and their own commands:
//
//	new [algo=rlock] [seed=N] [setting=value ...]   an RLock client (settings below)
//	new algo=redlock masters=N [seed=N] [setting=value ...]
//	                                                a RedissonRedLock over N masters
//	state                                           the RLock's (or each master's) state
//
// Settings: lease, timeout, retry_interval, sync_timeout (durations), retry_attempts,
// replicated (true/false). The lock name prints as $v1; an unlock latch's random id as
// <latch>.
func TestScripts(t *testing.T) {
	locktest.Run(t, "testdata", resptest.Protocol,
		locktest.Algorithm{Name: "rlock", Build: buildRLock},
		locktest.Algorithm{Name: "redlock", Build: buildRedLock})
}

// latch matches the random id of an unlock latch's key.
var latch = regexp.MustCompile(`(redisson_unlock_latch:\{[^}]*\}):[0-9a-f]{32}`)

func anonymiseLatch(s string) string { return latch.ReplaceAllString(s, "$1:<latch>") }

// scriptConfig reads an RLock's settings and the seed from a script's arguments; other
// keys are returned to the caller.
func scriptConfig(t *testing.T, args []datadriven.CmdArg) (Config, uint64, []datadriven.CmdArg, error) {
	cfg, seed := DefaultConfig(), uint64(1)
	var rest []datadriven.CmdArg
	for _, a := range args {
		v := a.SingleVal(t)
		var err error
		switch a.Key {
		case "seed":
			seed, err = strconv.ParseUint(v, 10, 64)
		case "lease":
			cfg.Lease, err = time.ParseDuration(v)
		case "timeout":
			cfg.Timeout, err = time.ParseDuration(v)
		case "retry_interval":
			cfg.RetryInterval, err = time.ParseDuration(v)
		case "sync_timeout":
			cfg.SyncTimeout, err = time.ParseDuration(v)
		case "retry_attempts":
			cfg.RetryAttempts, err = strconv.Atoi(v)
		case "replicated":
			cfg.Replicated, err = strconv.ParseBool(v)
		default:
			rest = append(rest, a)
		}
		if err != nil {
			return cfg, 0, nil, fmt.Errorf("%s=%s: %w", a.Key, v, err)
		}
	}
	return cfg, seed, rest, nil
}

func buildRLock(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
	cfg, seed, rest, err := scriptConfig(t, args)
	if err != nil {
		return locktest.Instance{}, "", err
	}
	if len(rest) > 0 {
		return locktest.Instance{}, "", fmt.Errorf("%s: not an RLock setting", rest[0].Key)
	}
	m, err := New(cfg, rand.New(rand.NewPCG(seed, 2)))
	if err != nil {
		return locktest.Instance{}, "", err
	}
	return locktest.Instance{
			Client:    m,
			Values:    func() []string { return []string{m.name} },
			Anonymise: anonymiseLatch,
			Commands: map[string]func(*testing.T, *datadriven.TestData) string{
				"state": func(*testing.T, *datadriven.TestData) string { return rlockState(m) + "\n" },
			},
		}, fmt.Sprintf("lease=%v timeout=%v retry_interval=%v retry_attempts=%d replicated=%v",
			cfg.Lease, cfg.Timeout, cfg.RetryInterval, cfg.RetryAttempts, cfg.Replicated), nil
}

func rlockState(m *Machine) string {
	return fmt.Sprintf("sent_at=%v timed_out=%v subscribed=%v retry=%v", m.sentAt, m.timedOut, m.subscribed, m.retry)
}

func buildRedLock(t *testing.T, args []datadriven.CmdArg) (locktest.Instance, string, error) {
	lcfg, seed, rest, err := scriptConfig(t, args)
	if err != nil {
		return locktest.Instance{}, "", err
	}
	masters := 5
	for _, a := range rest {
		if a.Key != "masters" {
			return locktest.Instance{}, "", fmt.Errorf("%s: not a RedLock setting", a.Key)
		}
		if masters, err = strconv.Atoi(a.SingleVal(t)); err != nil {
			return locktest.Instance{}, "", fmt.Errorf("masters=%s: %w", a.SingleVal(t), err)
		}
	}
	cfg := DefaultRedLockConfig(masters)
	cfg.Lock, cfg.Watchdog = lcfg, lcfg.Lease/3
	r, err := NewRedLock(cfg, rand.New(rand.NewPCG(seed, 2)))
	if err != nil {
		return locktest.Instance{}, "", err
	}
	return locktest.Instance{
		Client:    r,
		Values:    func() []string { return []string{r.subs[0].m.name} },
		Anonymise: anonymiseLatch,
		Commands: map[string]func(*testing.T, *datadriven.TestData) string{
			"state": func(*testing.T, *datadriven.TestData) string {
				s := fmt.Sprintf("taken=%d tried=%d failures=%d\n", r.taken, r.tried, r.failures)
				for i, sub := range r.subs {
					s += fmt.Sprintf("master %d: %s\n", i, rlockState(sub.m))
				}
				return s
			},
		},
	}, fmt.Sprintf("masters=%d quorum=%d", masters, r.q), nil
}
