package harness

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/bootbench/bootbench/internal/vbench"
	"github.com/bootbench/bootbench/netboot"
)

// startServers runs DHCP, TFTP and HTTP for one board inside n, serving
// root. The returned stop ends all three and waits for them.
func startServers(n *vbench.Net, root string, plan netboot.Planner, report netboot.Reporter) (stop func(), err error) {
	tftpSrv, err := netboot.NewTFTP(root, report)
	if err != nil {
		return nil, err
	}
	httpSrv, err := netboot.NewHTTP(root, report)
	if err != nil {
		tftpSrv.Shutdown()
		return nil, err
	}
	var dhcpConn, tftpConn net.PacketConn
	var httpL net.Listener
	var ra *netboot.RA
	closeAll := func() {
		if dhcpConn != nil {
			dhcpConn.Close()
		}
		if tftpConn != nil {
			tftpConn.Close()
		}
		if httpL != nil {
			httpL.Close()
		}
	}
	err = n.Do(func() error {
		var err error
		if dhcpConn, err = netboot.ListenDHCP(n.Tap); err != nil {
			return err
		}
		if tftpConn, err = net.ListenPacket("udp4", net.JoinHostPort(n.HostIP.String(), "69")); err != nil {
			return fmt.Errorf("listen for TFTP: %w", err)
		}
		if httpL, err = net.Listen("tcp4", net.JoinHostPort(n.HostIP.String(), "80")); err != nil {
			return fmt.Errorf("listen for HTTP: %w", err)
		}
		ra, err = netboot.ListenRA(n.Tap)
		return err
	})
	if err != nil {
		closeAll()
		tftpSrv.Shutdown()
		httpSrv.Shutdown()
		return nil, fmt.Errorf("start servers: %w", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(4)
	go func() { defer wg.Done(); ra.Serve(ctx) }()
	go func() { defer wg.Done(); netboot.ServeDHCP(ctx, dhcpConn, plan, report) }()
	go func() { defer wg.Done(); httpSrv.Serve(httpL) }()
	// pin/tftp opens a socket per transfer in its serving goroutine, so
	// that goroutine must live in the namespace.
	if err := n.Go(func() { defer wg.Done(); tftpSrv.Serve(tftpConn) }); err != nil {
		wg.Done()
		tftpConn.Close()
	}
	return func() {
		cancel()
		tftpSrv.Shutdown()
		httpSrv.Shutdown()
		dhcpConn.Close()
		wg.Wait()
	}, err
}
