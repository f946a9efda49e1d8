package results

import (
	"testing"
	"time"
)

func TestImportSplitToolVersion(t *testing.T) {
	tests := []struct {
		tool, version      string
		wantTool, wantVers string
	}{
		{"openssl", "0.9.8k", "openssl", "0.9.8k"},
		{"openssl", "3.0.22", "openssl", "3.0.22"},
		{"openssl", "bootbench-speed 0.1.0", "bootbench-speed", "0.1.0"},
		{"openssl", "", "openssl", ""}, // a truncated capture without its version line
		{"iperf3", "3.16", "iperf3", "3.16"},
	}
	for _, tt := range tests {
		tool, vers := SplitToolVersion(tt.tool, tt.version)
		if tool != tt.wantTool || vers != tt.wantVers {
			t.Errorf("SplitToolVersion(%q, %q) = %q, %q; want %q, %q", tt.tool, tt.version, tool, vers, tt.wantTool, tt.wantVers)
		}
	}
}

func TestImportNoModTime(t *testing.T) {
	before := time.Now()
	r := (&Import{Board: "b", Path: "x", Data: []byte("x"), Tool: "openssl"}).Run()
	if r.Started.Before(before) || time.Since(r.Started) > time.Minute {
		t.Errorf("Started = %v, want now", r.Started)
	}
}
