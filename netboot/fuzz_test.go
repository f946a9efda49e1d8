package netboot

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"golang.org/x/sys/unix"
)

// FuzzTFTPName asks the TFTP server's resolver for any name a client can
// send, in a tree that holds every trap: a secret beside the root, links
// out of it (absolute and relative), a FIFO, a directory. The seeds in
// testdata/fuzz/FuzzTFTPName are the names boot ROMs send (iPXE, U-Boot,
// PXE with DOS separators, pxelinux) and the classic escapes. Whatever the
// name, only a file inside the root is served, a refusal says nothing but
// "file not found" or "access violation", and the name the event shows is
// safe on a terminal.
func FuzzTFTPName(f *testing.F) {
	outside := f.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600)
	root := filepath.Join(outside, "root")
	inside := map[string]string{"vmlinuz": "kernel", "run1/initramfs.cpio": "image", "pxelinux.cfg/default": "menu"}
	for name, content := range inside {
		os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(root, name), []byte(content), 0o644)
	}
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "abs"))
	os.Symlink("../secret", filepath.Join(root, "rel"))
	os.Symlink("vmlinuz", filepath.Join(root, "run1", "kernel")) // dangling inside: run1/vmlinuz does not exist
	os.Symlink("../vmlinuz", filepath.Join(root, "run1", "up"))  // stays inside
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		f.Fatal(err)
	}
	srv, err := NewTFTP(root, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(srv.Shutdown)
	served := map[string]bool{}
	for _, c := range inside {
		served[c] = true
	}

	f.Fuzz(func(t *testing.T, name string) {
		if s := shown(resolve(name)); strings.ContainsFunc(s, unsafeRune) {
			t.Fatalf("event would show %q for %q", s, name)
		}
		file, _, err := srv.open(name, nil)
		if err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrAccess) {
				t.Fatalf("open(%q): %v: a client may only be told not found or access violation", name, err)
			}
			return
		}
		defer file.Close()
		b, err := io.ReadAll(file)
		if err != nil || !served[string(b)] {
			t.Fatalf("open(%q) served %q (%v): not a file inside the root", name, b, err)
		}
	})
}

// FuzzDHCPRequest runs the DHCP server's request handling on any packet:
// ParseRequest, then Reply as the segment's server and ProxyReply as a
// proxyDHCP server, for a plan that knows the sender's MAC (as a PC, and
// as a Raspberry Pi). The seeds in
// testdata/fuzz/FuzzDHCPRequest are DISCOVERs captured from QEMU boards'
// firmware on a tap (captured-*: iPXE's NIC ROM, U-Boot 2023.01 on arm64,
// OVMF's own PXE), a Raspberry Pi ROM's as Raspberry Pi documents it
// (documented-*, see piROMDiscover), the rpi4b-twin's ROM's (twin-rpi4b-discover,
// held to vbench's golden DISCOVER by its TestPiDiscoverIsAFuzzSeed), requests built with the library, RouterBOOT-style BOOTP
// and broken option 53s. Whatever comes in, nothing panics, and an answer is a well-formed
// BOOTREPLY to that transaction that says DHCP (option 53) exactly when the
// request did.
func FuzzDHCPRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ParseRequest(b)
		if err != nil {
			return
		}
		if req.OpCode != dhcpv4.OpcodeBootRequest {
			t.Fatalf("ParseRequest accepted op %v", req.OpCode)
		}
		plan := testPlan()
		plan.Hosts = map[string]Host{req.ClientHWAddr.String(): {IP: testBoard, BootFile: "undionly.kpxe", IPXEScript: "r1/boot.ipxe"}}
		resp, ev := Reply(req, plan)
		checkReply(t, req, resp, ev)
		// The same board known as a Raspberry Pi: its dialect's answer.
		resp, ev = Reply(req, StaticPlanPi{plan})
		checkReply(t, req, resp, ev)
		if ev.Kind == "bootp-reply" && req.Options.Has(dhcpv4.OptionDHCPMessageType) {
			t.Fatalf("a request with option 53 (% x) answered as plain BOOTP", req.Options.Get(dhcpv4.OptionDHCPMessageType))
		}
		resp, ev = ProxyReply(req, plan)
		checkReply(t, req, resp, ev)
		if resp != nil && !resp.YourIPAddr.IsUnspecified() {
			t.Fatalf("proxyDHCP handed out %v", resp.YourIPAddr)
		}
	})
}

func checkReply(t *testing.T, req, resp *dhcpv4.DHCPv4, ev Event) {
	t.Helper()
	if resp == nil {
		return
	}
	back, err := dhcpv4.FromBytes(resp.ToBytes())
	if err != nil {
		t.Fatalf("%s to %s does not parse: %v", ev.Kind, req.Summary(), err)
	}
	if back.OpCode != dhcpv4.OpcodeBootReply || back.TransactionID != req.TransactionID {
		t.Fatalf("%s: op %v xid %v, want a reply to xid %v", ev.Kind, back.OpCode, back.TransactionID, req.TransactionID)
	}
	bootp := ev.Kind == "bootp-reply"
	if has := back.Options.Has(dhcpv4.OptionDHCPMessageType); has == bootp || bootp != !req.Options.Has(dhcpv4.OptionDHCPMessageType) {
		t.Fatalf("%s: reply has option 53 %v for a request that has it %v", ev.Kind, has, req.Options.Has(dhcpv4.OptionDHCPMessageType))
	}
}
