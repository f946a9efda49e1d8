// Package boot decides what every board gets when it netboots, in the
// dialect of the client asking (a Booter), and starts the servers that
// hand it out on a bench's network (a NetBench): DHCP or proxyDHCP, TFTP,
// HTTP and the router advertisement. It knows boards and boots, not runs:
// the harness hands it one boot per board, or a function that gives the
// next.
//
//	bt := boot.NewBooter(bench.ServerIP(), bench.Mask(), "http")
//	bt.AddBoot(board, &boot.Spec{Run: id, Kernel: k, Image: img, Cmdline: cmdline})
//	stop, err := bench.Serve(ctx, bt, report)
package boot

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/insomniacslk/dhcp/iana"
)

// Spec is one boot of one board: the kernel and image its bootloader
// loads (files in the cache) and the kernel command line of the run.
type Spec struct {
	Run     results.RunID
	Kernel  string
	Image   string // the initramfs as the loader takes it (plan.Wrapping's Payload)
	Cmdline string
	// RaspberryPi is a Raspberry Pi boot's config.txt settings, and
	// RaspberryPiFiles its firmware and device tree in the cache by the
	// name the firmware asks for each (plan.Built's); nil for other boards.
	RaspberryPi      *plan.RaspberryPi
	RaspberryPiFiles map[string]string
}

// Booter decides in one place what every board gets when it netboots, in
// the dialect of the client asking (pixiecore's Booter is the model): the
// boot file its DHCP or BOOTP answer names, and every file it then fetches.
// Kernels and images are served from the cache where they are; scripts,
// configurations and RouterBOOT's single ELF are made from the boot's spec,
// in memory. Nothing is copied into a per-run directory. run hands out one
// fixed boot (AddBoot), serve a new run whenever a board asks (AddServed).
//
// Every board's files live under its Key: <board>/boot.ipxe,
// <board>/vmlinuz, <board>/initramfs.cpio, and so on; a Raspberry Pi's
// under its serial as well, where its ROM asks for them (see rpi.go).
type Booter struct {
	Server    net.IP
	Mask      net.IPMask
	Transport plan.Transport // how iPXE fetches kernel and image

	mu     sync.Mutex
	byMAC  map[string]*bootBoard
	byName map[Key]*bootBoard
}

// Key is a board among the boots a Booter holds: its name, which is also
// the folder its files are fetched from.
type Key string

// KeyOf is board b's key.
func KeyOf(b boards.Board) Key { return Key(b.Name) }

// File is the path by which the board fetches its file name.
func (k Key) File(name string) string { return string(k) + "/" + name }

// SplitFile is the board and the file a fetched path names; ok is false
// for a path outside every board's folder.
func SplitFile(path string) (k Key, name string, ok bool) {
	board, name, ok := strings.Cut(path, "/")
	return Key(board), name, ok && board != ""
}

// NewBooter answers for server on a subnet of mask.
func NewBooter(server net.IP, mask net.IPMask, transport plan.Transport) *Booter {
	return &Booter{Server: server, Mask: mask, Transport: transport, byMAC: map[string]*bootBoard{}, byName: map[Key]*bootBoard{}}
}

// bootBoard is one board the Booter answers.
type bootBoard struct {
	board boards.Board
	// next gives the boot the board gets when it asks: serve starts a
	// run there, or goes on with the one still netbooting.
	next func() (*Spec, error)
	cur  *bootFiles // the boot handed out last; nil before the first
}

// bootFiles is one boot's spec and what is made from it, each made once.
type bootFiles struct {
	spec *Spec
	once sync.Once
	elf  []byte
	err  error
}

// AddBoot makes board b get spec whenever it asks.
func (bt *Booter) AddBoot(b boards.Board, spec *Spec) {
	bt.add(b, func() (*Spec, error) { return spec, nil })
	bt.byName[KeyOf(b)].cur = &bootFiles{spec: spec}
}

// AddServed makes board b get what next says each time it asks for a boot
// by DHCP or BOOTP.
func (bt *Booter) AddServed(b boards.Board, next func() (*Spec, error)) {
	bt.add(b, next)
}

func (bt *Booter) add(b boards.Board, next func() (*Spec, error)) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	e := &bootBoard{board: b, next: next}
	bt.byMAC[b.MAC.String()] = e
	bt.byName[KeyOf(b)] = e
	if raspberryPi(b) && b.Serial != "" {
		bt.byName[SerialKey(b)] = e
	}
}

