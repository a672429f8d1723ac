package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// KV is one knob setting: a knob name and its canonical value as text. Knobs travel as
// text so that the engine stays ignorant of what they mean; the world parses them.
type KV struct {
	Name  string `json:"knob"`
	Value string `json:"value"`
}

// KnobChecker validates and canonicalises knob values. It is the part of a Runner that a
// spec needs, so that specs can be checked without being able to run anything.
type KnobChecker interface {
	// Knob validates one knob value given as text in a spec or on the command line
	// ("ttl", "200ms") and returns its canonical text ("200ms" for "0.2s"), so that two
	// spellings of one value make one point and one CSV field. An unknown name or a bad
	// value is an error naming the knob, the value and the allowed range (a
	// *sim.ParamError, with close-match suggestions for names).
	Knob(name, value string) (canonical string, err error)
}

// Runner is what a sweep runs: one simulated world per (knobs, seed).
type Runner interface {
	KnobChecker
	// Columns lists the metric columns every run reports, in order, with their kind. It
	// must return the same list every time; the list is recorded in the manifest.
	Columns() []Column
	// Run runs one world and returns one value per column. It must be a deterministic
	// function of (knobs, seed), return an error rather than partial values when it stops
	// early (for example because ctx was cancelled), and be safe to call concurrently from
	// several goroutines on independent inputs. knobs holds the spec's base settings in
	// file order followed by the point's axis settings in file order.
	Run(ctx context.Context, knobs []KV, seed uint64) ([]Value, error)
}

// Ratio is a summary.csv column derived from two KindCount columns over a point's runs:
// Scale × Σ Num / Σ Den, the ratio of sums (not the mean of per-run ratios, which would
// weigh a run with 2 acquisitions like one with 2,000). The engine knows columns, not
// what they mean; a Runner declares the ratios worth reading (violations per 10,000
// acquisitions) by implementing RatioRunner. The value is empty when Σ Den is 0.
type Ratio struct {
	// Name is the summary.csv column, with its unit in it (..._per_10k_acq).
	Name string `json:"name"`
	// Num and Den name KindCount columns of the runner; Den may be a sum of several,
	// joined by "+" ("acquired+failed": every acquire that ended).
	Num string `json:"num"`
	Den string `json:"den"`
	// Scale multiplies the ratio (10000 for "per 10,000"); 0 means 1.
	Scale float64 `json:"scale,omitempty"`
	// Proportion says Num counts a subset of Den's trials (acquired of attempts): the
	// summary then adds Name_lo and Name_hi, its 95% Wilson interval (of the unscaled
	// proportion, times Scale).
	Proportion bool `json:"proportion,omitempty"`
}

// RatioRunner is a Runner that declares derived ratio columns for summary.csv. Like
// Columns, Ratios must return the same list every time; it is recorded in the manifest.
type RatioRunner interface {
	Runner
	Ratios() []Ratio
}

// ratiosOf returns r's ratios, or none when r declares none.
func ratiosOf(r Runner) []Ratio {
	if rr, ok := r.(RatioRunner); ok {
		return rr.Ratios()
	}
	return nil
}

// Kind is what a column holds in each run; it decides how the column is printed and
// summarised across the replicates of a point.
type Kind uint8

// The kinds of column.
const (
	// KindBool is a yes/no outcome per run ("any validity overlap"), printed 0 or 1 and
	// summarised as the proportion of runs with 1 and its 95% Wilson interval.
	KindBool Kind = iota + 1
	// KindCount is a non-negative integer per run (attempts, violations), summarised by
	// its mean.
	KindCount
	// KindMillis is a duration in milliseconds per run (a latency percentile), summarised
	// by the median, 10th and 90th percentiles across replicates, because latencies are
	// skewed and a mean would hide that. It may be missing in a run (nothing to measure).
	KindMillis
	// KindFloat is any other number per run (a rate), summarised by its mean. It may be
	// missing in a run.
	KindFloat
	// KindText is opaque text per run (trace_hash), printed verbatim and not summarised.
	KindText
)

var kindNames = [...]string{KindBool: "bool", KindCount: "count", KindMillis: "millis",
	KindFloat: "float", KindText: "text"}

func (k Kind) valid() bool { return k >= KindBool && k <= KindText }

