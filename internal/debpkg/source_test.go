package debpkg

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			golden(t, filepath.Join("testdata", "sourceslist", tt.name+".golden"), got)
		})
	}
}

// golden compares a sources list with the golden file at path (-update
// rewrites it).
func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("sources list:\n%s\nwant (%s):\n%s", got, path, want)
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

// TestFirstFetchable: a cached version is taken without asking APT, a
// version the mirror refused within the day is passed over with its
// reason, and a download that fails is errStaleLists before the lists are
// updated and marks the version unfetchable after.
func TestFirstFetchable(t *testing.T) {
	versions := []string{"3.0.22-1~deb12u2", "3.0.20-1~deb12u2"}
	cache := func(t *testing.T, complete, refused string, refusedAt time.Time) string {
		dir := t.TempDir()
		if complete != "" {
			os.MkdirAll(filepath.Join(dir, "sources", "openssl_"+complete, "src"), 0o755)
			os.WriteFile(filepath.Join(dir, "sources", "openssl_"+complete, ".complete"), nil, 0o644)
		}
		if refused != "" {
			m := filepath.Join(dir, "sources", "openssl_"+refused+".unfetchable")
			os.MkdirAll(filepath.Dir(m), 0o755)
			os.WriteFile(m, []byte("E: Failed to fetch http://mirror.example/openssl.dsc  404  Not Found [IP: 192.0.2.1 80]\n"), 0o644)
			os.Chtimes(m, refusedAt, refusedAt)
		}
		return dir
	}
	// An APT that can fetch nothing: an empty sources list of its own.
	noSources := func(t *testing.T) *apt {
		if _, err := exec.LookPath("apt-get"); err != nil {
			t.Skip("no apt-get")
		}
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, "sources.list"), nil, 0o644)
		os.MkdirAll(filepath.Join(d, "lists", "partial"), 0o755)
		return &apt{lists: filepath.Join(d, "lists"), extra: []string{"-oDir::Etc::SourceList=" + filepath.Join(d, "sources.list"), "-oDir::Etc::SourceParts=" + d, "-oDir::Cache=" + d}}
	}
	t.Run("newest cached", func(t *testing.T) {
		got, err := (&apt{}).firstFetchable(context.Background(), cache(t, versions[0], "", time.Time{}), "openssl", versions, false)
		if err != nil || got.Version != versions[0] || len(got.Skipped) != 0 {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
	t.Run("newest refused today", func(t *testing.T) {
		got, err := (&apt{}).firstFetchable(context.Background(), cache(t, versions[1], versions[0], time.Now()), "openssl", versions, false)
		if err != nil || got.Version != versions[1] || len(got.Skipped) != 1 || !strings.Contains(got.Skipped[0], "404  Not Found (at ") || strings.Contains(got.Skipped[0], "[IP:") {
			t.Fatalf("got %+v, %v", got, err)
		}
	})
	t.Run("refused two days ago, stale lists", func(t *testing.T) {
		dir := cache(t, versions[1], versions[0], time.Now().Add(-48*time.Hour))
		_, err := noSources(t).firstFetchable(context.Background(), dir, "openssl", versions, false)
		if !errors.Is(err, errStaleLists) {
			t.Fatalf("err = %v, want errStaleLists", err)
		}
	})
	t.Run("fresh lists, nothing fetchable", func(t *testing.T) {
		dir := cache(t, "", "", time.Time{})
		_, err := noSources(t).firstFetchable(context.Background(), dir, "openssl", versions, true)
		if err == nil || !strings.Contains(err.Error(), "no version of source package openssl could be fetched") {
			t.Fatalf("err = %v", err)
		}
		for _, v := range versions {
			if unfetchable(filepath.Join(dir, "sources", "openssl_"+v)) == "" {
				t.Errorf("%s not marked unfetchable", v)
			}
		}
	})
}
