// Package routenet is the route benchmark's two host networks: a network
// namespace per side of the board, each holding one interface cabled to one
// of the board's routed ports, and a direct pair between the two for the
// baseline with the board bypassed.
//
// A namespace per side is what keeps the host from routing between its own
// two interfaces: with both in one namespace the kernel would hand the
// client's traffic to the server's interface itself and never send it
// through the board. On the virtual bench each side's interface is a tap
// made for the board's NIC; on a real bench it is a host NIC (or a VLAN on a
// trunk) that exists before the run, moved in for the run and put back
// afterwards with its addresses, MTU and up or down as they were.
//
//	n, err := routenet.New(ctx, cacheDir, spec, note)
//	defer n.Close()
//	figs, err := n.Sweep(ctx, route.Path{Config: "plain"}, mark)
//
// A run killed before it could put things back leaves a record in the
// cache; Sweep, called by the next run, puts the interfaces back from it
// and deletes what the killed run made.
package routenet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bootbench/bootbench/adapters/route"
	"github.com/bootbench/bootbench/internal/owner"
)

// NamePrefix starts the namespaces this package makes.
const NamePrefix = "bootbench-rt-"

// The defaults: RFC 2544's benchmarking range, never anyone's network.
var (
	DefaultBoardClient = netip.MustParsePrefix("198.18.1.1/24")
	DefaultBoardServer = netip.MustParsePrefix("198.18.2.1/24")
	directClientAddr   = netip.MustParsePrefix("198.18.3.1/24")
	directServerAddr   = netip.MustParsePrefix("198.18.3.2/24")
)

// veth names of the direct pair when the bench has no cable of its own
// for the baseline.
const (
	vethClient = "bbdir0"
	vethServer = "bbdir1"
)

// Side is one side of the board: the host interface cabled to a board
// port, and the board port's address (the host's gateway to the other
// side).
type Side struct {
	Link  Link
	Board netip.Prefix
	// Port names the board's port for its kernel command line: a MAC
	// or an interface name.
	Port string
}

// Spec is what to set up.
type Spec struct {
	Client, Server Side
	// Direct is the baseline's two interfaces, client side first: host
	// NICs cabled to each other. Zero: a veth pair between the sides.
	Direct [2]Link
	Plan   route.Plan
}

// Net is the two sides, set up.
type Net struct {
	spec           Spec
	Client, Server string // namespace names
	record         string
	rec            record
}

// record is what a killed run's successor needs to undo this one.
type record struct {
	Namespaces []string    `json:"namespaces"`
	Moved      []movedLink `json:"moved"`
	// HostNetns is the network namespace the run took its interfaces
	// from (/proc/self/ns/net's link, "net:[4026531840]"): only a
	// bootbench in that namespace can put them back by their names.
	HostNetns string `json:"host_netns,omitempty"`
}

// movedLink is a host interface moved into a namespace: the VLAN it is,
// when the run made it, or its state to restore.
type movedLink struct {
	Netns string    `json:"netns"`
	State hostState `json:"state"`
	Made  bool      `json:"made"` // a VLAN the run made: deleted, not restored
}

// New sets the two sides up. note hears, a line each, what it changed on
// the host.
func New(ctx context.Context, cacheDir string, spec Spec, note func(string)) (_ *Net, err error) {
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("the route benchmark's networks need the ip command (Debian package iproute2): %w", err)
	}
	if spec.Direct[0] == (Link{}) {
		if _, err := exec.LookPath("ethtool"); err != nil {
			return nil, fmt.Errorf("the route benchmark's direct baseline needs ethtool (Debian package ethtool): %w", err)
		}
	}
	n := &Net{spec: spec}
	if err := n.claim(cacheDir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			n.Close() // what was made so far
		}
	}()
	for _, ns := range []*string{&n.Client, &n.Server} {
		if *ns, err = n.namespace(ctx); err != nil {
			return nil, err
		}
	}
	if err := n.side(ctx, n.Client, spec.Client, spec.Server.Board, note); err != nil {
		return nil, err
	}
	if err := n.side(ctx, n.Server, spec.Server, spec.Client.Board, note); err != nil {
		return nil, err
	}
	if err := n.direct(ctx, note); err != nil {
		return nil, err
	}
	return n, nil
}

// claim makes the run's record: which process owns what it makes.
func (n *Net) claim(cacheDir string) error {
	var b [4]byte
	rand.Read(b[:])
	n.record = filepath.Join(cacheDir, "routenet-"+hex.EncodeToString(b[:]))
	n.rec.HostNetns = hostNetns()
	if err := os.MkdirAll(n.record, 0o755); err != nil {
		return fmt.Errorf("route networks: %w", err)
	}
	if err := n.save(); err != nil {
		return err
	}
	if err := owner.Claim(n.record, "route networks"); err != nil {
		os.RemoveAll(n.record)
		return fmt.Errorf("route networks: %w", err)
	}
	return nil
}

