package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model"
)

// ackWorld is newLockWorld with a storage that acknowledges writes or not.
func ackWorld(t *testing.T, ack bool) *lockWorld {
	w := newLockWorld(t, 1, 3, constLink(ms), true)
	st, err := model.NewStorage(w.s, w.net, model.StorageConfig{Name: "acking", Acknowledge: ack})
	require.NoError(t, err)
	w.storage = st
	return w
}

// lastWriteAndRelease returns when alice sent her last write and started releasing.
func lastWriteAndRelease(t *testing.T, w *lockWorld) (write, release time.Duration) {
	writes, rel := w.log.of("alice", model.EvWrite), w.log.of("alice", model.EvReleaseStart)
	require.Len(t, writes, 2)
	require.Len(t, rel, 1)
	return writes[1].at.Duration(), rel[0].at.Duration()
}

// TestReleaseAfterAckWaitsForTheStorage: with the option, the client releases one round
// trip after its last write, when the storage's acknowledgement arrives, and its work
// lasts until then; without it, it releases as it sends.
func TestReleaseAfterAckWaitsForTheStorage(t *testing.T) {
	for _, wait := range []bool{false, true} {
		w := ackWorld(t, true)
		cfg := w.clientCfg("alice", time.Second, 5*ms)
		cfg.MaxCycles, cfg.ReleaseAfterAck = 1, wait
		c := w.client(cfg)
		w.run(time.Second)
		write, release := lastWriteAndRelease(t, w)
		if wait {
			assert.Equal(t, write+2*ms, release, "released when the acknowledgement came back")
		} else {
			assert.Equal(t, write, release, "released as the write left")
		}
		assert.Equal(t, release, w.log.of("alice", model.EvWorkEnd)[0].at.Duration())
		assert.EqualValues(t, 1, c.Stats().Cycles)
	}
}

// TestReleaseAfterAckGivesUpAtTheDeadline: an acknowledgement that never comes is waited
// for only while the lock is valid: the work ends 2ms before validity does, and the node
// timeout (5ms) would end later.
func TestReleaseAfterAckGivesUpAtTheDeadline(t *testing.T) {
	w := ackWorld(t, false)
	cfg := w.clientCfg("alice", 100*ms, 95*ms)
	cfg.MaxCycles, cfg.ReleaseAfterAck = 1, true
	c := w.client(cfg)
	w.run(time.Second)
	_, release := lastWriteAndRelease(t, w)
	assert.Equal(t, w.log.of("alice", model.EvAcquired)[0].validUntil.Duration(), release)
	assert.EqualValues(t, 1, c.Stats().Cycles)
}

// TestReleaseAfterAckCrashWhileWaiting: a crash while waiting ends the work, as a crash
// while working does.
func TestReleaseAfterAckCrashWhileWaiting(t *testing.T) {
	w := ackWorld(t, false)
	cfg := w.clientCfg("alice", time.Second, 5*ms)
	cfg.MaxCycles, cfg.ReleaseAfterAck = 1, true
	c := w.client(cfg)
	w.run(30 * ms) // the write left at 7ms; the wait ends at 57ms
	c.CrashNow()
	assert.Len(t, w.log.of("alice", model.EvWorkEnd), 1)
	assert.Empty(t, w.log.of("alice", model.EvReleaseStart))
}

// TestReleaseAfterAckGivesUpAfterANodeTimeout: with a long TTL, a lost acknowledgement
// costs what a silent Redis node would (the node reply timeout), not the rest of the TTL.
func TestReleaseAfterAckGivesUpAfterANodeTimeout(t *testing.T) {
	w := ackWorld(t, false)
	cfg := w.clientCfg("alice", 10*time.Second, 5*ms)
	cfg.MaxCycles, cfg.ReleaseAfterAck = 1, true
	w.client(cfg)
	w.run(20 * time.Second)
	write, release := lastWriteAndRelease(t, w)
	assert.Equal(t, cfg.AckTimeout, release-write)
	assert.Less(t, release, w.log.of("alice", model.EvAcquired)[0].validUntil.Duration())
}
