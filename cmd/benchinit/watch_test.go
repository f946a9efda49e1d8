package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/contract/frame"
)

// watchBoard copies testdata/watch-sys, a board with two cpufreq
// policies, two thermal zones and one whose sensor does not answer, to a
// tree the test may change.
func watchBoard(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/watch-sys")); err != nil {
		t.Fatal(err)
	}
	return root
}

// setSys changes a fake sysfs file whole, as the kernel's reads of one
// are: a watch reading it meanwhile sees the old value or the new, never
// an empty file.
func setSys(t *testing.T, root, rel, value string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.WriteFile(path+".new", []byte(value+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// watchFrames decodes the watch frames a console holds.
func watchFrames(t *testing.T, console string) []frame.WatchBody {
	t.Helper()
	var bodies []frame.WatchBody
	for _, l := range strings.Split(strings.TrimSuffix(console, "\n"), "\n") {
		f, err := frame.Decode([]byte(l))
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if f.Type != frame.Watch {
			continue
		}
		var b frame.WatchBody
		if err := json.Unmarshal(f.Body, &b); err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	return bodies
}

const (
	cpu0Freq  = "sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"
	zone0Temp = "sys/class/thermal/thermal_zone0/temp"
	zone1Temp = "sys/class/thermal/thermal_zone1/temp"
)

// TestThermalZones finds the fake board's zones whose sensors answer, in
// the kernel's order, with the trip points the host judges by.
func TestThermalZones(t *testing.T) {
	var got []frame.ThermalZone
	for _, z := range thermalZones("testdata/watch-sys") {
		got = append(got, z.ThermalZone)
	}
	want := []frame.ThermalZone{
		{Type: "cpu-thermal", Trips: []frame.TripPoint{{Type: "passive", TempMC: 85000}, {Type: "critical", TempMC: 105000}}},
		{Type: "gpu-thermal", Trips: []frame.TripPoint{{Type: "hot", TempMC: 95000}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("zones\n got %+v\nwant %+v", got, want)
	}
	if z := thermalZones(t.TempDir()); z != nil {
		t.Errorf("zones of a board without any: %+v", z)
	}
}

// TestWatchKeepsWhatIsNew samples the fake board once a (fake) second
// while its clocks and temperatures change: only samples that say
// something new go to the host, and the last one always.
func TestWatchKeepsWhatIsNew(t *testing.T) {
	root := watchBoard(t)
	var console bytes.Buffer
	now := time.Unix(0, 0)
	w := newWatch(frame.NewWriter(&console, "r1"), root, func() time.Time { return now })
	steps := []struct {
		file, value string // "" changes nothing
	}{
		{"", ""},             // 0 s: the first sample
		{"", ""},             // 1 s: the same again
		{zone0Temp, "51800"}, // 2 s: under a degree
		{zone0Temp, "52100"}, // 3 s: a degree since the last kept
		{cpu0Freq, "600000"}, // 4 s: the clock fell
		{zone1Temp, "94999"}, // 5 s: many degrees
		{zone1Temp, "95000"}, // 6 s: a millidegree, onto the hot trip
		{"sys/class/thermal/thermal_zone2/type", "x"}, // 7 s: nothing the watch reads
	}
	for i, s := range steps {
		now = time.Unix(int64(i), 0)
		if s.file != "" {
			setSys(t, root, s.file, s.value)
		}
		w.sample(false)
	}
	now = time.Unix(8, 500e6)
	w.sample(true) // the end of the run
	w.flush()
	got := watchFrames(t, console.String())
	// The fallen clock and the reached trip point each end a frame there
	// and then; the end of the run sends the rest.
	want := []frame.WatchBody{
		{Samples: []frame.WatchSample{
			{AtMS: 0, CurKHz: []int{800000, 1200000}, TempMC: []int{51000, 48000}},
			{AtMS: 3000, CurKHz: []int{800000, 1200000}, TempMC: []int{52100, 48000}},
			{AtMS: 4000, CurKHz: []int{600000, 1200000}, TempMC: []int{52100, 48000}},
		}},
		{Samples: []frame.WatchSample{
			{AtMS: 5000, CurKHz: []int{600000, 1200000}, TempMC: []int{52100, 94999}},
			{AtMS: 6000, CurKHz: []int{600000, 1200000}, TempMC: []int{52100, 95000}},
		}},
		{Samples: []frame.WatchSample{
			{AtMS: 8500, CurKHz: []int{600000, 1200000}, TempMC: []int{52100, 95000}},
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("watch frames\n got %+v\nwant %+v", got, want)
	}
}

// TestWatchBatches: a board whose temperature climbs a degree a second
// sends its samples in batches of about watchBatchBytes of them, each a
// short line; one whose clock changes every second sends each change at
// once; and the host's collector takes them all.
func TestWatchBatches(t *testing.T) {
	tests := []struct {
		name  string
		root  func(t *testing.T) string
		step  func(t *testing.T, root string, i int) // the change at second i
		sizes []int                                  // the samples in each frame, of 20
	}{
		// {"at_ms":1000,"cur_khz":[800000,1200000],"temp_mc":[52000,48000]}
		{"a zone warming: bounded by bytes", watchBoard, func(t *testing.T, root string, i int) {
			setSys(t, root, zone0Temp, strconv.Itoa(51000+1000*i)) // far under its 85 °C trip
		}, []int{6, 6, 6, 2}},
		// {"at_ms":1000,"cur_khz":[600000]}
		{"a clock changing: each change at once", func(t *testing.T) string {
			root := t.TempDir()
			if err := os.CopyFS(filepath.Join(root, filepath.Dir(cpu0Freq)), os.DirFS(filepath.Join("testdata/watch-sys", filepath.Dir(cpu0Freq)))); err != nil {
				t.Fatal(err)
			}
			return root
		}, func(t *testing.T, root string, i int) {
			setSys(t, root, cpu0Freq, []string{"800000", "600000"}[i%2])
		}, append([]int{2}, slices.Repeat([]int{1}, 18)...)}, // the first, with the first change
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.root(t)
			var console bytes.Buffer
			now := time.Unix(0, 0)
			out := frame.NewWriter(&console, "r1")
			out.Send(frame.Hello, frame.HelloBody{Arch: "arm64"})
			w := newWatch(out, root, func() time.Time { return now })
			w.announce()
			const n = 20
			for i := range n {
				now = time.Unix(int64(i), 0)
				tt.step(t, root, i)
				w.sample(false)
			}
			w.flush()
			got := watchFrames(t, console.String())[1:] // after the zones
			var sizes []int
			for _, b := range got {
				sizes = append(sizes, len(b.Samples))
			}
			if !slices.Equal(sizes, tt.sizes) {
				t.Errorf("samples per frame %v, want %v", sizes, tt.sizes)
			}
			col := frame.NewCollector("r1")
			for _, l := range strings.Split(strings.TrimSuffix(console.String(), "\n"), "\n") {
				if len(l) > 600 {
					t.Errorf("a frame line of %d bytes", len(l))
				}
				if _, err := col.Feed([]byte(l)); err != nil {
					t.Fatal(err)
				}
			}
			if k := len(col.Result().Samples); k != n {
				t.Errorf("host took %d samples of %d", k, n)
			}
		})
	}
}

// TestWatchRuns runs the watch's goroutine on its own clock while the
// fake board's clock falls, and stops it as the benchmark ends.
func TestWatchRuns(t *testing.T) {
	root := watchBoard(t)
	var console bytes.Buffer
	w := startWatch(frame.NewWriter(&console, "r1"), root, 5*time.Millisecond, time.Now)
	time.Sleep(30 * time.Millisecond)
	setSys(t, root, cpu0Freq, "600000")
	time.Sleep(30 * time.Millisecond)
	w.Stop()
	frames := watchFrames(t, console.String())
	if len(frames) < 2 || len(frames[0].Zones) != 2 || len(frames[0].Samples) != 0 {
		t.Fatalf("the first frame names the zones and nothing else: %+v", frames)
	}
	var clocks []int
	for _, b := range frames {
		for _, s := range b.Samples {
			clocks = append(clocks, s.CurKHz[0])
		}
	}
	// The first, the fall and the last: nothing else changed.
	if !reflect.DeepEqual(clocks, []int{800000, 600000, 600000}) {
		t.Errorf("CPU 0's clock in the samples: %v", clocks)
	}
}

// A board with neither cpufreq nor thermal zones, as most virtual boards
// are, says once that it has nothing to watch, and the run goes on.
func TestWatchNothingToWatch(t *testing.T) {
	var console bytes.Buffer
	w := startWatch(frame.NewWriter(&console, "r1"), t.TempDir(), time.Millisecond, time.Now)
	time.Sleep(10 * time.Millisecond)
	w.Stop()
	got := watchFrames(t, console.String())
	if len(got) != 1 || got[0].Zones != nil || got[0].Samples == nil || len(got[0].Samples) != 0 {
		t.Errorf("watch frames of a board with nothing to watch: %+v", got)
	}
}
