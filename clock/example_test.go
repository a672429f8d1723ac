package clock_test

import (
	"fmt"
	"time"

	"github.com/redlock-sim/redlock-sim/clock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// A clock running 100 ppm fast is stepped back one second at true time 5s, as an
// operator might. The wall reading jumps back; the monotonic reading does not, so a
// client timing its lock validity on it is unaffected, while a Redis node expiring keys
// on the wall clock now holds them a second too long.
func ExampleClock() {
	c, err := clock.New(clock.Config{
		DriftPPM: 100,
		Steps:    []clock.Step{{At: sim.Time(5 * time.Second), By: -time.Second}},
	}, nil)
	if err != nil {
		panic(err)
	}
	for _, at := range []time.Duration{0, 4 * time.Second, 5 * time.Second, 10 * time.Second} {
		t := sim.Time(at)
		fmt.Printf("true %-4v wall %-12v mono %v\n", t, c.Wall(t), c.Mono(t))
	}
	fmt.Println("a 10s timer armed at 0 fires at true", c.TimerFires(0, 10*time.Second))
	fmt.Println("wall reads 10s at true", c.WallReaches(0, 10*time.Second))
	// Output:
	// true 0s   wall 0s           mono 0s
	// true 4s   wall 4.0004s      mono 4.0004s
	// true 5s   wall 4.0005s      mono 5.0005s
	// true 10s  wall 9.001s       mono 10.001s
	// a 10s timer armed at 0 fires at true 9.9990001s
	// wall reads 10s at true 10.99890011s
}
