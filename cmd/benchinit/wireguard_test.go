package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	testKey  = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
	testPeer = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg="
)

func TestParseWireGuard(t *testing.T) {
	good := "key=" + testKey + " peer=" + testPeer + " addr=198.18.4.1/24 port=51820 allowed=198.18.4.2/32"
	tests := []struct {
		args, err string
	}{
		{good, ""},
		{strings.Replace(good, "port=51820", "", 1), "lacks port="},
		{strings.Replace(good, "key="+testKey, "key=abc", 1), `key: "abc" is not a base64 WireGuard key`},
		{strings.Replace(good, "port=51820", "port=70000", 1), "port:"},
		{strings.Replace(good, "addr=198.18.4.1/24", "addr=fd00::1/64", 1), "not IPv4"},
		{good + " mtu=1420", `unknown setting "mtu=1420"`},
		{good + " seed=" + testPeer, ""},
		{good + " seed=c2VlZA==", `seed: "c2VlZA==" is not 32 bytes in base64`},
		{good + " seed=!", `seed: "!" is not 32 bytes in base64`},
	}
	for _, tt := range tests {
		w, err := parseWireGuard(tt.args)
		if tt.err == "" {
			if err != nil {
				t.Errorf("%q: %v", tt.args, err)
			} else if w.port != 51820 || w.addr.String() != "198.18.4.1/24" || w.allowed.String() != "198.18.4.2/32" || w.key[0] != 0xc8 {
				t.Errorf("%q: %+v", tt.args, w)
			} else if strings.Contains(tt.args, "seed=") != (len(w.seed) == 32) {
				t.Errorf("%q: seed %x", tt.args, w.seed)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: error %v, want %q", tt.args, err, tt.err)
		}
	}
}

// WG_CMD_SET_DEVICE's bytes (a golden file): the interface, the key, the
// port in host byte order, the replace-peers flag, and one peer with one
// allowed address, each level nested (NLA_F_NESTED) as the kernel's
// wireguard netlink policy parses them.
func TestWireGuardSetMessage(t *testing.T) {
	w, err := parseWireGuard("key=" + testKey + " peer=" + testPeer + " addr=198.18.4.1/24 port=51820 allowed=198.18.4.2/32")
	if err != nil {
		t.Fatal(err)
	}
	got := hex.Dump(wgSetMsg("wg0", w))
	golden := filepath.Join("testdata", "wg-set-device.hex")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("message:\n%s\nwant:\n%s", got, want)
	}
}

// The generic netlink controller names its own family's id: GENL_ID_CTRL,
// on any kernel (the board asks it for wireguard's the same way).
func TestGenlFamily(t *testing.T) {
	id, err := genlFamily("nlctrl")
	if err != nil || id != unix.GENL_ID_CTRL {
		t.Fatalf("genlFamily(nlctrl) = %d, %v; want %d", id, err, unix.GENL_ID_CTRL)
	}
	if _, err := genlFamily("bootbench-no-such-family"); err == nil {
		t.Error("a family that does not exist has an id")
	}
}
