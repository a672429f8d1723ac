package sim

import (
	"io"
	"strconv"
	"time"
	"unsafe"
)

// FieldKind says how a Field's value is stored and printed.
type FieldKind uint8

// The field kinds.
const (
	FieldInt    FieldKind = iota // Int, printed in decimal
	FieldStr                     // Str, printed as is
	FieldDur                     // Int nanoseconds, printed like time.Duration
	FieldBool                    // Int 0 or 1
	FieldCustom                  // printed by Format from Str, Str2, Int, Int2
)

// Field is one key/value of a trace record. It is a plain value with room for two
// strings and two integers, so that rich values (a Redis command, a reply) can be
// recorded without being formatted: Format runs only when a sink prints the record.
//
// A Note is printed but not folded into the trace hash. It is for a value that other
// records fold already, shown again where a reader wants it: a delivered message's content
// is folded where it was made and where it is acted on, and folding it once more for
// each delivery cost a tenth of a run.
type Field struct {
	Key    string
	Kind   FieldKind
	Note   bool
	Int    int64
	Int2   int64
	Str    string
	Str2   string
	Format func(f *Field, dst []byte) []byte // FieldCustom only; must be a static function
}

// Int returns an integer field.
func Int(key string, v int64) Field { return Field{Key: key, Kind: FieldInt, Int: v} }

// Str returns a string field.
func Str(key, v string) Field { return Field{Key: key, Kind: FieldStr, Str: v} }

// Dur returns a duration field.
func Dur(key string, d time.Duration) Field { return Field{Key: key, Kind: FieldDur, Int: int64(d)} }

// Bool returns a boolean field.
func Bool(key string, v bool) Field {
	f := Field{Key: key, Kind: FieldBool}
	if v {
		f.Int = 1
	}
	return f
}

// AsNote returns the field as a Note: printed, not folded into the trace hash.
func (f Field) AsNote() Field {
	f.Note = true
	return f
}

// AppendValue appends the field's value in text form to dst.
func (f *Field) AppendValue(dst []byte) []byte {
	switch f.Kind {
	case FieldInt:
		return strconv.AppendInt(dst, f.Int, 10)
	case FieldStr:
		return append(dst, f.Str...)
	case FieldDur:
		return append(dst, time.Duration(f.Int).String()...)
	case FieldBool:
		return strconv.AppendBool(dst, f.Int != 0)
	default:
		if f.Format != nil {
			return f.Format(f, dst)
		}
		return append(dst, '?')
	}
}

// Record is one trace event: the true time, the actor (a node, a client, the network),
// what happened, and its fields. A sink must not keep the pointer or the Fields slice
// past its Record call: both are reused for the next record.
type Record struct {
	At     Time
	Actor  string
	Kind   string
	Fields []Field
}

// AppendText appends the record as one line of text, without a newline:
// "    1.25ms client1  send to=node3 cmd=SET lock v NX PX 10000".
func (r *Record) AppendText(dst []byte) []byte {
	dst = appendPadded(dst, r.At.String(), 12, true)
	dst = append(dst, ' ')
	dst = appendPadded(dst, r.Actor, 8, false)
	dst = append(dst, ' ')
	dst = append(dst, r.Kind...)
	for i := range r.Fields {
		f := &r.Fields[i]
		dst = append(dst, ' ')
		dst = append(dst, f.Key...)
		dst = append(dst, '=')
		dst = f.AppendValue(dst)
	}
	return dst
}

// String returns the record as AppendText formats it.
func (r *Record) String() string { return string(r.AppendText(nil)) }

func appendPadded(dst []byte, s string, width int, right bool) []byte {
	pad := width - len(s)
	if right {
		for ; pad > 0; pad-- {
			dst = append(dst, ' ')
		}
	}
	dst = append(dst, s...)
	for ; pad > 0; pad-- {
		dst = append(dst, ' ')
	}
	return dst
}

// Sink receives trace records as they happen. It is called synchronously from the
// simulation, so what it does is part of the run's cost, not of its result.
type Sink interface {
	Record(r *Record)
}

// WriterSink writes each record as a line of text. It reuses one buffer, and write errors
// are remembered (Err) rather than stopping the run.
type WriterSink struct {
	w   io.Writer
	buf []byte
	err error
}

// NewWriterSink returns a sink that writes text lines to w.
func NewWriterSink(w io.Writer) *WriterSink { return &WriterSink{w: w} }

// Record writes r as one line.
func (ws *WriterSink) Record(r *Record) {
	if ws.err != nil {
		return
	}
	ws.buf = append(r.AppendText(ws.buf[:0]), '\n')
	_, ws.err = ws.w.Write(ws.buf)
}

// Err returns the first write error, if any.
func (ws *WriterSink) Err() error { return ws.err }

// tracer is the trace state embedded in Sim.
type tracer struct {
	hash    uint64
	records uint64
	sink    Sink
	rec     Record
	digests digestCache
}

