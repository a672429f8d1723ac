package oracle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/redlock/lock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// These tests drive the oracle with synthetic events, without a world, so that each
// definition is checked on a story small enough to compute by hand.

func testOracle(t *testing.T, clients int) *Oracle {
	s, err := sim.New(sim.Config{Seed: 1})
	require.NoError(t, err)
	names := []string{"c1", "c2", "c3", "c4"}[:clients]
	o := New(s, names, []string{"lock", "other"}, nil)
	o.epClient = []int32{-1, 0, 1, 2, 3}[:clients+1]
	return o
}

const ms = time.Millisecond

func at(d time.Duration) sim.Time { return sim.Time(d) }

// won and lost are attempts on five servers that needed three votes.
func won(votes int) *lock.Event {
	return &lock.Event{Kind: lock.AttemptEnded, Votes: votes, Needed: 3, Replies: 5, Servers: 5}
}

func lost(votes, replies int) *lock.Event {
	return &lock.Event{Kind: lock.AttemptEnded, Reason: lock.ReasonNoQuorum, Votes: votes, Needed: 3,
		Replies: replies, Servers: 5}
}

func TestOracleSequentialHoldersAreSafe(t *testing.T) {
	o := testOracle(t, 2)
	o.acquireStart(at(0), 0, 0)
	o.acquired(at(1*ms), 0, 0, at(10*time.Second))
	o.acquireStart(at(2*ms), 1, 0)
	o.workEnd(at(50*ms), 0)
	o.releaseStart(at(50*ms), 0)
	o.acquired(at(60*ms), 1, 0, at(10*time.Second))
	o.storageWrite(at(61*ms), 1, 0, "lock", false, true)
	o.Finish(at(time.Second))
	assert.Zero(t, o.st.validity+o.st.usage+o.st.stale)
	assert.Equal(t, 11*ms, o.Unheld(), "c1 waited 1ms on a free lock; then released at 50ms, next holder at 60ms")
	assert.Equal(t, 58*ms, o.maxWait)
}

func TestOracleValidityOverlapEndsWithTheFirstWindow(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(2*time.Second))
	o.workEnd(at(500*ms), 0)
	o.acquired(at(time.Second), 1, 0, at(3*time.Second))
	o.releaseStart(at(1500*ms), 0)
	o.Finish(at(4 * time.Second))
	require.Equal(t, int64(1), o.st.validity)
	v := o.violations[0]
	assert.Equal(t, KindValidityOverlap, v.Kind)
	assert.Equal(t, [2]string{"c1", "c2"}, [2]string{v.First, v.Second})
	assert.Equal(t, [2]float64{1, 1.5}, [2]float64{v.StartS, v.EndS})
}

func TestOracleExpiredWindowIsNoOverlapButWorkIs(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second)) // c1 keeps working past its validity
	o.acquired(at(2*time.Second), 1, 0, at(3*time.Second))
	o.workEnd(at(2500*ms), 0)
	o.Finish(at(4 * time.Second))
	assert.Zero(t, o.st.validity, "c1's window closed at 1s")
	require.Equal(t, int64(1), o.st.usage)
	assert.Equal(t, [2]float64{2, 2.5}, [2]float64{o.violations[0].StartS, o.violations[0].EndS})
}

func TestOracleAnAlreadyExpiredLockOpensNoWindow(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.acquired(at(500*ms), 1, 0, at(400*ms)) // no-validity-check: deadline already past
	assert.Zero(t, o.st.validity)
	assert.Equal(t, int64(1), o.st.usage)
}

func TestOracleExtensionKeepsOrReopensTheWindow(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.extended(at(900*ms), 0, at(2*time.Second))
	o.acquired(at(1500*ms), 1, 0, at(3*time.Second))
	assert.Equal(t, int64(1), o.st.validity, "the extension kept c1's window open past 1s")

	o = testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.acquired(at(1100*ms), 1, 0, at(2*time.Second))
	assert.Zero(t, o.st.validity)
	o.extended(at(1200*ms), 0, at(2*time.Second)) // a late extension reopens a window
	assert.Equal(t, int64(1), o.st.validity)
}

