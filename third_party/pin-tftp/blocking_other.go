//go:build !linux

package tftp

import "net"

// newTransferConnection is the connection a server's transfer sends and
// reads on: elsewhere than Linux, Go's own socket (bootbench patch: see
// blocking_linux.go).
func newTransferConnection(laddr *net.UDPAddr) (connection, error) {
	conn, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, err
	}
	return &connConnection{conn: conn}, nil
}

// newClientConnection is the connection a client's transfer sends and
// reads on.
func newClientConnection(raddr *net.UDPAddr) (connection, error) {
	return newTransferConnection(&net.UDPAddr{})
}
