package boards

import (
	"net"
	"net/netip"
	"regexp"

	"gopkg.in/yaml.v3"
)

// RouteBench is a bench's two route networks: the host interfaces cabled
// to the boards' two routed ports, for the route benchmark.
//
//	bench:
//	  route:
//	    client: enx0050b6000001     # to the board's LAN port: iperf3's client
//	    server: enx0050b6000002     # to its WAN port: iperf3's server
//	    direct: [enp5s0, enp6s0]    # optional: two NICs cabled together
//
// or, through a managed switch, one trunk and a VLAN per side:
//
//	route: {trunk: eno2, client_vlan: 101, server_vlan: 102}
type RouteBench struct {
	Client, Server string // host interfaces; empty with a trunk
	Trunk          string
	ClientVLAN     int
	ServerVLAN     int
	// Direct is the baseline's cable: two host interfaces cabled to
	// each other, client side first. Empty: a veth pair on the host.
	Direct []string
}

// DefaultRouteAddrs are a board's routed ports' addresses when the
// inventory gives none: RFC 2544's benchmarking range.
var DefaultRouteAddrs = []netip.Prefix{
	netip.MustParsePrefix("198.18.1.1/24"),
	netip.MustParsePrefix("198.18.2.1/24"),
}

// ifaceNameRE is a Linux interface name: up to 15 characters, no '/',
// ':' or space.
var ifaceNameRE = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,14}$`)

func (p *inventoryParser) routeBench(n *yaml.Node) *RouteBench {
	f := p.mapping(n, "bench route", "client", "server", "trunk", "client_vlan", "server_vlan", "direct")
	if f == nil {
		return nil
	}
	r := &RouteBench{}
	for _, c := range []struct {
		key string
		v   *string
	}{{"client", &r.Client}, {"server", &r.Server}, {"trunk", &r.Trunk}} {
		if p.scalar(f[c.key], "bench route "+c.key, c.v) && !ifaceNameRE.MatchString(*c.v) {
			p.problem(f[c.key], "bench route %s: %q is not an interface name (ip link shows them)", c.key, *c.v)
		}
	}
	p.scalar(f["client_vlan"], "bench route client_vlan", &r.ClientVLAN)
	p.scalar(f["server_vlan"], "bench route server_vlan", &r.ServerVLAN)
	switch {
	case r.Trunk != "" && (r.Client != "" || r.Server != ""):
		p.problem(n, "bench route: give client and server interfaces, or a trunk with client_vlan and server_vlan, not both")
	case r.Trunk != "":
		for _, v := range []struct {
			key string
			id  int
		}{{"client_vlan", r.ClientVLAN}, {"server_vlan", r.ServerVLAN}} {
			if v.id < 1 || v.id > 4094 {
				p.problem(field(n, v.key), "bench route %s: want a VLAN id from 1 to 4094", v.key)
			}
		}
		if r.ClientVLAN == r.ServerVLAN && r.ClientVLAN != 0 {
			p.problem(field(n, "server_vlan"), "bench route: both sides on VLAN %d: the host would bridge them", r.ClientVLAN)
		}
	case r.Client == "" || r.Server == "":
		p.problem(n, "bench route: give client and server (the host interfaces cabled to the board's two routed ports)")
	case r.Client == r.Server:
		p.problem(field(n, "server"), "bench route: client and server are both %s: the board needs one on each side", r.Client)
	}
	if d := f["direct"]; d != nil {
		var names []string
		if !p.scalar(d, "bench route direct", &names) {
			return r
		}
		if len(names) != 2 || names[0] == names[1] {
			p.problem(d, "bench route direct: want two interfaces cabled to each other, client side first")
			return r
		}
		for _, s := range names {
			if !ifaceNameRE.MatchString(s) {
				p.problem(d, "bench route direct: %q is not an interface name", s)
			}
		}
		r.Direct = names
	}
	return r
}

// routePorts reads a board's route_ports: its client-side and server-side
// ports, each a MAC or an interface name as the board's kernel calls it.
func (p *inventoryParser) routePorts(n *yaml.Node, what string) []string {
	var ports []string
	if !p.scalar(n, what+" route_ports", &ports) {
		return nil
	}
	if len(ports) != 2 {
		p.problem(n, "%s: route_ports: want two ports, client side first (a MAC or the board's name for each, e.g. eth1)", what)
		return nil
	}
	for _, s := range ports {
		if _, err := net.ParseMAC(s); err != nil && !ifaceNameRE.MatchString(s) {
			p.problem(n, "%s: route_ports: %q is neither a MAC nor an interface name", what, s)
		}
	}
	return ports
}

// routeAddrs reads a board's route_addresses: its two routed ports'
// addresses with the subnets' lengths.
func (p *inventoryParser) routeAddrs(n *yaml.Node, what string) []netip.Prefix {
	if n == nil {
		return DefaultRouteAddrs
	}
	var ss []string
	if !p.scalar(n, what+" route_addresses", &ss) {
		return DefaultRouteAddrs
	}
	if len(ss) != 2 {
		p.problem(n, "%s: route_addresses: want two, client side first (e.g. [198.18.1.1/24, 198.18.2.1/24])", what)
		return DefaultRouteAddrs
	}
	var out []netip.Prefix
	for _, s := range ss {
		pfx, err := netip.ParsePrefix(s)
		if err != nil || !pfx.Addr().Is4() || pfx.Bits() > 30 {
			p.problem(n, "%s: route_addresses: %q is not an IPv4 address with a subnet of 4 or more addresses (e.g. 198.18.1.1/24)", what, s)
			return DefaultRouteAddrs
		}
		out = append(out, pfx)
	}
	if out[0].Masked().Overlaps(out[1].Masked()) {
		p.problem(n, "%s: route_addresses %s and %s are on one subnet: the board routes between two", what, out[0], out[1])
	}
	return out
}
