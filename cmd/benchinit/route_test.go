//go:build !mips && !mipsle

package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/google/nftables"
)

// Each configuration, applied through netlink in a namespace of its own and
// listed back from the kernel: the rules differ, and only the conntrack
// configurations hold rules that make the kernel track connections.
func TestApplyConfig(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("BOOTBENCH_E2E") == "1" {
			t.Fatal("applying rule sets needs root (a network namespace)")
		}
		t.Skip("needs root for a network namespace; BOOTBENCH_E2E=1 makes this a failure")
	}
	ns := "bootbench-rules-test"
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	f, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(f.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	_, lan, _ := net.ParseCIDR("198.18.1.0/24")
	p := ports{lan: "eth1", wan: "eth2", lanNet: lan}
	tests := []struct {
		config    string
		rules     int
		conntrack bool
		has       string
	}{
		{bootparam.ConfigStateful, 4, true, "ct state & 06000000 != 00000000 counter packets 0 accept"},
		{bootparam.ConfigPlain, 0, false, ""},
		{bootparam.ConfigFirewall, 7, false, "meta iifname == \"eth1\" meta oifname == \"eth2\" meta nfproto == 02 payload @1,12,4 & ffffff00 == c6120100 counter packets 0 accept"},
		{bootparam.ConfigConntrack, 1, true, "ct state & 08000000 != 00000000 counter packets 0"},
	}
	for _, tt := range tests {
		if err := applyConfig(c, tt.config, p); err != nil {
			t.Fatalf("%s: %v", tt.config, err)
		}
		rs, err := listRules(c)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.lines) != tt.rules || rs.conntrack != tt.conntrack {
			t.Errorf("%s: %d rules, conntrack %v; want %d, %v:\n%s", tt.config, len(rs.lines), rs.conntrack, tt.rules, tt.conntrack, strings.Join(rs.lines, "\n"))
		}
		if tt.has != "" && !strings.Contains(strings.Join(rs.lines, "\n"), tt.has) {
			t.Errorf("%s: no rule %q in:\n%s", tt.config, tt.has, strings.Join(rs.lines, "\n"))
		}
	}
	if err := applyConfig(c, "nat", p); err == nil || !strings.Contains(err.Error(), "unknown configuration") {
		t.Errorf("unknown configuration: %v", err)
	}
}

func TestCounterFiles(t *testing.T) {
	snmp := "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos InDiscards InDelivers OutRequests OutDiscards OutNoRoutes\n" +
		"Ip: 1 64 1000 0 0 900 0 3 100 50 2 1\n" +
		"Icmp: InMsgs InErrors\nIcmp: 5 0\n"
	ip := snmpFields(snmp, "Ip")
	if ip["ForwDatagrams"] != 900 || ip["InDiscards"] != 3 || ip["OutDiscards"] != 2 || ip["OutNoRoutes"] != 1 {
		t.Errorf("snmp Ip: %v", ip)
	}
}
