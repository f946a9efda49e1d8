package speed

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestFormatTables(t *testing.T) {
	// Figures chosen to hit both of openssl's number styles (k above
	// 10000 B/s, plain bytes with a trailing space at or below), a zero
	// (not run), and names longer than the 13-character column.
	sizes := []int{16, 64, 256, 1024, 8192, 16384}
	tput := []tputResult{
		{name: "md5", rates: []float64{840670, 2944730, 8517460, 16160430, 19006120, 19100000}},
		{name: "aes-128-cbc", rates: []float64{1016283200, 1326268970, 1404890560, 1416879070, 1432342240, 1395849240}},
		{name: "des-ede3", rates: []float64{9999.5, 10000, 10000.01, 0, 123456789012, 1}},
		{name: "camellia-128-cbc", rates: []float64{1, 2, 3, 4, 5, 6}},
	}
	pkeys := []pkeyResult{
		{alg: findPkey("rsa2048"), rates: []float64{2930.5, 51867}},
		{alg: findPkey("dsa2048"), rates: []float64{2578.8, 2646.9}},
		{alg: findPkey("ecdsap256"), rates: []float64{45741.5, 16430.2}},
		{alg: findPkey("ecdhp256"), rates: []float64{19567.4}},
		{alg: findPkey("ed25519"), rates: []float64{21135.4, 9966}},
		{alg: findPkey("rsa2048"), rates: []float64{0, 3}},
	}
	tests := []struct {
		name   string
		sizes  []int
		tput   []tputResult
		pkeys  []pkeyResult
		golden string
	}{
		{"all", sizes, tput, pkeys, "tables-all.golden"},
		{"throughput only", sizes, tput[:2], nil, "tables-throughput.golden"},
		{"public key only", sizes, nil, pkeys[:1], "tables-pkey.golden"},
		{"openwrt 0.9.8 sizes", []int{16, 64, 256, 1024, 2048}, []tputResult{{name: "md5", rates: []float64{840670, 2944730, 8517460, 16160430, 19006120}}}, nil, "tables-2048.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, tt.golden, formatTables(tt.sizes, tt.tput, tt.pkeys))
		})
	}
}

// rowRE matches a throughput row as openssl prints it.
var rowRE = regexp.MustCompile(`^(\S+)((?:\s+[0-9]+\.[0-9]{2}k?)+)\s*$`)

func TestRunShort(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		rows  []string
		sizes []int
		pkeys []string // expected public-key row prefixes
	}{
		{"md5", Options{Algorithms: []string{"md5"}, BlockSizes: []int{16, 64}, Duration: 10 * time.Millisecond}, []string{"md5"}, []int{16, 64}, nil},
		{"default sizes", Options{Algorithms: []string{"sha256", "AES-128-CBC", "sha256"}, Duration: 5 * time.Millisecond}, []string{"sha256", "aes-128-cbc"}, DefaultBlockSizes, nil},
		{"every throughput alg", Options{Algorithms: throughputNames(), BlockSizes: []int{16}, Duration: time.Millisecond}, throughputRows(), []int{16}, nil},
		{"aead", Options{Algorithms: []string{"chacha20-poly1305", "aes-128-gcm"}, BlockSizes: []int{16, 8192}, Duration: time.Millisecond}, []string{"ChaCha20-Poly1305", "AES-128-GCM"}, []int{16, 8192}, nil},
		{"public key", Options{Algorithms: []string{"ed25519", "ecdhp256", "rsa2048", "ecdsap256"}, Duration: 10 * time.Millisecond}, nil, nil,
			[]string{" 253 bits EdDSA (Ed25519) ", " 256 bits ecdh (nistp256) ", "rsa 2048 bits ", " 256 bits ecdsa (nistp256) "}},
		{"rsa sizes", Options{Algorithms: []string{"rsa1024", "rsa4096"}, Duration: time.Millisecond}, nil, nil,
			[]string{"rsa 1024 bits ", "rsa 4096 bits "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Run(context.Background(), &out, tt.opts); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if want := "version: bootbench-speed " + Version + " (go"; !strings.HasPrefix(lines[0], want) {
				t.Errorf("first line %q, want prefix %q", lines[0], want)
			}
			var rows []string
			var pkeyRows []string
			sawType := false
			for _, line := range lines {
				switch {
				case strings.HasPrefix(line, "type "):
					sawType = true
					f := strings.Fields(line)
					var got []int
					for i := 1; i+1 < len(f); i += 2 {
						n, _ := strconv.Atoi(f[i])
						got = append(got, n)
					}
					if !slices.Equal(got, tt.sizes) {
						t.Errorf("type line %q: sizes %v, want %v", line, got, tt.sizes)
					}
				case sawType && rowRE.MatchString(line):
					m := rowRE.FindStringSubmatch(line)
					rows = append(rows, m[1])
					vals := strings.Fields(m[2])
					if len(vals) != len(tt.sizes) {
						t.Errorf("row %q: %d values, want %d", line, len(vals), len(tt.sizes))
					}
					for _, v := range vals {
						if f, err := strconv.ParseFloat(strings.TrimSuffix(v, "k"), 64); err != nil || f <= 0 {
							t.Errorf("row %q: value %q is not a positive number", line, v)
						}
					}
				case strings.Contains(line, " bits ") && !strings.HasPrefix(line, "Doing "):
					pkeyRows = append(pkeyRows, line)
				}
			}
			if !slices.Equal(rows, tt.rows) {
				t.Errorf("rows %v, want %v\n%s", rows, tt.rows, out.String())
			}
			if len(pkeyRows) != len(tt.pkeys) {
				t.Fatalf("public-key rows %q, want %d\n%s", pkeyRows, len(tt.pkeys), out.String())
			}
			for i, row := range pkeyRows {
				if !strings.HasPrefix(row, tt.pkeys[i]) {
					t.Errorf("public-key row %q, want prefix %q", row, tt.pkeys[i])
				}
				f := strings.Fields(row)
				if v, err := strconv.ParseFloat(f[len(f)-1], 64); err != nil || v <= 0 {
					t.Errorf("public-key row %q: last rate not positive", row)
				}
			}
		})
	}
}

