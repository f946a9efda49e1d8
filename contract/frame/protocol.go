package frame

import (
	"encoding/json"
	"fmt"
)

// Event is what one console line meant to the host.
type Event int

// Events, one for each frame type and two for lines that are no result.
const (
	EventTranscript Event = iota // ordinary console output
	EventStale                   // a frame from another run (an old boot)
	EventHello                   // the board reported in
	EventProgress                // a chunk of benchmark output arrived
	EventDone                    // the result is complete and verified
	EventFailed                  // the board reported a failure
	EventReady                   // the board routes in a configuration (route benchmark)
	EventCounters                // the board's counters for a configuration (route benchmark)
	EventWatch                   // a batch of the board's clock and temperature samples
)

// kind is one frame type of the protocol: the body the board sends in it,
// the event it is to the host and what the host takes from the body.
type kind struct {
	event Event
	// fits says whether a Writer may send body in this type.
	fits func(body any) bool
	// take unmarshals the body, once, and hands it to the collector.
	take func(c *Collector, body json.RawMessage) error
}

// kinds is the protocol: every frame type a board sends and a host reads.
var kinds = map[Type]kind{
	Hello:    kindOf(EventHello, (*Collector).takeHello),
	Raw:      kindOf(EventProgress, (*Collector).takeRaw),
	Done:     kindOf(EventDone, (*Collector).takeDone),
	Fail:     kindOf(EventFailed, (*Collector).takeFail),
	Ready:    kindOf(EventReady, (*Collector).takeReady),
	Counters: kindOf(EventCounters, (*Collector).takeCounters),
	Watch:    kindOf(EventWatch, (*Collector).takeWatch),
}

// kindOf is the frame type whose body is a B, handled by take.
func kindOf[B any](event Event, take func(c *Collector, body B, raw json.RawMessage) error) kind {
	return kind{
		event: event,
		fits:  func(body any) bool { _, ok := body.(B); return ok },
		take: func(c *Collector, raw json.RawMessage) error {
			var b B
			if err := json.Unmarshal(raw, &b); err != nil {
				return err
			}
			return take(c, b, raw)
		},
	}
}

// checkBody says why body cannot go in a frame of type typ, if it cannot.
func checkBody(typ Type, body any) error {
	k, ok := kinds[typ]
	if !ok {
		return fmt.Errorf("unknown frame type %q", typ)
	}
	if !k.fits(body) {
		return fmt.Errorf("a %s frame cannot carry a %T", typ, body)
	}
	return nil
}
