// Package owner records which process owns a directory bootbench made (a
// run's files, the virtual bench's namespace record), so that what a
// bootbench killed with SIGKILL could not tear down is found and removed by
// the next one:
//
//	owner.Claim(dir, "bootbench-4f1c2a9e") // at setup
//	for _, d := range owner.Orphans(glob) { ... remove d ... }
package owner

import (
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

// Alive reports whether process pid exists.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
