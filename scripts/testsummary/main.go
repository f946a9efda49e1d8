// Command testsummary runs go test and prints what a plain go test prints —
// each package's result line, and the whole output of a test that fails —
// then the slowest tests with their seconds, so the cost of a test suite is
// in front of whoever runs it. It exits with go test's status.
//
//	go run ./scripts/testsummary [-top N] [-events FILE] -- [go test flags] [packages]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output
	Test       string
	Output     string
	Elapsed    float64
}

// timing is one finished test.
type timing struct {
	pkg, test string
	action    string // pass, fail or skip
	seconds   float64
}

func main() {
	top := flag.Int("top", 10, "how many of the slowest tests to list")
	events := flag.String("events", "", "also write go test's events (-json) to this file")
	flag.Parse()
	cmd := exec.Command("go", append([]string{"test", "-json"}, flag.Args()...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	var in io.Reader = out
	if *events != "" {
		f, err := os.Create(*events)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
		defer f.Close()
		in = io.TeeReader(out, f)
	}
	times := relay(in, os.Stdout)
	err = cmd.Wait()
	printSlowest(os.Stdout, times, *top)
	printCounts(os.Stdout, times)
	if ee, ok := err.(*exec.ExitError); ok {
		os.Exit(ee.ExitCode())
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
}

// relay prints what a plain go test would of the events on r and returns
// every test's time.
func relay(r io.Reader, w io.Writer) []timing {
	var times []timing
	held := map[string]*strings.Builder{} // a running test's output, by package and name
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(w, sc.Text()) // not an event: pass it on
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			io.WriteString(w, e.Output)
		case e.Test == "" && e.Action == "output":
			if e.Output != "PASS\n" { // go test prints a passing package's "ok" line only
				io.WriteString(w, e.Output)
			}
		case e.Action == "output":
			if held[key] == nil {
				held[key] = &strings.Builder{}
			}
			held[key].WriteString(e.Output)
		case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			if e.Action == "fail" && held[key] != nil {
				io.WriteString(w, held[key].String())
			}
			delete(held, key)
			times = append(times, timing{e.Package, e.Test, e.Action, e.Elapsed})
		}
	}
	return times
}

// printSlowest lists the n slowest tests that have no subtests of their own
// (a parent's time is its subtests').
func printSlowest(w io.Writer, times []timing, n int) {
	parent := map[string]bool{}
	for _, t := range times {
		for i := strings.LastIndex(t.test, "/"); i > 0; i = strings.LastIndex(t.test[:i], "/") {
			parent[t.pkg+" "+t.test[:i]] = true
		}
	}
	var leaves []timing
	for _, t := range times {
		if !parent[t.pkg+" "+t.test] {
			leaves = append(leaves, t)
		}
	}
	sort.SliceStable(leaves, func(i, j int) bool { return leaves[i].seconds > leaves[j].seconds })
	if len(leaves) > n {
		leaves = leaves[:n]
	}
	if len(leaves) == 0 {
		return
	}
	fmt.Fprintf(w, "\nthe %d slowest tests:\n", len(leaves))
	for _, t := range leaves {
		fmt.Fprintf(w, "%8.1fs  %s %s\n", t.seconds, shortPkg(t.pkg), t.test)
	}
}

// printCounts ends the report with the plain closing line any reader of
// test output knows: how many tests (subtests included) passed, failed and
// were skipped.
func printCounts(w io.Writer, times []timing) {
	n := map[string]int{}
	for _, t := range times {
		n[t.action]++
	}
	fmt.Fprintf(w, "\ntests: %d passed, %d failed, %d skipped\n", n["pass"], n["fail"], n["skip"])
}

// shortPkg is a package path less the module's.
func shortPkg(p string) string {
	if i := strings.Index(p, "/bootbench/bootbench/"); i >= 0 {
		return p[i+len("/bootbench/bootbench/"):]
	}
	return p
}
