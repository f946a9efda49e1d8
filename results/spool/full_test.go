package spool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/bootbench/bootbench/internal/testkit/needs"
	"github.com/bootbench/bootbench/internal/testkit/storetest"
	"github.com/bootbench/bootbench/results/store"
)

// smallDisk mounts a tmpfs of size bytes for the test and returns its
// directory; it is unmounted when the test ends.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	needs.Root(t, "a tmpfs mounted for the test")
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0755"); err != nil {
		needs.Unmet(t, "mount a tmpfs: "+err.Error())
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the test's tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file into dir until its filesystem is full, and
// returns the file, to remove when the space is wanted back.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			break
		}
	}
	for _, n := range []int{4096, 512, 1} { // the last partial blocks
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// TestStoreDiskFull: a SQLite store whose filesystem is full (a real
// tmpfs, filled) cannot take a run; the run goes to the spool on another
// filesystem whole, and reaches the store once there is room. When the
// spool's own filesystem is full too, the run is the caller's alone, and
// the error says so.
func TestStoreDiskFull(t *testing.T) {
	ctx := context.Background()
	disk := smallDisk(t, "2m")
	db := filepath.Join(disk, "results.db")
	store, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() }) // before the unmount
	if err := store.SaveRun(ctx, storetest.SampleRun("20250314-150926-00000001", storetest.T0)); err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, disk)

	r := storetest.SampleRun("20250314-150927-00000002", storetest.T0)
	r.Transcript = bytes.Repeat([]byte("a board's whole console\r\n"), 20000) // 500 kB: pages the store has no room for
	elsewhere := &Spool{Dir: filepath.Join(t.TempDir(), "spool"), Store: db}
	err = (&Saver{Store: store, Spool: elsewhere}).SaveRun(ctx, r)
	var kept *KeptError
	if !errors.As(err, &kept) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("SaveRun on a full disk: %v, want the run kept, saying the disk is full", err)
	}
	t.Log(err)

	sameDisk := &Spool{Dir: filepath.Join(disk, "spool"), Store: db}
	err = (&Saver{Store: store, Spool: sameDisk}).SaveRun(ctx, storetest.SampleRun("20250314-150928-00000003", storetest.T0))
	var lost *LostError
	if !errors.As(err, &lost) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("SaveRun with the spool on the full disk too: %v, want a LostError", err)
	}
	t.Log(err)
	if w, _ := sameDisk.Waiting(); len(w) != 0 {
		t.Errorf("a spool on a full disk holds %v", w)
	}

	os.Remove(filler)
	rep, err := elsewhere.Deliver(ctx, store, nil)
	if err != nil || len(rep.Delivered) != 1 {
		t.Fatalf("delivery once there is room: %+v, %v", rep, err)
	}
	got, err := store.Run(ctx, r.ID)
	if err != nil || !bytes.Equal(got.Transcript, r.Transcript) || len(got.Metrics) != len(r.Metrics) {
		t.Fatalf("delivered run: %v", err)
	}
}
