package sim

import "time"

// Emitter writes the fields of one trace record, once, for whichever reader the run has:
// the trace hash alone (Hasher, when no sink is attached) or the text sink as well
// (Texter). A record kind is written by one generic function over Emitter,
//
//	func emitWrite[E sim.Emitter[E]](e E, resource string, token int64) {
//		e.Str("resource", resource).Int("token", token).End()
//	}
//
// called with s.Hasher(...) when !s.Tracing() and with s.Texter(...) otherwise, so the text
// and the hash cannot disagree on a record's fields, their order or their kinds. Both
// emitters are small values: the compiler makes a separate instance of the function for
// each and inlines the calls, so the untraced path costs what a hand-written fold did.
type Emitter[E any] interface {
	Int(key string, v int64) E
	Dur(key string, d time.Duration) E
	Bool(key string, v bool) E
	Str(key, v string) E
	// Name is a Str field whose value is n's text, its digest already known.
	Name(key string, n Name) E
	// Custom is a FieldCustom field: four parts, printed by format (a static function).
	Custom(key string, i, i2 int64, s1, s2 string, format func(f *Field, dst []byte) []byte) E
	// NoteCustom is a FieldCustom printed but not folded into the hash (a Note): a value
	// other records fold already, shown again where a reader wants it.
	NoteCustom(key string, i, i2 int64, s1, s2 string, format func(f *Field, dst []byte) []byte) E
	// End completes the record.
	End()
}

// Hasher is the Emitter of an untraced run: it folds each field's value into the trace
// hash exactly as Trace would, and builds nothing.
type Hasher struct{ f Folder }

// Hasher starts a record of kind by actor, for the trace hash only.
func (s *Sim) Hasher(actor, kind Name) Hasher { return Hasher{s.FoldNames(actor, kind)} }

// Int folds an Int field.
func (h Hasher) Int(_ string, v int64) Hasher { return Hasher{h.f.Int(v)} }

// Dur folds a Dur field.
func (h Hasher) Dur(_ string, d time.Duration) Hasher { return Hasher{h.f.Dur(d)} }

// Bool folds a Bool field.
func (h Hasher) Bool(_ string, v bool) Hasher { return Hasher{h.f.Bool(v)} }

// Str folds a Str field.
func (h Hasher) Str(_, v string) Hasher { return Hasher{h.f.Str(v)} }

// Name folds a Str field whose value is n's text.
func (h Hasher) Name(_ string, n Name) Hasher { return Hasher{h.f.Name(n)} }

// Custom folds a FieldCustom field's four parts.
func (h Hasher) Custom(_ string, i, i2 int64, s1, s2 string, _ func(*Field, []byte) []byte) Hasher {
	return Hasher{h.f.Custom(i, i2, s1, s2)}
}

// NoteCustom folds nothing: a note is for readers only.
func (h Hasher) NoteCustom(string, int64, int64, string, string, func(*Field, []byte) []byte) Hasher {
	return h
}

// End completes the record.
func (h Hasher) End() { h.f.End() }

// Texter is the Emitter of a traced run: it builds the record's fields and, at End, folds
// them into the trace hash and hands the record to the sink, as Trace does.
type Texter struct{ s *Sim }

// Texter starts a record of kind by actor, for the trace hash and the sink.
func (s *Sim) Texter(actor, kind string) Texter {
	s.rec.At, s.rec.Actor, s.rec.Kind = s.now, actor, kind
	s.rec.Fields = s.rec.Fields[:0]
	return Texter{s}
}

func (t Texter) add(f Field) Texter {
	t.s.rec.Fields = append(t.s.rec.Fields, f)
	return t
}

// Int adds an Int field.
func (t Texter) Int(key string, v int64) Texter { return t.add(Int(key, v)) }

// Dur adds a Dur field.
func (t Texter) Dur(key string, d time.Duration) Texter { return t.add(Dur(key, d)) }

// Bool adds a Bool field.
func (t Texter) Bool(key string, v bool) Texter { return t.add(Bool(key, v)) }

// Str adds a Str field.
func (t Texter) Str(key, v string) Texter { return t.add(Str(key, v)) }

// Name adds a Str field whose value is n's text.
func (t Texter) Name(key string, n Name) Texter { return t.add(Str(key, n.s)) }

// Custom adds a FieldCustom field.
func (t Texter) Custom(key string, i, i2 int64, s1, s2 string, format func(*Field, []byte) []byte) Texter {
	return t.add(Field{Key: key, Kind: FieldCustom, Int: i, Int2: i2, Str: s1, Str2: s2, Format: format})
}

// NoteCustom adds a FieldCustom as a Note: printed, not folded.
func (t Texter) NoteCustom(key string, i, i2 int64, s1, s2 string, format func(*Field, []byte) []byte) Texter {
	return t.add(Field{Key: key, Kind: FieldCustom, Note: true, Int: i, Int2: i2, Str: s1, Str2: s2, Format: format})
}

// End folds the record into the trace hash and hands it to the sink.
func (t Texter) End() {
	s := t.s
	r := s.Fold(s.rec.Actor, s.rec.Kind)
	for i := range s.rec.Fields {
		r = r.Field(&s.rec.Fields[i])
	}
	r.End()
	if s.sink != nil {
		s.sink.Record(&s.rec)
	}
}
