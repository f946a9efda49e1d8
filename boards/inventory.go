package boards

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/internal/redact"
)

// An Inventory is one bench as its owner describes it in bench.yaml: the NIC
// bootbench serves on, and each board with what only that board has (its
// MAC, address, serial adapter, power switch, kernel, job).
//
//	bench:
//	  interface: enp3s0
//	  address: 198.18.5.1/24
//	boards:
//	  rb450g-1:
//	    profile: rb450g
//	    mac: "00:0c:42:12:34:56"
//	    address: 198.18.5.20
//	    console: usb:0403:6001:A50285BI
//	    power: {driver: pdudaemon, url: "http://localhost:16421", pdu: bench-pdu, port: 3}
//	    job: {bench: speed, clock: [680, 800], reps: 5}
type Inventory struct {
	Path   string
	Bench  Bench
	Boards []Board // in file order
}

// Bench is the network side of a bench.
type Bench struct {
	// Interface is the bench NIC: bootbench serves DHCP, TFTP and HTTP
	// there and nowhere else.
	Interface string
	// Address is bootbench's address on it, with the bench subnet's
	// length. It is added for a run when missing and removed after.
	Address netip.Prefix
	// Route is the route benchmark's networks on this bench; nil when
	// the bench has none.
	Route *RouteBench
}

// Board is one board: a model's profile plus what this one board has. The
// virtual qemu-* boards are Boards too (see VirtualBoard).
type Board struct {
	Name    string
	Profile Profile
	MAC     net.HardwareAddr
	// Address is the board's fixed address on the bench; invalid when it
	// gets one from another DHCP server (proxy mode).
	Address netip.Addr
	// Console is where the board's serial console is: a device path, a
	// /dev/serial/by-id/ link, or usb:VID:PID[:SERIAL]. Empty for a
	// virtual board, whose console is QEMU's.
	Console string
	Baud    int
	// Kernel is a kernel image of the inventory's choosing; empty means
	// the profile's Debian kernel.
	Kernel string
	Power  PowerSpec
	Job    Job
	// RoutePorts are the board's two routed ports for the route
	// benchmark, client side first: MACs or the board's interface
	// names. Empty when the inventory gives none.
	RoutePorts []string
	// RouteAddrs are those ports' addresses (DefaultRouteAddrs unless
	// the inventory says).
	RouteAddrs []netip.Prefix
	// OwnFirmware is a board that keeps the firmware it has (image:
	// none): bootbench powers it, reads its console and measures the
	// host's side through it, and netboots nothing.
	OwnFirmware bool
	// RouteConfigs are a board under its own firmware's route
	// configurations, in file order: the console steps (or the
	// operator's work) that put its firmware into each.
	RouteConfigs []RouteConfig
	// Serial is a Raspberry Pi's serial number, 8 lower-case hex digits:
	// its boot ROM asks for its files under <serial>/ (boot method
	// rpi-netboot). Empty for other boards.
	Serial string
	// Line is where the board is defined in its inventory, 0 if nowhere.
	Line int
}

// RouteConfig is one route configuration of a board under its own
// firmware: its name (the metrics' /<config>) and the steps that set it.
type RouteConfig struct {
	Name  string
	Steps []ConsoleStep
	Line  int
}

// RouteConfig returns the board's configuration called name.
func (b Board) RouteConfig(name string) (RouteConfig, bool) {
	for _, c := range b.RouteConfigs {
		if c.Name == name {
			return c, true
		}
	}
	return RouteConfig{}, false
}

// Virtual reports whether the board is one of QEMU's that bootbench starts.
func (b Board) Virtual() bool { return b.Power.Driver == PowerQEMU }

