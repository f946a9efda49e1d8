package power

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// shelly switches a Shelly relay through its /relay endpoint
// (https://shelly-api-docs.shelly.cloud/gen1/#shelly1-relay-0):
//
//	GET <url>/relay/0?turn=on   →   {"ison":true,"has_timer":false,...}
//
// Gen2 and later devices (Plus, Pro) keep that endpoint for compatibility
// with the same answer, so one request serves every generation. They differ
// in authentication: Gen1 takes the URL's credentials as basic auth, Gen2+
// challenges for digest auth (SHA-256, user admin), answered here.
type shelly struct {
	dev   device
	board string
	relay int
	// gen1Meter is set once the device answered the meter as a Gen1
	// does (it has no RPC): later samples go there at once.
	gen1Meter bool
}

func newShelly(board string, spec boards.PowerSpec) (Driver, error) {
	base, err := parseDeviceURL(board, "shelly", spec.URL)
	if err != nil {
		return nil, err
	}
	if spec.Relay < 0 {
		return nil, fmt.Errorf("power for %s: driver shelly: relay %d (relays count from 0)", board, spec.Relay)
	}
	return &shelly{dev: newDevice(base, HTTPTimeout), board: board, relay: spec.Relay}, nil
}

func (s *shelly) String() string {
	return fmt.Sprintf("shelly %s relay %d", s.dev.where(), s.relay)
}

func (s *shelly) On(ctx context.Context) error  { return s.turn(ctx, "on") }
func (s *shelly) Off(ctx context.Context) error { return s.turn(ctx, "off") }

func (s *shelly) turn(ctx context.Context, state string) error {
	path, query := fmt.Sprintf("/relay/%d", s.relay), "turn="+state
	what := fmt.Sprintf("switch %s %s with shelly %s relay %d", s.board, state, s.dev.where(), s.relay)
	a, err := s.get(ctx, path, query)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	switch a.status {
	case http.StatusOK:
	case http.StatusUnauthorized:
		if s.dev.base.User == nil {
			return fmt.Errorf("%s: the device wants a password (put it in the url: http://admin:PASSWORD@host)", what)
		}
		return fmt.Errorf("%s: the device refused the url's user and password", what)
	case http.StatusNotFound:
		return fmt.Errorf("%s: the device has no relay %d (check relay in bench.yaml; relays count from 0)", what, s.relay)
	default:
		return fmt.Errorf("%s: the device answered %s: %s (is url a Shelly?)", what, a.statusText(), firstLine(a.body))
	}
	var got struct {
		IsOn *bool `json:"ison"`
	}
	if err := json.Unmarshal(a.body, &got); err != nil || got.IsOn == nil {
		return fmt.Errorf("%s: the answer does not say whether the relay is on: %s (is url a Shelly?)", what, firstLine(a.body))
	}
	if *got.IsOn != (state == "on") {
		return fmt.Errorf("%s: the relay is still %s (is it locked, or switched back by a timer or script?)", what, map[bool]string{true: "on", false: "off"}[*got.IsOn])
	}
	return nil
}

// get asks the device for path?query, answering a Gen2+ device's digest
// challenge when the URL has credentials.
func (s *shelly) get(ctx context.Context, path, query string) (answer, error) {
	a, err := s.dev.get(ctx, path, query, "")
	if err == nil && a.status == http.StatusUnauthorized && s.dev.base.User != nil {
		a, err = s.digestRetry(ctx, a, path, query)
	}
	return a, err
}

// digestRetry answers a Gen2+ device's digest challenge.
func (s *shelly) digestRetry(ctx context.Context, a answer, path, query string) (answer, error) {
	ch, ok := parseDigestChallenge(a.header.Get("WWW-Authenticate"))
	if !ok {
		return a, nil // basic auth refused: a Gen1 with another password
	}
	user := s.dev.base.User.Username()
	pass, _ := s.dev.base.User.Password()
	uri := strings.TrimSuffix(s.dev.base.EscapedPath(), "/") + path
	if query != "" {
		uri += "?" + query
	}
	auth, err := digestAuthorization(ch, user, pass, http.MethodGet, uri, newCnonce())
	if err != nil {
		return answer{}, err
	}
	return s.dev.get(ctx, path, query, auth)
}