// withoutAddress names a board that has no fixed address (piOnly: a
// Raspberry Pi that has none), "" when all do.
func (bt *Booter) withoutAddress(piOnly bool) string {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	for _, e := range bt.byName {
		if !e.board.Address.IsValid() && (!piOnly || raspberryPi(e.board)) {
			return e.board.Name
		}
	}
	return ""
}

// Plan implements netboot.Planner: a known board's request gets its
// address and the boot file of its dialect.
func (bt *Booter) Plan(c netboot.Client) (netboot.Offer, bool) {
	bt.mu.Lock()
	e := bt.byMAC[c.MAC.String()]
	bt.mu.Unlock()
	if e == nil {
		return netboot.Offer{}, false
	}
	file, err := BootFile(e.board, c)
	if err != nil {
		return netboot.Offer{}, false
	}
	spec, err := e.next()
	if err != nil || spec == nil {
		return netboot.Offer{}, false
	}
	bt.mu.Lock()
	if e.cur == nil || e.cur.spec != spec {
		e.cur = &bootFiles{spec: spec}
	}
	bt.mu.Unlock()
	return netboot.Offer{IP: addrIP(e.board.Address), Mask: bt.Mask, Server: bt.Server, BootFile: file, RaspberryPi: raspberryPi(e.board)}, true
}

// Report returns a Reporter that names the board of each event before
// report gets it: a file's board by the folder it was fetched from, a
// DHCP or BOOTP event's by the MAC of a board the Booter holds. The
// event's File stays the path as fetched (Key.File of the board's name
// for it).
func (bt *Booter) Report(report netboot.Reporter) netboot.Reporter {
	return func(e netboot.Event) {
		bt.mu.Lock()
		if k, _, ok := SplitFile(e.File); ok && bt.byName[k] != nil {
			e.Board = bt.byName[k].board.Name
		} else if b := bt.byMAC[e.MAC.String()]; e.MAC != nil && b != nil {
			e.Board = b.board.Name
		}
		bt.mu.Unlock()
		if b := bt.byAddress(e.IP); e.Board == "" && e.IP != nil && b != nil {
			e.Board = b.board.Name // a Raspberry Pi's file asked for at the root
		}
		report(e)
	}
}

// Servable refuses, before anything is powered, a board whose boot
// method bootbench cannot serve yet.
func Servable(b boards.Board) error {
	switch b.Profile.Boot {
	case boards.BootIPXE, boards.BootPXE, boards.BootUBootDHCP, boards.BootUBootSerial, boards.BootPXELinux, boards.BootRouterBOOT, boards.BootCFE:
		return nil
	case boards.BootRaspberryPi:
		if b.Serial == "" {
			return fmt.Errorf("board %s: a Raspberry Pi needs its serial (the folder its boot ROM asks for its files in)", b.Name)
		}
		return nil
	}
	return fmt.Errorf("board %s: boot method %s is not supported yet (supported: ipxe, pxe, uboot-dhcp, uboot-serial, pxelinux, routerboot-bootp, cfe, rpi-netboot, qemu-direct)", b.Name, b.Profile.Boot)
}

// BootFile is what board b's DHCP or BOOTP answer names, for the client
// asking: the dialect of its boot method, and for a firmware PXE client
// the iPXE binary that its architecture runs.
func BootFile(b boards.Board, c netboot.Client) (string, error) {
	p, k := b.Profile, KeyOf(b)
	switch p.Boot {
	case boards.BootIPXE, boards.BootPXE:
		if strings.HasPrefix(c.VendorClass, "HTTPClient") {
			// UEFI HTTP boot wants a URL, and the board's PXE asks too.
			return "", fmt.Errorf("board %s: UEFI HTTP boot is not served (its PXE boot is)", b.Name)
		}
		if c.Kind() != netboot.ClientPXE {
			return k.File("boot.ipxe"), nil
		}
		bin, err := chainloadFor(c)
		if err != nil {
			return "", err
		}
		return k.File(bin), nil
	case boards.BootUBootDHCP, boards.BootUBootSerial:
		// U-Boot's distro boot asks for boot.scr.uimg by this name.
		return k.File("boot.scr.uimg"), nil
	case boards.BootPXELinux:
		// U-Boot's pxe get looks for pxelinux.cfg/ in the boot file's
		// directory; the file itself is never loaded.
		return k.File("pxelinux.0"), nil
	case boards.BootRouterBOOT, boards.BootCFE:
		return k.File("kernel.elf"), nil
	case boards.BootRaspberryPi:
		return "", nil // the Pi's ROM names its files itself
	}
	return "", fmt.Errorf("board %s: boot method %s is not served over the network", b.Name, p.Boot)
}

