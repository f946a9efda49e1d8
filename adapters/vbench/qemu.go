package vbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Machine is how QEMU is started for one virtual board model.
type Machine struct {
	Binary string   // qemu-system-x86_64
	Args   []string // machine, CPU, firmware, NIC model: everything board-specific
	NIC    string   // -device model for the tap, e.g. "virtio-net-pci"
	// PortNIC is the -device model for Ports, when not NIC.
	PortNIC string
	MAC     net.HardwareAddr
	Memory  int // MiB
	// Icount, when >= 0, runs the guest on a virtual clock
	// (-icount shift=N,sleep=off): each step halves its speed,
	// deterministically. This is how virtual boards offer clock settings.
	Icount int
	// IdleInRealTime lets the virtual clock pass idle time as the host's
	// clock does (-icount sleep=on) rather than skip it: a board that
	// waits for traffic the host sends in real time (the route
	// benchmark) would otherwise see a second of mostly idle waiting as
	// many seconds of its own clock, and its CPU's busy fraction shrink
	// toward nothing however loaded it is.
	IdleInRealTime bool
	// SeaBIOSSerial redirects SeaBIOS's and iPXE's text console to the
	// first serial port, so the transcript shows the whole boot.
	SeaBIOSSerial bool
	// Kernel, Initrd and Append boot the guest directly, without firmware
	// or network (QEMU's -kernel, -initrd, -append).
	Kernel, Initrd, Append string
	// UBootEnv, when set, is the environment U-Boot finds in the second
	// flash bank (name=value entries).
	UBootEnv []string
	// Serial, when set, is a tty the guest's first UART is attached to
	// (its board's line, see uart); otherwise QEMU makes a pty of its own.
	Serial string
	// Ports are NICs beyond the boot NIC, each on a tap of its own in a
	// namespace of its own (the route benchmark's two networks).
	Ports []Port
	// Pflash are flash images, in order: the first mapped read-only (a
	// firmware's code), the others copied into the boot's directory (its
	// variables, which the firmware writes).
	Pflash []string
}

// Port is a NIC of the board on a tap in a namespace. QEMU gets the tap
// already open (-netdev tap,fd=), since it runs in the boot network's
// namespace, where the tap's name means nothing. The tap is opened
// without IFF_VNET_HDR, so QEMU (which probes the fd) offers the guest no
// offloads: every frame crosses the tap as a wire carries it, at its own
// size.
type Port struct {
	Netns, Tap string
	MAC        net.HardwareAddr
}

// QEMU is a running virtual board.
type QEMU struct {
	PTY     string // the board's serial console
	cmd     *exec.Cmd
	monitor string
	stderr  *lockedBuffer
	exited  chan struct{}
	waitErr error
}

var ptyRE = regexp.MustCompile(`char device redirected to (/dev/pts/\d+) \(label serial0\)`)

// Start boots m, on n's tap or with no network when n is nil, paused: the
// guest runs only after Continue, so that the console can be opened before
// the first byte is sent (QEMU drops what a pty nobody has opened receives).
// dir holds the monitor socket and firmware files; it must exist.
func Start(ctx context.Context, n *Net, m Machine, dir string) (*QEMU, error) {
	if _, err := exec.LookPath(m.Binary); err != nil {
		return nil, fmt.Errorf("%s not found (Debian package qemu-system-x86 or qemu-system-arm): %w", m.Binary, err)
	}
	q := &QEMU{monitor: filepath.Join(dir, "monitor.sock"), stderr: &lockedBuffer{}, exited: make(chan struct{})}
	files, err := m.fileArgs(dir)
	if err != nil {
		return nil, err
	}
	nics, portFiles, err := m.nicArgs(n)
	defer func() {
		for _, f := range portFiles {
			f.Close() // QEMU has its own copies
		}
	}()
	if err != nil {
		return nil, err
	}
	args := append(append(append(m.coreArgs(q.monitor), files...), nics...), m.Args...)
	args = append([]string{m.Binary}, args...)
	if n != nil {
		// QEMU opens the tap by name, so it must run in the namespace.
		args = append([]string{"ip", "netns", "exec", n.Name}, args...)
	}
	ptyc, err := q.launch(args, portFiles)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", m.Binary, err)
	}
	if m.Serial != "" {
		q.PTY = m.Serial
		return q, q.waitMonitor(ctx)
	}
	select {
	case q.PTY = <-ptyc:
		return q, nil
	case <-q.exited:
		return nil, fmt.Errorf("%s exited at start: %v: %s", m.Binary, q.waitErr, q.Stderr())
	case <-time.After(30 * time.Second):
		q.Kill()
		return nil, fmt.Errorf("%s gave no serial pty within 30s: %s", m.Binary, q.Stderr())
	case <-ctx.Done():
		q.Kill()
		return nil, ctx.Err()
	}
}

