package debpkg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bootbench/bootbench/internal/cachelock"
)

// Release is the Debian release whose source packages Source unpacks:
// Debian 12, the release of every package bootbench takes.
const Release = "bookworm"

// SourceTree is a Debian source package unpacked with its patches
// (debian/patches) applied, as dpkg-source leaves it for a package build.
type SourceTree struct {
	Name, Version string
	Dir           string // the unpacked tree, debian/ inside it
	// Skipped names newer versions whose files the mirror did not serve,
	// with why: the tree is then an older version the lists still name.
	Skipped []string
}

// sourceAPT is APT with a configuration of bootbench's own: a deb-src list
// made from the host's Debian 12 repositories, and lists and an archive
// cache under the cache directory. The host's sources, lists and dpkg
// state are only read, never written.
func sourceAPT(cacheDir string) (*apt, error) {
	for _, c := range []string{"apt-get", "apt-cache", "dpkg-source"} {
		if _, err := exec.LookPath(c); err != nil {
			return nil, fmt.Errorf("fetch Debian source packages: %s not found (this needs a Debian host with APT and dpkg-dev)", c)
		}
	}
	files, err := hostSourceFiles("/")
	if err != nil {
		return nil, err
	}
	list, err := sourceList(files, Release)
	if err != nil {
		return nil, err
	}
	return privateAPT(filepath.Join(cacheDir, "sources", "apt"), "", list)
}

// privateAPT is APT for arch ("" for source packages) with the sources
// list list and its own lists and archive cache under dir: nothing of the
// host's APT is written.
func privateAPT(dir, arch, list string) (*apt, error) {
	for _, d := range []string{"lists/partial", "archives/partial", "sources.list.d"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("package lists: %w", err)
		}
	}
	if err := writeIfChanged(filepath.Join(dir, "sources.list"), list); err != nil {
		return nil, err
	}
	return &apt{arch: arch, lists: filepath.Join(dir, "lists"), extra: []string{
		"-oDir::Etc::SourceList=" + filepath.Join(dir, "sources.list"),
		"-oDir::Etc::SourceParts=" + filepath.Join(dir, "sources.list.d"),
		"-oDir::Cache=" + dir, "-oDir::Cache::Archives=" + filepath.Join(dir, "archives"),
	}}, nil
}

