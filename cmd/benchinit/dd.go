package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The dd benchmark is the seed's
//
//	time dd if=/dev/zero of=/tmp/testfile bs=16k count=…
//
// and the read back, done in benchinit: the board may have no dd, and
// BusyBox's and GNU's differ. The output is dd's own summary lines under
// the markers results/parse's dd parser names them by:
//
//	# dd-write
//	67108864 bytes (67 MB, 64 MiB) copied, 0.191 s, 351.4 MB/s
//	# dd-read
//	67108864 bytes (67 MB, 64 MiB) copied, 0.0402 s, 1669.4 MB/s

// ddBlock is dd's bs=16k: one write or read.
const ddBlock = 16 << 10

// ddMaxBytes is the file's size where the board's RAM allows: long enough
// to time (tenths of a second on the virtual PC), short enough that a
// run takes seconds.
const ddMaxBytes = 64 << 20

// ddDir is the tmpfs the file is written on, mounted for the run.
const ddDir = "tmp/bootbench-dd"

// ddSize is the file's size for a board whose /proc/meminfo is meminfo:
// ddMaxBytes, capped at a quarter of the RAM the kernel says it can give
// (MemAvailable, MemFree on kernels before 3.14), because a tmpfs keeps
// the file's pages in RAM: the rest stays for the kernel and benchinit.
// Whole blocks, and at least one.
func ddSize(meminfo string) int64 {
	free := meminfoKB(meminfo, "MemAvailable")
	if free == 0 {
		free = meminfoKB(meminfo, "MemFree")
	}
	size := int64(ddMaxBytes)
	if free > 0 {
		size = min(size, free<<10/4)
	}
	return max(1, size/ddBlock) * ddBlock
}

// runDD mounts a tmpfs of its own (the root file system of an initramfs
// may be a ramfs, which no size limits), runs the benchmark on it and
// takes it away again.
func (b *bench) runDD(ctx context.Context, w io.Writer) (int, error) {
	meminfo, _ := os.ReadFile(filepath.Join(b.root, "proc/meminfo"))
	size := ddSize(string(meminfo))
	dir := filepath.Join(b.root, ddDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("dd: %w", err)
	}
	opts := "size=" + strconv.FormatInt(size+ddBlock, 10)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return 0, fmt.Errorf("dd: mount a tmpfs on %s: %w", dir, err)
	}
	defer unix.Unmount(dir, 0)
	fmt.Fprintf(w, "# dd bs=16k count=%d of=/%s/testfile (tmpfs; %d MiB at most, a quarter of the available RAM)\n", size/ddBlock, ddDir, ddMaxBytes>>20)
	// As dd says its failure: a line of its own and a status.
	return b.builtInStatus(ctx, w, ddFile(ctx, w, filepath.Join(dir, "testfile"), size), "dd")
}

// ddFile writes size bytes of zeros to path in ddBlock writes, then reads
// them back in ddBlock reads, and prints each summary under its marker.
func ddFile(ctx context.Context, w io.Writer, path string, size int64) error {
	defer os.Remove(path)
	buf := make([]byte, ddBlock)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	start := time.Now()
	var n int64
	for n < size && err == nil {
		if err = ctx.Err(); err == nil {
			var k int
			k, err = f.Write(buf[:min(ddBlock, size-n)])
			n += int64(k)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fmt.Fprintln(w, "# dd-write")
	ddSummary(w, n, time.Since(start))

	if f, err = os.Open(path); err != nil {
		return err
	}
	defer f.Close()
	start, n = time.Now(), 0
	for err == nil {
		if err = ctx.Err(); err == nil {
			var k int
			k, err = f.Read(buf)
			n += int64(k)
		}
	}
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading %s back: %w", path, err)
	}
	if n != size {
		return fmt.Errorf("read %d bytes back from %s, wrote %d", n, path, size)
	}
	fmt.Fprintln(w, "# dd-read")
	ddSummary(w, n, time.Since(start))
	return nil
}

// ddSummary prints GNU dd's summary line: decimal and binary megabytes,
// seconds, and the rate in MB/s (10^6 bytes).
func ddSummary(w io.Writer, n int64, took time.Duration) {
	secs := max(took.Seconds(), 1e-9)
	fmt.Fprintf(w, "%d bytes (%.0f MB, %.0f MiB) copied, %.6g s, %.1f MB/s\n", n, float64(n)/1e6, float64(n)/(1<<20), secs, float64(n)/secs/1e6)
}
