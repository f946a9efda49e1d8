package vbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// link is a board's end of the virtual bench's tap: Ethernet frames in and
// out, as the board's NIC sees them. It is what a boot ROM sends from and
// receives on; QEMU attaches to the same tap only once the ROM has let go
// of it (a tap takes one reader at a time).
type link struct {
	f   *os.File
	mac net.HardwareAddr
	ip  net.IP // our address once BOOTP gave one; ARP is answered for it
}

// openLink attaches to n's tap as the board with mac. The tap is opened
// inside the namespace, where its name means something.
func openLink(n *Net, mac net.HardwareAddr) (*link, error) {
	f, err := openTap(n.Name, n.Tap, unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	return &link{f: f, mac: mac}, nil
}

// openTap attaches to tap device tap in namespace netns: Ethernet frames
// without packet information or offload headers, each as the wire
// carries it.
func openTap(netns, tap string, flags int) (*os.File, error) {
	var f *os.File
	err := doIn(netns, func() error {
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|flags, 0)
		if err != nil {
			return fmt.Errorf("open /dev/net/tun: %w", err)
		}
		ifr, err := unix.NewIfreq(tap)
		if err == nil {
			ifr.SetUint16(unix.IFF_TAP | unix.IFF_NO_PI)
			err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
		}
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("attach to tap %s: %w", tap, err)
		}
		f = os.NewFile(uintptr(fd), tap)
		return nil
	})
	return f, err
}

func (l *link) Close() error { return l.f.Close() }

func (l *link) send(frame []byte) error {
	_, err := l.f.Write(frame)
	return err
}

// errTimeout is a receive that saw nothing it wanted in time.
var errTimeout = errors.New("timed out")

// recv returns the first frame match accepts before deadline, answering
// ARP requests for our address on the way (the host asks before it sends
// us anything).
func (l *link) recv(deadline time.Time, match func(frame []byte) bool) ([]byte, error) {
	buf := make([]byte, 2048)
	for {
		if err := l.f.SetReadDeadline(deadline); err != nil {
			return nil, err
		}
		n, err := l.f.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errTimeout
		}
		if err != nil {
			return nil, err
		}
		frame := buf[:n]
		if a, ok := parseARP(frame); ok && a.op == 1 && l.ip != nil && a.tpa.Equal(l.ip) {
			if err := l.send(arpFrame(2, l.mac, l.ip, a.sha, a.spa)); err != nil {
				return nil, err
			}
			continue
		}
		if match(frame) {
			return append([]byte(nil), frame...), nil
		}
	}
}

const (
	etherIPv4 = 0x0800
	etherARP  = 0x0806
)

var broadcastMAC = net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func ether(dst, src net.HardwareAddr, typ uint16, payload []byte) []byte {
	f := make([]byte, 14, 14+len(payload))
	copy(f[0:], dst)
	copy(f[6:], src)
	binary.BigEndian.PutUint16(f[12:], typ)
	return append(f, payload...)
}

// udpFrame is one UDP datagram in an IPv4 packet in an Ethernet frame. The
// UDP checksum is left out (0), as IPv4 allows and small boot ROMs do.
func udpFrame(dstMAC, srcMAC net.HardwareAddr, src, dst net.IP, sport, dport uint16, payload []byte) []byte {
	ip := make([]byte, 28, 28+len(payload))
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(28+len(payload)))
	ip[8] = 64 // TTL
	ip[9] = unix.IPPROTO_UDP
	copy(ip[12:16], src.To4())
	copy(ip[16:20], dst.To4())
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:20]))
	binary.BigEndian.PutUint16(ip[20:], sport)
	binary.BigEndian.PutUint16(ip[22:], dport)
	binary.BigEndian.PutUint16(ip[24:], uint16(8+len(payload)))
	return ether(dstMAC, srcMAC, etherIPv4, append(ip, payload...))
}

func ipChecksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}

// udpPacket is a received UDP datagram.
type udpPacket struct {
	srcMAC       net.HardwareAddr
	src, dst     net.IP
	sport, dport uint16
	payload      []byte
}

// parseUDP reads an Ethernet frame holding an unfragmented IPv4 UDP
// datagram.
func parseUDP(f []byte) (udpPacket, bool) {
	if len(f) < 14+20+8 || binary.BigEndian.Uint16(f[12:]) != etherIPv4 {
		return udpPacket{}, false
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ip[0]>>4 != 4 || ihl < 20 || total > len(ip) || total < ihl+8 || ip[9] != unix.IPPROTO_UDP {
		return udpPacket{}, false
	}
	if binary.BigEndian.Uint16(ip[6:])&0x3fff != 0 { // more fragments, or an offset
		return udpPacket{}, false
	}
	u := ip[ihl:total]
	n := int(binary.BigEndian.Uint16(u[4:]))
	if n < 8 || n > len(u) {
		return udpPacket{}, false
	}
	return udpPacket{
		srcMAC: net.HardwareAddr(f[6:12]), src: net.IP(ip[12:16]), dst: net.IP(ip[16:20]),
		sport: binary.BigEndian.Uint16(u[0:]), dport: binary.BigEndian.Uint16(u[2:]), payload: u[8:n],
	}, true
}

// arpPacket is an Ethernet/IPv4 ARP message.
type arpPacket struct {
	op       uint16
	sha, tha net.HardwareAddr
	spa, tpa net.IP
}

func arpFrame(op uint16, sha net.HardwareAddr, spa net.IP, tha net.HardwareAddr, tpa net.IP) []byte {
	a := make([]byte, 28)
	binary.BigEndian.PutUint16(a[0:], 1) // Ethernet
	binary.BigEndian.PutUint16(a[2:], etherIPv4)
	a[4], a[5] = 6, 4
	binary.BigEndian.PutUint16(a[6:], op)
	copy(a[8:], sha)
	copy(a[14:], spa.To4())
	copy(a[18:], tha)
	copy(a[24:], tpa.To4())
	dst := tha
	if op == 1 {
		dst = broadcastMAC
	}
	return ether(dst, sha, etherARP, a)
}

func parseARP(f []byte) (arpPacket, bool) {
	if len(f) < 14+28 || binary.BigEndian.Uint16(f[12:]) != etherARP {
		return arpPacket{}, false
	}
	a := f[14:]
	if binary.BigEndian.Uint16(a[0:]) != 1 || binary.BigEndian.Uint16(a[2:]) != etherIPv4 || a[4] != 6 || a[5] != 4 {
		return arpPacket{}, false
	}
	return arpPacket{
		op:  binary.BigEndian.Uint16(a[6:]),
		sha: net.HardwareAddr(a[8:14]), spa: net.IP(a[14:18]),
		tha: net.HardwareAddr(a[18:24]), tpa: net.IP(a[24:28]),
	}, true
}
