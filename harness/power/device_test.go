package power

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
)

// exchange is one request a driver must make and the device's answer.
type exchange struct {
	name    string
	spec    boards.PowerSpec // URL: "{url}" stands for the device's address
	call    string           // "on" or "off"
	wantReq string           // method and request URI, exactly
	status  int
	body    string
	wantErr string // a part of the error; "" for success
}

// device answers as a switch does and notes each request it got.
type fakeDevice struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newFakeDevice(t *testing.T, answer http.HandlerFunc) *fakeDevice {
	d := &fakeDevice{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.reqs = append(d.reqs, r)
		d.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *fakeDevice) requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var s []string
	for _, r := range d.reqs {
		s = append(s, r.Method+" "+r.URL.RequestURI())
	}
	return s
}

func withURL(spec boards.PowerSpec, base string) boards.PowerSpec {
	spec.URL = strings.Replace(spec.URL, "{url}", base, 1)
	spec.URL = strings.Replace(spec.URL, "http://admin:s3cret@{host}", "http://admin:s3cret@"+strings.TrimPrefix(base, "http://"), 1)
	return spec
}

func switchIt(ctx context.Context, d Driver, call string) error {
	if call == "off" {
		return d.Off(ctx)
	}
	return d.On(ctx)
}

func runExchanges(t *testing.T, tests []exchange, check func(t *testing.T, r *http.Request)) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dev := newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) {
				if check != nil {
					check(t, r)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			d, err := New("rb1", withURL(tt.spec, dev.URL), nil)
			if err != nil {
				t.Fatal(err)
			}
			err = switchIt(context.Background(), d, tt.call)
			if got := dev.requests(); len(got) != 1 || got[0] != tt.wantReq {
				t.Errorf("requests %q, want [%q]", got, tt.wantReq)
			}
			checkErr(t, err, tt.wantErr)
		})
	}
}

// checkErr wants err to hold wantErr ("" for none), to name the board, and
// never to show the password.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("error: %v", err)
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("error %v, want one with %q", err, wantErr)
	case err != nil && (strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "rb1")):
		t.Errorf("error %q shows the password or does not name the board", err)
	}
}

func TestTasmota(t *testing.T) {
	spec := func(url string, relay int) boards.PowerSpec {
		return boards.PowerSpec{Driver: boards.PowerTasmota, URL: url, Relay: relay}
	}
	const creds = "http://admin:s3cret@{host}"
	tests := []exchange{
		{"single relay answers POWER", spec("{url}", 0), "on", "GET /cm?cmnd=Power1%20On", 200, `{"POWER":"ON"}`, ""},
		{"relay 2 of a power strip", spec("{url}", 2), "off", "GET /cm?cmnd=Power2%20Off", 200, `{"POWER2":"OFF"}`, ""},
		{"behind a path", spec("{url}/plug7/", 1), "on", "GET /plug7/cm?cmnd=Power1%20On", 200, `{"POWER1":"ON"}`, ""},
		{"web password as parameters", spec(creds, 1), "on", "GET /cm?user=admin&password=s3cret&cmnd=Power1%20On", 200, `{"POWER1":"ON"}`, ""},
		{"relay did not switch", spec(creds, 1), "on", "GET /cm?user=admin&password=s3cret&cmnd=Power1%20On", 200, `{"POWER1":"OFF"}`, "relay 1 is OFF, not ON"},
		{"relay 2 is not relay 1", spec("{url}", 2), "on", "GET /cm?cmnd=Power2%20On", 200, `{"POWER":"ON"}`, "does not say relay 2's state"},
		{"password needed", spec("{url}", 1), "on", "GET /cm?cmnd=Power1%20On", 200, `{"WARNING":"Need user=<username>&password=<password>"}`, "http://admin:PASSWORD@host"},
		{"no such relay", spec("{url}", 3), "off", "GET /cm?cmnd=Power3%20Off", 200, `{"Command":"Unknown"}`, "has no relay 3"},
		{"server error", spec(creds, 1), "on", "GET /cm?user=admin&password=s3cret&cmnd=Power1%20On", 500, "oops", "500 Internal Server Error: oops"},
		{"not Tasmota", spec("{url}", 1), "on", "GET /cm?cmnd=Power1%20On", 200, "<html>router login</html>", "not Tasmota's JSON"},
	}
	runExchanges(t, tests, func(t *testing.T, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("Tasmota got an Authorization header; it takes user and password as parameters")
		}
	})
}

var (
	gen1On  = `{"ison":true,"has_timer":false,"timer_started":0,"timer_duration":0,"timer_remaining":0,"overpower":false,"source":"http"}`
	gen1Off = `{"ison":false,"has_timer":false,"timer_started":0,"timer_duration":0,"timer_remaining":0,"overpower":false,"source":"http"}`
	gen2Off = `{"ison":false,"has_timer":false,"timer_started_at":0,"timer_duration":0,"timer_remaining":0,"source":"http"}`
)

