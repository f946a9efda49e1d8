package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// writeForTerminal writes what a board sent so that a terminal shows it
// rather than obeys it: a console carries escape sequences (SeaBIOS resets
// and clears the screen, ESC c ESC[2J) and a board may send any, so every
// byte that is not printable text, a tab or a line end is written as \xNN
// (a lone carriage return as \r). CRLF is a line end. Bytes that are not
// UTF-8 are escaped too.
func writeForTerminal(w io.Writer, b []byte) error {
	var out bytes.Buffer
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\r' && len(b) > 1 && b[1] == '\n':
			// the line end below
		case r == '\n' || r == '\t':
			out.WriteRune(r)
		case r == '\r':
			out.WriteString(`\r`)
		case r == utf8.RuneError && n <= 1, !unicode.IsPrint(r) && r != ' ':
			for _, c := range b[:n] {
				fmt.Fprintf(&out, `\x%02x`, c)
			}
		default:
			out.Write(b[:n])
		}
		b = b[n:]
	}
	_, err := w.Write(out.Bytes())
	return err
}
