package vbench

import (
	"context"
	"net"

	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/adapters/routenet"
)

// RouteNet is the route benchmark's two host networks on the virtual
// bench: a namespace per side (client 198.18.1.0/24, server
// 198.18.2.0/24), each with a tap that one of the board's ports is on,
// and a veth pair between the two (198.18.3.0/24) for the direct
// baseline, the board bypassed as by a cable.
type RouteNet struct {
	*routenet.Net
}

// The taps the board's routed ports are on.
const (
	routeTapClient = "bbrt0"
	routeTapServer = "bbrt1"
)

// routeMACs are the board's two routed ports.
var routeMACs = [2]net.HardwareAddr{
	{0x52, 0x54, 0x00, 0xbb, 0x01, 0x01},
	{0x52, 0x54, 0x00, 0xbb, 0x01, 0x02},
}

// NewRouteNet creates the two namespaces, their taps, routes toward the
// board, and the direct veth pair, recorded in cacheDir as this process's
// (routenet.Sweep removes what a killed one left).
func NewRouteNet(ctx context.Context, cacheDir string, plan route.Plan) (*RouteNet, error) {
	n, err := routenet.New(ctx, cacheDir, routenet.Spec{
		Client: routenet.Side{Link: routenet.Link{Tap: routeTapClient}, Board: routenet.DefaultBoardClient, Port: routeMACs[0].String()},
		Server: routenet.Side{Link: routenet.Link{Tap: routeTapServer}, Board: routenet.DefaultBoardServer, Port: routeMACs[1].String()},
		Plan:   plan,
	}, func(string) {})
	if err != nil {
		return nil, err
	}
	return &RouteNet{n}, nil
}

// BoardPorts are the board's NICs on the two taps.
func (r *RouteNet) BoardPorts() []Port {
	return []Port{
		{Netns: r.Client, Tap: routeTapClient, MAC: routeMACs[0]},
		{Netns: r.Server, Tap: routeTapServer, MAC: routeMACs[1]},
	}
}
