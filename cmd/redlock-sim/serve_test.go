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

	"github.com/redlock-sim/redlock-sim/internal/viewer"
)

// TestServe: serve prints the URL to open, answers on it, and stops cleanly when told.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, err := viewer.New(nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer // read only after serve returned
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, srv, &out) }()
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
}

func TestServeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, "serve takes no arguments"},
		{[]string{"serve", "--addr", "nowhere"}, "--addr nowhere"},
		{[]string{"serve", "--scenario-file", "no-such-file.yaml"}, "no-such-file.yaml"},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, 2, run(c.args, &out, &errOut), strings.Join(c.args, " "))
		assert.Contains(t, errOut.String(), c.want, strings.Join(c.args, " "))
	}
}
