// Package netboot serves the network boot of bench boards: DHCP and plain
// BOOTP (RouterBOOT) with a fixed address per known MAC, and a read-only TFTP
// server confined to one directory.
//
// The servers know nothing of boards or runs. They ask a Planner what a MAC
// gets and report what they did as Events:
//
//	plan := netboot.StaticPlan{Server: ip, Mask: mask, Hosts: map[string]netboot.Host{
//		"52:54:00:12:34:56": {IP: boardIP, BootFile: "pxelinux.0", IPXEScript: "run/boot.ipxe"},
//	}}
//	conn, _ := netboot.ListenDHCP("tap0")
//	go netboot.ServeDHCP(ctx, conn, plan, report)
package netboot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/server4"
	"github.com/insomniacslk/dhcp/iana"
)

// Client is what a request says about the machine asking.
type Client struct {
	MAC         net.HardwareAddr
	BOOTP       bool   // plain RFC 951 BOOTP: no DHCP message type
	IPXE        bool   // user class "iPXE": already running iPXE, wants a script
	VendorClass string // option 60, e.g. "PXEClient:Arch:00000", "Mips_boot"
	ClientArch  string // option 93 as IANA names it, e.g. "Intel x86PC", "EFI x86-64"
	// Arch is the first architecture of option 93, when HasArch: which
	// iPXE binary a firmware PXE client can run.
	Arch    iana.Arch
	HasArch bool
}

// ClientKind is the boot client a request comes from, read off the request:
// each kind speaks its own dialect.
type ClientKind string

// The kinds of boot client.
const (
	ClientPXE        ClientKind = "pxe"        // firmware PXE (vendor class PXEClient), not yet iPXE
	ClientIPXE       ClientKind = "ipxe"       // iPXE (user class iPXE)
	ClientUBoot      ClientKind = "u-boot"     // U-Boot (vendor class U-Boot.<arch>)
	ClientRouterBOOT ClientKind = "routerboot" // MikroTik RouterBOOT in DHCP mode (vendor class Mips_boot)
	ClientBOOTP      ClientKind = "bootp"      // plain BOOTP: RouterBOOT by default, or any RFC 951 client
	ClientDHCP       ClientKind = "dhcp"       // any other DHCP client (CFE, an operating system)
)

// Kind says which boot client c is. iPXE says PXEClient too, and U-Boot
// built with PXE support may: the more specific mark wins.
func (c Client) Kind() ClientKind {
	switch {
	case c.BOOTP:
		return ClientBOOTP
	case c.IPXE:
		return ClientIPXE
	case strings.HasPrefix(c.VendorClass, "U-Boot"), c.HasArch && (c.Arch == iana.UBOOT_ARM32 || c.Arch == iana.UBOOT_ARM64):
		return ClientUBoot
	case c.VendorClass == "Mips_boot":
		return ClientRouterBOOT
	case strings.HasPrefix(c.VendorClass, pxeClient):
		return ClientPXE
	}
	return ClientDHCP
}

// Offer is what a known client gets.
type Offer struct {
	IP       net.IP
	Mask     net.IPMask
	Server   net.IP // our address: siaddr, server identifier, TFTP server
	BootFile string // header "file" and option 67; none for a Raspberry Pi
	// RaspberryPi answers in the Raspberry Pi ROM's dialect (see
	// raspberryPiOptions): the planner knows the board by its MAC.
	RaspberryPi bool
}

// A Booter decides what each machine gets when it netboots, in its own
// dialect: the boot file its DHCP or BOOTP answer names (Plan), and every
// file it then fetches by TFTP or HTTP (Open). pixiecore's Booter is the
// model: the servers ask one Booter and know nothing of boards or runs.
type Booter interface {
	Planner
	Files
}

// Planner decides what a client gets. ok is false for a MAC we do not know:
// such a request is ignored, so bootbench can share a segment with another
// DHCP server without fighting it.
type Planner interface {
	Plan(Client) (offer Offer, ok bool)
}

