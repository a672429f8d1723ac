package tune

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
)

// The -rewrite flag regenerates testdata/library/*.golden. Another test file of the
// package may define it too, so it is defined only when missing and read by name.
func init() {
	if flag.Lookup("rewrite") == nil {
		flag.Bool("rewrite", false, "rewrite the golden files under testdata/ (then read the diff)")
	}
}

func rewriteGolden() bool {
	f := flag.Lookup("rewrite")
	return f != nil && f.Value.String() == "true"
}

// sampleRec is a recommendation of the shape Recommend gives for 3 clients over a 16ms
// one-way p99.9 (round trip 32ms), whose work needs extending.
func sampleRec() Recommendation {
	return Recommendation{TTL: 2300 * time.Millisecond, DriftFactor: 0.01, DriftPad: 2 * time.Millisecond,
		Timeout: 96 * time.Millisecond, RetryDelay: 130 * time.Millisecond, RetryJitter: 96 * time.Millisecond,
		Tries: 12, Extend: true, ExtendEvery: 766 * time.Millisecond, MaxExtensions: 4}
}

// plainRec needs no extension but fencing, has no jitter, and a per-node timeout above
// go-redis's 5s ReadTimeout: the other branch of every renderer.
func plainRec() Recommendation {
	return Recommendation{TTL: 40 * time.Second, DriftFactor: 0.02, DriftPad: 2 * time.Millisecond,
		Timeout: 6 * time.Second, RetryDelay: 1500 * time.Microsecond, RetryJitter: 0,
		Tries: 1, Fencing: true}
}

// samplesFor returns l's two sample recommendations: sampleRec and plainRec, or for a
// session lock sessionRec and fencedSessionRec (the second needs fencing, as plainRec).
func samplesFor(l Library) (Recommendation, Recommendation) {
	if l.Session {
		return sessionRec(), fencedSessionRec()
	}
	return sampleRec(), plainRec()
}

func knobNames() []string {
	var out []string
	for _, s := range (Recommendation{}).Knobs() {
		out = append(out, s.Name)
	}
	return out
}

// knobNamesFor is every knob a recommendation for l can set: Redlock's, or a session
// lock's (session.go), its optional ones included.
func knobNamesFor(l Library) []string {
	if !l.Session {
		return knobNames()
	}
	var out []string
	for _, s := range fencedSessionRec().Knobs() {
		out = append(out, s.Name)
	}
	return out
}

func mustLibrary(t *testing.T, profile string) Library {
	t.Helper()
	l, err := LibraryFor(profile)
	require.NoError(t, err)
	return l
}

func TestLibraryForEveryProfile(t *testing.T) {
	var want, got []string
	for _, p := range knobs.Profiles() {
		want = append(want, p.Name)
		l, err := LibraryFor(p.Name)
		require.NoError(t, err, "profile %s has no library", p.Name)
		assert.Equal(t, p.Name, l.Profile)
		assert.NotEmpty(t, l.Name)
		assert.NotEmpty(t, l.Language)
	}
	for _, l := range libraryTable() {
		got = append(got, l.Profile)
	}
	assert.Equal(t, want, got, "one library per profile, in the profiles' order, and none for a profile that does not exist")
}

func TestLibraryForUnknownProfile(t *testing.T) {
	_, err := LibraryFor("redsink")
	var ie *InputError
	require.True(t, errors.As(err, &ie), "an *InputError, which cmd prints and exits 2 on")
	assert.Equal(t, "--client", ie.Field)
	assert.Equal(t, "redsink", ie.Value)
	assert.Contains(t, ie.Problem, "redsync")
	assert.Contains(t, ie.Problem, "node-redlock-5")
	// The zero Library renders nothing and runs the recommendation as it is.
	assert.Empty(t, Library{}.Snippet(sampleRec()))
	assert.Equal(t, sampleRec(), Library{}.Effective(sampleRec()))
}

