package power

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// tasmota switches a relay of a device running Tasmota
// (https://tasmota.github.io/docs/Commands/) through its web command API:
//
//	GET <url>/cm?cmnd=Power1%20On   →   {"POWER1":"ON"}
//
// A device with a single relay answers {"POWER":"ON"} instead. With a web
// password set, the URL's user and password go along as Tasmota's user and
// password parameters; without them Tasmota answers 200 with a WARNING.
type tasmota struct {
	dev         device // base without credentials
	user, pass  string
	board       string
	relay       int
	credentials bool
}

func newTasmota(board string, spec boards.PowerSpec) (Driver, error) {
	base, err := parseDeviceURL(board, "tasmota", spec.URL)
	if err != nil {
		return nil, err
	}
	if spec.Relay < 0 {
		return nil, fmt.Errorf("power for %s: driver tasmota: relay %d (relays count from 1)", board, spec.Relay)
	}
	t := &tasmota{board: board, relay: max(spec.Relay, 1)}
	if base.User != nil {
		t.user = base.User.Username()
		t.pass, _ = base.User.Password()
		t.credentials = true
		base.User = nil // Tasmota takes them as parameters, not basic auth
	}
	t.dev = newDevice(base, HTTPTimeout)
	return t, nil
}

func (t *tasmota) String() string {
	return fmt.Sprintf("tasmota %s relay %d", t.dev.where(), t.relay)
}

func (t *tasmota) On(ctx context.Context) error  { return t.power(ctx, "On") }
func (t *tasmota) Off(ctx context.Context) error { return t.power(ctx, "Off") }

func (t *tasmota) power(ctx context.Context, state string) error {
	cmnd := fmt.Sprintf("Power%d %s", t.relay, state)
	what := fmt.Sprintf("switch %s %s with tasmota %s: %s", t.board, strings.ToLower(state), t.dev.where(), cmnd)
	a, err := t.dev.get(ctx, "/cm", t.query(cmnd), "")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if a.status != http.StatusOK {
		return fmt.Errorf("%s: the device answered %s: %s (is url a Tasmota device?)", what, a.statusText(), firstLine(a.body))
	}
	if err := t.check(a.body, strings.ToUpper(state)); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// query is the command with any credentials, spaces as %20 as Tasmota's
// documentation writes them.
func (t *tasmota) query(cmnd string) string {
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	q := "cmnd=" + esc(cmnd)
	if t.credentials {
		q = "user=" + esc(t.user) + "&password=" + esc(t.pass) + "&" + q
	}
	return q
}

// check reads Tasmota's answer: the relay must now be in state.
func (t *tasmota) check(body []byte, state string) error {
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		return fmt.Errorf("the answer is not Tasmota's JSON: %s (is url a Tasmota device?)", firstLine(body))
	}
	if w, ok := got["WARNING"]; ok {
		return fmt.Errorf("the device says %q (set its web password in the url: http://admin:PASSWORD@host)", w)
	}
	if got["Command"] == "Unknown" {
		return fmt.Errorf("the device has no relay %d (check relay in bench.yaml; relays count from 1)", t.relay)
	}
	key := fmt.Sprintf("POWER%d", t.relay)
	v, ok := got[key]
	if !ok && t.relay == 1 {
		v, ok = got["POWER"] // a single-relay device
	}
	if !ok {
		return fmt.Errorf("the answer does not say relay %d's state: %s", t.relay, firstLine(body))
	}
	if v != state {
		return fmt.Errorf("relay %d is %v, not %s (is the relay interlocked or timed by a rule?)", t.relay, v, state)
	}
	return nil
}
