package speed_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/export"
	"github.com/bootbench/bootbench/results/parse"
	"github.com/bootbench/bootbench/speed"
)

// TestHostParsesEveryAlgorithm runs every algorithm briefly and reads the
// output back with the host's parser, so a row name that drifts from
// openssl's (and so from the metric names the results store files it
// under) fails here rather than in a comparison months later. The test
// reaches across the package boundary on purpose: speed itself must not
// depend on results.
func TestHostParsesEveryAlgorithm(t *testing.T) {
	sizes := []int{16, 1024}
	// Metric names as the "Metric names" contract spells them.
	byAlg := map[string][]string{
		"md5":               {"md5@16", "md5@1024"},
		"hmac(md5)":         {"hmac(md5)@16", "hmac(md5)@1024"},
		"sha1":              {"sha1@16", "sha1@1024"},
		"sha256":            {"sha256@16", "sha256@1024"},
		"sha512":            {"sha512@16", "sha512@1024"},
		"rc4":               {"rc4@16", "rc4@1024"},
		"des-cbc":           {"des-cbc@16", "des-cbc@1024"},
		"des-ede3":          {"des-ede3@16", "des-ede3@1024"},
		"aes-128-cbc":       {"aes-128-cbc@16", "aes-128-cbc@1024"},
		"aes-192-cbc":       {"aes-192-cbc@16", "aes-192-cbc@1024"},
		"aes-256-cbc":       {"aes-256-cbc@16", "aes-256-cbc@1024"},
		"aes-128-gcm":       {"aes-128-gcm@16", "aes-128-gcm@1024"},
		"chacha20-poly1305": {"chacha20-poly1305@16", "chacha20-poly1305@1024"},
		"rsa1024":           {"rsa1024-sign", "rsa1024-verify"},
		"rsa2048":           {"rsa2048-sign", "rsa2048-verify"},
		"rsa4096":           {"rsa4096-sign", "rsa4096-verify"},
		"dsa2048":           {"dsa2048-sign", "dsa2048-verify"},
		"ecdsap256":         {"ecdsa-p256-sign", "ecdsa-p256-verify"},
		"ecdhp256":          {"ecdh-p256"},
		"ed25519":           {"ed25519-sign", "ed25519-verify"},
	}
	algs := speed.Algorithms()
	for _, a := range algs {
		if _, ok := byAlg[a]; !ok {
			t.Errorf("algorithm %q has no expected metric names in this test", a)
		}
	}
	for a := range byAlg {
		if !slices.Contains(algs, a) {
			t.Errorf("the suite lacks %q", a)
		}
	}
	var out bytes.Buffer
	if err := speed.Run(context.Background(), &out, speed.Options{Algorithms: algs, BlockSizes: sizes, Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	res, err := parse.Auto(out.Bytes())
	if err != nil {
		t.Fatalf("host parser rejects the output: %v\n%s", err, out.String())
	}
	if res.Tool != "openssl" || res.Version != "bootbench-speed "+speed.Version {
		t.Errorf("parsed as %q version %q", res.Tool, res.Version)
	}
	got := map[string]bool{}
	for _, m := range res.Metrics {
		if got[m.Name] {
			t.Errorf("metric %s appears twice", m.Name)
		}
		got[m.Name] = true
		wantUnit := parse.UnitBytesPerSec
		if !strings.Contains(m.Name, "@") {
			wantUnit = parse.UnitOpsPerSec
		}
		if m.Unit != wantUnit || m.Value <= 0 {
			t.Errorf("metric %s = %v %s, want a positive figure in %s", m.Name, m.Value, m.Unit, wantUnit)
		}
	}
	for _, a := range algs {
		for _, name := range byAlg[a] {
			if !got[name] {
				t.Errorf("%s: no metric %s in the parsed output", a, name)
			}
			delete(got, name)
		}
	}
	for name := range got {
		t.Errorf("unexpected metric %s", name)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}

// TestDefaultsFillTheOpenWrtRow runs the default set, as a board does when
// the host names no algorithms, and writes it as an OpenWrt wiki row: every
// column, single DES and DSA included, must hold a figure, not "-".
func TestDefaultsFillTheOpenWrtRow(t *testing.T) {
	var out bytes.Buffer
	if err := speed.Run(context.Background(), &out, speed.Options{BlockSizes: []int{1024}, Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	res, err := parse.Auto(out.Bytes())
	if err != nil {
		t.Fatalf("host parser rejects the output: %v\n%s", err, out.String())
	}
	run := results.Run{Board: "b", ClockMHz: 1, Status: results.StatusOK, Tool: res.Tool, ToolVersion: res.Version}
	for _, m := range res.Metrics {
		run.Metrics = append(run.Metrics, results.Metric{Name: m.Name, Unit: m.Unit, Value: m.Value})
	}
	var row bytes.Buffer
	if err := export.WriteOpenWrtSettings(&row, []results.Run{run}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(row.String()), "\n")
	last := lines[len(lines)-1]
	cells := strings.Split(strings.Trim(last, "| "), "|")
	if len(cells) != 16 {
		t.Fatalf("row %q has %d cells, want 16", last, len(cells))
	}
	for i, c := range cells {
		if strings.TrimSpace(c) == "-" {
			t.Errorf("column %d of %q is empty", i+1, last)
		}
	}
}