func TestShelly(t *testing.T) {
	spec := func(url string, relay int) boards.PowerSpec {
		return boards.PowerSpec{Driver: boards.PowerShelly, URL: url, Relay: relay}
	}
	tests := []exchange{
		{"gen1 relay 0 on", spec("{url}", 0), "on", "GET /relay/0?turn=on", 200, gen1On, ""},
		{"gen2 relay 1 off", spec("{url}", 1), "off", "GET /relay/1?turn=off", 200, gen2Off, ""},
		{"relay stayed off", spec("{url}", 0), "on", "GET /relay/0?turn=on", 200, gen1Off, "still off"},
		{"no such relay", spec("{url}", 4), "on", "GET /relay/4?turn=on", 404, "Not Found", "has no relay 4"},
		{"password needed", spec("{url}", 0), "on", "GET /relay/0?turn=on", 401, "401 Unauthorized", "http://admin:PASSWORD@host"},
		{"server error", spec("{url}", 0), "off", "GET /relay/0?turn=off", 500, "Internal error", "500 Internal Server Error: Internal error"},
		{"not a relay answer", spec("{url}", 0), "on", "GET /relay/0?turn=on", 200, `{"ok":true}`, "does not say whether the relay is on"},
	}
	runExchanges(t, tests, nil)
}

// A Gen1 Shelly with a password takes basic authentication.
func TestShellyGen1Password(t *testing.T) {
	for _, tt := range []struct{ pass, wantErr string }{{"s3cret", ""}, {"wrong", "refused the url's user and password"}} {
		dev := newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="shelly1-34945470A1B2"`)
				http.Error(w, "401 Unauthorized", http.StatusUnauthorized)
				return
			}
			w.Write([]byte(gen1On))
		})
		url := strings.Replace(dev.URL, "http://", "http://admin:"+tt.pass+"@", 1)
		d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerShelly, URL: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = d.On(context.Background())
		checkErr(t, err, tt.wantErr)
		if err != nil && strings.Contains(err.Error(), tt.pass) {
			t.Errorf("error %q shows the password", err)
		}
	}
}

// A Gen2+ Shelly with a password challenges for SHA-256 digest
// authentication; the device checks the answer as RFC 7616 says.
func TestShellyGen2Digest(t *testing.T) {
	dev := newDigestDevice(t, gen2Off)
	d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerShelly, URL: strings.Replace(dev.URL, "http://", "http://admin:s3cret@", 1), Relay: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Off(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dev.requests(); len(got) != 2 || got[1] != "GET /relay/0?turn=off" {
		t.Errorf("requests %q, want a challenged one and its digest-authenticated retry", got)
	}
}

// newDigestDevice is a Gen2+ Shelly whose password is s3cret: it answers
// body to a request with the right digest, and challenges any other.
func newDigestDevice(t *testing.T, body string) *fakeDevice {
	const realm, nonce = "shellyplus1pm-a8032ab12345", "6cf39a2e"
	return newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) {
		if !validDigest(r, "admin", "s3cret", realm, nonce) {
			w.Header().Set("WWW-Authenticate", `Digest qop="auth", realm="`+realm+`", nonce="`+nonce+`", algorithm=SHA-256`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(body))
	})
}

func TestHTTPUnreachable(t *testing.T) {
	dev := httptest.NewServer(http.NotFoundHandler())
	addr := strings.TrimPrefix(dev.URL, "http://")
	dev.Close() // nothing listens there now
	for _, spec := range []boards.PowerSpec{
		{Driver: boards.PowerTasmota, URL: "http://admin:s3cret@" + addr},
		{Driver: boards.PowerShelly, URL: "http://admin:s3cret@" + addr},
		{Driver: boards.PowerPDUDaemon, URL: "http://admin:s3cret@" + addr, PDU: "bench", Port: 1},
	} {
		t.Run(string(spec.Driver), func(t *testing.T) {
			d, err := New("rb1", spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = d.On(context.Background())
			checkErr(t, err, "cannot reach http://"+addr)
			if err != nil && !strings.Contains(err.Error(), "check url in bench.yaml") {
				t.Errorf("error %q does not say what to check", err)
			}
		})
	}
}

// A device that accepts the connection and never answers: the driver gives
// up after its timeout, or at once when the caller cancels.
func TestHTTPSilentDevice(t *testing.T) {
	release := make(chan struct{})
	dev := newFakeDevice(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)

	d, err := New("rb1", boards.PowerSpec{Driver: boards.PowerShelly, URL: dev.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.(*shelly).dev.timeout = 200 * time.Millisecond
	checkErr(t, d.On(context.Background()), "no answer from "+dev.URL+" within 200ms")

	d, err = New("rb1", boards.PowerSpec{Driver: boards.PowerTasmota, URL: dev.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := d.On(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("On: %v, want the caller's deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("On took %s after its context ended", took)
	}
}
