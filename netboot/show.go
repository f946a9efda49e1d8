package netboot

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Clients choose file names, paths, vendor classes and error texts, and
// events carry them to the operator's terminal, where a NUL or an escape
// sequence would act instead of showing. Events hold them only in a form
// safe to show.

// shown is a client's name as an event carries it: as it is when it is
// plain (printable ASCII, no space, quote or backslash), else quoted in Go
// syntax with everything else escaped. A plain name never starts with a
// quote, so a quoted one cannot pass for it.
func shown(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// shownErr is err with anything a terminal would act on escaped; it still
// unwraps to err.
func shownErr(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if !strings.ContainsFunc(msg, unsafeToShow) && utf8.ValidString(msg) {
		return err
	}
	var b strings.Builder
	for i, r := range msg {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(msg[i:], "\uFFFD"):
			fmt.Fprintf(&b, `\x%02x`, msg[i])
		case unsafeToShow(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return &escapedError{msg: b.String(), err: err}
}

func unsafeToShow(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }

type escapedError struct {
	msg string
	err error
}

func (e *escapedError) Error() string { return e.msg }
func (e *escapedError) Unwrap() error { return e.err }