// Every library has exactly one rule for every knob of Recommendation.Knobs(), and each
// rule is complete for its access: an option to write, a value when fixed, a source.
func TestLibraryRulesCoverEveryKnob(t *testing.T) {
	for _, l := range libraryTable() {
		names := knobNamesFor(l)
		seen := map[string]bool{}
		for _, k := range l.Rules {
			assert.False(t, seen[k.Knob], "%s: two rules for %s", l.Profile, k.Knob)
			seen[k.Knob] = true
			assert.Contains(t, names, k.Knob, "%s: a rule for a knob the recommendation does not have", l.Profile)
			assert.NotEmpty(t, k.Why, "%s %s: why", l.Profile, k.Knob)
			assert.NotEmpty(t, k.Source, "%s %s: source", l.Profile, k.Knob)
			switch k.Access {
			case Settable, FactorOfTTL, Driver, AppCode:
				assert.NotEmpty(t, k.Option, "%s %s: option", l.Profile, k.Knob)
				assert.NotEmpty(t, k.Unit, "%s %s: unit", l.Profile, k.Knob)
			case Tied:
				assert.Contains(t, names, k.Tie, "%s %s: tied to a knob", l.Profile, k.Knob)
				assert.Equal(t, Settable, l.Rule(k.Tie).Access, "%s %s: tied to a settable knob", l.Profile, k.Knob)
			case Fixed:
				v, ok := k.FixedValue(sampleRec())
				assert.True(t, ok)
				_, err := knobs.Canonical(k.Knob, v)
				assert.NoError(t, err, "%s %s: fixed value %q is not a value of the knob", l.Profile, k.Knob, v)
				assert.Empty(t, k.Option, "%s %s: a fixed knob has no option", l.Profile, k.Knob)
			default:
				t.Errorf("%s %s: access %v", l.Profile, k.Knob, k.Access)
			}
		}
		for _, n := range names {
			assert.NotEqual(t, "unknown", l.Rule(n).Access.String(), "%s has no rule for %s", l.Profile, n)
		}
	}
	assert.Equal(t, "unknown", mustLibrary(t, "redsync").Rule("no_such_knob").Access.String())
}

// canonical is a knob value in the knobs package's canonical text, so that 1500ms and
// 1.5s compare equal.
func canonical(t *testing.T, knob, v string) string {
	t.Helper()
	c, err := knobs.Canonical(knob, v)
	require.NoError(t, err, "%s=%s", knob, v)
	return c
}

// The table agrees with the profiles: a rule's value when left alone (or fixed) is the
// value the profile simulates, so what tune says the library fixes is what the
// confirmation runs.
func TestLibraryDefaultsAreTheProfiles(t *testing.T) {
	for _, p := range knobs.Profiles() {
		l := mustLibrary(t, p.Name)
		sets := map[string]string{}
		for _, kv := range p.Sets {
			sets[kv.Name] = kv.Value
		}
		ttl, err := time.ParseDuration(sets["ttl"])
		require.NoError(t, err)
		for _, k := range l.Rules {
			want, ok := sets[k.Knob]
			if !ok { // a knob the profile leaves at the simulator's default
				def := knobs.DefaultConfig()
				want = def.Get(k.Knob)
			}
			if k.Knob == "timeout" && want == "0s" { // 0: timeout_factor × ttl
				f, err := strconv.ParseFloat(sets["timeout_factor"], 64)
				require.NoError(t, err)
				want = time.Duration(f * float64(ttl)).String()
			}
			got := k.Fixed
			if k.Access == Fixed {
				got, _ = k.FixedValue(Recommendation{TTL: ttl, Extend: true})
			}
			if k.Access == Tied {
				continue // the value of the knob it follows
			}
			assert.Equal(t, canonical(t, k.Knob, want), canonical(t, k.Knob, got), "%s %s", p.Name, k.Knob)
		}
	}
}

// sameKnob reports whether two knob values are the same value of knob.
func sameKnob(t *testing.T, knob, a, b string) bool {
	return canonical(t, knob, a) == canonical(t, knob, b)
}

// Effective runs every fixed knob at its fixed value: the renderers and the table agree.
func TestEffectiveKeepsFixedValues(t *testing.T) {
	for _, r := range []Recommendation{sampleRec(), plainRec()} {
		for _, l := range libraryTable() {
			eff := map[string]string{}
			for _, s := range l.Effective(r).Knobs() {
				eff[s.Name] = s.Value
			}
			for _, k := range l.Rules {
				if v, ok := k.FixedValue(r); ok {
					assert.True(t, sameKnob(t, k.Knob, v, eff[k.Knob]), "%s %s: fixed %s, runs %s", l.Profile, k.Knob, v, eff[k.Knob])
				}
			}
		}
	}
}

