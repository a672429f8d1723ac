package clock_test

import (
	"testing"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

type namedClock struct {
	name string
	c    *clock.Clock
}

// benchClocks are the shapes a run uses: most clocks are ideal or merely drifting; a
// faulty one has a few dozen steps and slews; noise adds one hash per wall reading.
func benchClocks(b *testing.B) []namedClock {
	busy := clock.Config{DriftPPM: -37.5, Offset: time.Millisecond}
	for i := range 32 {
		at := sim.Time(i) * sim.Time(time.Minute)
		busy.Steps = append(busy.Steps, clock.Step{At: at + sim.Time(time.Second), By: time.Duration(i%3-1) * time.Millisecond})
		busy.Slews = append(busy.Slews, clock.Slew{At: at, By: time.Duration(i%5-2) * time.Millisecond})
	}
	noisy := busy
	noisy.Noise = 50 * time.Microsecond
	return []namedClock{
		{"ideal", mustNew(b, clock.Config{}, 1)},
		{"drift", mustNew(b, clock.Config{DriftPPM: 100}, 1)},
		{"k=32", mustNew(b, busy, 1)},
		{"k=32+noise", mustNew(b, noisy, 1)},
	}
}

// at spreads benchmark readings over the first half hour, across the steps and slews.
func at(i int) sim.Time { return sim.Time(i%1800) * sim.Time(time.Second) }

var sinkD time.Duration
var sinkT sim.Time

func BenchmarkWall(b *testing.B) {
	for _, nc := range benchClocks(b) {
		c := nc.c
		b.Run(nc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkD = c.Wall(at(i))
			}
		})
	}
}

func BenchmarkMono(b *testing.B) {
	for _, nc := range benchClocks(b)[:3] {
		c := nc.c
		b.Run(nc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkD = c.Mono(at(i))
			}
		})
	}
}

func BenchmarkTimerFires(b *testing.B) {
	for _, nc := range benchClocks(b)[:3] {
		c := nc.c
		b.Run(nc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkT = c.TimerFires(at(i), 10*time.Second)
			}
		})
	}
}

func BenchmarkWallReaches(b *testing.B) {
	for _, nc := range benchClocks(b)[:3] {
		c := nc.c
		b.Run(nc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				sinkT = c.WallReaches(at(i), c.Wall(at(i))+10*time.Second)
			}
		})
	}
}