func writeIfChanged(path, text string) error {
	if b, err := os.ReadFile(path); err == nil && string(b) == text {
		return nil
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// Source returns Debian 12's source package name, unpacked with its
// patches applied under cacheDir/sources/<name>_<version>: the newest
// version the lists name whose files the mirror serves. A version already
// unpacked is a lookup; the lists are updated when they know no version,
// or when a download fails (lists older than the archive name files it
// has dropped), and then the newest version is tried again.
func Source(ctx context.Context, cacheDir, name string) (*SourceTree, error) {
	a, err := sourceAPT(cacheDir)
	if err != nil {
		return nil, err
	}
	versions, err := a.sourceVersions(ctx, name)
	if err != nil {
		return nil, err
	}
	t, err := a.firstFetchable(ctx, cacheDir, name, versions, false)
	if !errors.Is(err, errStaleLists) {
		return t, err
	}
	if versions, err = a.relist(ctx, name); err != nil {
		return nil, err
	}
	return a.firstFetchable(ctx, cacheDir, name, versions, true)
}

// errStaleLists is a download that failed with lists not updated yet.
var errStaleLists = errors.New("download failed before the lists were updated")

// firstFetchable unpacks the first of versions (newest first) that is
// cached or can be fetched. With fresh lists, a version that cannot be
// fetched is marked so and passed over; otherwise its failure is
// errStaleLists, for the caller to update and ask again.
func (a *apt) firstFetchable(ctx context.Context, cacheDir, name string, versions []string, fresh bool) (*SourceTree, error) {
	t := &SourceTree{Name: name}
	for _, v := range versions {
		dir := filepath.Join(cacheDir, "sources", name+"_"+v)
		if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
			t.Version, t.Dir = v, filepath.Join(dir, "src")
			return t, nil
		}
		if why := unfetchable(dir); why != "" {
			t.Skipped = append(t.Skipped, v+": "+why)
			continue
		}
		// Under the version's lock: another bootbench may be unpacking
		// the same source, and one that waited finds it complete.
		err := cachelock.Once(ctx, dir+".lock", cachelock.Exists(filepath.Join(dir, ".complete")), nil, func() error { return a.unpackSource(ctx, name, v, dir) })
		switch {
		case err == nil:
			t.Version, t.Dir = v, filepath.Join(dir, "src")
			return t, nil
		case ctx.Err() != nil:
			return nil, err
		case !fresh:
			return nil, fmt.Errorf("%w: %v", errStaleLists, err)
		}
		markUnfetchable(dir, err)
		t.Skipped = append(t.Skipped, v+": "+oneLine(err.Error()))
	}
	return nil, fmt.Errorf("no version of source package %s could be fetched:\n  %s", name, strings.Join(t.Skipped, "\n  "))
}

func (a *apt) relist(ctx context.Context, name string) ([]string, error) {
	if err := a.update(ctx); err != nil {
		return nil, err
	}
	return a.sourceVersions(ctx, name)
}

// sourceVersions lists the versions of source package name the lists
// know, newest first, updating them first when they know none.
func (a *apt) sourceVersions(ctx context.Context, name string) ([]string, error) {
	vs, err := a.showSource(ctx, name)
	if err == nil && len(vs) > 0 {
		return vs, nil
	}
	if err := a.update(ctx); err != nil {
		return nil, err
	}
	vs, err = a.showSource(ctx, name)
	if err != nil || len(vs) == 0 {
		return nil, fmt.Errorf("the %s source lists name no source package %s (%v)", Release, name, err)
	}
	return vs, nil
}

func (a *apt) showSource(ctx context.Context, name string) ([]string, error) {
	out, err := a.run(ctx, "", "apt-cache", "showsrc", "--only-source", name)
	if err != nil {
		return nil, err
	}
	var vs []string
	seen := map[string]bool{}
	for _, p := range parseControl(out) {
		if p.Name == name && p.Version != "" && !seen[p.Version] {
			seen[p.Version] = true
			vs = append(vs, p.Version)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return CompareVersions(vs[i], vs[j]) > 0 })
	return vs, nil
}

// unpackSource downloads version v of source package name (its .dsc and
// the files it lists, checked against the signed Sources index) and
// unpacks it into dest/src with dpkg-source, which applies the patches.
// The tree arrives by one rename, so a reader sees all of it or nothing.
func (a *apt) unpackSource(ctx context.Context, name, v, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dest), ".src-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dl := filepath.Join(tmp, "dl")
	if err := os.Mkdir(dl, 0o755); err != nil {
		return err
	}
	if _, err := a.run(ctx, dl, "apt-get", "-qq", "source", "--download-only", name+"="+v); err != nil {
		return err
	}
	dscs, _ := filepath.Glob(filepath.Join(dl, "*.dsc"))
	if len(dscs) != 1 {
		return fmt.Errorf("apt-get source %s=%s left %d .dsc files", name, v, len(dscs))
	}
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "dpkg-source", "--no-copy", "-x", dscs[0], filepath.Join(root, "src"))
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg-source -x %s: %w: %s", filepath.Base(dscs[0]), err, lastLines(string(out), 3))
	}
	if err := os.WriteFile(filepath.Join(root, ".complete"), []byte(name+" "+v+"\n"), 0o644); err != nil {
		return err
	}
	os.RemoveAll(dest)
	os.Remove(dest + ".unfetchable")
	return os.Rename(root, dest)
}

// unfetchableFor is how long a version whose files the mirror refused is
// passed over without asking again: a mirror lagging behind its index
// catches up in hours, and asking on every image build would make a cached
// build wait on the network.
const unfetchableFor = 24 * time.Hour

func unfetchable(dir string) string {
	st, err := os.Stat(dir + ".unfetchable")
	if err != nil || time.Since(st.ModTime()) > unfetchableFor {
		return ""
	}
	b, _ := os.ReadFile(dir + ".unfetchable")
	return oneLine(string(b)) + " (at " + st.ModTime().UTC().Format(time.RFC3339) + "; asked again a day later)"
}

func markUnfetchable(dir string, why error) {
	os.WriteFile(dir+".unfetchable", []byte(oneLine(why.Error())+"\n"), 0o644)
}

// oneLine keeps APT's first error, which names the file that failed and
// why, without the command before it or the mirror's address ("[IP: ...]").
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if _, e, ok := strings.Cut(s, ": E: "); ok {
		s = e
	}
	if i := strings.Index(s, " [IP: "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
