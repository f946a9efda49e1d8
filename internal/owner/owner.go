// Package owner records which process owns a directory bootbench made (a
// run's files, the virtual bench's namespace record), so that what a
// bootbench killed with SIGKILL could not tear down is found and removed by
// the next one:
//
//	owner.Claim(dir, "bootbench-4f1c2a9e") // at setup
//	for _, d := range owner.Orphans(glob) { ... remove d ... }
package owner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const file = "owner"

// Claim marks dir as this process's, with a note (what to remove with it).
func Claim(dir, note string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), note)), 0o644)
}

// Orphan is a directory whose owner is gone.
type Orphan struct {
	Dir  string
	Note string
}

// Orphans lists the directories matching pattern whose owner process is
// gone. A directory without an owner record is being set up right now, or
// is not ours: it is left alone.
func Orphans(pattern string) []Orphan {
	dirs, _ := filepath.Glob(pattern)
	var out []Orphan
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			continue
		}
		pidText, note, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil || Alive(pid) {
			continue
		}
		out = append(out, Orphan{Dir: dir, Note: note})
	}
	return out
}

// Alive reports whether process pid exists and is not a zombie. A
// bootbench killed with SIGKILL stays in the process table, state Z, until
// its parent reaps it, and a parent that never does (a shell script's
// background job, a supervisor) would keep its leftovers from being swept.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return state(pid) != 'Z'
}

// state is the process's state letter from /proc/PID/stat (R, S, D, Z, …),
// or 0 if it cannot be read (the process just went, or no /proc): then
// existence alone decides. The state follows the command name, in
// parentheses that may themselves hold spaces and parentheses.
func state(pid int) byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}
