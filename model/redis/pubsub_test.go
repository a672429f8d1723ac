package redis

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/redlock-sim/redlock-sim/internal/redistest"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// TestSubscriptions checks the subscription table's bookkeeping against what Redis
// answers (confirmation counts per connection, publish counts, delivery order) without a
// server, and that a restart drops every subscription.
func TestSubscriptions(t *testing.T) {
	e, err := NewEngine(EngineConfig{})
	require.NoError(t, err)
	require.Equal(t, subscription("subscribe", "a", 1), e.DoFrom(7, []string{"SUBSCRIBE", "a"}, 0))
	require.Equal(t, subscription("subscribe", "a", 1), e.DoFrom(7, []string{"subscribe", "a"}, 0), "twice counts once")
	require.Equal(t, subscription("subscribe", "b", 2), e.DoFrom(7, []string{"SUBSCRIBE", "b"}, 0))
	require.Equal(t, subscription("subscribe", "a", 1), e.ExecFrom(3, resp.Command{Op: resp.OpSubscribe, Key: "a"}, 0))
	require.Equal(t, 2, e.Subscribers("a"))

	require.Equal(t, resp.IntReply(2), e.Do([]string{"PUBLISH", "a", "0"}, 0))
	require.Equal(t, []Delivery{{To: 7, Channel: "a", Payload: "0"}, {To: 3, Channel: "a", Payload: "0"}}, e.Deliveries(),
		"pushed in subscription order")
	e.ClearDeliveries()

	require.Equal(t, subscription("unsubscribe", "a", 1), e.DoFrom(7, []string{"UNSUBSCRIBE", "a"}, 0))
	require.Equal(t, subscription("unsubscribe", "zz", 1), e.DoFrom(7, []string{"UNSUBSCRIBE", "zz"}, 0), "not subscribed")
	require.Equal(t, subscription("unsubscribe", "a", 0), e.ExecFrom(3, resp.Command{Op: resp.OpUnsubscribe, Key: "a"}, 0))
	require.Equal(t, resp.IntReply(0), e.Do([]string{"PUBLISH", "a", "x"}, 0))
	require.Empty(t, e.Deliveries())

	// A script's PUBLISH reaches subscribers too; SUBSCRIBE from a script is refused.
	require.Equal(t, resp.IntReply(1), e.Do([]string{"EVAL", "return redis.call('publish', KEYS[1], ARGV[1])", "1", "b", "hi"}, 0))
	require.Equal(t, []Delivery{{To: 7, Channel: "b", Payload: "hi"}}, e.Deliveries())
	r := e.Do([]string{"EVAL", "return redis.call('subscribe', KEYS[1])", "1", "b"}, 0)
	require.Equal(t, resp.ReplyError, r.Kind)
	require.Contains(t, r.Str, "This Redis command is not allowed from script")
	require.Contains(t, e.DoFrom(1, []string{"SUBSCRIBE", "a", "b"}, 0).Str, "only subscribe of exactly one channel")

	e.Reset()
	require.Zero(t, e.Subscribers("b"))
	require.Empty(t, e.Deliveries())
	require.Equal(t, subscription("subscribe", "b", 1), e.DoFrom(7, []string{"SUBSCRIBE", "b"}, 0), "counts start over")
}

// TestPubSubAgainstRealRedis drives redis-server and the model with the same random
// sequences of SUBSCRIBE and UNSUBSCRIBE on three subscriber connections and PUBLISH (by
// itself, from a script, and from Redisson's own unlock script) on a fourth, and requires
// the same reply to every command and the same messages, in the same order, on every
// subscriber connection. A PING on each subscriber connection at the end of a sequence
// proves that nothing more was pushed than the model pushed.
func TestPubSubAgainstRealRedis(t *testing.T) {
	srv := redistest.Start(t)
	payloads := []string{"0", "1", "hello", ""}
	unlock := resp.ScriptRedissonUnlock.Source()
	const sequences, length, subscribers = 150, 40, 3
	pushed, published := 0, 0
	for seed := uint64(1); seed <= sequences; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x9b5))
		// Each sequence has channels of its own: the server may not yet have dropped the
		// previous sequence's connections, and their subscriptions, when this one starts.
		sfx := strconv.FormatUint(seed, 10)
		channels := []string{"ch1:" + sfx, "ch2:" + sfx, "redisson_lock__channel:{lock" + sfx + "}"}
		conns := make([]*respConn, subscribers+1) // conns[0] publishes
		for i := range conns {
			rc, err := dialRESP(srv.Addr())
			require.NoError(t, err)
			conns[i] = rc
		}
		_, err := conns[0].do([][]string{{"FLUSHALL"}})
		require.NoError(t, err)
		e, err := NewEngine(EngineConfig{})
		require.NoError(t, err)
		now := time.Now().UnixMilli()
		for step := 0; step < length; step++ {
			ch, from := channels[r.IntN(len(channels))], 0
			var argv []string
			switch k := r.IntN(10); {
			case k < 3:
				from = 1 + r.IntN(subscribers)
				argv = []string{"SUBSCRIBE", ch}
			case k < 5:
				from = 1 + r.IntN(subscribers)
				argv = []string{"UNSUBSCRIBE", ch}
			case k < 7:
				argv = []string{"PUBLISH", ch, payloads[r.IntN(len(payloads))]}
			case k < 8:
				argv = []string{"EVAL", "local n = redis.call('publish', KEYS[1], ARGV[1])\nreturn n + redis.call('publish', KEYS[1], ARGV[1] .. '!')",
					"1", ch, payloads[r.IntN(len(payloads))]}
			case k < 9:
				argv = []string{"HSET", "lock", "id:1", "1"}
			default:
				// Redisson 3.43.0's unlock: deletes the hash and publishes on KEYS[2] when
				// the field's count drops to 0, leaving a latch key either way.
				argv = []string{"EVAL", unlock, "3", "lock", ch, "redisson_unlock_latch:{lock}:" + ch,
					"0", "30000", "id:1", "PUBLISH", "13500"}
			}
			real, err := conns[from].do([][]string{argv})
			require.NoError(t, err)
			got := e.DoFrom(Subscriber(from), argv, now)
			require.Equalf(t, real[0], got, "seed %d step %d conn %d %q", seed, step, from, argv)
			for _, d := range e.Deliveries() {
				msg, err := conns[d.To].read()
				require.NoError(t, err)
				require.Equalf(t, PushReply(d.Channel, d.Payload), msg, "seed %d step %d: the message on conn %d", seed, step, d.To)
				pushed++
			}
			if len(argv) > 0 && argv[0] == "PUBLISH" {
				published++
			}
			e.ClearDeliveries()
		}
		for i := 1; i <= subscribers; i++ {
			// In subscribed mode PING answers ["pong", ""]; otherwise PONG. Either way it
			// must be the next frame: no message is left unread.
			rs, err := conns[i].do([][]string{{"PING"}})
			require.NoError(t, err)
			if rs[0].Kind == resp.ReplyArray {
				require.Equal(t, resp.ArrayReply(bulk("pong"), bulk("")), rs[0], "seed %d conn %d", seed, i)
			} else {
				require.Equal(t, resp.Reply{Kind: resp.ReplyStatus, Str: "PONG"}, rs[0], "seed %d conn %d", seed, i)
			}
		}
		for _, rc := range conns {
			rc.Close()
		}
	}
	t.Logf("%d sequences, %d PUBLISH commands, %d messages pushed, 0 divergences", sequences, published, pushed)
	require.Greater(t, pushed, 500, "the generator must actually deliver messages")
}
