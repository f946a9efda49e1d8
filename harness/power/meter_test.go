package power

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
)

// A Tasmota plug's Status 8, as a Sonoff S31 answers it.
const tasmotaStatus8 = `{"StatusSNS":{"Time":"2026-12-03T13:05:00","ENERGY":{"TotalStartTime":"2026-11-01T10:00:00","Total":1.234,"Yesterday":0.120,"Today":0.031,"Power":7,"ApparentPower":12,"ReactivePower":9,"Factor":0.58,"Voltage":231,"Current":0.052}}}`

func TestTasmotaWatts(t *testing.T) {
	tests := []struct {
		name    string
		relay   int
		body    string
		want    float64
		wantErr string
		noMeter bool
	}{
		{"a plug", 1, tasmotaStatus8, 7, "", false},
		{"fractional watts", 1, `{"StatusSNS":{"ENERGY":{"Power":2.35}}}`, 2.35, "", false},
		{"two channels, relay 2", 2, `{"StatusSNS":{"ENERGY":{"Power":[3,11.5]}}}`, 11.5, "", false},
		{"two channels, relay 3", 3, `{"StatusSNS":{"ENERGY":{"Power":[3,11.5]}}}`, 0, "2 channels, none for relay 3", false},
		{"no energy sensor", 1, `{"StatusSNS":{"Time":"2026-12-03T13:05:00"}}`, 0, "reports no ENERGY", true},
		{"no Power", 1, `{"StatusSNS":{"ENERGY":{"Voltage":231}}}`, 0, "ENERGY has no Power", false},
		{"Power null", 1, `{"StatusSNS":{"ENERGY":{"Power":null}}}`, 0, "ENERGY has no Power", false},
		{"Power a word", 1, `{"StatusSNS":{"ENERGY":{"Power":"7W"}}}`, 0, `ENERGY.Power is "7W", not watts`, false},
		{"negative", 1, `{"StatusSNS":{"ENERGY":{"Power":-4}}}`, 0, "reports -4 W", false},
		{"password", 1, `{"WARNING":"Need user=<username>&password=<password>"}`, 0, "http://admin:PASSWORD@host", false},
		{"not status 8", 1, `{"POWER":"ON"}`, 0, "no StatusSNS", false},
		{"not JSON", 1, `<html>`, 0, "not Tasmota's JSON", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tt.body)) })
			d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerTasmota, URL: strings.Replace(dev.URL, "http://", "http://admin:s3cret@", 1), Relay: tt.relay}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.(Meter).Watts(context.Background())
			checkReading(t, got, err, tt.want, tt.wantErr, tt.noMeter)
			if reqs := dev.requests(); len(reqs) != 1 || reqs[0] != "GET /cm?user=admin&password=s3cret&cmnd=Status%208" {
				t.Errorf("requests %q", reqs)
			}
		})
	}
}

// Shelly answers, as the devices send them.
const (
	gen2SwitchStatus = `{"id":0,"source":"http","output":true,"apower":8.9,"voltage":229.4,"freq":50.0,"current":0.064,"aenergy":{"total":12.345,"by_minute":[140.2,141.0,139.8],"minute_ts":1764766800},"temperature":{"tC":41.2,"tF":106.2}}`
	gen1Meter        = `{"power":4.51,"overpower":0.00,"is_valid":true,"timestamp":1764766800,"counters":[4.5,4.49,4.52],"total":731}`
)

