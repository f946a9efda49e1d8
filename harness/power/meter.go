package power

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
)

// Meter is a Driver that also measures the power its switch passes: a
// smart plug or relay with an energy meter (Tasmota, Shelly). A run
// samples it while the board is on.
type Meter interface {
	// Watts is the board's power draw now, as the device last measured it.
	Watts(ctx context.Context) (float64, error)
}

// ErrNoMeter is returned (wrapped) by Watts when the device answers but
// measures nothing: a relay without an energy meter. Asking again will not
// change that.
var ErrNoMeter = errors.New("the device has no power meter")

// Watts reads Tasmota's energy sensor
// (https://tasmota.github.io/docs/JSON-Status-Responses/):
//
//	GET <url>/cm?cmnd=Status%208   →   {"StatusSNS":{"ENERGY":{"Power":12,...}}}
//
// A device metering several channels answers Power as a list, one figure
// per relay: the driver's relay's is taken.
func (t *tasmota) Watts(ctx context.Context) (float64, error) {
	what := fmt.Sprintf("read %s's power from tasmota %s", t.board, t.dev.where())
	a, err := t.dev.get(ctx, "/cm", t.query("Status 8"), "")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if a.status != http.StatusOK {
		return 0, fmt.Errorf("%s: the device answered %s: %s", what, a.statusText(), firstLine(a.body))
	}
	w, err := tasmotaWatts(a.body, t.relay)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return w, nil
}

// tasmotaWatts reads ENERGY.Power out of a Status 8 answer.
func tasmotaWatts(body []byte, relay int) (float64, error) {
	var got struct {
		Warning   string `json:"WARNING"`
		StatusSNS *struct {
			Energy *struct {
				Power json.RawMessage `json:"Power"`
			} `json:"ENERGY"`
		} `json:"StatusSNS"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		return 0, fmt.Errorf("the answer is not Tasmota's JSON: %s", firstLine(body))
	}
	switch {
	case got.Warning != "":
		return 0, fmt.Errorf("the device says %q (set its web password in the url: http://admin:PASSWORD@host)", got.Warning)
	case got.StatusSNS == nil:
		return 0, fmt.Errorf("the answer has no StatusSNS: %s", firstLine(body))
	case got.StatusSNS.Energy == nil:
		return 0, fmt.Errorf("%w: Status 8 reports no ENERGY", ErrNoMeter)
	case got.StatusSNS.Energy.Power == nil || string(got.StatusSNS.Energy.Power) == "null":
		return 0, fmt.Errorf("ENERGY has no Power: %s", firstLine(body))
	}
	raw := got.StatusSNS.Energy.Power
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		return checkWatts(one)
	}
	var per []float64
	if err := json.Unmarshal(raw, &per); err != nil {
		return 0, fmt.Errorf("ENERGY.Power is %s, not watts", raw)
	}
	if relay > len(per) {
		return 0, fmt.Errorf("ENERGY.Power has %d channels, none for relay %d", len(per), relay)
	}
	return checkWatts(per[relay-1])
}

// Watts reads a Shelly's meter: Gen2+ through RPC
// (https://shelly-api-docs.shelly.cloud/gen2/ComponentsAndServices/Switch),
// Gen1, which has no RPC, through /meter
// (https://shelly-api-docs.shelly.cloud/gen1/#shelly1pm-meter-0):
//
//	GET <url>/rpc/Switch.GetStatus?id=0   →   {"id":0,"output":true,"apower":8.9,...}
//	GET <url>/meter/0                     →   {"power":8.9,"is_valid":true,...}
func (s *shelly) Watts(ctx context.Context) (float64, error) {
	what := fmt.Sprintf("read %s's power from shelly %s relay %d", s.board, s.dev.where(), s.relay)
	if !s.gen1Meter {
		a, err := s.get(ctx, "/rpc/Switch.GetStatus", fmt.Sprintf("id=%d", s.relay))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", what, err)
		}
		if a.status != http.StatusNotFound {
			w, err := shellyWatts(a, "apower")
			if err != nil {
				return 0, fmt.Errorf("%s: %w", what, err)
			}
			return w, nil
		}
	}
	a, err := s.get(ctx, fmt.Sprintf("/meter/%d", s.relay), "")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if a.status == http.StatusNotFound {
		return 0, fmt.Errorf("%s: %w (neither /rpc/Switch.GetStatus nor /meter/%d)", what, ErrNoMeter, s.relay)
	}
	w, err := shellyWatts(a, "power")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	s.gen1Meter = true
	return w, nil
}

// shellyWatts reads the field that holds the watts out of a Shelly's
// answer: apower (Gen2+ Switch.GetStatus) or power (Gen1 /meter).
func shellyWatts(a answer, field string) (float64, error) {
	switch a.status {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return 0, errors.New("the device wants a password, or refused the url's (http://admin:PASSWORD@host)")
	default:
		return 0, fmt.Errorf("the device answered %s: %s", a.statusText(), firstLine(a.body))
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(a.body, &got); err != nil {
		return 0, fmt.Errorf("the answer is not a Shelly's JSON: %s", firstLine(a.body))
	}
	raw, ok := got[field]
	if !ok || string(raw) == "null" {
		// A Gen2 switch without metering (Plus 1) answers without apower.
		return 0, fmt.Errorf("%w: the answer has no %q: %s", ErrNoMeter, field, firstLine(a.body))
	}
	if v, ok := got["is_valid"]; ok && string(v) == "false" {
		return 0, fmt.Errorf("the meter says its reading is not valid: %s", firstLine(a.body))
	}
	var w float64
	if err := json.Unmarshal(raw, &w); err != nil {
		return 0, fmt.Errorf("%q is %s, not watts", field, raw)
	}
	return checkWatts(w)
}

// checkWatts refuses a figure no meter measures.
func checkWatts(w float64) (float64, error) {
	if w < 0 || math.IsNaN(w) || math.IsInf(w, 0) {
		return 0, fmt.Errorf("the meter reports %v W", w)
	}
	return w, nil
}
