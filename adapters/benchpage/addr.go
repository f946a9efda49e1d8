package benchpage

import (
	"fmt"
	"net"
	"net/http"
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

// LoopbackHosts serves only requests addressed to this host by name or
// loopback address (the Host header), for a page that listens on
// loopback: a web page elsewhere that points a name of its own at
// 127.0.0.1 (DNS rebinding) would otherwise read the consoles through
// its visitor's browser.
func LoopbackHosts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, "the bench page answers to localhost, 127.0.0.1 or [::1] only", http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost says whether a Host header names this host.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
