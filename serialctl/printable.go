package serialctl

import (
	"regexp"
	"strings"
)

// ansiRE matches the terminal control sequences firmware paints its screen
// with (SeaBIOS and iPXE send colours, cursor moves and "\b \b" spinners).
var ansiRE = regexp.MustCompile(`\x1b(\[[0-?]*[ -/]*[@-~]|[@-Z\\-_]|c)`)

// Printable returns a console line as a person would read it: control
// sequences dropped, backspaces applied, other control bytes removed.
func Printable(line []byte) string {
	s := ansiRE.ReplaceAllString(string(line), "")
	var b []rune
	for _, r := range s {
		switch {
		case r == '\b':
			if len(b) > 0 {
				b = b[:len(b)-1]
			}
		case r == '\t':
			b = append(b, ' ')
		case r < 0x20 || r == 0x7f:
		default:
			b = append(b, r)
		}
	}
	return strings.TrimSpace(string(b))
}
