package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/internal/nftnl"
	"golang.org/x/sys/unix"
)

// The board's nf_tables and conntrack requests are raw netlink messages
// (package nftnl and flushConntrack): a general nf_tables library cost
// some 400 kB of image, more than the smallest routers' images can spare.
//
// The route benchmark makes the board a router between two host networks
// and lets the host drive it over the console, one configuration at a
// time:
//
//	host: bootbench route <config>   board: applies it, sends "ready"
//	(the host sends its traffic through the board)
//	host: bootbench route <next>     board: sends "counters", applies next
//	host: bootbench route done       board: sends "counters", then "done"
//
// and around each of its tests, while the board routes in a
// configuration, the host has the board sample its CPU (/proc/stat), which
// the counters then carry:
//
//	host: bootbench route cpu begin 1460/tcp-reverse
//	host: bootbench route cpu end 1460/tcp-reverse
//
// The board's own output (the raw frames) is a line per configuration
// with what its kernel counted, for the record.

// RouteModulesDir is where the image carries the kernel modules benchinit
// loads, in the order their names sort in: the route benchmark's, and a
// cpufreq driver the board's profile names (loaded before the clock is set).
const RouteModulesDir = "lib/modules/bootbench"

// routeCommand starts every line the host sends the board.
const routeCommand = "bootbench route "

// routeDone ends the benchmark.
const routeDone = "done"

// runRoute runs the route benchmark, its reports and its summary (the
// output) into out, reading the host's commands from in.
func runRoute(out *frame.Writer, p bootparam.Params, root string, in io.Reader) error {
	if err := loadModules(filepath.Join(root, RouteModulesDir)); err != nil {
		return err
	}
	pp, err := setUpPorts(p.Ports)
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(root, "proc/sys/net/ipv4/ip_forward"), "1"); err != nil {
		return fmt.Errorf("turn on forwarding: %w", err)
	}
	nft, err := nftnl.Dial()
	if err != nil {
		return fmt.Errorf("netlink to nf_tables: %w", err)
	}
	cur, before := "", counters{}
	cpu := newCPUWatch(root)
	// The conntrack table's size as each test ends, while its
	// connections are in it: an idle board's clock may run fast (QEMU's
	// -icount skips idle time), and the entries of closed connections
	// expire with it before the configuration's end.
	var ctPeak uint64
	lines := bufio.NewScanner(in)
	for lines.Scan() {
		cmd, ok := strings.CutPrefix(strings.TrimSpace(lines.Text()), routeCommand)
		if !ok {
			continue // not for us: the console may echo anything
		}
		if c, ok := strings.CutPrefix(cmd, "cpu "); ok {
			if err := cpu.command(c); err != nil {
				return err
			}
			if strings.HasPrefix(c, "end ") {
				ctPeak = max(ctPeak, readUint(filepath.Join(root, ctCountPath)))
			}
			continue
		}
		if cur != "" {
			if err := reportCounters(out, nft, root, pp, cur, before, cpu.take(), ctPeak); err != nil {
				return err
			}
		}
		if err := wgDelete(wgIface); err != nil { // the last configuration's tunnel
			return err
		}
		if cmd == routeDone {
			return nil
		}
		cmd, args, _ := strings.Cut(cmd, " ")
		if err := applyConfig(nft, rulesOf(cmd), pp); err != nil {
			return err
		}
		if err := tunnelUp(out, cmd, args); err != nil {
			return err
		}
		// What the last configuration tracked is not this one's.
		if err := flushConntrack(); err != nil {
			return err
		}
		rs, err := listRules(nft)
		if err != nil {
			return err
		}
		cur, before, ctPeak = cmd, readCounters(root, pp), 0
		out.Send(frame.Ready, frame.ReadyBody{Config: cmd, Rules: nonNil(rs.lines), Conntrack: rs.conntrack})
	}
	if err := lines.Err(); err != nil {
		return fmt.Errorf("reading the host's commands on the console: %w", err)
	}
	return errors.New("the console closed before the host said it was done")
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// reportCounters sends what the kernel counted in config since before.
func reportCounters(out *frame.Writer, nft *nftnl.Conn, root string, pp ports, config string, before counters, cpu []frame.CPUSample, ctPeak uint64) error {
	after := readCounters(root, pp)
	rs, err := listRules(nft)
	if err != nil {
		return err
	}
	c := frame.CountersBody{
		Config:           config,
		Forwarded:        since(after.forwarded, before.forwarded),
		Dropped:          since(after.discarded, before.discarded) + rs.dropped,
		ConntrackEntries: max(after.ctEntries, ctPeak),
		CPU:              cpu,
	}
	out.Send(frame.Counters, c)
	fmt.Fprintf(out, "%s: forwarded %d, dropped %d, conntrack entries %d; %d rules\n",
		config, c.Forwarded, c.Dropped, c.ConntrackEntries, len(rs.lines))
	for _, l := range rs.lines {
		fmt.Fprintf(out, "  %s\n", l)
	}
	for _, s := range cpu {
		fmt.Fprintf(out, "  cpu over %s: %.2f busy (%d of %d clock ticks)\n", s.Test, float64(s.Busy)/float64(max(1, s.Total)), s.Busy, s.Total)
	}
	return nil
}