// The spec profile takes every knob as it is.
func TestSpecTakesEverything(t *testing.T) {
	l := mustLibrary(t, "spec")
	for _, k := range l.Rules {
		assert.Equal(t, Settable, k.Access, k.Knob)
	}
	for _, r := range []Recommendation{sampleRec(), plainRec()} {
		assert.Equal(t, r, l.Effective(r))
	}
	s := l.Snippet(sampleRec())
	assert.Contains(t, s, "NX PX 2300")
	assert.Contains(t, s, "uniform in [34ms, 226ms)")
	assert.Contains(t, s, "every 766ms, at most 4 times a hold")
}

func optionMap(opts []Option) map[string]Option {
	m := map[string]Option{}
	for _, o := range opts {
		m[o.Name] = o
	}
	return m
}

// TestRedsyncTimeoutOnlyWithContextTimeoutEnabled: without ContextTimeoutEnabled go-redis
// waits its own ReadTimeout whatever redsync's timeout factor says, so redsync's
// recommendation contains no per-node timeout unless ContextTimeoutEnabled is part of the
// snippet.
func TestRedsyncTimeoutOnlyWithContextTimeoutEnabled(t *testing.T) {
	l := mustLibrary(t, "redsync")
	for _, r := range []Recommendation{sampleRec(), plainRec(), {TTL: 10 * time.Second, Timeout: 5 * time.Millisecond, Tries: 3}} {
		s := l.Snippet(r)
		timeouts := strings.Count(s, "WithTimeoutFactor(") + strings.Count(s, "ReadTimeout:") + strings.Count(s, "context.WithTimeout(")
		require.Positive(t, timeouts, "the snippet sets the per-node timeout")
		assert.Contains(t, s, "ContextTimeoutEnabled: true,")
		opts := optionMap(l.Options(r))
		assert.Equal(t, "true", opts["goredislib.Options.ContextTimeoutEnabled"].Value)
		// The effective wait is what redsync computes from the factor written, never more
		// than the recommendation's, and less by at most 1 %.
		factor, err := strconv.ParseFloat(opts["redsync.WithTimeoutFactor"].Value, 64)
		require.NoError(t, err)
		eff := l.Effective(r).Timeout
		assert.Equal(t, time.Duration(int64(float64(r.TTL)*factor)), eff)
		assert.LessOrEqual(t, eff, r.Timeout)
		assert.GreaterOrEqual(t, float64(eff), 0.99*float64(r.Timeout))
	}
	// Above go-redis's 5s ReadTimeout the read would end first: the snippet raises it.
	s := l.Snippet(plainRec())
	assert.Contains(t, s, "ReadTimeout: 6 * time.Second,")
	assert.NotContains(t, l.Snippet(sampleRec()), "ReadTimeout:")
}

func TestRedsyncHasNoDriftPad(t *testing.T) {
	l := mustLibrary(t, "redsync")
	assert.Equal(t, Fixed, l.Rule("drift_pad").Access)
	for _, r := range []Recommendation{sampleRec(), plainRec()} {
		for _, o := range l.Options(r) {
			assert.NotContains(t, strings.ToLower(o.Name+o.Value+o.Note), "pad", "option %s", o.Name)
		}
		assert.NotContains(t, strings.ToLower(l.Snippet(r)), "pad")
		assert.Zero(t, l.Effective(r).DriftPad)
	}
}

