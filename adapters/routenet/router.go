package routenet

import (
	"context"
	"fmt"

	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/contract/bootparam"
)

// Ports are the board's routed ports, client side first, for its kernel
// command line: the route.Router's.
func (n *Net) Ports() []bootparam.Port {
	return []bootparam.Port{
		{MAC: n.spec.Client.Port, Addr: n.spec.Client.Board.String()},
		{MAC: n.spec.Server.Port, Addr: n.spec.Server.Board.String()},
	}
}

// Sweep sends the plan's traffic along path: through the board, or past
// it over the direct pair, telling mark as each test begins and ends.
func (n *Net) Sweep(ctx context.Context, path route.Path, mark route.Mark) ([]route.Figure, error) {
	client, server := n.sides(path.Direct)
	return path.Run(ctx, n.spec.Plan, client, server, mark)
}

// sides are the iperf3 client's and server's interfaces and addresses.
func (n *Net) sides(direct bool) (client, server route.Side) {
	if direct {
		d := n.spec.Direct
		if d[0] == (Link{}) {
			d = [2]Link{{Tap: vethClient}, {Tap: vethServer}}
		}
		return route.Side{Netns: n.Client, Iface: d[0].name(), Addr: directClientAddr.Addr().String()},
			route.Side{Netns: n.Server, Iface: d[1].name(), Addr: directServerAddr.Addr().String()}
	}
	c, _ := HostAddr(n.spec.Client.Board) // checked by New
	s, _ := HostAddr(n.spec.Server.Board)
	return route.Side{Netns: n.Client, Iface: n.spec.Client.Link.name(), Addr: c.Addr().String()},
		route.Side{Netns: n.Server, Iface: n.spec.Server.Link.name(), Addr: s.Addr().String()}
}

func (n *Net) String() string {
	c, s := n.sides(false)
	dc, ds := n.sides(true)
	return fmt.Sprintf("client %s on %s (namespace %s), server %s on %s (namespace %s), direct %s–%s",
		c.Addr, n.spec.Client.Link, n.Client, s.Addr, n.spec.Server.Link, n.Server, dc.Addr, ds.Addr)
}
