package netboot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTFTPEmptyFileTsize: an empty file is a file of size 0, and a client
// that asked for tsize is told so in the option answer, every time, in
// every mode and with any other option: RFC 2349's "0" in a request means
// "tell me", not "no tsize" in the answer.
func TestTFTPEmptyFileTsize(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "empty"), nil, 0o644)
	addr := serveTFTP(t, mustTFTP(t, root))
	requests := []struct {
		mode string
		opts []string
	}{
		{"octet", []string{"tsize", "0"}},
		{"octet", []string{"tsize", "0", "blksize", "1468"}},
		{"octet", []string{"blksize", "1468", "tsize", "0"}},
		{"netascii", []string{"tsize", "0"}},
		{"netascii", []string{"blksize", "1024", "TSIZE", "0"}},
	}
	missing, total := 0, 0
	for round := 0; round < 20; round++ {
		for _, rq := range requests {
			c := newRawClient(t, "127.0.0.1")
			c.rrq(addr, "empty", rq.mode, rq.opts...)
			opts, data, _, msg := c.receive()
			c.close()
			total++
			if msg != "" || len(data) != 0 || opts["tsize"] != "0" {
				missing++
				if missing <= 5 {
					t.Errorf("%s %s: options %v, %d bytes, error %q; want tsize 0 acknowledged", rq.mode, strings.Join(rq.opts, " "), opts, len(data), msg)
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d transfers of an empty file without tsize in the option answer", missing, total)
	}
}
