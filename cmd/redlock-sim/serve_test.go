package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/cmd/redlock-sim/viewer"
)

// TestServe: serve prints the URL to open, answers on it, and stops cleanly when told; on
// loopback it warns of nothing.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := viewer.NewWithOptions(nil, viewer.Options{Addr: ln.Addr().String()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer // read only after serve returned
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, srv, nil, &out, &errOut) }()
	url := "http://" + ln.Addr().String() + "/"
	res, err := http.Get(url + "api/run?scenario=clock-jump")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, 200, res.StatusCode)
	assert.Contains(t, string(body), `"lock_verdict":"UNSAFE`)
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "open "+url+"#scenario=gc-pause")
	assert.Empty(t, errOut.String())
}

// TestAnnounce: on loopback serve prints its own address and no warning; on an address
// other machines can reach it prints the real address (each of the machine's for an
// address that means all of them), never localhost, and warns what anyone can do.
func TestAnnounce(t *testing.T) {
	opts := viewer.DefaultOptions()
	lan, lan6 := net.ParseIP("192.168.1.5"), net.ParseIP("2001:db8::5")
	ifaces := []net.IP{net.ParseIP("127.0.0.1"), lan, net.ParseIP("::1"), lan6, net.ParseIP("fe80::1")}
	for _, c := range []struct {
		addr string
		urls []string
		warn bool
	}{
		{"127.0.0.1:8080", []string{"http://127.0.0.1:8080/"}, false},
		{"[::1]:8080", []string{"http://[::1]:8080/"}, false},
		{"0.0.0.0:8080", []string{"http://192.168.1.5:8080/", "http://[2001:db8::5]:8080/", "http://127.0.0.1:8080/", "http://[::1]:8080/"}, true},
		{"[::]:8080", []string{"http://192.168.1.5:8080/", "http://[2001:db8::5]:8080/", "http://127.0.0.1:8080/", "http://[::1]:8080/"}, true},
		{"192.168.1.5:8080", []string{"http://192.168.1.5:8080/"}, true},
	} {
		addr, err := net.ResolveTCPAddr("tcp", c.addr)
		require.NoError(t, err)
		urls, warning := announce(addr, ifaces, opts)
		assert.Equal(t, c.urls, urls, c.addr)
		if !c.warn {
			assert.Empty(t, warning, c.addr)
			continue
		}
		for _, want := range []string{"warning: serve listens on " + addr.String(), "other machines can reach",
			"anyone who can connect", "run simulations", "up to 2 at once", "read every scenario", "--scenario-file",
			"127.0.0.1:8080"} {
			assert.Contains(t, warning, want, c.addr)
		}
	}
	// Listening on every address with none but loopback's known: the loopback URL.
	urls, warning := announce(&net.TCPAddr{IP: net.IPv4zero, Port: 9}, nil, opts)
	assert.Equal(t, []string{"http://127.0.0.1:9/"}, urls)
	assert.NotEmpty(t, warning)
}

// addrListener is a loopback listener that says it listens elsewhere: serve's words for an
// address other machines reach, without opening one in a test.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

// TestServeWarnsOffLoopback: serve on every address prints the warning on stderr, not
// localhost, and answers a request for one of the machine's addresses.
func TestServeWarnsOffLoopback(t *testing.T) {
	lo, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := addrListener{lo, &net.TCPAddr{IP: net.IPv4zero, Port: lo.Addr().(*net.TCPAddr).Port}}
	ifaces := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("192.0.2.7")} // the second is the documentation range
	opts := viewer.Options{Addr: ln.Addr().String(), Hosts: listenHosts("0.0.0.0:0", ln.Addr(), ifaces)}
	srv, err := viewer.NewWithOptions(nil, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, srv, ifaces, &out, &errOut) }()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	require.NoError(t, err)
	get := func(host string) int {
		req, err := http.NewRequest("GET", "http://127.0.0.1:"+port+"/api/scenarios", nil)
		require.NoError(t, err)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	assert.Equal(t, 200, get("192.0.2.7:"+port), "one of the machine's addresses")
	assert.Equal(t, 200, get("localhost:"+port))
	assert.Equal(t, 403, get("evil.example.com:"+port))
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "open http://192.0.2.7:"+port+"/#scenario=gc-pause")
	assert.NotContains(t, out.String(), "localhost")
	assert.Contains(t, errOut.String(), "warning: serve listens on 0.0.0.0:"+port)
}

// TestListenHosts: the host typed in --addr is accepted in Host headers; listening on
// every address accepts each of the machine's.
func TestListenHosts(t *testing.T) {
	ifaces := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("192.0.2.7")}
	assert.Equal(t, []string{"myhost.lan"}, listenHosts("myhost.lan:8080", &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8080}, ifaces))
	assert.Equal(t, []string{"127.0.0.1", "192.0.2.7"}, listenHosts(":8080", &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, ifaces))
	assert.Equal(t, []string{"0.0.0.0", "127.0.0.1", "192.0.2.7"}, listenHosts("0.0.0.0:8080", &net.TCPAddr{IP: net.IPv4zero, Port: 8080}, ifaces))
}

func TestServeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, "serve takes no arguments"},
		{[]string{"serve", "--addr", "nowhere"}, "--addr nowhere"},
		{[]string{"serve", "--scenario-file", "no-such-file.yaml"}, "no-such-file.yaml"},
		{[]string{"serve", "--max-runs", "0"}, "--max-runs 0: want a whole number from 1 to 64"},
		{[]string{"serve", "--run-deadline", "-1s"}, "--run-deadline -1s: want a duration above 0s"},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errOut), strings.Join(c.args, " "))
		assert.Contains(t, errOut.String(), c.want, strings.Join(c.args, " "))
	}
}