// Event reports one thing a server did, for progress display and timings.
// What a client chose (File, VendorClass, the text of Err) is safe to show
// on a terminal: quoted or escaped where it is not plain (see shown).
type Event struct {
	Time time.Time
	Kind string // "dhcp-offer", "dhcp-ack", "bootp-reply", "proxy-offer", "proxy-ack", "tftp-done", "tftp-error", "ignored"
	MAC  net.HardwareAddr
	// VendorClass and ClientArch are what a DHCP client said it is
	// (options 60 and 93), so an unknown board can be told apart from a
	// stray laptop.
	VendorClass string
	ClientArch  string
	IP          net.IP // offered by DHCP; the client's for TFTP and HTTP
	File        string
	// Board is the board the event concerns, as the Booter knows it
	// (boot.Booter.Report fills it in; the servers know no boards).
	Board string
	// Options are the DHCP option codes an answer carried, in order
	// ("1" for a plain BOOTP reply, which must carry no option 53); for
	// a TFTP transfer, the options its option answer granted
	// ("blksize=1468 tsize=4096 windowsize=16").
	Options  string
	Bytes    int64
	Duration time.Duration
	Err      error
}

// Reporter receives events. It must not block for long.
type Reporter func(Event)

// leaseSeconds is long enough for a whole benchmark run: a board that renews
// in the middle of a measurement would disturb it.
const leaseSeconds = 24 * 3600

// ListenDHCP opens the DHCP server socket on one interface. It binds
// 0.0.0.0:67 with SO_BINDTODEVICE: a socket bound to a unicast address would
// miss the broadcasts that clients without an address send, and binding to
// the device keeps us off every other network.
func ListenDHCP(iface string) (net.PacketConn, error) {
	conn, err := server4.NewIPv4UDPConn(iface, &net.UDPAddr{Port: dhcpv4.ServerPort})
	if err != nil {
		return nil, fmt.Errorf("listen for DHCP on %s: %w (needs root or CAP_NET_BIND_SERVICE+CAP_NET_RAW)", iface, err)
	}
	return conn, nil
}

// ServeDHCP answers DHCP and BOOTP requests on conn until ctx ends, as the
// segment's DHCP server: known boards get their address and boot fields. It
// runs its own read loop rather than server4.Server because RouterBOOT's
// plain BOOTP requests do not parse as DHCP (see ParseRequest).
func ServeDHCP(ctx context.Context, conn net.PacketConn, plan Planner, report Reporter) error {
	return serve(ctx, conn, report, func(req *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, Event) { return Reply(req, plan) })
}

// ServeProxyDHCP answers as a proxyDHCP server (PXE specification 2.1,
// section 2.2.3) on a segment where another server hands out addresses: to a
// known board's DHCPDISCOVER on port 67 it offers only the boot fields, and
// to its request on port 4011 it acknowledges them. It never offers an
// address. Run it on both sockets.
func ServeProxyDHCP(ctx context.Context, conn net.PacketConn, plan Planner, report Reporter) error {
	return serve(ctx, conn, report, func(req *dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, Event) { return ProxyReply(req, plan) })
}

func serve(ctx context.Context, conn net.PacketConn, report Reporter, reply func(*dhcpv4.DHCPv4) (*dhcpv4.DHCPv4, Event)) error {
	if report == nil {
		report = func(Event) {}
	}
	stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 1500)
	for {
		n, peer, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("read DHCP request: %w", err)
		}
		req, err := ParseRequest(buf[:n])
		if err != nil {
			continue // not ours to answer; never crash on a stray packet
		}
		resp, ev := reply(req)
		ev.Time, ev.VendorClass = time.Now(), shown(ev.VendorClass)
		if resp == nil {
			report(ev)
			continue
		}
		ev.Options = optionCodes(resp)
		if _, err := conn.WriteTo(resp.ToBytes(), replyAddr(req, peer)); err != nil {
			ev.Kind, ev.Err = "dhcp-error", fmt.Errorf("send reply to %s: %w", req.ClientHWAddr, err)
		}
		report(ev)
	}
}