// loadModules loads every module in dir, in name order (the image names
// them so that a module's dependencies come first). A module already in
// the kernel is fine.
func loadModules(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // a kernel with everything built in
		}
		return fmt.Errorf("kernel modules: %w", err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".ko") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("kernel module %s: %w", e.Name(), err)
		}
		err = unix.FinitModule(int(f.Fd()), "", 0)
		f.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("load kernel module %s: %w", e.Name(), err)
		}
	}
	return nil
}

// setUpPorts finds the routed ports by MAC (a NIC's driver may take a
// moment to register it), addresses them and brings them up.
func setUpPorts(want []bootparam.Port) (ports, error) {
	if len(want) != 2 {
		return ports{}, fmt.Errorf("the route benchmark needs two ports on the command line (bootbench.ports=), got %d", len(want))
	}
	var names [2]string
	var lanNet *net.IPNet
	for i, pt := range want {
		ip, n, err := net.ParseCIDR(pt.Addr)
		if err != nil || ip.To4() == nil {
			return ports{}, fmt.Errorf("port %s: address %q is not IPv4 with a prefix length", pt.MAC, pt.Addr)
		}
		ifc, err := waitInterface(pt.MAC, 10*time.Second)
		if err != nil {
			return ports{}, err
		}
		if err := setAddr(ifc.Name, ip.To4(), n.Mask); err != nil {
			return ports{}, err
		}
		names[i] = ifc.Name
		if i == 0 {
			lanNet = n
		}
	}
	return ports{lan: names[0], wan: names[1], lanNet: lanNet}, nil
}

