package parse

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrEra is wrapped by the *Error OpenSSLMR returns when it cannot tell
// whether public-key figures are seconds per operation or operations per
// second: the version that printed them must be given.
var ErrEra = errors.New("cannot tell the unit of openssl -mr public-key figures")

// era reports whether recs' public-key figures are seconds per operation,
// as openssl before 1.1.1 printed them: from version if known, else from
// the figures' shape (see OpenSSLMR). line is where the output starts.
func era(version string, recs []mrRecord, line int) (perOp bool, err error) {
	shape, err := shapeEra(recs)
	if version != "" {
		perOp = secondsPerOp(version)
		if shape != nil && shape.perOp != perOp {
			return false, &Error{Line: shape.line, Err: ErrEra, Msg: fmt.Sprintf(
				"openssl %s prints public-key figures as %s, but these read as %s (%s): is the version line from other output?",
				version, unitText(perOp), unitText(shape.perOp), shape.why)}
		}
		return perOp, nil
	}
	if err != nil {
		return false, err
	}
	if shape != nil {
		return shape.perOp, nil
	}
	for _, rec := range recs {
		if isTimed(rec.kind) {
			return false, &Error{Line: rec.line, Err: ErrEra, Msg: "no version line and figures that do not tell seconds per operation (openssl before 1.1.1) from operations per second: give the openssl version that printed them"}
		}
	}
	return false, nil // no figure whose unit depends on the era
}

func unitText(perOp bool) string {
	if perOp {
		return "seconds per operation (before 1.1.1)"
	}
	return "operations per second (1.1.1 and later)"
}

// isTimed reports whether a line kind carried seconds per operation
// before 1.1.1.
func isTimed(kind string) bool {
	switch kind {
	case "+F2", "+F3", "+F4", "+F5":
		return true
	}
	return false
}

// shapeVerdict is what the figures' shape says about their unit.
type shapeVerdict struct {
	perOp bool
	line  int    // the line that says so
	why   string // what it says, for messages
}

// shapeEra reads the unit from the figures' shape: nil if nothing tells,
// an *Error if lines disagree.
func shapeEra(recs []mrRecord) (*shapeVerdict, error) {
	var first *shapeVerdict
	for _, rec := range recs {
		v := recShape(rec)
		if v == nil {
			continue
		}
		if first == nil {
			first = v
			continue
		}
		if v.perOp != first.perOp {
			return nil, &Error{Line: v.line, Err: ErrEra, Msg: fmt.Sprintf(
				"figures disagree on their unit: line %d reads as %s (%s), line %d as %s (%s): give the openssl version that printed them",
				first.line, unitText(first.perOp), first.why, v.line, unitText(v.perOp), v.why)}
		}
	}
	return first, nil
}

// recShape is what one line's shape says, nil if nothing.
func recShape(rec mrRecord) *shapeVerdict {
	f := rec.fields
	say := func(perOp bool, why string) *shapeVerdict {
		return &shapeVerdict{perOp: perOp, line: rec.line, why: why}
	}
	switch rec.kind {
	case "+F6", "+F7", "+F8":
		return say(false, rec.kind+" lines exist from 1.1.1")
	case "+F2":
		if len(f) == 6 {
			return say(false, "RSA lines with four figures exist from 3.2")
		}
		// Signing takes far longer than verifying (a private against a
		// small public exponent): tens of times at 2048 bits.
		a, b, ok := twoFigures(f, 2)
		if !ok || max(a, b) < 2*min(a, b) {
			return nil
		}
		if a > b {
			return say(true, fmt.Sprintf("rsa%s sign %s > verify %s", f[1], f[2], f[3]))
		}
		return say(false, fmt.Sprintf("rsa%s sign %s < verify %s", f[1], f[2], f[3]))
	case "+F4":
		// ECDSA verifying takes about twice as long as signing on the NIST
		// curves; on others (brainpool) the two come close, and then the
		// shape tells nothing. DSA is left out: 3.x verifies faster than it
		// signs, older versions slower.
		a, b, ok := twoFigures(f, 2)
		if !ok || max(a, b) < 1.5*min(a, b) {
			return nil
		}
		if a < b {
			return say(true, fmt.Sprintf("ecdsa %s bits sign %s < verify %s", f[1], f[2], f[3]))
		}
		return say(false, fmt.Sprintf("ecdsa %s bits sign %s > verify %s", f[1], f[2], f[3]))
	case "+F5":
		// A rate and its reciprocal: seconds first before 1.1.1.
		a, b, ok := twoFigures(f, 2)
		if !ok || a == b || a*b < 0.9 || a*b > 1.1 {
			return nil
		}
		return say(a < b, fmt.Sprintf("ecdh %s bits: %s then %s", f[1], f[2], f[3]))
	}
	return nil
}

// twoFigures reads fields from and from+1 as positive numbers.
func twoFigures(f []string, from int) (a, b float64, ok bool) {
	if len(f) < from+2 {
		return 0, 0, false
	}
	a, err1 := strconv.ParseFloat(f[from], 64)
	b, err2 := strconv.ParseFloat(f[from+1], 64)
	if err1 != nil || err2 != nil || a <= 0 || b <= 0 {
		return 0, 0, false
	}
	return a, b, true
}
