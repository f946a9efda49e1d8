package route

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/harness"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/bootbench/bootbench/results/store"
)

// routeRun is a route run of a qemu-direct board b (so no network is
// needed) from a fake kernel and image, stored in a store of its own.
func routeRun(t *testing.T, b *routeBoard) (plan.Job, harness.Rig) {
	t.Helper()
	dir := t.TempDir()
	kernel, image := filepath.Join(dir, "vmlinuz"), filepath.Join(dir, "image.cpio")
	os.WriteFile(kernel, []byte("kernel"), 0o644)
	os.WriteFile(image, []byte("image"), 0o644)
	store, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := boards.Profile{Name: "fakeboard", Arch: "amd64", Boot: boards.BootQEMUDirect, ImageFormat: boards.FormatCPIO, Console: "ttyS0", Baud: 115200}
	job := plan.Job{
		Board: boards.Board{Name: "fake1", Profile: p}, Benchmark: benchmark.Route, Kernel: kernel,
		BootTimeout: 2 * time.Second, RunTimeout: 2 * time.Second,
	}
	rig := harness.Rig{Target: b, Store: store, Builders: plan.Builders{CacheDir: dir,
		BuildImage: func(context.Context, initramfs.Spec, string) (*initramfs.Image, error) {
			return &initramfs.Image{Path: image, Size: 5, Digest: "00", Cached: true}, nil
		}}}
	return job, rig
}

var runParam = regexp.MustCompile(`bootbench\.run=(\S+)`)

// routeBoard is a qemu-direct board running the route benchmark as
// benchinit does: hello, then for each "bootbench route <config>" line the
// host types, the previous configuration's counters and this one's ready;
// "done" ends it.
type routeBoard struct {
	w         *io.PipeWriter // what the board prints
	toBoard   *io.PipeWriter // what the host types
	fromHost  *io.PipeReader
	run       string
	cmdline   string
	commands  []string
	marks     []string // the cpu begin/end commands, in order
	ons       int
	off       atomic.Bool
	mu        sync.Mutex
	boardDone chan struct{}
}

func (b *routeBoard) String() string { return "fake route board" }

func (b *routeBoard) LoadDirect(kernel, initrd, cmdline string) {
	b.cmdline = cmdline
	b.run = runParam.FindStringSubmatch(cmdline)[1]
}

// console is the host's end: reads what the board prints, writes to it.
type console struct {
	io.ReadCloser
	io.Writer
}

func (b *routeBoard) Console(ctx context.Context) (io.ReadWriteCloser, error) {
	r, w := io.Pipe()
	b.fromHost, b.toBoard = io.Pipe()
	b.mu.Lock()
	b.w = w
	b.mu.Unlock()
	return console{r, b.toBoard}, nil
}

func (b *routeBoard) PoweredOff(ctx context.Context) bool { return b.off.Load() }

func (b *routeBoard) Off(ctx context.Context) error {
	b.off.Store(true)
	b.w.Close()
	b.toBoard.Close()
	b.fromHost.Close()
	if b.boardDone != nil {
		<-b.boardDone
	}
	return nil
}

func (b *routeBoard) On(ctx context.Context) error {
	b.ons++
	b.boardDone = make(chan struct{})
	go func() {
		defer close(b.boardDone)
		seq := 0
		send := func(typ frame.Type, body any) {
			l, _ := frame.Encode(b.run, seq, typ, body)
			seq++
			fmt.Fprintf(b.w, "%s\r\n", l)
		}
		send(frame.Hello, frame.HelloBody{Arch: "amd64", Kernel: "6.1.0", Bench: "route"})
		cur := ""
		var cpu []frame.CPUSample
		sc := bufio.NewScanner(b.fromHost)
		for sc.Scan() {
			cmd, ok := strings.CutPrefix(sc.Text(), "bootbench route ")
			if !ok {
				continue
			}
			if mark, ok := strings.CutPrefix(cmd, "cpu "); ok {
				b.mu.Lock()
				b.marks = append(b.marks, mark)
				b.mu.Unlock()
				// Busier with the firewall's work, as a board is.
				if label, ok := strings.CutPrefix(mark, "end "); ok {
					cpu = append(cpu, frame.CPUSample{Test: label, Busy: 50 + 10*uint64(slices.Index(bootparam.RouteConfigs, cur)), Total: 100})
				}
				continue
			}
			b.mu.Lock()
			b.commands = append(b.commands, cmd)
			b.mu.Unlock()
			if cur != "" {
				ct := uint64(0)
				if cur == bootparam.ConfigConntrack || cur == bootparam.ConfigStateful {
					ct = 4
				}
				send(frame.Counters, frame.CountersBody{Config: cur, Forwarded: 1000, ConntrackEntries: ct, CPU: cpu})
				cpu = nil
			}
			if cmd == "done" {
				sum := sha256.Sum256(nil)
				send(frame.Done, frame.DoneBody{SHA256: hex.EncodeToString(sum[:])})
				return
			}
			cur, _, _ = strings.Cut(cmd, " ")
			send(frame.Ready, frame.ReadyBody{Config: cur, Rules: []string{}})
		}
	}()
	return nil
}

