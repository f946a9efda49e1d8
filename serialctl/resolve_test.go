package serialctl

import (
	"errors"
	"strings"
	"testing"

	"go.bug.st/serial/enumerator"
)

func TestResolve(t *testing.T) {
	// As enumerator.GetDetailedPortsList reports them on Linux: VID and
	// PID upper case, serial numbers as the adapter has them.
	ftdiA := &enumerator.PortDetails{Name: "/dev/ttyUSB0", IsUSB: true, VID: "0403", PID: "6001", SerialNumber: "A50285BI"}
	ftdiB := &enumerator.PortDetails{Name: "/dev/ttyUSB1", IsUSB: true, VID: "0403", PID: "6001", SerialNumber: "A6008ISP"}
	cp210x := &enumerator.PortDetails{Name: "/dev/ttyUSB2", IsUSB: true, VID: "10C4", PID: "EA60", SerialNumber: "0001"}
	ch340 := &enumerator.PortDetails{Name: "/dev/ttyUSB3", IsUSB: true, VID: "1A86", PID: "7523"}
	uart := &enumerator.PortDetails{Name: "/dev/ttyS0"}
	all := []*enumerator.PortDetails{uart, ftdiA, ftdiB, cp210x, ch340}

	tests := []struct {
		name    string
		spec    string
		ports   []*enumerator.PortDetails
		want    string
		is      error    // the error's kind, when it fails
		mention []string // what the error must say
	}{
		{name: "path passes through", spec: "/dev/serial/by-id/usb-FTDI-if00-port0", ports: nil, want: "/dev/serial/by-id/usb-FTDI-if00-port0"},
		{name: "vid pid serial", spec: "usb:0403:6001:A6008ISP", ports: all, want: "/dev/ttyUSB1"},
		{name: "lower-case hex matches upper-case ids", spec: "usb:10c4:ea60", ports: all, want: "/dev/ttyUSB2"},
		{name: "upper-case hex in the spec", spec: "usb:10C4:EA60:0001", ports: all, want: "/dev/ttyUSB2"},
		{name: "one adapter needs no serial", spec: "usb:0403:6001", ports: []*enumerator.PortDetails{uart, ftdiA}, want: "/dev/ttyUSB0"},
		{name: "adapter without serial number", spec: "usb:1a86:7523", ports: all, want: "/dev/ttyUSB3"},
		{name: "two adapters share vid pid", spec: "usb:0403:6001", ports: all, is: ErrAmbiguous,
			mention: []string{"usb:0403:6001:A50285BI (/dev/ttyUSB0)", "usb:0403:6001:A6008ISP (/dev/ttyUSB1)", "serial number"}},
		{name: "serial number is exact", spec: "usb:0403:6001:a50285bi", ports: all, is: ErrNoPort,
			mention: []string{"/dev/ttyUSB0 (usb:0403:6001:A50285BI)", "/dev/ttyUSB3 (usb:1a86:7523, no serial number)", "/dev/ttyS0 (not USB)"}},
		{name: "no such adapter lists the present ones", spec: "usb:067b:2303", ports: all, is: ErrNoPort,
			mention: []string{"no console usb:067b:2303", "/dev/ttyUSB2 (usb:10c4:ea60:0001)"}},
		{name: "nothing present", spec: "usb:0403:6001", ports: nil, is: ErrNoPort,
			mention: []string{"no serial ports are present"}},
		{name: "a UART is not a USB match", spec: "usb:0000:0000", ports: []*enumerator.PortDetails{uart}, is: ErrNoPort,
			mention: []string{"/dev/ttyS0 (not USB)"}},
		{name: "malformed spec", spec: "usb:403:6001", ports: all, mention: []string{"4-digit hex"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.spec, tt.ports)
			if tt.mention == nil {
				if err != nil || got != tt.want {
					t.Fatalf("Resolve(%q) = %q, %v; want %q", tt.spec, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want an error", tt.spec, got)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}
