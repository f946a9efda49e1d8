package initramfs

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bootbench/bootbench/benchmark"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/u-root/mkuimage/cpio"
)

func source(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestBuildAmd64 builds a real image, checks what is in it, and that a second
// build of the same inputs is a cache hit with the same bytes.
func TestBuildAmd64(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs for the board")
	}
	cache := t.TempDir()
	ctx := context.Background()
	img, err := Build(ctx, Spec{Arch: "amd64", Source: source(t)}, cache)
	if err != nil {
		t.Fatal(err)
	}
	if img.Cached {
		t.Error("first build reported as cached")
	}
	recs := readCPIO(t, img.Path)
	for _, name := range []string{"init", "bbin/bb", "bbin/init", "bbin/benchinit", "bin/uinit", "dev/console"} {
		if _, ok := recs[name]; !ok {
			t.Errorf("image lacks %s", name)
		}
	}
	if r, ok := recs["bin/uinit"]; ok {
		target, _ := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
		resolved := string(target)
		if !path.IsAbs(resolved) {
			resolved = path.Join("/bin", resolved)
		}
		if resolved != "/bbin/benchinit" {
			t.Errorf("bin/uinit -> %q, want /bbin/benchinit", target)
		}
	}
	// Nothing else runs on the board: the busybox holds u-root's init and
	// benchinit, one program with one Go runtime.
	for name := range recs {
		if strings.HasPrefix(name, "bbin/") && name != "bbin/init" && name != "bbin/benchinit" && name != "bbin/bb" {
			t.Errorf("unexpected command in image: %s", name)
		}
	}

	again, err := Build(ctx, Spec{Arch: "amd64", Source: source(t)}, cache)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Digest != img.Digest {
		t.Errorf("rebuild: cached %v digest %s, want a cache hit with %s", again.Cached, again.Digest, img.Digest)
	}
}

// readCPIO returns the records of the archive at p by name.
func readCPIO(t *testing.T, p string) map[string]cpio.Record {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	rr := cpio.Newc.Reader(bytes.NewReader(b))
	recs := map[string]cpio.Record{}
	for {
		rec, err := rr.ReadRecord()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs[rec.Name] = rec
	}
	return recs
}