// optionCodes lists the options of m by code, ascending.
func optionCodes(m *dhcpv4.DHCPv4) string {
	var codes []int
	for c := range m.Options {
		codes = append(codes, int(c))
	}
	sort.Ints(codes)
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// replyAddr picks where the answer goes. A client without an address can only
// be reached by broadcast (we do not send raw frames); a renewing client
// that has one is answered directly.
func replyAddr(req *dhcpv4.DHCPv4, peer net.Addr) net.Addr {
	if ip := req.ClientIPAddr; ip != nil && !ip.IsUnspecified() {
		return &net.UDPAddr{IP: ip, Port: dhcpv4.ClientPort}
	}
	if !req.GatewayIPAddr.IsUnspecified() && req.GatewayIPAddr != nil {
		return &net.UDPAddr{IP: req.GatewayIPAddr, Port: dhcpv4.ServerPort}
	}
	return &net.UDPAddr{IP: net.IPv4bcast, Port: dhcpv4.ClientPort}
}

// bootpMinLen is the fixed part of a BOOTP packet up to the vendor area.
const bootpMinLen = 236

// ParseRequest decodes a client request. dhcpv4.FromBytes rejects RFC 951
// BOOTP packets whose vendor area is all zeros (no magic cookie) or has a
// cookie but no End option; MikroTik's RouterBOOT sends exactly those. For a
// BOOTREQUEST of at least the fixed size, put cookie and End at the vendor
// area and parse again. A request with a broken DHCP message type (option
// 53 empty, too long, 0, or in options that do not parse) is refused: the
// library would read it as plain BOOTP.
func ParseRequest(b []byte) (*dhcpv4.DHCPv4, error) {
	m, err := dhcpv4.FromBytes(b)
	if err == nil {
		if m.OpCode != dhcpv4.OpcodeBootRequest {
			return nil, errors.New("not a request")
		}
		if v, ok := m.Options[dhcpv4.OptionDHCPMessageType.Code()]; ok && (len(v) != 1 || v[0] == 0) {
			return nil, errMessageType // the library would call it no type: BOOTP
		}
		return m, nil
	}
	if len(b) < bootpMinLen || b[0] != byte(dhcpv4.OpcodeBootRequest) {
		return nil, err
	}
	if hasMessageType(b[bootpMinLen:]) {
		return nil, errMessageType // a DHCP request that failed to parse is not BOOTP
	}
	fixed := make([]byte, bootpMinLen, bootpMinLen+5)
	copy(fixed, b[:bootpMinLen])
	fixed = append(append(fixed, magicCookie...), dhcpv4.OptionEnd.Code())
	return dhcpv4.FromBytes(fixed)
}

// errMessageType is a request whose DHCP message type (option 53) is
// broken: neither DHCP nor plain BOOTP, so not answered.
var errMessageType = errors.New("malformed DHCP message type")

// magicCookie opens the options of a DHCP packet (RFC 2131 section 3).
var magicCookie = []byte{99, 130, 83, 99}

// hasMessageType reports whether a vendor area that did not parse holds
// option 53 after the magic cookie.
func hasMessageType(vend []byte) bool {
	if !bytes.HasPrefix(vend, magicCookie) {
		return false
	}
	for o := vend[len(magicCookie):]; len(o) > 0; {
		switch o[0] {
		case dhcpv4.OptionPad.Code():
			o = o[1:]
			continue
		case dhcpv4.OptionEnd.Code():
			return false
		case dhcpv4.OptionDHCPMessageType.Code():
			return true
		}
		if len(o) < 2 {
			return false
		}
		o = o[min(len(o), 2+int(o[1])):]
	}
	return false
}

// Reply builds the answer of the segment's DHCP server to req, or nil when
// req is not ours to answer; the event says what was decided either way.
// The answer is composed per dialect: every client gets its address and
// boot file, and then what its kind of client needs (see dialects).
func Reply(req *dhcpv4.DHCPv4, plan Planner) (*dhcpv4.DHCPv4, Event) {
	c := clientOf(req)
	ev := Event{Kind: "ignored", MAC: c.MAC, VendorClass: c.VendorClass, ClientArch: c.ClientArch}
	offer, ok := plan.Plan(c)
	if !ok {
		return nil, ev
	}
	ev.IP, ev.File = offer.IP, offer.BootFile
	typ, kind := answerType(req, offer)
	ev.Kind = kind
	if kind == "ignored" {
		return nil, ev
	}
	resp, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		ev.Kind, ev.Err = "dhcp-error", err
		return nil, ev
	}
	if typ == dhcpv4.MessageTypeNak {
		resp.UpdateOption(dhcpv4.OptMessageType(typ))
		resp.UpdateOption(dhcpv4.OptServerIdentifier(offer.Server))
		return resp, ev
	}
	for _, d := range dialects {
		if d.speaks(c, offer) {
			d.add(resp, typ, offer)
		}
	}
	if offer.RaspberryPi {
		raspberryPiOptions(resp, req)
	}
	return resp, ev
}

