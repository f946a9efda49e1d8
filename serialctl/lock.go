package serialctl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/owner"
)

// ErrBusy means another process holds the console.
var ErrBusy = errors.New("serial port in use")

// BusyError names who holds a console, when that can be found out.
type BusyError struct {
	Device  string
	PID     int    // 0 when the holder is not known
	Command string // its command line, from /proc/PID/cmdline
}

func (e *BusyError) Error() string {
	switch {
	case e.PID == 0:
		return fmt.Sprintf("console %s is in use by another program", e.Device)
	case e.Command == "":
		return fmt.Sprintf("console %s is in use by pid %d", e.Device, e.PID)
	}
	return fmt.Sprintf("console %s is in use by pid %d (%s)", e.Device, e.PID, e.Command)
}

func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// portLock keeps a console to one process. TIOCEXCL, which go.bug.st/serial
// sets, does not stop root, so the lock is taken twice over: flock on the
// device node, which every bootbench takes, and a UUCP lock file holding
// our pid, which minicom, picocom and cu honour.
type portLock struct {
	fd   int    // the device, open only to hold the flock
	file string // the lock file; "" when there is no lock directory
}

// lockPort locks device (a device node, symlinks already resolved). dir
// holds the lock file; "" means the system's (/run/lock or /var/lock).
func lockPort(device, dir string) (*portLock, error) {
	// O_NONBLOCK: a real UART's open may otherwise wait for carrier.
	fd, err := unix.Open(device, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.EBUSY): // another process set TIOCEXCL
		return nil, busy(device, lockFilePath(device, dir))
	case err != nil:
		return nil, openError(device, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, busy(device, lockFilePath(device, dir))
		}
		return nil, fmt.Errorf("lock console %s: %w", device, err)
	}
	l := &portLock{fd: fd, file: lockFilePath(device, dir)}
	if l.file != "" {
		if err := createLockFile(device, l.file); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	return l, nil
}

// release removes the lock file, if it is still ours, and drops the flock.
func (l *portLock) release() {
	if l.file != "" {
		if pid, ok := readLockFile(l.file); ok && pid == os.Getpid() {
			os.Remove(l.file)
		}
	}
	unix.Close(l.fd)
}

// lockFilePath is the UUCP lock file for device: LCK..ttyUSB0 for
// /dev/ttyUSB0, LCK..pts_5 for /dev/pts/5.
func lockFilePath(device, dir string) string {
	if dir == "" {
		dir = systemLockDir()
		if dir == "" {
			return ""
		}
	}
	rel, ok := strings.CutPrefix(device, "/dev/")
	if !ok {
		rel = strings.TrimPrefix(device, "/")
	}
	return filepath.Join(dir, "LCK.."+strings.ReplaceAll(rel, "/", "_"))
}

func systemLockDir() string {
	for _, d := range []string{"/run/lock", "/var/lock"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

// createLockFile writes our pid to a temporary file and links it into
// place, so no one ever reads a half-written lock. A lock file whose
// process is gone is stale and replaced.
func createLockFile(device, path string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bootbench-lock-*")
	if err != nil {
		return fmt.Errorf("create lock file for console %s: %w", device, err)
	}
	defer os.Remove(tmp.Name())
	_, err = fmt.Fprintf(tmp, "%10d\n", os.Getpid())
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write lock file for console %s: %w", device, err)
	}
	for range 3 {
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create lock file %s: %w", path, err)
		}
		if held(path) {
			return busy(device, path)
		}
		os.Remove(path) // stale
	}
	return busy(device, path)
}

// held reports whether a lock file belongs to a live process other than
// us (we hold the flock, so a lock naming us is left over). A file that
// cannot be read as a pid counts as held while it is fresh: another
// program may be writing it.
func held(path string) bool {
	pid, ok := readLockFile(path)
	if !ok {
		st, err := os.Stat(path)
		return err == nil && time.Since(st.ModTime()) < 5*time.Second
	}
	return pid != os.Getpid() && alive(pid)
}

// readLockFile reads the pid in a UUCP lock file ("%10d\n").
func readLockFile(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// alive reports whether process pid is there and not a zombie: a
// bootbench killed with SIGKILL whose parent has not reaped it holds no
// port, but kill(2) still finds it.
func alive(pid int) bool { return owner.Alive(pid) }

// busy names the holder of device: the pid in its lock file, else the
// process holding a flock on it, else one that has it open.
func busy(device, lockFile string) error {
	e := &BusyError{Device: device}
	if pid, ok := readLockFile(lockFile); ok && alive(pid) {
		e.PID = pid
	} else if pid := flockHolder(device); pid != 0 {
		e.PID = pid
	} else {
		e.PID = otherOpener(device)
	}
	if e.PID != 0 {
		e.Command = commandLine(e.PID)
	}
	return e
}

// flockHolder finds the live process holding a flock on device in
// /proc/locks, whose lines read "1: FLOCK  ADVISORY  WRITE <pid>
// <major>:<minor>:<inode> 0 EOF" (hex device numbers, as the kernel's
// lock_get_status prints them).
func flockHolder(device string) int {
	var st unix.Stat_t
	if err := unix.Stat(device, &st); err != nil {
		return 0
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	b, _ := os.ReadFile("/proc/locks")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line) // a waiter's line has "->" after the number
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid != os.Getpid() && alive(pid) {
			return pid
		}
	}
	return 0
}

// otherOpener finds another process with device open by reading /proc/*/fd.
func otherOpener(device string) int {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); target == device {
				return pid
			}
		}
	}
	return 0
}

// commandLine is a process's command as it was typed, with the program's
// directory left out: "bootbench run --board pc1".
func commandLine(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return ""
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	args[0] = filepath.Base(args[0])
	return strings.Join(args, " ")
}

// SweepLock removes the lock file of the console spec names when the
// process it names is gone (a bootbench killed with SIGKILL cannot remove
// its own), and says what it removed: "LCK..ttyUSB0 of pid 4242, which is
// gone"; "" when there was none to remove. Opening the console replaces
// such a lock anyway; this says so first, for a command that reports what
// a killed run left. lockDir "" is the system's.
func SweepLock(spec, lockDir string) string {
	device, err := (&opener{spec: spec}).resolve()
	if err != nil {
		return ""
	}
	path := lockFilePath(device, lockDir)
	if path == "" {
		return ""
	}
	pid, ok := readLockFile(path)
	if !ok || pid == os.Getpid() || alive(pid) {
		return ""
	}
	if err := os.Remove(path); err != nil {
		return ""
	}
	return fmt.Sprintf("%s of pid %d, which is gone", path, pid)
}
