package zookeeper

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/zk"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// TestAcknowledgedWritesSurviveRandomFaults: over ten seeds, two writers create nodes
// through random servers while servers are crashed, killed, shut down, stalled and
// partitioned off at random (never more than one at a time, a minority of three). Every
// create acknowledged to a writer is, at the end, on every server, and the servers agree
// on the whole tree.
func TestAcknowledgedWritesSurviveRandomFaults(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { swarm(t, seed) })
	}
}

func swarm(t *testing.T, seed uint64) {
	s, err := sim.New(sim.Config{Seed: seed})
	require.NoError(t, err)
	net, err := network.New[model.Message](s, network.Config{Default: network.Link{
		Latency: network.Latency{Fast: dist.Uniform(500*time.Microsecond, 5*time.Millisecond)}, FIFO: true}},
		s.Source("net"))
	require.NoError(t, err)
	w := &world{t: t, s: s, net: net}
	w.e, err = New(s, net, DefaultConfig())
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 99))
	writers := []*raw{w.client("w1"), w.client("w2")}
	var acked []string
	pending := map[*raw]uint64{}
	since := map[*raw]int{} // the step the pending request went out
	var victim *Server
	var cut network.FaultID
	for step := 0; step < 400; step++ {
		for _, c := range writers {
			if id, ok := pending[c]; ok {
				if r, done := c.reply(id); done {
					if r.Code == zk.OK && r.Op == zk.OpCreate {
						acked = append(acked, r.Str)
					}
					delete(pending, c)
				} else if step-since[c] > 40 {
					delete(pending, c) // closed (EOF) or lost with its server: give up
				}
			}
			if _, busy := pending[c]; !busy && rng.IntN(4) == 0 {
				srv := rng.IntN(3)
				c.send(srv, zk.Connect(0, 6*time.Second, 0))
				pending[c] = c.send(srv, zk.Create("/n-", "", zk.FlagSequential))
				since[c] = step
			}
		}
		if step%40 == 20 {
			victim = w.e.Server(rng.IntN(3))
			switch rng.IntN(5) {
			case 0:
				victim.Crash()
			case 1:
				victim.Kill()
			case 2:
				victim.Shutdown()
			case 3:
				victim.Stall()
			case 4:
				var others []network.Endpoint
				for _, ep := range w.e.eps {
					if ep != victim.ep {
						others = append(others, ep)
					}
				}
				cut, err = net.Split([]network.Endpoint{victim.ep}, others)
				require.NoError(t, err)
			}
		}
		if step%40 == 39 && victim != nil {
			victim.Thaw()
			victim.Restart()
			net.Heal(cut)
			victim = nil
		}
		w.runFor(50 * time.Millisecond)
	}
	w.runFor(30 * time.Second)
	w.settle()
	w.runFor(time.Second)
	require.NotEmpty(t, acked, "some writes went through")
	t.Logf("acked %d, nodes %d, elections %d", len(acked), len(w.e.Server(w.e.Leader()).Tree().Children("/")), w.e.Stats().Elections)
	ld := w.e.Server(w.e.Leader())
	want := ld.Tree().Children("/")
	for _, sv := range w.e.Servers() {
		assert.Equal(t, ld.Tree().LastZxid(), sv.Tree().LastZxid(), "%s caught up", sv.Name())
		assert.Equal(t, want, sv.Tree().Children("/"), "%s agrees with the leader", sv.Name())
		for _, p := range acked {
			assert.True(t, slices.Contains(want, p[1:]), "acknowledged %s lost", p)
		}
	}
	assert.Len(t, want, len(uniq(acked))+countUnacked(want, acked))
}

func uniq(xs []string) []string { return slices.Compact(slices.Sorted(slices.Values(xs))) }

// countUnacked counts the nodes created whose acknowledgement never reached a writer (a
// connection lost after the commit).
func countUnacked(have, acked []string) int {
	n := 0
	for _, h := range have {
		if !slices.Contains(acked, "/"+h) {
			n++
		}
	}
	return n
}
