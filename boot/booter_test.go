package boot

import (
	"bytes"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/boottest"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
	"github.com/insomniacslk/dhcp/iana"
)

// testBoard and mipsKernel are boottest's, by their short names here.
var (
	testBoard  = boottest.Board
	mipsKernel = boottest.MIPSKernel
)

// TestBooter: what every dialect gets, from the one Booter — the boot file
// its DHCP or BOOTP answer names, and the files it then fetches: kernel and
// image from the cache as they are, scripts and configurations made from
// the run's spec (testdata/booter/*.golden, -update rewrites).
func TestBooter(t *testing.T) {
	dir := t.TempDir()
	kernel := filepath.Join(dir, "vmlinuz-6.1")
	os.WriteFile(kernel, []byte("kernel bytes"), 0o644)
	image := filepath.Join(dir, "initramfs.cpio")
	os.WriteFile(image, []byte("070701 cpio bytes"), 0o644)
	mipsK := mipsKernel(t, dir)
	const cmdline = "console=ttyS0,115200 panic=-1 quiet loglevel=1 bootbench.run=20261130-000000-0000abcd"

	pxe := func(class string, arch iana.Arch) netboot.Client {
		return netboot.Client{VendorClass: class, Arch: arch, HasArch: true}
	}
	ipxe := netboot.Client{VendorClass: "PXEClient:Arch:00000:UNDI:002001", IPXE: true}
	uboot := netboot.Client{VendorClass: "U-Boot.armv8", Arch: iana.UBOOT_ARM64, HasArch: true}
	tests := []struct {
		name     string
		method   boards.BootMethod
		client   netboot.Client
		wantFile string
		golden   []string // files made for the boot: compared with testdata/booter/<name>-<base>
		cached   map[string]string
	}{
		{"pxe-bios", boards.BootPXE, pxe("PXEClient:Arch:00000:UNDI:002001", iana.INTEL_X86PC), "pc1/undionly.kpxe", nil, map[string]string{"pc1/undionly.kpxe": "/usr/lib/ipxe/undionly.kpxe"}},
		{"pxe-uefi", boards.BootPXE, pxe("PXEClient:Arch:00007:UNDI:003000", iana.EFI_X86_64), "pc1/ipxe.efi", nil, map[string]string{"pc1/ipxe.efi": "/usr/lib/ipxe/ipxe.efi"}},
		{"pxe-then-ipxe", boards.BootPXE, ipxe, "pc1/boot.ipxe", []string{"pc1/boot.ipxe"}, map[string]string{"pc1/vmlinuz": kernel, "pc1/initramfs.cpio": image}},
		{"ipxe", boards.BootIPXE, ipxe, "pc1/boot.ipxe", []string{"pc1/boot.ipxe"}, map[string]string{"pc1/vmlinuz": kernel}},
		{"uboot-dhcp", boards.BootUBootDHCP, uboot, "pc1/boot.scr.uimg", []string{"pc1/boot.scr.uimg"}, map[string]string{"pc1/Image": kernel, "pc1/initramfs.cpio": image}},
		{"uboot-serial", boards.BootUBootSerial, uboot, "pc1/boot.scr.uimg", []string{"pc1/boot.scr.uimg"}, map[string]string{"pc1/Image": kernel}},
		{"pxelinux", boards.BootPXELinux, uboot, "pc1/pxelinux.0", []string{"pc1/pxelinux.cfg/01-52-54-00-bb-05-20", "pc1/pxelinux.cfg/default"}, map[string]string{"pc1/Image": kernel}},
		{"routerboot-bootp", boards.BootRouterBOOT, netboot.Client{BOOTP: true}, "pc1/kernel.elf", nil, nil},
		{"routerboot-dhcp", boards.BootRouterBOOT, netboot.Client{VendorClass: "Mips_boot"}, "pc1/kernel.elf", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bt := NewBooter(net.IPv4(198, 18, 0, 1).To4(), net.CIDRMask(24, 32), "http")
			b := testBoard("pc1", tt.method, "52:54:00:bb:05:20")
			spec := &Spec{Run: "20261130-000000-0000abcd", Kernel: kernel, Image: image, Cmdline: cmdline}
			if tt.method == boards.BootRouterBOOT {
				spec.Kernel = mipsK
			}
			bt.AddBoot(b, spec)
			c := tt.client
			c.MAC = b.MAC
			offer, ok := bt.Plan(c)
			if !ok || offer.BootFile != tt.wantFile || !offer.IP.Equal(net.IPv4(198, 18, 0, 10)) {
				t.Fatalf("Plan = %+v, %v; want boot file %s", offer, ok, tt.wantFile)
			}
			for _, name := range tt.golden {
				got := read(t, bt, name)
				if strings.HasSuffix(name, ".uimg") {
					_, data, err := initramfs.ParseUImage(got)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					got = data[8:] // past the script image's length table
				}
				golden(t, filepath.Join("testdata", "booter", tt.name+"-"+strings.ReplaceAll(name[len("pc1/"):], "/", "_")), got)
			}
			for name, path := range tt.cached {
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%s: %v (Debian package ipxe)", path, err)
				}
				if got := read(t, bt, name); !bytes.Equal(got, want) {
					t.Errorf("%s is not %s as it is", name, path)
				}
			}
			if tt.method == boards.BootRouterBOOT {
				got, err := initramfs.EmbeddedCmdline(read(t, bt, tt.wantFile))
				if err != nil || !strings.HasPrefix(got, cmdline+" nokaslr rd_start=0x") || !strings.Contains(got, " rd_size=") {
					t.Errorf("the ELF's embedded command line: %q, %v", got, err)
				}
			}
		})
	}
}