// PowerSpec says how a board is switched on and off.
type PowerSpec struct {
	Driver PowerDriver
	// command: shell commands. Cycle is optional (off, pause, on).
	On, Off, Cycle string
	// pdudaemon, tasmota, shelly: the service's base URL.
	URL string
	// pdudaemon: the PDU's name in pdudaemon's configuration and the port.
	PDU  string
	Port int
	// tasmota, shelly: which relay (tasmota counts from 1, shelly from 0).
	Relay int
	// Delay is the pause between off and on in a power cycle.
	Delay time.Duration
}

// Job is what `bootbench serve` runs when the board boots.
type Job struct {
	Bench  string
	Clocks []MHz
	// Reps is a count, or auto with its target interval (target_ci)
	// and most rounds (max_reps).
	Reps    Reps
	Seconds float64
	Algs    []string
	// AllowOvervoltage lets the job's clocks go above the model's safe
	// limit, with the over_voltage its profile gives (run's
	// --allow-overvoltage).
	AllowOvervoltage bool
}

// VirtualBoard is a virtual qemu-* profile as a board: QEMU is its power
// switch and its console, the virtual bench its network.
func VirtualBoard(p Profile) Board {
	mac, _ := net.ParseMAC(p.Virtual.MAC) // checked by Parse
	return Board{Name: p.Name, Profile: p, MAC: mac, Baud: p.Baud, Serial: p.Virtual.Serial, Power: PowerSpec{Driver: PowerQEMU}}
}

