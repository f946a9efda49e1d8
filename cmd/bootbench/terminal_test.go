package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/internal/testkit/userenv"
	"github.com/bootbench/bootbench/results"
	"golang.org/x/sys/unix"
)

// onTerminal runs bootbench with its standard output on a pseudo-terminal,
// as a user at a terminal runs it, and returns what the terminal got, its
// line ends as the terminal's ONLCR made them put back to "\n".
func onTerminal(t *testing.T, db string, args ...string) string {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	master := os.NewFile(uintptr(fd), "/dev/ptmx")
	defer master.Close()
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := userenv.Command([]string{"BOOTBENCH_DB=" + db}, bootbenchBin, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = slave, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child holds it: the master reads EIO once it exits
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(master); got <- b }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v: %s", args, err, errb.String())
	}
	select {
	case b := <-got:
		return strings.ReplaceAll(string(b), "\r\n", "\n")
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal never closed")
	}
	return ""
}

// TestTranscriptOnTerminal: results show --transcript on a terminal shows
// the control sequences a board sent (SeaBIOS's reset and clear screen,
// a bell, bytes that are not UTF-8) instead of letting the terminal obey
// them; into a pipe the transcript stays byte for byte, and --raw is the
// benchmark's output byte for byte on a terminal too.
func TestTranscriptOnTerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	transcript := "SeaBIOS (version 1.16.2)\r\n\x1bc\x1b[?7l\x1b[2JiPXE\x07 up\r\nprogress 10%\rprogress 99%\r\nbad \xff byte, µs kept\n"
	raw := "\x1b[31mmd5\x1b[0m 1234.5k\n"
	s := openTestStore(t, db)
	r := &results.Run{ID: "20261204-101010-0badc0de", Board: "qemu-x86_64", Status: results.StatusOK, Bench: "speed",
		Started: time.Unix(1764547200, 0), Transcript: []byte(transcript), RawOutput: []byte(raw)}
	if err := s.SaveRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	s.Close()

	screen := onTerminal(t, db, "results", "show", string(r.ID), "--transcript")
	if strings.ContainsAny(screen, "\x1b\x07") {
		t.Errorf("the terminal was sent control bytes:\n%q", screen)
	}
	want := `SeaBIOS (version 1.16.2)
\x1bc\x1b[?7l\x1b[2JiPXE\x07 up
progress 10%\rprogress 99%
bad \xff byte, µs kept
`
	if !strings.HasSuffix(screen, want) {
		t.Errorf("the terminal shows\n%s\nwant it to end\n%s", screen, want)
	}

	piped := bootbench(t, db, "results", "show", string(r.ID), "--transcript")
	if !strings.HasSuffix(piped.stdout, transcript) {
		t.Errorf("into a pipe the transcript is not byte for byte:\n%q", piped.stdout)
	}
	if got := onTerminal(t, db, "results", "show", string(r.ID), "--raw"); got != raw {
		t.Errorf("--raw on a terminal: %q, want %q byte for byte", got, raw)
	}
}
