// Package pasted reads a serial console log as people save and share it —
// a terminal program's capture, a forum post, a mail — and gives back the
// console's lines as the board sent them, each with its line number in
// the file, so that what reads them (console --replay) sees what a live
// console would have.
//
// What copying does to a log, and what Read undoes:
//
//	line ends      CRLF, LF, or CR alone (a file with no LF at all)
//	characters     "…" for "...", no-break spaces, curly quotes; a BOM;
//	               UTF-16 (a Windows redirect)
//	mail quoting   "> ", ">> ", "> > " before every line of a quoted log
//	timestamps     syslog "Dec  4 10:00:01 host ", OpenWrt's logread
//	               "Mon Aug 31 00:02:23 2026 kern.info kernel: ", ISO
//	               "2024-12-04T10:00:01.123Z ", a terminal logger's
//	               "[12:00:01.123] " or "[2024-12-04 12:00:01] "
//	the end        a last line cut off mid-line (Cut)
//
// Quoting and timestamps are taken off only when most of the log has them,
// so a console's own ">>Start PXE over IPv4." or a line that happens to
// start with a time stays as it is. The console's own stamps (the
// kernel's "[    0.000000] ", a Raspberry Pi bootloader's uptime) are the
// console's, and stay: serialctl's detector reads through them, live or
// replayed.
package pasted

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Line is one console line of a log.
type Line struct {
	N    int    // its line number in the file, from 1
	Text []byte // the console's text, without its line end
}

// Log is a log read back into console lines.
type Log struct {
	Lines []Line
	// Undone says what copying had done to the log that Read undid, one
	// phrase each ("CRLF line ends", "mail quoting \"> \" on 40 lines").
	Undone []string
	// Cut is a log whose last line has no line end: the capture or the
	// paste stopped in the middle of it.
	Cut bool
}

// MaxSize is the largest log Read takes: a console log of a few boots is
// kilobytes; a file this big is something else.
const MaxSize = 64 << 20

// ErrNotText is a file that is no text log: binary, or too big.
var ErrNotText = errors.New("not a text log")

// Read reads a log. A file that is no text log (an image, a compressed
// file, a database) is refused with ErrNotText, saying why.
func Read(r io.Reader) (*Log, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrNotText, MaxSize>>20)
	}
	log := &Log{}
	b = log.decode(b)
	if bad := binaryShare(b); bad > maxBinaryShare {
		return nil, fmt.Errorf("%w: %.0f%% of it is control bytes or invalid UTF-8 (a binary file?)", ErrNotText, 100*bad)
	}
	log.split(b)
	log.fixCharacters()
	log.unquote()
	log.unstamp()
	return log, nil
}

// decode takes off a byte order mark and turns UTF-16 into UTF-8.
func (l *Log) decode(b []byte) []byte {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		return b[3:]
	case len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff):
		l.Undone = append(l.Undone, "UTF-16 text")
		big := b[0] == 0xfe
		u := make([]uint16, 0, len(b)/2)
		for i := 2; i+1 < len(b); i += 2 {
			if big {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			} else {
				u = append(u, uint16(b[i+1])<<8|uint16(b[i]))
			}
		}
		return []byte(string(utf16.Decode(u)))
	}
	return b
}

// maxBinaryShare is the share of bad bytes above which a file is not a
// log. A console at the wrong baud rate for a few lines, or the noise of
// a board powering on, stays far below it; an ELF, an image or a gzip
// file is far above.
const maxBinaryShare = 0.10

// binaryShare is the share of b that no console text has: NUL and other
// control bytes (not tab, line ends, escape, backspace, bell, form feed)
// and bytes that are not UTF-8.
func binaryShare(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			bad++
		case r < 0x20 && !strings.ContainsRune("\t\n\r\x1b\b\a\f\v", r):
			bad++
		}
		i += n
	}
	return float64(bad) / float64(len(b))
}

// split cuts b into lines as a console does: at each LF, with the CRs
// before it taken off; in a file with no LF at all, at each CR.
func (l *Log) split(b []byte) {
	sep := byte('\n')
	switch {
	case bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') >= 0:
		sep = '\r'
		l.Undone = append(l.Undone, "CR line ends")
	case bytes.Count(b, []byte("\r\n")) > bytes.Count(b, []byte("\n"))/2:
		l.Undone = append(l.Undone, "CRLF line ends")
	}
	if len(b) > 0 && b[len(b)-1] != sep {
		l.Cut = true
	} else if len(b) > 0 {
		b = b[:len(b)-1]
	}
	if len(b) == 0 && !l.Cut {
		return
	}
	for i, t := range bytes.Split(b, []byte{sep}) {
		l.Lines = append(l.Lines, Line{N: i + 1, Text: bytes.TrimRight(t, "\r")})
	}
}

// typography are the characters a forum, a word processor or a mail
// program puts in for what a console printed.
var typography = strings.NewReplacer("…", "...", "\u00a0", " ", "‘", "'", "’", "'", "“", `"`, "”", `"`)

func (l *Log) fixCharacters() {
	n := 0
	for i, ln := range l.Lines {
		if t := typography.Replace(string(ln.Text)); t != string(ln.Text) {
			l.Lines[i].Text = []byte(t)
			n++
		}
	}
	if n > 0 {
		l.Undone = append(l.Undone, fmt.Sprintf("typographic characters (\"…\" for \"...\") on %s", lines(n)))
	}
}

