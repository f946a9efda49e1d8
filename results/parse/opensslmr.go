package parse

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// OpenSSLMR parses `openssl speed -mr` (machine readable) output:
//
//	+H:16:64:256:1024:8192:16384          block sizes
//	+F:3:md5:64414468.09:...              bytes/s per block size (not 1000s)
//	+F2:2:2048:3197.938144:52759.793814   RSA sign, verify (3.2+: encrypt, decrypt too)
//	+F3:…  DSA   +F4:…  ECDSA   +F5:…  ECDH   +F6:<idx>:<bits>:Ed25519:…  EdDSA
//	+F7:…  SM2   +F8:…  FFDH
//
// Algorithms are named by what the line says, never by its index, which
// differs between versions and builds; +F4 and +F5 name no curve, so it
// is told from the bit length (and, where two curves share one, from the
// index pattern every version keeps: NIST P first, then Koblitz, then the
// other binary curves, then brainpool r1/t1 pairs).
//
// Up to 1.1.0, +F2..+F5 carry seconds per operation (+F5 also carries
// ops/s); from 1.1.1 ops/s. -mr prints no version, so a version line in
// the input ("OpenSSL 1.0.2u  20 Dec 2019" from `openssl version`, or 3.x's
// "version: 3.0.13") decides; failing that, version (e.g. "1.0.2u" or a
// whole `openssl version` line) does; failing that, the figures' shape:
// an RSA signature takes many times longer than its verification, an
// ECDSA one on the NIST curves clearly less, and ECDH's two figures are a
// rate and its reciprocal, so which figure is the larger tells seconds
// from rates; +F6 and later lines and RSA lines with four figures exist
// only from 1.1.1. A shape that contradicts the version, or tells nothing
// when it must, is an *Error wrapping ErrEra: a figure in the wrong unit
// is never returned. Output.Version is the version line's, else version's.
//
// Progress lines (+DT:, +R:, +DTP:, +R1: …, which openssl writes on stderr)
// and anything else not starting with +H or +F are skipped, as are +F9
// and later (3.5's KEMs and signatures) and figures of zero.
//
// Input holding several outputs (see Tables) is a *TablesError.
func OpenSSLMR(r io.Reader, version string) (*Output, error) {
	tables, err := openSSLMRTables(r, version)
	if err != nil {
		return nil, err
	}
	if len(tables) > 1 {
		return nil, &TablesError{Tables: tables}
	}
	return tables[0], nil
}

// openSSLMRTables parses -mr output into one Output per report it holds;
// version is OpenSSLMR's.
func openSSLMRTables(r io.Reader, version string) ([]*Output, error) {
	hint := ""
	if strings.TrimSpace(version) != "" {
		v, ok := versionHint(version)
		if !ok {
			return nil, fmt.Errorf("openssl version %q: want a version such as 1.0.2u or an `openssl version` line", version)
		}
		hint = v
	}
	p := &mrParser{}
	if err := eachLine(r, p.line); err != nil {
		return nil, err
	}
	if p.first == 0 {
		return nil, &Error{Line: 1, Msg: "no openssl speed -mr results: found no +H, +F or +F2..+F8 line"}
	}
	pieces, err := p.pieces()
	if err != nil {
		return nil, err
	}
	cuts := cutPieces(pieces)
	if len(cuts) == 0 {
		return nil, &Error{Line: p.first, Msg: "openssl speed -mr output has no figures (every value is 0)"}
	}
	tables := make([]*Output, len(cuts))
	for i, c := range cuts {
		t, err := p.table(c, hint)
		if err != nil {
			return nil, err
		}
		tables[i] = t
	}
	return tables, nil
}

