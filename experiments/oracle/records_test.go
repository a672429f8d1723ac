package oracle

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/sim"
)

type recordLog []sim.Record

func (l *recordLog) Record(r *sim.Record) {
	c := *r
	c.Fields = slices.Clone(r.Fields)
	*l = append(*l, c)
}

// TestViolationRecordsDecode: the records the oracle traces for two overlapping holders
// decode into the violations it found; a record missing a field is refused.
func TestViolationRecordsDecode(t *testing.T) {
	o := testOracle(t, 2)
	var log recordLog
	o.s.SetSink(&log)
	o.acquired(at(0), 0, 0, at(time.Second))
	o.acquired(at(1), 1, 0, at(time.Second))
	require.Len(t, log, 2)
	var got []ViolationRecord
	for i := range log {
		v, err := DecodeViolation(&log[i])
		require.NoError(t, err)
		got = append(got, v)
	}
	assert.Equal(t, []ViolationRecord{
		{Kind: KindUsageOverlap, Resource: "lock", First: "c1", Second: "c2"},
		{Kind: KindValidityOverlap, Resource: "lock", First: "c1", Second: "c2"},
	}, got)

	log[0].Fields = log[0].Fields[:3]
	_, err := DecodeViolation(&log[0])
	assert.ErrorContains(t, err, `no field "second"`)
	log[1].Kind = "violations"
	_, err = DecodeViolation(&log[1])
	assert.Error(t, err)
}