func waitInterface(mac string, limit time.Duration) (net.Interface, error) {
	deadline := time.Now().Add(limit)
	for {
		ifs, _ := net.Interfaces()
		// The port is named by its MAC, or by the name its kernel gives it.
		if i := slices.IndexFunc(ifs, func(i net.Interface) bool { return i.HardwareAddr.String() == mac || i.Name == mac }); i >= 0 {
			return ifs[i], nil
		}
		if time.Now().After(deadline) {
			var have []string
			for _, i := range ifs {
				have = append(have, i.Name+" "+i.HardwareAddr.String())
			}
			return net.Interface{}, fmt.Errorf("no network interface %s within %s (have: %s)", mac, limit, strings.Join(have, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// setAddr gives interface name its address and brings it up, with the
// classic ioctls: the kernel adds the subnet's route itself.
func setAddr(name string, ip net.IP, mask net.IPMask) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("configure %s: %w", name, err)
	}
	defer unix.Close(fd)
	step := func(what string, req uint, set func(*unix.Ifreq) error) error {
		ifr, err := unix.NewIfreq(name)
		if err == nil {
			err = set(ifr)
		}
		if err == nil {
			err = unix.IoctlIfreq(fd, req, ifr)
		}
		if err != nil {
			return fmt.Errorf("configure %s: %s: %w", name, what, err)
		}
		return nil
	}
	if err := step("address", unix.SIOCSIFADDR, func(r *unix.Ifreq) error { return r.SetInet4Addr(ip) }); err != nil {
		return err
	}
	if err := step("netmask", unix.SIOCSIFNETMASK, func(r *unix.Ifreq) error { return r.SetInet4Addr(net.IP(mask)) }); err != nil {
		return err
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("configure %s: flags: %w", name, err)
	}
	flags := ifr.Uint16() | unix.IFF_UP
	return step("up", unix.SIOCSIFFLAGS, func(r *unix.Ifreq) error { r.SetUint16(flags); return nil })
}

// counters are the kernel's running totals a configuration's report is
// the difference of, and the conntrack table's size.
type counters struct {
	forwarded, discarded uint64
	ctEntries            uint64
}

// since is what a counter counted from before to after. One that went
// down (a NIC driver whose drop counts start again: PCnet's did on the
// RB450G twin) counted nothing that can be told, not 2^64 less a little.
func since(after, before uint64) uint64 {
	if after < before {
		return 0
	}
	return after - before
}

// readCounters reads the IP layer's forwarded and discarded datagrams
// (/proc/net/snmp), what the ports' drivers and queues dropped (sysfs),
// and the conntrack table's size.
func readCounters(root string, pp ports) counters {
	var c counters
	snmp, _ := os.ReadFile(filepath.Join(root, "proc/net/snmp"))
	ip := snmpFields(string(snmp), "Ip")
	c.forwarded = ip["ForwDatagrams"]
	c.discarded = ip["InDiscards"] + ip["OutDiscards"] + ip["OutNoRoutes"]
	for _, ifc := range []string{pp.lan, pp.wan} {
		for _, f := range []string{"rx_dropped", "tx_dropped", "rx_missed_errors", "rx_fifo_errors"} {
			c.discarded += readUint(filepath.Join(root, "sys/class/net", ifc, "statistics", f))
		}
	}
	c.ctEntries = readUint(filepath.Join(root, ctCountPath))
	return c
}

// ctCountPath is the conntrack table's size.
const ctCountPath = "proc/sys/net/netfilter/nf_conntrack_count"

func readUint(path string) uint64 {
	b, _ := os.ReadFile(path)
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// snmpFields reads one protocol's pair of lines from /proc/net/snmp:
// "Ip: Forwarding DefaultTTL ..." then "Ip: 1 64 ...".
func snmpFields(snmp, proto string) map[string]uint64 {
	var names []string
	out := map[string]uint64{}
	for _, l := range strings.Split(snmp, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != proto+":" {
			continue
		}
		if names == nil {
			names = f[1:]
			continue
		}
		for i, v := range f[1:] {
			if i < len(names) {
				out[names[i]], _ = strconv.ParseUint(v, 10, 64)
			}
		}
		break
	}
	return out
}

// flushConntrack empties the connection tracking table through ctnetlink
// (what conntrack -F does): an IPCTNL_MSG_CT_DELETE with no attributes
// deletes every entry. A kernel without conntrack has nothing to flush.
func flushConntrack() error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return fmt.Errorf("flush conntrack: netlink socket: %w", err)
	}
	defer unix.Close(fd)
	const ctnetlink, ctDelete = 1, 2 // NFNL_SUBSYS_CTNETLINK, IPCTNL_MSG_CT_DELETE
	msg := make([]byte, unix.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(msg[0:], uint32(len(msg)))
	binary.NativeEndian.PutUint16(msg[4:], ctnetlink<<8|ctDelete)
	binary.NativeEndian.PutUint16(msg[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(msg[8:], 1)    // sequence
	msg[unix.NLMSG_HDRLEN] = unix.AF_INET        // nfgenmsg: family
	msg[unix.NLMSG_HDRLEN+1] = unix.NFNETLINK_V0 // version
	if err := unix.Sendto(fd, msg, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("flush conntrack: %w", err)
	}
	buf := make([]byte, 4096)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("flush conntrack: %w", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil || len(msgs) == 0 {
		return fmt.Errorf("flush conntrack: unreadable answer: %v", err)
	}
	if m := msgs[0]; m.Header.Type == unix.NLMSG_ERROR && len(m.Data) >= 4 {
		if errno := -int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
			return fmt.Errorf("flush conntrack: %w", syscall.Errno(errno))
		}
	}
	return nil
}

// openCommands opens the console for the host's commands, without echo:
// an echoed command would land in the middle of a frame.
func openCommands() (*os.File, error) {
	f, err := os.OpenFile("/dev/console", os.O_RDONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("open the console for the host's commands: %w", err)
	}
	if t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
		t.Lflag &^= unix.ECHO | unix.ECHONL
		t.Lflag |= unix.ICANON
		t.Iflag |= unix.ICRNL
		_ = unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t)
	}
	return f, nil
}
