package boards

import (
	"net/netip"

	"gopkg.in/yaml.v3"
)

// RouteBench is a bench's route networks: the host interfaces cabled to
// the boards' two routed ports, client side (LAN) and server side (WAN).
//
//	bench:
//	  route: {client: lan0, server: wan0}
type RouteBench struct {
	Client, Server string
}

// The board ports' addresses when the inventory gives none.
var (
	DefaultRouteClient = netip.MustParsePrefix("198.18.1.1/24")
	DefaultRouteServer = netip.MustParsePrefix("198.18.2.1/24")
)

// routeBench reads bench.route.
func (p *inventoryParser) routeBench(n *yaml.Node) *RouteBench {
	f := p.mapping(n, "bench route", "client", "server")
	if f == nil {
		return nil
	}
	var r RouteBench
	for _, side := range []struct {
		key, what string
		v         *string
	}{{"client", "the host interface cabled to the board's client-side (LAN) port", &r.Client}, {"server", "the host interface cabled to the board's server-side (WAN) port", &r.Server}} {
		if !p.scalar(f[side.key], "bench route "+side.key, side.v) && absent(f, side.key) {
			p.problem(n, "bench route: no %s (%s)", side.key, side.what)
		}
	}
	if r.Client != "" && r.Client == r.Server {
		p.problem(n, "bench route: client and server are both %s; the board routes between two interfaces", r.Client)
	}
	return &r
}
