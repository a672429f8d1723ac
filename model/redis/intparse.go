package redis

import (
	"math"
	"strconv"
	"strings"
)

// parseInt parses s as Redis's string2ll does, which is stricter than strconv: no sign
// other than a leading '-', no leading zeros, no spaces, no "-0", fewer than 21 bytes.
// Every integer argument (PX, PEXPIRE, EVAL numkeys) and every INCR operand goes through
// it, so "PX 0100" and INCR of " 1" fail exactly as they do on a real server.
func parseInt(s string) (int64, bool) {
	const longStrSize = 21
	if len(s) == 0 || len(s) >= longStrSize {
		return 0, false
	}
	if s == "0" {
		return 0, true
	}
	neg := false
	p := s
	if p[0] == '-' {
		neg = true
		p = p[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > math.MaxUint64/10 {
			return 0, false
		}
		v *= 10
		d := uint64(c - '0')
		if v > math.MaxUint64-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > uint64(math.MaxInt64)+1 {
			return 0, false
		}
		return int64(-v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// formatInt renders n as Redis stores an INCR result.
func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

// cstr returns s up to its first NUL byte: Redis matches options with strcasecmp and
// prints arguments with %s, both of which stop there.
func cstr(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// sanitize replaces CR and LF with spaces, as Redis does to every error it formats from
// user input, so that the reply stays one protocol line.
func sanitize(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}