// throughputRows are the row names openssl prints for throughputNames.
func throughputRows() []string {
	var names []string
	for _, a := range throughputAlgs {
		names = append(names, a.printed())
	}
	return names
}

// TestShippedTestKeys checks each shipped key has the size its row claims
// (the progress lines print the key's size, the table the algorithm's) and
// that its operations work.
func TestShippedTestKeys(t *testing.T) {
	first := map[string]string{"rsa": "Doing %d bits private rsa's", "dsa": "Doing %d bits sign dsa's"}
	for _, a := range pkeyAlgs {
		if first[a.family] == "" {
			continue
		}
		t.Run(a.name, func(t *testing.T) {
			ops, err := a.setup()
			if err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(first[a.family], a.bits)
			if len(ops) != 2 || ops[0].doing != want {
				t.Fatalf("first operation %q, want %q", ops[0].doing, want)
			}
			for _, op := range ops {
				if err := op.run(); err != nil {
					t.Errorf("%s: %v", op.doing, err)
				}
			}
		})
	}
}

func throughputNames() []string {
	var names []string
	for _, a := range throughputAlgs {
		names = append(names, a.name)
	}
	return names
}

func TestRunBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string // substrings of the error
	}{
		{"unknown algorithm", Options{Algorithms: []string{"md5", "md2"}}, []string{`"md2"`, "supported:", "aes-128-cbc", "sha256"}},
		{"empty algorithms", Options{Algorithms: []string{}}, []string{"no algorithms"}},
		{"zero block size", Options{BlockSizes: []int{16, 0}}, []string{"block size 0"}},
		{"partial cipher block", Options{Algorithms: []string{"md5", "des-cbc"}, BlockSizes: []int{12}}, []string{"12", "des-cbc", "8-byte"}},
		{"negative duration", Options{Duration: -time.Second}, []string{"negative duration"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Run(context.Background(), &out, tt.opts)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if out.Len() != 0 {
				t.Errorf("wrote %q before failing", out.String())
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	var out bytes.Buffer
	err := Run(ctx, &out, Options{Duration: time.Hour})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to notice the cancellation", d)
	}
	if strings.Contains(out.String(), "type ") {
		t.Errorf("printed a table after cancellation:\n%s", out.String())
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errors.New("serial gone")
	}
	f.n--
	return len(p), nil
}

func TestRunWriteError(t *testing.T) {
	err := Run(context.Background(), &failWriter{n: 2}, Options{Algorithms: []string{"md5"}, Duration: time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "serial gone") {
		t.Fatalf("err = %v, want the write error", err)
	}
}

func TestAlgorithms(t *testing.T) {
	all := Algorithms()
	if !slices.IsSorted(all) {
		t.Errorf("Algorithms() not sorted: %v", all)
	}
	for _, d := range DefaultAlgorithms {
		if !slices.Contains(all, d) {
			t.Errorf("default %q missing from Algorithms()", d)
		}
	}
	if len(slices.Compact(slices.Clone(all))) != len(all) {
		t.Errorf("duplicate names in %v", all)
	}
}

func TestDurationString(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{3 * time.Second, "3s"},
		{10 * time.Millisecond, "10ms"},
		{1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		if got := durationString(tt.d); got != tt.want {
			t.Errorf("durationString(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestProgressLines checks the progress lines look like openssl's, since
// people compare the two transcripts by eye.
func TestProgressLines(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), &out, Options{Algorithms: []string{"sha1"}, BlockSizes: []int{64}, Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^Doing sha1 for 1ms on 64 size blocks: [1-9][0-9]* sha1's in [0-9]+\.[0-9]{2}s$`)
	sc := bufio.NewScanner(&out)
	n := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "Doing ") {
			n++
			if !re.MatchString(sc.Text()) {
				t.Errorf("progress line %q does not match %v", sc.Text(), re)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d progress lines, want 1", n)
	}
}

// Benchmarks of the operations themselves, so `go test -bench` on a board
// (or under QEMU) can be checked against the suite's own figures.
func BenchmarkThroughput(b *testing.B) {
	for _, name := range []string{"md5", "sha256", "aes-128-cbc"} {
		for _, size := range []int{16, 1024} {
			b.Run(name+"/"+strconv.Itoa(size), func(b *testing.B) {
				op := findThroughput(name).newOp()
				buf := make([]byte, size)
				b.SetBytes(int64(size))
				for b.Loop() {
					op(buf)
				}
			})
		}
	}
}

func BenchmarkPublicKey(b *testing.B) {
	for _, a := range pkeyAlgs {
		ops, err := a.setup()
		if err != nil {
			b.Fatal(err)
		}
		for i, op := range ops {
			b.Run(a.name+"/"+strconv.Itoa(i), func(b *testing.B) {
				for b.Loop() {
					if err := op.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMeasureOverhead shows what the timing loop itself costs per
// operation, which bounds its error on the fastest rows.
func BenchmarkMeasureOverhead(b *testing.B) {
	var calls int64
	var elapsed time.Duration
	for b.Loop() {
		n, d, _ := measure(context.Background(), time.Millisecond, func() {})
		calls += n
		elapsed += d
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(calls), "ns/call")
}
