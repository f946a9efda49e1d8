package netboot

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/iana"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// kindPlan names a boot file per kind of client, so each dialect's answer
// can be told apart.
type kindPlan struct{}

func (kindPlan) Plan(c Client) (Offer, bool) {
	if c.MAC.String() != knownMAC.String() {
		return Offer{}, false
	}
	return Offer{IP: testBoard, Mask: []byte{255, 255, 255, 0}, Server: testServer, BootFile: "file-for-" + string(c.Kind())}, true
}

// TestDialectReplies: the answer every kind of boot client gets, byte for
// byte as Summary shows it (testdata/replies/*.golden, -update rewrites).
func TestDialectReplies(t *testing.T) {
	xid := dhcpv4.WithTransactionID(dhcpv4.TransactionID{0xde, 0xad, 0xbe, 0xef})
	discover := func(mods ...dhcpv4.Modifier) func() *dhcpv4.DHCPv4 {
		return func() *dhcpv4.DHCPv4 {
			m, err := dhcpv4.NewDiscovery(knownMAC, append([]dhcpv4.Modifier{xid}, mods...)...)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	arch := func(a iana.Arch) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClientArch(a)) }
	class := func(s string) dhcpv4.Modifier { return dhcpv4.WithOption(dhcpv4.OptClassIdentifier(s)) }
	tests := []struct {
		name     string
		req      func() *dhcpv4.DHCPv4
		kind     ClientKind
		evKind   string
		noOpt53  bool
		wantOpts []dhcpv4.OptionCode
	}{
		{"routerboot-bootp", func() *dhcpv4.DHCPv4 {
			m, err := ParseRequest(rawBOOTP(knownMAC))
			if err != nil {
				t.Fatal(err)
			}
			return m
		}, ClientBOOTP, "bootp-reply", true, []dhcpv4.OptionCode{dhcpv4.OptionSubnetMask}},
		{"routerboot-dhcp", discover(class("Mips_boot")), ClientRouterBOOT, "dhcp-offer", false, nil},
		{"pxe-bios", discover(class("PXEClient:Arch:00000:UNDI:002001"), arch(iana.INTEL_X86PC)), ClientPXE, "dhcp-offer", false, nil},
		{"pxe-uefi-x64", discover(class("PXEClient:Arch:00007:UNDI:003000"), arch(iana.EFI_X86_64)), ClientPXE, "dhcp-offer", false, nil},
		{"ipxe", discover(class("PXEClient:Arch:00000:UNDI:002001"), arch(iana.INTEL_X86PC), dhcpv4.WithUserClass("iPXE", false)), ClientIPXE, "dhcp-offer", false, []dhcpv4.OptionCode{dhcpv4.GenericOptionCode(175)}},
		{"u-boot", discover(class("U-Boot.armv8"), arch(iana.UBOOT_ARM64)), ClientUBoot, "dhcp-offer", false, nil},
		{"u-boot-pxe-class", discover(class("PXEClient:Arch:00022:UNDI:003000"), arch(iana.UBOOT_ARM64)), ClientUBoot, "dhcp-offer", false, nil},
		{"dhcp", discover(), ClientDHCP, "dhcp-offer", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req()
			if k := clientOf(req).Kind(); k != tt.kind {
				t.Fatalf("client kind %q, want %q", k, tt.kind)
			}
			resp, ev := Reply(req, kindPlan{})
			if resp == nil || ev.Kind != tt.evKind {
				t.Fatalf("event %q, answer %v; want %q", ev.Kind, resp, tt.evKind)
			}
			if resp.BootFileName != "file-for-"+string(tt.kind) || !resp.ServerIPAddr.Equal(testServer) || !resp.YourIPAddr.Equal(testBoard) {
				t.Errorf("file %q siaddr %v yiaddr %v", resp.BootFileName, resp.ServerIPAddr, resp.YourIPAddr)
			}
			if tt.noOpt53 && optionCodes(resp) != "1" {
				t.Errorf("BOOTP reply carries options %s, want the subnet mask (1) alone", optionCodes(resp))
			}
			if has := resp.Options.Has(dhcpv4.OptionDHCPMessageType); has == tt.noOpt53 {
				t.Errorf("option 53 present: %v, want %v", has, !tt.noOpt53)
			}
			for _, o := range tt.wantOpts {
				if !resp.Options.Has(o) {
					t.Errorf("answer lacks %v", o)
				}
			}
			if n := len(resp.ToBytes()); n < 300 {
				t.Errorf("answer of %d bytes: BOOTP clients drop packets under RFC 951's 300", n)
			}
			golden(t, filepath.Join("testdata", "replies", tt.name+".golden"), []byte(resp.Summary()))
		})
	}
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
	if string(got) != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
