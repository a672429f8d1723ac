package knobs

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

func TestEveryKnobRoundTripsItsDefault(t *testing.T) {
	def := DefaultConfig()
	require.NoError(t, def.Validate())
	for _, p := range Params() {
		assert.NotEmpty(t, p.Unit, p.Name)
		assert.NotEmpty(t, p.Allowed, p.Name)
		assert.NotEmpty(t, p.Help, p.Name)
		c := DefaultConfig()
		require.NoError(t, c.Set(p.Name, p.Default), p.Name)
		assert.Equal(t, def, c, "setting %s to its default changes nothing", p.Name)
		assert.Equal(t, p.Default, c.Get(p.Name))
	}
}

func TestRegistryCoversTheAlgorithmAndTheIssue(t *testing.T) {
	names := KnobNames()
	for _, k := range redlock.Knobs() {
		assert.Contains(t, names, k, "redlock knob %s has no world knob", k)
	}
	for _, k := range []string{"nodes", "clients", "ttl", "drift_factor", "drift_pad", "retry_delay", "retry_jitter",
		"tries", "variant", "duration", "hold", "think", "client_clock_drift_ppm", "node_clock_drift_ppm",
		"latency", "loss", "persistence", "fencing", "mode", "fail_fast", "max_extensions", "resources",
		"service_time", "pause_rate", "pause_len", "client_clock_offset", "node_clock_offset", "replicas",
		"replication_delay", "failover_after", "extend_every", "stop_at_deadline"} {
		assert.Contains(t, names, k)
	}
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate knob %s", n)
		seen[n] = true
	}
}

func TestCanonicalText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ttl", "0.2s", "200ms"},
		{"ttl", "10000ms", "10s"},
		{"drift_factor", "1e-2", "0.01"},
		{"drift_factor", "400ppm", "0.0004"},
		{"drift_factor", "2.5%", "0.025"},
		{"nodes", " 7 ", "7"},
		{"fail_fast", "1", "true"},
		{"latency", "uniform(0.2ms, 0.8ms)", "uniform(200µs,800µs)"},
		{"latency", "1ms", "const(1ms)"},
		{"latency", "exp(0.1ms,0.5ms)", "exp(100µs,500µs)"},
		{"latency", "lognormal(1ms,0.5)", "lognormal(1ms,0.5)"},
		{"latency", "lognormal(1ms,0.5,100us)", "lognormal(1ms,0.5,100µs)"},
		{"latency", "tail(uniform(1ms,2ms),0.01,const(50ms))", "tail(uniform(1ms,2ms),0.01,const(50ms))"},
		{"hold", "constant(5s)", "const(5s)"},
		{"variant", "unsafe-release", "unsafe-release"},
		{"persistence", "aof-always", "aof-always"},
	}
	for _, tt := range tests {
		got, err := Canonical(tt.name, tt.in)
		require.NoError(t, err, "%s=%s", tt.name, tt.in)
		assert.Equal(t, tt.want, got, "%s=%s", tt.name, tt.in)
		again, err := Canonical(tt.name, got)
		require.NoError(t, err)
		assert.Equal(t, got, again, "canonical text is a fixed point")
	}
}

func TestBadValuesNameKnobValueAndRange(t *testing.T) {
	tests := []struct{ name, value, allowed string }{
		{"ttl", "10", "whole milliseconds"},
		{"ttl", "1.5ms", "whole milliseconds"},
		{"nodes", "100", "[1, 99]"},
		{"clients", "65", "[1, 64]"},
		{"drift_factor", "0.5", "[0, 0.5)"},
		{"loss", "-0.1", "[0, 1]"},
		{"duration", "0s", "[1ms,"},
		{"variant", "redlok", "one of redlock"},
		{"persistence", "always", "aof-always"},
		{"hold", "uniform(2ms,1ms)", "lo 2ms > hi 1ms"},
		{"latency", "gauss(1ms)", "tail(FAST,p,SLOW)"},
		{"node_clock_drift_ppm", "1e6", "[0, 100000]"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		err := c.Set(tt.name, tt.value)
		var pe *sim.ParamError
		require.ErrorAs(t, err, &pe, "%s=%s", tt.name, tt.value)
		assert.Contains(t, err.Error(), tt.name)
		assert.Contains(t, err.Error(), tt.value)
		assert.Contains(t, err.Error(), tt.allowed)
		assert.Equal(t, DefaultConfig(), c, "a failed Set leaves the config alone")
	}
}

func TestUnknownKnobSuggestsCloseMatches(t *testing.T) {
	tests := map[string]string{"tll": "ttl", "TTL": "ttl", "drift": "drift_factor", "retry_jiter": "retry_jitter",
		"node": "nodes", "clock_drift_ppm": "client_clock_drift_ppm", "persistance": "persistence"}
	for typo, want := range tests {
		c := DefaultConfig()
		err := c.Set(typo, "1")
		var ue *UnknownError
		require.True(t, errors.As(err, &ue), typo)
		assert.Contains(t, ue.Suggestions, want, typo)
		assert.LessOrEqual(t, len(ue.Suggestions), 3)
	}
	c := DefaultConfig()
	var ue *UnknownError
	require.ErrorAs(t, c.Set("zzzzzzzz", "1"), &ue)
	assert.Empty(t, ue.Suggestions)
}

func TestRatesAreBoundedOverTheRun(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Set("duration", "10000h"))
	require.NoError(t, c.Set("node_crash_rate", "10"))
	var pe *sim.ParamError
	require.ErrorAs(t, c.Validate(), &pe)
	assert.Equal(t, "node_crash_rate", pe.Param)
}

