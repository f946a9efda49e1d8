package tftp

import (
	"fmt"
	"net"
	"runtime"
	"syscall"
	"time"
)

// blockingConnection is a transfer's own socket, read with blocking
// system calls. A lock-step transfer waits for one ACK per block: through
// Go's network poller each wait parks the goroutine and wakes it again
// from epoll, which costs more than the round trip itself on a fast link,
// and is what a C server never pays. A blocking read on the transfer's
// goroutine waits in the kernel, the thread is woken by the datagram
// itself, and the runtime hands the processor to other goroutines
// meanwhile. The read timeout is the socket's SO_RCVTIMEO, set again only
// when a read is left less than the whole of it.
type blockingConnection struct {
	fd   int
	want time.Time     // when the read in progress times out
	set  time.Duration // the socket's SO_RCVTIMEO
	// peer is the one address a server's transfer talks to, its socket
	// connected to it: the kernel drops datagrams from elsewhere, a read
	// needs no source address and a send no destination (nor a route
	// lookup), and neither allocates. nil for a client's socket, which
	// learns the server's port from its first answer.
	peer *net.UDPAddr
	// to is the last address sent to without the connection, kept with
	// its socket address so a transfer converts it once, not once a block.
	to     *net.UDPAddr
	toSock syscall.Sockaddr
	// yielded is when the transfer's goroutine last went through the
	// scheduler (see yieldEvery).
	yielded time.Time
}

// yieldEvery is how often a transfer's goroutine yields its processor.
// Going from one system call to the next, it never passes through the
// scheduler, and after 10 ms of that the runtime's monitor thread
// (sysmon) takes it for a goroutine that keeps its processor too long:
// it preempts it, takes the processor while the goroutine waits in a
// read, and then wakes every 20 us for a while. On a busy host those
// are thousands of wakeups a second that wait for a CPU with the
// transfer's own. A yield every few milliseconds costs one wakeup of an
// idle thread that finds nothing to do.
const yieldEvery = 2 * time.Millisecond

// gosched yields the processor (a variable for tests).
var gosched = runtime.Gosched

// listenBlocking opens a UDP socket on laddr (port 0: any) for one
// transfer, connected to peer unless that is nil.
func listenBlocking(laddr, peer *net.UDPAddr) (*blockingConnection, error) {
	family, sa, err := sockaddr(laddr)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Socket(family, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_UDP)
	if err != nil {
		return nil, fmt.Errorf("transfer socket: %w", err)
	}
	c := &blockingConnection{fd: fd}
	if err := syscall.Bind(fd, sa); err != nil {
		c.close()
		return nil, fmt.Errorf("bind transfer socket to %v: %w", laddr, err)
	}
	if peer != nil {
		_, psa, err := sockaddr(peer)
		if err == nil {
			err = syscall.Connect(fd, psa)
		}
		if err != nil {
			c.close()
			return nil, fmt.Errorf("connect transfer socket to %v: %w", peer, err)
		}
		c.peer = peer
	}
	return c, nil
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
	if c.peer != nil && (addr == c.peer || addr.IP.Equal(c.peer.IP) && addr.Port == c.peer.Port) {
		return c.send(data)
	}
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

// send sends data to the connected peer. An ICMP error that came back
// for an earlier datagram (port unreachable: ECONNREFUSED) is reported on
// the socket's next call: it neither stops this datagram nor ends the
// transfer, whose retries and timeout decide, as they do for a peer that
// went silent.
func (c *blockingConnection) send(data []byte) error {
	for {
		_, err := syscall.Write(c.fd, data)
		if err != syscall.EINTR && err != syscall.ECONNREFUSED {
			return err
		}
	}
}

// recv reads a datagram and says where it came from: on a connected
// socket the peer, with no source address to convert.
func (c *blockingConnection) recv(buffer []byte) (int, *net.UDPAddr, error) {
	if c.peer != nil {
		n, err := syscall.Read(c.fd, buffer)
		return n, c.peer, err
	}
	n, from, err := syscall.Recvfrom(c.fd, buffer, 0)
	if err != nil {
		return n, nil, err
	}
	return n, udpAddr(from), nil
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
		n, from, err := c.recv(buffer)
		switch err {
		case nil:
			return n, from, nil
		case syscall.EINTR, syscall.ECONNREFUSED: // see send
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
	now := time.Now()
	if now.Sub(c.yielded) > yieldEvery {
		c.yielded = now
		gosched()
	}
	c.want = now.Add(d)
	if d != c.set {
		return c.setTimeout(d)
	}
	return nil
}

func (c *blockingConnection) close() {
	syscall.Close(c.fd)
}

// newTransferConnection is the connection a server's transfer with peer
// sends and reads on, from laddr.
func newTransferConnection(laddr, peer *net.UDPAddr) (connection, error) {
	if laddr.IP == nil && peer.IP.To4() == nil {
		laddr = &net.UDPAddr{IP: net.IPv6unspecified}
	}
	return listenBlocking(laddr, peer)
}

// newClientConnection is the connection a client's transfer with raddr
// sends and reads on, from laddr: with no address there, a socket of
// raddr's family on any local address.
func newClientConnection(laddr, raddr *net.UDPAddr) (connection, error) {
	if laddr == nil || laddr.IP == nil {
		wild := &net.UDPAddr{IP: net.IPv4zero}
		if laddr != nil {
			wild.Port = laddr.Port
		}
		if raddr != nil && raddr.IP.To4() == nil {
			wild.IP = net.IPv6unspecified
		}
		laddr = wild
	}
	return listenBlocking(laddr, nil)
}
