// Command baselinemillion runs the baseline scenario across seeds until at least a million
// acquisitions have been judged by the oracle, and fails if any run had a safety violation.
// It is the long check of the fault-free world; scripts/baseline-million runs it.
// Runs are independent, so they run in parallel, one per CPU; the verdict and the totals do
// not depend on the order they finish in.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments"
	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

func main() {
	target := flag.Int64("acquisitions", 1_000_000, "stop once this many acquisitions were judged")
	duration := flag.String("duration", "10m", "simulated length of each run")
	workers := flag.Int("workers", runtime.NumCPU(), "runs in parallel")
	flag.Parse()
	if err := check(*target, *duration, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "baseline-million:", err)
		os.Exit(1)
	}
}

type result struct {
	seed uint64
	rec  *experiments.Record
	err  error
}

func check(target int64, duration string, workers int) error {
	start := time.Now()
	knobs := []knobs.KV{{Name: "duration", Value: duration}}
	seeds := make(chan uint64)
	results := make(chan result)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				rec, err := experiments.Run(ctx, "baseline", knobs, seed, experiments.Options{})
				results <- result{seed, rec, err}
			}
		}()
	}
	go func() {
		defer close(seeds)
		for seed := uint64(1); ; seed++ {
			select {
			case seeds <- seed:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	var acquired, attempts, events int64
	var runs int
	var unsafe []string
	for r := range results {
		if r.err != nil {
			if ctx.Err() != nil {
				continue // a run cut short once the target was reached
			}
			cancel()
			return fmt.Errorf("seed %d: %w", r.seed, r.err)
		}
		if ctx.Err() != nil {
			continue
		}
		runs++
		acquired += r.rec.Liveness.Acquired
		attempts += r.rec.Liveness.Attempts
		events += int64(r.rec.Events)
		if !r.rec.Safety.Safe() {
			unsafe = append(unsafe, fmt.Sprintf("seed %d: %+v", r.seed, r.rec.Safety))
		}
		if runs%50 == 0 {
			fmt.Printf("%d runs, %d acquisitions, %.0fs\n", runs, acquired, time.Since(start).Seconds())
		}
		if acquired >= target {
			cancel()
		}
	}
	wall := time.Since(start)
	fmt.Printf("baseline: %d runs of %s, %d acquisitions, %d attempts, %d events in %.1fs (%.0f events/s, %d workers)\n",
		runs, duration, acquired, attempts, events, wall.Seconds(), float64(events)/wall.Seconds(), workers)
	if len(unsafe) > 0 {
		return fmt.Errorf("%d unsafe runs: %v", len(unsafe), unsafe)
	}
	if acquired < target {
		return fmt.Errorf("only %d acquisitions", acquired)
	}
	fmt.Println("no safety violation")
	return nil
}