// chainloadFor is the iPXE build a firmware PXE client runs, by its
// architecture (DHCP option 93, RFC 4578): BIOS gets undionly.kpxe (iPXE
// on the ROM's own UNDI driver), x86-64 UEFI ipxe.efi.
func chainloadFor(c netboot.Client) (string, error) {
	if !c.HasArch {
		return "undionly.kpxe", nil
	}
	switch c.Arch {
	case iana.INTEL_X86PC:
		return "undionly.kpxe", nil
	case iana.EFI_X86_64, iana.EFI_BC:
		return "ipxe.efi", nil
	}
	return "", fmt.Errorf("no iPXE for a PXE client of architecture %s", c.Arch)
}

// Open implements netboot.Files: <board>/<file> of the board's current
// boot.
func (bt *Booter) Open(name string) (io.ReadCloser, int64, error) {
	board, file, ok := SplitFile(name)
	if !ok {
		return nil, 0, netboot.ErrNotFound
	}
	bt.mu.Lock()
	e := bt.byName[board]
	var cur *bootFiles
	if e != nil {
		cur = e.cur
	}
	bt.mu.Unlock()
	if cur == nil {
		return nil, 0, netboot.ErrNotFound
	}
	b, spec := e.board, cur.spec
	if raspberryPi(b) {
		return openRaspberryPi(spec, file)
	}
	switch {
	case file == kernelName(b.Profile):
		return openCached(spec.Kernel)
	case file == "initramfs.cpio":
		return openCached(spec.Image)
	case file == "undionly.kpxe" || file == "ipxe.efi":
		if b.Profile.Boot != boards.BootIPXE && b.Profile.Boot != boards.BootPXE {
			return nil, 0, netboot.ErrNotFound
		}
		return openCached(chainloadPath(b.Profile, file))
	}
	data, err := bt.generated(b, cur, file)
	if err != nil {
		return nil, 0, err
	}
	return netboot.Memory(data)
}

// generated makes a file of the boot from its spec: the script or
// configuration of the board's dialect, or RouterBOOT's ELF.
func (bt *Booter) generated(b boards.Board, cur *bootFiles, file string) ([]byte, error) {
	spec, m := cur.spec, b.Profile.Boot
	switch {
	case file == "boot.ipxe" && (m == boards.BootIPXE || m == boards.BootPXE):
		return []byte(IPXEScript(bt.Transport, bt.Server, KeyOf(b), string(spec.Run), spec.Cmdline)), nil
	case file == "boot.scr.uimg" && (m == boards.BootUBootDHCP || m == boards.BootUBootSerial):
		return initramfs.UBootScript(UBootScript(KeyOf(b), spec.Cmdline))
	case m == boards.BootPXELinux && (file == "pxelinux.cfg/default" || file == "pxelinux.cfg/"+pxelinuxMAC(b.MAC)):
		return []byte(PXELinuxConfig(string(spec.Run), spec.Cmdline)), nil
	case file == "kernel.elf" && (m == boards.BootRouterBOOT || m == boards.BootCFE):
		cur.once.Do(func() { cur.elf, _, cur.err = SingleELF(b.Profile, spec) })
		return cur.elf, cur.err
	}
	return nil, netboot.ErrNotFound
}

// kernelName is what the board's scripts call the kernel: U-Boot boards
// boot an arm64 Image, the rest a vmlinuz.
func kernelName(p boards.Profile) string {
	switch p.Boot {
	case boards.BootUBootDHCP, boards.BootUBootSerial, boards.BootPXELinux:
		return "Image"
	}
	return "vmlinuz"
}

// ipxeDir is where Debian's ipxe package puts its binaries.
const ipxeDir = "/usr/lib/ipxe"

// chainloadPath is the iPXE binary file: the profile's, else Debian's.
func chainloadPath(p boards.Profile, file string) string {
	if path := p.IPXE[file]; path != "" {
		return path
	}
	return filepath.Join(ipxeDir, file)
}

// openCached opens a file of the cache (a kernel, an image, an iPXE
// binary). Its path never reaches the client: a missing one is "not found".
func openCached(path string) (io.ReadCloser, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, netboot.ErrNotFound
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, netboot.ErrNotFound
	}
	return f, st.Size(), nil
}

// pxelinuxMAC is the name PXELINUX and U-Boot's pxe get look for first:
// ARP type 1 (Ethernet), then the MAC in lower-case hex with dashes.
func pxelinuxMAC(mac net.HardwareAddr) string {
	return "01-" + strings.ReplaceAll(mac.String(), ":", "-")
}