// pieces lists the input's version lines, +H lines and figures in order,
// for cutting it into outputs. A figure's name does not depend on its
// unit, so the records are read as rates here and converted per output.
func (p *mrParser) pieces() ([]piece, error) {
	var pieces []piece
	k := 0
	for i, rec := range p.recs {
		for ; k < len(p.marks) && p.marks[k].line < rec.line; k++ {
			pieces = append(pieces, p.marks[k])
		}
		ms, err := rec.metrics(false)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			pieces = append(pieces, piece{line: rec.line, kind: pieceMetric, metric: m, rec: i})
		}
	}
	pieces = append(pieces, p.marks[k:]...)
	return pieces, nil
}

// table converts the records of one output, in the unit its era uses.
func (p *mrParser) table(c *cut, hint string) (*Output, error) {
	t := &Output{Tool: "openssl", Version: c.version, Line: c.line, FirstLine: c.first, LastLine: c.last}
	if t.Version == "" {
		t.Version = hint
	}
	var recs []mrRecord
	for i, pc := range c.metrics {
		if i == 0 || pc.rec != c.metrics[i-1].rec {
			recs = append(recs, p.recs[pc.rec])
		}
	}
	perOp, err := era(t.Version, recs, c.line)
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		ms, err := rec.metrics(perOp)
		if err != nil {
			return nil, err
		}
		t.Metrics = append(t.Metrics, ms...)
	}
	return t, nil
}

type mrParser struct {
	marks []piece // version and +H lines, in order
	sizes []int
	first int // line of the first +H or +F* line, 0 if none yet
	// recs holds every result line in order; public-key lines can only be
	// converted once the whole input is read, as the version line that
	// decides their unit may come last.
	recs []mrRecord
}

type mrRecord struct {
	line   int
	kind   string   // "+F", "+F2", ...
	fields []string // after the kind
	sizes  []int    // block sizes in force, for +F
}

func (p *mrParser) line(n int, line string) error {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "+") {
		if v, ok := version(strings.Fields(line)); ok {
			p.marks = append(p.marks, piece{line: n, kind: pieceVersion, version: v})
		}
		return nil
	}
	kind, rest, _ := strings.Cut(line, ":")
	fields := strings.Split(rest, ":")
	switch kind {
	case "+H":
		sizes := make([]int, 0, len(fields))
		for _, f := range fields {
			size, err := strconv.Atoi(f)
			if err != nil || size <= 0 {
				return &Error{Line: n, Msg: fmt.Sprintf("+H block size %q is not a number", f)}
			}
			sizes = append(sizes, size)
		}
		p.sizes = sizes
		p.marks = append(p.marks, piece{line: n, kind: pieceStart})
		p.seen(n)
	case "+F":
		if p.sizes == nil {
			return &Error{Line: n, Msg: "+F line before the +H line that gives its block sizes (truncated output?)"}
		}
		p.recs = append(p.recs, mrRecord{line: n, kind: kind, fields: fields, sizes: p.sizes})
		p.seen(n)
	case "+F2", "+F3", "+F4", "+F5", "+F6", "+F7", "+F8":
		p.recs = append(p.recs, mrRecord{line: n, kind: kind, fields: fields})
		p.seen(n)
	}
	return nil
}

func (p *mrParser) seen(n int) {
	if p.first == 0 {
		p.first = n
	}
}

// metrics converts one result line; perOp says +F2..+F5 figures are
// seconds per operation.
func (rec mrRecord) metrics(perOp bool) ([]Metric, error) {
	if rec.kind == "+F" {
		return rec.cipherMetrics()
	}
	return rec.pkeyMetrics(perOp)
}

func (rec mrRecord) bad(format string, a ...any) error {
	return &Error{Line: rec.line, Msg: rec.kind + " line: " + fmt.Sprintf(format, a...)}
}