func content(t *testing.T, r cpio.Record) []byte {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(r.ReaderAt, 0, int64(r.FileSize)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sharedCache is where the every-architecture test keeps its images, across
// runs: the same as the command's, so each architecture is built once.
func sharedCache(t *testing.T) string {
	if d := os.Getenv("BOOTBENCH_CACHE"); d != "" {
		return filepath.Join(d, "images")
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return filepath.Join(d, "bootbench", "images")
}

// TestBuildEveryArch builds the image for every architecture and checks
// that the busybox holding init and benchinit is a binary for that board: ELF machine, class and
// byte order, GOARM/GOMIPS as recorded by the Go build, and for MIPS the
// soft-float ABI in its .MIPS.abiflags, which is what the kernel looks at.
func TestBuildEveryArch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs for every board")
	}
	cache := sharedCache(t)
	src := source(t)
	for _, arch := range Arches {
		t.Run(arch, func(t *testing.T) {
			spec := Spec{Arch: arch, Source: src}
			img, err := Build(context.Background(), spec, cache)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d bytes, %s, cached %v", arch, img.Size, img.Took.Round(time.Millisecond), img.Cached)
			recs := readCPIO(t, img.Path)
			if _, ok := recs["init"]; !ok {
				t.Error("image lacks init")
			}
			r, ok := recs["bbin/bb"]
			if !ok {
				t.Fatal("image lacks bbin/bb")
			}
			bin := filepath.Join(t.TempDir(), "benchinit")
			if err := os.WriteFile(bin, content(t, r), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := elfTargets[arch]
			if f.Machine != want.machine || f.Class != want.class || f.ByteOrder != want.order {
				t.Errorf("benchinit is %v %v %v, want %v %v %v", f.Machine, f.Class, f.ByteOrder, want.machine, want.class, want.order)
			}
			bi, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			wantSettings := map[string]string{"GOARCH": arch, "GOOS": "linux", "CGO_ENABLED": "0"}
			switch arch {
			case "arm":
				wantSettings["GOARM"] = DefaultGOARM
			case "mips", "mipsle":
				wantSettings["GOMIPS"] = "softfloat"
			case "amd64":
				wantSettings["GOAMD64"] = "v1"
			}
			for k, v := range wantSettings {
				if settings[k] != v {
					t.Errorf("benchinit built with %s=%q, want %q", k, settings[k], v)
				}
			}
			if arch == "mips" || arch == "mipsle" {
				if fp := mipsFPABI(t, f); fp != mipsFPABISoft {
					t.Errorf("benchinit's .MIPS.abiflags fp_abi = %d, want %d (soft float)", fp, mipsFPABISoft)
				}
			}
			again, err := Build(context.Background(), spec, cache)
			if err != nil {
				t.Fatal(err)
			}
			if !again.Cached || again.Digest != img.Digest {
				t.Errorf("rebuild: cached %v digest %s, want a cache hit with %s", again.Cached, again.Digest, img.Digest)
			}
		})
	}
}

// MIPS_FPABI_SOFT in Elf_Internal_ABIFlags_v0.fp_abi, the byte at offset 7
// of .MIPS.abiflags.
const mipsFPABISoft = 3

func mipsFPABI(t *testing.T, f *elf.File) int {
	t.Helper()
	s := f.SectionByType(elf.SHT_MIPS_ABIFLAGS)
	if s == nil {
		t.Fatal("no .MIPS.abiflags section")
	}
	b, err := s.Data()
	if err != nil || len(b) < 8 {
		t.Fatalf(".MIPS.abiflags: %d bytes, %v", len(b), err)
	}
	return int(b[7])
}

// TestBuildOpenSSL builds the host architecture's image with the host's
// openssl and checks it runs from exactly what the image holds: its files
// are unpacked into an empty directory and openssl speed runs chrooted
// there, as it will on the board.
func TestBuildOpenSSL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs for the board")
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl on this host")
	}
	// The base image is any build's (TestBuildAmd64 checks a cold one).
	img, err := Build(context.Background(), Spec{Arch: runtime.GOARCH, Source: source(t), Bench: benchmark.OpenSSL}, sharedCache(t))
	if err != nil {
		t.Fatal(err)
	}
	recs := readCPIO(t, img.Path)
	var spec bootparam.BenchSpec
	if r, ok := recs[benchSpecImg]; !ok {
		t.Fatalf("image lacks %s", bootparam.BenchSpecPath)
	} else if err := json.Unmarshal(content(t, r), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Name != "openssl" || len(spec.Argv) < 2 || spec.Argv[0] != "/bin/openssl" || spec.Argv[1] != "speed" || !slicesHasSuffix(spec.Argv, OpenSSLArgs[1:]) {
		t.Errorf("bench spec %+v, want /bin/openssl ... %q", spec, OpenSSLArgs)
	}
	root := t.TempDir()
	if err := cpio.ForEachRecord(cpio.Newc.Reader(bytes.NewReader(mustRead(t, img.Path))), func(r cpio.Record) error {
		return cpio.CreateFileInRoot(r, root, false)
	}); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: cannot chroot to run openssl from the image's files")
		return
	}
	argv := bootparam.BenchSpec(spec).Command(bootparam.Params{Seconds: time.Second})
	// md5 and des (from the legacy provider) only, to keep it short.
	var short []string
	for _, a := range argv {
		if a == "sha1" {
			break
		}
		short = append(short, a)
	}
	short = append(short, "des")
	out, err := exec.Command("chroot", append([]string{root}, short...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl in the image's files: %v\n%s", err, out)
	}
	for _, want := range []string{"md5 ", "des-cbc "} {
		if !regexpLine(string(out), want) {
			t.Errorf("openssl output lacks a %q line with figures:\n%s", want, out)
		}
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// regexpLine reports whether out has a line starting with prefix whose
// first figure is not zero (openssl prints zeros for what it cannot run).
func regexpLine(out, prefix string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(strings.TrimPrefix(l, prefix)); strings.HasPrefix(l, prefix) && len(f) > 0 && f[0] != "0.00" {
			return true
		}
	}
	return false
}

func slicesHasSuffix(s, suffix []string) bool {
	return len(s) >= len(suffix) && reflect.DeepEqual(s[len(s)-len(suffix):], suffix)
}

func TestBuildRejectsArch(t *testing.T) {
	tests := []struct{ arch, want string }{
		{"sparc", "supported: amd64"},
		{"ppc", "no 32-bit PowerPC port"},
	}
	for _, tt := range tests {
		_, err := Build(context.Background(), Spec{Arch: tt.arch, Source: source(t)}, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("arch %s: err %v, want %q", tt.arch, err, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   Spec
		want Spec // compared when err is ""
		err  string
	}{
		{"arm defaults to ARMv5", Spec{Arch: "arm"}, Spec{Arch: "arm", GOARM: "5", Bench: "speed"}, ""},
		{"arm 7", Spec{Arch: "arm", GOARM: "7"}, Spec{Arch: "arm", GOARM: "7", Bench: "speed"}, ""},
		{"mips defaults to softfloat", Spec{Arch: "mips"}, Spec{Arch: "mips", GOMIPS: "softfloat", Bench: "speed"}, ""},
		{"mipsle hardfloat", Spec{Arch: "mipsle", GOMIPS: "hardfloat"}, Spec{Arch: "mipsle", GOMIPS: "hardfloat", Bench: "speed"}, ""},
		{"openssl", Spec{Arch: "amd64", Bench: "openssl"}, Spec{Arch: "amd64", Bench: "openssl"}, ""},
		{"bad GOARM", Spec{Arch: "arm", GOARM: "8"}, Spec{}, "want 5, 6 or 7"},
		{"GOARM off arm", Spec{Arch: "arm64", GOARM: "7"}, Spec{}, "GOARM applies to arm"},
		{"bad GOMIPS", Spec{Arch: "mips", GOMIPS: "soft"}, Spec{}, "want softfloat or hardfloat"},
		{"GOMIPS off mips", Spec{Arch: "mips64", GOMIPS: "softfloat"}, Spec{}, "GOMIPS applies to mips and mipsle"},
		{"powerpc", Spec{Arch: "powerpc"}, Spec{}, "no 32-bit PowerPC port"},
		{"unknown", Spec{Arch: "sparc64"}, Spec{}, "supported: amd64, 386"},
		{"command for speed", Spec{Arch: "amd64", BenchCmd: "/bin/x"}, Spec{}, `"speed" is built into benchinit`},
		{"command for route", Spec{Arch: "amd64", Bench: "route", BenchCmd: "/bin/x"}, Spec{}, `"route" is built into benchinit`},
		{"name without command", Spec{Arch: "amd64", Bench: "iperf3"}, Spec{}, `bench "iperf3" is not built in`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.normalize()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"/bin/openssl speed -seconds {seconds} md5", []string{"/bin/openssl", "speed", "-seconds", "{seconds}", "md5"}, ""},
		{"  a\tb\n c  ", []string{"a", "b", "c"}, ""},
		{`a 'b c' "d e"`, []string{"a", "b c", "d e"}, ""},
		{`a'b'"c"d`, []string{"abcd"}, ""},
		{`"say \"hi\" \\ \n" 'no \escape'`, []string{`say "hi" \ \n`, `no \escape`}, ""},
		{`a\ b \'c`, []string{"a b", "'c"}, ""},
		{`'' ""`, []string{"", ""}, ""},
		{`$HOME *.txt ;`, []string{"$HOME", "*.txt", ";"}, ""},
		{`a 'b`, nil, "unterminated ' quote"},
		{`a "b`, nil, `unterminated " quote`},
		{`a \`, nil, "trailing backslash"},
		{"  ", nil, "empty command"},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SplitWords(%q): err %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestCheckFit(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name                         string
		ram, kernel, image, unpacked int64
		err                          []string // substrings; none = fits
	}{
		{"32 MiB router, xz image", 32 * mib, 5 * mib, 2 * mib, 7 * mib, nil},
		{"no RAM given", 0, 100 * mib, 100 * mib, 100 * mib, nil},
		{"16 MiB router", 16 * mib, 5 * mib, 2 * mib, 7 * mib, []string{
			"does not fit in 16.0 MiB of RAM", "kernel 5.0 MiB", "image 2.0 MiB", "unpacked 7.0 MiB",
			"working margin 3.5 MiB", "= 17.5 MiB", "must stay within 7.5 MiB", "the board needs 18.0 MiB"}},
		// What the WRT54G's twin measured: it booted at 16 MiB and
		// deadlocked on memory at 15.
		{"the twin at 16 MiB", 16 * mib, 5675568, 1832718, 5197532, nil},
		{"the twin at 15 MiB", 15 * mib, 5675568, 1832718, 5197532, []string{"working margin 3.5 MiB", "the board needs 16.0 MiB"}},
		{"kernel alone too big", 16 * mib, 13 * mib, 1 * mib, 3 * mib, []string{"the kernel and margin alone do not fit"}},
		{"kernel unknown", 16 * mib, 0, 5 * mib, 8 * mib, []string{"kernel not counted"}},
		{"exactly full", 16 * mib, 0, 4 * mib, 8*mib + mib/2, nil},
	}
	for _, tt := range tests {
		err := CheckFit(tt.ram, tt.kernel, tt.image, tt.unpacked)
		if len(tt.err) == 0 {
			if err != nil {
				t.Errorf("%s: %v, want a fit", tt.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: fits, want %q", tt.name, tt.err)
			continue
		}
		for _, want := range tt.err {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v\nlacks %q", tt.name, err, want)
			}
		}
	}
	// What minRAM says fits must fit.
	for _, used := range []int64{0, 1, 7*mib + 3, 100 * mib} {
		if err := CheckFit(minRAM(used), used, 0, 0); err != nil {
			t.Errorf("minRAM(%d) = %d does not fit: %v", used, minRAM(used), err)
		}
	}
}

// TestGather checks what a spec adds to the image and what it refuses,
// with fake ELF files for a board that is not the host.
func TestGather(t *testing.T) {
	root := t.TempDir()
	other := "mipsle"
	if runtime.GOARCH == "mipsle" {
		other = "arm64"
	}
	interp := "/lib/ld.so.1"
	tree(t, root, map[string]any{
		"host/iperf3":                   fakeELF{arch: other, interp: interp, needed: []string{"libiperf.so.0"}},
		"host/static":                   fakeELF{arch: other},
		"host/link":                     "->static",
		"host/script.sh":                "#!/bin/sh\n",
		"sysroot" + interp:              fakeELF{arch: other},
		"sysroot/usr/lib/libiperf.so.0": fakeELF{arch: other},
		"bare" + interp:                 fakeELF{arch: other},
	})
	h := func(p string) string { return filepath.Join(root, "host", p) }
	sysroot := filepath.Join(root, "sysroot")
	tests := []struct {
		name  string
		spec  Spec
		files []string // image paths
		libs  int
		bench string // bench.json
		err   string
	}{
		{"speed adds nothing", Spec{Bench: "speed"}, nil, 0, "", ""},
		{"external with libraries", Spec{Bench: "iperf3", BenchCmd: "/bin/iperf3 -c 10.0.0.1 -t {seconds}", Add: []string{h("iperf3") + ":/bin/iperf3"}, Sysroot: sysroot},
			[]string{"bin/iperf3", "lib/ld.so.1", "usr/lib/libiperf.so.0"}, 2,
			`{"name":"iperf3","argv":["/bin/iperf3","-c","10.0.0.1","-t","{seconds}"]}` + "\n", ""},
		{"symlink added as its target's bytes", Spec{Bench: "speed", Add: []string{h("link") + ":bin/static", h("script.sh") + ":etc/x.sh"}},
			[]string{"bin/static", "etc/x.sh"}, 0, "", ""},
		{"dynamic without sysroot", Spec{Bench: "speed", Add: []string{h("iperf3") + ":bin/iperf3"}}, nil, 0, "", h("iperf3") + " is dynamically linked"},
		{"library missing", Spec{Bench: "speed", Add: []string{h("iperf3") + ":bin/iperf3"}, Sysroot: filepath.Join(root, "bare")}, nil, 0, "", "libiperf.so.0 (needed by " + h("iperf3") + ") not found in sysroot"},
		{"wrong architecture", Spec{Arch: "riscv64", Bench: "speed", Add: []string{h("static") + ":bin/x"}}, nil, 0, "", "not for riscv64"},
		{"missing file", Spec{Bench: "speed", Add: []string{h("nope") + ":bin/x"}}, nil, 0, "", "no such file"},
		{"no IMG", Spec{Bench: "speed", Add: []string{h("static")}}, nil, 0, "", "want HOST:IMG"},
		{"same IMG twice", Spec{Bench: "speed", Add: []string{h("static") + ":bin/x", h("script.sh") + ":/bin/x"}}, nil, 0, "", "would be /bin/x"},
		{"command not in image", Spec{Bench: "x", BenchCmd: "/bin/x", Add: []string{h("static") + ":bin/y"}}, nil, 0, "", "runs /bin/x, which nothing added puts in the image"},
		{"relative command", Spec{Bench: "x", BenchCmd: "x", Add: []string{h("static") + ":bin/x"}}, nil, 0, "", "not an absolute path"},
		{"bad command", Spec{Bench: "x", BenchCmd: "/bin/x 'a"}, nil, 0, "", "unterminated"},
		{"openssl where Debian has none", Spec{Arch: "riscv64", Bench: "openssl"}, nil, 0, "", "Debian 12 has no riscv64 packages"},
		{"openssl with a sysroot of one's own", Spec{Bench: "openssl", Sysroot: sysroot}, nil, 0, "", "bench openssl brings its own openssl"},
		{"bench.json taken", Spec{Bench: "x", BenchCmd: "/bin/x", Add: []string{h("static") + ":bin/x", h("script.sh") + ":etc/bootbench/bench.json"}}, nil, 0, "", "is where the image describes its benchmark"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.Arch == "" {
				tt.spec.Arch = other
			}
			c, err := gather(context.Background(), tt.spec, t.TempDir())
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, f := range c.files {
				files = append(files, f.img)
			}
			if !reflect.DeepEqual(files, tt.files) || c.libs != tt.libs || string(c.bench) != tt.bench {
				t.Errorf("got %q (%d libraries), bench %q\nwant %q (%d), %q", files, c.libs, c.bench, tt.files, tt.libs, tt.bench)
			}
		})
	}
}

// TestInputDigest: the key follows the added files' bytes and the bench,
// not where the files came from.
func TestInputDigest(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("same bytes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := source(t)
	key := func(s Spec) string {
		t.Helper()
		s.Arch, s.Source = "mipsle", src
		s, err := s.normalize()
		if err != nil {
			t.Fatal(err)
		}
		c, err := gather(context.Background(), s, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		b, err := baseDigest(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return imageDigest(&Image{Digest: b}, s, c)
	}
	base := key(Spec{Add: []string{a + ":etc/data"}})
	if k := key(Spec{Add: []string{a + ":etc/data"}}); k != base {
		t.Error("same inputs, different keys")
	}
	if k := key(Spec{Add: []string{b + ":etc/data"}}); k != base {
		t.Error("the same bytes from another host path changed the key")
	}
	if k := key(Spec{GOMIPS: "softfloat", Add: []string{a + ":etc/data"}}); k != base {
		t.Error("spelling out the default GOMIPS changed the key")
	}
	for name, s := range map[string]Spec{
		"path in image": {Add: []string{a + ":etc/other"}},
		"no file":       {},
		"hardfloat":     {GOMIPS: "hardfloat", Add: []string{a + ":etc/data"}},
		"bench":         {Bench: "x", BenchCmd: "/etc/data", Add: []string{a + ":etc/data"}},
	} {
		if key(s) == base {
			t.Errorf("%s: key unchanged", name)
		}
	}
	if err := os.WriteFile(a, []byte("other bytes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key(Spec{Add: []string{a + ":etc/data"}}) == base {
		t.Error("changing the added file's content kept the key")
	}
}
