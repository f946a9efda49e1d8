package benchpage

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// DefaultHost is where the page listens when its address names no host:
// this host only. The page shows consoles and results, which a bench's
// owner may not want on the network.
const DefaultHost = "127.0.0.1"

// ListenAddr is the address the page listens on for flag value s
// ("PORT", ":PORT" or "HOST:PORT"); loopback says whether only this host
// can reach it. A host that is a name other than localhost counts as
// reachable from elsewhere: it may resolve to anything.
func ListenAddr(s string) (addr string, loopback bool, err error) {
	host, port := "", s
	if strings.Contains(s, ":") {
		if host, port, err = net.SplitHostPort(s); err != nil {
			return "", false, fmt.Errorf("%q: want PORT, :PORT or HOST:PORT", s)
		}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", false, fmt.Errorf("%q: port %q is not a number from 0 to 65535", s, port)
	}
	switch {
	case host == "":
		host, loopback = DefaultHost, true
	case strings.EqualFold(host, "localhost"):
		loopback = true
	default:
		ip, err := netip.ParseAddr(host)
		loopback = err == nil && ip.IsLoopback()
	}
	return net.JoinHostPort(host, port), loopback, nil
}
