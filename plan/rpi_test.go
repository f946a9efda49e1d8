package plan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
)

// TestRaspberryPiPlan: a Pi's plan carries its firmware, its device tree
// and the run's arm_freq (with over_voltage only above the safe limit and
// only when allowed), and pins the clock through cpufreq as well.
func TestRaspberryPiPlan(t *testing.T) {
	p, err := boards.Get("rpi4b")
	if err != nil {
		t.Fatal(err)
	}
	pi := boards.Board{Name: "pi1", Profile: p, Serial: "9ffefdef"}
	for _, tt := range []struct {
		name        string
		job         Job
		wantErr     string
		armFreq     boards.MHz
		overVoltage int
	}{
		{"the stock clock", Job{Board: pi}, "", 1500, 0},
		{"the safe limit", Job{Board: pi, Clock: 1800}, "", 1800, 0},
		{"above it, not allowed", Job{Board: pi, Clock: 2000}, "the highest clock without over_voltage", 0, 0},
		{"above it, allowed", Job{Board: pi, Clock: 2000, AllowOvervoltage: true}, "", 2000, 6},
		{"above the firmware's", Job{Board: pi, Clock: 2500, AllowOvervoltage: true}, "above 2100 MHz", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job
			err := job.Settle()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("settled: %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pl := New(job)
			rp := pl.RaspberryPi
			if rp == nil || rp.ArmFreq != tt.armFreq || rp.OverVoltage != tt.overVoltage ||
				rp.DeviceTree != "broadcom/bcm2711-rpi-4-b.dtb" || strings.Join(rp.Firmware, ",") != "start4.elf,fixup4.dat" {
				t.Fatalf("plan's Pi part %+v", rp)
			}
			if pl.Wrap.Payload != "cpio.gz" || pl.Debian.Flavour != "arm64" {
				t.Errorf("wrap %+v, kernel %+v", pl.Wrap, pl.Debian)
			}
			if strings.Join(pl.Modules, ",") != "cpufreq-dt,raspberrypi-cpufreq,cpufreq_userspace" {
				t.Errorf("the image carries modules %v, want the Pi's cpufreq driver", pl.Modules)
			}
			want := "console=ttyS1,115200 panic=-1 quiet loglevel=1 bootbench.run=R bootbench.bench=speed bootbench.clock=" + tt.armFreq.Digits()
			if got := pl.Cmdline("R", nil); got != want {
				t.Errorf("command line %q, want %q", got, want)
			}
		})
	}
	if New(Job{Board: boards.Board{Profile: boards.Profile{Name: "pc", Boot: boards.BootIPXE}}}).RaspberryPi != nil {
		t.Error("a PC's plan has a Raspberry Pi part")
	}
}

// TestRaspberryPiBuild: making a Pi's plan asks for its firmware and
// device tree for the kernel it boots, and a rig without a way to fetch
// them is refused rather than booting a Pi that would find nothing.
func TestRaspberryPiBuild(t *testing.T) {
	p, _ := boards.Get("rpi4b")
	job := Job{Board: boards.Board{Name: "pi1", Profile: p}, Kernel: "k"}
	if err := job.Settle(); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "initramfs.cpio")
	os.WriteFile(img, []byte("070701"), 0o644)
	build := func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
		return &initramfs.Image{Path: img, Size: 6, Digest: "0123456789abcdef0123"}, nil
	}
	var asked RaspberryPi
	bs := Builders{BuildImage: build, CacheDir: t.TempDir(), RaspberryPi: func(_ context.Context, kernel string, rp RaspberryPi) (map[string]string, error) {
		asked = rp
		return map[string]string{"start4.elf": "/cache/start4.elf"}, nil
	}}
	built, err := bs.Make(context.Background(), New(job), "")
	if err == nil {
		t.Fatalf("made without a kernel: %+v", built)
	}
	kernel := filepath.Join(t.TempDir(), "vmlinuz")
	os.WriteFile(kernel, []byte("not an ELF: an arm64 Image"), 0o644)
	built, err = bs.Make(context.Background(), New(job), kernel)
	if err != nil {
		t.Fatal(err)
	}
	if built.RaspberryPiFiles["start4.elf"] != "/cache/start4.elf" || asked.DeviceTree != "broadcom/bcm2711-rpi-4-b.dtb" || asked.ArmFreq != 1500 {
		t.Errorf("files %v, asked for %+v", built.RaspberryPiFiles, asked)
	}
	bs.RaspberryPi = nil
	if _, err := bs.Make(context.Background(), New(job), kernel); err == nil || !strings.Contains(err.Error(), "firmware and device tree") {
		t.Errorf("no fetcher: %v", err)
	}
}
