// Command redlock-sim is the command-line interface of the Redlock simulator. It parses,
// calls the experiments and plots packages, and prints; it holds no simulation logic.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	flag "github.com/spf13/pflag"
)

// errUsage marks errors that are the user's to fix; they exit with status 2.
var errUsage = errors.New("usage")

// command is one subcommand.
type command struct {
	name  string
	short string
	run   func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"sweep", "run a parameter sweep (the default study without --spec)", runSweep},
		{"merge", "join the shard folders of a sharded sweep", runMerge},
		{"run", "run one scenario and report safety and liveness", runRun},
		{"scenarios", "list the scenarios with their stories", runScenarios},
		{"params", "list every knob with its unit, default and range", runParams},
		{"plot", "draw the figures of a sweep folder (safety and liveness per knob, heatmaps)", runPlot},
		{"bench", "measure simulator speed against a real Redis testbed", runBench},
		{"version", "print the version", runVersion},
	}
}

func runVersion(args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	fmt.Fprintln(stdout, "redlock-sim", version())
	return nil
}

// version returns the module version and VCS revision when the binary carries them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "redlock-sim: a deterministic simulator of the Redlock distributed lock")
	fmt.Fprintln(w, "\nusage: redlock-sim <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.short)
	}
}

// run executes the command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp): // --help printed the usage: not an error
			return 0
		case errors.Is(err, errInterrupted): // stopped by a signal, resumable
			fmt.Fprintln(stderr, "redlock-sim:", err)
			return 130
		case errors.Is(err, errUsage):
			fmt.Fprintln(stderr, "redlock-sim:", err)
			return 2
		default:
			fmt.Fprintln(stderr, "redlock-sim:", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "redlock-sim: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