// answerType is the DHCP message that answers req (none for plain BOOTP)
// and the event kind that says so; kind "ignored" is no answer at all.
func answerType(req *dhcpv4.DHCPv4, offer Offer) (dhcpv4.MessageType, string) {
	switch req.MessageType() {
	case dhcpv4.MessageTypeNone:
		return dhcpv4.MessageTypeNone, "bootp-reply"
	case dhcpv4.MessageTypeDiscover:
		return dhcpv4.MessageTypeOffer, "dhcp-offer"
	case dhcpv4.MessageTypeRequest:
		want := req.RequestedIPAddress()
		if want == nil || want.IsUnspecified() {
			want = req.ClientIPAddr
		}
		if sid := req.ServerIdentifier(); sid != nil && !sid.Equal(offer.Server) {
			return 0, "ignored" // the client chose another server
		}
		if want != nil && !want.IsUnspecified() && !want.Equal(offer.IP) {
			return dhcpv4.MessageTypeNak, "dhcp-nak"
		}
		return dhcpv4.MessageTypeAck, "dhcp-ack"
	}
	return 0, "ignored"
}

// A dialect is what one kind of boot client is told, beyond what another
// would understand. An answer is every dialect the client speaks, in order.
//
// A firmware PXE client gets a plain DHCP answer with the boot file, as
// ISC dhcpd's next-server/filename gives: an answer that says "PXEClient"
// (option 60) without PXE vendor options (43) is a BINL offer to EDK2,
// which then asks port 4011 for the boot file and, with no proxyDHCP
// server there, gives up (PXE-E16, NetworkPkg/UefiPxeBcDxe/PxeBcDhcp4.c).
type dialect struct {
	name   string
	speaks func(Client, Offer) bool
	add    func(resp *dhcpv4.DHCPv4, typ dhcpv4.MessageType, o Offer)
}

var dialects = []dialect{
	{"bootp", func(Client, Offer) bool { return true }, bootpFields},
	{"dhcp", func(c Client, _ Offer) bool { return !c.BOOTP }, dhcpOptions},
	{"ipxe", func(c Client, _ Offer) bool { return c.IPXE }, ipxeOptions},
}

// bootpFields are RFC 951's: the address, the server (siaddr) and the boot
// file in the header, and the subnet mask (RFC 1048's vendor extension,
// which BOOTP clients take). This is all a plain BOOTP client gets:
// RouterBOOT ignores a reply to its BOOTP request that carries a DHCP
// message type.
func bootpFields(resp *dhcpv4.DHCPv4, _ dhcpv4.MessageType, o Offer) {
	resp.YourIPAddr = o.IP
	resp.ServerIPAddr = o.Server
	resp.BootFileName = o.BootFile
	if o.Mask != nil {
		resp.UpdateOption(dhcpv4.OptSubnetMask(o.Mask))
	}
}

