package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// emitSample writes one record of every field kind, once, for either emitter, with a
// note packed only for an emitter that reads notes (as the network's deliveries do).
func emitSample[E Emitter[E]](e E, n Name, packed *int) {
	slash := func(f *Field, dst []byte) []byte { return append(dst, f.Str+"/"+f.Str2...) }
	e = e.Begin(NewName("client1"), NewName("sample")).Int("id", -7).Dur("for", 1500*time.Microsecond).
		Bool("ok", true).Str("key", "lock").Name("peer", n).Custom("cmd", 1, 2, "a", "b", slash)
	if e.Notes() {
		*packed++
		e = e.NoteCustom("seen", 3, 4, "c", "d", slash)
	}
	e.End()
}

type lines struct{ b strings.Builder }

func (l *lines) Record(r *Record) { l.b.Write(append(r.AppendText(nil), '\n')) }

// TestEmittersAgree: the same record written through the Hasher (no sink) and through the
// Texter (a sink) folds to the same trace hash, and the Texter prints what Trace would.
func TestEmittersAgree(t *testing.T) {
	peer := NewName("redis2")
	hashed, err := New(Config{Seed: 1})
	require.NoError(t, err)
	var packed int
	emitSample(hashed.Hasher(), peer, &packed)
	assert.Zero(t, packed, "the Hasher reads no notes, so none is packed for it")

	texted, err := New(Config{Seed: 1})
	require.NoError(t, err)
	var out lines
	texted.SetSink(&out)
	emitSample(texted.Texter(), peer, &packed)
	assert.Equal(t, 1, packed)

	traced, err := New(Config{Seed: 1})
	require.NoError(t, err)
	var want lines
	traced.SetSink(&want)
	traced.Trace("client1", "sample", Int("id", -7), Dur("for", 1500*time.Microsecond), Bool("ok", true),
		Str("key", "lock"), Str("peer", "redis2"), Field{Key: "cmd", Kind: FieldCustom, Int: 1, Int2: 2, Str: "a", Str2: "b",
			Format: func(f *Field, dst []byte) []byte { return append(dst, f.Str+"/"+f.Str2...) }},
		Field{Key: "seen", Kind: FieldCustom, Note: true, Int: 3, Int2: 4, Str: "c", Str2: "d",
			Format: func(f *Field, dst []byte) []byte { return append(dst, f.Str+"/"+f.Str2...) }})

	assert.Equal(t, traced.TraceHash(), hashed.TraceHash())
	assert.Equal(t, traced.TraceHash(), texted.TraceHash())
	assert.Equal(t, want.b.String(), out.b.String())
	assert.Equal(t, "          0s client1  sample id=-7 for=1.5ms ok=true key=lock peer=redis2 cmd=a/b seen=c/d\n", out.b.String())
}
