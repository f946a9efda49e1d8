package power

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// HTTPTimeout is how long a smart plug or relay may take to answer.
const HTTPTimeout = 10 * time.Second

// device is an HTTP-controlled switch at a base URL.
type device struct {
	base    *url.URL // with any credentials: net/http sends them as basic auth
	client  *http.Client
	timeout time.Duration // per request
}

// parseDeviceURL checks an inventory's url.
func parseDeviceURL(board, driver, raw string) (*url.URL, error) {
	if raw == "" {
		return nil, fmt.Errorf("power for %s: driver %s needs a url (the device's http:// address)", board, driver)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// url.Parse's error would quote the raw URL, password and all.
		return nil, fmt.Errorf("power for %s: driver %s: url %s is not an http:// or https:// address", board, driver, redact(u, raw))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// newDevice talks to base directly, never through the environment's
// proxy (bench devices are on the bench's own network), and closes each
// connection after its request: an ESP8266 serves few at a time, and an
// idle pooled connection would outlive the call.
func newDevice(base *url.URL, timeout time.Duration) device {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DisableKeepAlives = true
	return device{base: base, client: &http.Client{Transport: tr}, timeout: timeout}
}

// where names the device for messages: no credentials, no query.
func (d device) where() string {
	u := *d.base
	u.User = nil
	return u.String()
}

// redact shows an unparsable URL without what looks like a password.
func redact(u *url.URL, raw string) string {
	if u != nil {
		c := *u
		c.User = nil
		return c.String()
	}
	if at := strings.LastIndex(raw, "@"); at >= 0 {
		return "…" + raw[at:]
	}
	return raw
}

// answer is what a device said.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// get asks the device for path?query and reads its answer (up to 64 KiB).
// auth, when set, adds an Authorization header.
func (d device) get(ctx context.Context, path, rawQuery, auth string) (answer, error) {
	u := *d.base
	u.Path += path
	u.RawQuery = rawQuery
	reqCtx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, u.String(), nil)
	if err != nil {
		return answer{}, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return answer{}, d.explain(ctx, reqCtx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return answer{}, d.explain(ctx, reqCtx, err)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// explain turns a failed request into an error that names the device
// without its credentials (net/http's own names the whole URL, query and
// all) and says what to check.
func (d device) explain(ctx, reqCtx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	var nerr net.Error
	if reqCtx.Err() != nil || (errors.As(err, &nerr) && nerr.Timeout()) {
		return fmt.Errorf("no answer from %s within %s (is it powered and on the network? check url in bench.yaml)", d.where(), d.timeout)
	}
	return fmt.Errorf("cannot reach %s: %w (is it powered and on the network? check url in bench.yaml)", d.where(), err)
}

// firstLine is the start of a body, for an error message.
func firstLine(body []byte) string {
	s := strings.TrimSpace(string(body))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

func (a answer) statusText() string {
	return strings.TrimSpace(fmt.Sprintf("%d %s", a.status, http.StatusText(a.status)))
}