func TestOracleStaleAndFencedWrites(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.storageWrite(at(1*ms), 0, 0, "lock", false, true) // the holder: fine
	o.workEnd(at(500*ms), 0)
	o.releaseStart(at(500*ms), 0)
	o.acquired(at(2*time.Second), 1, 0, at(3*time.Second))
	o.storageWrite(at(2100*ms), 0, 0, "lock", false, true) // c1 after c2 acquired: stale
	o.storageWrite(at(2200*ms), 0, 0, "lock", true, false) // fenced and rejected
	o.storageWrite(at(2300*ms), 1, 0, "lock", true, true)  // the latest acquirer
	assert.Equal(t, int64(1), o.st.stale)
	assert.Equal(t, int64(1), o.st.rejd)
	require.Len(t, o.violations, 2)
	assert.Equal(t, KindStaleWrite, o.violations[0].Kind)
	assert.Equal(t, "c2", o.violations[0].Second, "names the latest acquirer")
}

// TestOracleIncidentsCountSessionsNotPairs: a holder paused past its validity whose work
// two others then overlap, one after the other, is two usage overlaps but one incident;
// its stale writes, however many, are one incident; a second hold of the same client
// that is overlapped again is a second incident.
func TestOracleIncidentsCountSessionsNotPairs(t *testing.T) {
	o := testOracle(t, 3)
	o.acquired(at(0), 0, 0, at(time.Second)) // c1 works on past its validity (a pause)
	o.acquired(at(2*time.Second), 1, 0, at(3*time.Second))
	o.workEnd(at(2500*ms), 1)
	o.releaseStart(at(2500*ms), 1)
	o.acquired(at(2600*ms), 2, 0, at(4*time.Second)) // c3 overlaps c1 too
	o.storageWrite(at(2700*ms), 0, 0, "lock", false, true)
	o.storageWrite(at(2800*ms), 0, 0, "lock", false, true)
	o.workEnd(at(2900*ms), 0)
	o.releaseStart(at(2900*ms), 0)
	n := o.Counts()
	assert.Equal(t, int64(2), n.UsageOverlaps, "c2 and c3 each overlapped c1's work")
	assert.Equal(t, int64(1), n.UsageIncidents, "one session of c1's")
	assert.Equal(t, int64(2), n.StaleWritesAccepted)
	assert.Equal(t, int64(1), n.StaleIncidents)
	assert.Zero(t, n.ValidityOverlaps+n.ValidityIncidents)

	// c1 again, overlapped again: a new session, a new incident.
	o.workEnd(at(3*time.Second), 2)
	o.releaseStart(at(3*time.Second), 2)
	o.acquired(at(5*time.Second), 0, 0, at(6*time.Second))
	o.acquired(at(7*time.Second), 1, 0, at(8*time.Second))
	n = o.Counts()
	assert.Equal(t, int64(3), n.UsageOverlaps)
	assert.Equal(t, int64(2), n.UsageIncidents)

	// Two others inside one holder's validity window: two overlaps, one incident.
	o = testOracle(t, 3)
	o.acquired(at(0), 0, 0, at(10*time.Second))
	o.acquired(at(time.Second), 1, 0, at(2*time.Second))
	o.releaseStart(at(1500*ms), 1)
	o.acquired(at(3*time.Second), 2, 0, at(4*time.Second))
	n = o.Counts()
	assert.Equal(t, int64(2), n.ValidityOverlaps)
	assert.Equal(t, int64(1), n.ValidityIncidents)
}

func TestOracleResourcesAreIndependent(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.acquired(at(1*ms), 1, 1, at(time.Second))
	assert.Zero(t, o.st.validity+o.st.usage)
}

