package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want cpuInfo
	}{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: QEMU Virtual CPU version 2.5+\nbogomips\t: 1999.98\n",
			cpuInfo{model: "QEMU Virtual CPU version 2.5+", bogoMIPS: "1999.98"}},
		{"mips router", "system type\t\t: Atheros AR7161 rev 2\nmachine\t\t\t: MikroTik RouterBOARD 450G\nprocessor\t\t: 0\ncpu model\t\t: MIPS 24Kc V7.4\nBogoMIPS\t\t: 452.19\n",
			cpuInfo{model: "MIPS 24Kc V7.4", machine: "MikroTik RouterBOARD 450G", bogoMIPS: "452.19"}},
		{"mips without machine", "system type\t\t: Atheros AR9344 rev 2\nprocessor\t\t: 0\ncpu model\t\t: MIPS 74Kc V4.12\nBogoMIPS\t\t: 278.93\n",
			cpuInfo{model: "MIPS 74Kc V4.12", machine: "Atheros AR9344 rev 2", bogoMIPS: "278.93"}},
		{"old arm", "Processor\t: ARMv7 Processor rev 0 (v7l)\nBogoMIPS\t: 1292.69\nHardware\t: BCM2709\n",
			cpuInfo{model: "ARMv7 Processor rev 0 (v7l)", machine: "BCM2709", bogoMIPS: "1292.69"}},
		{"arm64 without names", "processor\t: 0\nBogoMIPS\t: 125.00\nFeatures\t: fp asimd\n", cpuInfo{bogoMIPS: "125.00"}},
		{"empty", "", cpuInfo{}},
	}
	for _, tt := range tests {
		if got := parseCPUInfo(tt.in); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestMemTotalKB(t *testing.T) {
	tests := []struct {
		name, in string
		want     int64
	}{
		{"linux", "MemTotal:          61572 kB\nMemFree:           40100 kB\n", 61572},
		{"not first", "MemFree:  1 kB\nMemTotal: 16100000 kB\n", 16100000},
		{"missing", "MemFree:  1 kB\n", 0},
		{"other unit", "MemTotal: 60 MB\n", 0},
		{"garbage", "MemTotal: lots kB\n", 0},
		{"empty", "", 0},
	}
	for _, tt := range tests {
		if got := memTotalKB(tt.in); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

// fakeCPU is one CPU's cpufreq directory in a fake /sys: file name to
// contents. A value of "<dir>" makes a directory instead, which no write
// can go to.
type fakeCPU map[string]string

// fakeSys lays out a /sys tree with one cpufreq directory per CPU.
func fakeSys(t *testing.T, cpus ...fakeCPU) string {
	t.Helper()
	root := t.TempDir()
	for i, files := range cpus {
		dir := filepath.Join(root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(i), "cpufreq")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range files {
			p := filepath.Join(dir, name)
			var err error
			if v == "<dir>" {
				err = os.Mkdir(p, 0o755)
			} else {
				err = os.WriteFile(p, []byte(v+"\n"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func readFake(t *testing.T, root string, cpu int, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "sys/devices/system/cpu", "cpu"+strconv.Itoa(cpu), "cpufreq", name))
	if err != nil {
		return "<missing>"
	}
	return strings.TrimSpace(string(b))
}

func TestSetClock(t *testing.T) {
	userspace := func() fakeCPU {
		return fakeCPU{
			"scaling_available_governors": "conservative ondemand userspace powersave performance",
			"scaling_governor":            "ondemand",
			"scaling_setspeed":            "<unsupported>",
			"scaling_cur_freq":            "799999",
			"scaling_min_freq":            "400000",
			"scaling_max_freq":            "800000",
		}
	}
	capOnly := func() fakeCPU {
		return fakeCPU{
			"scaling_available_governors": "performance powersave",
			"scaling_governor":            "performance",
			"scaling_cur_freq":            "680000",
			"scaling_min_freq":            "400000",
			"scaling_max_freq":            "680000",
		}
	}
	broken := userspace()
	broken["scaling_setspeed"] = "<dir>"
	tests := []struct {
		name  string
		cpus  []fakeCPU
		mhz   int
		want  string            // the report
		files map[string]string // cpu0 (and cpu1 if present) file contents afterwards
	}{
		{"not asked", []fakeCPU{userspace()}, 0, "",
			map[string]string{"scaling_governor": "ondemand", "scaling_setspeed": "<unsupported>"}},
		{"no cpufreq", nil, 800, "no cpufreq in this kernel", nil},
		{"userspace", []fakeCPU{userspace(), userspace()}, 800, "userspace 799999 kHz",
			map[string]string{"scaling_governor": "userspace", "scaling_setspeed": "800000", "scaling_max_freq": "800000"}},
		{"cap, raise", []fakeCPU{capOnly()}, 800, "scaling_max_freq 800000 kHz",
			map[string]string{"scaling_governor": "performance", "scaling_max_freq": "800000", "scaling_min_freq": "800000"}},
		{"cap, lower below the floor", []fakeCPU{capOnly(), capOnly()}, 300, "scaling_max_freq 300000 kHz",
			map[string]string{"scaling_max_freq": "300000", "scaling_min_freq": "300000"}},
		{"write refused", []fakeCPU{broken}, 800, "failed on cpu0: userspace governor: ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeSys(t, tt.cpus...)
			got := setClock(root, tt.mhz)
			if !strings.HasPrefix(got, tt.want) || (tt.want == "" && got != "") {
				t.Errorf("setClock(%d) = %q, want %q", tt.mhz, got, tt.want)
			}
			for cpu := range tt.cpus {
				for name, want := range tt.files {
					if got := readFake(t, root, cpu, name); got != want {
						t.Errorf("cpu%d %s = %q, want %q", cpu, name, got, want)
					}
				}
			}
		})
	}
}

func TestReadCPUFreq(t *testing.T) {
	tests := []struct {
		name string
		cpus []fakeCPU
		want cpufreq
	}{
		{"none", nil, cpufreq{}},
		{"scaling", []fakeCPU{{"scaling_cur_freq": "680000", "scaling_min_freq": "200000", "scaling_max_freq": "800000"}, {"scaling_cur_freq": "1"}},
			cpufreq{curKHz: 680000, minKHz: 200000, maxKHz: 800000}},
		{"hardware reading only", []fakeCPU{{"cpuinfo_cur_freq": "533000", "scaling_max_freq": "junk"}}, cpufreq{curKHz: 533000}},
	}
	for _, tt := range tests {
		if got := readCPUFreq(fakeSys(t, tt.cpus...)); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestCPUFreqSharedPolicy checks a policy shared by several CPUs (cpuN/cpufreq
// links to one policyM on current kernels) is set once.
func TestCPUFreqSharedPolicy(t *testing.T) {
	root := t.TempDir()
	cpu := filepath.Join(root, "sys/devices/system/cpu")
	policy := filepath.Join(cpu, "cpufreq/policy0")
	if err := os.MkdirAll(policy, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		dir := filepath.Join(cpu, "cpu"+strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../cpufreq/policy0", filepath.Join(dir, "cpufreq")); err != nil {
			t.Fatal(err)
		}
	}
	got := cpufreqDirs(root)
	if want := []string{filepath.Join(cpu, "cpu0/cpufreq")}; !reflect.DeepEqual(got, want) {
		t.Errorf("cpufreqDirs = %q, want %q", got, want)
	}
}

func TestMissingMounts(t *testing.T) {
	tests := []struct {
		name    string
		present []string // paths that exist below the root
		want    []string // file systems to mount
	}{
		{"under u-root's init", []string{"proc/self", "sys/kernel", "dev/null"}, nil},
		// /proc/self is the test: a bare /sys then is still left alone.
		{"proc there, sys not", []string{"proc/self", "dev/null"}, nil},
		{"kernel's init, empty root", nil, []string{"proc", "sysfs", "devtmpfs"}},
		{"kernel's init, static /dev", []string{"dev/null"}, []string{"proc", "sysfs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, p := range tt.present {
				if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, m := range missingMounts(root) {
				got = append(got, m.fstype)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("missingMounts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadTimers(t *testing.T) {
	tests := []struct {
		name          string
		files         map[string]string
		event, source string
	}{
		{"no sysfs", nil, "", ""},
		{"CP0 timer", map[string]string{
			"sys/devices/system/clockevents/clockevent0/current_device":       "MIPS\n",
			"sys/devices/system/clocksource/clocksource0/current_clocksource": "MIPS\n",
		}, "MIPS", "MIPS"},
		{"ticks from the i8253", map[string]string{
			"sys/devices/system/clockevents/clockevent0/current_device": "pit\n",
		}, "pit", ""},
	}
	for _, tt := range tests {
		root := t.TempDir()
		for rel, text := range tt.files {
			p := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if e, s := readTimers(root); e != tt.event || s != tt.source {
			t.Errorf("%s: got %q, %q; want %q, %q", tt.name, e, s, tt.event, tt.source)
		}
	}
}