// save writes the record as it stands, before each change it records is
// made, so a run killed at any point leaves what undoes it.
func (n *Net) save() error {
	b, _ := json.Marshal(n.rec)
	tmp := filepath.Join(n.record, "state.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("route networks: %w", err)
	}
	return os.Rename(tmp, filepath.Join(n.record, "state.json"))
}

func (n *Net) namespace(ctx context.Context) (string, error) {
	var b [4]byte
	rand.Read(b[:])
	name := NamePrefix + hex.EncodeToString(b[:])
	n.rec.Namespaces = append(n.rec.Namespaces, name)
	if err := n.save(); err != nil {
		return "", err
	}
	if _, err := ipOut(ctx, "", "netns", "add", name); err != nil {
		return "", fmt.Errorf("create a network namespace (needs root): %w", err)
	}
	_, err := ipOut(ctx, name, "link", "set", "lo", "up")
	return name, err
}

// side brings the side's link into namespace ns with the host's address on
// the board port's subnet and a route to the other side through the board.
func (n *Net) side(ctx context.Context, ns string, s Side, other netip.Prefix, note func(string)) error {
	host, err := HostAddr(s.Board)
	if err != nil {
		return err
	}
	if err := n.bring(ctx, ns, s.Link, note); err != nil {
		return err
	}
	dev := s.Link.name()
	for _, st := range [][]string{
		{"addr", "add", host.String(), "dev", dev},
		{"link", "set", "dev", dev, "up"},
		{"route", "add", other.Masked().String(), "via", s.Board.Addr().String(), "dev", dev},
	} {
		if _, err := ipOut(ctx, ns, st...); err != nil {
			return fmt.Errorf("set up the route benchmark's networks: %w", err)
		}
	}
	return nil
}

// bring puts link l into namespace ns: makes the tap there, or moves the
// host interface (or a VLAN made on its trunk) in, recording first what
// undoes it.
func (n *Net) bring(ctx context.Context, ns string, l Link, note func(string)) error {
	if l.Tap != "" {
		_, err := ipOut(ctx, ns, "tuntap", "add", "dev", l.Tap, "mode", "tap")
		return err
	}
	name, made := l.Host, false
	if l.Trunk != "" {
		name, made = vlanName(l.Trunk, l.VLAN), true
		if _, err := ipOut(ctx, "", "link", "add", "link", l.Trunk, "name", name, "type", "vlan", "id", fmt.Sprint(l.VLAN)); err != nil {
			if strings.Contains(err.Error(), "Unknown device type") {
				return fmt.Errorf("make VLAN %d on %s: this host's kernel has no 802.1Q VLANs (module 8021q)", l.VLAN, l.Trunk)
			}
			return fmt.Errorf("make VLAN %d on %s: %w", l.VLAN, l.Trunk, err)
		}
		note(fmt.Sprintf("made %s (VLAN %d on %s); it is deleted afterwards", name, l.VLAN, l.Trunk))
	}
	st, err := readState(ctx, "", name)
	if err != nil {
		return fmt.Errorf("route network interface %s: %w", name, err)
	}
	n.rec.Moved = append(n.rec.Moved, movedLink{Netns: ns, State: st, Made: made})
	if err := n.save(); err != nil {
		return err
	}
	if _, err := ipOut(ctx, "", "link", "set", "dev", name, "netns", ns); err != nil {
		return fmt.Errorf("move %s into the route benchmark's namespace: %w", name, err)
	}
	if !made {
		note(fmt.Sprintf("moved %s (%s) into namespace %s for the run; it is put back afterwards", name, describe(st), ns))
	}
	return nil
}

// direct makes the baseline's path between the two namespaces.
func (n *Net) direct(ctx context.Context, note func(string)) error {
	d := n.spec.Direct
	if d[0] == (Link{}) {
		if _, err := ipOut(ctx, "", "link", "add", vethClient, "netns", n.Client, "type", "veth", "peer", "name", vethServer, "netns", n.Server); err != nil {
			return fmt.Errorf("make the direct baseline's veth pair: %w", err)
		}
		d = [2]Link{{Tap: vethClient}, {Tap: vethServer}}
	} else {
		for i, ns := range []string{n.Client, n.Server} {
			if err := n.bring(ctx, ns, d[i], note); err != nil {
				return err
			}
		}
	}
	for i, ns := range []string{n.Client, n.Server} {
		dev := d[i].name()
		addr := []netip.Prefix{directClientAddr, directServerAddr}[i]
		for _, st := range [][]string{{"addr", "add", addr.String(), "dev", dev}, {"link", "set", "dev", dev, "up"}} {
			if _, err := ipOut(ctx, ns, st...); err != nil {
				return fmt.Errorf("set up the direct baseline: %w", err)
			}
		}
	}
	if n.spec.Direct[0] == (Link{}) {
		return n.vethOffloadsOff(ctx)
	}
	return nil
}

