package parse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// OpenSSL parses the human-readable output of `openssl speed` (0.9.8
// through 3.x) and of bootbench-speed, which prints the same layout.
//
// It reads the throughput table (block sizes from its "type ... bytes"
// header, since builds differ: OpenWrt's 0.9.8k prints 2048 where others
// print 8192) and the RSA, DSA, ECDSA, ECDH, EdDSA and FFDH tables.
// Anything else (progress lines, build information, kernel messages that
// a console capture interleaves, even between table rows) is skipped.
// Figures of 0.00 mean openssl did not run that case and are left out.
// Output with no table at all, or a table row that is cut short, is an
// *Error.
//
// Input holding several outputs (see Tables) is a *TablesError.
func OpenSSL(r io.Reader) (*Output, error) {
	tables, err := openSSLTables(r)
	if err != nil {
		return nil, err
	}
	if len(tables) > 1 {
		return nil, &TablesError{Tables: tables}
	}
	return tables[0], nil
}

// openSSLTables parses human `openssl speed` output into one Output per
// report it holds.
func openSSLTables(r io.Reader) ([]*Output, error) {
	p := &opensslParser{}
	if err := eachLine(r, p.line); err != nil {
		return nil, err
	}
	if p.firstTable == 0 {
		return nil, &Error{Line: 1, Msg: `no openssl speed results: found neither a "type ... bytes" table nor a "sign/s" table`}
	}
	cuts := cutPieces(p.pieces)
	if len(cuts) == 0 {
		return nil, &Error{Line: p.firstTable, Msg: "openssl speed table has no figures (every value is 0.00)"}
	}
	tables := make([]*Output, len(cuts))
	for i, c := range cuts {
		t := &Output{Tool: "openssl", Version: c.version, Line: c.line, FirstLine: c.first, LastLine: c.last}
		for _, m := range c.metrics {
			t.Metrics = append(t.Metrics, m.metric)
		}
		tables[i] = t
	}
	return tables, nil
}

type tableKind int

const (
	noTable tableKind = iota
	throughputTable
	pkeyTable
)

type opensslParser struct {
	pieces     []piece // figures, version lines and headers, in input order
	kind       tableKind
	sizes      []int    // block sizes of the current throughput table
	ops        []string // operation per rate column of the current public-key table
	firstTable int      // line of the first table header, 0 if none yet
}

func (p *opensslParser) line(n int, line string) error {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	// Progress lines: "Doing md5 for 3s on 16 size blocks: ...", and
	// -mr's "+DT:..." and "+R:..." on stderr.
	if f[0] == "Doing" || strings.HasPrefix(f[0], "+") {
		return nil
	}
	if v, ok := version(f); ok {
		p.pieces = append(p.pieces, piece{line: n, kind: pieceVersion, version: v})
		return nil
	}
	if strings.HasPrefix(line, numbersLine) {
		p.pieces = append(p.pieces, piece{line: n, kind: pieceStart})
		return nil
	}
	if isTypeHeader(f) {
		sizes, err := blockSizes(f)
		if err != nil {
			return &Error{Line: n, Msg: err.Error()}
		}
		p.kind, p.sizes = throughputTable, sizes
		p.seeTable(n)
		return nil
	}
	if isPkeyHeader(f) {
		p.kind, p.ops = pkeyTable, pkeyOps(f)
		p.seeTable(n)
		return nil
	}
	switch p.kind {
	case throughputTable:
		return p.throughputRow(n, f)
	case pkeyTable:
		return p.pkeyRow(n, strings.TrimSpace(line))
	}
	return nil
}

func (p *opensslParser) seeTable(n int) {
	if p.firstTable == 0 {
		p.firstTable = n
	}
	p.pieces = append(p.pieces, piece{line: n, kind: pieceHeader})
}

func (p *opensslParser) figure(m Metric) {
	p.pieces = append(p.pieces, piece{line: m.Line, kind: pieceMetric, metric: m})
}

