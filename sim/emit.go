package sim

import "time"

// Emitter writes one trace record, once, for whichever reader the run has: the trace hash
// alone (Hasher, when no sink is attached) or the text sink as well (Texter). A record kind
// is written by one generic function over Emitter,
//
//	func emitWrite[E sim.Emitter[E]](e E, actor, kind sim.Name, resource string, token int64) {
//		e.Begin(actor, kind).Str("resource", resource).Int("token", token).End()
//	}
//
// so the text and the hash cannot disagree on a record's fields, their order or their
// kinds. Go calls a type parameter's methods through the instance's dictionary, out of
// the inliner's sight, so the functions are not called generically: internal/cmd/emitgen
// copies each one for Hasher and for Texter (emitWriteHasher, emitWriteTexter), and the
// call site picks the copy by s.Tracing(). The Hasher copy compiles to the folds alone, as
// a hand-written fold did.
type Emitter[E any] interface {
	// Begin starts a record of kind by actor, at the current true time.
	Begin(actor, kind Name) E
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
	// Notes reports whether the reader sees notes: a writer need not pack a value it
	// would hand to NoteCustom when it does not. It is a constant of each emitter, so a
	// copy for the Hasher drops the branch.
	Notes() bool
	// End completes the record.
	End()
}

// Texter is the Emitter of a traced run: it builds the record's fields and, at End, folds
// them into the trace hash and hands the record to the sink, as Trace does.
type Texter struct{ s *Sim }

// Texter returns the emitter of a record folded into the trace hash and handed to the
// sink; Begin starts it.
func (s *Sim) Texter() Texter { return Texter{s} }

// Begin starts the record with no fields.
func (t Texter) Begin(actor, kind Name) Texter {
	s := t.s
	s.rec.At, s.rec.Actor, s.rec.Kind = s.now, actor.s, kind.s
	s.rec.Fields = s.rec.Fields[:0]
	return t
}

func (t Texter) add(f Field) Texter {
	t.s.rec.Fields = append(t.s.rec.Fields, f)
	return t
}

// Notes reports true: a sink prints notes.
func (t Texter) Notes() bool { return true }

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