func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// quoteMarks is a line's mail quoting: "> ", "> > ", ">> ", or the marks
// alone on a quoted blank line. A mail program puts a blank after the
// marks; a console line that starts with ">" (">>Start PXE over IPv4.")
// has none, and is not quoted.
var quoteMarks = regexp.MustCompile(`^(?:[ \t]*>)+(?:[ \t]|$)`)

// quoteDepth is how many quoting marks a line starts with.
func quoteDepth(t []byte) int {
	return bytes.Count(quoteMarks.Find(t), []byte(">"))
}

// unquote takes a mail's quoting off a quoted log: when at least three
// lines and 30 % of the lines that are not blank are quoted, the quoting
// most of them have (one "> " for a reply, two for a reply to a reply)
// comes off every line that has that much. A console's own lines that
// start with ">" keep what is left of theirs, and the replier's own words
// around the log stay.
func (l *Log) unquote() {
	quoted, text := 0, 0
	byDepth := map[int]int{}
	for _, ln := range l.Lines {
		if len(bytes.TrimSpace(ln.Text)) == 0 {
			continue
		}
		text++
		if d := quoteDepth(ln.Text); d > 0 {
			quoted++
			byDepth[d]++
		}
	}
	if quoted < 3 || quoted*10 < text*3 {
		return
	}
	depth := 0
	for d, n := range byDepth {
		if depth == 0 || n > byDepth[depth] || n == byDepth[depth] && d < depth {
			depth = d
		}
	}
	n := 0
	for i, ln := range l.Lines {
		if quoteDepth(ln.Text) >= depth {
			l.Lines[i].Text = dropMarks(ln.Text, depth)
			n++
		}
	}
	l.Undone = append(l.Undone, fmt.Sprintf("mail quoting %q on %s", strings.Repeat(">", depth)+" ", lines(n)))
}

// dropMarks takes n quoting marks off t, each with the blanks before it
// and one blank after it: "> >>Start PXE" less one mark is ">>Start PXE".
func dropMarks(t []byte, n int) []byte {
	for ; n > 0; n-- {
		t = bytes.TrimLeft(t, " \t")
		if len(t) == 0 || t[0] != '>' {
			break
		}
		t = t[1:]
		if len(t) > 0 && (t[0] == ' ' || t[0] == '\t') {
			t = t[1:]
		}
	}
	return t
}

// A stampFormat is a timestamp a logger or a mail puts before each line.
type stampFormat struct {
	name string
	re   *regexp.Regexp
	// sender: after the stamp may come words the same on every line
	// (syslog's host and tag, "bench1 kernel:"), taken off with it.
	sender bool
}

const (
	months = `(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)`
	hms    = `\d\d:\d\d:\d\d(?:[.,]\d+)?`
	ymd    = `\d{4}-\d\d-\d\d`
)

var stampFormats = []stampFormat{
	{"syslog timestamps", regexp.MustCompile(`^` + months + ` [ \d]\d ` + hms + ` `), true},
	{"logread timestamps", regexp.MustCompile(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ` + months + ` [ \d]\d ` + hms + ` \d{4} [a-z]+\.[a-z]+ [^\s:]+(?:\[\d+\])?: `), false},
	{"ISO timestamps", regexp.MustCompile(`^` + ymd + `[T ]` + hms + `(?:Z|[+-]\d\d:?\d\d)?:? `), false},
	{"terminal logger timestamps", regexp.MustCompile(`^\[(?:` + ymd + `[T ])?` + hms + `\] ?`), false},
}

// unstamp takes off the timestamp format at least half of the lines that
// are not blank start with, where a line has it.
func (l *Log) unstamp() {
	text := 0
	for _, ln := range l.Lines {
		if len(bytes.TrimSpace(ln.Text)) > 0 {
			text++
		}
	}
	for _, f := range stampFormats {
		var stamped []int
		for i, ln := range l.Lines {
			if f.re.Match(ln.Text) {
				stamped = append(stamped, i)
			}
		}
		if len(stamped) == 0 || len(stamped)*2 < text {
			continue
		}
		for _, i := range stamped {
			l.Lines[i].Text = l.Lines[i].Text[len(f.re.Find(l.Lines[i].Text)):]
		}
		what := f.name
		if f.sender {
			if s := l.dropSender(stamped); s != "" {
				what += " and " + s
			}
		}
		l.Undone = append(l.Undone, fmt.Sprintf("%s on %s", what, lines(len(stamped))))
		return
	}
}

// dropSender takes off the words after a syslog stamp that are the same
// on at least 80 % of the stamped lines — the host, then the tag
// ("bench1", "kernel:") — and says which it took off.
func (l *Log) dropSender(stamped []int) string {
	var took []string
	for range 2 {
		count := map[string]int{}
		for _, i := range stamped {
			count[firstWord(l.Lines[i].Text)]++
		}
		word, most := "", 0
		for w, c := range count {
			if c > most || c == most && w < word {
				word, most = w, c
			}
		}
		if word == "" || strings.HasPrefix(word, "[") || most*5 < len(stamped)*4 {
			break
		}
		for _, i := range stamped {
			if firstWord(l.Lines[i].Text) == word {
				l.Lines[i].Text = bytes.TrimLeft(l.Lines[i].Text[len(word):], " ")
			}
		}
		took = append(took, word)
	}
	if len(took) == 0 {
		return ""
	}
	return fmt.Sprintf("%q", strings.Join(took, " "))
}

func firstWord(t []byte) string {
	if i := bytes.IndexByte(t, ' '); i >= 0 {
		return string(t[:i])
	}
	return string(t)
}
