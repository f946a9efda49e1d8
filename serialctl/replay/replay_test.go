package replay

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/serialctl/pasted"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/")

// transcripts is serialctl's corpus of consoles, real and assembled from
// published ones (see its README.md).
const transcripts = "../testdata/"

// replayFile reads file and replays it held to board ("": none).
func replayFile(t *testing.T, file, board string) *Report {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	log, err := pasted.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var p *boards.Profile
	if board != "" {
		pr, err := boards.Get(board)
		if err != nil {
			t.Fatal(err)
		}
		p = &pr
	}
	return Run(filepath.Base(file), log, p)
}

// goldenCases are the logs replayed against golden files: every
// transcript of serialctl's corpus alone; the acceptance fixtures held to
// their boards' profiles; logs that contradict a profile or show a
// failure; and the fixtures as copying leaves them (testdata/README.md).
func goldenCases(t *testing.T) [][2]string {
	cases := [][2]string{
		{transcripts + "routerboot-rb450g-netboot.txt", "rb450g"},
		{transcripts + "routerboot-rb450g-netboot-failed.txt", "rb450g"},
		{transcripts + "cfe-wrt54g-boot-elf.txt", "wrt54g-v3"},
		{transcripts + "uboot-ar7240-tftpboot.txt", "tl-mr3420"},
		{transcripts + "rpi4-netboot-old.txt", "rpi4b"},
		{transcripts + "rpi4-netboot-new.txt", "rpi4b"},
		// A RouterBOOT console held to a U-Boot board; a RouterBOOT at 400
		// MHz held to the RB450G's 680/800; a panic.
		{transcripts + "routerboot-rb450g-netboot.txt", "tl-mr3420"},
		{transcripts + "routerboot-rb600a.txt", "rb450g"},
		{transcripts + "qemu-x86_64-panic.txt", "qemu-x86_64"},
		{transcripts + "qemu-x86_64-ipxe.txt", "qemu-x86_64"},
		{"testdata/rb450g-announces-800.txt", "rb450g"},
		{"testdata/rb450g-resets.txt", "rb450g"},
		{"testdata/rb450g-setup-menu.txt", "rb450g"},
		{"testdata/rb450g-setup-menu.txt", "rb450"},
		{"testdata/rb450g-setup-menu-reworded.txt", "rb450g"},
		{"testdata/routerboot-rb450g-netboot.mail.txt", "rb450g"},
		{"testdata/routerboot-rb450g-netboot-failed.syslog.txt", "rb450g"},
		{"testdata/cfe-wrt54g-boot-elf.cut.txt", "wrt54g-v3"},
		{"testdata/uboot-ar7240-tftpboot.tio.txt", "tl-mr3420"},
		{"testdata/rpi4-netboot-old.forum.txt", "rpi4b"},
		{"testdata/rpi4-netboot-new.quoted.txt", "rpi4b"},
	}
	all, _ := filepath.Glob(transcripts + "*.txt")
	if len(all) < 16 {
		t.Fatalf("only %d transcripts in %s", len(all), transcripts)
	}
	for _, f := range all {
		cases = append(cases, [2]string{f, ""})
	}
	return cases
}

// TestGolden replays each case and compares both outputs, for people and
// for scripts, with testdata/golden/NAME[.BOARD].txt and .json.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		file, board := c[0], c[1]
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		if board != "" {
			name += "." + board
		}
		t.Run(name, func(t *testing.T) {
			r := replayFile(t, file, board)
			var text bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			var js bytes.Buffer
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if !json.Valid(js.Bytes()) {
				t.Fatalf("not JSON: %s", js.Bytes())
			}
			for ext, got := range map[string][]byte{".txt": text.Bytes(), ".json": js.Bytes()} {
				golden := filepath.Join("testdata", "golden", name+ext)
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", golden, got, want)
				}
			}
		})
	}
}

