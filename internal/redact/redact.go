// Package redact hides the credentials a URL can carry — the password of
// user:password@, a password= parameter — in text bootbench prints, logs
// or stores. Inventories name power switches by URL and a store can be a
// postgres:// URL, and either may hold a password: a message that quotes
// one must not hand it to whoever reads a log, a CI job's output or an
// export. Only the standard library, so any package may use it.
//
//	redact.Text(`url "ftp://u:S3cret@pdu/relay" must start with http://`)
//	// url "ftp://u:xxxxx@pdu/relay" must start with http://
package redact

import (
	"io"
	"regexp"
)

// Mask stands where a password was, as net/url's Redacted writes it.
const Mask = "xxxxx"

// userinfo is scheme://user:password@ in any text: the password runs to
// the last '@' before the URL's path, query, fragment or end, so a
// password holding '@' is hidden whole.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:"'<>]*):[^\s/?#"'<>]*@`)

// passwordParam is a password given as a URL parameter (PostgreSQL's
// ?password=).
var passwordParam = regexp.MustCompile(`([?&](?i:password|passwd|pwd)=)[^&\s#"'<>]*`)

// Text is s with every URL's password masked; text without one comes
// back as it was.
func Text(s string) string {
	s = userinfo.ReplaceAllString(s, "${1}:"+Mask+"@")
	return passwordParam.ReplaceAllString(s, "${1}"+Mask)
}

// Has reports whether s holds a password Text would mask.
func Has(s string) bool {
	return Text(s) != s
}

// Writer masks passwords in what is written through it. Each Write is
// masked alone: callers write whole lines.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (m writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(m.w, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