// dhcpOptions are what a DHCP client needs: the message type, who we are,
// a lease long enough for a whole benchmark run, and the boot fields again
// as options (66, 67) for clients that read those rather than the header.
func dhcpOptions(resp *dhcpv4.DHCPv4, typ dhcpv4.MessageType, o Offer) {
	resp.UpdateOption(dhcpv4.OptMessageType(typ))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(o.Server))
	resp.UpdateOption(dhcpv4.OptIPAddressLeaseTime(leaseSeconds * time.Second))
	resp.UpdateOption(dhcpv4.OptTFTPServerName(o.Server.String()))
	if o.BootFile != "" {
		resp.UpdateOption(dhcpv4.OptBootFileName(o.BootFile))
	}
}

// raspberryPiOptions are what a Raspberry Pi's boot ROM (Pi 3B+) or EEPROM
// bootloader (Pi 4) waits for, as Raspberry Pi's documentation gives a
// working answer (boot-net, "DHCP Request / Reply"): vendor class
// "PXEClient" (60), the client's GUID echoed (97), and PXE vendor options
// (43) whose boot menu entry reads "Raspberry Pi Boot", which the ROM
// checks (PXE_OPTION43 in "Raspberry Pi bootloader configuration"). The
// bytes are those of the documented reply, what dnsmasq's
// pxe-service=0,"Raspberry Pi Boot" sends: discovery control (6) = 3,
// menu prompt (10) = timeout 0 and "PXE", boot menu (9) = type 0 and
// the string, then End. The TFTP server is siaddr and option 66 (see
// dhcpOptions); the Pi names its files itself.
func raspberryPiOptions(resp, req *dhcpv4.DHCPv4) {
	resp.UpdateOption(dhcpv4.OptClassIdentifier(pxeClient))
	if guid := req.Options.Get(dhcpv4.OptionClientMachineIdentifier); guid != nil {
		resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionClientMachineIdentifier, guid))
	}
	resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, RaspberryPiVendorOptions()))
}

// RaspberryPiBoot is the boot menu entry a Raspberry Pi ROM looks for in
// option 43.
const RaspberryPiBoot = "Raspberry Pi Boot"

// RaspberryPiVendorOptions is option 43 of an answer to a Raspberry Pi.
func RaspberryPiVendorOptions() []byte {
	menu := append([]byte{0, 0, byte(len(RaspberryPiBoot))}, RaspberryPiBoot...)
	b := []byte{6, 1, 3, 10, 4, 0, 'P', 'X', 'E', 9, byte(len(menu))}
	return append(append(b, menu...), 255)
}

// ipxeOptions: iPXE's encapsulated option 175, "no-pxedhcp" (176) = 1:
// there is no ProxyDHCP server to wait for. Without it iPXE keeps
// collecting offers for seconds before it asks for ours.
func ipxeOptions(resp *dhcpv4.DHCPv4, _ dhcpv4.MessageType, _ Offer) {
	resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.GenericOptionCode(175), []byte{176, 1, 1}))
}

// clientOf is what req says about the machine asking.
func clientOf(req *dhcpv4.DHCPv4) Client {
	c := Client{
		MAC:         req.ClientHWAddr,
		BOOTP:       req.MessageType() == dhcpv4.MessageTypeNone,
		VendorClass: req.ClassIdentifier(),
	}
	var arch []string
	for i, a := range req.ClientArch() {
		if i == 0 {
			c.Arch, c.HasArch = a, true
		}
		arch = append(arch, a.String())
	}
	c.ClientArch = strings.Join(arch, ", ")
	for _, uc := range req.UserClass() {
		if uc == "iPXE" {
			c.IPXE = true
		}
	}
	return c
}

// pxeClient is the vendor class prefix of every PXE client (iPXE sends it
// too): only such clients understand a proxyDHCP answer.
const pxeClient = "PXEClient"

