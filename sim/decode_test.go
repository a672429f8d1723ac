package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRecordReaderNeverReadsAZero: a field that is missing, of another kind, or left
// unread fails the decoding with an error naming the record and the field.
func TestRecordReaderNeverReadsAZero(t *testing.T) {
	r := &Record{At: Time(time.Millisecond), Actor: "redis1", Kind: "restart",
		Fields: []Field{Int("keys", 3), Str("why", "power"), Dur("after", time.Second), Bool("ok", true)}}

	d := ReadRecord(r)
	assert.Equal(t, int64(3), d.Int("keys"))
	assert.Equal(t, "power", d.Str("why"))
	assert.Equal(t, time.Second, d.Dur("after"))
	assert.True(t, d.Bool("ok"))
	assert.NoError(t, d.End(), "every field read, each of its kind")

	d = ReadRecord(r)
	d.Int("keys")
	d.Int("lost")
	d.Str("why")
	assert.EqualError(t, d.End(), `trace record "restart" of redis1 at 1ms: no field "lost"`, "the first failure is kept")

	d = ReadRecord(r)
	d.Str("keys")
	assert.EqualError(t, d.End(), `trace record "restart" of redis1 at 1ms: field "keys" is an int, want a string`)

	d = ReadRecord(r)
	d.Int("keys")
	d.Str("why")
	assert.True(t, d.Has("after"), "Has looks without reading")
	assert.EqualError(t, d.End(), `trace record "restart" of redis1 at 1ms: unexpected field "after"`,
		"a field the decoder does not know is a writer gone ahead of its reader")

	assert.EqualError(t, WrongKind(r, "exec", "drop"), `trace record "restart" of redis1 at 1ms: want a record of kind "exec" or "drop"`)
}
