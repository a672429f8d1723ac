package model

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// writer is an endpoint that keeps what it receives.
type writer struct{ got []seen }

func (wr *writer) Receive(now sim.Time, from, _ network.Endpoint, m *Message) {
	wr.got = append(wr.got, seen{now, from, *m})
}

// TestStorageJudgesFencedWrites: a fenced write below the highest token seen for its
// resource is refused, with MsgWritten Word 0 and the reason; one at or above it is taken;
// an unfenced one is always taken; each resource has its own highest token.
func TestStorageJudgesFencedWrites(t *testing.T) {
	w := newProcWorld(t, StorageConfig{Acknowledge: true})
	wr := &writer{}
	ep, err := w.net.AddEndpoint("writer", wr)
	require.NoError(t, err)
	send := func(id uint64, resource string, token int64, fenced bool) {
		w.net.Send(ep, w.storage.Endpoint(), StorageWrite(id, resource, "d"+string(rune('0'+id)), token, fenced))
	}
	send(1, "a", 5, true)
	send(2, "a", 3, true)                                                   // stale
	send(3, "a", 0, false)                                                  // unfenced: no check
	send(4, "a", 5, true)                                                   // equal to the highest: taken
	send(5, "b", 1, true)                                                   // another resource
	send(6, "a", 4, true)                                                   // still stale
	w.net.Send(ep, w.storage.Endpoint(), Request(7, lock.Payload{Word: 1})) // not a write: dropped unanswered
	w.run(10 * ms)

	ok := func(id uint64) Message { return Message{Kind: MsgWritten, ReqID: id, Body: lock.Payload{Word: 1}} }
	refused := func(id uint64, why string) Message {
		return Message{Kind: MsgWritten, ReqID: id, Body: lock.Payload{Word: 0, Str: why}}
	}
	var got []Message
	for _, s := range wr.got {
		assert.Equal(t, w.storage.Endpoint(), s.peer)
		got = append(got, s.m)
	}
	assert.Equal(t, []Message{ok(1), refused(2, "ERR stale fencing token 3 (highest seen 5)"), ok(3), ok(4), ok(5),
		refused(6, "ERR stale fencing token 4 (highest seen 5)")}, got)
	assert.Equal(t, StorageStats{Accepted: 3, Rejected: 2, Unfenced: 1}, w.storage.Stats())
	hi, seenA := w.storage.Highest("a")
	assert.True(t, seenA)
	assert.EqualValues(t, 5, hi)
	_, seenC := w.storage.Highest("c")
	assert.False(t, seenC)
	ws := w.storage.Writes()
	require.Len(t, ws, 6)
	assert.Equal(t, StoredWrite{At: sim.Time(ms), From: ep, ReqID: 2, Resource: "a", Data: "d2", Token: 3, Fenced: true},
		ws[1])
	assert.Equal(t, StoredWrite{At: sim.Time(ms), From: ep, ReqID: 3, Resource: "a", Data: "d3", Accepted: true}, ws[2])
}

// TestStorageLimits: a fenced write to one resource more than MaxResources is refused;
// writes past MaxRecorded are judged but not recorded; without Acknowledge nothing is
// answered.
func TestStorageLimits(t *testing.T) {
	w := newProcWorld(t, StorageConfig{})
	st, err := NewStorage(w.s, w.net, StorageConfig{Name: "small", MaxResources: 1, MaxRecorded: 2})
	require.NoError(t, err)
	wr := &writer{}
	ep, err := w.net.AddEndpoint("writer", wr)
	require.NoError(t, err)
	ok, why := st.Write(0, ep, "a", "x", 1, true)
	assert.True(t, ok)
	assert.Empty(t, why)
	ok, why = st.Write(0, ep, "b", "x", 1, true)
	assert.False(t, ok)
	assert.Equal(t, "ERR too many resources", why)
	ok, _ = st.Write(0, ep, "b", "x", 0, false)
	assert.True(t, ok, "an unfenced write is not tracked, so not limited")
	assert.Len(t, st.Writes(), 2)
	assert.True(t, st.Truncated())
	assert.Equal(t, StorageStats{Accepted: 1, Rejected: 1, Unfenced: 1}, st.Stats())
	w.net.Send(ep, st.Endpoint(), StorageWrite(1, "a", "x", 2, true))
	w.run(10 * ms)
	assert.Empty(t, wr.got, "a storage that does not acknowledge answers nothing")
	assert.EqualValues(t, 2, st.Stats().Accepted)

	_, err = NewStorage(w.s, w.net, StorageConfig{Name: "bad", MaxResources: -1})
	assert.ErrorContains(t, err, "max_resources")
}

// TestReleaseAfterAckWaitsForTheVerdict: the last write leaves at 7ms (work of 5ms from the
// grant at 2ms); with ReleaseAfterAck the release leaves when the storage's verdict on that
// write comes back, at 9ms, whether it took the write or refused it; the verdict on the
// first write (at 4ms) is stray. Without it, the release leaves with the write.
func TestReleaseAfterAckWaitsForTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name          string
		wait, refused bool
		release       time.Duration
		stray         uint64
	}{
		{"no wait", false, false, 7 * ms, 2},
		{"wait", true, false, 9 * ms, 1},
		{"wait, refused", true, true, 9 * ms, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newProcWorld(t, StorageConfig{Acknowledge: true})
			if tc.refused { // a later holder's token fences alice's writes off
				ok, _ := w.storage.Write(0, w.srv.ep, "lock", "later", 99, true)
				require.True(t, ok)
			}
			cfg := w.cfg(5 * ms)
			cfg.ReleaseAfterAck, cfg.AckTimeout = tc.wait, 50*ms
			c := w.client(cfg)
			w.run(20 * ms)

			writes, rel := w.log.of(EvWrite), w.log.of(EvReleaseStart)
			require.Len(t, writes, 2)
			require.Len(t, rel, 1)
			assert.Equal(t, sim.Time(7*ms), writes[1].at)
			assert.Equal(t, sim.Time(tc.release), rel[0].at)
			assert.Equal(t, rel[0].at, w.log.of(EvWorkEnd)[0].at, "the work lasts until the release")
			require.Len(t, w.srv.got, 2)
			assert.EqualValues(t, opRelease, w.srv.got[1].m.Body.Word)
			assert.Equal(t, sim.Time(tc.release+ms), w.srv.got[1].at)
			assert.Equal(t, tc.stray, c.Stats().Stray)
			assert.EqualValues(t, 1, c.Stats().Cycles)
			if tc.refused {
				assert.EqualValues(t, 2, w.storage.Stats().Rejected)
			}
		})
	}
}
