package netboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
)

// Rival is another DHCP server heard on the bench segment.
type Rival struct {
	Server  net.IP // its server identifier
	Offered net.IP // the address it offered our probe
}

// ProbeDHCP asks the segment on iface for a DHCP server, as a client would
// (a DHCPDISCOVER from iface's own MAC, on a raw socket, so it works whether
// or not iface has an address or port 68 is taken), and waits up to wait
// for an offer, sending the DISCOVER again after a third of it. Give it several
// seconds: servers check that an address is free before they offer it
// (dnsmasq pings it for 3 s, ISC dhcpd for 1 s). It returns nil when nobody answered: bootbench may then be
// the segment's DHCP server. Two servers answering the same boards would
// hand them different answers; bootbench serves as proxyDHCP instead.
// The probe takes no lease: it never sends a DHCPREQUEST.
func ProbeDHCP(ctx context.Context, iface string, wait time.Duration) (*Rival, error) {
	// Two tries, and nclient4 doubles the timeout for the second: a
	// third of wait, then two thirds (halves would make it 1.5 × wait).
	c, err := nclient4.New(iface, nclient4.WithTimeout(wait/3), nclient4.WithRetry(2))
	if err != nil {
		return nil, fmt.Errorf("probe %s for another DHCP server: %w", iface, err)
	}
	defer c.Close()
	offer, err := c.DiscoverOffer(ctx)
	switch {
	case errors.Is(err, nclient4.ErrNoResponse):
		return nil, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("probe %s for another DHCP server: %w", iface, err)
	}
	r := &Rival{Server: offer.ServerIdentifier(), Offered: offer.YourIPAddr}
	if r.Server == nil {
		r.Server = offer.ServerIPAddr
	}
	return r, nil
}

// String names the rival for an error message.
func (r *Rival) String() string {
	s := "a DHCP server"
	if r.Server != nil && !r.Server.IsUnspecified() {
		s += " at " + r.Server.String()
	}
	if r.Offered != nil && !r.Offered.IsUnspecified() {
		s += " (it offered " + r.Offered.String() + ")"
	}
	return s
}