// numbersLine starts every report's throughput section.
const numbersLine = "The 'numbers' are in 1000s of bytes per second"

// version recognises the version lines: "OpenSSL 0.9.8k 25 Mar 2009"
// (up to 1.1.1), "version: 3.0.13" (3.x) and
// "version: bootbench-speed 0.1.0 (go1.26.1)".
func version(f []string) (string, bool) {
	switch {
	case len(f) >= 2 && f[0] == "OpenSSL" && startsWithDigit(f[1]):
		return f[1], true
	case len(f) >= 3 && f[0] == "version:" && f[1] == "bootbench-speed":
		return f[1] + " " + f[2], true
	case len(f) >= 2 && f[0] == "version:" && startsWithDigit(f[1]):
		return f[1], true
	}
	return "", false
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }

// isTypeHeader reports whether f looks like the throughput table's header,
// "type 16 bytes 64 bytes ...". A line merely starting with "type" is not
// enough, so console noise that does is not taken for a broken header.
func isTypeHeader(f []string) bool {
	return len(f) >= 3 && f[0] == "type" && f[2] == "bytes"
}

func blockSizes(f []string) ([]int, error) {
	rest := f[1:]
	if len(rest)%2 != 0 {
		return nil, fmt.Errorf("throughput table header %q: want \"<size> bytes\" pairs", strings.Join(f, " "))
	}
	sizes := make([]int, 0, len(rest)/2)
	for i := 0; i < len(rest); i += 2 {
		size, err := strconv.Atoi(rest[i])
		if err != nil || size <= 0 || rest[i+1] != "bytes" {
			return nil, fmt.Errorf("throughput table header: %q is not a block size", rest[i]+" "+rest[i+1])
		}
		sizes = append(sizes, size)
	}
	return sizes, nil
}

var (
	// amountRE is one throughput figure: thousands of bytes/s with a "k",
	// plain bytes/s without.
	amountRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?k?$`)
	// nameRE is one word of an algorithm name: "md5", "hmac(md5)",
	// "aes-128", "cbc", "rc5-32/12". Console noise ("random:", "[ 1.2]")
	// does not match.
	nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9()/._+-]*$`)
)

func (p *opensslParser) throughputRow(n int, f []string) error {
	// The figures are the trailing run of numbers; the name is what
	// comes before (one word from 3.x, up to three before: "rc5-32/12 cbc").
	i := len(f)
	for i > 0 && amountRE.MatchString(f[i-1]) {
		i--
	}
	name, figs := f[:i], f[i:]
	if len(figs) == 0 || len(name) == 0 || len(name) > 3 {
		return nil
	}
	for _, w := range name {
		if !nameRE.MatchString(w) {
			return nil
		}
	}
	alg := algName(name)
	if len(figs) != len(p.sizes) {
		// One stray number is more likely a console message that happens
		// to end in a number than a row cut short after its first figure.
		if len(figs) == 1 {
			return nil
		}
		return &Error{Line: n, Msg: fmt.Sprintf("%s row has %d figures but the table header has %d block sizes (truncated output?)", alg, len(figs), len(p.sizes))}
	}
	for j, fig := range figs {
		v, err := bytesPerSec(fig)
		if err != nil {
			return &Error{Line: n, Msg: fmt.Sprintf("%s@%d: %v", alg, p.sizes[j], err)}
		}
		if v == 0 {
			continue
		}
		p.figure(Metric{Name: throughputName(alg, p.sizes[j]), Unit: UnitBytesPerSec, Value: v, Line: n})
	}
	return nil
}

// renamed maps openssl's pre-3.0 two-word names whose 3.x name is not
// simply the words joined by "-".
var renamed = map[string]string{
	"blowfish cbc":  "bf-cbc",
	"rc5-32/12 cbc": "rc5-cbc",
}

