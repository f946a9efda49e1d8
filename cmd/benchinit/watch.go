package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/contract/frame"
)

// The throttling watch: while the benchmark runs, benchinit reads every
// cpufreq policy's current clock and every thermal zone's temperature
// about once a second and sends them to the host, which judges from them
// whether the board slowed down (a hot SoC's passive trip point, a
// firmware that caps the clock) and its figures are not the clock's.
//
// The console is slow (115200 baud is some 11 kB/s on a real board, and
// the benchmark's own output shares it) and a steady board says the same
// thing every second for the whole run. So a sample is kept only when it
// says something new (a clock changed, a temperature moved by a degree or
// crossed a trip point), and kept samples go in batches; the last sample
// of the run is always sent, so the host knows the watch lasted to the end.
// A batch stays short, as a raw frame does: one bad byte on the wire costs
// the frame and with it the run, and the longer the line the likelier.
const (
	watchEvery = time.Second
	// A batch goes at watchBatch samples or watchBatchBytes of them,
	// whichever comes first.
	watchBatch      = 8
	watchBatchBytes = 384
	// watchTempStep is the temperature change worth a sample.
	watchTempStep = 1000 // millidegrees
)

// zone is a thermal zone being watched: where it is and what the host is
// told of it.
type zone struct {
	dir string
	frame.ThermalZone
}

// watchedTrips are the trip point types the host judges by: the kernel
// slows the CPU at a passive one and is about to shut down at hot and
// critical ones. Active trips start fans, which cost no speed, so they
// are left out to keep the frames short.
var watchedTrips = []string{"passive", "hot", "critical"}

// thermalZones finds the zones below root whose temperature can be read,
// in the kernel's order, with their trip points.
func thermalZones(root string) []zone {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/class/thermal/thermal_zone[0-9]*"))
	num := func(dir string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "thermal_zone"))
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return num(a) - num(b) })
	var zones []zone
	for _, d := range dirs {
		if _, ok := readMilli(d, "temp"); !ok {
			continue // a zone whose sensor does not answer says nothing
		}
		z := zone{dir: d, ThermalZone: frame.ThermalZone{Type: readLine(d, "type")}}
		for i := 0; ; i++ {
			typ := readLine(d, "trip_point_"+strconv.Itoa(i)+"_type")
			if typ == "" {
				break
			}
			temp, ok := readMilli(d, "trip_point_"+strconv.Itoa(i)+"_temp")
			if ok && temp > 0 && slices.Contains(watchedTrips, typ) {
				z.Trips = append(z.Trips, frame.TripPoint{Type: typ, TempMC: temp})
			}
		}
		zones = append(zones, z)
	}
	return zones
}

func readLine(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// readMilli reads a number sysfs gives in millidegrees (it may be
// negative: a sensor below freezing).
func readMilli(dir, name string) (int, bool) {
	n, err := strconv.Atoi(readLine(dir, name))
	return n, err == nil
}

// watch samples the board's clocks and temperatures until stopped.
type watch struct {
	out      *frame.Writer
	policies []string // cpufreq directories, CPU 0's first
	zones    []zone
	start    time.Time
	now      func() time.Time

	// Only the watch's goroutine touches these, and Stop once it is
	// gone.
	kept         *frame.WatchSample // the last sample kept
	pending      []frame.WatchSample
	pendingBytes int // their JSON's length

	idle bool // nothing to watch
	stop chan struct{}
	done chan struct{}
}

// startWatch starts the watch of the board below root, sampling every
// interval. Its first frame names the thermal zones with their trip
// points, and carries no samples. A board with neither cpufreq nor a
// thermal zone (most virtual boards) has nothing to watch: that frame,
// naming none, is all it sends, and the returned watch does nothing.
func startWatch(out *frame.Writer, root string, every time.Duration, now func() time.Time) *watch {
	w := newWatch(out, root, now)
	w.announce()
	if w.idle {
		return w
	}
	w.sample(false)
	go w.loop(every)
	return w
}

// announce sends the first watch frame: the zones, no samples.
func (w *watch) announce() {
	zones := make([]frame.ThermalZone, len(w.zones))
	for i, z := range w.zones {
		zones[i] = z.ThermalZone
	}
	w.out.Send(frame.Watch, frame.WatchBody{Zones: zones, Samples: []frame.WatchSample{}})
}

// newWatch finds what there is to watch below root; the clock starts now.
func newWatch(out *frame.Writer, root string, now func() time.Time) *watch {
	w := &watch{out: out, policies: cpufreqDirs(root), zones: thermalZones(root), start: now(), now: now,
		stop: make(chan struct{}), done: make(chan struct{})}
	w.idle = len(w.policies) == 0 && len(w.zones) == 0
	return w
}

func (w *watch) loop(every time.Duration) {
	defer close(w.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.sample(false)
		}
	}
}

