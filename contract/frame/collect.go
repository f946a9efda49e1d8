package frame

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrCorrupt marks a run whose frames cannot be trusted: a checksum failed, a
// frame went missing, or the output's digest differs. Such a run is retried,
// never stored as a result.
var ErrCorrupt = errors.New("corrupt result frames")

// Result is a verified benchmark output.
type Result struct {
	Hello    HelloBody
	HelloRaw json.RawMessage
	Output   []byte
	Exit     int
	// The route benchmark's reports, in the order they came.
	Ready    []ReadyBody
	Counters []CountersBody
	// The throttling watch: the board's thermal zones and its samples
	// of clocks and temperatures, in the order taken.
	Zones   []ThermalZone
	Samples []WatchSample
}

// Collector assembles one run's frames on the host. It accepts frames only
// for its run id, in sequence, and refuses the whole run on the first bad
// one.
type Collector struct {
	run     string
	seq     int
	chunks  int
	out     bytes.Buffer
	res     Result
	hello   bool   // a hello arrived
	watched bool   // a watch frame arrived
	Reason  string // set when the board sent "fail"
	corrupt error
}

// NewCollector collects frames for run.
func NewCollector(run string) *Collector { return &Collector{run: run} }

// Result is the verified output once Feed has returned EventDone.
func (c *Collector) Result() Result { return c.res }

// Output is what arrived so far, verified or not: for the record of a failed run.
func (c *Collector) Output() []byte { return bytes.Clone(c.out.Bytes()) }

// Feed interprets one console line.
func (c *Collector) Feed(line []byte) (Event, error) {
	if c.corrupt != nil {
		return EventTranscript, c.corrupt
	}
	if !IsFrame(line) {
		return EventTranscript, nil
	}
	f, err := Decode(line)
	if err != nil {
		return c.fail(fmt.Errorf("%w: %v", ErrCorrupt, err))
	}
	// A frame without a run id can only be a "fail" from a board that was
	// not told its run: it is ours, since we booted it.
	if f.Run != c.run && !(f.Run == "" && f.Type == Fail) {
		return EventStale, nil
	}
	if f.Seq != c.seq {
		return c.fail(fmt.Errorf("%w: frame %d arrived, expected %d (a frame was lost)", ErrCorrupt, f.Seq, c.seq))
	}
	c.seq++
	k, ok := kinds[f.Type]
	if !ok {
		return c.fail(fmt.Errorf("%w: unknown frame type %q", ErrCorrupt, f.Type))
	}
	if err := k.take(c, f.Body); err != nil {
		return c.fail(fmt.Errorf("%w: %s: %v", ErrCorrupt, f.Type, err))
	}
	return k.event, nil
}

func (c *Collector) fail(err error) (Event, error) {
	c.corrupt = err
	return EventTranscript, err
}

// takeHello takes the board's one report. A second would replace what
// the run is checked against (its clock) with whatever came later.
func (c *Collector) takeHello(b HelloBody, raw json.RawMessage) error {
	if c.hello {
		return errors.New("a second hello")
	}
	c.hello = true
	c.res.Hello = b
	c.res.HelloRaw = append(json.RawMessage(nil), raw...)
	return nil
}

func (c *Collector) takeRaw(b RawBody, _ json.RawMessage) error {
	if b.N != c.chunks {
		return fmt.Errorf("chunk %d arrived, expected %d", b.N, c.chunks)
	}
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return fmt.Errorf("chunk %d: %v", b.N, err)
	}
	c.chunks++
	c.out.Write(data)
	return nil
}

// takeDone completes the run. A result without the board's hello would be
// stored with nothing to check its clock against.
func (c *Collector) takeDone(b DoneBody, _ json.RawMessage) error {
	if !c.hello {
		return errors.New("done with no hello before it")
	}
	if b.Chunks != c.chunks {
		return fmt.Errorf("board sent %d chunks, %d arrived", b.Chunks, c.chunks)
	}
	sum := sha256.Sum256(c.out.Bytes())
	if hex.EncodeToString(sum[:]) != b.SHA256 {
		return errors.New("output digest differs from the board's")
	}
	c.res.Output = c.Output()
	c.res.Exit = b.Exit
	return nil
}

func (c *Collector) takeFail(b FailBody, _ json.RawMessage) error {
	c.Reason = b.Reason
	return nil
}

func (c *Collector) takeReady(b ReadyBody, _ json.RawMessage) error {
	c.res.Ready = append(c.res.Ready, b)
	return nil
}

func (c *Collector) takeCounters(b CountersBody, _ json.RawMessage) error {
	c.res.Counters = append(c.res.Counters, b)
	return nil
}

// takeWatch takes a batch of the throttling watch. The zones come in the
// first batch only and every sample must read each of them, in time
// order: a sample the host cannot line up with a zone or a moment would
// be judged wrong.
func (c *Collector) takeWatch(b WatchBody, _ json.RawMessage) error {
	if !c.hello {
		return errors.New("watch with no hello before it")
	}
	if c.watched && len(b.Zones) > 0 {
		return errors.New("thermal zones named again after the first watch frame")
	}
	if !c.watched {
		c.res.Zones = b.Zones
	}
	c.watched = true
	last := int64(0)
	if n := len(c.res.Samples); n > 0 {
		last = c.res.Samples[n-1].AtMS
	}
	for _, s := range b.Samples {
		if s.AtMS < last {
			return fmt.Errorf("sample at %d ms after one at %d ms", s.AtMS, last)
		}
		if len(s.TempMC) != len(c.res.Zones) {
			return fmt.Errorf("sample at %d ms reads %d zones of %d", s.AtMS, len(s.TempMC), len(c.res.Zones))
		}
		last = s.AtMS
	}
	c.res.Samples = append(c.res.Samples, b.Samples...)
	return nil
}