// cipherMetrics converts a +F line: <index>:<name>:<bytes/s>..., one
// figure per block size of the +H line.
func (rec mrRecord) cipherMetrics() ([]Metric, error) {
	f := rec.fields
	if len(f) < 2 {
		return nil, rec.bad("want <index>:<name>:<bytes/s>...")
	}
	alg := algName(strings.Fields(f[1]))
	figs := f[2:]
	if len(figs) != len(rec.sizes) {
		return nil, rec.bad("%s has %d figures but +H has %d block sizes (truncated output?)", alg, len(figs), len(rec.sizes))
	}
	var ms []Metric
	for i, fig := range figs {
		v, err := parseFigure(fig)
		if err != nil {
			return nil, rec.bad("%s@%d: %v", alg, rec.sizes[i], err)
		}
		if v > 0 {
			ms = append(ms, Metric{Name: fmt.Sprintf("%s@%d", alg, rec.sizes[i]), Unit: UnitBytesPerSec, Value: v, Line: rec.line})
		}
	}
	return ms, nil
}

// pkeyMetrics converts a public-key line (+F2..+F8):
// <index>:<bits>[:<name>]:<figures>, one metric per operation.
func (rec mrRecord) pkeyMetrics(perOp bool) ([]Metric, error) {
	idx, bits, vals, err := rec.pkeyFigures()
	if err != nil {
		return nil, err
	}
	// Up to +F5, -mr's figures were seconds per operation when perOp.
	invert := perOp && (rec.kind == "+F2" || rec.kind == "+F3" || rec.kind == "+F4" || rec.kind == "+F5")
	base, ops, err := rec.pkeyNames(idx, bits, len(vals))
	if err != nil {
		return nil, err
	}
	if rec.kind == "+F5" && perOp {
		// <first>:<second> is seconds/op and ops/s up to 1.1.0, ops/s and
		// seconds/op from 1.1.1: either way one figure, the rate.
		vals, invert = vals[1:], false
	}
	if len(vals) < len(ops) {
		return nil, rec.bad("%s has %d figures, want %d", base, len(vals), len(ops))
	}
	var ms []Metric
	for i, v := range vals {
		if i >= len(ops) {
			break
		}
		if invert && v != 0 {
			v = 1 / v
		}
		if v <= 0 || math.IsInf(v, 0) {
			continue
		}
		name := base
		if ops[i] != "" {
			name += "-" + ops[i]
		}
		ms = append(ms, Metric{Name: name, Unit: UnitOpsPerSec, Value: v, Line: rec.line})
	}
	return ms, nil
}

// pkeyFigures reads a public-key line's index, bits and figures.
func (rec mrRecord) pkeyFigures() (idx, bits int, vals []float64, err error) {
	f := rec.fields
	named := rec.kind == "+F6" || rec.kind == "+F7"
	minFields := 4
	if named {
		minFields = 5
	}
	if len(f) < minFields {
		return 0, 0, nil, rec.bad("has %d fields, want at least %d (truncated output?)", len(f), minFields)
	}
	idx, err1 := strconv.Atoi(f[0])
	bits, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || idx < 0 || bits <= 0 {
		return 0, 0, nil, rec.bad("index %q and bits %q are not numbers", f[0], f[1])
	}
	figs := f[2:]
	if named {
		figs = f[3:]
	}
	vals = make([]float64, len(figs))
	for i, fig := range figs {
		v, err := parseFigure(fig)
		if err != nil {
			return 0, 0, nil, rec.bad("%v", err)
		}
		vals[i] = v
	}
	return idx, bits, vals, nil
}

// pkeyNames names a public-key line's algorithm and the operations its
// figures are for, in order ("" for an algorithm with one figure).
func (rec mrRecord) pkeyNames(idx, bits, nvals int) (base string, ops []string, err error) {
	switch rec.kind {
	case "+F2":
		base = fmt.Sprintf("rsa%d", bits)
		if nvals != 2 && nvals != 4 {
			return "", nil, rec.bad("%s has %d figures, want 2 or 4", base, nvals)
		}
		return base, []string{"sign", "verify", "encrypt", "decrypt"}[:nvals], nil
	case "+F3":
		return fmt.Sprintf("dsa%d", bits), []string{"sign", "verify"}, nil
	case "+F4", "+F5":
		curve, ok := curveName(idx, bits, rec.kind == "+F5")
		if !ok {
			return "", nil, rec.bad("cannot tell which %d-bit curve index %d is", bits, idx)
		}
		if rec.kind == "+F4" {
			return "ecdsa-" + curve, []string{"sign", "verify"}, nil
		}
		if nvals < 2 {
			return "", nil, rec.bad("%s has %d figures, want 2", "ecdh-"+curve, nvals)
		}
		return "ecdh-" + curve, []string{""}, nil
	case "+F6":
		return strings.ToLower(rec.fields[2]), []string{"sign", "verify"}, nil // ed25519, ed448
	case "+F7":
		return "sm2", []string{"sign", "verify"}, nil
	case "+F8":
		return fmt.Sprintf("ffdh%d", bits), []string{""}, nil // ops/s, then seconds/op
	}
	return "", nil, nil
}