// InventoryPath is where the inventory is: the --inventory flag, else
// $BOOTBENCH_INVENTORY, else $XDG_CONFIG_HOME/bootbench/bench.yaml when it
// exists. "" means there is none; virtual boards need none.
func InventoryPath(flag string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("BOOTBENCH_INVENTORY"); env != "" {
		return env
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	p := filepath.Join(dir, "bootbench", "bench.yaml")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// LoadInventory reads and checks an inventory file. Its error lists every
// problem found, one line each, as file:line: what is wrong.
// Cancelling ctx (Ctrl-C) stops it between boards.
func LoadInventory(ctx context.Context, path string) (*Inventory, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load inventory %s: %w", filepath.Base(path), err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	return parseInventory(ctx, path, b)
}

// Resolve finds the board called name: a board in inv (which may be nil),
// else a virtual qemu-* board. A real board model's name is not a board:
// the inventory says which MAC, console and power switch one has.
func Resolve(name string, inv *Inventory) (Board, error) {
	if inv != nil {
		if b, ok := inv.Board(name); ok {
			return b, nil
		}
	}
	p, err := Get(name)
	if err == nil && p.Virtual != nil {
		return VirtualBoard(p), nil
	}
	if err == nil {
		return Board{}, fmt.Errorf("%s is a board model, not a board on this bench: add a board with profile: %s to bench.yaml (its MAC, console and power switch) and name that board%s", name, name, inventoryHint(inv))
	}
	return Board{}, fmt.Errorf("unknown board %q%s: %s", name, nearestBoard(name, inv), knownBoards(inv))
}

// nearestBoard is " (did you mean NAME?)" for the board or board model
// nearest to name, "" when none is near: a typo of a model (rb450gg) gets
// the model, as import's check gives it.
func nearestBoard(name string, inv *Inventory) string {
	var names []string
	if inv != nil {
		for _, b := range inv.Boards {
			names = append(names, b.Name)
		}
	}
	ps, _ := All()
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if near := Closest(name, names); near != "" {
		return " (did you mean " + near + "?)"
	}
	return ""
}

// Board returns the inventory's board called name.
func (inv *Inventory) Board(name string) (Board, bool) {
	for _, b := range inv.Boards {
		if b.Name == name {
			return b, true
		}
	}
	return Board{}, false
}

func inventoryHint(inv *Inventory) string {
	if inv == nil {
		return " (no inventory given: --inventory FILE or $BOOTBENCH_INVENTORY)"
	}
	return " (inventory " + inv.Path + ")"
}

func knownBoards(inv *Inventory) string {
	var virt []string
	ps, _ := All()
	for _, p := range ps {
		if p.Virtual != nil {
			virt = append(virt, p.Name)
		}
	}
	msg := "virtual boards: " + strings.Join(virt, ", ")
	if inv == nil {
		return msg + "; boards on a real bench come from an inventory (--inventory FILE or $BOOTBENCH_INVENTORY)"
	}
	var names []string
	for _, b := range inv.Boards {
		names = append(names, b.Name)
	}
	return fmt.Sprintf("boards in %s: %s; %s", inv.Path, strings.Join(names, ", "), msg)
}

// ParseInventory checks an inventory's text; path names it in errors.
func ParseInventory(path string, text []byte) (*Inventory, error) {
	return parseInventory(context.Background(), path, text)
}

func parseInventory(ctx context.Context, path string, text []byte) (*Inventory, error) {
	p := &inventoryParser{ctx: ctx, file: filepath.Base(path)}
	inv := &Inventory{Path: path}
	doc, err := decodeYAML(ctx, text)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("load inventory %s: %w", p.file, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", p.file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty inventory: it needs bench: and boards:", p.file)
	}
	root := doc.Content[0]
	fields := p.mapping(root, "the inventory", "bench", "boards")
	if fields != nil {
		if n := fields["bench"]; n != nil {
			inv.Bench = p.bench(n)
		} else {
			p.problem(root, "no bench: section (interface and address)")
		}
		if n := fields["boards"]; n != nil {
			inv.Boards = p.boards(n, inv.Bench)
		} else {
			p.problem(root, "no boards: section")
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load inventory %s: %w", p.file, err)
	}
	if len(p.problems) > 0 {
		sort.SliceStable(p.problems, func(i, j int) bool { return p.problems[i].line < p.problems[j].line })
		lines := make([]string, len(p.problems))
		for i, pr := range p.problems {
			lines[i] = fmt.Sprintf("%s:%d: %s", p.file, pr.line, pr.msg)
		}
		return nil, errors.New(strings.Join(lines, "\n"))
	}
	return inv, nil
}

// decodeYAML parses text into a node tree, or gives up when ctx ends:
// the parser itself cannot be interrupted, and a big inventory takes it
// seconds, so Ctrl-C is not made to wait for it.
func decodeYAML(ctx context.Context, text []byte) (yaml.Node, error) {
	type parsed struct {
		doc yaml.Node
		err error
	}
	done := make(chan parsed, 1)
	go func() {
		var doc yaml.Node
		err := yaml.Unmarshal(text, &doc)
		done <- parsed{doc, err}
	}()
	select {
	case r := <-done:
		return r.doc, r.err
	case <-ctx.Done():
		return yaml.Node{}, ctx.Err()
	}
}

type problem struct {
	line int
	msg  string
}

// inventoryParser walks the YAML tree itself rather than decoding into
// structs, so that every problem, not just the first, is reported with
// the line it is on.
type inventoryParser struct {
	ctx      context.Context
	file     string
	problems []problem
}

// problem records what is wrong at n. What the inventory says is quoted in
// part when it is long (see clip): a 64 MB field was echoed whole.
func (p *inventoryParser) problem(n *yaml.Node, format string, args ...any) {
	for i, a := range args {
		if a, ok := a.(string); ok {
			args[i] = clip(a)
		}
	}
	p.problems = append(p.problems, problem{n.Line, fmt.Sprintf(format, args...)})
}

// quoteMax is how much of a field an error quotes.
const quoteMax = 200

// clip is s cut to quoteMax bytes, at a character's start, and "…" when
// it was longer.
func clip(s string) string {
	if len(s) <= quoteMax {
		return s
	}
	cut := quoteMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// mapping returns the keys of a mapping node, reporting keys not in
// allowed and keys given twice. nil when n is not a mapping.
func (p *inventoryParser) mapping(n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.problem(n, "%s must be a mapping of fields (%s)", what, strings.Join(allowed, ", "))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case allowed != nil && !slices.Contains(allowed, k.Value):
			if near := nearest(k.Value, allowed); near != "" {
				p.problem(k, "unknown field %q in %s (did you mean %s?)", k.Value, what, near)
				out[misspelt+near] = v // its absence is then not a second problem
				continue
			}
			p.problem(k, "unknown field %q in %s (fields: %s)", k.Value, what, strings.Join(allowed, ", "))
		case out[k.Value] != nil:
			p.problem(k, "%s: field %q given twice", what, k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out
}

// misspelt marks, in a mapping's fields, a field given under a misspelt
// name: "no console" would only repeat "unknown field consloe".
const misspelt = "\x00misspelt:"

// absent reports whether a field is missing and not just misspelt.
func absent(f map[string]*yaml.Node, key string) bool {
	return f[key] == nil && f[misspelt+key] == nil
}

// nearest is the allowed name s is a typo of (one or two letters off), or "".
func nearest(s string, allowed []string) string {
	for _, a := range allowed {
		if editDistance(s, a) <= 2 && len(a) > 2 {
			return a
		}
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// scalar decodes a scalar field into v, reporting a problem if it does not fit.
func (p *inventoryParser) scalar(n *yaml.Node, what string, v any) bool {
	if n == nil {
		return false
	}
	if err := n.Decode(v); err != nil {
		bad, msg := notA(n, reflect.TypeOf(v).Elem())
		if msg == "" {
			msg = err.Error()
			if i := strings.Index(msg, "cannot unmarshal"); i >= 0 {
				msg = msg[i:]
			}
			msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", n.Line))
		}
		p.problem(bad, "%s: %s", what, msg)
		return false
	}
	return true
}

// durationType is time.Duration's, which YAML would call an int.
var durationType = reflect.TypeOf(time.Duration(0))

// notA says in the inventory's words why node n is no value of type t
// ("fast" is not a whole number), and which node is wrong (for a list,
// its first bad item); "" for what it cannot put so (YAML's own message
// is used then).
func notA(n *yaml.Node, t reflect.Type) (*yaml.Node, string) {
	switch {
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for _, item := range n.Content {
			if err := item.Decode(reflect.New(t.Elem()).Interface()); err != nil {
				return notA(item, t.Elem())
			}
		}
		return n, ""
	case n.Kind == yaml.SequenceNode:
		return n, "want one value, not a list"
	case n.Kind == yaml.MappingNode:
		return n, "want one value, not a mapping"
	}
	switch k := t.Kind(); {
	case t == durationType:
		return n, fmt.Sprintf("%q is not a duration (like 90s, 5m or 1h30m)", n.Value)
	case k >= reflect.Int && k <= reflect.Uint64:
		return n, fmt.Sprintf("%q is not a whole number", n.Value)
	case k == reflect.Float32 || k == reflect.Float64:
		return n, fmt.Sprintf("%q is not a number", n.Value)
	case k == reflect.Bool:
		return n, fmt.Sprintf("%q is not true or false", n.Value)
	}
	return n, ""
}

func (p *inventoryParser) bench(n *yaml.Node) Bench {
	var b Bench
	f := p.mapping(n, "bench", "interface", "address", "route")
	if f == nil {
		return b
	}
	if f["route"] != nil {
		b.Route = p.routeBench(f["route"])
	}
	if !p.scalar(f["interface"], "bench interface", &b.Interface) && absent(f, "interface") {
		p.problem(n, "bench: no interface (the NIC the boards are cabled to, e.g. enp3s0)")
	}
	var addr string
	if !p.scalar(f["address"], "bench address", &addr) {
		if !absent(f, "address") {
			return b
		}
		p.problem(n, "bench: no address (bootbench's address on the bench NIC with its prefix length, e.g. 198.18.5.1/24)")
		return b
	}
	pfx, err := netip.ParsePrefix(addr)
	switch {
	case err != nil:
		p.problem(f["address"], "bench address %q is not an address with a prefix length (e.g. 198.18.5.1/24)", addr)
	case !pfx.Addr().Is4():
		p.problem(f["address"], "bench address %q: bench networks are IPv4 (boot ROMs speak DHCPv4 and TFTP over IPv4)", addr)
	case pfx.Bits() > 30:
		p.problem(f["address"], "bench address %q: a /%d subnet has no room for boards", addr, pfx.Bits())
	default:
		b.Address = pfx
	}
	return b
}

var boardNameRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)

var boardFields = []string{"profile", "mac", "address", "console", "baud", "kernel", "power", "job", "route_ports", "route_addresses", "image", "route_configs", "serial"}

func (p *inventoryParser) boards(n *yaml.Node, bench Bench) []Board {
	f := p.mapping(n, "boards", nil...)
	if f == nil {
		return nil
	}
	if len(n.Content) == 0 {
		p.problem(n, "boards: none listed")
	}
	var out []Board
	macs, serials, names := map[string]string{}, map[string]string{}, map[string]bool{}
	addrs := map[netip.Addr]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if p.ctx.Err() != nil {
			return nil
		}
		k, v := n.Content[i], n.Content[i+1]
		b := p.board(k, v, bench)
		if b.MAC != nil {
			if other, dup := macs[b.MAC.String()]; dup {
				p.problem(field(v, "mac"), "board %s: MAC %s is board %s's too", b.Name, b.MAC, other)
			}
			macs[b.MAC.String()] = b.Name
		}
		// A board's name and a Pi's serial are both TFTP folders: one
		// name for two boards would serve one of them the other's files.
		if pi, dup := serials[b.Name]; dup {
			p.problem(k, "board %s: its name is board %s's serial, and both would be served from folder %s/", b.Name, pi, b.Name)
		}
		names[b.Name] = true
		if b.Serial != "" {
			if other, dup := serials[b.Serial]; dup {
				p.problem(field(v, "serial"), "board %s: serial %s is board %s's too", b.Name, b.Serial, other)
			}
			if names[b.Serial] && b.Serial != b.Name {
				p.problem(field(v, "serial"), "board %s: serial %s is a board's name too, and both would be served from folder %s/", b.Name, b.Serial, b.Serial)
			}
			serials[b.Serial] = b.Name
		}
		if b.Address.IsValid() {
			if other, dup := addrs[b.Address]; dup {
				p.problem(field(v, "address"), "board %s: address %s is board %s's too", b.Name, b.Address, other)
			}
			addrs[b.Address] = b.Name
		}
		out = append(out, b)
	}
	return out
}

// field is the value node of key in mapping n, or n itself when absent.
func field(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return n
}

func (p *inventoryParser) board(k, n *yaml.Node, bench Bench) Board {
	b := Board{Name: k.Value, Line: k.Line}
	if !boardNameRE.MatchString(b.Name) {
		p.problem(k, "board name %q: use letters, digits, '.', '_' and '-'", b.Name)
	}
	if pr, err := Get(b.Name); err == nil && pr.Virtual != nil {
		p.problem(k, "board name %q is a virtual board's; name it differently", b.Name)
	}
	what := "board " + b.Name
	f := p.mapping(n, what, boardFields...)
	if f == nil {
		return b
	}
	var profile string
	if !p.scalar(f["profile"], what+" profile", &profile) {
		if absent(f, "profile") {
			p.problem(k, "%s: no profile (see 'bootbench boards list')", what)
		}
	} else if pr, err := Get(profile); err != nil {
		p.problem(f["profile"], "%s: unknown profile %q (see 'bootbench boards list')", what, profile)
	} else if pr.Virtual != nil {
		p.problem(f["profile"], "%s: profile %s is a virtual board; real boards use a model's profile (e.g. pc-x86_64)", what, profile)
	} else {
		b.Profile = pr
	}
	b.OwnFirmware = p.image(f["image"], what)
	b.MAC = p.mac(f["mac"], k, what, absent(f, "mac") && !b.OwnFirmware)
	b.Address = p.boardAddress(f["address"], what, bench)
	if !p.scalar(f["console"], what+" console", &b.Console) || b.Console == "" {
		if absent(f, "console") {
			p.problem(k, "%s: no console (a device path, /dev/serial/by-id/..., or usb:VID:PID[:SERIAL])", what)
		}
	} else if err := checkConsoleSpec(b.Console); err != nil {
		p.problem(f["console"], "%s: %v", what, err)
	}
	b.Baud = b.Profile.Baud
	if f["baud"] != nil && p.scalar(f["baud"], what+" baud", &b.Baud) && b.Baud <= 0 {
		p.problem(f["baud"], "%s: baud %d is not a speed", what, b.Baud)
	}
	p.scalar(f["kernel"], what+" kernel", &b.Kernel)
	if f["power"] == nil {
		if absent(f, "power") {
			p.problem(k, "%s: no power (driver manual, command, pdudaemon, tasmota or shelly)", what)
		}
	} else {
		b.Power = p.power(f["power"], what)
	}
	b.Job = p.job(f["job"], what, b.Profile)
	if f["route_ports"] != nil {
		b.RoutePorts = p.routePorts(f["route_ports"], what)
		if bench.Route == nil {
			p.problem(f["route_ports"], "%s: route_ports, but the bench has no route networks (bench: route: client and server)", what)
		}
	}
	b.RouteAddrs = p.routeAddrs(f["route_addresses"], what)
	for _, a := range b.RouteAddrs {
		if b.RoutePorts != nil && bench.Address.IsValid() && bench.Address.Masked().Overlaps(a.Masked()) {
			p.problem(field(n, "route_addresses"), "%s: routed port address %s is on the bench subnet %s: give route_addresses off it", what, a, bench.Address.Masked())
		}
	}
	b.Serial = p.serial(f["serial"], k, what, b.Profile)
	b = p.firmwareFields(b, f, k, what)
	return b
}

// serial reads a Raspberry Pi's serial number, which its boot ROM puts
// before every file it asks for (boot method rpi-netboot needs it).
func (p *inventoryParser) serial(n, parent *yaml.Node, what string, pr Profile) string {
	var s string
	if !p.scalar(n, what+" serial", &s) {
		if n == nil && pr.Boot == BootRaspberryPi {
			p.problem(parent, "%s: no serial (the Pi's serial number, 8 hex digits: the last 8 of Serial in /proc/cpuinfo, or the folder its boot ROM asks for)", what)
		}
		return ""
	}
	s = strings.ToLower(s)
	switch {
	case pr.Name != "" && pr.Boot != BootRaspberryPi:
		p.problem(n, "%s: serial is for Raspberry Pi boards (boot method rpi-netboot), not profile %s", what, pr.Name)
	case !serialRE.MatchString(s):
		p.problem(n, "%s: serial %q is not 8 hex digits like 9ffefdef", what, clip(s))
	}
	return s
}

func (p *inventoryParser) mac(n, parent *yaml.Node, what string, missing bool) net.HardwareAddr {
	var s string
	if !p.scalar(n, what+" mac", &s) {
		if missing {
			p.problem(parent, "%s: no mac (the board's Ethernet address, as its bootloader sends it)", what)
		}
		return nil
	}
	mac, err := net.ParseMAC(s)
	if err != nil || len(mac) != 6 {
		p.problem(n, "%s: mac %q is not an Ethernet address like 00:0c:42:12:34:56", what, s)
		return nil
	}
	return mac
}

func (p *inventoryParser) boardAddress(n *yaml.Node, what string, bench Bench) netip.Addr {
	var s string
	if !p.scalar(n, what+" address", &s) {
		return netip.Addr{} // fine in proxy mode; a full DHCP run says so
	}
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil || !a.Is4():
		p.problem(n, "%s: address %q is not an IPv4 address", what, s)
		return netip.Addr{}
	case bench.Address.IsValid() && !bench.Address.Masked().Contains(a):
		p.problem(n, "%s: address %s is outside the bench subnet %s", what, a, bench.Address.Masked())
	case bench.Address.IsValid() && a == bench.Address.Addr():
		p.problem(n, "%s: address %s is bootbench's own (bench address)", what, a)
	case bench.Address.IsValid() && a == lastAddr(bench.Address):
		p.problem(n, "%s: address %s is the bench subnet's broadcast address", what, a)
	}
	return a
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As4()
	host := uint32(1)<<(32-p.Bits()) - 1
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]) | host
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

var usbSpecRE = regexp.MustCompile(`^usb:[0-9a-fA-F]{4}:[0-9a-fA-F]{4}(:[^:\s]+)?$`)

// checkConsoleSpec checks the form of a console spec; whether the port is
// there is for run time.
func checkConsoleSpec(s string) error {
	if strings.HasPrefix(s, "usb:") {
		if !usbSpecRE.MatchString(s) {
			return fmt.Errorf("console %q: write usb:VID:PID or usb:VID:PID:SERIAL with 4-digit hex ids (lsusb shows them)", clip(s))
		}
		return nil
	}
	if !filepath.IsAbs(s) {
		return fmt.Errorf("console %q: give an absolute device path (/dev/ttyUSB0, /dev/serial/by-id/...) or usb:VID:PID[:SERIAL]", clip(s))
	}
	return nil
}

var powerFields = map[PowerDriver][]string{
	PowerManual:    {},
	PowerCommand:   {"on", "off", "cycle", "delay"},
	PowerPDUDaemon: {"url", "pdu", "port", "delay"},
	PowerTasmota:   {"url", "relay", "delay"},
	PowerShelly:    {"url", "relay", "delay"},
}

// requiredPowerFields are what each driver cannot work without.
var requiredPowerFields = map[PowerDriver][]string{
	PowerCommand:   {"on", "off"},
	PowerPDUDaemon: {"url", "pdu", "port"},
	PowerTasmota:   {"url"},
	PowerShelly:    {"url"},
}

func (p *inventoryParser) power(n *yaml.Node, what string) PowerSpec {
	var ps PowerSpec
	raw := p.mapping(n, what+" power", "driver", "on", "off", "cycle", "url", "pdu", "port", "relay", "delay")
	if raw == nil {
		return ps
	}
	if raw["driver"] == nil {
		p.problem(n, "%s power: no driver (manual, command, pdudaemon, tasmota or shelly)", what)
		return ps
	}
	if !p.scalar(raw["driver"], what+" power driver", &ps.Driver) {
		return ps
	}
	allowed, ok := powerFields[ps.Driver]
	if !ok {
		p.problem(raw["driver"], "%s power: driver %s is for the virtual qemu-* boards; start QEMU from an inventory with driver command", what, ps.Driver)
		return ps
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value != "driver" && !slices.Contains(allowed, k.Value) && slices.Contains([]string{"on", "off", "cycle", "url", "pdu", "port", "relay", "delay"}, k.Value) {
			p.problem(k, "%s power: driver %s has no field %q (fields: %s)", what, ps.Driver, k.Value, strings.Join(allowed, ", "))
		}
	}
	for _, req := range requiredPowerFields[ps.Driver] {
		if absent(raw, req) {
			p.problem(n, "%s power: driver %s needs %s", what, ps.Driver, req)
		}
	}
	p.scalar(raw["on"], what+" power on", &ps.On)
	p.scalar(raw["off"], what+" power off", &ps.Off)
	p.scalar(raw["cycle"], what+" power cycle", &ps.Cycle)
	p.scalar(raw["url"], what+" power url", &ps.URL)
	p.scalar(raw["pdu"], what+" power pdu", &ps.PDU)
	p.scalar(raw["port"], what+" power port", &ps.Port)
	p.scalar(raw["relay"], what+" power relay", &ps.Relay)
	p.scalar(raw["delay"], what+" power delay", &ps.Delay)
	if raw["url"] != nil && !strings.HasPrefix(ps.URL, "http://") && !strings.HasPrefix(ps.URL, "https://") {
		p.problem(raw["url"], "%s power: url %q must start with http:// or https://", what, redact.Text(ps.URL))
	}
	return ps
}

// jobReps reads a job's reps, and with reps: auto its target interval
// and most rounds, which go with auto only.
func (p *inventoryParser) jobReps(f map[string]*yaml.Node, what string, j *Job) {
	var raw string
	if p.scalar(f["reps"], what+" job reps", &raw) {
		r, err := ParseReps(raw)
		if err != nil {
			p.problem(f["reps"], "%s job reps: %v", what, err)
		} else {
			j.Reps = r
		}
	}
	for _, key := range []string{"target_ci", "max_reps"} {
		if f[key] != nil && !j.Reps.Auto {
			p.problem(f[key], "%s job: %s goes with reps: auto", what, key)
			return
		}
	}
	if n := f["target_ci"]; n != nil {
		var s string
		if p.scalar(n, what+" job target_ci", &s) {
			t, err := ParsePercent(s)
			if err != nil {
				p.problem(n, "%s job target_ci: %v", what, err)
				return
			}
			j.Reps.Target = t
		}
	}
	p.scalar(f["max_reps"], what+" job max_reps", &j.Reps.Max)
	if err := j.Reps.Check(MinAutoRounds(len(j.Clocks))); err != nil {
		node := f["max_reps"]
		if f["target_ci"] != nil && !(j.Reps.Target > 0 && j.Reps.Target < 1) {
			node = f["target_ci"]
		}
		p.problem(node, "%s job: reps auto: %v", what, err)
	}
}

func (p *inventoryParser) job(n *yaml.Node, what string, pr Profile) Job {
	j := Job{Bench: benchmark.Speed, Reps: Reps{Count: 1}}
	if n == nil {
		return j
	}
	f := p.mapping(n, what+" job", "bench", "clock", "reps", "target_ci", "max_reps", "seconds", "algs", "allow_overvoltage")
	if f == nil {
		return j
	}
	p.scalar(f["allow_overvoltage"], what+" job allow_overvoltage", &j.AllowOvervoltage)
	if p.scalar(f["bench"], what+" job bench", &j.Bench) && !slices.Contains(benchmark.Served(), j.Bench) {
		p.problem(f["bench"], "%s job: unknown bench %q (%s)", what, j.Bench, strings.Join(benchmark.Served(), ", "))
	}
	if c := f["clock"]; c != nil {
		if c.Kind == yaml.ScalarNode {
			var one MHz
			if p.scalar(c, what+" job clock", &one) {
				j.Clocks = []MHz{one}
			}
		} else {
			p.scalar(c, what+" job clock", &j.Clocks)
		}
		for _, mhz := range j.Clocks {
			err := pr.CheckClock(mhz)
			if err == nil {
				err = pr.CheckOvervoltage(mhz, j.AllowOvervoltage)
			}
			if err != nil && pr.Name != "" {
				p.problem(c, "%s job: %v", what, strings.Replace(err.Error(), "--allow-overvoltage", "allow_overvoltage: true", 1))
			}
		}
	}
	p.jobReps(f, what, &j)
	if p.scalar(f["seconds"], what+" job seconds", &j.Seconds) && j.Seconds <= 0 {
		p.problem(f["seconds"], "%s job: seconds must be more than 0", what)
	}
	if a := f["algs"]; a != nil {
		if a.Kind == yaml.ScalarNode {
			var s string
			if p.scalar(a, what+" job algs", &s) {
				j.Algs = strings.Split(s, ",")
			}
		} else {
			p.scalar(a, what+" job algs", &j.Algs)
		}
	}
	return j
}
