//go:build !linux

package tftp

import "net"

// newTransferConnection is the connection a server's transfer with peer
// sends and reads on, from laddr: elsewhere than Linux, Go's own socket
// (see blocking_linux.go).
func newTransferConnection(laddr, peer *net.UDPAddr) (connection, error) {
	conn, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, err
	}
	return &connConnection{conn: conn}, nil
}

// newClientConnection is the connection a client's transfer with raddr
// sends and reads on, from laddr.
func newClientConnection(laddr, raddr *net.UDPAddr) (connection, error) {
	conn, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, err
	}
	return &connConnection{conn: conn}, nil
}
