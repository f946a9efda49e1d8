package pasted

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// show is a log as "N: text" lines, with what was undone and whether it
// was cut, for comparing.
func show(l *Log) string {
	var b strings.Builder
	for _, ln := range l.Lines {
		fmt.Fprintf(&b, "%d: %s\n", ln.N, ln.Text)
	}
	fmt.Fprintf(&b, "undone: %s\ncut: %v\n", strings.Join(l.Undone, "; "), l.Cut)
	return b.String()
}

func TestRead(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"LF", "RouterBOOT booter 2.41\nCPU frequency: 680 MHz\n",
			"1: RouterBOOT booter 2.41\n2: CPU frequency: 680 MHz\nundone: \ncut: false\n"},
		{"CRLF, and a double CR", "CFE version 1.0.37\r\n\r\nCPU type 0x29007: 200MHz\r\r\n",
			"1: CFE version 1.0.37\n2: \n3: CPU type 0x29007: 200MHz\nundone: CRLF line ends\ncut: false\n"},
		{"CR alone", "U-Boot 1.1.4\rar7240> \r",
			"1: U-Boot 1.1.4\n2: ar7240> \nundone: CR line ends\ncut: false\n"},
		{"a CR inside a line stays (the console's own)", "Press Ctrl-B...\r    \r\nnext\n",
			"1: Press Ctrl-B...\r    \n2: next\nundone: \ncut: false\n"},
		{"cut", "trying bootp protocol...\ntransfer started ....",
			"1: trying bootp protocol...\n2: transfer started ....\nundone: \ncut: true\n"},
		{"typography", "trying bootp protocol… failed\nFilename ‘uImage’.\nok\u00a0done\n",
			"1: trying bootp protocol... failed\n2: Filename 'uImage'.\n3: ok done\nundone: typographic characters (\"…\" for \"...\") on 3 lines\ncut: false\n"},
		{"a BOM", "\xef\xbb\xbfCFE version 1.0.37\n", "1: CFE version 1.0.37\nundone: \ncut: false\n"},
		{"mail quoting, the replier's words stay",
			"On Sun, Nov 3, 2013, pant13 wrote:\n> RouterBOOT booter 2.41\n>\n> CPU frequency: 680 MHz\n> trying bootp protocol... failed\n\nAny ideas?\n",
			"1: On Sun, Nov 3, 2013, pant13 wrote:\n2: RouterBOOT booter 2.41\n3: \n4: CPU frequency: 680 MHz\n5: trying bootp protocol... failed\n6: \n7: Any ideas?\n" +
				"undone: mail quoting \"> \" on 4 lines\ncut: false\n"},
		{"a reply to a reply", "> Look:\n>> U-Boot 1.1.4\n>> ar7240> tftpboot\n> > Bytes transferred = 1\n>>\n",
			"1: > Look:\n2: U-Boot 1.1.4\n3: ar7240> tftpboot\n4: Bytes transferred = 1\n5: \nundone: mail quoting \">> \" on 4 lines\ncut: false\n"},
		{"a quoted console line that starts with >", "> SeaBIOS (version 1.16)\n> >>Start PXE over IPv4.\n> PXE-E18: Server response timeout.\n",
			"1: SeaBIOS (version 1.16)\n2: >>Start PXE over IPv4.\n3: PXE-E18: Server response timeout.\nundone: mail quoting \"> \" on 3 lines\ncut: false\n"},
		{"a console's own > lines are no quoting",
			"BdsDxe: loading Boot0001\n>>Start PXE over IPv4.\n  Station IP address is 198.18.0.10\n>>Start PXE over IPv6.\nPXE-E16: No valid offer received.\n>>Start HTTP Boot over IPv4.....\nBdsDxe: failed\nfoo\nbar\nbaz\nqux\n",
			"1: BdsDxe: loading Boot0001\n2: >>Start PXE over IPv4.\n3:   Station IP address is 198.18.0.10\n4: >>Start PXE over IPv6.\n5: PXE-E16: No valid offer received.\n6: >>Start HTTP Boot over IPv4.....\n7: BdsDxe: failed\n8: foo\n9: bar\n10: baz\n11: qux\nundone: \ncut: false\n"},
		{"a short console of > lines", ">>Start PXE over IPv4.\n>>Start PXE over IPv6.\n>>Start HTTP Boot over IPv4.\n",
			"1: >>Start PXE over IPv4.\n2: >>Start PXE over IPv6.\n3: >>Start HTTP Boot over IPv4.\nundone: \ncut: false\n"},
		{"syslog with host", "Dec  4 10:00:01 bench1 RouterBOOT booter 2.41\nDec  4 10:00:01 bench1 \nDec  4 10:00:02 bench1 CPU frequency: 680 MHz\n",
			"1: RouterBOOT booter 2.41\n2: \n3: CPU frequency: 680 MHz\nundone: syslog timestamps and \"bench1\" on 3 lines\ncut: false\n"},
		{"syslog without host, kernel lines", "Dec 16 01:17:53 [    0.000000] Linux version 3.3.8\nDec 16 01:17:53 [    0.000000] Calibrating delay loop... 265.42 BogoMIPS (lpj=1327104)\n",
			"1: [    0.000000] Linux version 3.3.8\n2: [    0.000000] Calibrating delay loop... 265.42 BogoMIPS (lpj=1327104)\nundone: syslog timestamps on 2 lines\ncut: false\n"},
		{"journalctl -k", "Dec 04 10:00:01 pi4 kernel: Linux version 6.6.31\nDec 04 10:00:01 pi4 kernel: Machine model: Raspberry Pi 4\n",
			"1: Linux version 6.6.31\n2: Machine model: Raspberry Pi 4\nundone: syslog timestamps and \"pi4 kernel:\" on 2 lines\ncut: false\n"},
		{"logread", "Mon Aug 31 00:02:23 2026 kern.info kernel: [    0.000000] CPU clock: 400.000 MHz\nMon Aug 31 00:02:23 2026 kern.warn kernel: [    0.008112] Calibrating delay loop... 265.42 BogoMIPS\n",
			"1: [    0.000000] CPU clock: 400.000 MHz\n2: [    0.008112] Calibrating delay loop... 265.42 BogoMIPS\nundone: logread timestamps on 2 lines\ncut: false\n"},
		{"ISO", "2024-12-04T10:00:01.123Z CFE version 1.0.37\n2024-12-04 10:00:01,500 CPU type 0x29007: 200MHz\n",
			"1: CFE version 1.0.37\n2: CPU type 0x29007: 200MHz\nundone: ISO timestamps on 2 lines\ncut: false\n"},
		{"terminal logger", "[12:00:01.123] U-Boot 1.1.4 (Sep  3 2010 - 12:28:13)\n[12:00:01.124] \n[2024-12-04 12:00:02] ar7240> \n",
			"1: U-Boot 1.1.4 (Sep  3 2010 - 12:28:13)\n2: \n3: ar7240> \nundone: terminal logger timestamps on 3 lines\ncut: false\n"},
		{"a kernel timestamp is the console's", "[    0.000000] Linux version 6.1.0\n[    1.550410] Kernel panic - not syncing: VFS\n",
			"1: [    0.000000] Linux version 6.1.0\n2: [    1.550410] Kernel panic - not syncing: VFS\nundone: \ncut: false\n"},
		{"a Pi bootloader's uptime is the console's", "  2.12 RPi: BOOTLOADER release VERSION:5f18ffb6 DATE: 2024/07/30\n  7.14 NETWORK: d8:3a:dd:e4:c9:f0 wait for link TFTP: 0.0.0.0\n",
			"1:   2.12 RPi: BOOTLOADER release VERSION:5f18ffb6 DATE: 2024/07/30\n2:   7.14 NETWORK: d8:3a:dd:e4:c9:f0 wait for link TFTP: 0.0.0.0\nundone: \ncut: false\n"},
		{"a few lines starting with a time stay", "CFE version 1.0.37\n10:00:01 is when it stopped\nCPU type 0x29007: 200MHz\nDevice eth0\n",
			"1: CFE version 1.0.37\n2: 10:00:01 is when it stopped\n3: CPU type 0x29007: 200MHz\n4: Device eth0\nundone: \ncut: false\n"},
		{"quoted and stamped, CRLF", "> Dec  4 10:00:01 bench1 RouterBOOT booter 2.41\r\n> Dec  4 10:00:01 bench1 CPU frequency: 680 MHz\r\n> Dec  4 10:00:02 bench1 trying bootp protocol… OK\r\n",
			"1: RouterBOOT booter 2.41\n2: CPU frequency: 680 MHz\n3: trying bootp protocol... OK\nundone: CRLF line ends; typographic characters (\"…\" for \"...\") on 1 line; mail quoting \"> \" on 3 lines; syslog timestamps and \"bench1\" on 3 lines\ncut: false\n"},
		{"empty", "", "undone: \ncut: false\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := Read(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := show(l); got != tt.want {
				t.Errorf("got:\n%swant:\n%s", got, tt.want)
			}
		})
	}
}

