package sim

import (
	"io"
	"strconv"
	"time"
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
type Field struct {
	Key    string
	Kind   FieldKind
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
func (s *Sim) Trace(actor, kind string, fields ...Field) {
	h := foldInt(s.hash, uint64(s.now))
	h = foldStr(h, actor)
	h = foldStr(h, kind)
	for i := range fields {
		h = fields[i].fold(h)
	}
	s.hash = h
	s.records++
	if s.sink == nil {
		return
	}
	s.rec.At, s.rec.Actor, s.rec.Kind = s.now, actor, kind
	s.rec.Fields = append(s.rec.Fields[:0], fields...)
	s.sink.Record(&s.rec)
}

// TraceHash returns a 64-bit digest of every record traced so far (and their count):
// two runs of the same world agree on it exactly when their traces agree.
func (s *Sim) TraceHash() uint64 { return foldInt(s.hash, s.records) }

// TraceRecords returns the number of records traced so far.
func (s *Sim) TraceRecords() uint64 { return s.records }

// fold mixes the field into h. The key is not folded: keys are constants fixed by the
// code that emits a record, whose shape the record's actor and kind already identify.
// Only the parts the field's kind uses are folded (the kind itself always is, so an Int 0
// and a Bool false differ): folding is the largest cost per traced message, and unused
// parts are always zero anyway.
func (f *Field) fold(h uint64) uint64 {
	h = foldInt(h, uint64(f.Kind))
	switch f.Kind {
	case FieldInt, FieldDur, FieldBool:
		return foldInt(h, uint64(f.Int))
	case FieldStr:
		return foldStr(h, f.Str)
	}
	h = foldInt(h, uint64(f.Int))
	h = foldInt(h, uint64(f.Int2))
	h = foldStr(h, f.Str)
	return foldStr(h, f.Str2)
}

// foldStr folds s eight bytes at a time, then its length, so that ("ab","c") and
// ("a","bc") differ. Byte-at-a-time FNV was ~40 % of the cost of a traced message.
func foldStr(h uint64, s string) uint64 {
	n := uint64(len(s))
	for ; len(s) >= 8; s = s[8:] {
		h = foldInt(h, uint64(s[0])|uint64(s[1])<<8|uint64(s[2])<<16|uint64(s[3])<<24|
			uint64(s[4])<<32|uint64(s[5])<<40|uint64(s[6])<<48|uint64(s[7])<<56)
	}
	if len(s) > 0 {
		var v uint64
		for i := 0; i < len(s); i++ {
			v |= uint64(s[i]) << (8 * i)
		}
		h = foldInt(h, v)
	}
	return foldInt(h, n)
}

// foldInt mixes v into h a word at a time (a multiply-rotate round, as in xxhash), which
// is several times cheaper than FNV over the eight bytes.
func foldInt(h, v uint64) uint64 {
	h ^= v * 0xc2b2ae3d27d4eb4f
	h = h<<31 | h>>33
	return h * 0x9e3779b97f4a7c15
}