// ProxyReply builds a proxyDHCP answer to req, or nil when req is not ours:
// an OFFER to a known PXE client's DISCOVER, an ACK to its REQUEST (which
// comes to port 4011). Neither carries an address (yiaddr stays 0.0.0.0):
// the segment's own DHCP server gives that. Option 43 says "boot the named
// file from siaddr, skip boot server discovery" (PXE discovery control bit 3).
func ProxyReply(req *dhcpv4.DHCPv4, plan Planner) (*dhcpv4.DHCPv4, Event) {
	c := clientOf(req)
	ev := Event{Kind: "ignored", MAC: c.MAC, VendorClass: c.VendorClass, ClientArch: c.ClientArch}
	if !strings.HasPrefix(c.VendorClass, pxeClient) {
		return nil, ev
	}
	offer, ok := plan.Plan(c)
	if !ok {
		return nil, ev
	}
	ev.File = offer.BootFile
	var typ dhcpv4.MessageType
	switch req.MessageType() {
	case dhcpv4.MessageTypeDiscover:
		typ, ev.Kind = dhcpv4.MessageTypeOffer, "proxy-offer"
	case dhcpv4.MessageTypeRequest:
		if sid := req.ServerIdentifier(); sid != nil && !sid.Equal(offer.Server) {
			return nil, ev // the client's REQUEST to the segment's DHCP server
		}
		typ, ev.Kind = dhcpv4.MessageTypeAck, "proxy-ack"
	default:
		return nil, ev
	}
	resp, err := dhcpv4.NewReplyFromRequest(req)
	if err != nil {
		ev.Kind, ev.Err = "dhcp-error", err
		return nil, ev
	}
	resp.YourIPAddr = net.IPv4zero
	resp.ServerIPAddr = offer.Server
	resp.BootFileName = offer.BootFile
	resp.UpdateOption(dhcpv4.OptMessageType(typ))
	resp.UpdateOption(dhcpv4.OptServerIdentifier(offer.Server))
	resp.UpdateOption(dhcpv4.OptClassIdentifier(pxeClient))
	if offer.RaspberryPi {
		// The Pi takes a proxy reply (boot-net: "(optional) Receive
		// DHCP proxy reply"), as dnsmasq's proxy mode gives it: its
		// own vendor options and the TFTP server, no boot file.
		resp.UpdateOption(dhcpv4.OptTFTPServerName(offer.Server.String()))
		raspberryPiOptions(resp, req)
		return resp, ev
	}
	resp.UpdateOption(dhcpv4.OptBootFileName(offer.BootFile))
	// Vendor options: PXE_DISCOVERY_CONTROL (6) = 8, then End.
	resp.UpdateOption(dhcpv4.OptGeneric(dhcpv4.OptionVendorSpecificInformation, []byte{6, 1, 8, 255}))
	return resp, ev
}

// Host is one known board in a StaticPlan.
type Host struct {
	IP net.IP
	// BootFile is what a firmware PXE or BOOTP client loads first: an iPXE
	// binary to chainload, or the one ELF RouterBOOT runs.
	BootFile string
	// IPXEScript is handed instead when the client is already iPXE, which
	// breaks the PXE → iPXE → PXE loop.
	IPXEScript string
}

// StaticPlan answers from a fixed MAC table.
type StaticPlan struct {
	Server net.IP
	Mask   net.IPMask
	Hosts  map[string]Host // key: MAC in net.HardwareAddr.String() form
}

// Plan implements Planner.
func (p StaticPlan) Plan(c Client) (Offer, bool) {
	h, ok := p.Hosts[strings.ToLower(c.MAC.String())]
	if !ok {
		return Offer{}, false
	}
	file := h.BootFile
	if c.IPXE && h.IPXEScript != "" {
		file = h.IPXEScript
	}
	return Offer{IP: h.IP, Mask: p.Mask, Server: p.Server, BootFile: file}, true
}
