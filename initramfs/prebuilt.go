package initramfs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
)

// A prebuilt set is a directory of base images (u-root's init and benchinit
// for one target each) with a manifest, made by Prebuild from the source
// tree. A bootbench binary without the source or without Go builds its
// images from it: adding a benchmark and its libraries to a base needs
// neither. Build looks in Spec.Prebuilt if set, else in $BOOTBENCH_PREBUILT,
// in bootbench-images beside the running program (a release's layout), and
// in the image cache's "prebuilt" directory, where Prebuild writes by
// default.

// ManifestName is the prebuilt set's index file.
const ManifestName = "manifest.json"

// Manifest describes a prebuilt set.
type Manifest struct {
	// MadeBy is the bootbench build that made the set (its module version
	// or VCS revision), reported when an image comes from it.
	MadeBy string          `json:"made_by"`
	Images []PrebuiltImage `json:"images"`
}

// PrebuiltImage is one base image of a set.
type PrebuiltImage struct {
	Arch   string `json:"arch"`
	GOARM  string `json:"goarm,omitempty"`
	GOMIPS string `json:"gomips,omitempty"`
	File   string `json:"file"` // relative to the set's directory
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// PrebuiltDir is where a prebuilt set lives by default, for a cacheDir as
// Build takes it.
func PrebuiltDir(cacheDir string) string { return filepath.Join(cacheDir, "prebuilt") }

// DefaultTargets are the targets Prebuild makes when given none: every
// architecture with its default GOARM/GOMIPS, and ARMv7 besides.
func DefaultTargets() []Spec {
	var specs []Spec
	for _, a := range Arches {
		specs = append(specs, Spec{Arch: a})
		if a == "arm" {
			specs = append(specs, Spec{Arch: a, GOARM: "7"})
		}
	}
	return specs
}

// Prebuild builds the base image of each target from the source tree and
// writes them with their manifest to dir, replacing what a set there held
// for the same targets and keeping the others.
func Prebuild(ctx context.Context, targets []Spec, source, cacheDir, dir string, progress func(string)) (*Manifest, error) {
	if progress == nil {
		progress = func(string) {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("prebuilt set: %w", err)
	}
	m, err := ReadManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		m, err = &Manifest{}, nil
	}
	if err != nil {
		return nil, err
	}
	m.MadeBy = MadeBy()
	for _, t := range targets {
		t.Source = source
		spec, err := t.normalize()
		if err != nil {
			return nil, specError{err}
		}
		img, err := baseImage(ctx, spec, cacheDir, progress)
		if err != nil {
			return nil, err
		}
		name := "base-" + spec.variant() + ".cpio"
		if err := copyFile(img.Path, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("prebuilt set: %w", err)
		}
		progress(fmt.Sprintf("%s: %d bytes, sha256 %s", name, img.Size, img.Digest))
		m.Images = slices.DeleteFunc(m.Images, func(p PrebuiltImage) bool {
			return p.Arch == spec.Arch && p.GOARM == spec.GOARM && p.GOMIPS == spec.GOMIPS
		})
		m.Images = append(m.Images, PrebuiltImage{Arch: spec.Arch, GOARM: spec.GOARM, GOMIPS: spec.GOMIPS, File: name, SHA256: img.Digest, Size: img.Size})
	}
	slices.SortFunc(m.Images, func(a, b PrebuiltImage) int { return cmp.Compare(a.File, b.File) })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("prebuilt set: %w", err)
	}
	return m, nil
}

// ReadManifest reads the manifest of the prebuilt set in dir.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("prebuilt set %s: %w", dir, err)
	}
	return &m, nil
}

// prebuiltBase finds spec's base image in the prebuilt set and checks its
// bytes against the manifest.
func prebuiltBase(spec Spec, cacheDir string) (*Image, error) {
	dirs := prebuiltDirs(spec, cacheDir)
	var dir string
	var m *Manifest
	for _, d := range dirs {
		var err error
		m, err = ReadManifest(d)
		if err == nil {
			dir = d
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	if m == nil {
		return nil, fmt.Errorf("no prebuilt image set in %s (make one with 'bootbench image prebuild' in the source tree, or unpack a release's)", strings.Join(dirs, ", "))
	}
	var have []string
	for _, p := range m.Images {
		if p.Arch == spec.Arch && p.GOARM == spec.GOARM && p.GOMIPS == spec.GOMIPS {
			img, err := describe(filepath.Join(dir, p.File))
			if err != nil {
				return nil, err
			}
			if img.Digest != p.SHA256 {
				return nil, fmt.Errorf("prebuilt %s: sha256 %s, manifest says %s (a damaged set: make it again)", p.File, img.Digest, p.SHA256)
			}
			img.Prebuilt = m.MadeBy
			return img, nil
		}
		have = append(have, Spec{Arch: p.Arch, GOARM: p.GOARM, GOMIPS: p.GOMIPS}.variant())
	}
	return nil, fmt.Errorf("the prebuilt set in %s has no %s image (it has: %v)", dir, spec.variant(), have)
}

// prebuiltDirs are where a prebuilt set is looked for, in order.
func prebuiltDirs(spec Spec, cacheDir string) []string {
	if spec.Prebuilt != "" {
		return []string{spec.Prebuilt}
	}
	var dirs []string
	if d := os.Getenv("BOOTBENCH_PREBUILT"); d != "" {
		dirs = append(dirs, d)
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Join(filepath.Dir(exe), "bootbench-images"))
	}
	return append(dirs, PrebuiltDir(cacheDir))
}

// MadeBy names this bootbench build: its module version, or the VCS
// revision it was built from ("+dirty" when the tree had changes).
func MadeBy() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}