// coreArgs are QEMU's options for the machine itself: accelerator, memory,
// console, monitor, a directly loaded kernel and the virtual clock.
func (m Machine) coreArgs(monitor string) []string {
	args := []string{
		// KVM exists on the benches we test on but hangs; TCG is also what
		// makes -icount clocks deterministic.
		"-accel", "tcg",
		"-m", strconv.Itoa(m.Memory),
		"-display", "none",
		// -no-reboot: a panicking kernel ends QEMU rather than looping.
		// -no-shutdown: a guest that powers off leaves QEMU (and so the
		// pty) open; the last frames a board sends just before powering
		// off would otherwise be lost with the pty's unread input.
		"-no-reboot", "-no-shutdown", "-S",
		"-monitor", "unix:" + monitor + ",server=on,wait=off",
	}
	if m.Serial != "" {
		args = append(args, "-chardev", "serial,id=s0,path="+m.Serial, "-serial", "chardev:s0")
	} else {
		args = append(args, "-serial", "pty")
	}
	if m.SeaBIOSSerial {
		args = append(args, "-vga", "none")
	}
	if m.Kernel != "" {
		args = append(args, "-kernel", m.Kernel, "-append", m.Append)
		if m.Initrd != "" {
			args = append(args, "-initrd", m.Initrd)
		}
	}
	if m.Icount >= 0 {
		sleep := "off"
		if m.IdleInRealTime {
			sleep = "on"
		}
		args = append(args, "-icount", fmt.Sprintf("shift=%d,sleep=%s", m.Icount, sleep))
	}
	return args
}

// fileArgs are QEMU's options for the files a boot gets, made in dir:
// flash banks (firmware, U-Boot's environment) and SeaBIOS's serial port.
func (m Machine) fileArgs(dir string) ([]string, error) {
	var args []string
	for i, f := range m.Pflash {
		opt := "if=pflash,format=raw,readonly=on,file=" + f
		if i > 0 {
			cp := filepath.Join(dir, fmt.Sprintf("pflash%d-%s", i, filepath.Base(f)))
			if err := copyFile(f, cp); err != nil {
				return nil, fmt.Errorf("firmware flash: %w", err)
			}
			opt = "if=pflash,format=raw,file=" + cp
		}
		args = append(args, "-drive", opt)
	}
	if len(m.UBootEnv) > 0 {
		flash := filepath.Join(dir, "uboot-env.img")
		if err := writePflashEnv(flash, m.UBootEnv); err != nil {
			return nil, fmt.Errorf("U-Boot environment: %w", err)
		}
		args = append(args, "-drive", "if=pflash,format=raw,index=1,file="+flash)
	}
	if m.SeaBIOSSerial {
		// SeaBIOS reads etc/sercon-port as a little-endian integer: 0x3f8 is COM1.
		sercon := filepath.Join(dir, "sercon-port")
		if err := os.WriteFile(sercon, []byte{0xf8, 0x03}, 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-fw_cfg", "name=etc/sercon-port,file="+sercon)
	}
	return args, nil
}

// nicArgs are QEMU's options for the boot NIC on n's tap (none without n)
// and the board's further ports, whose taps it opens: QEMU gets them as
// fd 3, 4, ... and the caller closes them once QEMU has started.
func (m Machine) nicArgs(n *Net) ([]string, []*os.File, error) {
	var args []string
	if n != nil {
		args = append(args,
			"-netdev", "tap,id=n0,ifname="+n.Tap+",script=no,downscript=no",
			"-device", m.NIC+",netdev=n0,mac="+m.MAC.String())
	} else {
		args = append(args, "-nic", "none")
	}
	var files []*os.File
	model := m.NIC
	if m.PortNIC != "" {
		model = m.PortNIC
	}
	for i, p := range m.Ports {
		f, err := openTap(p.Netns, p.Tap, 0)
		if err != nil {
			return nil, files, fmt.Errorf("board port %d: %w", i+1, err)
		}
		files = append(files, f)
		id := fmt.Sprintf("p%d", i+1)
		args = append(args,
			"-netdev", fmt.Sprintf("tap,id=%s,fd=%d", id, 3+i),
			"-device", model+",netdev="+id+",mac="+p.MAC.String())
	}
	return args, files, nil
}

// launch starts QEMU as args says, with files as fd 3, 4, ...; what QEMU
// prints goes to q.stderr but for the pty it announces, which comes on the
// channel.
func (q *QEMU) launch(args []string, files []*os.File) (<-chan string, error) {
	q.cmd = exec.Command(args[0], args[1:]...)
	q.cmd.ExtraFiles = files
	// Own process group, so teardown reaches everything QEMU started; and
	// killed with us, so a bootbench killed with SIGKILL leaves no board
	// running.
	q.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// QEMU announces the pty on stdout or stderr depending on its version:
	// read both from one pipe.
	stderr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	q.cmd.Stdout, q.cmd.Stderr = pw, pw
	err = q.cmd.Start()
	pw.Close()
	if err != nil {
		stderr.Close()
		return nil, err
	}
	ptyc := make(chan string, 1)
	go q.readOutput(stderr, ptyc)
	go func() {
		q.waitErr = q.cmd.Wait()
		close(q.exited)
	}()
	return ptyc, nil
}

// readOutput keeps what QEMU prints, but for the pty it announces, which
// goes to ptyc, and a warning that is expected.
func (q *QEMU) readOutput(out io.ReadCloser, ptyc chan<- string) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if mm := ptyRE.FindStringSubmatch(line); mm != nil {
			select {
			case ptyc <- mm[1]:
			default:
			}
			continue
		}
		if strings.Contains(line, "etc/sercon-port") && strings.Contains(line, "warning") {
			continue // SeaBIOS reads this name, not an opt/ one: expected
		}
		q.stderr.Write([]byte(line + "\n"))
	}
	io.Copy(q.stderr, out)
	out.Close()
}

