package power

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// PDUDaemonTimeout is how long pdudaemon may take to answer. Since its
// asyncio rewrite (Debian 12's 0.0.8) it answers only after its PDU driver
// has run, and a failing driver is retried five times, five seconds apart;
// a reboot adds its delay on top.
const PDUDaemonTimeout = 30 * time.Second

// pdudaemon asks a pdudaemon (https://github.com/pdudaemon/pdudaemon) over
// its HTTP listener:
//
//	GET <url>/power/control/on|off?hostname=<pdu>&port=<n>
//	GET <url>/power/control/reboot?delay=<seconds>&hostname=<pdu>&port=<n>
//
// A 200 "OK - accepted request" means pdudaemon accepted the request, not
// that the port switched: older pdudaemons queue it and answer at once, and
// current ones answer the same when their PDU driver failed on every retry
// (only pdudaemon's log tells). Whether the board came on shows on its
// console or in its DHCP request. Anything else (500 "Invalid request":
// unknown PDU, missing port) is an error.
type pdudaemon struct {
	dev   device
	board string
	pdu   string
	port  int
	delay time.Duration
}

func newPDUDaemon(board string, spec boards.PowerSpec) (Driver, error) {
	base, err := parseDeviceURL(board, "pdudaemon", spec.URL)
	if err != nil {
		return nil, err
	}
	if spec.PDU == "" || spec.Port <= 0 {
		return nil, fmt.Errorf("power for %s: driver pdudaemon needs pdu (the PDU's name in pdudaemon's configuration) and port (1 or more)", board)
	}
	return &pdudaemon{dev: newDevice(base, PDUDaemonTimeout), board: board, pdu: spec.PDU, port: spec.Port, delay: spec.Delay}, nil
}

func (p *pdudaemon) String() string { return fmt.Sprintf("pdudaemon %s port %d", p.pdu, p.port) }

func (p *pdudaemon) On(ctx context.Context) error  { return p.request(ctx, "on", p.dev) }
func (p *pdudaemon) Off(ctx context.Context) error { return p.request(ctx, "off", p.dev) }

// Cycle is pdudaemon's reboot: off, the delay, on. pdudaemon takes whole
// seconds (a fraction makes it fail between off and on), so the delay is
// rounded up; with none, pdudaemon's own default applies (5 s).
func (p *pdudaemon) Cycle(ctx context.Context) error {
	dev := p.dev
	dev.timeout += p.delay
	return p.request(ctx, "reboot", dev)
}

func (p *pdudaemon) request(ctx context.Context, req string, dev device) error {
	q := url.Values{"hostname": {p.pdu}, "port": {strconv.Itoa(p.port)}}
	if req == "reboot" && p.delay > 0 {
		q.Set("delay", strconv.Itoa(int((p.delay+time.Second-1)/time.Second)))
	}
	what := fmt.Sprintf("switch %s %s with %s at %s", p.board, req, p, dev.where())
	a, err := dev.get(ctx, "/power/control/"+req, q.Encode(), "")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if a.status == http.StatusOK && strings.HasPrefix(string(a.body), "OK") {
		return nil
	}
	hint := `is url pdudaemon's listener? its configuration needs "listener": "http"`
	if a.status == http.StatusInternalServerError {
		hint = fmt.Sprintf("is %q a PDU in pdudaemon's configuration, with a port %d? its log says why", p.pdu, p.port)
	}
	return fmt.Errorf("%s: pdudaemon answered %s: %s (%s)", what, a.statusText(), firstLine(a.body), hint)
}
