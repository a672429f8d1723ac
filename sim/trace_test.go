package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStrDigestSeesEveryByteAndTheLength(t *testing.T) {
	seen := map[uint64]string{}
	add := func(s string) {
		d := strDigest(s)
		prev, dup := seen[d]
		assert.False(t, dup, "%q and %q have one digest", s, prev)
		seen[d] = s
	}
	base := strings.Repeat("x", 40)
	for n := 0; n <= len(base); n++ {
		add(base[:n])
		for i := 0; i < n; i++ { // every byte of every length counts
			add(base[:i] + "y" + base[i+1:n])
		}
	}
	add("\x00")
	add("\x00\x00")
}

func TestDigestCacheGivesTheDigest(t *testing.T) {
	var c digestCache
	for round := 0; round < 3; round++ {
		for i := 0; i < 200; i++ { // more strings than slots
			s := strings.Repeat(string(rune('a'+i%26)), 9+i%17) + string(rune('0'+i%10))
			assert.Equal(t, strDigest(s), c.of(s), s)
			assert.Equal(t, strDigest(s), c.of(strings.Clone(s)), "same bytes elsewhere")
		}
	}
}

func TestTraceHashSeesFieldKindsAndCounts(t *testing.T) {
	hash := func(trace func(s *Sim)) uint64 {
		s := newSim(t, Config{})
		trace(s)
		return s.TraceHash()
	}
	hashes := []uint64{
		hash(func(s *Sim) { s.Trace("a", "k", Int("x", 1)) }),
		hash(func(s *Sim) { s.Trace("a", "k", Dur("x", 1)) }),
		hash(func(s *Sim) { s.Trace("a", "k", Bool("x", true)) }),
		hash(func(s *Sim) { s.Trace("a", "k", Int("x", 1), Int("y", 0)) }),
		hash(func(s *Sim) { s.Trace("a", "k", Int("x", 1)); s.Trace("a", "k") }),
		hash(func(s *Sim) { s.Trace("a", "k", Str("x", "v")) }),
		hash(func(s *Sim) { s.Trace("a", "k", Field{Kind: FieldCustom, Str: "v"}) }),
		hash(func(s *Sim) { s.Trace("a", "k", Field{Kind: FieldCustom, Str2: "v"}) }),
		hash(func(s *Sim) { s.Trace("a", "k", Field{Kind: FieldCustom, Int2: 1}) }),
		hash(func(s *Sim) { s.Trace("a", "k", make([]Field, 20)...) }),
		hash(func(s *Sim) { s.Trace("a", "k", make([]Field, 21)...) }),
	}
	seen := map[uint64]int{}
	for i, h := range hashes {
		prev, dup := seen[h]
		assert.False(t, dup, "records %d and %d hash alike", prev, i)
		seen[h] = i
	}
}

func TestNotesArePrintedNotFolded(t *testing.T) {
	plain, noted := newSim(t, Config{}), newSim(t, Config{})
	var line string
	noted.SetSink(sinkFunc(func(r *Record) { line = r.String() }))
	plain.Trace("net", "deliver", Int("id", 3))
	noted.Trace("net", "deliver", Int("id", 3), Str("msg", "SET lock v").AsNote())
	assert.Equal(t, plain.TraceHash(), noted.TraceHash())
	assert.Contains(t, line, "id=3 msg=SET lock v")
	other := newSim(t, Config{})
	other.Trace("net", "deliver", Int("id", 3), Str("msg", "something else").AsNote())
	assert.Equal(t, plain.TraceHash(), other.TraceHash())
	assert.Equal(t, plain.Fold("net", "deliver").Int("id", 3).Field(&Field{Kind: FieldInt, Int: 9, Note: true}).h,
		plain.Fold("net", "deliver").Int("id", 3).h, "Hasher.Field skips a note")
}

func TestAsideReachesTheSinkUnfolded(t *testing.T) {
	plain, told := newSim(t, Config{}), newSim(t, Config{})
	var lines []string
	told.SetSink(sinkFunc(func(r *Record) { lines = append(lines, r.String()) }))
	plain.Trace("client1", "pause", Dur("for", 5))
	told.Trace("client1", "pause", Dur("for", 5))
	told.Aside("client1", "pause-merged", Dur("for", 7))
	plain.Aside("client1", "pause-merged", Dur("for", 7)) // no sink: nothing at all
	assert.Equal(t, plain.TraceHash(), told.TraceHash())
	assert.Equal(t, plain.TraceRecords(), told.TraceRecords())
	require.Len(t, lines, 2)
	assert.Contains(t, lines[1], "pause-merged for=7ns")
}

func TestFoldHashesAsTrace(t *testing.T) {
	long := strings.Repeat("v", 24)
	traced, folded := newSim(t, Config{}), newSim(t, Config{})
	custom := Field{Key: "cmd", Kind: FieldCustom, Int: -7, Int2: 9, Str: "lock", Str2: long}
	traced.Trace("client1", "send", Int("n", 3), Str("to", "node3"), Bool("ok", true), Dur("ttl", 10*time.Second), custom)
	traced.Trace("net", "deliver", Str("v", long), Bool("ok", false))
	traced.Trace("net", "empty")
	folded.Fold("client1", "send").Int("n", 3).Name("to", NewName("node3")).Bool("ok", true).Dur("ttl", 10*time.Second).
		Custom("cmd", -7, 9, "lock", long, nil).End()
	folded.Hasher().Begin(NewName("net"), NewName("deliver")).Str("v", strings.Clone(long)).Bool("ok", false).End()
	folded.Fold("net", "empty").End()
	assert.Equal(t, traced.TraceHash(), folded.TraceHash())
	assert.Equal(t, traced.TraceRecords(), folded.TraceRecords())
}

type sinkFunc func(r *Record)

func (f sinkFunc) Record(r *Record) { f(r) }
