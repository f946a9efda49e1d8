// Package gofix corrects, when a board's image is built, a bug of Go's
// runtime that bootbench's boards would otherwise carry: on linux/mips,
// mipsle, mips64 and mips64le, runtime.usleep hands nanosleep the
// microseconds it was asked for as nanoseconds (tv_nsec = usec -
// tv_sec*1000), so every runtime sleep is 1000 times too short. sysmon,
// which backs off to 10 ms sleeps on an idle or busy program, then wakes
// some 14,000 times a second, and each wake costs the benchmark a fixed
// share of the CPU: more at a lower clock, so a clock comparison on a MIPS
// board comes out super-linear. The same bug was fixed for ppc64 (Go
// issue 56374) and s390x (Go issue 71714); docs/go-mips-usleep.md is the
// report for mips.
//
// The correction is a go build -overlay: the toolchain's own assembly
// file with the one sequence that computes tv_nsec replaced, made afresh
// at every build from the file the toolchain has. When that file lacks
// the expected instructions (a Go that fixed it, or changed it), the build
// is refused rather than made with a runtime nobody checked.
//
//	files, err := gofix.For(goroot, "mipsle")
//	overlay, err := gofix.WriteOverlay(dir, files)
//	go build -overlay=$overlay ...
package gofix

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Name is the correction's name, as the board's hello reports it.
const Name = "mips-usleep"

// BuildTag is set on a build whose runtime is corrected, so benchinit can
// say so in its hello (cmd/benchinit's goruntime_*.go).
const BuildTag = "bootbench_gofix_usleep"

// fix is one textual correction of one file of GOROOT.
type fix struct {
	file     string // inside GOROOT
	old, new string // exact lines, the one occurrence of old replaced
}

// The buggy sequence keeps usec in R5 and subtracts tv_sec*1000 from it;
// the fix takes the remainder the DIVU left in HI and multiplies it by
// 1000. The stack slots are unchanged, so nothing else in the function
// moves.
var fixes = map[string]fix{
	"mipsx": {
		file: "src/runtime/sys_linux_mipsx.s",
		old:  "\tMOVW\t$1000, R4\n\tMULU\tR3, R4\n\tMOVW\tLO, R4\n\tSUBU\tR4, R5\n\tMOVW\tR5, 28(R29)\n",
		new:  "\tMOVW\tHI, R5\n\tMOVW\t$1000, R4\n\tMULU\tR4, R5\n\tMOVW\tLO, R5\n\tMOVW\tR5, 28(R29)\n",
	},
	"mips64x": {
		file: "src/runtime/sys_linux_mips64x.s",
		old:  "\tMOVW\t$1000, R4\n\tMULVU\tR3, R4\n\tMOVV\tLO, R4\n\tSUBVU\tR4, R5\n\tMOVV\tR5, 16(R29)\n",
		new:  "\tMOVV\tHI, R5\n\tMOVW\t$1000, R4\n\tMULVU\tR4, R5\n\tMOVV\tLO, R5\n\tMOVV\tR5, 16(R29)\n",
	},
}

// family is the runtime's name for goarch's assembly, "" for an
// architecture whose usleep is right.
func family(goarch string) string {
	switch goarch {
	case "mips", "mipsle":
		return "mipsx"
	case "mips64", "mips64le":
		return "mips64x"
	}
	return ""
}

// File is one corrected file: the path of the original in GOROOT and the
// bytes that replace it.
type File struct {
	Original string
	Text     []byte
}

// Needed says whether goarch's runtime gets the correction.
func Needed(goarch string) bool { return family(goarch) != "" }

// For reads goroot's file for goarch and returns it corrected; nothing for
// an architecture that needs no correction. The error is one line naming
// the file.
func For(goroot, goarch string) ([]File, error) {
	fam := family(goarch)
	if fam == "" {
		return nil, nil
	}
	f := fixes[fam]
	path := filepath.Join(goroot, f.file)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("correct Go's runtime for %s: %v", goarch, err)
	}
	fn, ok := usleepBody(string(src))
	if !ok || strings.Count(fn, f.old) != 1 {
		return nil, fmt.Errorf("correct Go's runtime for %s: %s has not the runtime·usleep instructions bootbench corrects (a Go that fixed or changed them; see README, Go on MIPS)", goarch, path)
	}
	text := strings.Replace(string(src), fn, strings.Replace(fn, f.old, f.new, 1), 1)
	return []File{{Original: path, Text: []byte(text)}}, nil
}

// usleepBody is the text of runtime·usleep, from its TEXT line to the
// next one: the correction must not touch any other function.
func usleepBody(src string) (string, bool) {
	start := strings.Index(src, "TEXT runtime·usleep(SB)")
	if start < 0 {
		return "", false
	}
	end := strings.Index(src[start+1:], "\nTEXT ")
	if end < 0 {
		return src[start:], true
	}
	return src[start : start+1+end], true
}

// Digest identifies the corrected files, for the image's digest: a
// toolchain whose file differs gives another image.
func Digest(files []File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %d\n", f.Original, len(f.Text))
		h.Write(f.Text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// WriteOverlay writes files into dir and the overlay that maps each
// original onto its copy, returning the overlay's path for go build
// -overlay. dir must be outside every Go package's directory: go build
// would compile a .s file it finds in one as part of that package.
func WriteOverlay(dir string, files []File) (string, error) {
	replace := map[string]string{}
	for i, f := range files {
		p := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(f.Original)))
		if err := os.WriteFile(p, f.Text, 0o644); err != nil {
			return "", fmt.Errorf("write corrected runtime: %w", err)
		}
		replace[f.Original] = p
	}
	b, err := json.Marshal(struct{ Replace map[string]string }{replace})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, b, 0o644); err != nil {
		return "", fmt.Errorf("write overlay: %w", err)
	}
	return overlay, nil
}
