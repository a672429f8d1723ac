package redis

import (
	"slices"

	"github.com/redlock-sim/redlock-sim/redlock/resp"
)

// Pub/sub, as far as a lock that waits for its release message needs it: a client
// SUBSCRIBEs to a lock's channel, the holder's unlock script PUBLISHes to it, and Redis
// pushes ["message", channel, payload] to every subscriber, which wakes the waiting
// client before its poll timer would. Redisson's RLock waits this way.
//
// Subscriptions belong to a connection, and die with it: the process's crash, kill or
// shutdown drops them all. A client's subscriptions live on a connection of their own,
// as Redisson and go-redis keep them (a RESP2 connection in subscribed mode may send
// nothing but (UN)SUBSCRIBE and PING), so the model does not restrict what else a
// subscriber sends. Only the one-channel forms are modelled: SUBSCRIBE ch and
// UNSUBSCRIBE ch, each answered with Redis's confirmation frame.

// Subscriber identifies a connection to an engine: the subscriber a message is pushed to. The
// node uses the sender's network endpoint.
type Subscriber int32

// Delivery is one message PUBLISH pushed: to whom, on which channel, with what payload.
type Delivery struct {
	To      Subscriber
	Channel string
	Payload string
}

// pubsub is an engine's subscription table. Subscribers of a channel are kept in the
// order they subscribed, the order Redis pushes a message to them.
type pubsub struct {
	chans map[string][]Subscriber
	count map[Subscriber]int // channels each connection is subscribed to
}

// Subscribe subscribes conn to channel, as SUBSCRIBE channel on that connection does, and
// returns Redis's confirmation: ["subscribe", channel, channels conn now listens on].
func (e *Engine) Subscribe(conn Subscriber, channel string) resp.Reply {
	ps := &e.ps
	if ps.chans == nil {
		ps.chans, ps.count = make(map[string][]Subscriber), make(map[Subscriber]int)
	}
	if subs := ps.chans[channel]; !slices.Contains(subs, conn) {
		ps.chans[channel] = append(subs, conn)
		ps.count[conn]++
	}
	return subscription("subscribe", channel, ps.count[conn])
}

// Unsubscribe ends conn's subscription to channel, as UNSUBSCRIBE channel does (also when
// there was none), and returns ["unsubscribe", channel, channels conn still listens on].
func (e *Engine) Unsubscribe(conn Subscriber, channel string) resp.Reply {
	ps := &e.ps
	subs := ps.chans[channel]
	if i := slices.Index(subs, conn); i >= 0 {
		if subs = slices.Delete(subs, i, i+1); len(subs) == 0 {
			delete(ps.chans, channel)
		} else {
			ps.chans[channel] = subs
		}
		if ps.count[conn]--; ps.count[conn] == 0 {
			delete(ps.count, conn)
		}
	}
	return subscription("unsubscribe", channel, ps.count[conn])
}

// Subscribers returns how many connections listen on channel.
func (e *Engine) Subscribers(channel string) int { return len(e.ps.chans[channel]) }

// Deliveries returns the messages the last command (or script) published, in the order
// Redis pushes them; the caller sends them and then calls ClearDeliveries.
func (e *Engine) Deliveries() []Delivery { return e.sent }

// ClearDeliveries forgets the messages Deliveries returned, once they are on their way.
func (e *Engine) ClearDeliveries() {
	clear(e.sent)
	e.sent = e.sent[:0]
}

// publish pushes payload to channel's subscribers and returns how many there were,
// PUBLISH's reply.
func (e *Engine) publish(channel, payload string) int64 {
	subs := e.ps.chans[channel]
	for _, c := range subs {
		e.sent = append(e.sent, Delivery{To: c, Channel: channel, Payload: payload})
	}
	return int64(len(subs))
}

// resetPubSub drops every subscription: the process is gone, and its connections with it.
func (e *Engine) resetPubSub() {
	clear(e.ps.chans)
	clear(e.ps.count)
	e.ClearDeliveries()
}

// subscription is a (un)subscribe confirmation frame.
func subscription(kind, channel string, count int) resp.Reply {
	return resp.ArrayReply(bulk(kind), bulk(channel), resp.IntReply(int64(count)))
}

// PushReply is the frame Redis pushes to a subscriber for a published message:
// ["message", channel, payload]. A lock client receives it as a reply to request 0.
func PushReply(channel, payload string) resp.Reply {
	return resp.ArrayReply(bulk("message"), bulk(channel), bulk(payload))
}
