// Package quietseg remembers which bench segments bootbench found, minutes
// ago, with no other DHCP server on them. Finding out takes 4 s of
// listening (dnsmasq pings an address for 3 s before it offers it), and a
// command that waited for that verdict before every power-on made a board
// on a real bench cost 4 s more per command than the same board virtual.
// A command that starts soon after a quiet verdict may switch its board on
// while it asks again; one that finds a rival then ends the run.
//
// A segment is the interface by name and MAC: a tap or NIC made again, or
// another machine's, is a segment not yet heard.
package quietseg

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Fresh is how long a quiet verdict is trusted: long enough for the next
// command of a series (runs of a few minutes, one after another), short
// enough that a segment recabled over a coffee break is heard again before
// a board is switched on.
const Fresh = 10 * time.Minute

// Memory holds the verdicts, one file per segment, in Dir.
type Memory struct {
	Dir string
}

// QuietAgo is how long ago segment (iface, mac) was last found quiet;
// ok is false when it never was, not within Fresh, or a rival was found
// since.
func (m Memory) QuietAgo(iface string, mac net.HardwareAddr, now time.Time) (ago time.Duration, ok bool) {
	if !m.ours(iface, mac) {
		return 0, false
	}
	b, err := os.ReadFile(m.path(iface, mac))
	if err != nil {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false
	}
	ago = now.Sub(t)
	if ago < 0 || ago > Fresh {
		return 0, false
	}
	return ago, true
}

// Quiet records that the segment was found with no other DHCP server at t.
func (m Memory) Quiet(iface string, mac net.HardwareAddr, t time.Time) error {
	if err := os.MkdirAll(m.Dir, 0o755); err != nil {
		return fmt.Errorf("remember that %s is quiet: %w", iface, err)
	}
	// Written beside and renamed, so a command reading it at the same
	// time sees the old verdict or the new one, never half of one.
	tmp, err := os.CreateTemp(m.Dir, ".quiet-*")
	if err != nil {
		return fmt.Errorf("remember that %s is quiet: %w", iface, err)
	}
	_, werr := tmp.WriteString(t.UTC().Format(time.RFC3339Nano) + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("remember that %s is quiet: %w", iface, err)
	}
	if err := os.Rename(tmp.Name(), m.path(iface, mac)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("remember that %s is quiet: %w", iface, err)
	}
	m.prune(t)
	return nil
}

// prune removes verdicts too old to trust, so that a host whose segments
// come and go (taps made per test, per virtual bench) keeps few files.
func (m Memory) prune(now time.Time) {
	ents, _ := os.ReadDir(m.Dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > Fresh {
			os.Remove(filepath.Join(m.Dir, e.Name()))
		}
	}
}

// Heard forgets the segment's quiet verdict: another server answered on it.
func (m Memory) Heard(iface string, mac net.HardwareAddr) error {
	err := os.Remove(m.path(iface, mac))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("forget that %s was quiet: %w", iface, err)
	}
	return nil
}

// ours: a verdict is trusted only from this user, in a directory of this
// user's that no one else may write: another user's file would let them
// have boards switched on before the check.
func (m Memory) ours(iface string, mac net.HardwareAddr) bool {
	for _, p := range []string{m.Dir, m.path(iface, mac)} {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
			return false
		}
	}
	return true
}

func (m Memory) path(iface string, mac net.HardwareAddr) string {
	id := strings.ReplaceAll(mac.String(), ":", "")
	// Interface names hold no '/' (the kernel refuses them), but a name
	// read from an inventory is not trusted to make a path.
	return filepath.Join(m.Dir, filepath.Base(strings.ReplaceAll(iface, "/", "_"))+"-"+id)
}
