package knobs

import (
	"fmt"

	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/redlock"
	"github.com/redlock-sim/redlock-sim/sim"
)

// InertError reports a knob a user set that cannot change the run, because another knob
// switches off what it tunes: a value that would silently give the same trace hash as
// not setting it. It unwraps to a *sim.ParamError, so the command line exits 2.
type InertError struct {
	Knob  string
	Value string
	Why   string // what the knob tunes and which knob switches it off
	Hint  string // what to set instead, or ""
}

func (e *InertError) Error() string {
	msg := fmt.Sprintf("%s = %s cannot change this run: %s", e.Knob, quoteValue(e.Value), e.Why)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Unwrap returns the complaint as a *sim.ParamError.
func (e *InertError) Unwrap() error {
	return &sim.ParamError{Param: e.Knob, Value: e.Value, Allowed: e.Why}
}

// Inert returns why the knob called name cannot change a run of c ("" when it can): the
// knob tunes something another knob leaves out of the run (random pauses at pause_rate 0,
// replication without replicas, retries with one try, ...).
func (c *Config) Inert(name string) string {
	rate := func(what, rateKnob string) string {
		return what + ", and " + rateKnob + " is 0: the run draws none (set " + rateKnob + " too)"
	}
	if why := c.zkInert(name); why != "" {
		return why
	}
	if why := c.hybridInert(name); why != "" {
		return why
	}
	for _, r := range RandomNodeFaults() {
		if name == r.Len && r.RateOf(c) == 0 {
			return rate("it is "+r.LenIs, r.Rate)
		}
	}
	lock := c.Lock.Effective()
	switch name {
	case "nodes":
		if a, err := LookupAlgorithm(c.Algorithm); err == nil && a.Masters > 0 {
			return fmt.Sprintf("it is N, the masters Redlock addresses, and algorithm %s locks on %d whatever nodes says", a.Name, a.Masters)
		}
		if c.Lock.Variant.SingleInstance() && (c.Algorithm == "redlock" || c.Algorithm == hybridAlgorithm.Name) {
			return fmt.Sprintf("it is N, the masters Redlock addresses, and variant %s talks to one node whatever nodes says (replicas adds servers behind it)", c.Lock.Variant)
		}
	case "pause_len":
		if c.PauseRate == 0 {
			return rate("it is the length of random pauses", "pause_rate")
		}
	case "partition_len":
		if c.PartitionRate == 0 {
			return rate("it is the length of random isolations", "partition_rate")
		}
	case "clog_len":
		if c.ClogRate == 0 {
			return rate("it is the length of random clogs", "clog_rate")
		}
	case "client_down":
		if c.ClientCrashRate == 0 {
			return rate("it is how long a randomly crashed client stays down", "client_crash_rate")
		}
	case "node_clock_jump":
		if c.NodeJumpRate == 0 {
			return rate("it is the size of random wall-clock jumps", "node_clock_jump_rate")
		}
	case "replication_delay", "replication_jitter", "failover_after":
		if c.EffectiveReplicas() == 0 {
			return "it tunes replication and failover, and there are no replicas (replicas = 0; set replicas too)"
		}
	case "retry_delay", "retry_jitter":
		if lock.Tries == 1 {
			return "it is the pause between tries, and tries is 1: an acquire never retries"
		}
	case "context_factor":
		if c.Connection != redis.ConnGoRedis {
			return fmt.Sprintf("it is the deadline the driver reads between its retries, and connection = %v has no retries that read one", c.Connection)
		}
	case "timeout_factor":
		if lock.Timeout != 0 {
			return fmt.Sprintf("it sets the reply timeout as a fraction of ttl, and timeout = %v replaces it", lock.Timeout)
		}
	case "max_extensions", "set_nx_on_extend":
		if c.ExtendEvery == 0 {
			return "it tunes extensions, and clients never extend (extend_every = 0)"
		}
		if name == "max_extensions" && lock.Variant == redlock.VariantUnlimitedExtension {
			return "variant unlimited-extension ignores the limit"
		}
	}
	return ""
}
