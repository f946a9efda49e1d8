package routenet

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// A Link is how one interface comes to be in a side's namespace.
type Link struct {
	// Tap is a tap device made in the namespace, for a virtual board's
	// NIC (the virtual bench).
	Tap string
	// Host is an existing interface of this host, moved into the
	// namespace for the run and put back as it was afterwards.
	Host string
	// Trunk and VLAN: a VLAN interface made on the host's Trunk for the
	// run (a managed switch's tagged port), moved in, deleted after.
	Trunk string
	VLAN  int
}

func (l Link) String() string {
	switch {
	case l.Tap != "":
		return "tap " + l.Tap
	case l.Trunk != "":
		return fmt.Sprintf("VLAN %d on %s", l.VLAN, l.Trunk)
	}
	return l.Host
}

// name is the link's interface name once it is in the namespace.
func (l Link) name() string {
	switch {
	case l.Tap != "":
		return l.Tap
	case l.Trunk != "":
		return vlanName(l.Trunk, l.VLAN)
	}
	return l.Host
}

// vlanName is the VLAN interface made on trunk: "eno2.101", cut to the
// kernel's 15 characters from the front so the VLAN id stays readable.
func vlanName(trunk string, id int) string {
	suffix := "." + strconv.Itoa(id)
	if len(trunk)+len(suffix) > 15 {
		trunk = trunk[:15-len(suffix)]
	}
	return trunk + suffix
}

// hostState is what a host interface was before the run moved it: what
// putting it back restores.
type hostState struct {
	Name  string   `json:"name"`
	MTU   int      `json:"mtu"`
	Up    bool     `json:"up"`
	Addrs []string `json:"addrs"` // "198.18.1.2/24", global scope only
}

// ipLink is the part of `ip -j addr show` a hostState is read from.
type ipLink struct {
	Name     string   `json:"ifname"`
	MTU      int      `json:"mtu"`
	Flags    []string `json:"flags"`
	AddrInfo []struct {
		Local     string `json:"local"`
		PrefixLen int    `json:"prefixlen"`
		Scope     string `json:"scope"`
	} `json:"addr_info"`
}

// readState reads interface name's state in namespace ns ("" for this
// process's).
func readState(ctx context.Context, ns, name string) (hostState, error) {
	out, err := ipOut(ctx, ns, "-j", "addr", "show", "dev", name)
	if err != nil {
		return hostState{}, err
	}
	var links []ipLink
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return hostState{}, fmt.Errorf("read the state of %s: unexpected output of ip -j addr: %q", name, out)
	}
	return parseState(links[0]), nil
}

func parseState(l ipLink) hostState {
	s := hostState{Name: l.Name, MTU: l.MTU, Up: slices.Contains(l.Flags, "UP")}
	for _, a := range l.AddrInfo {
		// Link-local addresses come back by themselves when the link
		// does; only the global ones are the owner's configuration.
		if a.Scope != "global" {
			continue
		}
		if p, err := netip.ParsePrefix(a.Local + "/" + strconv.Itoa(a.PrefixLen)); err == nil {
			s.Addrs = append(s.Addrs, p.String())
		}
	}
	return s
}

// restore puts the interface, back in this process's namespace, as s
// says it was: its addresses, MTU and up or down.
func (s hostState) restore(ctx context.Context) error {
	steps := [][]string{
		{"link", "set", "dev", s.Name, "down"},
		{"addr", "flush", "dev", s.Name},
		{"link", "set", "dev", s.Name, "mtu", strconv.Itoa(s.MTU)},
	}
	for _, a := range s.Addrs {
		steps = append(steps, []string{"addr", "add", a, "dev", s.Name})
	}
	if s.Up {
		steps = append(steps, []string{"link", "set", "dev", s.Name, "up"})
	}
	for _, st := range steps {
		if _, err := ipOut(ctx, "", st...); err != nil {
			return fmt.Errorf("put %s back: %w", s.Name, err)
		}
	}
	return nil
}

// ipOut runs ip with args in namespace ns ("" for this process's).
func ipOut(ctx context.Context, ns string, args ...string) ([]byte, error) {
	if ns != "" {
		args = append([]string{"-n", ns}, args...)
	}
	out, err := exec.CommandContext(ctx, "ip", args...).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return out, fmt.Errorf("ip %s: %s", strings.Join(args, " "), msg)
	}
	return out, nil
}

// self names this process's network namespace to ip link set netns: a
// link moved there is back where the run found it.
func self() string { return strconv.Itoa(os.Getpid()) }