// ThroughputName is the metric of a throughput algorithm as openssl
// names it in a table row or a progress line ("aes-128 cbc", "AES-128-CBC",
// "md5") at a block size: "aes-128-cbc@1024".
func ThroughputName(alg string, size int) string {
	return throughputName(algName(strings.Fields(alg)), size)
}

func throughputName(alg string, size int) string {
	return fmt.Sprintf("%s@%d", alg, size)
}

// algName turns a row's name into the openssl 3.x spelling the metric
// names use: "aes-128 cbc" -> "aes-128-cbc", "des ede3" -> "des-ede3".
// 3.x prints -evp names in upper case ("AES-128-CBC"), so it lowers too.
func algName(words []string) string {
	s := strings.ToLower(strings.Join(words, " "))
	if r, ok := renamed[s]; ok {
		return r
	}
	return strings.ReplaceAll(s, " ", "-")
}

// bytesPerSec converts a figure to bytes/s. "16160.43k" must become
// exactly 16160430, so the decimal point is moved in the string and only
// then converted: ParseFloat rounds correctly once, where 16160.43*1000
// in floating point would not be an integer.
func bytesPerSec(fig string) (float64, error) {
	s, k := strings.CutSuffix(fig, "k")
	if k {
		s = shiftDecimal(s, 3)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("figure %q is not a number", fig)
	}
	return v, nil
}

// shiftDecimal multiplies the unsigned decimal string s by 10^places by
// moving its decimal point.
func shiftDecimal(s string, places int) string {
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) < places {
		frac += strings.Repeat("0", places-len(frac))
	}
	whole += frac[:places]
	frac = frac[places:]
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// isPkeyHeader reports whether f is a public-key table's column header:
// "sign verify sign/s verify/s", "op op/s", or 3.2+'s
// "sign verify encrypt decrypt sign/s verify/s encr./s decr./s".
func isPkeyHeader(f []string) bool {
	rate := false
	for _, w := range f {
		for _, c := range w {
			if !(c >= 'a' && c <= 'z' || c == '.' || c == '/') {
				return false
			}
		}
		if strings.HasSuffix(w, "/s") {
			rate = true
		}
	}
	return rate
}

// pkeyOps names the operation of each per-second column, in order; ""
// for a table with a single "op/s" column (ECDH, FFDH), whose metric is
// the algorithm name alone.
func pkeyOps(f []string) []string {
	var ops []string
	for _, w := range f {
		op, ok := strings.CutSuffix(w, "/s")
		if !ok {
			continue
		}
		switch op = strings.TrimSuffix(op, "."); op {
		case "op", "ops":
			op = ""
		case "encr":
			op = "encrypt"
		case "decr":
			op = "decrypt"
		default:
			// "signs/s", "keygens/s": the metric names use the verb.
			if len(op) > 1 && strings.HasSuffix(op, "s") && op != "encaps" && op != "decaps" {
				op = strings.TrimSuffix(op, "s")
			}
		}
		ops = append(ops, op)
	}
	return ops
}

var (
	// rsa 2048 bits 0.334333s 0.009217s      3.0    108.5
	bitsFirstRE = regexp.MustCompile(`^(rsa|dsa)\s+([0-9]+)\s+bits?\s+(.*)$`)
	// 256 bits ecdsa (nistp256)   0.0000s   0.0001s  45741.5  16430.2
	// 256 bits ecdh (nistp256)   0.0001s  19567.4    (1.0.x: "256-bit ecdh")
	// 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  21135.4   9966.0
	curveRE = regexp.MustCompile(`^([0-9]+)[- ]bits?\s+(ecdsa|ecdh|EdDSA|SM2)\s+\(([^)]+)\)\s+(.*)$`)
	// 2048 bits ffdh   0.0003s   3200.0
	ffdhRE = regexp.MustCompile(`^([0-9]+)[- ]bits?\s+ffdh\s+(.*)$`)
)

