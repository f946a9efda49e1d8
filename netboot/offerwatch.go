package netboot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	rawpacket "github.com/mdlayher/packet"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// ForeignOffer is a DHCP OFFER from another server, seen on the bench wire.
type ForeignOffer struct {
	Server  net.IP           // its server identifier (else its source address)
	Offered net.IP           // the address it offered
	Client  net.HardwareAddr // to whom
}

// String names the server and what it offered, for a progress line.
func (o ForeignOffer) String() string {
	return fmt.Sprintf("another DHCP server at %s offered %s to %s", o.Server, o.Offered, o.Client)
}

// offerRepeat is how long a server that offered once goes unreported:
// a rival answers every DISCOVER, and one line per server a minute says
// it without drowning the run's progress.
const offerRepeat = time.Minute

// bootpClientFilter passes what a DHCP server sends a client: unfragmented
// UDP to port 68. It runs in the kernel on a datagram packet socket, whose
// packets start at the IP header, so the kernel and image a board loads
// through the same NIC never wake the watcher.
var bootpClientFilter = mustAssemble([]bpf.Instruction{
	bpf.LoadAbsolute{Off: 9, Size: 1}, // IP protocol
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.IPPROTO_UDP, SkipFalse: 6},
	bpf.LoadAbsolute{Off: 6, Size: 2}, // flags and fragment offset
	bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1fff, SkipTrue: 4},
	bpf.LoadMemShift{Off: 0},          // X = the IP header's length
	bpf.LoadIndirect{Off: 2, Size: 2}, // UDP destination port
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 68, SkipFalse: 1},
	bpf.RetConstant{Val: 1 << 16},
	bpf.RetConstant{Val: 0},
})

func mustAssemble(prog []bpf.Instruction) []bpf.RawInstruction {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		panic(err)
	}
	return raw
}

// WatchOffers reports, until stop, every DHCP OFFER on iface from a server
// other than self (bootbench's own address there): a DHCP server that came
// up on the bench segment after the probe (ProbeDHCP) found none. It hears
// what reaches the NIC (broadcast offers, and those sent to its MAC); each
// server is reported once a minute at most. seen runs on the watcher's
// goroutine.
func WatchOffers(iface string, self net.IP, seen func(ForeignOffer)) (stop func(), err error) {
	ifi, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, fmt.Errorf("watch %s for DHCP offers: %w", iface, err)
	}
	c, err := rawpacket.Listen(ifi, rawpacket.Datagram, unix.ETH_P_IP, &rawpacket.Config{Filter: bootpClientFilter})
	if err != nil {
		return nil, fmt.Errorf("watch %s for DHCP offers: %w", iface, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		watchOffers(ctx, c, self, seen)
	}()
	return func() {
		cancel()
		c.Close()
		wg.Wait()
	}, nil
}

func watchOffers(ctx context.Context, c net.PacketConn, self net.IP, seen func(ForeignOffer)) {
	last := map[string]time.Time{}
	buf := make([]byte, 1<<16)
	for {
		n, _, err := c.ReadFrom(buf)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		o, ok := foreignOffer(buf[:n], self)
		if !ok {
			continue
		}
		key := o.Server.String()
		if at, ok := last[key]; ok && time.Since(at) < offerRepeat {
			continue
		}
		last[key] = time.Now()
		seen(o)
	}
}

// foreignOffer reads an IPv4 packet the filter passed: a DHCP OFFER from a
// server that is not self.
func foreignOffer(pkt []byte, self net.IP) (ForeignOffer, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return ForeignOffer{}, false
	}
	ihl := int(pkt[0]&0x0f) * 4
	if len(pkt) < ihl+8 {
		return ForeignOffer{}, false
	}
	src := net.IP(pkt[12:16])
	udpLen := int(pkt[ihl+4])<<8 | int(pkt[ihl+5])
	if udpLen < 8 || ihl+udpLen > len(pkt) {
		return ForeignOffer{}, false
	}
	m, err := dhcpv4.FromBytes(pkt[ihl+8 : ihl+udpLen])
	if err != nil || m.OpCode != dhcpv4.OpcodeBootReply || m.MessageType() != dhcpv4.MessageTypeOffer {
		return ForeignOffer{}, false
	}
	server := m.ServerIdentifier()
	if server == nil || server.IsUnspecified() {
		server = src
	}
	if server.Equal(self) || src.Equal(self) {
		return ForeignOffer{}, false
	}
	// Copies: the message may share the read buffer, which the next read reuses.
	return ForeignOffer{
		Server:  append(net.IP(nil), server.To4()...),
		Offered: append(net.IP(nil), m.YourIPAddr.To4()...),
		Client:  append(net.HardwareAddr(nil), m.ClientHWAddr...),
	}, true
}
