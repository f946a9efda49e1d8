package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/internal/nftnl"
	"github.com/bootbench/bootbench/internal/testkit/needs"
	"golang.org/x/sys/unix"
)

var update = flag.Bool("update", false, "rewrite the golden files: the batches from the encoder, the rule dumps from this host's kernel (as root), the wireguard message")

// goldenPorts are the ports the golden files' rules name.
func goldenPorts() ports {
	_, lan, _ := net.ParseCIDR("198.18.1.0/24")
	return ports{lan: "eth1", wan: "eth2", lanNet: lan}
}

// Each configuration's batch is byte for byte what the nftables library
// (github.com/google/nftables v0.3.0) sent for it, as recorded in
// testdata/apply-*.hex: a message a line, numbered from 1. The recording
// is little-endian (netlink's headers are in the host's order).
func TestConfigBatchGolden(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the golden batches are little-endian")
	}
	for _, config := range firewallConfigs() {
		t.Run(config, func(t *testing.T) {
			b, err := configBatch(config, goldenPorts())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range b.Messages(1) {
				got = append(got, hex.EncodeToString(m))
			}
			golden(t, "apply-"+config+".hex", strings.Join(got, "\n")+"\n")
		})
	}
	if _, err := configBatch("nat", goldenPorts()); err == nil || !strings.Contains(err.Error(), "unknown configuration") {
		t.Errorf("unknown configuration: %v", err)
	}
}

// firewallConfigs are the configurations with rule sets of their own: the
// wireguard configuration routes under plain's (rulesOf).
func firewallConfigs() []string {
	var out []string
	for _, c := range bootparam.RouteConfigs {
		if rulesOf(c) == c {
			out = append(out, c)
		}
	}
	return out
}

// The kernel's rule dumps (testdata/dump-*.hex, a read a line, recorded
// after applying each configuration) read back as the rule lines the
// nftables library made of the same kernel's listing (testdata/rules-*.txt).
func TestDescribeDumpGolden(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the golden dumps are little-endian")
	}
	for _, config := range firewallConfigs() {
		t.Run(config, func(t *testing.T) {
			if *update {
				recordDump(t, config)
			}
			data, err := os.ReadFile(filepath.Join("testdata", "dump-"+config+".hex"))
			if err != nil {
				t.Fatal(err)
			}
			var rules []nftnl.Rule
			done := false
			for _, l := range strings.Fields(string(data)) {
				b, err := hex.DecodeString(l)
				if err != nil {
					t.Fatal(err)
				}
				rs, d, err := nftnl.ParseDump(b)
				if err != nil {
					t.Fatal(err)
				}
				rules, done = append(rules, rs...), d
			}
			if !done {
				t.Error("the dump does not end")
			}
			got := strings.Join(describeRules(rules).lines, "\n") + "\n"
			want, err := os.ReadFile(filepath.Join("testdata", "rules-"+config+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("rules read from the dump:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// recordDump applies config in a namespace of its own and records the
// kernel's answer to the rule dump. (The rule listings stay the library's.)
func recordDump(t *testing.T, config string) {
	c := dialInNetNS(t)
	if err := applyConfig(c, config, goldenPorts()); err != nil {
		t.Fatal(err)
	}
	var fd int
	withNetNS(t, func() {
		var err error
		if fd, err = unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_NETFILTER); err != nil {
			t.Fatal(err)
		}
	})
	defer unix.Close(fd)
	if err := unix.Sendto(fd, nftnl.DumpRequest(1), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		t.Fatal(err)
	}
	var reads []string
	for {
		buf := make([]byte, 64<<10)
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, hex.EncodeToString(buf[:n]))
		if _, done, err := nftnl.ParseDump(buf[:n]); done || err != nil {
			break
		}
	}
	os.WriteFile(filepath.Join("testdata", "dump-"+config+".hex"), []byte(strings.Join(reads, "\n")+"\n"), 0o644)
}

// Each configuration, applied through netlink in a namespace of its own and
// listed back from the kernel: the rules differ, and only the conntrack
// configurations hold rules that make the kernel track connections.
func TestApplyConfig(t *testing.T) {
	c := dialInNetNS(t)
	p := goldenPorts()
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
	// A batch the kernel refuses is refused whole, and says so.
	var b nftnl.Batch
	b.AddRule(nftnl.Chain{Table: nftnl.Table{Family: unix.NFPROTO_INET, Name: "absent"}, Name: "forward"}, nil)
	if err := c.Send(&b); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a rule in no table: %v", err)
	}
	if rs, err := listRules(c); err != nil || len(rs.lines) != 1 {
		t.Errorf("after a refused batch: %v, %q", err, rs.lines)
	}
}

// dialInNetNS opens a netfilter netlink socket in a network namespace the
// test makes (and removes).
func dialInNetNS(t *testing.T) *nftnl.Conn {
	var c *nftnl.Conn
	withNetNS(t, func() {
		var err error
		if c, err = nftnl.Dial(); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// withNetNS runs f on a thread in the test's network namespace.
func withNetNS(t *testing.T, f func()) {
	needs.Root(t, "applying rule sets needs root (a network namespace)")
	ns := "bootbench-rules-" + strings.NewReplacer("/", "-").Replace(t.Name())
	if _, err := os.Stat("/run/netns/" + ns); err != nil {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add: %v: %s", err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	target, err := os.Open("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	home, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			panic("cannot return to the test's network namespace: " + err.Error())
		}
	}()
	f()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(got), want) {
		t.Errorf("%s differs:\n got %s\nwant %s", name, got, want)
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