// A retry delay ± jitter is rendered so that the wait is uniform in [delay − jitter,
// delay + jitter) where the library can say it, and as close as it can where not.
func TestRetryDistribution(t *testing.T) {
	r := sampleRec() // 130ms ± 96ms: [34ms, 226ms)
	rs := mustLibrary(t, "redsync")
	assert.Equal(t, "34 * time.Millisecond + rand.N(192 * time.Millisecond)", optionMap(rs.Options(r))["redsync.WithRetryDelayFunc"].Value)
	assert.Contains(t, rs.Snippet(r), "return 34*time.Millisecond + rand.N(192*time.Millisecond)")
	// Without jitter, a fixed delay.
	p := plainRec()
	assert.Equal(t, "1500 * time.Microsecond", optionMap(rs.Options(p))["redsync.WithRetryDelay"].Value)
	assert.NotContains(t, rs.Snippet(p), "math/rand")
	for _, name := range []string{"redsync", "node-redlock", "node-redlock-5", "spec"} {
		eff := mustLibrary(t, name).Effective(r)
		assert.Equal(t, [2]time.Duration{r.RetryDelay, r.RetryJitter}, [2]time.Duration{eff.RetryDelay, eff.RetryJitter}, name)
	}
	// RedLock.net waits uniformly in [0, retryDelayMs): the upper end is kept.
	net := mustLibrary(t, "redlock-net")
	assert.Equal(t, "226", optionMap(net.Options(r))["RedLockRetryConfiguration retryDelayMs"].Value)
	eff := net.Effective(r)
	assert.Equal(t, 113*time.Millisecond, eff.RetryDelay)
	assert.Equal(t, eff.RetryDelay, eff.RetryJitter)
	// Its floor: retryDelayMs below 10 throws.
	assert.Equal(t, "10", optionMap(net.Options(Recommendation{TTL: time.Second, RetryDelay: 2 * time.Millisecond, RetryJitter: time.Millisecond, Tries: 2}))["RedLockRetryConfiguration retryDelayMs"].Value)
	// redlock-py sleeps the delay every time.
	py := mustLibrary(t, "redlock-py")
	assert.Zero(t, py.Effective(r).RetryJitter)
	assert.Equal(t, "0.13", optionMap(py.Options(r))["retry_delay"].Value)
}

func TestNodeRedlockRetryCountIsTriesMinusOne(t *testing.T) {
	for _, profile := range []string{"node-redlock", "node-redlock-5"} {
		l := mustLibrary(t, profile)
		for _, tries := range []int{1, 2, 11, 32} {
			r := sampleRec()
			r.Tries = tries
			assert.Equal(t, strconv.Itoa(tries-1), optionMap(l.Options(r))["retryCount"].Value, "%s tries=%d", profile, tries)
			assert.Contains(t, l.Snippet(r), fmt.Sprintf("retryCount: %d, // %s in all", tries-1, attempts(tries)))
			assert.Equal(t, tries, l.Effective(r).Tries)
		}
		// Zero tries would be retryCount −1, which node-redlock takes as "retry forever".
		r := sampleRec()
		r.Tries = 0
		assert.Equal(t, "0", optionMap(l.Options(r))["retryCount"].Value)
	}
}

// Units: each library gets the ttl, timeout and delays in its own unit.
func TestLibraryUnits(t *testing.T) {
	r := sampleRec() // ttl 2.3s, timeout 96ms, delay 130ms
	cases := []struct {
		profile string
		want    []string // substrings of the snippet
	}{
		{"redsync", []string{"expiry        = 2300 * time.Millisecond", "timeoutFactor = 0.0417"}},
		{"node-redlock", []string{"const ttl = 2300; // ms", "commandTimeout: 96 }", "retryDelay: 130, // ms", "retryJitter: 96, // ms"}},
		{"node-redlock-5", []string{"const duration = 2300; // ms", "redlock.acquire([resource], duration)", "commandTimeout: 96 }"}},
		{"redlock-py", []string{"TTL_MS = 2300", `"socket_timeout": 0.096`, "retry_delay=0.13"}},
		{"redlock-net", []string{"TimeSpan.FromMilliseconds(2300)", "SyncTimeout = 96", "retryCount: 12"}},
		{"redisson", []string{"setLockWatchdogTimeout(2300)", "setTimeout(96)"}},
		{"redisson-redlock", []string{"setLockWatchdogTimeout(2300)", "new RedissonRedLock("}},
	}
	for _, c := range cases {
		s := mustLibrary(t, c.profile).Snippet(r)
		for _, w := range c.want {
			assert.Contains(t, s, w, c.profile)
		}
	}
	// Whole ms: 1.5ms rounds to 2 for the libraries that take ms.
	p := plainRec()
	assert.Equal(t, "2", optionMap(mustLibrary(t, "node-redlock").Options(p))["retryDelay"].Value)
	assert.Equal(t, 2*time.Millisecond, mustLibrary(t, "node-redlock").Effective(p).RetryDelay)
	assert.Contains(t, optionMap(mustLibrary(t, "node-redlock").Options(p))["retryDelay"].Note, "1.5ms rounded to whole ms")
}

