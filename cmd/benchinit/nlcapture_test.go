//go:build !mips && !mipsle

package main

import (
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/google/nftables"
	"github.com/mdlayher/netlink"
)

// TestCaptureNetlink records what the nftables library sends to apply each
// configuration (a hex line a message, sequence numbers counted from 1),
// and the rules it lists back from a kernel, as golden files.
func TestCaptureNetlink(t *testing.T) {
	if os.Getenv("BOOTBENCH_CAPTURE") != "1" {
		t.Skip("set BOOTBENCH_CAPTURE=1 to record the golden files")
	}
	_, lan, _ := net.ParseCIDR("198.18.1.0/24")
	p := ports{lan: "eth1", wan: "eth2", lanNet: lan}
	ns := "bootbench-capture"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	f, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	for _, config := range bootparam.RouteConfigs {
		var lines []string
		rec := func(req []netlink.Message) ([]netlink.Message, error) {
			if len(req) == 0 {
				return []netlink.Message{{Header: netlink.Header{Type: netlink.Error}, Data: make([]byte, 20)}}, nil
			}
			for _, m := range req {
				m.Header.Sequence = uint32(len(lines) + 1)
				m.Header.PID = 0
				b, err := m.MarshalBinary()
				if err != nil {
					return nil, err
				}
				lines = append(lines, hex.EncodeToString(b))
			}
			return nil, nil
		}
		c, err := nftables.New(nftables.WithTestDial(rec))
		if err != nil {
			t.Fatal(err)
		}
		if err := applyConfig(c, config, p); err != nil {
			t.Fatal(err)
		}
		write(t, "apply-"+config+".hex", strings.Join(lines, "\n")+"\n")
		if err := applyConfig(real, config, p); err != nil {
			t.Fatal(err)
		}
		rs, err := listRules(real)
		if err != nil {
			t.Fatal(err)
		}
		write(t, "rules-"+config+".txt", strings.Join(rs.lines, "\n")+"\n")
	}
}

func write(t *testing.T, name, data string) {
	if err := os.WriteFile(filepath.Join("testdata", name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