func TestOracleSplitBrainRound(t *testing.T) {
	o := testOracle(t, 3)
	// Three contenders overlap and split the five votes 2-2-1: a split-brain round.
	o.attemptStarted(at(0), 0, 0)
	o.attemptStarted(at(0), 1, 0)
	o.attemptStarted(at(1*ms), 2, 0)
	o.attemptEnded(at(10*ms), 0, 0, lost(2, 5))
	o.attemptEnded(at(11*ms), 1, 0, lost(2, 5))
	o.attemptEnded(at(12*ms), 2, 0, lost(1, 5))
	// Next round, later: one wins.
	o.attemptStarted(at(200*ms), 0, 0)
	o.attemptStarted(at(200*ms), 1, 0)
	o.attemptEnded(at(210*ms), 0, 0, won(3))
	o.attemptEnded(at(211*ms), 1, 0, lost(2, 5))
	// Then two contenders fail against a holder: too few votes to be a split.
	o.attemptStarted(at(400*ms), 1, 0)
	o.attemptStarted(at(400*ms), 2, 0)
	o.attemptEnded(at(410*ms), 1, 0, lost(0, 5))
	o.attemptEnded(at(411*ms), 2, 0, lost(0, 5))
	// A lone loser is no split either.
	o.attemptStarted(at(600*ms), 2, 0)
	o.attemptEnded(at(610*ms), 2, 0, lost(2, 3))
	o.Finish(at(time.Second))
	assert.Equal(t, int64(1), o.st.splitBrain)
	assert.Equal(t, int64(8), o.st.attempts)
	assert.Equal(t, int64(6), o.st.noQuorum)
	assert.Equal(t, int64(1), o.st.timeout, "2 OKs + 2 silent nodes could have made 3")
}

// TestOracleSplitBrainClustersByOverlapNotByEndOrder: A spans [0, 10ms], B [5ms, 20ms], C
// [12ms, 15ms]. All three overlap B, so they are one round of contention, although C ends
// (15ms) before B and starts after A ended. Clustering attempts in the order they end
// would have put A alone and B with C, and seen no split of the votes 1+1+1 = 3.
func TestOracleSplitBrainClustersByOverlapNotByEndOrder(t *testing.T) {
	o := testOracle(t, 3)
	o.attemptStarted(at(0), 0, 0)
	o.attemptStarted(at(5*ms), 1, 0)
	o.attemptEnded(at(10*ms), 0, 0, lost(1, 5))
	o.attemptStarted(at(12*ms), 2, 0)
	o.attemptEnded(at(15*ms), 2, 0, lost(1, 5))
	o.attemptEnded(at(20*ms), 1, 0, lost(1, 5))
	o.attemptStarted(at(30*ms), 0, 0) // a later attempt closes the round
	o.Finish(at(time.Second))
	assert.Equal(t, int64(1), o.st.splitBrain)
}

// TestOracleACrashedAttemptDoesNotHoldTheRoundOpen: an attempt that never ends (its client
// crashed) must not make every later attempt part of its round.
func TestOracleACrashedAttemptDoesNotHoldTheRoundOpen(t *testing.T) {
	o := testOracle(t, 3)
	o.attemptStarted(at(0), 0, 0)
	o.crash(at(1*ms), 0)
	o.attemptStarted(at(100*ms), 1, 0)
	o.attemptEnded(at(110*ms), 1, 0, lost(2, 5))
	o.attemptStarted(at(500*ms), 2, 0)
	o.attemptEnded(at(510*ms), 2, 0, lost(1, 5))
	o.Finish(at(time.Second))
	assert.Zero(t, o.st.splitBrain, "two separate lone losers, not one round of 2+1 votes")
}

// TestOracleUnheldWhileWaiting: a live holder's lock is held until its validity ends,
// so a waiter's time counts from there; a crashed holder holds nothing from its crash on
// (its keys still block everyone), so the time counts from the crash, or from when the
// waiter started waiting, and the time to the next acquisition is the crash's cost.
func TestOracleUnheldWhileWaiting(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second)) // c1 holds until 1s and is never heard of again
	o.acquireStart(at(200*ms), 1, 0)
	o.acquired(at(1500*ms), 1, 0, at(3*time.Second))
	o.Finish(at(2 * time.Second))
	assert.Equal(t, 500*ms, o.Unheld(), "from c1's expiry at 1s to c2's acquire at 1.5s")
	assert.Zero(t, o.Counts().HolderCrashes)

	o = testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.crash(at(100*ms), 0)
	o.acquireStart(at(200*ms), 1, 0)
	o.acquired(at(1500*ms), 1, 0, at(3*time.Second))
	o.Finish(at(2 * time.Second))
	assert.Equal(t, 1300*ms, o.Unheld(), "from c2's wait at 0.2s (c1 dead since 0.1s) to its acquire at 1.5s")
	assert.Equal(t, int64(1), o.Counts().HolderCrashes)
	qs, mx, ok := o.ReacquireAfterCrash(50)
	require.True(t, ok)
	assert.Equal(t, 1400.0, mx, "from the crash at 0.1s to the next acquisition at 1.5s")
	assert.InDelta(t, 1400.0, qs[0], 1.0)
	o.ReleaseHistogram()

	o = testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.crash(at(1500*ms), 0) // after its validity: not a holder's crash
	o.Finish(at(2 * time.Second))
	assert.Zero(t, o.Counts().HolderCrashes)
	_, _, ok = o.ReacquireAfterCrash(50)
	assert.False(t, ok)
}

