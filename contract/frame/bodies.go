package frame

// HelloBody is what the board reports before it runs anything. Fields the
// board could not find out are left out rather than sent as zero, so the
// host can tell "unknown" from a figure.
type HelloBody struct {
	Arch     string `json:"arch"`
	Kernel   string `json:"kernel"`
	CPU      string `json:"cpu,omitempty"`
	BogoMIPS string `json:"bogomips,omitempty"`
	Bench    string `json:"bench"`
	// Machine is the board or SoC as /proc/cpuinfo names it ("machine",
	// else "system type" on MIPS, "Hardware" on older ARM).
	Machine string `json:"machine,omitempty"`
	// CPUInfo are the lines of /proc/cpuinfo the OpenWrt wiki's OpenSSL
	// benchmark recipe reads (those with "system type", "machine", "cpu
	// model" or "BogoMIPS"), verbatim and in order, so the host can print
	// the row the recipe prints.
	CPUInfo []string `json:"cpuinfo,omitempty"`
	// Cpufreq's view of CPU 0 once the clock was set: the current clock
	// and the policy's limits.
	CPUFreqCurKHz int `json:"cpufreq_cur_khz,omitempty"`
	CPUFreqMinKHz int `json:"cpufreq_min_khz,omitempty"`
	CPUFreqMaxKHz int `json:"cpufreq_max_khz,omitempty"`
	// ClockRequestedMHz echoes bootbench.clock; ClockSet says what came of
	// it: "userspace 800000 kHz", "scaling_max_freq 680000 kHz", "no
	// cpufreq in this kernel", or the error.
	ClockRequestedMHz int    `json:"clock_requested_mhz,omitempty"`
	ClockSet          string `json:"clock_set,omitempty"`
	MemTotalKB        int64  `json:"mem_total_kb,omitempty"`
	Reps              int    `json:"reps,omitempty"`
	// Argv is the command an external benchmark runs as, {seconds}
	// replaced: the image, not the host, chose it.
	Argv []string `json:"argv,omitempty"`
	// GoRuntime is benchinit's Go runtime, with the correction the image
	// builder made to it ("go1.26.8 +mips-usleep").
	GoRuntime string `json:"go_runtime,omitempty"`
	// SleepProbeUS is how long SleepProbeWantUS worth of the runtime's
	// own 1 ms sleeps took on the board's clock: a runtime that sleeps too
	// short wakes its scheduler so often that a Go benchmark loses CPU.
	SleepProbeUS     int64 `json:"sleep_probe_us,omitempty"`
	SleepProbeWantUS int64 `json:"sleep_probe_want_us,omitempty"`
	// ClockEvent and ClockSource are the kernel's tick device and time
	// source ("MIPS", "pit", "arch_sys_timer"): every figure is timed by
	// them, and a virtual MIPS board that ticks from anything but its CP0
	// timer has hung in QEMU (docs/mips-cp0-timer.md).
	ClockEvent  string `json:"clockevent,omitempty"`
	ClockSource string `json:"clocksource,omitempty"`
}

// RawBody carries one chunk of the benchmark output.
type RawBody struct {
	N    int    `json:"n"`    // chunk number, from 0
	Data string `json:"data"` // base64 (std encoding)
}

// DoneBody closes a run.
type DoneBody struct {
	Chunks int    `json:"chunks"`
	SHA256 string `json:"sha256"` // hex, of the reassembled raw output
	Exit   int    `json:"exit"`
	// Reps is how many repetitions the output holds: fewer than asked
	// when one exited non-zero, since the board stops there.
	Reps int `json:"reps,omitempty"`
}

// FailBody says why the board gave up.
type FailBody struct {
	Reason string `json:"reason"`
}

// ReadyBody says the board routes in one configuration, with the rule set
// as its kernel lists it back (not as the board meant to write it).
type ReadyBody struct {
	Config string `json:"config"`
	// Rules are the netfilter rules in force, one line a rule
	// ("inet bootbench forward: meta iifname == ... counter accept"),
	// none for a configuration without a firewall.
	Rules []string `json:"rules"`
	// Conntrack says whether the rules make the kernel track connections.
	Conntrack bool `json:"conntrack"`
}

// CountersBody is what the board's kernel counted in one configuration,
// from its ready to the host's next command.
type CountersBody struct {
	Config string `json:"config"`
	// Forwarded is IP datagrams forwarded (/proc/net/snmp ForwDatagrams).
	Forwarded uint64 `json:"forwarded"`
	// Dropped is datagrams the IP layer discarded plus packets the rules
	// dropped.
	Dropped uint64 `json:"dropped"`
	// ConntrackEntries is the most the connection tracking table held at
	// the end of one of the host's tests or of the configuration: the
	// board empties the table when it applies a configuration, so these
	// are the connections tracked in this one.
	ConntrackEntries uint64 `json:"conntrack_entries"`
	// CPU is the board's CPU over each of the host's tests, in the order
	// the tests ran.
	CPU []CPUSample `json:"cpu,omitempty"`
}

// CPUSample is the board's CPU time over one test of the host's, between
// its "cpu begin" and "cpu end" commands, from /proc/stat's first line
// (every CPU's, in clock ticks): Busy is user, nice, system, irq, softirq
// and steal; Total adds idle and iowait. Busy/Total is the fraction of
// the time the CPUs were busy.
type CPUSample struct {
	Test  string `json:"test"` // the host's name for it: "1460/tcp-reverse"
	Busy  uint64 `json:"busy"`
	Total uint64 `json:"total"`
}

// WatchBody is a batch of the board's throttling watch: what its CPU
// clocks and thermal zones were while the benchmark ran. The first watch
// frame of a run names the zones; every sample lists their temperatures
// in that order.
type WatchBody struct {
	// Zones are the board's thermal zones with their trip points, in
	// the first watch frame only: they do not change during a run.
	Zones   []ThermalZone `json:"zones,omitempty"`
	Samples []WatchSample `json:"samples"`
}

// ThermalZone is one of /sys/class/thermal's zones.
type ThermalZone struct {
	Type  string      `json:"type"` // the zone's type file: "cpu-thermal", "x86_pkg_temp"
	Trips []TripPoint `json:"trips,omitempty"`
}

// TripPoint is a temperature at which the kernel acts on a zone.
type TripPoint struct {
	// Type is the kernel's: "passive" (it slows the CPU), "active" (it
	// starts a fan), "hot" or "critical" (it shuts down).
	Type   string `json:"type"`
	TempMC int    `json:"temp_mc"` // millidegrees Celsius
}

// WatchSample is one reading of the clocks and temperatures.
type WatchSample struct {
	// AtMS is when it was taken, in milliseconds since the benchmark
	// started.
	AtMS int64 `json:"at_ms"`
	// CurKHz is every cpufreq policy's current clock, CPU 0's first;
	// none when the kernel has no cpufreq.
	CurKHz []int `json:"cur_khz,omitempty"`
	// TempMC is each zone's temperature in millidegrees Celsius, in the
	// order of the zones.
	TempMC []int `json:"temp_mc,omitempty"`
}
