package main

import (
	"context"
	"fmt"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/store"
)

const pushSynopsis = "results push --to STORE [--board NAME] [--db PATH]"

// cmdResultsPush copies runs from this bench's store to another, typically
// the lab's shared PostgreSQL store, so a bench that runs offline can
// sync when it can reach it. Pushing again copies only what is missing.
func cmdResultsPush(ctx context.Context, args []string) error {
	fs := newCommand("results push", pushSynopsis, "Copies runs, with their transcripts, stages and raw output, from the results\n"+
		"store (--db) to the store --to names, usually a lab's shared one\n"+
		"(postgres://USER@HOST/DATABASE). A run already there is skipped, so pushing\n"+
		"again, or from several benches at once, stores every run once. Exit status 1\n"+
		"when a run could not be pushed because a different run holds its id there.")
	to := fs.String("to", "", "the store to copy to: postgres://USER@HOST/DATABASE, or a file (required); its password in ~/.pgpass or $PGPASSWORD")
	board := fs.String("board", "", "push only this board's runs")
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	if *to == "" {
		return usageErr("results push: say where to with --to STORE (e.g. --to postgres://bench@db.lab/results)")
	}
	if storePath(*fs.db) == storePath(*to) {
		return usageErr("results push: --to %s is the store pushed from; name another", store.DisplayName(*to))
	}
	from, fromName, err := fs.readStore()
	if err != nil {
		return err
	}
	defer from.Close()
	dst, toName, err := openStoreChecked(*to)
	if err != nil {
		return err
	}
	defer dst.Close()
	rep, err := store.Push(ctx, from, dst, results.Filter{Board: *board}, nil)
	if rep != nil {
		for _, s := range rep.SameInput {
			fmt.Printf("skipped run %s: %s holds the same imported output as run %s\n", s.ID, toName, s.Other)
		}
		for _, s := range rep.Conflicts {
			fmt.Printf("not pushed: run %s: %s holds a different run under that id\n", s.ID, toName)
		}
		fmt.Printf("pushed %d %s from %s to %s; %d already there\n", len(rep.Pushed), runsWord(len(rep.Pushed)), fromName, toName, rep.Present)
	}
	if err != nil {
		return storeFailure(toName, err)
	}
	if len(rep.Conflicts) > 0 {
		return fmt.Errorf("results push: %d %s not pushed: %s holds different runs under their ids (listed above); see bootbench results show RUN in each store", len(rep.Conflicts), runsWord(len(rep.Conflicts)), toName)
	}
	return nil
}

func runsWord(n int) string {
	if n == 1 {
		return "run"
	}
	return "runs"
}
