package boards

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

// TestANewBoardIsOneFile: a board model is one YAML file in profiles/;
// with testdata's RB433 beside the shipped profiles it is listed, its
// clocks are held to what its firmware offers, and its tested twin is
// found, with nothing else naming it.
func TestANewBoardIsOneFile(t *testing.T) {
	fsys := fstest.MapFS{}
	shipped, err := fs.Glob(profileFS, "profiles/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range shipped {
		b, err := profileFS.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fsys[f] = &fstest.MapFile{Data: b}
	}
	b, err := os.ReadFile("testdata/newboard/rb433.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fsys["profiles/rb433.yaml"] = &fstest.MapFile{Data: b}

	ps, err := parseAll(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != len(shipped)+1 {
		t.Fatalf("%d profiles, want the %d shipped and the new one", len(ps), len(shipped))
	}
	var p *Profile
	for i := range ps {
		if ps[i].Name == "rb433" {
			p = &ps[i]
		}
	}
	if p == nil {
		t.Fatal("rb433 not among the profiles")
	}
	if !p.ClockMethod.SetInFirmware() || p.CheckClock(300) != nil || p.CheckClock(400) == nil {
		t.Errorf("rb433's clocks: set in firmware %v, 300 MHz %v, 400 MHz %v; want 300 taken through the menu, 400 refused",
			p.ClockMethod.SetInFirmware(), p.CheckClock(300), p.CheckClock(400))
	}
	if err := p.Unsupported(); err != nil {
		t.Errorf("rb433 is not supported: %v", err)
	}

	// A twin it names that no profile is refuses the whole set.
	bad := []byte(string(b) + "    - board: qemu-rb433\n      covers: nothing\n")
	fsys["profiles/rb433.yaml"] = &fstest.MapFile{Data: bad}
	if _, err := parseAll(fsys); err == nil {
		t.Error("a profile naming a twin that does not exist was taken")
	}
}