// String returns the kind's name as it appears in manifest.json.
func (k Kind) String() string {
	if !k.valid() {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// MarshalText writes the kind by name, so a manifest reads without a table of numbers.
func (k Kind) MarshalText() ([]byte, error) {
	if !k.valid() {
		return nil, fmt.Errorf("sweep: invalid column kind %d", k)
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind written by MarshalText.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if n != "" && n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	return fmt.Errorf("sweep: unknown column kind %q", b)
}

// Column is one metric of a run: its CSV name, with the unit in it where the kind does
// not carry one (latency_p99_ms, acquisitions_per_s), and its kind.
type Column struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
}

// Value is one metric of one run. The zero Value is missing: it prints as an empty field
// and is left out of the summary; only KindMillis, KindFloat and KindText columns accept it.
type Value struct {
	tag valueTag
	i   int64
	f   float64
	s   string
}

type valueTag uint8

const (
	tagMissing valueTag = iota
	tagInt
	tagFloat
	tagText
)

// BoolValue returns 1 for true and 0 for false, the value of a KindBool column.
func BoolValue(b bool) Value {
	if b {
		return Value{tag: tagInt, i: 1}
	}
	return Value{tag: tagInt}
}

// IntValue returns an integer value, for KindBool (0 or 1), KindCount, KindMillis and
// KindFloat columns.
func IntValue(n int64) Value { return Value{tag: tagInt, i: n} }

// FloatValue returns a float value, for KindMillis and KindFloat columns. It must be
// finite: a NaN or an infinity is reported as an error of the run.
func FloatValue(f float64) Value { return Value{tag: tagFloat, f: f} }

// StringValue returns a text value, for KindText columns. It must not contain a line break,
// so that every run is exactly one line of runs.csv, nor a NUL byte, which no text the
// tool writes holds and which a reader takes as a sign of a damaged file.
func StringValue(s string) Value { return Value{tag: tagText, s: s} }

// IsMissing reports whether v is the zero Value.
func (v Value) IsMissing() bool { return v.tag == tagMissing }

// String renders v as it would appear in a float or text column.
func (v Value) String() string {
	switch v.tag {
	case tagInt:
		return strconv.FormatInt(v.i, 10)
	case tagFloat:
		return formatFloat(v.f)
	case tagText:
		return v.s
	}
	return ""
}

// format renders v for a column of kind k, or says why it does not fit.
func (v Value) format(k Kind) (string, error) {
	switch k {
	case KindBool:
		if v.tag != tagInt || (v.i != 0 && v.i != 1) {
			return "", fmt.Errorf("want 0 or 1 (BoolValue), got %s", v.describe())
		}
		return strconv.FormatInt(v.i, 10), nil
	case KindCount:
		if v.tag != tagInt || v.i < 0 {
			return "", fmt.Errorf("want a non-negative integer (IntValue), got %s", v.describe())
		}
		return strconv.FormatInt(v.i, 10), nil
	case KindMillis, KindFloat:
		return v.formatNumber()
	case KindText:
		if v.tag != tagText && v.tag != tagMissing {
			return "", fmt.Errorf("want text (StringValue), got %s", v.describe())
		}
		if strings.ContainsAny(v.s, "\r\n") {
			return "", fmt.Errorf("text %q contains a line break", v.s)
		}
		if strings.IndexByte(v.s, 0) >= 0 {
			return "", fmt.Errorf("text %q contains a NUL byte", v.s)
		}
		return v.s, nil
	}
	return "", fmt.Errorf("invalid column kind %d", k)
}

func (v Value) formatNumber() (string, error) {
	switch v.tag {
	case tagMissing:
		return "", nil
	case tagInt:
		return formatFloat(float64(v.i)), nil
	case tagFloat:
		if math.IsNaN(v.f) || math.IsInf(v.f, 0) {
			return "", fmt.Errorf("want a finite number, got %v", v.f)
		}
		return formatFloat(v.f), nil
	}
	return "", fmt.Errorf("want a number, got %s", v.describe())
}

func (v Value) describe() string {
	switch v.tag {
	case tagInt:
		return "integer " + strconv.FormatInt(v.i, 10)
	case tagFloat:
		return "float " + formatFloat(v.f)
	case tagText:
		return fmt.Sprintf("text %q", v.s)
	}
	return "a missing value"
}

// formatFloat is the one way a float reaches runs.csv: the shortest decimal that reads
// back to the same float64, so a run's values are exact.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// SummaryDigits is the number of significant digits of every statistic in summary.csv.
// A mean or a quantile over replicates, or an interval, is not known to more than a few
// digits, and printing the float64's shortest form shows binary noise instead
// (3509.8614000000002, 0.07134759913335872); six digits keep every value a figure can
// show (1/7 reads 0.142857, 23.714285714285715 reads 23.7143) and a ratio per 10,000
// acquisitions keeps its fraction (4.98753). Counts (runs, _n) are integers and exact.
const SummaryDigits = 6

// FormatStat renders a summary statistic as summary.csv writes it: to SummaryDigits
// significant digits, without an exponent for everyday magnitudes ('g' switches to one
// below 1e-4 and from 1e6 on). A reader that computes a statistic again from runs.csv (the
// figures) compares it with the file's through FormatStat, digit for digit.
func FormatStat(f float64) string {
	s := strconv.FormatFloat(f, 'g', SummaryDigits, 64)
	if s == "-0" {
		return "0"
	}
	return s
}