func TestOracleKeepsABoundedList(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Hour))
	o.acquired(at(1), 1, 0, at(time.Hour))
	for i := range 3 * MaxViolations {
		o.storageWrite(at(time.Duration(i)+2), 0, 0, "lock", false, true)
	}
	assert.Equal(t, int64(3*MaxViolations), o.st.stale)
	assert.Len(t, o.violations, MaxViolations)
}

func TestOracleMarksViolationsInTheTrace(t *testing.T) {
	o := testOracle(t, 2)
	before := o.s.TraceRecords()
	o.acquired(at(0), 0, 0, at(time.Second))
	o.acquired(at(1), 1, 0, at(time.Second))
	assert.Equal(t, before+2, o.s.TraceRecords(), "a validity and a usage overlap")
}

func TestOracleEventPathDoesNotAllocate(t *testing.T) {
	o := testOracle(t, 2)
	out := lost(1, 5)
	allocs := testing.AllocsPerRun(1000, func() {
		o.acquireStart(at(0), 0, 0)
		o.attemptStarted(at(0), 0, 0)
		o.attemptEnded(at(0), 0, 0, out)
		o.acquired(at(0), 0, 0, at(time.Second))
		o.workEnd(at(0), 0)
		o.releaseStart(at(0), 0)
		o.storageWrite(at(0), 0, 0, "lock", true, true)
	})
	assert.Zero(t, allocs)
}

// TestOracleStaleWriteListsThePauseItFollows: a client paused past its validity resumes
// and writes at once; its write lands a few hundred microseconds after the pause ended,
// after another client acquired. The pause is the cause and must be listed, though it was
// over when the storage judged the write.
func TestOracleStaleWriteListsThePauseItFollows(t *testing.T) {
	o := testOracle(t, 2)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.wrote(at(0), 0, 1)
	o.storageWrite(at(500*time.Microsecond), 0, 1, "lock", false, true)
	o.pause(at(100*ms), 0)
	o.acquired(at(1200*ms), 1, 0, at(2200*ms))
	o.resume(at(1600*ms), 0)
	o.wrote(at(1600*ms), 0, 2)
	o.storageWrite(at(1600*ms+400*time.Microsecond), 0, 2, "lock", false, true) // stale
	o.wrote(at(1650*ms), 0, 3)
	o.storageWrite(at(1650*ms+400*time.Microsecond), 0, 3, "lock", true, false) // fenced, rejected
	require.Len(t, o.violations, 3, "the usage overlap, the stale write, the rejection")
	for _, v := range o.violations[1:] {
		assert.Contains(t, v.Faults, "c1 paused 100ms to 1.6s", "%s", v.Kind)
	}
}

// TestOracleStaleWriteListsNoPauseBeforeItsHold: a pause that ended before the writer
// even acquired the lock it wrote under explains nothing.
func TestOracleStaleWriteListsNoPauseBeforeItsHold(t *testing.T) {
	o := testOracle(t, 2)
	o.pause(at(0), 0)
	o.resume(at(10*ms), 0)
	o.acquired(at(20*ms), 0, 0, at(20*ms+time.Second))
	o.acquired(at(1100*ms), 1, 0, at(2100*ms)) // c1's lock expired: c2 takes it
	o.wrote(at(1200*ms), 0, 7)
	o.storageWrite(at(1201*ms), 0, 7, "lock", false, true)
	require.Len(t, o.violations, 2)
	assert.Equal(t, KindStaleWrite, o.violations[1].Kind)
	assert.Empty(t, o.violations[1].Faults)
}
