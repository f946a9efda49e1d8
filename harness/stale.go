package harness

import (
	"os"
	"path/filepath"

	"github.com/bootbench/bootbench/internal/owner"
)

// writeOwner marks a run's directory as this process's.
func writeOwner(dir string) error { return owner.Claim(dir, "") }

// sweepStale removes the directories of runs whose bootbench was killed
// before it could (SIGKILL leaves no chance to tidy up).
func sweepStale(cacheDir string) {
	for _, o := range owner.Orphans(filepath.Join(cacheDir, "run-*")) {
		os.RemoveAll(o.Dir)
	}
}
