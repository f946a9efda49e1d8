package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/testkit/userenv"
)

// TestHelpEveryWay: every command and command group answers --help, -h
// and "help" as the top-level help promises ("Run 'bootbench COMMAND
// --help'"): exit 0, its own usage on stdout, nothing on stderr.
func TestHelpEveryWay(t *testing.T) {
	db := emptyStore(t)
	tests := []struct {
		args []string
		want string // the usage's first line starts so
	}{
		{[]string{"results", "--help"}, "Usage: bootbench results SUBCOMMAND"},
		{[]string{"results", "-h"}, "Usage: bootbench results SUBCOMMAND"},
		{[]string{"results", "help"}, "Usage: bootbench results SUBCOMMAND"},
		{[]string{"results", "help", "list"}, "Usage: bootbench results list"},
		{[]string{"results", "list", "--help"}, "Usage: bootbench results list"},
		{[]string{"boards", "--help"}, "Usage: bootbench boards list | show NAME"},
		{[]string{"boards", "-h"}, "Usage: bootbench boards list | show NAME"},
		{[]string{"boards", "list", "--help"}, "Usage: bootbench boards list"},
		{[]string{"boards", "show", "--help"}, "Usage: bootbench boards show NAME"},
		{[]string{"boards", "prepare", "--help"}, "Usage: bootbench boards prepare [--bench NAME]"},
		{[]string{"image", "--help"}, "Usage: bootbench image build | prebuild"},
		{[]string{"image", "help", "build"}, "Usage: bootbench image build --arch"},
		{[]string{"help", "import"}, "Usage: bootbench import --board NAME"},
		{[]string{"help", "results", "export"}, "Usage: bootbench results export"},
		{[]string{"help", "boards"}, "Usage: bootbench boards list | show NAME"},
		{[]string{"help", "version"}, "Usage: bootbench version"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := bootbench(t, db, tt.args...)
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, tt.want) {
				t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 0, no stderr, stdout starting %q", r.code, r.stderr, r.stdout, tt.want)
			}
		})
	}
}

// TestBadFlagValueOneLine: a flag value that does not parse is answered
// with one line on stderr, not under the command's whole usage.
func TestBadFlagValueOneLine(t *testing.T) {
	db := emptyStore(t)
	for _, args := range [][]string{
		{"import", "--clock", "abc", "f.txt"},
		{"run", "--boot-timeout", "abc"},
		{"results", "export", "--clock", "x"},
		{"speed", "--seconds", "fast"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			r := bootbench(t, db, args...)
			oneLine(t, r, 2, `invalid value`)
			if r.stdout != "" {
				t.Errorf("stdout holds %d lines (the usage?), want nothing:\n%s", strings.Count(r.stdout, "\n"), r.stdout)
			}
		})
	}
}

// TestVersion: --version and version print this build, the Go it was
// built with, and where its images come from: the source tree from
// inside it, a prebuilt set outside it.
func TestVersion(t *testing.T) {
	first := regexp.MustCompile(`^bootbench \S+, built with go1\.\d+\S* for linux/\w+$`)
	for _, arg := range []string{"--version", "version"} {
		r := bootbench(t, emptyStore(t), arg)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if r.code != 0 || len(lines) != 2 || !first.MatchString(lines[0]) || !strings.HasPrefix(lines[1], "images    built from the source tree ") {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr: %s", arg, r.code, r.stdout, r.stderr)
		}
	}
	// Outside the tree, with a prebuilt set where BOOTBENCH_PREBUILT says.
	set := t.TempDir()
	m, _ := json.Marshal(initramfs.Manifest{MadeBy: "v9.9.9", Images: []initramfs.PrebuiltImage{{Arch: "amd64", File: "a.cpio"}}})
	if err := os.WriteFile(filepath.Join(set, initramfs.ManifestName), m, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := userenv.Command([]string{"BOOTBENCH_PREBUILT=" + set, "BOOTBENCH_CACHE=" + t.TempDir()}, bootbenchBin, "version")
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	want := "images    the prebuilt set in " + set + " (1 image, made by bootbench v9.9.9)"
	if !strings.Contains(out.String(), want) {
		t.Errorf("outside the tree:\n%s\nwant %q", out.String(), want)
	}
}
