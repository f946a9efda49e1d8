package serialctl

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bootbench/bootbench/internal/frame"
)

// ErrCorrupt marks a run whose frames cannot be trusted: a checksum failed, a
// frame went missing, or the output's digest differs. Such a run is retried,
// never stored as a result.
var ErrCorrupt = errors.New("corrupt result frames")

// Event is what one fed line meant.
type Event int

const (
	Transcript Event = iota // ordinary console output
	Stale                   // a frame from another run (an old boot)
	Hello                   // the board reported in
	Progress                // a chunk of benchmark output arrived
	Done                    // the result is complete and verified
	Failed                  // the board reported a failure
	Ready                   // the board routes in a configuration (route benchmark)
	Counters                // the board's counters for a configuration (route benchmark)
)

// Result is a verified benchmark output.
type Result struct {
	Hello    frame.HelloBody
	HelloRaw json.RawMessage
	Output   []byte
	Exit     int
	// The route benchmark's reports, in the order they came.
	Ready    []frame.ReadyBody
	Counters []frame.CountersBody
}

// Collector assembles one run's frames. It accepts frames only for its run
// id, in sequence, and refuses the whole run on the first bad one.
type Collector struct {
	run     string
	seq     int
	chunks  int
	out     bytes.Buffer
	res     Result
	hello   bool
	Reason  string // set when the board sent "fail"
	corrupt error
}

// NewCollector collects frames for run.
func NewCollector(run string) *Collector { return &Collector{run: run} }

// Result is the verified output once Feed has returned Done.
func (c *Collector) Result() Result { return c.res }

// Output is what arrived so far, verified or not: for the record of a failed run.
func (c *Collector) Output() []byte { return bytes.Clone(c.out.Bytes()) }

// Feed interprets one console line.
func (c *Collector) Feed(line []byte) (Event, error) {
	if c.corrupt != nil {
		return Transcript, c.corrupt
	}
	if !frame.IsFrame(line) {
		return Transcript, nil
	}
	f, err := frame.Decode(line)
	if err != nil {
		return c.fail(fmt.Errorf("%w: %v", ErrCorrupt, err))
	}
	var id struct {
		Run string `json:"run"`
	}
	if err := json.Unmarshal(f.Body, &id); err != nil {
		return c.fail(fmt.Errorf("%w: %s frame: %v", ErrCorrupt, f.Type, err))
	}
	if id.Run != c.run {
		// A frame without a run id can only be a "fail" from a board that
		// was not told its run: it is ours, since we booted it.
		if !(id.Run == "" && f.Type == frame.Fail) {
			return Stale, nil
		}
	}
	if f.Seq != c.seq {
		return c.fail(fmt.Errorf("%w: frame %d arrived, expected %d (a frame was lost)", ErrCorrupt, f.Seq, c.seq))
	}
	c.seq++
	switch f.Type {
	case frame.Hello:
		if err := json.Unmarshal(f.Body, &c.res.Hello); err != nil {
			return c.fail(fmt.Errorf("%w: hello: %v", ErrCorrupt, err))
		}
		c.res.HelloRaw = append(json.RawMessage(nil), f.Body...)
		c.hello = true
		return Hello, nil
	case frame.Raw:
		var b frame.RawBody
		if err := json.Unmarshal(f.Body, &b); err != nil {
			return c.fail(fmt.Errorf("%w: raw: %v", ErrCorrupt, err))
		}
		if b.N != c.chunks {
			return c.fail(fmt.Errorf("%w: chunk %d arrived, expected %d", ErrCorrupt, b.N, c.chunks))
		}
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			return c.fail(fmt.Errorf("%w: chunk %d: %v", ErrCorrupt, b.N, err))
		}
		c.chunks++
		c.out.Write(data)
		return Progress, nil
	case frame.Done:
		var b frame.DoneBody
		if err := json.Unmarshal(f.Body, &b); err != nil {
			return c.fail(fmt.Errorf("%w: done: %v", ErrCorrupt, err))
		}
		if b.Chunks != c.chunks {
			return c.fail(fmt.Errorf("%w: board sent %d chunks, %d arrived", ErrCorrupt, b.Chunks, c.chunks))
		}
		sum := sha256.Sum256(c.out.Bytes())
		if hex.EncodeToString(sum[:]) != b.SHA256 {
			return c.fail(fmt.Errorf("%w: output digest differs from the board's", ErrCorrupt))
		}
		c.res.Output = c.Output()
		c.res.Exit = b.Exit
		return Done, nil
	case frame.Ready:
		var b frame.ReadyBody
		if err := json.Unmarshal(f.Body, &b); err != nil {
			return c.fail(fmt.Errorf("%w: ready: %v", ErrCorrupt, err))
		}
		c.res.Ready = append(c.res.Ready, b)
		return Ready, nil
	case frame.Counters:
		var b frame.CountersBody
		if err := json.Unmarshal(f.Body, &b); err != nil {
			return c.fail(fmt.Errorf("%w: counters: %v", ErrCorrupt, err))
		}
		c.res.Counters = append(c.res.Counters, b)
		return Counters, nil
	case frame.Fail:
		var b frame.FailBody
		if err := json.Unmarshal(f.Body, &b); err != nil {
			return c.fail(fmt.Errorf("%w: fail: %v", ErrCorrupt, err))
		}
		c.Reason = b.Reason
		return Failed, nil
	default:
		return c.fail(fmt.Errorf("%w: unknown frame type %q", ErrCorrupt, f.Type))
	}
}

func (c *Collector) fail(err error) (Event, error) {
	c.corrupt = err
	return Transcript, err
}
