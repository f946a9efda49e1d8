package main

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/spool"
)

// TestDeliverEvery: serve's delivery of the spool, every interval while
// it runs, stores what waits there, says so, and stops when told.
func TestDeliverEvery(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	store := openTestStore(t, db)
	st := &spooledStore{Store: store, name: db, path: db, spool: &spool.Spool{Dir: filepath.Join(t.TempDir(), "spool"), Store: db}}
	var mu sync.Mutex
	var said []string
	note := func(msg string) { mu.Lock(); said = append(said, msg); mu.Unlock() }
	stop := st.deliverEvery(context.Background(), 20*time.Millisecond, note)
	defer stop()
	r := &results.Run{ID: "20250314-150926-00000001", Board: "pc1", ClockMHz: 680, Rep: 1, Status: results.StatusOK,
		Started: time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC), Metrics: []results.Metric{{Name: "md5@16", Unit: "B/s", Value: 123456}}}
	if _, err := st.spool.Keep(r, "away"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for st.spool.Count() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if _, err := store.Run(context.Background(), r.ID); err != nil {
		t.Fatalf("the spooled run was not delivered: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) != 1 || said[0] != "delivered run "+string(r.ID)+" from the spool to "+db {
		t.Errorf("said %q", said)
	}
	if runs, _ := store.Runs(context.Background(), results.Filter{}); len(runs) != 1 {
		t.Errorf("%d runs stored", len(runs))
	}
}
