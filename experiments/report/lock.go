package report

import (
	"strconv"
	"strings"
	"time"

	"github.com/redlock-sim/redlock-sim/experiments/knobs"
	"github.com/redlock-sim/redlock-sim/experiments/world"
	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/redlock/lock"
)

// LockSettings says what governs the lock of a run, for a figure's title and the viewer's
// header: a Redis lock lives by its TTL, a ZooKeeper lock by its holder's session, and a
// reader of a ZooKeeper run shown "TTL 10s" would be told about a knob the lock never reads.
type LockSettings struct {
	Algorithm string `json:"algorithm"`
	// Service is the lock service's name when it is not Redis ("zookeeper"); "" for Redis.
	Service string `json:"service,omitempty"`
	// Lease is how long a lock outlives a holder that went silent: the TTL of a Redis lock,
	// the session timeout the ensemble negotiated for a ZooKeeper one. A figure's first
	// window is reckoned in it.
	Lease time.Duration `json:"lease_ns"`
	// Settings are, for another service's lock, the settings that govern it in words
	// ("session 3s", "on_suspended carry-on", "zk_tick_time 1s"); none for a Redis lock,
	// whose title names its TTL.
	Settings []string `json:"settings,omitempty"`
	// Tokens says how the lock's fencing tokens read: "zxid" for a ZooKeeper node's czxid
	// (0x100000004: epoch 1, counter 4), "" for whole numbers.
	Tokens string `json:"tokens,omitempty"`
}

// TokenZxid is LockSettings.Tokens for tokens that are ZooKeeper zxids.
const TokenZxid = "zxid"

// Token renders fencing token t as the lock's tokens read: a zxid in hexadecimal, as
// ZooKeeper's logs and zkCli print it, or a whole number.
func (s *LockSettings) Token(t int64) string {
	if s.Tokens == TokenZxid {
		return Zxid(t)
	}
	return strconv.FormatInt(t, 10)
}

// Zxid renders a ZooKeeper zxid (epoch << 32 | counter) as ZooKeeper prints it: 0x100000004.
func Zxid(z int64) string { return "0x" + strconv.FormatUint(uint64(z), 16) }

// lockSettings reads what governs w's lock from its knobs. For a service other than
// Redis it names the knobs of the service's group (knobs.Param.Group) that can change the
// run (knobs.Config.Inert says which cannot): the session the lock lives by, as the
// ensemble negotiated it; each choice the application makes (an enum knob: on_suspended,
// recipe, the fencing token); and every other knob of the group set away from its default.
func lockSettings(w *world.World) LockSettings {
	cfg := &w.Config
	s := LockSettings{Algorithm: cfg.Algorithm, Lease: cfg.Lock.TTL}
	svc := w.Algorithm.Service
	if svc == nil {
		return s
	}
	s.Service = svc.Name
	if svc.Name != "zookeeper" {
		return s
	}
	cc := cfg.CuratorConfig()
	s.Lease = cc.SessionTimeout
	if len(w.Groups) > 0 { // Redis masters beside the ensemble (the hybrid lock): its keys live by the TTL
		s.Settings = append(s.Settings, "TTL "+cfg.Lock.TTL.String())
		s.Lease = max(s.Lease, cfg.Lock.TTL)
	}
	session := "session " + cc.SessionTimeout.String()
	if cc.SessionTimeout != cfg.ZK.SessionTimeout {
		session += " (asked " + cfg.ZK.SessionTimeout.String() + ", the ensemble's bounds)"
	}
	s.Settings = append(s.Settings, session)
	for _, p := range knobs.Params() {
		if p.Group != svc.Name || p.Name == "session_timeout" || cfg.Inert(p.Name) != "" {
			continue
		}
		v := cfg.Get(p.Name)
		if p.Unit == "enum" || v != p.Default {
			s.Settings = append(s.Settings, p.Name+" "+v)
		}
	}
	// A sequence number reads as the whole number it is; so does every token of the
	// hybrid lock, whose Redis tokens are counters.
	if cfg.Get("fence_token") == "czxid" && len(w.Groups) == 0 {
		s.Tokens = TokenZxid
	}
	return s
}

// messageText is model.MessageText, with a fenced write's token as the lock's tokens read
// (a czxid in hexadecimal).
func messageText(m *model.Message, proto lock.Protocol, s *LockSettings) string {
	text := model.MessageText(m, proto)
	if m.Kind != model.MsgWrite || !m.Fenced || s.Tokens == "" {
		return text
	}
	dec := " token=" + strconv.FormatInt(m.Token, 10)
	if i := strings.LastIndex(text, dec); i >= 0 {
		text = text[:i] + " token=" + s.Token(m.Token) + text[i+len(dec):]
	}
	return text
}