// TestVerdicts pins what each acceptance fixture and contradiction must
// give, apart from how the goldens word it.
func TestVerdicts(t *testing.T) {
	tests := []struct {
		file, board string
		problems    []string // kinds, in order
		netboot     []Outcome
		clock       boards.MHz
		loader      string
	}{
		{transcripts + "routerboot-rb450g-netboot.txt", "rb450g", nil, []Outcome{NetbootOK}, 680, "RouterBOOT 2.41"},
		{transcripts + "routerboot-rb450g-netboot-failed.txt", "rb450g", []string{"netboot"}, []Outcome{NetbootFailed}, 680, "RouterBOOT 2.41"},
		{transcripts + "cfe-wrt54g-boot-elf.txt", "wrt54g-v3", nil, []Outcome{NetbootOK}, 200, "CFE 1.0.37"},
		{transcripts + "uboot-ar7240-tftpboot.txt", "tl-mr3420", nil, []Outcome{NetbootOK}, 0, "U-Boot 1.1.4"},
		{transcripts + "rpi4-netboot-old.txt", "rpi4b", nil, []Outcome{NetbootOK}, 0, "RPi bootloader 2021-02-16"},
		{transcripts + "rpi4-netboot-new.txt", "rpi4b", nil, []Outcome{NetbootOK}, 0, "RPi bootloader 2024-07-30"},
		{transcripts + "routerboot-rb450g-netboot.txt", "tl-mr3420", []string{"bootloader"}, []Outcome{NetbootOK}, 680, "RouterBOOT 2.41"},
		{transcripts + "routerboot-rb600a.txt", "rb450g", []string{"clock", "netboot", "clock"}, []Outcome{NetbootFailed, NetbootLocal}, 400, "RouterBOOT 6.48.1"},
		{transcripts + "qemu-x86_64-panic.txt", "qemu-x86_64", []string{"panic"}, []Outcome{NetbootOK}, 0, "SeaBIOS 1.16.2-debian-1.16.2-1"},
		{"testdata/rb450g-announces-800.txt", "rb450g", []string{"bogomips"}, []Outcome{NetbootOK}, 800, "RouterBOOT 2.41"},
		{"testdata/rb450g-resets.txt", "rb450g", []string{"reset"}, []Outcome{NetbootOK, NetbootNone}, 680, "RouterBOOT 2.41"},
		{transcripts + "routerboot-rb450g-netboot.txt", "", nil, []Outcome{NetbootOK}, 680, "RouterBOOT 2.41"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file)+"/"+tt.board, func(t *testing.T) {
			r := replayFile(t, tt.file, tt.board)
			var kinds []string
			for _, p := range r.Problems {
				kinds = append(kinds, string(p.Kind))
			}
			var outcomes []Outcome
			for _, b := range r.Boots {
				outcomes = append(outcomes, b.Netboot)
			}
			b := r.Boots[0]
			if fmt.Sprint(kinds) != fmt.Sprint(tt.problems) || fmt.Sprint(outcomes) != fmt.Sprint(tt.netboot) ||
				b.ClockMHz != tt.clock || strings.TrimSpace(b.Loader+" "+b.Version) != tt.loader || r.OK() != (len(tt.problems) == 0) {
				t.Errorf("problems %v, netboot %v, clock %v, loader %q %q, OK %v; want %v, %v, %v, %q",
					kinds, outcomes, b.ClockMHz, b.Loader, b.Version, r.OK(), tt.problems, tt.netboot, tt.clock, tt.loader)
			}
		})
	}
}

// stage is a fact without its line, for comparing two readings of a log.
type stage struct {
	Stage Stage
	Text  string
}

func stagesOf(r *Report, before int) (lines []int, st []stage) {
	for _, f := range r.Facts {
		if before > 0 && f.Line >= before {
			break
		}
		lines = append(lines, f.Line)
		st = append(st, stage{f.Stage, f.Text})
	}
	return lines, st
}

