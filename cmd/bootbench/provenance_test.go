package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/results"
)

// rb450gCapture is a console capture as people post them: the RB450G's
// RouterBOOT, started again after its clock was changed in its menu, then
// the kernel's first line and the board's openssl output (the banner and
// kernel lines of serialctl/testdata/routerboot-rb450g-netboot.txt).
func rb450gCapture(t *testing.T) string {
	t.Helper()
	output, err := os.ReadFile("testdata/openssl-0.9.8k-rb450g-680mhz.txt")
	if err != nil {
		t.Fatal(err)
	}
	banner := func(mhz string) string {
		return "RouterBOOT booter 2.41\r\n\r\nRouterBoard 450G\r\n\r\nCPU frequency: " + mhz + " MHz\r\nMemory size: 256 MB\r\n\r\n" +
			"Press any key within 2 seconds to enter setup..\r\n"
	}
	return banner("800") + banner("680") + "loading kernel from nand... OK\r\nsetting up elf image... OK\r\njumping to kernel code\r\n" +
		"Linux version 2.6.39.4 (openwrt@build) (gcc version 4.5.4 20110808 (prerelease) (Linaro GCC 4.5-2011.08) ) #1 Sat Jan 28 10:21:33 CET 2012\r\n" +
		string(output)
}

// TestProvenanceShown: the firmware that booted a run and the clock it
// announced are shown by results show and close each row of the CSV
// export and each run of the JSON one, for a run on the bench and for an
// imported console capture; a run whose console showed none shows none.
func TestProvenanceShown(t *testing.T) {
	eachStore(t, func(t *testing.T, db string) {
		s := openTestStore(t, db)
		bench := &results.Run{ID: "20261204-101010-0badc0de", Board: "rb450g", ClockMHz: 800, Status: results.StatusFailed,
			Reason: "boot-timeout: no hello from the board within 2m0s", Bench: "speed", Started: time.Unix(1764547200, 0),
			Bootloader: "RouterBOOT 2.41", FirmwareClockMHz: 800}
		direct := &results.Run{ID: "20261204-101111-0badc0df", Board: "qemu-mipsel", Status: results.StatusFailed,
			Reason: "boot-timeout: no hello from the board within 2m0s", Bench: "speed", Started: time.Unix(1764547260, 0)}
		for _, r := range []*results.Run{bench, direct} {
			if err := s.SaveRun(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
		capture := filepath.Join(t.TempDir(), "rb450g-console.txt")
		if err := os.WriteFile(capture, []byte(rb450gCapture(t)), 0o644); err != nil {
			t.Fatal(err)
		}
		imp := bootbench(t, db, "import", "--board", "rb450g", "--clock", "680", capture)
		lines := importedLines(t, imp.stdout)
		if imp.code != 0 || len(lines) != 1 {
			t.Fatalf("import: exit %d: %s", imp.code, imp.stderr)
		}
		imported := lines[0].id

		for id, want := range map[string]string{
			string(bench.ID):  "firmware RouterBOOT 2.41, announced 800 MHz\n",
			imported:          "firmware RouterBOOT 2.41, announced 680 MHz\n",
			string(direct.ID): "",
		} {
			show := bootbench(t, db, "results", "show", id)
			if show.code != 0 {
				t.Fatalf("results show %s: exit %d %s", id, show.code, show.stderr)
			}
			if got := firmwareShown(show.stdout); got != want {
				t.Errorf("results show %s: firmware line %q, want %q:\n%s", id, got, want, show.stdout)
			}
		}

		ex := bootbench(t, db, "results", "export", "--format", "csv")
		rows, err := csv.NewReader(strings.NewReader(ex.stdout)).ReadAll()
		if ex.code != 0 || err != nil {
			t.Fatalf("export csv: exit %d %s: %v", ex.code, ex.stderr, err)
		}
		if head := rows[0]; !strings.HasSuffix(strings.Join(head, ","), ",metric,unit,value,bootloader,firmware_clock_mhz") {
			t.Errorf("CSV header %q: want bootloader and firmware_clock_mhz after the columns there were", head)
		}
		csvWant := map[string][2]string{string(bench.ID): {"RouterBOOT 2.41", "800"}, imported: {"RouterBOOT 2.41", "680"}, string(direct.ID): {"", ""}}
		for _, row := range rows[1:] {
			if w := csvWant[row[0]]; row[len(row)-2] != w[0] || row[len(row)-1] != w[1] {
				t.Errorf("CSV row %q: want it to end %q", row, w)
			}
		}

		js := bootbench(t, db, "results", "export", "--format", "json")
		var doc struct {
			Runs []struct {
				ID               string `json:"id"`
				Bootloader       string `json:"bootloader"`
				FirmwareClockMHz int    `json:"firmware_clock_mhz"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(js.stdout), &doc); js.code != 0 || err != nil || len(doc.Runs) != 3 {
			t.Fatalf("export json: exit %d %s: %v:\n%s", js.code, js.stderr, err, js.stdout)
		}
		for _, r := range doc.Runs {
			if w := csvWant[r.ID]; r.Bootloader != w[0] || (r.FirmwareClockMHz == 0) != (w[1] == "") {
				t.Errorf("JSON run %s: bootloader %q at %d MHz, want %q at %q", r.ID, r.Bootloader, r.FirmwareClockMHz, w[0], w[1])
			}
		}
	})
}

// firmwareShown is results show's firmware line, "" when it has none.
func firmwareShown(show string) string {
	for _, l := range strings.SplitAfter(show, "\n") {
		if strings.HasPrefix(l, "firmware ") {
			return l
		}
	}
	return ""
}
