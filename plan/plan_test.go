package plan

import (
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/bootparam"
)

// TestNew: the plan of a job says the kernel, the image, its wrapping and
// the command line, from the board's profile and the job.
func TestNew(t *testing.T) {
	rb := boards.Profile{Name: "rb", Arch: "mips", Boot: boards.BootRouterBOOT, ImageFormat: boards.FormatELF, Console: "ttyS0", Baud: 115200,
		ClockMethod: boards.ClockCmdline, ClockCmdline: "cpu_mhz={mhz}", Clocks: []boards.MHz{680, 800}, DefaultClock: 680}
	pc := boards.Profile{Name: "pc", Arch: "amd64", Boot: boards.BootIPXE, ImageFormat: boards.FormatCPIO, Console: "ttyS0", Baud: 115200,
		ClockMethod: boards.ClockCPUFreq, Kernel: boards.DebianKernel{DebianArch: "amd64", Flavour: "amd64"}}
	mipsel := boards.Profile{Name: "m", Arch: "mipsle", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatELF, Console: "ttyS0", Baud: 115200}
	tests := []struct {
		name        string
		job         Job
		ports       []bootparam.Port
		wantKernel  string
		wantDebian  string
		wantWrap    Wrapping
		wantModules int
		wantCmdline string
	}{
		{"RouterBOOT at a clock", Job{Board: boards.Board{Name: "rb1", Profile: rb, Kernel: "/k/vmlinux", Baud: 57600}, Clock: 800, Append: "x=1"}, nil,
			"/k/vmlinux", "", Wrapping{Payload: "cpio.gz", ELF: true}, 0,
			"console=ttyS0,57600 panic=-1 quiet loglevel=1 cpu_mhz=800 bootbench.run=R bootbench.bench=speed x=1"},
		{"PC, Debian's kernel, cpufreq", Job{Board: boards.Board{Name: "pc1", Profile: pc}, Clock: 1000, Seconds: time.Second}, nil,
			"", "amd64", Wrapping{Payload: "cpio"}, 0,
			"console=ttyS0,115200 panic=-1 quiet loglevel=1 bootbench.run=R bootbench.bench=speed bootbench.seconds=1 bootbench.clock=1000"},
		{"route on a PC", Job{Board: boards.Board{Name: "pc1", Profile: pc}, Benchmark: "route", Kernel: "/k/vmlinuz"}, []bootparam.Port{{MAC: "52:54:00:00:00:01", Addr: "198.18.1.1/24"}},
			"/k/vmlinuz", "", Wrapping{Payload: "cpio"}, 7,
			"console=ttyS0,115200 panic=-1 quiet loglevel=1 bootbench.run=R bootbench.bench=route bootbench.ports=52:54:00:00:00:01@198.18.1.1/24"},
		{"QEMU's -kernel", Job{Board: boards.Board{Name: "m1", Profile: mipsel}, Kernel: "/k/vmlinux"}, nil,
			"/k/vmlinux", "", Wrapping{Payload: "cpio", ELF: true}, 0,
			"console=ttyS0,115200 panic=-1 quiet loglevel=1 bootbench.run=R bootbench.bench=speed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := tt.job
			if err := job.Settle(); err != nil {
				t.Fatal(err)
			}
			p := New(job)
			if p.Kernel != tt.wantKernel || p.Debian.Flavour != tt.wantDebian {
				t.Errorf("kernel %q, Debian %q; want %q, %q", p.Kernel, p.Debian.Flavour, tt.wantKernel, tt.wantDebian)
			}
			if p.Wrap != tt.wantWrap {
				t.Errorf("wrapping %+v, want %+v", p.Wrap, tt.wantWrap)
			}
			if len(p.Modules) != tt.wantModules || p.Image.Bench != job.Benchmark || p.Image.Arch != job.Board.Profile.Arch {
				t.Errorf("image %+v with modules %v", p.Image, p.Modules)
			}
			if got := p.Cmdline("R", tt.ports); got != tt.wantCmdline {
				t.Errorf("command line\n %q\nwant\n %q", got, tt.wantCmdline)
			}
		})
	}
}

// TestSettle refuses what the board cannot run, and fills the defaults.
func TestSettle(t *testing.T) {
	p := boards.Profile{Name: "rb", ClockMethod: boards.ClockCmdline, Clocks: []boards.MHz{680}, DefaultClock: 680, BootTimeout: time.Minute}
	for _, j := range []Job{
		{Board: boards.Board{Profile: p}, Clock: 900},
		{Board: boards.Board{Profile: p}, Transport: "nfs"},
		{Board: boards.Board{Profile: p}, Benchmark: "nope"},
	} {
		if err := j.Settle(); err == nil {
			t.Errorf("%+v settled", j)
		}
	}
	j := Job{Board: boards.Board{Profile: p}}
	if err := j.Settle(); err != nil || j.Clock != 680 || j.Benchmark != "speed" || j.Transport != "http" || j.BootTimeout != time.Minute {
		t.Errorf("settled to %+v, %v", j, err)
	}
}

// TestCheckKernel: a plan names a kernel when the job, the inventory's
// board or the profile does; a real board model alone names none, and
// every virtual board has one.
func TestCheckKernel(t *testing.T) {
	rb450g, err := boards.Get("rb450g")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		job  Job
		want error
	}{
		{"a board from the inventory without a kernel", Job{Board: boards.Board{Name: "rb1", Profile: rb450g}}, ErrNoKernel},
		{"the inventory's kernel", Job{Board: boards.Board{Name: "rb1", Profile: rb450g, Kernel: "/k/vmlinux"}}, nil},
		{"--kernel", Job{Board: boards.Board{Name: "rb1", Profile: rb450g}, Kernel: "/k/vmlinux"}, nil},
	}
	ps, err := boards.All()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Virtual != nil {
			tests = append(tests, struct {
				name string
				job  Job
				want error
			}{"virtual " + p.Name, Job{Board: boards.VirtualBoard(p)}, nil})
		}
	}
	for _, tt := range tests {
		if got := New(tt.job).CheckKernel(); got != tt.want {
			t.Errorf("%s: CheckKernel() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