// copying are what people's tools do to a log, each a function of its
// lines (without line ends) to the bytes of the file and how many lines
// it put before the log.
var copying = map[string]func(ls []string) (string, int){
	"LF":   func(ls []string) (string, int) { return strings.Join(ls, "\n") + "\n", 0 },
	"CRLF": func(ls []string) (string, int) { return strings.Join(ls, "\r\n") + "\r\n", 0 },
	"CR":   func(ls []string) (string, int) { return strings.Join(ls, "\r") + "\r", 0 },
	"ellipsis": func(ls []string) (string, int) {
		return strings.ReplaceAll(strings.Join(ls, "\n"), "...", "…") + "\n", 0
	},
	"mail quoting": func(ls []string) (string, int) {
		return "Someone wrote:\n" + prefixAll(ls, "> ") + "\nThanks!\n", 1
	},
	"a reply to a reply": func(ls []string) (string, int) {
		return "> > here it is:\n" + prefixAll(ls, ">> "), 1
	},
	"syslog": func(ls []string) (string, int) {
		for i, l := range ls {
			ls[i] = fmt.Sprintf("Dec  4 10:%02d:%02d bench1 %s", i/60, i%60, l)
		}
		return strings.Join(ls, "\n") + "\n", 0
	},
	"ISO": func(ls []string) (string, int) {
		for i, l := range ls {
			ls[i] = fmt.Sprintf("2026-12-04T10:00:%02d.%03dZ %s", i%60, i, l)
		}
		return strings.Join(ls, "\r\n") + "\r\n", 0
	},
	"terminal logger": func(ls []string) (string, int) {
		for i, l := range ls {
			ls[i] = fmt.Sprintf("[10:00:%02d.%03d] %s", i%60, i, l)
		}
		return strings.Join(ls, "\n") + "\n", 0
	},
}

func prefixAll(ls []string, p string) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(strings.TrimRight(p+l, " ") + "\n")
	}
	return b.String()
}

// acceptance are the fixtures console --replay's acceptance names.
var acceptance = []string{"routerboot-rb450g-netboot", "routerboot-rb450g-netboot-failed", "cfe-wrt54g-boot-elf",
	"uboot-ar7240-tftpboot", "rpi4-netboot-old", "rpi4-netboot-new"}

func readLines(t *testing.T, file string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n")
}

func replayText(t *testing.T, text string) *Report {
	t.Helper()
	log, err := pasted.Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return Run("copy", log, nil)
}

// TestCopyingKeepsStages: each acceptance fixture, after what copying
// does to a log, gives the same stages at the same lines (shifted by the
// lines a mail puts before it); cut off anywhere, it gives the stages
// before the cut.
func TestCopyingKeepsStages(t *testing.T) {
	for _, name := range acceptance {
		orig := readLines(t, transcripts+name+".txt")
		wantLines, want := stagesOf(replayText(t, strings.Join(orig, "\n")+"\n"), 0)
		if len(want) < 4 {
			t.Fatalf("%s: only %d stages", name, len(want))
		}
		for how, copyOf := range copying {
			text, shift := copyOf(append([]string(nil), orig...))
			gotLines, got := stagesOf(replayText(t, text), 0)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s, %s: stages\n%v\nwant\n%v", name, how, got, want)
				continue
			}
			for i := range gotLines {
				if gotLines[i] != wantLines[i]+shift {
					t.Errorf("%s, %s: stage %d at line %d, want %d", name, how, i, gotLines[i], wantLines[i]+shift)
					break
				}
			}
		}
		for _, cut := range wantLines {
			// Cut in the middle of the line of a stage: the stages
			// before it stay.
			text := strings.Join(orig[:cut-1], "\n") + "\n" + orig[cut-1][:len(orig[cut-1])/2]
			r := replayText(t, text)
			_, got := stagesOf(r, cut)
			_, w := stagesOf(replayText(t, strings.Join(orig, "\n")+"\n"), cut)
			if fmt.Sprint(got) != fmt.Sprint(w) || !r.Cut {
				t.Errorf("%s cut at line %d: stages %v, want %v (cut %v)", name, cut, got, w, r.Cut)
			}
		}
	}
}

// copyName is the fixture a copied log in testdata/ was made from:
// NAME.HOW.txt of ../testdata/NAME.txt.
var copyName = regexp.MustCompile(`^(.+)\.(mail|syslog|cut|tio|quoted|forum)\.txt$`)

