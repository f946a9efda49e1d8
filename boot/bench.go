package boot

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/bootbench/bootbench/netboot"
)

// A Network is where a bench's boards netboot from: one interface of this
// host and bootbench's address on it. A real bench's NIC is one
// (adapters/benchnic); the virtual bench's tap in its namespace is another
// (vbench).
type Network interface {
	Interface() string
	Addr() netip.Prefix // bootbench's address, with the bench subnet
	// Do runs fn where the network's sockets must be opened (the virtual
	// bench's namespace; the host for a real NIC).
	Do(fn func() error) error
	// Go runs fn on a goroutine that stays where Do runs: for servers that
	// open sockets as they go (pin/tftp opens one per transfer).
	Go(fn func()) error
}

// A Bench serves boards' netboots: the answers to their DHCP (or BOOTP)
// requests and the files they then fetch, as a Booter decides them.
type Bench interface {
	// Serve answers the Booter's boards until stop is called.
	Serve(ctx context.Context, b *Booter, report netboot.Reporter) (stop func(), err error)
	// ServerIP is the address the boards fetch from; Mask the bench
	// subnet's.
	ServerIP() net.IP
	Mask() net.IPMask
	String() string
}

// A Vetted bench may still be finding out, when Serve returns, whether it
// may serve at all: a real bench's segment heard quiet minutes ago is
// served at once while bootbench listens for another DHCP server again.
// Refused blocks until that is known (or ctx ends) and returns the reason
// not to serve, nil to serve on; asked again later it may give a reason
// heard since (a server that answered after the verdict). A run that was
// refused is ended at once and nothing of it is kept.
type Vetted interface {
	Refused(ctx context.Context) error
}

// NetBench serves boots with bootbench's own DHCP, TFTP and HTTP servers
// (and the IPv6 router advertisement iPXE waits for) on a Network, and
// nowhere else.
type NetBench struct {
	Net Network
	// Proxy makes the DHCP server a proxyDHCP server: the segment has a
	// DHCP server of its own that gives the boards their addresses.
	Proxy bool
}

// ServerIP implements Bench.
func (nb *NetBench) ServerIP() net.IP { return net.IP(nb.Net.Addr().Addr().AsSlice()) }

func (nb *NetBench) String() string {
	mode := "DHCP"
	if nb.Proxy {
		mode = "proxyDHCP"
	}
	return fmt.Sprintf("%s+TFTP+HTTP on %s (%s)", mode, nb.Net.Interface(), nb.Net.Addr().Addr())
}

// Mask implements Bench.
func (nb *NetBench) Mask() net.IPMask { return net.CIDRMask(nb.Net.Addr().Bits(), 32) }

// Serve implements Bench.
func (nb *NetBench) Serve(ctx context.Context, b *Booter, report netboot.Reporter) (func(), error) {
	if !nb.Proxy {
		if name := b.withoutAddress(false); name != "" {
			return nil, fmt.Errorf("board %s has no address: give it one in the inventory, or serve with --proxy where another DHCP server hands out addresses", name)
		}
	} else if name := b.withoutAddress(true); name != "" {
		// A Pi 3B+'s ROM asks for bootcode.bin at the TFTP root, and a
		// Pi 4's falls back there: root names are served by address.
		return nil, fmt.Errorf("board %s is a Raspberry Pi with no address: its ROM fetches files at the TFTP root, which bootbench serves only to the board's own address; give it, in the inventory, the address the segment's DHCP server hands it", name)
	}
	return startServers(ctx, nb.Net, nb.Proxy, b, b.Report(report))
}

func addrIP(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.AsSlice())
}

// servers is what startServers runs, so one stop ends all of it.
type servers struct {
	tftp   *netboot.TFTP
	http   *netboot.HTTP
	conns  []net.PacketConn
	httpL  net.Listener
	ra     *netboot.RA
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *servers) stop() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.tftp != nil {
		s.tftp.Shutdown()
	}
	if s.http != nil {
		s.http.Shutdown()
	}
	for _, c := range s.conns {
		c.Close()
	}
	if s.httpL != nil {
		s.httpL.Close()
	}
	s.wg.Wait()
}

// startServers runs DHCP (or proxyDHCP), TFTP, HTTP and router
// advertisements on n, all asking booter what to answer.
func startServers(ctx context.Context, n Network, proxy bool, booter netboot.Booter, report netboot.Reporter) (stop func(), err error) {
	s := &servers{}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	s.tftp = netboot.NewTFTPFrom(booter, report)
	s.http = netboot.NewHTTPFrom(booter, report)
	iface, addr := n.Interface(), n.Addr().Addr()
	var dhcpConn, proxyConn, tftpConn net.PacketConn
	err = n.Do(func() error {
		var err error
		if dhcpConn, err = netboot.ListenDHCP(iface); err != nil {
			return err
		}
		s.conns = append(s.conns, dhcpConn)
		if proxy {
			if proxyConn, err = netboot.ListenUDP(iface, addr, netboot.ProxyDHCPPort); err != nil {
				return err
			}
			s.conns = append(s.conns, proxyConn)
		}
		if tftpConn, err = netboot.ListenUDP(iface, addr, 69); err != nil {
			return err
		}
		s.conns = append(s.conns, tftpConn)
		if s.httpL, err = netboot.ListenTCP(iface, addr, 80); err != nil {
			return err
		}
		s.ra, err = netboot.ListenRA(iface)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("start servers on %s: %w", iface, err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	serveDHCP := netboot.ServeDHCP
	if proxy {
		serveDHCP = netboot.ServeProxyDHCP
		s.spawn(func() { serveDHCP(sctx, proxyConn, booter, report) })
	}
	s.spawn(func() { serveDHCP(sctx, dhcpConn, booter, report) })
	s.spawn(func() { s.ra.Serve(sctx) })
	s.spawn(func() { s.http.Serve(s.httpL) })
	// pin/tftp opens a socket per transfer in its serving goroutine, so
	// that goroutine must live where the network is.
	s.wg.Add(1)
	if err := n.Go(func() { defer s.wg.Done(); s.tftp.Serve(tftpConn) }); err != nil {
		s.wg.Done()
		return nil, fmt.Errorf("start TFTP on %s: %w", iface, err)
	}
	return s.stop, nil
}

func (s *servers) spawn(fn func()) {
	s.wg.Add(1)
	go func() { defer s.wg.Done(); fn() }()
}
