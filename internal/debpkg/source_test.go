package debpkg

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestSourceList: the private deb-src list made from a host's APT sources
// (deb822 and one-line files, disabled stanzas and files, other releases
// and vendors) matches testdata/sourceslist/<case>.golden; a host with no
// Debian 12 repository is an error naming the release.
func TestSourceList(t *testing.T) {
	tests := []struct{ name, wantErr string }{
		{"deb822", ""},
		{"oneline", ""},
		{"none", "no Debian bookworm repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := hostSourceFiles(filepath.Join("testdata", "sourceslist", tt.name))
			if err != nil {
				t.Fatal(err)
			}
			got, err := sourceList(files, Release)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "sourceslist", tt.name+".golden")
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("sources list:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
}

// TestCompareVersions orders versions as dpkg does; where dpkg is on the
// host, each pair is also checked against dpkg --compare-versions itself.
func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"3.0.22-1~deb12u2", "3.0.20-1~deb12u2", 1},
		{"3.0.9-1", "3.0.22-1~deb12u2", -1},
		{"3.0.20-1~deb12u2", "3.0.20-1", -1},
		{"3.0.20-1+deb12u1", "3.0.20-1", 1},
		{"3.0.20-1", "3.0.20-1", 0},
		{"1:1.0", "2.0", 1},
		{"1.0~rc1", "1.0", -1},
		{"1.0a", "1.0", 1},
		{"1.0a", "1.0+", -1},
		{"1.0-1", "1.0", 1},
		{"1.01", "1.1", 0},
		{"2.10-3", "2.9-3", 1},
		{"6.1.158-1", "6.1.162-1", -1},
		{"3.0.2-0ubuntu1.10", "3.0.2-0ubuntu1.9", 1},
	}
	_, dpkgErr := exec.LookPath("dpkg")
	for _, tt := range tests {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := CompareVersions(tt.b, tt.a); got != -tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
		if dpkgErr == nil && tt.want != 0 {
			op := map[int]string{1: "gt", -1: "lt"}[tt.want]
			if err := exec.Command("dpkg", "--compare-versions", tt.a, op, tt.b).Run(); err != nil {
				t.Errorf("dpkg says %q is not %s %q: the table is wrong", tt.a, op, tt.b)
			}
		}
	}
}