// What a library fixes or does by itself, as the confirmation must run it.
func TestLibraryFixes(t *testing.T) {
	r, p := sampleRec(), plainRec()
	net := mustLibrary(t, "redlock-net")
	v, _ := net.Rule("extend_every").FixedValue(r)
	assert.Equal(t, "1.15s", v, "RedLock.net extends every expiry/2")
	assert.True(t, net.Effective(p).Extend, "RedLock.net extends whether or not the recommendation does")
	rd := mustLibrary(t, "redisson")
	v, _ = rd.Rule("extend_every").FixedValue(r)
	assert.Equal(t, "766ms", v, "the watchdog renews every lease/3")
	v, _ = rd.Rule("extend_every").FixedValue(p)
	assert.Equal(t, "0s", v, "lock(leaseTime, unit) has no watchdog")
	assert.Contains(t, rd.Snippet(p), "lock.lock(40000, TimeUnit.MILLISECONDS)")
	assert.NotContains(t, rd.Snippet(p), "setLockWatchdogTimeout")
	assert.Contains(t, rd.Snippet(r), "lock.lock();")
	py := mustLibrary(t, "redlock-py")
	assert.False(t, py.Effective(r).Extend, "redlock-py cannot extend")
	assert.Contains(t, py.Snippet(r), "redlock-py cannot extend a lock")
	assert.Equal(t, AppCode, mustLibrary(t, "redsync").Rule("extend_every").Access)
	assert.Contains(t, mustLibrary(t, "redsync").Snippet(r), "m.ExtendContext(ctx)")
	assert.NotContains(t, mustLibrary(t, "redsync").Snippet(p), "ExtendContext")
	for _, name := range []string{"node-redlock", "node-redlock-5", "redlock-py"} {
		_, fixed := mustLibrary(t, name).Rule("timeout").FixedValue(r)
		assert.False(t, fixed, "%s: the timeout is the Redis client's, not fixed", name)
		assert.Equal(t, Driver, mustLibrary(t, name).Rule("timeout").Access, name)
	}
	// Fencing is said in every snippet of a recommendation that relies on it, and only then.
	for _, l := range libraryTable() {
		r, p := samplesFor(l)
		assert.Contains(t, l.Snippet(p), "Fencing:", l.Profile)
		assert.NotContains(t, l.Snippet(r), "Fencing:", l.Profile)
	}
}

// Every option carries a name and a value, and a constant of the library is no option
// (RedLock.net's drift).
func TestOptionsHaveValues(t *testing.T) {
	for _, l := range libraryTable() {
		a, b := samplesFor(l)
		for _, r := range []Recommendation{a, b} {
			opts := l.Options(r)
			require.NotEmpty(t, opts, l.Profile)
			for _, o := range opts {
				assert.NotEmpty(t, o.Name, l.Profile)
				assert.NotEmpty(t, o.Value, "%s %s", l.Profile, o.Name)
			}
		}
	}
	for _, o := range mustLibrary(t, "redlock-net").Options(sampleRec()) {
		assert.NotContains(t, o.Name, "Drift", "RedLock.net's drift is a constant")
	}
}

func TestTimeoutFactor(t *testing.T) {
	for _, c := range []struct {
		timeout, ttl time.Duration
		factor       string
		wait         time.Duration
	}{
		{400 * time.Millisecond, 8 * time.Second, "0.05", 400 * time.Millisecond},
		{96 * time.Millisecond, 2300 * time.Millisecond, "0.0417", 95910 * time.Microsecond},
		{5 * time.Millisecond, time.Hour, "1.38e-06", 4968 * time.Microsecond},
		{6 * time.Second, 40 * time.Second, "0.15", 6 * time.Second},
	} {
		f, w := timeoutFactor(c.timeout, c.ttl)
		assert.Equal(t, c.factor, f, "%v / %v", c.timeout, c.ttl)
		assert.Equal(t, c.wait, w, "%v / %v", c.timeout, c.ttl)
	}
}

// The snippets are code the named tools accept: Go type-checks against the real redsync
// and go-redis (when the repository's go.mod has them, offline), JavaScript passes node
// --check, Python py_compile, Java javac against stubs of the Redisson signatures used
// (read from Redisson 3.43.0). C# has no compiler here: it is only in the golden file.
func TestSnippetsCompile(t *testing.T) {
	for i, r := range []Recommendation{sampleRec(), plainRec()} {
		for _, l := range libraryTable() {
			if l.Session {
				continue // against the real Curator jars: TestCuratorSnippetCompiles
			}
			code := l.Snippet(r)
			name := fmt.Sprintf("%s-%d", l.Profile, i)
			switch l.Language {
			case "go":
				checkGo(t, name, code)
			case "javascript":
				runChecker(t, "node", name+".js", code, "--check")
			case "python":
				runChecker(t, "python3", name+".py", code, "-m", "py_compile")
			case "java":
				checkJava(t, name, code)
			}
		}
	}
}

