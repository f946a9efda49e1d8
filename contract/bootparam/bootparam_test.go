package bootparam

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		cmdline string
		want    Params
	}{
		{"console=ttyS0 bootbench.run=abc quiet", Params{Run: "abc", Bench: "speed", Reps: 1}},
		{"bootbench.run=r1 bootbench.seconds=0.25 bootbench.algs=md5,sha1", Params{Run: "r1", Bench: "speed", Seconds: 250 * time.Millisecond, Algs: []string{"md5", "sha1"}, Reps: 1}},
		{"bootbench.seconds=-1 bootbench.seconds=x", Params{Bench: "speed", Reps: 1}},
		{"", Params{Bench: "speed", Reps: 1}},
		{"bootbench.bench=openssl bootbench.reps=5 bootbench.clock=680 bootbench.timeout=90", Params{Bench: "openssl", Reps: 5, ClockMHz: 680, Timeout: 90 * time.Second}},
		{"bootbench.clock=0 bootbench.timeout=0.5", Params{Bench: "speed", Reps: 1, Timeout: 500 * time.Millisecond}},
		{"bootbench.bench=route bootbench.ports=52:54:00:BB:01:01@198.18.1.1/24,52:54:00:bb:01:02@198.18.2.1/24", Params{Bench: "route", Reps: 1, Ports: []Port{{"52:54:00:bb:01:01", "198.18.1.1/24"}, {"52:54:00:bb:01:02", "198.18.2.1/24"}}}},
		{"bootbench.bench=route bootbench.ports=eth1@198.18.1.1/24,LAN2@198.18.2.1/24", Params{Bench: "route", Reps: 1, Ports: []Port{{"eth1", "198.18.1.1/24"}, {"LAN2", "198.18.2.1/24"}}}},
		// A port without its address drops them all: never half a router.
		{"bootbench.ports=52:54:00:bb:01:01@198.18.1.1/24,52:54:00:bb:01:02", Params{Bench: "speed", Reps: 1}},
		// Nonsense keeps the defaults rather than stopping the board.
		{"bootbench.reps=0 bootbench.reps=-2 bootbench.reps=two bootbench.clock=-5 bootbench.clock=800MHz bootbench.timeout=0 bootbench.timeout=NaN bootbench.timeout=1e300", Params{Bench: "speed", Reps: 1}},
	}
	for _, tt := range tests {
		if got := Parse(tt.cmdline); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.cmdline, got, tt.want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	tests := []Params{
		{Run: "0123abcd", Bench: "speed", Seconds: 300 * time.Millisecond, Algs: []string{"md5", "aes-128-cbc"}, Reps: 1},
		{Run: "r2", Bench: "openssl", Seconds: 2 * time.Second, Reps: 5, ClockMHz: 800, Timeout: 120 * time.Second},
		{Run: "r3", Bench: "speed", Reps: 1, Timeout: 1500 * time.Millisecond},
		{Run: "r4", Bench: "route", Reps: 1, Ports: []Port{{"52:54:00:bb:01:01", "198.18.1.1/24"}, {"52:54:00:bb:01:02", "198.18.2.1/24"}}},
	}
	for _, p := range tests {
		s := p.String()
		if got := Parse("console=ttyS0 " + s); !reflect.DeepEqual(got, p) {
			t.Errorf("round trip of %q: %+v, want %+v", s, got, p)
		}
	}
}

func TestStringLeavesOutDefaults(t *testing.T) {
	if got, want := Parse("bootbench.run=r").String(), "bootbench.run=r bootbench.bench=speed"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestWholeSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{0, DefaultSeconds},
		{100 * time.Millisecond, 1},
		{time.Second, 1},
		{2400 * time.Millisecond, 2},
		{2500 * time.Millisecond, 3},
		{10 * time.Second, 10},
	}
	for _, tt := range tests {
		if got := (Params{Seconds: tt.d}).WholeSeconds(); got != tt.want {
			t.Errorf("WholeSeconds(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}

func TestParseBenchSpec(t *testing.T) {
	tests := []struct {
		name, json string
		want       BenchSpec
		err        string // substring; "" = valid
	}{
		{"openssl", `{"name":"openssl","argv":["/bin/openssl","speed","-seconds","{seconds}","md5"]}`, BenchSpec{Name: "openssl", Argv: []string{"/bin/openssl", "speed", "-seconds", "{seconds}", "md5"}}, ""},
		{"not json", `name=openssl`, BenchSpec{}, "bench spec"},
		{"no name", `{"argv":["/bin/true"]}`, BenchSpec{}, "no name"},
		{"built-in name", `{"name":"speed","argv":["/bin/true"]}`, BenchSpec{}, "built-in"},
		{"space in name", `{"name":"open ssl","argv":["/bin/true"]}`, BenchSpec{}, "white space"},
		{"no argv", `{"name":"x"}`, BenchSpec{}, "no command"},
		{"relative command", `{"name":"x","argv":["openssl"]}`, BenchSpec{}, "absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBenchSpec([]byte(tt.json))
			if tt.err == "" {
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.err)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	s := BenchSpec{Name: "iperf3", Argv: []string{"/bin/iperf3", "-t", "{seconds}", "--x={seconds}s", "{second}"}}
	tests := []struct {
		p    Params
		want []string
	}{
		{Params{Seconds: 10 * time.Second}, []string{"/bin/iperf3", "-t", "10", "--x=10s", "{second}"}},
		{Params{Seconds: 200 * time.Millisecond}, []string{"/bin/iperf3", "-t", "1", "--x=1s", "{second}"}},
		{Params{}, []string{"/bin/iperf3", "-t", "3", "--x=3s", "{second}"}},
	}
	for _, tt := range tests {
		if got := s.Command(tt.p); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Command(seconds=%v) = %q, want %q", tt.p.Seconds, got, tt.want)
		}
	}
	if s.Argv[2] != "{seconds}" {
		t.Errorf("Command changed the spec's own argv: %q", s.Argv)
	}
}

func TestCommandAlgs(t *testing.T) {
	s := BenchSpec{Name: "openssl", Argv: []string{"/bin/openssl", "speed", "-seconds", "{seconds}", "{algs}"}, DefaultAlgs: []string{"md5", "rsa2048"}}
	for _, tt := range []struct {
		algs []string
		want []string
	}{
		{nil, []string{"/bin/openssl", "speed", "-seconds", "1", "md5", "rsa2048"}},
		{[]string{"sha256"}, []string{"/bin/openssl", "speed", "-seconds", "1", "sha256"}},
		{[]string{"sha256", "dsa2048"}, []string{"/bin/openssl", "speed", "-seconds", "1", "sha256", "dsa2048"}},
	} {
		if got := s.Command(Params{Seconds: time.Second, Algs: tt.algs}); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Command(algs=%q) = %q, want %q", tt.algs, got, tt.want)
		}
	}
	noDefault := BenchSpec{Name: "x", Argv: []string{"/bin/x", "{algs}", "-v"}}
	if got := noDefault.Command(Params{}); !reflect.DeepEqual(got, []string{"/bin/x", "-v"}) {
		t.Errorf("no algorithms and no defaults: %q", got)
	}
}