// waitMonitor returns once QEMU's monitor socket is there: QEMU has set
// the machine up and waits to be continued.
func (q *QEMU) waitMonitor(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(q.monitor); err == nil {
			return nil
		}
		select {
		case <-q.exited:
			return fmt.Errorf("QEMU exited at start: %v: %s", q.waitErr, q.Stderr())
		case <-ctx.Done():
			q.Kill()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			q.Kill()
			return fmt.Errorf("QEMU gave no monitor within 30s: %s", q.Stderr())
		}
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

// Continue starts the paused guest.
func (q *QEMU) Continue() error {
	_, err := q.monitorCommand("cont")
	return err
}

// PoweredOff reports whether the guest has shut itself down (QEMU stays
// up with -no-shutdown).
func (q *QEMU) PoweredOff() bool {
	out, err := q.monitorCommand("info status")
	return err == nil && strings.Contains(out, "shutdown")
}

// monitorCommand runs one human monitor command and returns its output.
func (q *QEMU) monitorCommand(command string) (string, error) {
	var conn net.Conn
	var err error
	// The monitor socket appears a moment after the pty message.
	for i := 0; i < 50; i++ {
		if conn, err = net.Dial("unix", q.monitor); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return "", fmt.Errorf("connect to QEMU monitor: %w", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if _, err := readPrompt(r); err != nil {
		return "", fmt.Errorf("QEMU monitor: %w", err)
	}
	if _, err := conn.Write([]byte(command + "\n")); err != nil {
		return "", fmt.Errorf("QEMU monitor: %w", err)
	}
	out, err := readPrompt(r)
	if err != nil {
		return "", fmt.Errorf("QEMU monitor: %s: %w", command, err)
	}
	return out, nil
}

// readPrompt reads up to the monitor's next prompt and returns what came
// before it.
func readPrompt(r *bufio.Reader) (string, error) {
	var seen []byte
	for !bytes.HasSuffix(seen, []byte("(qemu) ")) {
		b, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		seen = append(seen, b)
	}
	return string(seen[:len(seen)-len("(qemu) ")]), nil
}

// Exited is closed when QEMU has exited (the guest powered off, or it was killed).
func (q *QEMU) Exited() <-chan struct{} { return q.exited }

// Stderr is what QEMU printed, for error messages.
func (q *QEMU) Stderr() string { return strings.TrimSpace(q.stderr.String()) }

// Kill stops QEMU and everything in its process group, and waits for it.
func (q *QEMU) Kill() {
	if q.cmd.Process != nil {
		syscall.Kill(-q.cmd.Process.Pid, syscall.SIGKILL)
	}
	select {
	case <-q.exited:
	case <-time.After(10 * time.Second):
	}
}

// Err is QEMU's exit error once Exited is closed.
func (q *QEMU) Err() error {
	select {
	case <-q.exited:
		return q.waitErr
	default:
		return errors.New("still running")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 64<<10 {
		return len(p), nil // keep the head: the first error is the useful one
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