// runChecker writes code to file in a temporary directory and runs tool with args and
// the file, skipping when tool is not installed.
func runChecker(t *testing.T, tool, file, code string, args ...string) {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err != nil {
		t.Logf("%s not installed: %s not checked", tool, file)
		return
	}
	dir := t.TempDir()
	f := filepath.Join(dir, file)
	require.NoError(t, os.WriteFile(f, []byte(code), 0o644))
	cmd := exec.Command(path, append(args, f)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "%s rejects %s:\n%s\n%s", tool, file, out, code)
}

// moduleRequire returns the version of module the repository's go.mod requires, or "".
func moduleRequire(t *testing.T, module string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1]
		}
	}
	return ""
}

// checkGo parses the Go snippet, and type-checks it (go vet) in a temporary module
// requiring redsync and go-redis at the repository's versions, offline (GOPROXY=off:
// the module cache has them), when go.mod requires both and -short is not given.
func checkGo(t *testing.T, name, code string) {
	t.Helper()
	_, err := parser.ParseFile(token.NewFileSet(), name+".go", code, parser.ParseComments)
	require.NoError(t, err, "the Go snippet does not parse:\n%s", code)
	redsync, goredis := moduleRequire(t, "github.com/go-redsync/redsync/v4"), moduleRequire(t, "github.com/redis/go-redis/v9")
	goTool, lookErr := exec.LookPath("go")
	if testing.Short() || redsync == "" || goredis == "" || lookErr != nil {
		t.Logf("%s: parsed only", name)
		return
	}
	dir := t.TempDir()
	mod := fmt.Sprintf("module snippet\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/go-redsync/redsync/v4 %s\n\tgithub.com/redis/go-redis/v9 %s\n)\n", redsync, goredis)
	sum, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lock.go"), []byte(code), 0o644))
	cmd := exec.Command(goTool, "vet", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "the Go snippet does not type-check against redsync %s and go-redis %s:\n%s\n%s", redsync, goredis, out, code)
}

// redissonStubs are the Redisson 3.43.0 signatures the Java snippets use (config/Config,
// config/BaseConfig, config/SingleServerConfig, Redisson, api/RLock, api/RedissonClient,
// RedissonRedLock), with empty bodies: enough for javac to check the calls.
var redissonStubs = map[string]string{
	"org/redisson/config/BaseConfig.java": `package org.redisson.config;
public class BaseConfig<T extends BaseConfig<T>> {
    @SuppressWarnings("unchecked") public T setTimeout(int timeout) { return (T) this; }
}`,
	"org/redisson/config/SingleServerConfig.java": `package org.redisson.config;
public class SingleServerConfig extends BaseConfig<SingleServerConfig> {
    public SingleServerConfig setAddress(String address) { return this; }
}`,
	"org/redisson/config/Config.java": `package org.redisson.config;
public class Config {
    public SingleServerConfig useSingleServer() { return new SingleServerConfig(); }
    public Config setLockWatchdogTimeout(long lockWatchdogTimeout) { return this; }
}`,
	"org/redisson/api/RLock.java": `package org.redisson.api;
public interface RLock extends java.util.concurrent.locks.Lock {
    void lock(long leaseTime, java.util.concurrent.TimeUnit unit);
}`,
	"org/redisson/api/RedissonClient.java": `package org.redisson.api;
public interface RedissonClient { RLock getLock(String name); }`,
	"org/redisson/Redisson.java": `package org.redisson;
public class Redisson {
    public static org.redisson.api.RedissonClient create(org.redisson.config.Config config) { return null; }
}`,
	"org/redisson/RedissonRedLock.java": `package org.redisson;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.redisson.api.RLock;
public class RedissonRedLock implements RLock {
    public RedissonRedLock(RLock... locks) {}
    public void lock() {}
    public void lock(long leaseTime, TimeUnit unit) {}
    public void lockInterruptibly() {}
    public boolean tryLock() { return false; }
    public boolean tryLock(long time, TimeUnit unit) { return false; }
    public void unlock() {}
    public Condition newCondition() { return null; }
}`,
}