func (p *opensslParser) pkeyRow(n int, line string) error {
	var base, rest string
	if m := bitsFirstRE.FindStringSubmatch(line); m != nil {
		base, rest = m[1]+m[2], m[3]
	} else if m := curveRE.FindStringSubmatch(line); m != nil {
		curve := strings.ToLower(m[3])
		switch m[2] {
		case "ecdsa", "ecdh":
			// nistp256 -> p256; brainpoolP256r1 -> brainpoolp256r1.
			base = m[2] + "-" + strings.TrimPrefix(curve, "nist")
		case "EdDSA":
			base = curve // ed25519, ed448
		case "SM2":
			base = "sm2"
		}
		rest = m[4]
	} else if m := ffdhRE.FindStringSubmatch(line); m != nil {
		base, rest = "ffdh"+m[1], m[2]
	} else {
		// A row of a table we do not name yet (3.5's KEMs and
		// signatures), or console noise.
		return nil
	}
	f := strings.Fields(rest)
	if len(f) < len(p.ops) {
		return &Error{Line: n, Msg: fmt.Sprintf("%s row has %d figures, want at least %d (truncated output?)", base, len(f), len(p.ops))}
	}
	rates := f[len(f)-len(p.ops):]
	secs := perOpSeconds(f[:len(f)-len(p.ops)], len(p.ops))
	for i, fig := range rates {
		v, err := strconv.ParseFloat(fig, 64)
		if err != nil {
			return &Error{Line: n, Msg: fmt.Sprintf("%s: per-second figure %q is not a number", base, fig)}
		}
		if v == 0 {
			continue
		}
		if secs != nil {
			v = preciser(v, fig, secs[i])
		}
		name := base
		if op := p.ops[i]; op != "" {
			name += "-" + op
		}
		p.figure(Metric{Name: name, Unit: UnitOpsPerSec, Value: v, Line: n})
	}
	return nil
}

// perOpSeconds are a public-key row's seconds-per-operation columns
// ("0.180477s"), one per rate column, or nil when the row has not exactly
// that many before its rates.
func perOpSeconds(f []string, n int) []string {
	if len(f) < n {
		return nil
	}
	f = f[len(f)-n:]
	for _, w := range f {
		if !strings.HasSuffix(w, "s") {
			return nil
		}
	}
	secs := make([]string, n)
	for i, w := range f {
		secs[i] = strings.TrimSuffix(w, "s")
	}
	return secs
}

// preciser is an operation's rate from whichever of its two printed forms
// has more significant digits: openssl prints the rate with one decimal
// and the time per operation with six (0.9.8 to 3.x alike), so for a slow
// operation ("0.180477s ... 5.5") the rate alone is off by up to 1 % —
// enough to read a clock ratio of 2.00 as 1.96.
func preciser(rate float64, rateText, secText string) float64 {
	sec, err := strconv.ParseFloat(secText, 64)
	digits := sigDigits(secText)
	if err != nil || sec <= 0 || digits <= sigDigits(rateText) {
		return rate
	}
	// As many significant digits as the time had, no more.
	v, _ := strconv.ParseFloat(strconv.FormatFloat(1/sec, 'g', digits, 64), 64)
	return v
}

// sigDigits counts a decimal number's significant digits.
func sigDigits(s string) int {
	s = strings.TrimLeft(strings.ReplaceAll(s, ".", ""), "0")
	return len(s)
}

// looksLikeOpenSSL reports whether data has one of the table headers
// OpenSSL reads, or names itself openssl-speed style output.
func looksLikeOpenSSL(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20) // grown for a long line, as eachLine's
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, numbersLine) ||
			strings.HasPrefix(line, "version: bootbench-speed ") {
			return true
		}
		if f := strings.Fields(line); len(f) > 0 && (isTypeHeader(f) || isPkeyHeader(f)) {
			return true
		}
	}
	// A line too long for the scanner is not openssl's.
	return false
}
