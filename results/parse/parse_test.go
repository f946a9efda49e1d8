package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden .json files in testdata/")

// goldenTable is one output of several in a golden file.
type goldenTable struct {
	Line      int     `json:"line"`
	FirstLine int     `json:"first_line"`
	LastLine  int     `json:"last_line"`
	Output    *Output `json:"output"`
}

// TestGolden parses every testdata/*.txt and compares the result with the
// .json beside it.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no testdata/*.txt")
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			tables, err := Tables("auto", data, "")
			if err != nil {
				t.Fatal(err)
			}
			// One output is golden as Auto returns it; several as the list
			// Tables returns, with the lines each spans.
			var doc any = tables[0]
			if len(tables) > 1 {
				var list []goldenTable
				for _, o := range tables {
					list = append(list, goldenTable{o.Line, o.FirstLine, o.LastLine, o})
				}
				doc = list
			}
			got, err := json.MarshalIndent(doc, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := strings.TrimSuffix(in, ".txt") + ".json"
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (go test -update rewrites it)\ngot:\n%s", in, path, got)
			}
		})
	}
}

// TestOpenSSL098k pins the figures the OpenWrt wiki row is built from,
// independently of the golden file.
func TestOpenSSL098k(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "openssl-0.9.8k-rb450-300mhz.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := OpenSSL(f)
	if err != nil {
		t.Fatal(err)
	}
	if out.Tool != "openssl" || out.Version != "0.9.8k" {
		t.Errorf("tool, version = %q, %q; want openssl, 0.9.8k", out.Tool, out.Version)
	}
	got := map[string]Metric{}
	for _, m := range out.Metrics {
		if _, dup := got[m.Name]; dup {
			t.Errorf("metric %s twice", m.Name)
		}
		got[m.Name] = m
	}
	want := []Metric{
		{Name: "md5@1024", Unit: "B/s", Value: 16160430},
		{Name: "sha1@1024", Unit: "B/s", Value: 5467140},
		{Name: "sha256@1024", Unit: "B/s", Value: 3850580},
		{Name: "sha512@1024", Unit: "B/s", Value: 1684140},
		{Name: "des-cbc@1024", Unit: "B/s", Value: 2287620},
		{Name: "des-ede3@1024", Unit: "B/s", Value: 829440},
		{Name: "aes-128-cbc@1024", Unit: "B/s", Value: 3849560},
		{Name: "aes-192-cbc@1024", Unit: "B/s", Value: 3344730},
		{Name: "aes-256-cbc@1024", Unit: "B/s", Value: 2956630},
		{Name: "md5@2048", Unit: "B/s", Value: 19006120},
		{Name: "md5@16", Unit: "B/s", Value: 840670},
		{Name: "hmac(md5)@1024", Unit: "B/s", Value: 18119340},
		{Name: "bf-cbc@1024", Unit: "B/s", Value: 5723820},
		{Name: "aes-128-ige@16", Unit: "B/s", Value: 3524460},
		// A slow operation's rate from its time per operation, which
		// openssl prints with more digits ("0.334333s ... 3.0"); a fast
		// one's as printed ("0.009217s ... 108.5").
		{Name: "rsa2048-sign", Unit: "ops/s", Value: 2.99103},
		{Name: "rsa2048-verify", Unit: "ops/s", Value: 108.5},
		{Name: "rsa512-sign", Unit: "ops/s", Value: 91.903},
		{Name: "dsa2048-sign", Unit: "ops/s", Value: 11.045},
		{Name: "dsa2048-verify", Unit: "ops/s", Value: 9.15424},
	}
	for _, w := range want {
		if g, ok := got[w.Name]; !ok {
			t.Errorf("%s missing", w.Name)
		} else if withoutLine(g) != w {
			t.Errorf("%s = %v %s, want %v %s", w.Name, g.Value, g.Unit, w.Value, w.Unit)
		}
	}
	for _, absent := range []string{"md5@8192", "aes-128 cbc@1024", "des cbc@1024"} {
		if _, ok := got[absent]; ok {
			t.Errorf("unexpected metric %s", absent)
		}
	}
	if n := len(out.Metrics); n != 18*5+4*2+3*2 {
		t.Errorf("%d metrics, want %d", n, 18*5+4*2+3*2)
	}
}