func TestShellyWatts(t *testing.T) {
	const rpc, meter = "GET /rpc/Switch.GetStatus?id=1", "GET /meter/1"
	type reply struct {
		status int
		body   string
	}
	tests := []struct {
		name     string
		answers  map[string]reply // by request; anything else is 404
		want     float64
		wantErr  string
		noMeter  bool
		wantReqs []string
	}{
		{"gen2", map[string]reply{rpc: {200, gen2SwitchStatus}}, 8.9, "", false, []string{rpc}},
		{"gen1 has no rpc", map[string]reply{meter: {200, gen1Meter}}, 4.51, "", false, []string{rpc, meter}},
		{"gen2 without metering", map[string]reply{rpc: {200, `{"id":1,"source":"init","output":true,"temperature":{"tC":40.1}}`}}, 0, `no "apower"`, true, []string{rpc}},
		{"gen1 without meter", nil, 0, "neither /rpc/Switch.GetStatus nor /meter/1", true, []string{rpc, meter}},
		{"gen1 reading not valid", map[string]reply{meter: {200, `{"power":0,"is_valid":false}`}}, 0, "not valid", false, []string{rpc, meter}},
		{"apower null", map[string]reply{rpc: {200, `{"id":1,"apower":null}`}}, 0, `no "apower"`, true, []string{rpc}},
		{"apower a word", map[string]reply{rpc: {200, `{"id":1,"apower":"high"}`}}, 0, `"apower" is "high", not watts`, false, []string{rpc}},
		{"password", map[string]reply{rpc: {401, ""}}, 0, "wants a password", false, []string{rpc}},
		{"server error", map[string]reply{rpc: {500, "busy"}}, 0, "500 Internal Server Error: busy", false, []string{rpc}},
		{"not JSON", map[string]reply{rpc: {200, "<html>"}}, 0, "not a Shelly's JSON", false, []string{rpc}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) {
				a, ok := tt.answers[r.Method+" "+r.URL.RequestURI()]
				if !ok {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(a.status)
				w.Write([]byte(a.body))
			})
			d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerShelly, URL: dev.URL, Relay: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.(Meter).Watts(context.Background())
			checkReading(t, got, err, tt.want, tt.wantErr, tt.noMeter)
			if reqs := dev.requests(); strings.Join(reqs, ",") != strings.Join(tt.wantReqs, ",") {
				t.Errorf("requests %q, want %q", reqs, tt.wantReqs)
			}
		})
	}
}

// checkReading wants a meter's reading to be want, or its error to hold
// wantErr (see checkErr) and to wrap ErrNoMeter when noMeter.
func checkReading(t *testing.T, got float64, err error, want float64, wantErr string, noMeter bool) {
	t.Helper()
	checkErr(t, err, wantErr)
	if err == nil && got != want {
		t.Errorf("Watts = %v, want %v", got, want)
	}
	if errors.Is(err, ErrNoMeter) != noMeter {
		t.Errorf("error %v: ErrNoMeter %v, want %v", err, !noMeter, noMeter)
	}
}

// A Gen1 Shelly's meter, once found, is asked directly: no RPC request a
// second, and the Gen2 meter behind a password is asked with the digest
// answer the relay's switching uses.
func TestShellyMeterAskedDirectly(t *testing.T) {
	dev := newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/meter/0" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(gen1Meter))
	})
	d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerShelly, URL: dev.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := d.(Meter).Watts(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := "GET /rpc/Switch.GetStatus?id=0,GET /meter/0,GET /meter/0,GET /meter/0"
	if got := strings.Join(dev.requests(), ","); got != want {
		t.Errorf("requests %s, want %s", got, want)
	}
}

func TestShellyGen2MeterDigest(t *testing.T) {
	dev := newDigestDevice(t, gen2SwitchStatus)
	d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerShelly, URL: strings.Replace(dev.URL, "http://", "http://admin:s3cret@", 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.(Meter).Watts(context.Background())
	if err != nil || got != 8.9 {
		t.Fatalf("Watts = %v, %v; want 8.9", got, err)
	}
}

// Drivers that switch without measuring are no Meter.
func TestNoMeterDrivers(t *testing.T) {
	for _, spec := range []boards.PowerSpec{
		{Driver: boards.PowerCommand, On: "true", Off: "true"},
		{Driver: boards.PowerPDUDaemon, URL: "http://127.0.0.1:16421", PDU: "bench", Port: 1},
		{Driver: boards.PowerManual},
	} {
		d, err := New("rb1", spec, Terminal(nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.(Meter); ok {
			t.Errorf("%s is a Meter", d)
		}
	}
}
