// Command redlock-sim is the command-line interface of the Redlock simulator. It parses,
// calls the experiments and plots packages, and prints; it holds no simulation logic.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/internal/suggest"
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
		{"scenarios", "list the scenarios with their stories, or print one's file", runScenarios},
		{"check", "run a scenario's expectations over its seeds (every built-in scenario by default)", runCheck},
		{"search", "find how the lock breaks under stated assumptions by swarm testing, and shrink each counterexample to a replayable story", runSearch},
		{"tune", "recommend ttl, drift, retries and timeout for an environment, with the arithmetic, checked by simulation", runTune},
		{"params", "list every knob with its unit, default and range, or show the knobs named in full", runParams},
		{"plot", "draw the figures of a sweep folder (safety and liveness per knob, heatmaps)", runPlot},
		{"serve", "step through runs in the browser: the classroom viewer on a local web server", runServe},
		{"bench", "measure simulator speed against a real Redis testbed", runBench},
		{"version", "print the version", runVersion},
	}
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: version takes no arguments, got %q", errUsage, fs.Args())
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
	fmt.Fprintln(w, "\n`redlock-sim <command> --help` shows a command's flags.")
}

// setUsage makes fs's --help print a usage line generated from fs's own flags (so that it
// can never leave one out), the command's one-sentence description from commands(), and
// the flags, in the order they were defined. args names the positional arguments, if any
// ("SHARD_DIR..."). Every command's FlagSet goes through it.
func setUsage(fs *flag.FlagSet, w io.Writer, args string) {
	fs.SortFlags = false
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintln(w, usageLine(fs, args))
		for _, c := range commands() {
			if c.name == fs.Name() {
				fmt.Fprintf(w, "\n%s%s.\n", strings.ToUpper(c.short[:1]), c.short[1:])
			}
		}
		if fs.HasFlags() {
			fmt.Fprintln(w, "\nflags:")
			fs.PrintDefaults()
		}
	}
}

// requiredFlag is the pflag annotation that marks a flag a command cannot do without, so
// that its usage line shows it without brackets.
const requiredFlag = "redlock-sim/required"

// usageLine is "usage: redlock-sim NAME [--flag VALUE] ... ARGS", one bracket per flag.
// A flag's value name is the back-quoted word of its usage text (pflag's convention: a
// usage "the `NAME` of ..." shows NAME), else a name guessed from its type.
func usageLine(fs *flag.FlagSet, args string) string {
	parts := []string{"usage: redlock-sim " + fs.Name()}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Hidden {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + "|" + name
		}
		value, _ := flag.UnquoteUsage(f)
		open, closing := "[", "]"
		if _, ok := f.Annotations[requiredFlag]; ok {
			open, closing = "", ""
		}
		switch value {
		case "":
			parts = append(parts, open+name+closing)
			return
		case "string":
			value = strings.ToUpper(f.Name)
		case "int", "uint", "int64", "uint64":
			value = "N"
		case "float", "float64":
			value = "X"
		case "duration":
			value = "DURATION"
		case "stringArray", "strings":
			value = "VALUE"
		}
		if strings.HasSuffix(f.Value.Type(), "Array") || strings.HasSuffix(f.Value.Type(), "Slice") {
			value += " ..."
		}
		parts = append(parts, open+name+" "+value+closing)
	})
	if args != "" {
		parts = append(parts, args)
	}
	return strings.Join(parts, " ")
}

// commandNames returns the names of the commands, for suggestions.
func commandNames() []string {
	var out []string
	for _, c := range commands() {
		out = append(out, c.name)
	}
	return out
}

// run executes the command line and returns the exit status. With no command it prints
// the usage to stderr and exits 2, as go does; asking for help is not an error.
func run(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		usage(stderr)
		return 2
	case len(args) >= 2 && args[0] == "help": // help run = run --help
		args = []string{args[1], "--help"}
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
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
	msg := fmt.Sprintf("redlock-sim: unknown command %q", args[0])
	if c := suggest.Closest(args[0], commandNames(), 1); len(c) == 1 {
		msg += "; did you mean " + c[0] + "?"
	}
	fmt.Fprintln(stderr, msg+"\n")
	usage(stderr)
	return 2
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