func newTracer() tracer { return tracer{hash: fnvOffset} }

// SetSink attaches a sink (nil detaches). The trace hash is kept either way.
func (s *Sim) SetSink(k Sink) { s.sink = k }

// Tracing reports whether a sink is attached, so an actor can skip building fields that
// only a reader needs (the hash never depends on them).
func (s *Sim) Tracing() bool { return s.sink != nil }

// Trace records that actor did kind at the current true time. The record is folded into
// the trace hash always and handed to the sink only if one is attached; no text is
// formatted unless the sink formats it.
//
// What is folded, per record: the time, the actor's and the kind's digests, one word per
// field but notes (its value, or its string's digest; a FieldCustom folds its four parts), and a
// final shape word holding the number of fields and their kinds, so that records with
// different fields never fold alike however their values line up. Keys and formats are
// not folded: they are constants of the code that emits a record, whose shape the actor
// and kind already identify. Strings fold as digests (see strDigest), so that a string met
// again (a lock value is in every command of its cycle, names in every record) costs one
// word.
func (s *Sim) Trace(actor, kind string, fields ...Field) {
	r := s.Fold(actor, kind)
	for i := range fields {
		r = r.Field(&fields[i])
	}
	r.End()
	if s.sink == nil {
		return
	}
	s.rec.At, s.rec.Actor, s.rec.Kind = s.now, actor, kind
	s.rec.Fields = append(s.rec.Fields[:0], fields...)
	s.sink.Record(&s.rec)
}

// Aside hands a record to the sink, if one is attached, without folding it into the
// trace hash: for what a reader needs told that the folded records already imply, such as
// a pause merged into one in progress (the resume that ends it is folded). Tracing must
// never change the hash, so an Aside is the only kind of record an actor may emit only
// while Tracing() is true.
func (s *Sim) Aside(actor, kind string, fields ...Field) {
	if s.sink == nil {
		return
	}
	s.rec.At, s.rec.Actor, s.rec.Kind = s.now, actor, kind
	s.rec.Fields = append(s.rec.Fields[:0], fields...)
	s.sink.Record(&s.rec)
}

// Fold starts a trace record that is folded into the trace hash without building its
// fields: Trace's own path, and a test's way to fold what a record should hash to. Actors
// write their records once, over Emitter (see Hasher).
func (s *Sim) Fold(actor, kind string) Hasher {
	return s.Hasher().Begin(Name{actor, s.digests.of(actor)}, Name{kind, s.digests.of(kind)})
}

// Name is a string with its trace digest worked out once: an actor's name, a record kind,
// an endpoint's name. Folding it costs one word.
type Name struct {
	s string
	d uint64
}

// NewName returns s as a Name.
func NewName(s string) Name { return Name{s, strDigest(s)} }

// String returns the name's text.
func (n Name) String() string { return n.s }

// Hasher is the Emitter of an untraced run: it folds each field's value into the trace
// hash exactly as Trace would, and builds nothing. Its methods fold a word each, directly,
// so that each stays within the inliner's budget and a chain of them compiles to the folds
// alone, kept in registers.
type Hasher struct {
	s     *Sim
	h     uint64
	shape uint64 // see word
}

// Hasher returns the emitter of a record folded into the trace hash only, at the current
// true time; Begin starts it. The time is folded here and the names in Begin, which keeps
// both within the inliner's budget.
func (s *Sim) Hasher() Hasher { return Hasher{s: s, h: foldInt(s.hash, uint64(s.now))} }

// Begin starts the record: it folds the actor and the kind.
func (h Hasher) Begin(actor, kind Name) Hasher {
	return Hasher{s: h.s, h: foldInt(foldInt(h.h, actor.d), kind.d), shape: 1}
}

// Name folds a Str field whose value is n's text.
func (h Hasher) Name(_ string, n Name) Hasher { return h.word(n.d, FieldStr) }

// Int folds an Int field.
func (h Hasher) Int(_ string, v int64) Hasher { return h.word(uint64(v), FieldInt) }

// Dur folds a Dur field.
func (h Hasher) Dur(_ string, d time.Duration) Hasher { return h.word(uint64(d), FieldDur) }

// Bool folds a Bool field.
func (h Hasher) Bool(_ string, v bool) Hasher {
	var w uint64
	if v {
		w = 1
	}
	return h.word(w, FieldBool)
}

// Str folds a Str field, as its string's digest.
func (h Hasher) Str(_, v string) Hasher { return h.str(v) }

// str is Str without the key: Str inlines to a call of it, so the key is never passed.
// It is never inlined itself: PGO would inline it, digest cache and all, into hot call
// sites, and Str would then cost too much to inline anywhere else.
//
//go:noinline
func (h Hasher) str(v string) Hasher { return h.word(h.s.digests.of(v), FieldStr) }

