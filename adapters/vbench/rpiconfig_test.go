package vbench

import (
	"strings"
	"testing"
)

// TestPiConfig: config.txt read as a Pi 4's firmware reads it, for the
// board with serial bb0004b1: defaults, later lines winning, comments,
// and the conditional filters that do and do not apply to a Pi 4B.
func TestPiConfig(t *testing.T) {
	type want struct {
		kernel, initramfs, dtb, cmdline string
		armFreq                         int
	}
	def := want{kernel: "kernel7l.img", dtb: "bcm2711-rpi-4-b.dtb", cmdline: "cmdline.txt"}
	with := func(f func(*want)) want { w := def; f(&w); return w }
	tests := []struct {
		name, text string
		want       want
	}{
		{"empty: the Pi 4's defaults", "", def},
		{"arm_64bit loads kernel8.img", "arm_64bit=1\n", with(func(w *want) { w.kernel = "kernel8.img" })},
		{"kernel= wins over arm_64bit", "arm_64bit=1\nkernel=Image\n", with(func(w *want) { w.kernel = "Image" })},
		{"named files", "kernel=vmlinuz\ninitramfs initrd.img followkernel\ndevice_tree=my.dtb\ncmdline=cmd2.txt\narm_freq=500\n",
			want{kernel: "vmlinuz", initramfs: "initrd.img", dtb: "my.dtb", cmdline: "cmd2.txt", armFreq: 500}},
		{"initramfs at 0 is followkernel", "initramfs rd 0\n", with(func(w *want) { w.initramfs = "rd" })},
		{"the later line wins", "arm_freq=1000\narm_freq=500\n", with(func(w *want) { w.armFreq = 500 })},
		{"comments", "# arm_freq=250\n  # kernel=x\narm_freq=1000\n", with(func(w *want) { w.armFreq = 1000 })},
		{"spaces around =, CRLF", "arm_freq = 250\r\nkernel=k.img\r\n", with(func(w *want) { w.armFreq, w.kernel = 250, "k.img" })},
		{"[pi4] applies, [pi3] does not", "[pi3]\narm_freq=1200\n[pi4]\narm_freq=500\n[all]\n", with(func(w *want) { w.armFreq = 500 })},
		{"[pi3] after [pi4] replaces it", "[pi4]\narm_freq=500\n[pi3]\narm_freq=1200\n[all]\n", with(func(w *want) { w.armFreq = 500 })},
		{"[pi400] and [cm4] are other boards", "[pi400]\narm_freq=2000\n[cm4]\nkernel=cm.img\n[all]\n", def},
		{"[board-type=0x11] is the 4B", "[board-type=0x11]\narm_freq=250\n", with(func(w *want) { w.armFreq = 250 })},
		{"[none] until [all]", "[none]\nkernel=x\n[all]\narm_freq=500\n", with(func(w *want) { w.armFreq = 500 })},
		{"this board's serial", "[0xbb0004b1]\narm_freq=250\n[0x12345678]\narm_freq=1000\n[all]\n", with(func(w *want) { w.armFreq = 250 })},
		{"serial and model combine", "[0xbb0004b1]\n[pi3]\narm_freq=1200\n[pi4]\nkernel=both.img\n[all]\n", with(func(w *want) { w.kernel = "both.img" })},
		{"[all] resets the serial filter", "[0x12345678]\n[all]\narm_freq=500\n", with(func(w *want) { w.armFreq = 500 })},
		{"no GPIO, monitor or tryboot here", "[gpio4=1]\narm_freq=250\n[all]\n[EDID=DEL-DELL_U2422H]\nkernel=x\n[all]\n[tryboot]\nkernel=y\n", def},
		{"[HDMI:0] selects a port only", "[HDMI:0]\narm_freq=250\n", with(func(w *want) { w.armFreq = 250 })},
		{"settings it does not use", "dtoverlay=disable-bt\nenable_uart=1\nover_voltage=6\n", def},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parsePiConfig(tt.text, "bb0004b1")
			if err != nil {
				t.Fatal(err)
			}
			got := want{kernel: c.KernelFile(), initramfs: c.Initramfs, dtb: c.DeviceTreeFile(), cmdline: c.CmdlineFile(), armFreq: c.ArmFreq}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPiConfigRefuses: lines the twin cannot follow say which and why.
func TestPiConfigRefuses(t *testing.T) {
	tests := []struct{ text, want string }{
		{"arm_freq=fast\n", "line 1: arm_freq=fast is not a clock in MHz"},
		{"# x\ninitramfs rd 0x00800000\n", "line 2: initramfs at address 0x00800000"},
		{"initramfs\n", "initramfs without a file"},
	}
	for _, tt := range tests {
		_, err := parsePiConfig(tt.text, "bb0004b1")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.text, err, tt.want)
		}
	}
	if _, err := parsePiConfig("[pi3]\narm_freq=fast\n[all]\n", "bb0004b1"); err != nil {
		t.Errorf("a line in a section for other boards is not read: %v", err)
	}
}

// TestPiCmdline: cmdline.txt's first line, and its console on virt's UART.
func TestPiCmdline(t *testing.T) {
	tests := []struct{ text, cmdline, onVirt string }{
		{"console=serial0,115200 console=tty1 root=/dev/nfs rw\n", "console=serial0,115200 console=tty1 root=/dev/nfs rw", "console=ttyAMA0,115200 console=tty1 root=/dev/nfs rw"},
		{"console=ttyS0,115200 quiet\nsecond line\n", "console=ttyS0,115200 quiet", "console=ttyAMA0,115200 quiet"},
		{"  console=serial0  bootbench.run=x \r\n", "console=serial0  bootbench.run=x", "console=ttyAMA0 bootbench.run=x"},
		{"console=ttyS1,115200 bootbench.run=x", "console=ttyS1,115200 bootbench.run=x", "console=ttyAMA0,115200 bootbench.run=x"},
		{"console=serial1,115200 earlycon", "console=serial1,115200 earlycon", "console=serial1,115200 earlycon"},
		{"xconsole=serial0", "xconsole=serial0", "xconsole=serial0"},
		{"", "", ""},
	}
	for _, tt := range tests {
		got := parseCmdline(tt.text)
		if got != tt.cmdline {
			t.Errorf("parseCmdline(%q) = %q, want %q", tt.text, got, tt.cmdline)
		}
		if v := virtConsole(got); v != tt.onVirt {
			t.Errorf("virtConsole(%q) = %q, want %q", got, v, tt.onVirt)
		}
	}
}
