package harness

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/contract/frame"
	"github.com/bootbench/bootbench/results"
)

// clocks are samples of CPU 0's clock in kHz, a second apart.
func clocks(khz ...int) []frame.WatchSample {
	s := make([]frame.WatchSample, len(khz))
	for i, k := range khz {
		s[i] = frame.WatchSample{AtMS: int64(i) * 1000, CurKHz: []int{k}}
	}
	return s
}

// temps are samples of one zone's temperature in millidegrees, a second
// apart, at 800 MHz.
func temps(mc ...int) []frame.WatchSample {
	s := make([]frame.WatchSample, len(mc))
	for i, m := range mc {
		s[i] = frame.WatchSample{AtMS: int64(i) * 1000, CurKHz: []int{800000}, TempMC: []int{m}}
	}
	return s
}

func TestJudgeThrottle(t *testing.T) {
	zone := func(trips ...frame.TripPoint) []frame.ThermalZone {
		return []frame.ThermalZone{{Type: "cpu-thermal", Trips: trips}}
	}
	passive := frame.TripPoint{Type: "passive", TempMC: 85000}
	hot := frame.TripPoint{Type: "hot", TempMC: 95000}
	active := frame.TripPoint{Type: "active", TempMC: 60000}
	critical := frame.TripPoint{Type: "critical", TempMC: 105000}
	tests := []struct {
		name    string
		asked   boards.MHz
		zones   []frame.ThermalZone
		samples []frame.WatchSample
		want    *results.Throttle
	}{
		{"no samples", 800, nil, nil, nil},
		{"a board with nothing to watch", 800, nil, []frame.WatchSample{}, nil},
		{"steady at the clock asked", 800, nil, clocks(800000, 800000, 800000), nil},
		{"falls from 800 to 600 MHz mid-run", 800, nil, clocks(800000, 800000, 600000, 600000, 800000),
			&results.Throttle{Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 600, AtMS: 2000}}},
		{"the lowest and the first fall", 800, nil, clocks(800000, 700000, 600000, 700000),
			&results.Throttle{Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 600, AtMS: 1000}}},
		// The hello's clock check allows 2 %: 784 MHz of 800 passes it.
		{"the driver's rounding is no fall", 800, nil, clocks(800000, 799999, 784000), nil},
		{"just past the tolerance", 800, nil, clocks(800000, 783000),
			&results.Throttle{Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 783, AtMS: 1000}}},
		{"faster than asked is no fall", 800, nil, clocks(800000, 1000000), nil},
		{"no clock asked: the governor's business", 0, nil, clocks(1200000, 600000), nil},
		{"an unreadable policy is no fall", 800, nil, clocks(800000, 0, 800000), nil},
		{"a cluster that never reached the clock", 1800, nil,
			[]frame.WatchSample{{AtMS: 0, CurKHz: []int{1800000, 1400000}}, {AtMS: 1000, CurKHz: []int{1800000, 1400000}}}, nil},
		{"a second cluster that fell", 1800, nil,
			[]frame.WatchSample{{AtMS: 0, CurKHz: []int{1800000, 1800000}}, {AtMS: 1000, CurKHz: []int{1800000, 1200000}}},
			&results.Throttle{Clock: &results.ClockDrop{AskedMHz: 1800, LowestMHz: 1200, AtMS: 1000}}},
		{"warm, under every trip", 800, zone(passive, critical), temps(50000, 70000, 84999), nil},
		{"at the passive trip", 800, zone(passive, critical), temps(50000, 85000, 88000, 80000),
			&results.Throttle{Heat: &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 88000, AtMS: 1000}}},
		{"over hot, the lowest trip reached is said", 800, zone(critical, hot, passive), temps(50000, 96000),
			&results.Throttle{Heat: &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 96000, AtMS: 1000}}},
		{"a hot trip alone", 800, zone(hot), temps(94000, 95500),
			&results.Throttle{Heat: &results.Heat{Zone: "cpu-thermal", Trip: "hot", TripMC: 95000, HighestMC: 95500, AtMS: 1000}}},
		{"an active trip only starts a fan", 800, zone(active, passive), temps(61000, 70000), nil},
		{"no trip points", 800, zone(), temps(99000), nil},
		{"hot and slow", 800, zone(passive), []frame.WatchSample{
			{AtMS: 0, CurKHz: []int{800000}, TempMC: []int{84000}},
			{AtMS: 1500, CurKHz: []int{800000}, TempMC: []int{86000}},
			{AtMS: 2500, CurKHz: []int{600000}, TempMC: []int{87000}}},
			&results.Throttle{
				Clock: &results.ClockDrop{AskedMHz: 800, LowestMHz: 600, AtMS: 2500},
				Heat:  &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 87000, AtMS: 1500}}},
		{"the zone that got there first", 800,
			[]frame.ThermalZone{{Type: "gpu-thermal", Trips: []frame.TripPoint{passive}}, {Type: "cpu-thermal", Trips: []frame.TripPoint{passive}}},
			[]frame.WatchSample{
				{AtMS: 0, TempMC: []int{50000, 50000}},
				{AtMS: 1000, TempMC: []int{50000, 90000}},
				{AtMS: 2000, TempMC: []int{86000, 91000}}},
			&results.Throttle{Heat: &results.Heat{Zone: "cpu-thermal", Trip: "passive", TripMC: 85000, HighestMC: 91000, AtMS: 1000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judgeThrottle(tt.asked, tt.zones, tt.samples)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s (%+v), want %s", got, got, tt.want)
			}
		})
	}
}

// TestThrottleSaidAsItHappens: the progress says the board slows down
// when the watch shows it, before the result, and once more as the run is
// stored throttled.
func TestThrottleSaidAsItHappens(t *testing.T) {
	ft := &fakeTarget{boots: []script{watched(frame.HelloBody{CPUFreqCurKHz: 800000, ClockRequestedMHz: 800}, 800000, 600000, 700000, 600000)}}
	o := fakeOptions(t, ft, boards.Profile{ClockMethod: boards.ClockCPUFreq})
	o.Clock = 800
	var said []string
	o.Events = func(e Event) {
		if e.Stage == results.EventThrottle || e.Stage == results.EventStored {
			said = append(said, string(e.Stage)+" "+e.Msg)
		}
	}
	if _, err := Run(context.Background(), o.Job, o.Rig); err != nil {
		t.Fatal(err)
	}
	ft.written.Wait()
	want := []string{
		"throttle the board is slowing down: the clock fell to 600 MHz (800 MHz asked) 1.0 s into the benchmark",
		"throttle the clock fell to 600 MHz (800 MHz asked) 1.0 s into the benchmark: stored as throttled, left out of comparisons unless asked",
	}
	if len(said) != 3 || !reflect.DeepEqual(said[:2], want) || !strings.HasSuffix(said[2], ": throttled, 12 metrics") {
		t.Errorf("progress:\n%s", strings.Join(said, "\n"))
	}
}
