package boards

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestRouteInventory(t *testing.T) {
	const bench = "bench:\n  interface: bench0\n  address: 198.18.5.1/24\n"
	const board = "boards:\n  r1:\n    profile: pc-x86_64\n    mac: \"52:54:00:bb:05:20\"\n    console: /dev/ttyUSB0\n    power: {driver: manual}\n"
	tests := []struct {
		name, route, board string
		want               []string // problems, one per line; none: it loads
		check              func(*testing.T, *Inventory)
	}{
		{"two interfaces", "  route: {client: lan0, server: wan0}\n", "    route_ports: [\"52:54:00:bb:06:01\", eth2]\n", nil, func(t *testing.T, inv *Inventory) {
			r, b := inv.Bench.Route, inv.Boards[0]
			if r == nil || r.Client != "lan0" || r.Server != "wan0" || r.Trunk != "" || r.Direct != nil {
				t.Errorf("route %+v", r)
			}
			if !slices.Equal(b.RoutePorts, []string{"52:54:00:bb:06:01", "eth2"}) || !slices.Equal(b.RouteAddrs, DefaultRouteAddrs) {
				t.Errorf("board route %v %v", b.RoutePorts, b.RouteAddrs)
			}
		}},
		{"trunk, direct cable, addresses", "  route: {trunk: eno2, client_vlan: 101, server_vlan: 102, direct: [dir0, dir1]}\n",
			"    route_ports: [eth1, eth2]\n    route_addresses: [192.168.88.1/24, 10.9.0.1/30]\n", nil, func(t *testing.T, inv *Inventory) {
				r, b := inv.Bench.Route, inv.Boards[0]
				if r.Trunk != "eno2" || r.ClientVLAN != 101 || r.ServerVLAN != 102 || !slices.Equal(r.Direct, []string{"dir0", "dir1"}) {
					t.Errorf("route %+v", r)
				}
				if b.RouteAddrs[1] != netip.MustParsePrefix("10.9.0.1/30") {
					t.Errorf("addresses %v", b.RouteAddrs)
				}
			}},
		{"no route networks", "", "    route_ports: [eth1, eth2]\n", []string{"bench.yaml:10: board r1: route_ports, but the bench has no route networks"}, nil},
		{"one side", "  route: {client: lan0}\n", "", []string{"bench.yaml:4: bench route: give client and server"}, nil},
		{"same interface", "  route: {client: lan0, server: lan0}\n", "", []string{"bench.yaml:4: bench route: client and server are both lan0"}, nil},
		{"both kinds", "  route: {client: lan0, server: wan0, trunk: eno2, client_vlan: 1, server_vlan: 2}\n", "", []string{"bench.yaml:4: bench route: give client and server interfaces, or a trunk"}, nil},
		{"one VLAN", "  route: {trunk: eno2, client_vlan: 5, server_vlan: 5}\n", "", []string{"bench.yaml:4: bench route: both sides on VLAN 5"}, nil},
		{"VLAN id", "  route: {trunk: eno2, client_vlan: 0, server_vlan: 4095}\n", "", []string{"bench.yaml:4: bench route client_vlan: want a VLAN id", "bench.yaml:4: bench route server_vlan: want a VLAN id"}, nil},
		{"bad name", "  route: {client: \"lan 0\", server: wan0}\n", "", []string{`bench.yaml:4: bench route client: "lan 0" is not an interface name`}, nil},
		{"three ports", "  route: {client: lan0, server: wan0}\n", "    route_ports: [eth1, eth2, eth3]\n", []string{"bench.yaml:11: board r1: route_ports: want two ports"}, nil},
		{"one subnet", "  route: {client: lan0, server: wan0}\n", "    route_ports: [eth1, eth2]\n    route_addresses: [10.0.0.1/24, 10.0.0.9/24]\n", []string{"bench.yaml:12: board r1: route_addresses 10.0.0.1/24 and 10.0.0.9/24 are on one subnet"}, nil},
		{"on the bench subnet", "  route: {client: lan0, server: wan0}\n", "    route_ports: [eth1, eth2]\n    route_addresses: [198.18.5.99/24, 10.0.0.1/24]\n", []string{"bench.yaml:12: board r1: routed port address 198.18.5.99/24 is on the bench subnet"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := ParseInventory("bench.yaml", []byte(bench+tc.route+board+tc.board))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, inv)
				return
			}
			if err == nil {
				t.Fatalf("loaded; want %q", tc.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tc.want) {
				t.Fatalf("problems:\n%v\nwant %d", err, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("problem %d: %q, want it to start %q", i, lines[i], w)
				}
			}
		})
	}
}
