package harness

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/serialctl"
)

// replayBoard plays a recorded console: it prints a segment, waits until
// what was typed ends with the input the recording names (">>> TEXT": a
// command and Enter; "^C": Ctrl-C), echoes a command as a bootloader does,
// and prints the next segment. Input it does not expect stops it, as a
// bootloader that got the wrong command would not go on.
type replayBoard struct {
	out   *io.PipeReader // the console reads this
	board *io.PipeWriter
	mu    sync.Mutex
	typed bytes.Buffer
	moved chan struct{}
	done  chan error
}

func newReplayBoard(t *testing.T, path string) *replayBoard {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	rb := &replayBoard{out: pr, board: pw, moved: make(chan struct{}, 64), done: make(chan error, 1)}
	go rb.play(strings.Split(strings.TrimRight(string(raw), "\n"), "\n"))
	return rb
}

func (rb *replayBoard) play(lines []string) {
	var seg []string
	flush := func() error {
		_, err := io.WriteString(rb.board, strings.Join(seg, "\r\n"))
		seg = nil
		return err
	}
	for _, l := range lines {
		want, ok := strings.CutPrefix(l, ">>> ")
		if !ok {
			seg = append(seg, l)
			continue
		}
		if err := flush(); err != nil {
			rb.done <- err
			return
		}
		input, echo := want+"\r", want+"\r\n"
		if want == "^C" {
			input, echo = "\x03", "\r\n"
		}
		if err := rb.await(input); err != nil {
			rb.done <- err
			return
		}
		io.WriteString(rb.board, echo)
	}
	rb.done <- flush()
}

// await waits until what was typed so far is exactly input, then forgets it.
func (rb *replayBoard) await(input string) error {
	deadline := time.After(5 * time.Second)
	for {
		rb.mu.Lock()
		got := rb.typed.String()
		if got == input {
			rb.typed.Reset()
			rb.mu.Unlock()
			return nil
		}
		rb.mu.Unlock()
		if len(got) >= len(input) {
			return errors.New("typed " + strings.TrimSpace(got) + ", the recording waits for " + strings.TrimSpace(input))
		}
		select {
		case <-rb.moved:
		case <-deadline:
			return errors.New("nothing typed; the recording waits for " + input)
		}
	}
}

func (rb *replayBoard) Read(p []byte) (int, error) { return rb.out.Read(p) }
func (rb *replayBoard) Write(p []byte) (int, error) {
	rb.mu.Lock()
	rb.typed.Write(p)
	rb.mu.Unlock()
	rb.moved <- struct{}{}
	return len(p), nil
}
func (rb *replayBoard) Close() error { return rb.out.Close() }

// stubBench is a bench at an address, serving nothing.
type stubBench struct{ ip net.IP }

func (b stubBench) Serve(context.Context, *boot.Booter, netboot.Reporter) (func(), error) {
	return func() {}, nil
}
func (b stubBench) ServerIP() net.IP { return b.ip }
func (b stubBench) Mask() net.IPMask { return net.CIDRMask(24, 32) }
func (b stubBench) String() string   { return "stub bench" }

// TestDriveCFE drives the shipped wrt54g-v3 profile's steps against a replayed
// CFE console (a published WRT160N banner, then CFE's prompt and replies as
// its manual gives them): Ctrl-C stops the autoboot, the board takes its
// address by DHCP and boots the one ELF by TFTP from the bench. The
// console's marks say CFE started and handed over.
func TestDriveCFE(t *testing.T) {
	p, err := boards.Get("wrt54g-v3")
	if err != nil {
		t.Fatal(err)
	}
	// The netboot's steps alone: the recording sets no clock in NVRAM
	// (TestFirmwareClock* and the twin's e2e test do).
	p.ClockMethod = ""
	b := boards.Board{Name: "wrt1", Profile: p, MAC: net.HardwareAddr{0, 0x0c, 0x41, 0x12, 0x34, 0x56}, Address: netip.MustParseAddr("198.18.5.30")}
	rb := newReplayBoard(t, "testdata/cfe-replay.txt")
	con := serialctl.New(rb)
	defer con.Close()
	r := &run{o: config{Job: plan.Job{Board: b}, Rig: Rig{Bench: stubBench{net.IPv4(198, 18, 5, 1)}}}, start: time.Now(), rec: &results.Run{ID: "r1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.drive(ctx, con, 0); err != nil {
		t.Fatalf("drive: %v\ntranscript:\n%s", err, con.Transcript())
	}
	if err := <-rb.done; err != nil {
		t.Fatalf("the replayed board: %v", err)
	}
	if _, err := con.Expect(ctx, 0, "Starting program at 0x80001000"); err != nil {
		t.Fatal(err)
	}
	var marks []string
	for _, l := range bytes.Split(con.Transcript(), []byte("\n")) {
		if m, ok := serialctl.Classify(l); ok {
			marks = append(marks, m.Kind.String()+" "+m.Name)
		}
	}
	if got := strings.Join(marks, "; "); !strings.Contains(got, "CFE 1.0.37") || !strings.Contains(got, "CFE") || len(marks) != 2 {
		t.Errorf("marks: %s", got)
	}
}

// TestDriveStepTimesOut: a bootloader that never shows what a step waits
// for fails the boot as a boot timeout naming the step and what came last.
func TestDriveStepTimesOut(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	con := serialctl.New(pr)
	defer con.Close()
	p := boards.Profile{Name: "x", Boot: boards.BootUBootSerial, ConsoleSteps: []boards.ConsoleStep{{Expect: "Hit any key", Timeout: 200 * time.Millisecond}}}
	r := &run{o: config{Job: plan.Job{Board: boards.Board{Name: "u1", Profile: p}}}, start: time.Now(), rec: &results.Run{ID: "r1"}}
	go io.WriteString(pw, "U-Boot 2023.01\r\nautoboot disabled\r\n")
	err := r.drive(context.Background(), con, 0)
	if Kind(err) != FailBootTimeout || !strings.Contains(err.Error(), `step 1: "Hit any key" did not come within 200ms`) || !strings.Contains(err.Error(), "autoboot disabled") {
		t.Errorf("err = %v", err)
	}
	if !Retryable(err) {
		t.Error("a boot whose bootloader never got there is booted again")
	}
}
