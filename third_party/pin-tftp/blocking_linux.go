package tftp

import (
	"fmt"
	"net"
	"syscall"
	"time"
)

// blockingConnection is a transfer's own socket read with blocking system
// calls (bootbench patch). A lock-step transfer waits for one ACK per
// block: through Go's network poller each wait parks the goroutine and
// wakes it again from epoll, which costs more than the round trip itself
// on a fast link, and is what a C server such as dnsmasq never pays. A
// blocking recvfrom on the transfer's goroutine waits in the kernel, the
// thread is woken by the datagram itself, and the runtime hands the
// processor to other goroutines meanwhile. The read timeout is the
// socket's SO_RCVTIMEO, set again only when a read is left less than the
// whole of it.
type blockingConnection struct {
	fd   int
	want time.Time     // when the read in progress times out
	set  time.Duration // the socket's SO_RCVTIMEO
	// to is the last peer sent to, kept with its socket address so a
	// transfer converts it once, not once a block.
	to     *net.UDPAddr
	toSock syscall.Sockaddr
}

// listenBlocking opens a UDP socket on laddr (port 0: any) for one
// transfer.
func listenBlocking(laddr *net.UDPAddr) (*blockingConnection, error) {
	family, sa, err := sockaddr(laddr)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Socket(family, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_UDP)
	if err != nil {
		return nil, fmt.Errorf("transfer socket: %w", err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("bind transfer socket to %v: %w", laddr, err)
	}
	return &blockingConnection{fd: fd}, nil
}

// sockaddr is addr as the system calls take it, with its family.
func sockaddr(addr *net.UDPAddr) (int, syscall.Sockaddr, error) {
	if addr == nil || addr.IP == nil || addr.IP.To4() != nil {
		sa := &syscall.SockaddrInet4{}
		if addr != nil {
			sa.Port = addr.Port
			if ip4 := addr.IP.To4(); ip4 != nil {
				copy(sa.Addr[:], ip4)
			}
		}
		return syscall.AF_INET, sa, nil
	}
	if ip6 := addr.IP.To16(); ip6 != nil {
		sa := &syscall.SockaddrInet6{Port: addr.Port}
		copy(sa.Addr[:], ip6)
		if addr.Zone != "" {
			ifi, err := net.InterfaceByName(addr.Zone)
			if err != nil {
				return 0, nil, err
			}
			sa.ZoneId = uint32(ifi.Index)
		}
		return syscall.AF_INET6, sa, nil
	}
	return 0, nil, fmt.Errorf("not an IP address: %v", addr)
}

func (c *blockingConnection) sendTo(data []byte, addr *net.UDPAddr) error {
	if c.to != addr {
		_, sa, err := sockaddr(addr)
		if err != nil {
			return err
		}
		c.to, c.toSock = addr, sa
	}
	for {
		err := syscall.Sendto(c.fd, data, 0, c.toSock)
		if err != syscall.EINTR {
			return err
		}
	}
}

func (c *blockingConnection) readFrom(buffer []byte) (int, *net.UDPAddr, error) {
	for {
		left := time.Until(c.want)
		if left <= 0 {
			return 0, nil, timeoutError()
		}
		// A read the last one left short of its whole timeout (a
		// datagram from elsewhere came first) waits only what is left.
		if left < c.set-time.Millisecond || left > c.set {
			if err := c.setTimeout(left); err != nil {
				return 0, nil, err
			}
		}
		n, from, err := syscall.Recvfrom(c.fd, buffer, 0)
		switch err {
		case nil:
			return n, udpAddr(from), nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, nil, timeoutError()
		}
		return 0, nil, err
	}
}

// setTimeout sets the socket's SO_RCVTIMEO to d, at least a microsecond
// (0 would wait for ever).
func (c *blockingConnection) setTimeout(d time.Duration) error {
	if d < time.Microsecond {
		d = time.Microsecond
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	if err := syscall.SetsockoptTimeval(c.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("transfer socket timeout: %w", err)
	}
	c.set = d
	return nil
}

func udpAddr(sa syscall.Sockaddr) *net.UDPAddr {
	switch sa := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.UDPAddr{IP: net.IPv4(sa.Addr[0], sa.Addr[1], sa.Addr[2], sa.Addr[3]), Port: sa.Port}
	case *syscall.SockaddrInet6:
		ip := make(net.IP, net.IPv6len)
		copy(ip, sa.Addr[:])
		return &net.UDPAddr{IP: ip, Port: sa.Port}
	}
	return &net.UDPAddr{}
}

func timeoutError() net.Error {
	return &connectionError{error: fmt.Errorf("i/o timeout"), timeout: true, temporary: true}
}

// setDeadline makes the next reads time out after d.
func (c *blockingConnection) setDeadline(d time.Duration) error {
	c.want = time.Now().Add(d)
	if d != c.set {
		return c.setTimeout(d)
	}
	return nil
}

func (c *blockingConnection) close() {
	syscall.Close(c.fd)
}

// newTransferConnection is the connection a server's transfer sends and
// reads on.
func newTransferConnection(laddr *net.UDPAddr) (connection, error) {
	return listenBlocking(laddr)
}

// newClientConnection is the connection a client's transfer with raddr
// sends and reads on: a socket of raddr's family on any local address.
func newClientConnection(raddr *net.UDPAddr) (connection, error) {
	laddr := &net.UDPAddr{IP: net.IPv4zero}
	if raddr != nil && raddr.IP.To4() == nil {
		laddr.IP = net.IPv6zero
	}
	return listenBlocking(laddr)
}