func TestReadUTF16(t *testing.T) {
	for _, bom := range [][]byte{{0xff, 0xfe}, {0xfe, 0xff}} {
		in := append([]byte(nil), bom...)
		for _, r := range "CFE version 1.0.37\r\nCPU type 0x29007: 200MHz\r\n" {
			if bom[0] == 0xff {
				in = append(in, byte(r), 0)
			} else {
				in = append(in, 0, byte(r))
			}
		}
		l, err := Read(bytes.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		want := "1: CFE version 1.0.37\n2: CPU type 0x29007: 200MHz\nundone: UTF-16 text; CRLF line ends\ncut: false\n"
		if got := show(l); got != want {
			t.Errorf("BOM % x: got:\n%swant:\n%s", bom, got, want)
		}
	}
}

// TestReadNotText: what is no log is refused; a log with some line noise
// is not.
func TestReadNotText(t *testing.T) {
	elf := append([]byte("\x7fELF\x01\x01\x01\x00"), make([]byte, 200)...)
	gzip := []byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcb\x48\xcd\xc9\xc9\x57\x28\xcf\x2f\xca\x49\xe1\x02\x00\x2d\x3b\x08\xaf\x0c\x00\x00\x00")
	for name, in := range map[string][]byte{"ELF": elf, "gzip": gzip} {
		if _, err := Read(bytes.NewReader(in)); !errors.Is(err, ErrNotText) {
			t.Errorf("%s: err = %v, want ErrNotText", name, err)
		}
	}
	noisy := []byte(strings.Repeat("U-Boot 1.1.4 (Sep  3 2010 - 12:28:13)\n", 20) + "\x00\xff\xfe garbage at the wrong baud \x80\x81\n")
	if _, err := Read(bytes.NewReader(noisy)); err != nil {
		t.Errorf("a log with some noise: %v", err)
	}
	if _, err := Read(bytes.NewReader(make([]byte, MaxSize+1))); !errors.Is(err, ErrNotText) {
		t.Errorf("a huge file: err = %v, want ErrNotText", err)
	}
}

// TestReadTranscripts: the console transcripts serialctl is tested on,
// byte-exact or as published, read back line for line: nothing in a
// console's own text is taken for quoting or a logger's timestamp.
func TestReadTranscripts(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.txt")
	if len(files) < 10 {
		t.Fatalf("only %d transcripts", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, u := range l.Undone {
			if u != "CRLF line ends" && !strings.HasPrefix(u, "typographic characters") {
				t.Errorf("%s: undid %q", f, u)
			}
		}
		want := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
		if len(l.Lines) != len(want) {
			t.Errorf("%s: %d lines, want %d", f, len(l.Lines), len(want))
			continue
		}
		for i, ln := range l.Lines {
			w := typography.Replace(string(bytes.TrimRight(want[i], "\r")))
			if ln.N != i+1 || string(ln.Text) != w {
				t.Errorf("%s: line %d = %d %q, want %q", f, i+1, ln.N, ln.Text, w)
				break
			}
		}
	}
}
