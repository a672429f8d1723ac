package sim

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

var fieldKindNames = [...]string{FieldInt: "an int", FieldStr: "a string", FieldDur: "a duration",
	FieldBool: "a bool", FieldCustom: "a packed value"}

func (k FieldKind) String() string {
	if int(k) < len(fieldKindNames) {
		return fieldKindNames[k]
	}
	return "field kind " + strconv.Itoa(int(k))
}

// RecordReader reads a trace record's fields by key and kind, for the typed decoders each
// record's writer defines next to it (model.DecodeExec, network.DecodeMsgRecord, ...), so
// that the report and the viewer never read a field by name themselves. A field that is
// missing, or of another kind than asked, fails the read, and so does a field the decoder
// never read (End): the reader keeps the first failure, and a decoder returns it instead
// of the zero the read gave back. A writer and its decoder therefore cannot drift apart
// unnoticed, by a field renamed, added or dropped. Reading never changes the record; it
// is for sinks, off the emitters' hot path.
type RecordReader struct {
	r    *Record
	err  error
	read uint64 // bit i: field i was read (the first 64 fields; records have a handful)
}

// ReadRecord returns a reader of r's fields.
func ReadRecord(r *Record) RecordReader { return RecordReader{r: r} }

// End returns the first failed read, naming the record and the field, or, when every read
// succeeded, an error naming the first field the decoder did not read; nil when the
// record decoded whole.
func (d *RecordReader) End() error {
	if d.err != nil {
		return d.err
	}
	for i := range min(len(d.r.Fields), 64) {
		if d.read&(1<<i) == 0 {
			d.Fail("unexpected field %q", d.r.Fields[i].Key)
			break
		}
	}
	return d.err
}

// Has reports whether the record has a field key, for the fields a writer adds only in
// some cases (an exec's reply when it did not fit the command's field).
func (d *RecordReader) Has(key string) bool {
	return slices.IndexFunc(d.r.Fields, func(f Field) bool { return f.Key == key }) >= 0
}

// Int reads an Int field.
func (d *RecordReader) Int(key string) int64 {
	if f := d.field(key, FieldInt); f != nil {
		return f.Int
	}
	return 0
}

// Dur reads a Dur field.
func (d *RecordReader) Dur(key string) time.Duration {
	if f := d.field(key, FieldDur); f != nil {
		return time.Duration(f.Int)
	}
	return 0
}

// Bool reads a Bool field.
func (d *RecordReader) Bool(key string) bool {
	if f := d.field(key, FieldBool); f != nil {
		return f.Int != 0
	}
	return false
}

// Str reads a Str field (a Name is one too).
func (d *RecordReader) Str(key string) string {
	if f := d.field(key, FieldStr); f != nil {
		return f.Str
	}
	return ""
}

// Custom reads a FieldCustom field, for its writer's package to unpack; the pointer is
// into the record, valid as long as the record is.
func (d *RecordReader) Custom(key string) *Field { return d.field(key, FieldCustom) }

// Fail records a failure the decoder found itself (a value out of its range), unless an
// earlier one is kept.
func (d *RecordReader) Fail(format string, args ...any) {
	if d.err == nil {
		d.err = RecordError(d.r, fmt.Sprintf(format, args...))
	}
}

func (d *RecordReader) field(key string, kind FieldKind) *Field {
	for i := range d.r.Fields {
		f := &d.r.Fields[i]
		if f.Key != key {
			continue
		}
		if f.Kind != kind {
			d.Fail("field %q is %s, want %s", key, f.Kind, kind)
			return nil
		}
		if i < 64 {
			d.read |= 1 << i
		}
		return f
	}
	d.Fail("no field %q", key)
	return nil
}

// RecordError is the error of a record that does not decode: its kind, actor and time,
// and what is wrong with it.
func RecordError(r *Record, what string) error {
	return fmt.Errorf("trace record %q of %s at %v: %s", r.Kind, r.Actor, r.At, what)
}

// WrongKind is the error of a decoder handed a record of another kind than it reads.
func WrongKind(r *Record, want ...string) error {
	q := make([]string, len(want))
	for i, k := range want {
		q[i] = strconv.Quote(k)
	}
	return RecordError(r, "want a record of kind "+strings.Join(q, " or "))
}
