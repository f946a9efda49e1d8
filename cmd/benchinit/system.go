package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Everything here reads and writes below a root directory rather than at
// "/", so the logic is tested against a fake /proc and /sys tree; on the
// board root is "/".

// basicMount is a file system the board needs and the path that shows it
// is already there.
type basicMount struct {
	source, dir, fstype string
	flags               uintptr
	probe               string
}

var basicMounts = []basicMount{
	{"proc", "proc", "proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "proc/self"},
	{"sysfs", "sys", "sysfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "sys/kernel"},
	// No MS_NODEV: device nodes are what /dev is for.
	{"devtmpfs", "dev", "devtmpfs", unix.MS_NOSUID, "dev/null"},
}

// missingMounts returns what has to be mounted. u-root's init mounts all
// of these before it starts us as uinit, and then nothing is: mounting
// again would hide its /dev. Only when there is no /proc/self are we the
// kernel's init (rdinit=), and then each one is mounted unless something
// (a static /dev in the archive, say) is already in its place.
func missingMounts(root string) []basicMount {
	if exists(filepath.Join(root, "proc/self")) {
		return nil
	}
	var need []basicMount
	for _, m := range basicMounts {
		if !exists(filepath.Join(root, m.probe)) {
			need = append(need, m)
		}
	}
	return need
}

func mountBasics(root string) error {
	var errs []error
	for _, m := range missingMounts(root) {
		dir := filepath.Join(root, m.dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := unix.Mount(m.source, dir, m.fstype, m.flags, ""); err != nil {
			errs = append(errs, fmt.Errorf("mount %s on %s: %w", m.fstype, dir, err))
		}
	}
	return errors.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// quietConsole keeps the kernel's messages off the console but for
// emergencies, so they do not land in the middle of a frame: a mangled
// frame costs the whole run.
func quietConsole(root string) error {
	return writeFile(filepath.Join(root, "proc/sys/kernel/printk"), "1 4 1 7")
}

// cpuInfo is what /proc/cpuinfo says about the processor.
type cpuInfo struct {
	model, machine, bogoMIPS string
}

// parseCPUInfo picks the CPU's name, the machine's and BogoMIPS out of
// /proc/cpuinfo, whose keys differ by architecture: x86 says "model name",
// MIPS "cpu model" (and "system type" for the SoC, "machine" for the
// board), older ARM "Processor" (and "Hardware"), RISC-V "uarch".
func parseCPUInfo(cpuinfo string) cpuInfo {
	var c cpuInfo
	var systemType, hardware string
	for _, line := range strings.Split(cpuinfo, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch strings.ToLower(k) {
		case "model name", "cpu model", "processor", "cpu", "uarch":
			// "processor : 0" on x86 is an index, not a name.
			if c.model == "" && v != "" && !isDigits(v) {
				c.model = v
			}
		case "bogomips":
			if c.bogoMIPS == "" {
				c.bogoMIPS = v
			}
		case "machine":
			// The board ("MikroTik RouterBOARD 450G") says more than
			// the SoC, so it wins over "system type".
			if c.machine == "" {
				c.machine = v
			}
		case "system type":
			if systemType == "" {
				systemType = v
			}
		case "hardware":
			if hardware == "" {
				hardware = v
			}
		}
	}
	for _, alt := range []string{systemType, hardware} {
		if c.machine == "" {
			c.machine = alt
		}
	}
	return c
}

func isDigits(s string) bool {
	return strings.Trim(s, "0123456789") == ""
}

// memTotalKB reads MemTotal out of /proc/meminfo; 0 if it is not there.
func memTotalKB(meminfo string) int64 { return meminfoKB(meminfo, "MemTotal") }

// meminfoKB reads one field of /proc/meminfo in kB, 0 if it is not there.
func meminfoKB(meminfo, field string) int64 {
	for _, line := range strings.Split(meminfo, "\n") {
		v, ok := strings.CutPrefix(line, field+":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 || (len(f) > 1 && f[1] != "kB") {
			return 0
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	return 0
}

// cpufreq is cpufreq's view of one CPU, in kHz; 0 where unknown.
type cpufreq struct {
	curKHz, minKHz, maxKHz int
}

// cpufreqDirs returns each CPU's cpufreq directory, CPU 0 first, one per
// policy: on recent kernels cpuN/cpufreq is a link to the policy that
// CPUs sharing a clock have in common, and it is set once.
func cpufreqDirs(root string) []string {
	matches, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/cpu[0-9]*/cpufreq"))
	cpuNum := func(dir string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(dir)), "cpu"))
		return n
	}
	slices.SortFunc(matches, func(a, b string) int { return cpuNum(a) - cpuNum(b) })
	var dirs []string
	seen := map[string]bool{}
	for _, m := range matches {
		real, err := filepath.EvalSymlinks(m)
		if err != nil || seen[real] {
			continue
		}
		seen[real] = true
		dirs = append(dirs, m)
	}
	return dirs
}

// readCPUFreq reports CPU 0's clock and its policy's limits.
func readCPUFreq(root string) cpufreq {
	dirs := cpufreqDirs(root)
	if len(dirs) == 0 {
		return cpufreq{}
	}
	d := dirs[0]
	f := cpufreq{
		curKHz: readKHz(d, "scaling_cur_freq"),
		minKHz: readKHz(d, "scaling_min_freq"),
		maxKHz: readKHz(d, "scaling_max_freq"),
	}
	if f.curKHz == 0 {
		// Some drivers only offer the hardware's own reading.
		f.curKHz = readKHz(d, "cpuinfo_cur_freq")
	}
	return f
}

// setClock asks cpufreq for mhz on every CPU and says what came of it, in
// words for the hello frame. It never stops the run: the hello frame
// carries the clock the board ended up at, and the host, which knows how
// the profile sets clocks, decides what a miss means.
func setClock(root string, mhz int) string {
	if mhz <= 0 {
		return ""
	}
	dirs := cpufreqDirs(root)
	if len(dirs) == 0 {
		return "no cpufreq in this kernel"
	}
	var got string
	for i, d := range dirs {
		s, err := setPolicyClock(d, mhz*1000)
		if err != nil {
			return fmt.Sprintf("failed on %s: %v", filepath.Base(filepath.Dir(d)), err)
		}
		if i == 0 {
			got = s
		}
	}
	return got
}

// setPolicyClock sets one policy to khz: with the userspace governor if
// the kernel has it, since that pins the clock exactly; else by moving the
// policy's limits to khz, which every governor obeys.
func setPolicyClock(dir string, khz int) (string, error) {
	govs, _ := os.ReadFile(filepath.Join(dir, "scaling_available_governors"))
	want := strconv.Itoa(khz)
	if slices.Contains(strings.Fields(string(govs)), "userspace") {
		if err := writeFile(filepath.Join(dir, "scaling_governor"), "userspace"); err != nil {
			return "", fmt.Errorf("userspace governor: %w", err)
		}
		if err := writeFile(filepath.Join(dir, "scaling_setspeed"), want); err != nil {
			return "", fmt.Errorf("userspace governor: %w", err)
		}
		// The driver picks the nearest clock it has: report that one.
		return fmt.Sprintf("userspace %d kHz", readKHz(dir, "scaling_cur_freq")), nil
	}
	// Older kernels refuse a minimum above the maximum, even for a
	// moment, so which limit moves first depends on the direction.
	minPath, maxPath := filepath.Join(dir, "scaling_min_freq"), filepath.Join(dir, "scaling_max_freq")
	if khz < readKHz(dir, "scaling_min_freq") {
		_ = writeFile(minPath, want)
		if err := writeFile(maxPath, want); err != nil {
			return "", fmt.Errorf("scaling_max_freq: %w", err)
		}
	} else {
		if err := writeFile(maxPath, want); err != nil {
			return "", fmt.Errorf("scaling_max_freq: %w", err)
		}
		// Raising the floor as well holds an on-demand governor at the
		// clock instead of idling below it between bursts; the cap alone
		// is what was asked, so a refusal here is no failure.
		_ = writeFile(minPath, want)
	}
	return fmt.Sprintf("scaling_max_freq %d kHz", readKHz(dir, "scaling_max_freq")), nil
}

func readKHz(dir, name string) int {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// writeFile writes a kernel setting. It never creates the file: a setting
// the kernel lacks is an error, not a new file in a tmpfs.
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s %s: %w", filepath.Base(path), value, err)
	}
	return nil
}

// readTimers names CPU 0's tick device and the clocksource, as sysfs has
// them; "" where the kernel has no such file.
func readTimers(root string) (clockEvent, clockSource string) {
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	return read("sys/devices/system/clockevents/clockevent0/current_device"),
		read("sys/devices/system/clocksource/clocksource0/current_clocksource")
}