// fakeRouter measures by the book: a figure per size and protocol, the
// direct baseline fastest.
type fakeRouter struct {
	sweeps []Path
	fail   error
}

func (f *fakeRouter) Ports() []bootparam.Port {
	return []bootparam.Port{{MAC: "52:54:00:bb:01:01", Addr: "198.18.1.1/24"}, {MAC: "52:54:00:bb:01:02", Addr: "198.18.2.1/24"}}
}

func (f *fakeRouter) String() string { return "two fake networks" }

func (f *fakeRouter) Sweep(ctx context.Context, path Path, mark Mark) ([]Figure, error) {
	f.sweeps = append(f.sweeps, path)
	direct := path.Direct
	if direct != (mark == nil) {
		return nil, fmt.Errorf("a sweep with direct %v has mark %v: the board's CPU is sampled when it routes", direct, mark != nil)
	}
	if f.fail != nil && !direct {
		return nil, f.fail
	}
	rate := 100e6
	if direct {
		rate = 1e9
	}
	var figs []Figure
	for _, size := range []int{64, 1460} {
		for _, reverse := range []bool{false, true} {
			figs = append(figs,
				Figure{Size: size, Proto: "tcp", Reverse: reverse, Test: parse.IPerf3Test{Version: "3.12", Protocol: "TCP", Received: rate * float64(size) / 1460, Retransmits: 0}},
				Figure{Size: size, Proto: "udp", Reverse: reverse, Test: parse.IPerf3Test{Version: "3.12", Protocol: "UDP", Received: 10e6, Retransmits: -1, LostPercent: 0.5}})
		}
	}
	for _, f := range figs {
		if mark == nil {
			break
		}
		if err := mark(f.Label(), true); err != nil {
			return nil, err
		}
		if err := mark(f.Label(), false); err != nil {
			return nil, err
		}
	}
	return figs, nil
}

