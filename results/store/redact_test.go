package store

import (
	"context"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/results"
)

// TestReasonNeverHoldsAPassword: a failure reason quoting a URL with a
// password is stored with the password masked, in both engines, and a
// reason stored before masking reads back masked.
func TestReasonNeverHoldsAPassword(t *testing.T) {
	const secret = "PlantedS3cret"
	eachEngine(t, func(t *testing.T, e engineKind) {
		ctx := context.Background()
		s, _ := e.open(t)
		r := sampleRun("r1", t0)
		r.Status, r.Metrics = results.StatusFailed, nil
		r.Reason = `setup: power on: Get "http://admin:` + secret + `@198.18.5.7/cm": connection refused`
		if err := s.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		var stored string
		if err := s.db.QueryRowContext(ctx, s.eng.bind(`SELECT reason FROM runs WHERE id = ?`), "r1").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, secret) || !strings.Contains(stored, "http://admin:xxxxx@198.18.5.7/cm") {
			t.Errorf("stored reason %q", stored)
		}
		// As a store written before reasons were masked holds it.
		if _, err := s.db.ExecContext(ctx, s.eng.bind(`UPDATE runs SET reason = ? WHERE id = ?`), r.Reason, "r1"); err != nil {
			t.Fatal(err)
		}
		got, err := s.Run(ctx, "r1")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got.Reason, secret) {
			t.Errorf("read reason %q", got.Reason)
		}
	})
}