// IPXEScript is what iPXE runs: load the board's kernel and image from the
// server by transport ("http" or "tftp"), with the run's parameters on the
// kernel command line. initrd= names the image for a kernel started as a
// UEFI application: its EFI stub loads the initrd from iPXE's file system
// by that name (iPXE before 1.21 has no other way to hand it over); a BIOS
// boot ignores it.
func IPXEScript(transport plan.Transport, server net.IP, board Key, runID, cmdline string) string {
	base := string(transport) + "://" + server.String() + "/"
	return "#!ipxe\n" +
		"echo bootbench: run " + runID + " loading from " + server.String() + " by " + string(transport) + "\n" +
		"kernel " + base + board.File("vmlinuz") + " initrd=initramfs.cpio " + cmdline + "\n" +
		"initrd " + base + board.File("initramfs.cpio") + "\n" +
		"boot\n"
}

// UBootScript is what U-Boot runs: fetch the board's kernel and image by
// TFTP from the server that answered its DHCP, and boot them with the run's
// command line. Debian's arm64 kernel is an uncompressed Image, which booti
// takes as is; the device tree is the one QEMU gave U-Boot.
//
// The loads ask for Ethernet-sized blocks and a window of 16 of them (RFC
// 7440; U-Boot 2020.07 and later send it, older ones ignore the variable),
// unless the board's environment sets its own: a window spares a round
// trip per block, and the server grants it only to a client that asks.
func UBootScript(board Key, cmdline string) string {
	return strings.Join([]string{
		"echo bootbench: loading from ${serverip}",
		`if test -z "${tftpblocksize}"; then setenv tftpblocksize 1468; fi`,
		`if test -z "${tftpwindowsize}"; then setenv tftpwindowsize 16; fi`,
		"setenv bootargs " + cmdline,
		"tftpboot ${kernel_addr_r} " + board.File("Image"),
		"tftpboot ${ramdisk_addr_r} " + board.File("initramfs.cpio"),
		"booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdtcontroladdr}",
	}, "\n") + "\n"
}

// PXELinuxConfig is the pxelinux.cfg file U-Boot's pxe get fetches and pxe
// boot runs. Its paths are relative to the boot file's directory, the
// board's own.
func PXELinuxConfig(runID, cmdline string) string {
	return "# bootbench run " + runID + "\n" +
		"default bootbench\n" +
		"prompt 0\n" +
		"timeout 0\n\n" +
		"label bootbench\n" +
		"\tkernel Image\n" +
		"\tinitrd initramfs.cpio\n" +
		"\tappend " + cmdline + "\n"
}

// SingleELF is the one file a board boots when it loads a kernel with no
// bootloader of bootbench's in between: RouterBOOT's and CFE's netboot
// (boot -elf), and a virtual board QEMU hands the file to directly. It is
// the kernel with the image, as the plan compressed it, as an extra
// segment, and the kernel finds the image through rd_start/rd_size.
//
// Where the run's command line goes is the loader's: RouterBOOT and CFE
// pass only their own parameters, so it goes into the kernel's own command
// line area (OpenWrt's CMDLINE:), one added where the profile says its
// loader reads it (the virtual RouterBOOT board's ROM); a loader that
// passes a command line (QEMU's -append) gets it there only when the
// kernel has such an area (bootbench's), and otherwise appendArgs is what
// the loader must add to spec's command line for the kernel to find the
// image.
func SingleELF(p boards.Profile, spec *Spec) (elf []byte, appendArgs string, err error) {
	kernel, err := os.ReadFile(spec.Kernel)
	if err != nil {
		return nil, "", fmt.Errorf("read kernel: %w", err)
	}
	payload, err := os.ReadFile(spec.Image)
	if err != nil {
		return nil, "", fmt.Errorf("read image: %w", err)
	}
	var o initramfs.ELFOptions
	if loaderPassesNoCmdline(p) || initramfs.HasCmdlineArea(kernel) {
		o = initramfs.ELFOptions{EmbedCmdline: spec.Cmdline, AddCmdlineArea: p.Virtual != nil && p.Virtual.AddCmdlineArea}
	}
	elf, rd, err := initramfs.WrapELF(kernel, payload, o)
	if err != nil {
		return nil, "", fmt.Errorf("kernel and image in one ELF: %w", err)
	}
	if o.EmbedCmdline != "" {
		return elf, "", nil
	}
	return elf, rd, nil
}

// loaderPassesNoCmdline: RouterBOOT and CFE start the kernel with their
// own parameters only.
func loaderPassesNoCmdline(p boards.Profile) bool {
	return p.Boot == boards.BootRouterBOOT || p.Boot == boards.BootCFE
}