func TestRouteRun(t *testing.T) {
	tests := []struct {
		name    string
		configs []string
		fail    error
		reason  string
	}{
		{"every configuration", nil, nil, ""},
		{"two configurations", []string{bootparam.ConfigStateful, bootparam.ConfigPlain}, nil, ""},
		{"wireguard alone", []string{bootparam.ConfigWireGuard}, nil, ""},
		{"a measurement that fails", nil, errors.New("iperf3 TCP at 64 bytes to 198.18.2.2: unable to connect"), "benchmark-exit: route plain: iperf3 TCP at 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &routeBoard{}
			fr := &fakeRouter{fail: tt.fail}
			job, rig := routeRun(t, b)
			rig.Host = &Driver{Router: fr, Configs: tt.configs}
			rec, err := harness.Run(context.Background(), job, rig)
			if !strings.Contains(b.cmdline, "bootbench.ports=52:54:00:bb:01:01@198.18.1.1/24,52:54:00:bb:01:02@198.18.2.1/24") {
				t.Errorf("kernel command line lacks the ports: %s", b.cmdline)
			}
			configs := tt.configs
			if configs == nil {
				configs = bootparam.RouteConfigs
			}
			if tt.fail != nil {
				if err == nil || rec == nil || !strings.HasPrefix(rec.Reason, tt.reason) || len(rec.Metrics) != 0 {
					t.Fatalf("Run = %+v, %v; want a failure %q", rec, err, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var told []string
			for _, c := range b.commands {
				name, _, _ := strings.Cut(c, " ")
				told = append(told, name)
			}
			if want := append(slices.Clone(configs), "done"); !slices.Equal(told, want) {
				t.Errorf("board was told %q, want %q", b.commands, want)
			}
			baselines := []string{Direct}
			if slices.Contains(configs, WireGuard) {
				baselines = append(baselines, DirectWireGuard)
			}
			var swept []string
			for _, p := range fr.sweeps {
				swept = append(swept, p.Config)
				if direct := slices.Contains(baselines, p.Config); p.Direct != direct {
					t.Errorf("sweep of %s: direct %v", p.Config, p.Direct)
				}
				if tunnel := strings.HasSuffix(p.Config, WireGuard); (p.Tunnel != nil) != tunnel {
					t.Errorf("sweep of %s: tunnel %v", p.Config, p.Tunnel)
				}
			}
			if want := append(slices.Clone(baselines), configs...); !slices.Equal(swept, want) {
				t.Errorf("sweeps %q: want the baselines first, then one a configuration: %q", swept, want)
			}
			checkWireGuardCommand(t, b.commands, fr.sweeps)
			got := map[string]float64{}
			for _, m := range rec.Metrics {
				got[m.Name] = m.Value
			}
			for _, c := range append(baselines, configs...) {
				for _, name := range []string{"tcp-throughput@64/", "tcp-throughput@1460/", "udp-throughput@64/", "udp-loss@1460/", "tcp-retransmits@64/",
					"tcp-throughput-reverse@64/", "tcp-throughput-reverse@1460/", "udp-throughput-reverse@64/", "udp-loss-reverse@1460/", "tcp-retransmits-reverse@64/"} {
					if _, ok := got[name+c]; !ok {
						t.Errorf("no %s%s", name, c)
					}
				}
				if slices.Contains(baselines, c) {
					if _, ok := got["cpu-busy@64/"+c]; ok {
						t.Errorf("cpu-busy@64/%s: the board's CPU sampled when bypassed", c)
					}
					continue
				}
				if got["route-forwarded/"+c] != 1000 {
					t.Errorf("route-forwarded/%s = %v", c, got["route-forwarded/"+c])
				}
				want := float64(50+10*slices.Index(bootparam.RouteConfigs, c)) / 100
				for _, name := range []string{"cpu-busy@64/", "cpu-busy-reverse@1460/", "udp-cpu-busy@64/", "udp-cpu-busy-reverse@1460/"} {
					if got[name+c] != want {
						t.Errorf("%s%s = %v, want %v", name, c, got[name+c], want)
					}
				}
			}
			// Each test of each configuration marked as it begins and
			// ends, the board routing meanwhile.
			var wantMarks []string
			for range configs {
				for _, size := range []string{"64", "1460"} {
					for _, test := range []string{"tcp", "udp", "tcp-reverse", "udp-reverse"} {
						wantMarks = append(wantMarks, "begin "+size+"/"+test, "end "+size+"/"+test)
					}
				}
			}
			if slices.Sort(wantMarks); !slices.Equal(slices.Sorted(slices.Values(b.marks)), wantMarks) {
				t.Errorf("cpu marks %q, want %q", b.marks, wantMarks)
			}
			if slices.Contains(configs, bootparam.ConfigStateful) && got["conntrack-entries/"+bootparam.ConfigStateful] != 4 || got["conntrack-entries/"+bootparam.ConfigPlain] != 0 {
				t.Errorf("conntrack-entries: %v", got)
			}
			if rec.Tool != "iperf3" || rec.ToolVersion != "3.12" || rec.Bench != benchmark.Route {
				t.Errorf("tool %q %q bench %q", rec.Tool, rec.ToolVersion, rec.Bench)
			}
		})
	}
}

// A route run needs the host's networks: without them it is refused
// before anything is powered on.
func TestRouteNeedsRouter(t *testing.T) {
	b := &routeBoard{}
	job, rig := routeRun(t, b)
	if _, err := harness.Run(context.Background(), job, rig); err == nil || !strings.Contains(err.Error(), "networks on both sides") {
		t.Fatalf("Run without a router: %v", err)
	}
	if b.ons != 0 {
		t.Error("the board was powered on")
	}
}

// checkWireGuardCommand: the board is told its own private key and the
// client's public key, the two ends of the tunnel the sweeps used, the
// routed one toward the board's client-side port.
func checkWireGuardCommand(t *testing.T, commands []string, sweeps []Path) {
	t.Helper()
	i := slices.IndexFunc(commands, func(c string) bool { return strings.HasPrefix(c, WireGuard+" ") })
	j := slices.IndexFunc(sweeps, func(p Path) bool { return p.Config == WireGuard })
	if i < 0 || j < 0 {
		return
	}
	tun := sweeps[j].Tunnel
	want := fmt.Sprintf("wireguard key=%s peer=%s addr=198.18.4.1/24 port=51820 allowed=198.18.4.2/32 seed=%s", tun.Far.Private, tun.Client.Public, tun.Seed)
	if commands[i] != want {
		t.Errorf("board told %q, want %q", commands[i], want)
	}
	if b := sweeps[j].Board; b[0].String() != "198.18.1.1" || b[1].String() != "198.18.2.1" {
		t.Errorf("tunnel to the board's ports %v", b)
	}
	if k := slices.IndexFunc(sweeps, func(p Path) bool { return p.Config == DirectWireGuard }); sweeps[k].Tunnel != tun {
		t.Error("the baseline's tunnel is not the configuration's")
	}
}