// TestBooterRefuses: what is not a board's, or not its dialect's, is not
// found; an unknown MAC is not answered.
func TestBooterRefuses(t *testing.T) {
	bt := NewBooter(net.IPv4(198, 18, 0, 1).To4(), net.CIDRMask(24, 32), "http")
	b := testBoard("pc1", boards.BootIPXE, "52:54:00:bb:05:20")
	bt.AddBoot(b, &Spec{Run: "r", Kernel: "/nonexistent/vmlinuz", Image: "/nonexistent/cpio"})
	if _, ok := bt.Plan(netboot.Client{MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}}); ok {
		t.Error("answered an unknown MAC")
	}
	if _, ok := bt.Plan(netboot.Client{MAC: b.MAC, VendorClass: "PXEClient:Arch:00006", Arch: iana.EFI_IA32, HasArch: true}); ok {
		t.Error("answered a 32-bit UEFI client it has no iPXE for")
	}
	for _, name := range []string{"pc1/boot.scr.uimg", "pc1/kernel.elf", "pc1/vmlinuz", "pc2/boot.ipxe", "boot.ipxe", "pc1/../pc1/boot.ipxe", "pc1/pxelinux.cfg/default"} {
		if _, _, err := bt.Open(name); err != netboot.ErrNotFound {
			t.Errorf("Open(%q) = %v, want not found", name, err)
		}
	}
}

// TestBooterServed: a served board's files follow its current boot; before
// its first request it has none.
func TestBooterServed(t *testing.T) {
	bt := NewBooter(net.IPv4(198, 18, 0, 1).To4(), net.CIDRMask(24, 32), "tftp")
	b := testBoard("pc1", boards.BootIPXE, "52:54:00:bb:05:20")
	n := 0
	bt.AddServed(b, func() (*Spec, error) {
		n++
		return &Spec{Run: results.RunID("run" + string(rune('0'+n))), Cmdline: "bootbench.run=run" + string(rune('0'+n))}, nil
	})
	if _, _, err := bt.Open("pc1/boot.ipxe"); err != netboot.ErrNotFound {
		t.Fatalf("a script before any boot: %v", err)
	}
	for _, want := range []string{"run1", "run2"} {
		if _, ok := bt.Plan(netboot.Client{MAC: b.MAC, IPXE: true}); !ok {
			t.Fatal("not answered")
		}
		if got := string(read(t, bt, "pc1/boot.ipxe")); !strings.Contains(got, "bootbench.run="+want) || !strings.Contains(got, "tftp://198.18.0.1/pc1/vmlinuz") {
			t.Errorf("script:\n%s\nwant run %s by tftp", got, want)
		}
	}
}

func read(t *testing.T, bt *Booter, name string) []byte {
	t.Helper()
	rc, size, err := bt.Open(name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil || int64(len(b)) != size {
		t.Fatalf("%s: read %d bytes (%v), size said %d", name, len(b), err, size)
	}
	return b
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

// TestReportNamesTheBoard: the servers know files and MACs; the Booter's
// Reporter names the board of each event.
func TestReportNamesTheBoard(t *testing.T) {
	b := testBoard("pc1", boards.BootIPXE, "52:54:00:bb:05:20")
	bt := NewBooter(net.IPv4(198, 18, 0, 1).To4(), net.CIDRMask(24, 32), "http")
	bt.AddBoot(b, &Spec{Run: "r"})
	other, _ := net.ParseMAC("52:54:00:00:00:99")
	tests := []struct {
		in                  netboot.Event
		wantBoard, wantFile string
	}{
		{netboot.Event{Kind: "http-done", File: KeyOf(b).File("initramfs.cpio")}, "pc1", "pc1/initramfs.cpio"},
		{netboot.Event{Kind: "tftp-done", File: "pc1/pxelinux.cfg/default"}, "pc1", "pc1/pxelinux.cfg/default"},
		{netboot.Event{Kind: "dhcp-ack", MAC: b.MAC}, "pc1", ""},
		{netboot.Event{Kind: "ignored", MAC: other}, "", ""},
		{netboot.Event{Kind: "tftp-error", File: "pc2/boot.ipxe"}, "", "pc2/boot.ipxe"},
	}
	for _, tt := range tests {
		var got netboot.Event
		bt.Report(func(e netboot.Event) { got = e })(tt.in)
		if got.Board != tt.wantBoard || got.File != tt.wantFile {
			t.Errorf("%s %s: board %q file %q; want %q %q", tt.in.Kind, tt.in.File, got.Board, got.File, tt.wantBoard, tt.wantFile)
		}
	}
	if k, name, ok := SplitFile(Key("rb1").File("kernel.elf")); !ok || k != "rb1" || name != "kernel.elf" {
		t.Errorf("SplitFile(File) = %q %q %v", k, name, ok)
	}
	if _, _, ok := SplitFile("boot.ipxe"); ok {
		t.Error("a path outside every board's folder split")
	}
}
