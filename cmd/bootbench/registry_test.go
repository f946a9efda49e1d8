package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/boards"
)

// TestBenchmarkRegistry: a benchmark registered in one file of its own is
// offered by run --help, accepted as an inventory job and resolved by
// image build, and nothing else needs to name it. A name nobody
// registered is refused by each.
func TestBenchmarkRegistry(t *testing.T) {
	benchmark.Register(benchmark.Benchmark{Name: "toy", Help: "a toy benchmark for this test", Image: benchmark.Image{BuiltIn: true}})
	defer benchmark.Unregister("toy")

	var help bytes.Buffer
	old := helpOut
	helpOut = &help
	defer func() { helpOut = old }()
	if err := cmdRun(context.Background(), []string{"--help"}); !errors.Is(err, errHelpShown) {
		t.Fatalf("run --help: %v", err)
	}
	if !strings.Contains(help.String(), "toy (a toy benchmark for this test)") {
		t.Errorf("run --help does not offer toy:\n%s", help.String())
	}

	inventory := func(bench string) error {
		_, err := boards.ParseInventory("bench.yaml", []byte(`bench: {interface: eth1, address: 198.18.5.1/24}
boards:
  pc1:
    profile: pc-x86_64
    mac: "52:54:00:12:34:56"
    address: 198.18.5.20
    console: /dev/ttyUSB0
    power: {driver: manual}
    job: {bench: `+bench+`}
`))
		return err
	}
	imageSpec := func(bench string) error {
		fs := flag.NewFlagSet("image build", flag.ContinueOnError)
		f := addImageFlags(fs)
		if err := fs.Parse([]string{"--arch", "amd64", "--bench", bench}); err != nil {
			t.Fatal(err)
		}
		_, err := f.spec()
		return err
	}
	for _, tt := range []struct {
		bench string
		ok    bool
	}{{"toy", true}, {"speed", true}, {"nosuch", false}} {
		if err := inventory(tt.bench); (err == nil) != tt.ok {
			t.Errorf("inventory job bench %s: %v", tt.bench, err)
		}
		if err := imageSpec(tt.bench); (err == nil) != tt.ok {
			t.Errorf("image build --bench %s: %v", tt.bench, err)
		}
	}
}