// vethOffloadsOff: a veth pair hands whole 64 KiB segments across unless
// told not to, and the baseline would not carry packets of the size under
// test, as the board's ports do.
func (n *Net) vethOffloadsOff(ctx context.Context) error {
	for _, d := range [][2]string{{n.Client, vethClient}, {n.Server, vethServer}} {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", d[0], "ethtool", "-K", d[1], "tso", "off", "gso", "off", "gro", "off").CombinedOutput()
		if err != nil {
			return fmt.Errorf("turn off offloads on %s: %w: %s", d[1], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// Close puts every moved interface back, deletes what the run made, and
// the record.
func (n *Net) Close() error {
	err := undo(context.Background(), n.rec)
	if err == nil {
		os.RemoveAll(n.record)
	}
	return err
}

// undo puts back what rec says was moved and deletes its namespaces: a
// tap or veth made in one goes with it.
func undo(ctx context.Context, rec record) error {
	var errs []error
	for _, m := range rec.Moved {
		if err := putBack(ctx, m); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ns := range rec.Namespaces {
		if _, err := os.Stat(filepath.Join("/run/netns", ns)); err != nil {
			continue
		}
		if _, err := ipOut(ctx, "", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// putBack moves one interface back to this process's namespace, where the
// run found it, and restores it (or deletes the VLAN the run made). An
// interface already back (the move never happened) is restored all the
// same.
func putBack(ctx context.Context, m movedLink) error {
	name := m.State.Name
	if _, err := ipOut(ctx, m.Netns, "link", "show", "dev", name); err == nil {
		if _, err := ipOut(ctx, m.Netns, "link", "set", "dev", name, "netns", self()); err != nil {
			return fmt.Errorf("move %s back out of namespace %s: %w", name, m.Netns, err)
		}
	}
	if m.Made {
		if _, err := ipOut(ctx, "", "link", "show", "dev", name); err != nil {
			return nil
		}
		_, err := ipOut(ctx, "", "link", "del", "dev", name)
		return err
	}
	return m.State.restore(ctx)
}

// Sweep undoes what runs killed before they could left, and says what it
// put back, a line each.
func Sweep(cacheDir string) []string {
	var done []string
	for _, o := range owner.Orphans(filepath.Join(cacheDir, "routenet-*")) {
		b, err := os.ReadFile(filepath.Join(o.Dir, "state.json"))
		var rec record
		if err != nil || json.Unmarshal(b, &rec) != nil {
			continue
		}
		if rec.HostNetns != "" && rec.HostNetns != hostNetns() {
			// Its interfaces' names are another namespace's: "lan0" here
			// is not the lan0 it moved. Its namespaces go, and with them
			// what it made; a host NIC in one returns to the host's first
			// namespace, as the kernel returns it.
			rec.Moved = nil
		}
		if err := undo(context.Background(), rec); err != nil {
			done = append(done, fmt.Sprintf("could not undo a killed run's route networks: %v", err))
			continue
		}
		os.RemoveAll(o.Dir)
		for _, m := range rec.Moved {
			done = append(done, "put back "+m.State.Name+" ("+describe(m.State)+")")
		}
		for _, ns := range rec.Namespaces {
			done = append(done, "removed namespace "+ns)
		}
	}
	return done
}

// HostAddr is the host's address on a board port's subnet: the subnet's
// first address that is not the board's.
func HostAddr(board netip.Prefix) (netip.Prefix, error) {
	if !board.Addr().Is4() || board.Bits() > 30 {
		return netip.Prefix{}, fmt.Errorf("board port address %s: want IPv4 on a subnet of at least 4 addresses", board)
	}
	a := board.Masked().Addr().Next()
	if a == board.Addr() {
		a = a.Next()
	}
	return netip.PrefixFrom(a, board.Bits()), nil
}

// describe is a host interface's state in a few words.
func describe(s hostState) string {
	state := "down"
	if s.Up {
		state = "up"
	}
	addrs := "no address"
	if len(s.Addrs) > 0 {
		addrs = strings.Join(s.Addrs, " ")
	}
	return fmt.Sprintf("%s, %s, mtu %d", state, addrs, s.MTU)
}

// hostNetns names this process's network namespace ("" where /proc
// cannot tell).
func hostNetns() string {
	ns, _ := os.Readlink("/proc/self/ns/net")
	return ns
}
