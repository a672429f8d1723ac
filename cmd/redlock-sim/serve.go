package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
	"github.com/redlock-sim/redlock-sim/internal/viewer"
)

// runServe is `redlock-sim serve`: the classroom viewer on a local web server.
func runServe(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT` (loopback by default; port 0 picks a free one)")
	files := fs.StringArray("scenario-file", nil, "offer the scenario written in `FILE` beside the built-in ones (repeatable)")
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	}
	var scs []*scenarios.Scenario
	for _, f := range *files {
		sc, err := scenarios.LoadFile(f)
		if err != nil {
			return userError(err)
		}
		scs = append(scs, sc)
	}
	srv, err := viewer.New(scs)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %s: %v", errUsage, *addr, err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	return serve(ctx, ln, srv, stdout)
}

// serve serves the viewer on ln until ctx is done, then lets the runs in progress finish
// for a few seconds.
func serve(ctx context.Context, ln net.Listener, h http.Handler, stdout io.Writer) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/"
	fmt.Fprintf(stdout, "redlock-sim viewer: open %s#scenario=gc-pause\n", url)
	fmt.Fprintln(stdout, "(Ctrl-C stops it)")
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
