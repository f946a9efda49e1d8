package results

// StageName names one stage a run's time is split into (Run.Stages).
// Runs stored by older versions may hold others ("dhcp", "tftp"): the
// store keeps whatever name it is given, these are the ones runs record
// now.
type StageName string

// The stages, in the order a run passes them; a run enters only those its
// board's boot goes through.
const (
	StageImage    StageName = "image"    // the kernel found, the image built or taken from the cache
	StageNetwork  StageName = "network"  // the bench network brought up for the board
	StageFirmware StageName = "firmware" // power-on until the bootloader asks for its boot file
	StageNetboot  StageName = "netboot"  // the bootloader fetching the kernel and image
	StageKernel   StageName = "kernel"   // the kernel booting until the board says hello
	StageBench    StageName = "bench"    // the benchmark running until its result
)

// Stages are the stage names runs record, in the order a run passes them.
var Stages = []StageName{StageImage, StageNetwork, StageFirmware, StageNetboot, StageKernel, StageBench}

// EventKind says what one line of a run's progress is about: a stage it
// entered or a step inside one, or one of the events below. It is the
// "event" of `serve --format json` and the second column of the run's
// progress lines.
type EventKind string

// The event kinds that are not stages.
const (
	EventRun     EventKind = "run"     // the run starts: board, clock, benchmark
	EventPower   EventKind = "power"   // the board switched on or off
	EventClock   EventKind = "clock"   // the clock set, asked of the operator, or checked
	EventDHCP    EventKind = "dhcp"    // a DHCP or BOOTP reply to the board
	EventTFTP    EventKind = "tftp"    // a file served over TFTP
	EventHTTP    EventKind = "http"    // a file served over HTTP
	EventConsole EventKind = "console" // the bootloader driven over the console
	EventRoute   EventKind = "route"   // the route benchmark's host side
	EventStored  EventKind = "stored"  // the run stored
	// EventNotStored: the store did not take the run; the event says
	// where it was kept instead (a spool), if anywhere.
	EventNotStored EventKind = "unstored"
	// EventThrottle: the board's throttling watch saw it slow down.
	EventThrottle EventKind = "throttle"
)

var otherEvents = []EventKind{EventRun, EventPower, EventClock, EventDHCP, EventTFTP, EventHTTP, EventConsole, EventRoute, EventStored, EventNotStored, EventThrottle}

// Event is the kind of the events said about stage s.
func (s StageName) Event() EventKind { return EventKind(s) }

// EventKinds are every kind of event a run reports: its stages, then the
// others.
func EventKinds() []EventKind {
	kinds := make([]EventKind, 0, len(Stages)+len(otherEvents))
	for _, s := range Stages {
		kinds = append(kinds, s.Event())
	}
	return append(kinds, otherEvents...)
}
