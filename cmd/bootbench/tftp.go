package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/netboot"
)

const tftpSynopsis = "tftp --root DIR --listen ADDR"

// cmdTFTP serves a directory read-only by TFTP until interrupted: bootbench's
// own TFTP server, confined and capped as it is in a run, for a board booted
// by hand or for measuring it against other servers.
func cmdTFTP(_ context.Context, args []string) error {
	fs := newCommand("tftp", tftpSynopsis, "Serves the files under DIR, read-only, by TFTP (RFC 1350 with blksize,\n"+
		"tsize and windowsize) until Ctrl-C, and prints one line per transfer\n"+
		"with the options it negotiated. Names are\n"+
		"confined to DIR (no .., no symlinks out); only regular files are served;\n"+
		"a client gets at most 8 transfers at once, all clients 64; a transfer\n"+
		"is cut (and its line says so) once it has taken 15 s plus its size at\n"+
		"8 KiB/s (a 512-byte block every 62 ms).\n\n"+
		"  bootbench tftp --root /srv/tftp --listen 198.18.5.1       # port 69: needs root\n"+
		"  bootbench tftp --root . --listen 127.0.0.1:6969\n"+
		"  curl -o vmlinuz --tftp-blksize 1468 tftp://127.0.0.1:6969/vmlinuz")
	root := fs.String("root", "", "the directory to serve (required)")
	listen := fs.String("listen", "", "IP[:PORT] to serve on (required; port 69 when left out, 0 for any free port)")
	if err := fs.parse(args); err != nil {
		return err
	}
	addr, err := tftpAddr(*root, *listen)
	if err != nil {
		return err
	}
	srv, err := netboot.NewTFTP(*root, transferLine(os.Stdout))
	if err != nil {
		return fmt.Errorf("tftp: %w", err)
	}
	conn, err := net.ListenPacket("udp", addr.String())
	if err != nil {
		srv.Shutdown()
		return fmt.Errorf("tftp: %w%s", err, listenHint(err))
	}
	// The command counts its own signals, as serve does: main's context
	// ends at the first and cannot tell a second from it.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(conn) }()
	fmt.Fprintf(os.Stderr, "bootbench tftp: serving %s read-only on %s; Ctrl-C stops\n", *root, conn.LocalAddr())
	select {
	case <-sigs:
	case err := <-served: // only at start: the address is not one it can serve on
		srv.Shutdown()
		return fmt.Errorf("tftp: serve on %s: %w", addr, err)
	}
	fmt.Fprintln(os.Stderr, "bootbench tftp: stopping: transfers in flight end at their next block or retry (Ctrl-C again to exit now)")
	stopped := make(chan struct{})
	go func() { srv.Shutdown(); <-served; close(stopped) }()
	select {
	case <-stopped:
		return &exitError{code: 130, err: errors.New("tftp: interrupted; stopped")}
	case <-sigs:
		return &exitError{code: 130, err: errors.New("tftp: interrupted again; exiting without waiting for transfers in flight")}
	}
}

// tftpAddr checks the flags and says where to listen.
func tftpAddr(root, listen string) (netip.AddrPort, error) {
	if root == "" || listen == "" {
		return netip.AddrPort{}, usageErr("tftp: --root DIR and --listen ADDR are both required (usage: bootbench %s)", tftpSynopsis)
	}
	switch st, err := os.Stat(root); {
	case errors.Is(err, os.ErrNotExist):
		return netip.AddrPort{}, usageErr("tftp: --root %s does not exist", root)
	case err != nil:
		return netip.AddrPort{}, usageErr("tftp: --root %s: %v", root, unwrapPathErr(err))
	case !st.IsDir():
		return netip.AddrPort{}, usageErr("tftp: --root %s is not a directory", root)
	}
	if ap, err := netip.ParseAddrPort(listen); err == nil {
		return ap, nil
	}
	if a, err := netip.ParseAddr(listen); err == nil {
		return netip.AddrPortFrom(a, 69), nil
	}
	return netip.AddrPort{}, usageErr("tftp: --listen %q is not IP[:PORT] (e.g. 198.18.5.1 or 127.0.0.1:6969)", listen)
}

// listenHint says what to do about the usual reasons a port cannot be had.
func listenHint(err error) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return " (another TFTP server holds the port: dnsmasq, tftpd-hpa, a bootbench run?)"
	case errors.Is(err, syscall.EACCES):
		return " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return " (the address is not on this host)"
	}
	return ""
}

// transferLine prints one line per transfer: when, to whom, which file,
// and how many bytes at what rate, or why it failed.
func transferLine(w io.Writer) netboot.Reporter {
	var mu sync.Mutex
	return func(e netboot.Event) {
		mu.Lock()
		defer mu.Unlock()
		who := "-"
		if e.IP != nil {
			who = e.IP.String()
		}
		at := e.Time.Format("15:04:05")
		if e.Err != nil {
			fmt.Fprintf(w, "%s %s %s: %v\n", at, who, e.File, e.Err)
			return
		}
		rate := float64(e.Bytes) / max(e.Duration.Seconds(), 1e-6) / (1 << 20)
		opts := ""
		if e.Options != "" {
			opts = " " + e.Options
		}
		fmt.Fprintf(w, "%s %s %s %s bytes in %s (%.1f MiB/s)%s\n", at, who, e.File,
			strconv.FormatInt(e.Bytes, 10), e.Duration.Round(time.Millisecond), rate, opts)
	}
}
