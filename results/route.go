package results

import (
	"fmt"
	"strings"
)

// RouteSettings are what a route run sent through the board, beyond its
// packet sizes and configurations (which its metrics' names carry): the
// TCP window, the parallel streams, the UDP tests' offered rate and each
// test's length. Runs of other settings measure other things (four
// streams fill a link one may not), so they are never pooled.
type RouteSettings struct {
	// Window is iperf3 -w ("256K"); "" the kernel's.
	Window string `json:"window,omitempty"`
	// Streams is iperf3 -P.
	Streams int `json:"streams"`
	// UDPRate is the UDP tests' offered rate in bit/s, all streams
	// together.
	UDPRate float64 `json:"udp_rate"`
	// Seconds is each test's length (iperf3 -t).
	Seconds int `json:"seconds"`
}

// String names the settings for a comparison's labels.
func (s *RouteSettings) String() string {
	if s == nil {
		return ""
	}
	window := "the kernel's window"
	if s.Window != "" {
		window = "window " + s.Window
	}
	streams := "streams"
	if s.Streams == 1 {
		streams = "stream"
	}
	rate := strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.3f", s.UDPRate/1e6), "0"), "0")
	return fmt.Sprintf("%d %s, %s, UDP at %s Mbit/s, %d s a test", s.Streams, streams, window, strings.TrimSuffix(rate, "."), s.Seconds)
}
