package main

import (
	"context"
	"fmt"

	"github.com/bootbench/bootbench/results"
	"github.com/bootbench/bootbench/results/spool"
	"github.com/bootbench/bootbench/results/store"
)

const pushSynopsis = "results push [--to STORE] [--board NAME] [--db PATH]"

// cmdResultsPush copies runs from this bench's store to another, typically
// the lab's shared PostgreSQL store, so a bench that runs offline can
// sync when it can reach it. Pushing again copies only what is missing.
func cmdResultsPush(ctx context.Context, args []string) error {
	fs := newCommand("results push", pushSynopsis, "Without --to: delivers the runs waiting in the spool of the store --db names (runs\n"+
		"that store could not take when they ended: it was away), each in its own\n"+
		"transaction, and removes each from the spool once the store has it.\n\n"+
		"With --to: copies runs, with their transcripts, stages and raw output, from the\n"+
		"results store (--db) to the store --to names, usually a lab's shared one\n"+
		"(postgres://USER@HOST/DATABASE), after delivering that store's spool. A run\n"+
		"already there is skipped, so pushing again, or from several benches at once,\n"+
		"stores every run once. Exit status 1 when a run could not be pushed because a\n"+
		"different run holds its id there, or a spooled run could not be delivered.")
	to := fs.String("to", "", "the store to copy to: postgres://USER@HOST/DATABASE, or a file; its password in ~/.pgpass or $PGPASSWORD (default: deliver --db's spool only)")
	board := fs.String("board", "", "push only this board's runs")
	fs.storeFlag()
	if err := fs.parse(args); err != nil {
		return err
	}
	if *to == "" {
		if *board != "" {
			return usageErr("results push: --board selects runs to copy --to another store; the spool is delivered whole")
		}
		return deliverSpool(ctx, *fs.db)
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
	toSpool := &spooledStore{Store: dst, name: toName, path: storePath(*to), spool: spool.For(storePath(*to))}
	toSpool.deliver(ctx, func(msg string) { fmt.Println(msg) })
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

// deliverSpool is results push without --to: the store's spool delivered,
// a line per run, and a line of totals.
func deliverSpool(ctx context.Context, db string) error {
	s, name, err := openStoreChecked(db)
	if err != nil {
		return err
	}
	defer s.Close()
	path := storePath(db)
	st := &spooledStore{Store: s, name: name, path: path, spool: spool.For(path)}
	if st.spool.Count() == 0 {
		fmt.Printf("no runs wait in the spool for %s (%s)\n", name, st.spool.Dir)
		return nil
	}
	delivered := st.deliver(ctx, func(msg string) { fmt.Println(msg) })
	left := st.spool.Count()
	fmt.Printf("delivered %s from the spool to %s; %s left in the spool\n", runsCount(delivered), name, runsCount(left))
	if left > 0 {
		return fmt.Errorf("results push: %s still wait in the spool %s (see the lines above)", runsCount(left), st.spool.Dir)
	}
	return nil
}