// TestCopiesInTestdata: the copied logs kept in testdata/ (for the
// command's own tests and README) give their fixture's stages.
func TestCopiesInTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	n := 0
	for _, f := range files {
		m := copyName.FindStringSubmatch(filepath.Base(f))
		if m == nil {
			continue
		}
		n++
		orig := replayFile(t, transcripts+m[1]+".txt", "")
		copied := replayFile(t, f, "")
		before := 0
		if copied.Cut {
			before = copied.Lines
		}
		shift := 0
		if m[2] == "mail" || m[2] == "quoted" {
			shift = 1
		}
		_, want := stagesOf(orig, before-shift)
		gotLines, got := stagesOf(copied, before)
		wantLines, _ := stagesOf(orig, before-shift)
		if fmt.Sprint(got) != fmt.Sprint(want) || len(copied.Undone) == 0 {
			t.Errorf("%s: stages\n%v\nwant\n%v\n(undone %v)", f, got, want, copied.Undone)
			continue
		}
		for i := range gotLines {
			if gotLines[i] != wantLines[i]+shift {
				t.Errorf("%s: stage %d at line %d, want %d", f, i, gotLines[i], wantLines[i]+shift)
			}
		}
	}
	if n < 6 {
		t.Errorf("only %d copied logs in testdata/", n)
	}
}

// TestOutcomes: a boot's netboot from the steps its lines show, in the
// wordings of the transcripts and the firmware's documentation.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		name, log string
		want      Outcome
		problem   bool
	}{
		{"U-Boot: the file is not there", "U-Boot 1.1.4 (Sep  3 2010 - 12:28:13)\nTFTP from server 192.168.1.2; our IP address is 192.168.1.20\nFilename 'uImage'.\nTFTP error: 'File not found' (1)\nar7240> \n", NetbootFailed, true},
		{"U-Boot: a second name is", "U-Boot 2023.01\nFilename 'pxelinux.cfg/01-52-54-00-bb-00-02'.\nTFTP error: 'File not found' (1)\nFilename 'pxelinux.cfg/default'.\nBytes transferred = 210 (d2 hex)\n", NetbootOK, false},
		{"RouterBOOT: no answer, tries again", "RouterBOOT booter 2.41\ntrying bootp protocol.... failed\ntrying bootp protocol... OK\ntransfer started ..... transfer ok, time=2.10s\njumping to kernel code\n", NetbootOK, false},
		{"RouterBOOT: the log ends in the transfer", "RouterBOOT booter 2.41\ntrying bootp protocol... OK\nGot IP address: 192.168.88.20\ntransfer started ......", NetbootIncomplete, false},
		{"RouterBOOT: loaded, then out of range", "RouterBOOT booter 2.41\ntrying bootp protocol... OK\ntransfer started ..... transfer ok, time=2.10s\nsetting up elf image... kernel out of range\n", NetbootFailed, true},
		{"iPXE: the kernel is not there", "iPXE initialising devices...ok\nConfiguring (net0 52:54:00:bb:00:01)... ok\nhttp://198.18.0.1/vmlinuz... No such file or directory (http://ipxe.org/2d0c618e)\n", NetbootFailed, true},
		{"CFE: its flash", "CFE version 1.0.37 for BCM947XX (32bit,SP,LE)\nLoader:raw Filesys:raw Dev:flash0.os File: Options:(null)\nLoading: .. 3560 bytes read\nStarting program at 0x80001000\n", NetbootLocal, false},
		{"no netboot at all", "Linux version 6.1.0-50-4kc-malta (debian-kernel@lists.debian.org)\n", NetbootNone, false},
	}
	for _, tt := range tests {
		r := replayText(t, tt.log)
		if got := r.Boots[len(r.Boots)-1].Netboot; got != tt.want || r.OK() == tt.problem {
			t.Errorf("%s: netboot %s, problems %v; want %s, a problem %v", tt.name, got, r.Problems, tt.want, tt.problem)
		}
	}
}
