package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bootbench/bootbench/internal/vbench"
)

// ownerFile records, in a run's directory, which process owns the run and
// which namespace it made. A bootbench killed with SIGKILL cannot tear down;
// its QEMU dies with it (parent-death signal), but the namespace and the
// directory stay. The next run finds them here and removes them.
const ownerFile = "owner"

func writeOwner(dir, netns string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), netns)), 0o644)
}

// sweepStale removes what runs whose process is gone left behind, and
// returns the namespaces it deleted.
func sweepStale(cacheDir string) []string {
	dirs, _ := filepath.Glob(filepath.Join(cacheDir, "run-*"))
	var swept []string
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being set up right now, or not ours
		}
		f := strings.Fields(string(b))
		if len(f) != 2 || !strings.HasPrefix(f[1], vbench.NamePrefix) {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || alive(pid) {
			continue
		}
		if _, err := os.Stat(filepath.Join("/run/netns", f[1])); err == nil {
			if (&vbench.Net{Name: f[1]}).Close() == nil {
				swept = append(swept, f[1])
			}
		}
		os.RemoveAll(dir)
	}
	return swept
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
