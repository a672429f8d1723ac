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
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/redlock-sim/redlock-sim/cmd/redlock-sim/viewer"
	"github.com/redlock-sim/redlock-sim/experiments/scenarios"
)

// maxServeRuns bounds --max-runs: each run at once may hold about 100 MB.
const maxServeRuns = 64

// runServe is `redlock-sim serve`: the classroom viewer on a local web server.
func runServe(args []string, stdout, stderr io.Writer) error {
	def := viewer.DefaultOptions()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT` (loopback by default; port 0 picks a free one)")
	files := fs.StringArray("scenario-file", nil, "offer the scenario written in `FILE` beside the built-in ones (repeatable)")
	maxRuns := fs.Int("max-runs", def.MaxRuns, fmt.Sprintf("simulate at most `N` runs at once (%d more wait; past them the server answers 503)", def.MaxQueue))
	deadline := fs.Duration("run-deadline", def.RunDeadline, "cut a run that takes longer than `D` of real time (it is answered 504)")
	setUsage(fs, stderr, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	case *maxRuns < 1 || *maxRuns > maxServeRuns:
		return fmt.Errorf("%w: --max-runs %d: want a whole number from 1 to %d", errUsage, *maxRuns, maxServeRuns)
	case *deadline <= 0:
		return fmt.Errorf("%w: --run-deadline %v: want a duration above 0s, e.g. 30s", errUsage, *deadline)
	}
	var scs []*scenarios.Scenario
	for _, f := range *files {
		sc, err := scenarios.LoadFile(f)
		if err != nil {
			return userError(err)
		}
		scs = append(scs, sc)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %s: %v", errUsage, *addr, err)
	}
	defer ln.Close()
	opts := def
	opts.MaxRuns, opts.RunDeadline = *maxRuns, *deadline
	opts.Addr, opts.Hosts = ln.Addr().String(), listenHosts(*addr, ln.Addr(), interfaceIPs())
	srv, err := viewer.NewWithOptions(scs, opts)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	return serve(ctx, ln, srv, interfaceIPs(), stdout, stderr)
}

// interfaceIPs returns the addresses of the machine's network interfaces, or none when
// they cannot be read.
func interfaceIPs() []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var ips []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			ips = append(ips, n.IP)
		}
	}
	return ips
}

// listenHosts returns the names a request's Host header may use besides loopback's: the
// host given to --addr (a name resolves to the address listened on, but a browser sends
// the name), and every address of the machine when the server listens on all of them.
func listenHosts(flagAddr string, addr net.Addr, ifaces []net.IP) []string {
	var hosts []string
	if h, _, err := net.SplitHostPort(flagAddr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if ip := addrIP(addr); ip == nil || ip.IsUnspecified() {
		for _, ip := range ifaces {
			hosts = append(hosts, ip.String())
		}
	}
	return hosts
}

// addrIP returns the IP of a listener's address, nil when it has none.
func addrIP(addr net.Addr) net.IP {
	if a, ok := addr.(*net.TCPAddr); ok {
		return a.IP
	}
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return nil
	}
	return net.ParseIP(host)
}

// announce returns the URLs at which the viewer listening on addr can be opened, the one
// to print first, and a warning when other machines can reach it: the URLs carry the real
// address (of each of the machine's interfaces when it listens on all of them), since a
// student on another machine cannot open localhost.
func announce(addr net.Addr, ifaces []net.IP, opts viewer.Options) (urls []string, warning string) {
	_, port, _ := net.SplitHostPort(addr.String())
	url := func(ip net.IP) string { return "http://" + net.JoinHostPort(ip.String(), port) + "/" }
	ip := addrIP(addr)
	switch {
	case ip == nil:
		return []string{"http://" + addr.String() + "/"}, ""
	case ip.IsLoopback():
		return []string{url(ip)}, ""
	case !ip.IsUnspecified():
		urls = []string{url(ip)}
	default:
		var local []string
		for _, a := range ifaces {
			if a.IsLoopback() {
				local = append(local, url(a))
			} else if a.IsGlobalUnicast() {
				urls = append(urls, url(a))
			}
		}
		urls = append(urls, local...)
		if len(urls) == 0 {
			urls = []string{url(net.IPv4(127, 0, 0, 1))}
		}
	}
	warning = fmt.Sprintf("warning: serve listens on %s, which other machines can reach: anyone who can connect "+
		"to it can run simulations on this machine (up to %d at once, each up to %v of real time) and read every "+
		"scenario it offers, your --scenario-file files included. To keep it to this machine, leave --addr "+
		"at its default, 127.0.0.1:%s.", addr, opts.MaxRuns, opts.RunDeadline, port)
	return urls, warning
}

// serve serves the viewer on ln until ctx is done, then lets the runs in progress finish
// for a few seconds.
func serve(ctx context.Context, ln net.Listener, srv *viewer.Server, ifaces []net.IP, stdout, stderr io.Writer) error {
	hs := srv.HTTPServer()
	urls, warning := announce(ln.Addr(), ifaces, srv.Options())
	fmt.Fprintf(stdout, "redlock-sim viewer: open %s#scenario=gc-pause\n", urls[0])
	if len(urls) > 1 {
		fmt.Fprintf(stdout, "(also at %s)\n", strings.Join(urls[1:], ", "))
	}
	fmt.Fprintln(stdout, "(Ctrl-C stops it)")
	if warning != "" {
		fmt.Fprintln(stderr, warning)
	}
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
