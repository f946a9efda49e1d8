package bootparam

import (
	"reflect"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		cmdline string
		want    Params
	}{
		{"console=ttyS0 bootbench.run=abc quiet", Params{Run: "abc", Bench: "speed"}},
		{"bootbench.run=r1 bootbench.seconds=0.25 bootbench.algs=md5,sha1", Params{Run: "r1", Bench: "speed", Seconds: 250 * time.Millisecond, Algs: []string{"md5", "sha1"}}},
		{"bootbench.seconds=-1 bootbench.seconds=x", Params{Bench: "speed"}},
		{"", Params{Bench: "speed"}},
	}
	for _, tt := range tests {
		if got := Parse(tt.cmdline); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.cmdline, got, tt.want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	p := Params{Run: "0123abcd", Bench: "speed", Seconds: 300 * time.Millisecond, Algs: []string{"md5", "aes-128-cbc"}}
	if got := Parse("console=ttyS0 " + p.String()); !reflect.DeepEqual(got, p) {
		t.Errorf("round trip: %+v, want %+v", got, p)
	}
}
