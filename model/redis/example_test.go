package redis_test

import (
	"fmt"
	"os"
	"time"

	"github.com/redlock-sim/redlock-sim/model"
	"github.com/redlock-sim/redlock-sim/model/redis"
	"github.com/redlock-sim/redlock-sim/network"
	"github.com/redlock-sim/redlock-sim/redlock/resp"
	"github.com/redlock-sim/redlock-sim/sim"
	"github.com/redlock-sim/redlock-sim/sim/dist"
)

// client sends its commands at given times and prints the replies.
type client struct {
	net  *network.Net[model.Message]
	ep   network.Endpoint
	to   network.Endpoint
	cmds []resp.Command
}

func (c *client) HandleEvent(_ sim.Time, _ int, i uint64) {
	c.net.Send(c.ep, c.to, model.Request(i+1, c.cmds[i].Payload()))
}

func (c *client) Receive(now sim.Time, _, _ network.Endpoint, m *model.Message) {
	fmt.Printf("%v %v -> %v\n", now, c.cmds[m.ReqID-1], resp.ReplyOf(&m.Body))
}

// A master whose write has not yet reached its replica loses power; the replica is
// promoted and grants the lock a second time.
func ExampleGroup() {
	s, _ := sim.New(sim.Config{Seed: 1})
	net, _ := network.New[model.Message](s, network.Config{
		Default: network.Link{Latency: network.Latency{Fast: dist.Constant(time.Millisecond)}}}, s.Source("net"))
	net.SetMessage(model.MessageParts, redis.FormatMessage)
	g, _ := redis.NewGroup(s, net, redis.GroupConfig{
		Name:             "redis1",
		Nodes:            []redis.NodeConfig{{}, {}},
		ReplicationDelay: 50 * time.Millisecond,
		FailoverAfter:    time.Second,
	})
	c := &client{net: net, to: g.Endpoint(), cmds: []resp.Command{
		resp.Set("lock", "a", resp.CondNX, 30*time.Second),
		resp.Set("lock", "b", resp.CondNX, 30*time.Second),
	}}
	c.ep, _ = net.AddEndpoint("client1", c)
	_, _ = s.Schedule(0, c, 0, 0)
	_ = g.At(sim.Time(10*time.Millisecond), redis.Fault{Kind: redis.FaultCrash, Node: redis.CurrentMaster, Forever: true})
	_, _ = s.Schedule(sim.Time(1200*time.Millisecond), c, 0, 1)

	s.SetSink(sim.NewWriterSink(os.Stdout))
	_ = s.RunUntil(sim.Time(2 * time.Second))
	// Output:
	//          1ms net      deliver from=client1 to=redis1 id=1 msg=req=1 SET lock a NX PX 30000 latency=1ms
	//          1ms redis1.0 exec cmd=SET lock a NX PX 30000 reply=OK
	//          2ms net      deliver from=redis1 to=client1 id=2 msg=req=1 OK latency=1ms
	// 2ms SET lock a NX PX 30000 -> OK
	//         10ms redis1.0 crash keys=1 dropped=0 lost_writes=0
	//        1.01s redis1   failover from=redis1.0 to=redis1.1 lost_writes=1
	//       1.201s net      deliver from=client1 to=redis1 id=3 msg=req=2 SET lock b NX PX 30000 latency=1ms
	//       1.201s redis1.1 exec cmd=SET lock b NX PX 30000 reply=OK
	//       1.202s net      deliver from=redis1 to=client1 id=4 msg=req=2 OK latency=1ms
	// 1.202s SET lock b NX PX 30000 -> OK
}
