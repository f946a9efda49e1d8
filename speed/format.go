package speed

import (
	"fmt"
	"strings"
)

// tputResult is one throughput row: bytes per second for each block size.
type tputResult struct {
	name  string
	rates []float64
}

// pkeyResult is one public-key row: operations per second for each of
// the algorithm's operations (sign, verify; or the single op).
type pkeyResult struct {
	alg   *pkeyAlg
	rates []float64
}

// formatTables renders the result tables exactly as openssl 3.0's
// `openssl speed` prints them (apps/speed.c), so one parser reads both.
// It is pure so the layout can be golden-tested.
func formatTables(sizes []int, tput []tputResult, pkeys []pkeyResult) string {
	var b strings.Builder
	if len(tput) > 0 {
		b.WriteString("The 'numbers' are in 1000s of bytes per second processed.\n")
		b.WriteString("type        ")
		for _, s := range sizes {
			fmt.Fprintf(&b, "%7d bytes", s)
		}
		b.WriteString("\n")
		for _, r := range tput {
			fmt.Fprintf(&b, "%-13s", r.name)
			for _, v := range r.rates {
				// openssl switches to plain bytes/s for slow rates so
				// they keep two significant decimals.
				if v > 10000 {
					fmt.Fprintf(&b, " %11.2fk", v/1e3)
				} else {
					fmt.Fprintf(&b, " %11.2f ", v)
				}
			}
			b.WriteString("\n")
		}
	}
	// openssl prints each family's column header once, before its first row.
	family := ""
	for _, r := range pkeys {
		a := r.alg
		if a.family != family {
			family = a.family
			switch family {
			case "rsa", "dsa":
				fmt.Fprintf(&b, "%18ssign    verify    sign/s verify/s\n", " ")
			case "ecdh":
				fmt.Fprintf(&b, "%30sop      op/s\n", " ")
			default:
				fmt.Fprintf(&b, "%30ssign    verify    sign/s verify/s\n", " ")
			}
		}
		switch family {
		case "rsa":
			fmt.Fprintf(&b, "rsa %4d bits %8.6fs %8.6fs %8.1f %8.1f\n", a.bits, per(r.rates[0]), per(r.rates[1]), r.rates[0], r.rates[1])
		case "dsa":
			fmt.Fprintf(&b, "dsa %4d bits %8.6fs %8.6fs %8.1f %8.1f\n", a.bits, per(r.rates[0]), per(r.rates[1]), r.rates[0], r.rates[1])
		case "ecdsa":
			fmt.Fprintf(&b, "%4d bits ecdsa (%s) %8.4fs %8.4fs %8.1f %8.1f\n", a.bits, a.curve, per(r.rates[0]), per(r.rates[1]), r.rates[0], r.rates[1])
		case "ecdh":
			fmt.Fprintf(&b, "%4d bits ecdh (%s) %8.4fs %8.1f\n", a.bits, a.curve, per(r.rates[0]), r.rates[0])
		case "eddsa":
			fmt.Fprintf(&b, "%4d bits EdDSA (%s) %8.4fs %8.4fs %8.1f %8.1f\n", a.bits, a.curve, per(r.rates[0]), per(r.rates[1]), r.rates[0], r.rates[1])
		}
	}
	return b.String()
}

// per turns a rate into seconds per operation; a rate of zero (not run)
// prints as 0 rather than openssl's "inf".
func per(rate float64) float64 {
	if rate <= 0 {
		return 0
	}
	return 1 / rate
}