func TestDistSyntax(t *testing.T) {
	d, err := ParseDist("uniform(1ms,2ms)")
	require.NoError(t, err)
	assert.Equal(t, dist.Uniform(time.Millisecond, 2*time.Millisecond), d)
	for _, bad := range []string{"", "uniform(1ms", "uniform(1ms,)", "uniform(a,b)", "nope(1ms)", "const(1ms,2ms)", "lognormal(1ms,x)", "1ms)"} {
		_, err := ParseDist(bad)
		assert.Error(t, err, bad)
	}
	l, err := ParseLatency("tail(1ms, 0.5, exp(0s,10ms))")
	require.NoError(t, err)
	assert.Equal(t, network.Tail(dist.Constant(time.Millisecond), 0.5, dist.Exponential(0, 10*time.Millisecond)), l)
}

// TestEnumKnobsAllowedListsTable checks that every enum knob's allowed text lists exactly
// the values of its enum's table, so a new variant, mode, fencing scheme or persistence
// mode shows up in `redlock-sim params` and in error messages.
func TestEnumKnobsAllowedListsTable(t *testing.T) {
	tables := map[string][]string{
		"algorithm":      {"redlock", "redisson", "redisson-redlock", "curator", "hybrid"},
		"client":         {"spec", "redsync", "node-redlock", "node-redlock-5", "redlock-py", "redlock-py-redis8", "redlock-net", "redisson", "redisson-redlock", "hybrid", "curator"},
		"on_suspended":   {"carry-on", "stop"},
		"recipe":         {"curator", "naive"},
		"fence_token":    {"none", "czxid", "sequence"},
		"dialect":        enumNames(redlock.Dialects()),
		"connection":     {"queued", "drop", "offline-queue", "go-redis", "redis-py-8"},
		"validity_clock": {"monotonic", "wall"},
		"variant":        enumNames(redlock.Variants()),
		"mode":           enumNames(redlock.Modes()),
		"fencing":        enumNames(redlock.Fencings()),
		"persistence":    {redis.PersistNone.String(), redis.PersistAOFEverySec.String(), redis.PersistAOFAlways.String()},
	}
	seen := 0
	for _, p := range Params() {
		if p.Unit != "enum" {
			continue
		}
		seen++
		want, ok := tables[p.Name]
		require.True(t, ok, "enum knob %s has no table in this test", p.Name)
		got := strings.Split(strings.TrimPrefix(p.Allowed, enumPrefix), ", ")
		assert.Equal(t, want, got, p.Name)
		for _, v := range want {
			c := DefaultConfig()
			assert.NoError(t, c.Set(p.Name, v), "%s = %s", p.Name, v)
		}
	}
	assert.Equal(t, len(tables), seen)
}

// TestDistCap: max=d caps an exponential or a lognormal, reads back in the same spelling,
// and is refused where it makes no sense, in the words typed.
func TestDistCap(t *testing.T) {
	for text, want := range map[string]dist.Dist{
		"lognormal(1ms,2,max=3s)":     {Kind: dist.KindLognormal, Median: time.Millisecond, Sigma: 2, Cap: 3 * time.Second},
		"lognormal(1ms,2,5ms,max=3s)": {Kind: dist.KindLognormal, Median: time.Millisecond, Sigma: 2, Base: 5 * time.Millisecond, Cap: 3 * time.Second},
		"exp(0s,10ms,max=50ms)":       {Kind: dist.KindExponential, Mean: 10 * time.Millisecond, Cap: 50 * time.Millisecond},
	} {
		d, err := ParseDist(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, d, text)
		assert.Equal(t, text, FormatDist(d), "reads back as written")
	}
	for text, says := range map[string]string{
		"uniform(1ms,2ms,max=3ms)":     "uniform takes no max=",
		"const(1ms,max=3ms)":           "const takes no max=",
		"lognormal(1ms,2,max=3)":       "lognormal's max 3: a duration needs a unit",
		"lognormal(1ms,2,max=0s)":      "must be above 0",
		"lognormal(1ms,2,5ms,max=1ms)": "below its base 5ms",
		"exp(0s,10ms,max=48h)":         "exp's max 48h0m0s is above",
	} {
		_, err := ParseDist(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), says, text)
	}
}