// Stop ends the watch with a last sample and sends what is pending; the
// benchmark is over, and the host must have it all before done.
func (w *watch) Stop() {
	if w.idle {
		return
	}
	close(w.stop)
	<-w.done
	w.sample(true)
	w.flush()
}

// sample reads the clocks and temperatures once, keeps the sample if it
// says something new (or is the last), and sends a full batch.
func (w *watch) sample(last bool) {
	s := frame.WatchSample{AtMS: w.now().Sub(w.start).Milliseconds()}
	for i, d := range w.policies {
		khz := readKHz(d, "scaling_cur_freq")
		if khz == 0 {
			khz = readKHz(d, "cpuinfo_cur_freq")
		}
		if khz == 0 && w.kept != nil {
			khz = w.kept.CurKHz[i] // a policy that missed a reading: as before
		}
		s.CurKHz = append(s.CurKHz, khz)
	}
	for i, z := range w.zones {
		t, ok := readMilli(z.dir, "temp")
		if !ok && w.kept != nil {
			t = w.kept.TempMC[i] // a sensor that missed a reading: as before
		}
		s.TempMC = append(s.TempMC, t)
	}
	if !last && w.kept != nil && !w.news(*w.kept, s) {
		return
	}
	// A clock that moved or a trip point crossed goes out at once, so
	// the host can say the board is slowing down while it does; a
	// temperature that only climbs waits for a batch.
	urgent := w.kept != nil && w.throttling(*w.kept, s)
	w.kept = &s
	w.pending = append(w.pending, s)
	js, _ := json.Marshal(s)
	w.pendingBytes += len(js) + 1
	if urgent || len(w.pending) >= watchBatch || w.pendingBytes >= watchBatchBytes {
		w.flush()
	}
}

// throttling says whether s differs from prev in what the host judges a
// run throttled by: a clock, or how many trip points a zone has reached.
func (w *watch) throttling(prev, s frame.WatchSample) bool {
	if !slices.Equal(prev.CurKHz, s.CurKHz) {
		return true
	}
	for i, z := range w.zones {
		if tripsReached(z.Trips, s.TempMC[i]) != tripsReached(z.Trips, prev.TempMC[i]) {
			return true
		}
	}
	return false
}

// news says whether s tells the host something prev did not.
func (w *watch) news(prev, s frame.WatchSample) bool {
	if !slices.Equal(prev.CurKHz, s.CurKHz) {
		return true
	}
	for i, z := range w.zones {
		d := s.TempMC[i] - prev.TempMC[i]
		if d >= watchTempStep || d <= -watchTempStep || tripsReached(z.Trips, s.TempMC[i]) != tripsReached(z.Trips, prev.TempMC[i]) {
			return true
		}
	}
	return false
}

func tripsReached(trips []frame.TripPoint, temp int) int {
	n := 0
	for _, t := range trips {
		if temp >= t.TempMC {
			n++
		}
	}
	return n
}

// flush sends the pending samples.
func (w *watch) flush() {
	if len(w.pending) == 0 {
		return
	}
	w.out.Send(frame.Watch, frame.WatchBody{Samples: w.pending})
	w.pending, w.pendingBytes = nil, 0
}