func parseFigure(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("figure %q is not a number", s)
	}
	return v, nil
}

// curveName names the curve of a +F4 (ECDSA) or +F5 (ECDH) line the way
// the metric names do ("p256", "brainpoolp256r1", "x25519"). Most bit
// lengths belong to one curve. The rest are told apart by index, relying
// on what every version since 0.9.8 keeps: P-160..P-521 at 0..5; K-163..
// K-571 at 6..10 and B-163..B-571 at 11..15 (absent in builds without
// binary curves); then, from 3.0, brainpool P256r1, P256t1, P384r1, P384t1,
// P512r1, P512t1 from index 16, or 6 without binary curves.
func curveName(idx, bits int, ecdh bool) (string, bool) {
	switch bits {
	case 160, 192, 224, 521:
		return fmt.Sprintf("p%d", bits), true
	case 253:
		return "x25519", ecdh
	case 448:
		return "x448", ecdh
	case 163, 233, 283, 409, 571:
		switch {
		case idx >= 6 && idx <= 10:
			return fmt.Sprintf("k%d", bits), true
		case idx >= 11 && idx <= 15:
			return fmt.Sprintf("b%d", bits), true
		}
	case 256, 384, 512:
		if (bits == 256 && idx == 3) || (bits == 384 && idx == 4) {
			return fmt.Sprintf("p%d", bits), true
		}
		pair := map[int]int{256: 0, 384: 2, 512: 4}[bits]
		for _, base := range []int{6, 16} {
			switch idx - base - pair {
			case 0:
				return fmt.Sprintf("brainpoolp%dr1", bits), true
			case 1:
				return fmt.Sprintf("brainpoolp%dt1", bits), true
			}
		}
	}
	return "", false
}

// versionHint accepts a bare version ("1.0.2u") or a version line as
// `openssl version` prints it.
func versionHint(s string) (string, bool) {
	f := strings.Fields(s)
	if v, ok := version(f); ok {
		return v, true
	}
	if len(f) == 1 && releaseRE.MatchString(f[0]) {
		return f[0], true
	}
	return "", false
}

// releaseRE takes the numbers of an openssl release: "0.9.8k", "1.1.1w",
// "3.0.13".
var releaseRE = regexp.MustCompile(`^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?`)

// secondsPerOp reports whether openssl v's -mr public-key figures are
// seconds per operation, as they were before 1.1.1. An unknown version
// is taken as 1.1.1 or later.
func secondsPerOp(v string) bool {
	m := releaseRE.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	major, minor, patch := num(m[1]), num(m[2]), num(m[3])
	switch {
	case major != 1:
		return major < 1
	case minor != 1:
		return minor < 1
	}
	return patch < 1
}

// looksLikeOpenSSLMR reports whether data has an -mr header or result
// line.
func looksLikeOpenSSLMR(data []byte) bool {
	return anyLine(data, func(line string) bool {
		line = strings.TrimSpace(line)
		kind, _, ok := strings.Cut(line, ":")
		if !ok {
			return false
		}
		switch kind {
		case "+H", "+F", "+F2", "+F3", "+F4", "+F5", "+F6", "+F7", "+F8":
			return true
		}
		return false
	})
}