func TestOpenSSLCases(t *testing.T) {
	const header = "The 'numbers' are in 1000s of bytes per second processed.\n" +
		"type             16 bytes     64 bytes\n"
	tests := []struct {
		name    string
		in      string
		version string
		want    []Metric
	}{
		{
			name: "plain bytes without k, zero skipped",
			in:   header + "des ede3          9999.50       0.00 \n",
			want: []Metric{{Name: "des-ede3@16", Unit: "B/s", Value: 9999.5}},
		},
		{
			name: "noise between rows, CRLF, one-word 3.x names, -evp upper case",
			in: "version: 3.0.13\r\n" + header +
				"md5              86354.08k   217453.64k\r\n" +
				"Doing sha1 for 3s on 16 size blocks: 123 sha1's in 3.00s\r\n" +
				"+DT:sha1:3:16\r\n" +
				"[   12.345678] random: crng init done\r\n" +
				"eth0 up 100\r\n" +
				"\r\n" +
				"AES-128-CBC    1016283.20k  1326268.97k\r\n",
			version: "3.0.13",
			want: []Metric{
				{Name: "md5@16", Unit: "B/s", Value: 86354080}, {Name: "md5@64", Unit: "B/s", Value: 217453640},
				{Name: "aes-128-cbc@16", Unit: "B/s", Value: 1016283200}, {Name: "aes-128-cbc@64", Unit: "B/s", Value: 1326268970},
			},
		},
		{
			name:    "1.1.1 renames and a long name",
			in:      "OpenSSL 1.1.1w  11 Sep 2023\n" + header + "blowfish cbc     1.00k 2.00k\nrc5-32/12 cbc    1.00k 2.00k\ncamellia-128 cbc     1.50k 2.50k\n",
			version: "1.1.1w",
			want: []Metric{
				{Name: "bf-cbc@16", Unit: "B/s", Value: 1000}, {Name: "bf-cbc@64", Unit: "B/s", Value: 2000},
				{Name: "rc5-cbc@16", Unit: "B/s", Value: 1000}, {Name: "rc5-cbc@64", Unit: "B/s", Value: 2000},
				{Name: "camellia-128-cbc@16", Unit: "B/s", Value: 1500}, {Name: "camellia-128-cbc@64", Unit: "B/s", Value: 2500},
			},
		},
		{
			name: "bootbench-speed version",
			in:   "version: bootbench-speed 0.1.0 (go1.26.1)\noptions: linux/mipsle GOMIPS=softfloat\n" + header + "sha256   1.00k 2.00k\n",
			want: []Metric{{Name: "sha256@16", Unit: "B/s", Value: 1000}, {Name: "sha256@64", Unit: "B/s", Value: 2000}},

			version: "bootbench-speed 0.1.0",
		},
		{
			name: "3.2 rsa with encrypt and decrypt",
			in: "version: 3.2.1\n" +
				"                   sign    verify    encrypt   decrypt   sign/s verify/s  encr./s  decr./s\n" +
				"rsa   2048 bits 0.000627s 0.000019s 0.000019s 0.000632s   1594.0  52604.9  51413.8   1582.2\n",
			version: "3.2.1",
			want: []Metric{
				{Name: "rsa2048-sign", Unit: "ops/s", Value: 1594.0}, {Name: "rsa2048-verify", Unit: "ops/s", Value: 52604.9},
				{Name: "rsa2048-encrypt", Unit: "ops/s", Value: 51413.8}, {Name: "rsa2048-decrypt", Unit: "ops/s", Value: 1582.2},
			},
		},
		{
			name: "curves, ffdh, 1.0.x ecdh spelling",
			in: "                              sign    verify    sign/s verify/s\n" +
				" 256 bits ecdsa (nistp256)   0.0000s   0.0001s  45741.5  16430.2\n" +
				" 256 bits ecdsa (brainpoolP256r1)   0.0004s   0.0004s   2614.5   2398.6\n" +
				" 456 bits EdDSA (Ed448)   0.0002s   0.0003s   5000.0   3000.0\n" +
				"                              op      op/s\n" +
				" 256-bit ecdh (nistp256)   0.0001s  19567.4\n" +
				" 253 bits ecdh (X25519)   0.0000s  30000.0\n" +
				"                       op     op/s\n" +
				"2048 bits ffdh   0.0003s   3200.0\n",
			want: []Metric{
				{Name: "ecdsa-p256-sign", Unit: "ops/s", Value: 45741.5}, {Name: "ecdsa-p256-verify", Unit: "ops/s", Value: 16430.2},
				{Name: "ecdsa-brainpoolp256r1-sign", Unit: "ops/s", Value: 2614.5}, {Name: "ecdsa-brainpoolp256r1-verify", Unit: "ops/s", Value: 2398.6},
				{Name: "ed448-sign", Unit: "ops/s", Value: 5000}, {Name: "ed448-verify", Unit: "ops/s", Value: 3000},
				{Name: "ecdh-p256", Unit: "ops/s", Value: 19567.4}, {Name: "ecdh-x25519", Unit: "ops/s", Value: 30000},
				{Name: "ffdh2048", Unit: "ops/s", Value: 3200},
			},
		},
		{
			name: "two runs concatenated, new header resets the sizes",
			in:   header + "md5 1.00k 2.00k\ntype 1024 bytes\nmd5 3.00k\n",
			want: []Metric{{Name: "md5@16", Unit: "B/s", Value: 1000}, {Name: "md5@64", Unit: "B/s", Value: 2000}, {Name: "md5@1024", Unit: "B/s", Value: 3000}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := OpenSSL(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if out.Version != tt.version {
				t.Errorf("version %q, want %q", out.Version, tt.version)
			}
			if len(out.Metrics) != len(tt.want) {
				t.Fatalf("metrics %v, want %v", out.Metrics, tt.want)
			}
			for i := range tt.want {
				if withoutLine(out.Metrics[i]) != tt.want[i] {
					t.Errorf("metric %d = %v, want %v", i, out.Metrics[i], tt.want[i])
				}
			}
		})
	}
}

func TestOpenSSLErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
		msg  string // substring
	}{
		{"empty", "", 1, "no openssl speed results"},
		{"no table", "OpenSSL 0.9.8k 25 Mar 2009\nDoing md5 for 3s on 16 size blocks: 1 md5's in 3.00s\n", 1, "no openssl speed results"},
		{"all zero", "x\ntype 16 bytes 64 bytes\nmd5 0.00 0.00\n", 2, "no figures"},
		{"bad header", "type 16 bytes 64 bites\n", 1, `"64 bites"`},
		{"truncated row", "type 16 bytes 64 bytes 256 bytes\nmd5 1.00k 2.00k 3.00k\nsha1 1.00k 2.00k\n", 3, "sha1 row has 2 figures"},
		{"truncated rsa row", "                  sign    verify    sign/s verify/s\nrsa 2048 bits 0.334333s\n", 2, "rsa2048 row"},
		{"bad rsa figure", "                  sign    verify    sign/s verify/s\nrsa 2048 bits 0.3s 0.1s 3.0 1e\n", 2, `"1e"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenSSL(strings.NewReader(tt.in))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			if pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("err = %v, want line %d mentioning %q", err, tt.line, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Errorf("error %q does not start with the line", err)
			}
		})
	}
}

func TestAuto(t *testing.T) {
	tests := []struct {
		name string
		in   string
		tool string // "" for an *Error at errLine
		// errLine is where the error points: line 1 when nothing was
		// recognised, else the line that broke the recognised format.
		errLine int
	}{
		{name: "empty", in: "", errLine: 1},
		{name: "blank", in: "\n  \n", errLine: 1},
		{name: "unrelated", in: "Linux version 6.1\nhello\n", errLine: 1},
		{name: "openssl throughput", in: "type 16 bytes\nmd5 1.00k\n", tool: "openssl"},
		{name: "openssl pkey only", in: "                  sign    verify    sign/s verify/s\nrsa 2048 bits 0.3s 0.1s 3.0 10.0\n", tool: "openssl"},
		{name: "openssl -mr", in: "+H:16\n+F:3:md5:1000.00\n", tool: "openssl"},
		{name: "openssl -mr pkey only", in: "+F2:2:2048:3197.9:52759.8\n", tool: "openssl"},
		{name: "iperf", in: "[  3]  0.0-10.0 sec  1120 MBytes   939 Mbits/sec\n", tool: "iperf"},
		{name: "iperf csv", in: "20261130082804,127.0.0.1,53972,127.0.0.1,5001,1,0.0-2.0,5943197756,23637278506\n", tool: "iperf"},
		{name: "iperf3", in: "[  5]   0.00-2.00   sec  4.28 GBytes  18.4 Gbits/sec                  receiver\n", tool: "iperf3"},
		{name: "iperf3 json", in: "{\"start\": {\"version\": \"iperf 3.12\"}, \"end\": {\"sum_received\": {\"bits_per_second\": 1e9}}}\n", tool: "iperf3"},
		{name: "dd", in: "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 5.2 s, 206 MB/s\n", tool: "dd"},
		{name: "broken openssl -mr", in: "OpenSSL 1.0.2u\n+H:16:64\n+F:3:md5:1.00\n", errLine: 3},
		{name: "broken iperf", in: "Client connecting to 10.0.0.1, TCP port 5001\nconnect failed: Connection refused\n", errLine: 2},
		{name: "broken iperf3", in: "Connecting to host 10.0.0.1, port 5201\niperf3: error - unable to connect to server\n", errLine: 2},
		{name: "broken dd", in: "# dd-read\n1073741824 bytes (1.1 GB, 1.0 GiB) copied, 5.2\n", errLine: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Auto([]byte(tt.in))
			if tt.tool != "" {
				if err != nil || out.Tool != tt.tool || len(out.Metrics) == 0 {
					t.Fatalf("Auto = %+v, %v; want %s metrics", out, err, tt.tool)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Line != tt.errLine {
				t.Fatalf("err = %v, want *Error at line %d", err, tt.errLine)
			}
		})
	}
}

func TestParse(t *testing.T) {
	inputs := map[string]string{
		"openssl":    "type 16 bytes\nmd5 1.00k\n",
		"openssl-mr": "+H:16\n+F:3:md5:1000.00\n",
		"iperf":      "[  3]  0.0-10.0 sec  1120 MBytes   939 Mbits/sec\n",
		"iperf3":     "[  5]   0.00-2.00   sec  4.28 GBytes  18.4 Gbits/sec                  receiver\n",
		"dd":         "1048576 bytes (1.0MB) copied, 0.005233 seconds, 191.1MB/s\n",
	}
	tools := map[string]string{"openssl": "openssl", "openssl-mr": "openssl", "iperf": "iperf", "iperf3": "iperf3", "dd": "dd"}
	for _, format := range Formats {
		for inFormat, in := range inputs {
			out, err := Parse(format, []byte(in))
			switch {
			case format == "auto" || format == inFormat:
				if err != nil || out.Tool != tools[inFormat] {
					t.Errorf("Parse(%s, %s input) = %+v, %v; want %s output", format, inFormat, out, err, tools[inFormat])
				}
			case err != nil:
				// Another format's output: an *Error, never a panic or
				// a non-*Error.
				var pe *Error
				if !errors.As(err, &pe) {
					t.Errorf("Parse(%s, %s input): err %v (%T), want *Error", format, inFormat, err, err)
				}
			}
		}
	}
	_, err := Parse("netperf", []byte("x"))
	if !errors.Is(err, ErrUnknownFormat) {
		t.Fatalf("unknown format: err = %v, want ErrUnknownFormat", err)
	}
	for _, f := range Formats {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not list %s", err, f)
		}
	}
}

func TestBytesPerSec(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"16160.43k", 16160430},
		{"5467.14k", 5467140},
		{"829.44k", 829440},
		{"1016283.20k", 1016283200},
		{"0.01k", 10},
		{"10.5k", 10500},
		{"12k", 12000},
		{"1.2345k", 1234.5},
		{"9999.50", 9999.5},
		{"0.00", 0},
	}
	for _, tt := range tests {
		got, err := bytesPerSec(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("bytesPerSec(%q) = %v, %v; want %v exactly", tt.in, got, err, tt.want)
		}
	}
}

func FuzzAuto(f *testing.F) {
	for _, name := range []string{
		"openssl-0.9.8k-rb450-300mhz.txt", "openssl-3.0.22-pkey.txt", "openssl-3.0.22-mr.txt",
		"iperf-2.1.8-tcp-P2-i1.txt", "iperf-2.1.8-csv-P2.txt", "iperf3-3.12-tcp-P2.txt", "iperf3-3.12-json.txt",
		"dd-gnu-coreutils-9.1-markers.txt", "dd-busybox.txt",
	} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Auto(data)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v is not an *Error with a line", err)
			}
			return
		}
		for _, m := range out.Metrics {
			if !(m.Value > 0) || math.IsInf(m.Value, 0) || m.Name == "" ||
				(m.Unit != UnitBytesPerSec && m.Unit != UnitOpsPerSec && m.Unit != UnitBitsPerSec) {
				t.Fatalf("bad metric %+v", m)
			}
		}
	})
}