// Custom folds a FieldCustom field's four parts; the format is the reader's.
func (h Hasher) Custom(_ string, i, i2 int64, s1, s2 string, _ func(*Field, []byte) []byte) Hasher {
	return h.custom(i, i2, s1, s2)
}

// custom is Custom without the key and format: Custom inlines to a call of it, whose
// arguments then all fit in registers. Never inlined, for the reason str is not.
//
//go:noinline
func (h Hasher) custom(i, i2 int64, s1, s2 string) Hasher {
	d := &h.s.digests
	h.h = foldInt(foldInt(h.h, uint64(i)), uint64(i2))
	h.h = foldInt(h.h, d.of(s1))
	return h.word(d.of(s2), FieldCustom)
}

// NoteCustom folds nothing: a note is for readers only.
func (h Hasher) NoteCustom(string, int64, int64, string, string, func(*Field, []byte) []byte) Hasher {
	return h
}

// Notes reports false: the hash skips notes.
func (h Hasher) Notes() bool { return false }

// Field folds any field, as Trace does: a Note not at all.
func (h Hasher) Field(fl *Field) Hasher {
	if fl.Note {
		return h
	}
	switch fl.Kind {
	case FieldInt, FieldDur, FieldBool:
		return h.word(uint64(fl.Int), fl.Kind)
	case FieldStr:
		return h.str(fl.Str)
	}
	return h.custom(fl.Int, fl.Int2, fl.Str, fl.Str2)
}

// word folds one word of a field of kind k and notes the kind in the shape: the shape is
// the kinds as the digits of a base-17 number behind a leading 1, which holds up to
// fifteen fields exactly (17^15 < 2^64) and hashes longer records, off the chain of
// multiplications that folds h.
func (h Hasher) word(w uint64, k FieldKind) Hasher {
	h.h = foldInt(h.h, w)
	h.shape = h.shape*17 + uint64(k)
	return h
}

// End completes the record.
func (h Hasher) End() {
	h.s.hash = foldInt(h.h, h.shape)
	h.s.records++
}

// TraceHash returns a 64-bit digest of every record traced so far (and their count):
// two runs of the same world agree on it exactly when their traces agree.
func (s *Sim) TraceHash() uint64 { return foldInt(s.hash, s.records) }

// TraceRecords returns the number of records traced so far.
func (s *Sim) TraceRecords() uint64 { return s.records }

// digestCache remembers the digests of the last strings folded, by the address of their
// bytes: the same few strings (names, kinds, the key, the lock value of the cycle in
// progress) come back in record after record. An entry keeps its string alive, so an address that hits
// is the same immutable bytes, never a new string that reused freed memory. It changes
// only the cost of a digest, never its value.
type digestCache struct {
	ents [digestSlots]digestEnt
}

type digestEnt struct {
	s string
	d uint64
}

const digestSlots = 64 // a power of two

func (c *digestCache) of(s string) uint64 {
	if len(s) < 4 {
		return strDigest(s) // as cheap as a lookup
	}
	p := unsafe.StringData(s)
	e := &c.ents[(uintptr(unsafe.Pointer(p))>>3^uintptr(len(s)))&(digestSlots-1)]
	if unsafe.StringData(e.s) == p && len(e.s) == len(s) {
		return e.d
	}
	e.s, e.d = s, strDigest(s)
	return e.d
}

// strDigest hashes s, length included, so ("ab","c") and ("a","bc") differ. It reads s a
// word at a time, the last word ending at the last byte and so overlapping the one before
// when the length is not a multiple of eight (4 to 8 bytes: two overlapping 4-byte halves;
// 1 to 3 bytes: the first, middle and last byte); the length makes the overlap unambiguous.
func strDigest(s string) uint64 {
	n := len(s)
	h := foldInt(digestSeed, uint64(n))
	switch {
	case n == 0:
		return h
	case n < 4:
		return foldInt(h, uint64(s[0])|uint64(s[n/2])<<8|uint64(s[n-1])<<16)
	case n <= 8:
		return foldInt(h, uint64(load32(s, 0))|uint64(load32(s, n-4))<<32)
	}
	for i := 0; i < n-8; i += 8 {
		h = foldInt(h, load64(s, i))
	}
	return foldInt(h, load64(s, n-8))
}

const digestSeed = 0x243f6a8885a308d3 // the digits of π: any odd constant will do

func load32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func load64(s string, i int) uint64 {
	return uint64(load32(s, i)) | uint64(load32(s, i+4))<<32
}

// foldInt mixes v into h a word at a time (a multiply-rotate round, as in xxhash), which
// is several times cheaper than FNV over the eight bytes.
func foldInt(h, v uint64) uint64 {
	h ^= v * 0xc2b2ae3d27d4eb4f
	h = h<<31 | h>>33
	return h * 0x9e3779b97f4a7c15
}
