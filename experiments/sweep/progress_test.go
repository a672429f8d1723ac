package sweep

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLinesProgress(t *testing.T) {
	var out bytes.Buffer
	l := NewLines(&out, 10*time.Second)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	l.Begin(1000, 100) // resumed with 100 done
	for done := 101; done <= 400; done++ {
		now = now.Add(50 * time.Millisecond) // 20 runs/s
		l.Advance(done)
	}
	l.End()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// 300 runs over 15 s: one line at 10 s, and the last one.
	assert.Equal(t, []string{
		"sweep: 300/1000 runs (30.0%), 20.0 runs/s, elapsed 10s, left 35s",
		"sweep: 400/1000 runs (40.0%), 20.0 runs/s, elapsed 15s, left 30s",
	}, lines)
}

func TestBarProgress(t *testing.T) {
	var out bytes.Buffer
	b := NewBar(&out)
	b.Begin(12, 2)
	for done := 3; done <= 12; done++ {
		b.Advance(done)
	}
	b.End()
	s := out.String()
	assert.Contains(t, s, "sweep (2 of 12 already done)")
	assert.Contains(t, s, "10/10")
	assert.Contains(t, s, "runs/s")
}

func TestProgressFor(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	assert.NoError(t, err)
	defer f.Close()
	assert.False(t, IsTerminal(f))
	assert.IsType(t, nopProgress{}, ProgressFor(f, true))
	assert.IsType(t, &Lines{}, ProgressFor(f, false))
}

func TestBarWithNothingLeft(t *testing.T) {
	var out bytes.Buffer
	b := NewBar(&out)
	b.Begin(5, 5)
	b.End()
	assert.LessOrEqual(t, strings.Count(out.String(), "\n"), 1)
}