func checkJava(t *testing.T, name, code string) {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil || testing.Short() {
		t.Logf("%s: javac not run", name)
		return
	}
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "LockSettings.java")}
	require.NoError(t, os.WriteFile(files[0], []byte(code), 0o644))
	for path, src := range redissonStubs {
		f := filepath.Join(dir, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte(src), 0o644))
		files = append(files, f)
	}
	cmd := exec.Command(javac, append([]string{"-d", filepath.Join(dir, "out")}, files...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "javac rejects %s:\n%s\n%s", name, out, code)
}

// describe is a library's whole answer for r, as the golden files hold it: its rules,
// the options, the knobs it will run, and the snippet.
func describe(l Library, r Recommendation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "recommendation: %s\n\noptions:\n", joinSettings(r.Knobs()))
	for _, o := range l.Options(r) {
		fmt.Fprintf(&b, "  %s = %s", o.Name, o.Value)
		if o.Note != "" {
			fmt.Fprintf(&b, "  (%s)", o.Note)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nthe library runs: %s\n\nsnippet (%s):\n%s", joinSettings(l.Effective(r).Knobs()), l.Language, l.Snippet(r))
	return b.String()
}

func joinSettings(ss []Setting) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.Name + "=" + s.Value
	}
	return strings.Join(parts, " ")
}

func describeRules(l Library, r Recommendation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s (%s)\n# regenerate: go test ./experiments/tune -run TestLibraryGolden -rewrite\n\nrules:\n", l.Profile, l.Name, l.Language)
	for _, k := range l.Rules {
		switch k.Access {
		case Fixed:
			v, _ := k.FixedValue(r)
			fmt.Fprintf(&b, "  %s: fixed at %s", k.Knob, v)
		case Tied:
			fmt.Fprintf(&b, "  %s: tied to %s, by %s [%s]", k.Knob, k.Tie, k.Option, k.Unit)
		default:
			fmt.Fprintf(&b, "  %s: %s, %s [%s]", k.Knob, k.Access, k.Option, k.Unit)
		}
		fmt.Fprintf(&b, "\n    %s\n    source: %s\n", k.Why, k.Source)
	}
	return b.String()
}

// The golden files hold each profile's full answer for the two sample recommendations;
// read them when they change (go test ./experiments/tune -run TestLibraryGolden -rewrite).
func TestLibraryGolden(t *testing.T) {
	for _, l := range libraryTable() {
		t.Run(l.Profile, func(t *testing.T) {
			r, p := samplesFor(l)
			got := describeRules(l, r) + "\n== a recommendation that extends\n\n" + describe(l, r) +
				"\n== one that needs fencing, without jitter or extension\n\n" + describe(l, p)
			if l.Session {
				got = describeRules(l, r) + "\n== a session that covers the pauses\n\n" + describe(l, r) +
					"\n== one that needs fencing, on a shorter tick and a longer maximum session\n\n" + describe(l, p)
			}
			path := filepath.Join("testdata", "library", l.Profile+".golden")
			if rewriteGolden() {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "no golden file: run go test ./experiments/tune -run TestLibraryGolden -rewrite")
			assert.Equal(t, string(want), got, "%s changed: if intended, run go test ./experiments/tune -run TestLibraryGolden -rewrite and read the diff", path)
		})
	}
}

// TestHybridVerdictSaysItIsTwoLocks: tune for the hybrid lock confirms Redlock's settings
// by running the composite, sees the overlaps its escalations cause, and says why no ttl
// mends them instead of blaming the analytic estimates.
func TestHybridVerdictSaysItIsTwoLocks(t *testing.T) {
	in := DefaultInputs()
	in.Client, in.Duration, in.Seeds, in.MaxSeeds = "hybrid", 2*time.Minute, 2, 2
	p, err := Prepare(in)
	require.NoError(t, err)
	rep, err := p.Run(context.Background(), Options{Dir: t.TempDir(), Workers: 2})
	require.NoError(t, err)
	defer rep.Release()
	assert.Contains(t, rep.Verdict, "NOT met")
	assert.Contains(t, rep.Verdict, "the hybrid lock is two locks")
	assert.NotContains(t, rep.Verdict, "the simulation saw more than they expect")
}
