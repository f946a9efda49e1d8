// Package speed is bootbench's built-in benchmark suite: a pure Go
// stand-in for `openssl speed` that runs on every GOARCH the images are
// built for, so a board needs no C toolchain, libcrypto or shell.
//
// Its output mimics openssl 3.x's human-readable `openssl speed` output
// (progress lines, then the throughput table and the public-key tables),
// so the parser that reads real openssl reads this too, and results from
// either can sit side by side under the same metric names.
package speed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"
)

// Version is the suite's version, printed on the first line of every run.
// Bump it whenever a change could move the numbers.
const Version = "0.1.0"

// DefaultAlgorithms are run when Options.Algorithms is nil: the columns of
// the OpenWrt wiki's OpenSSL benchmark table, whose recipe is `openssl
// speed md5 sha1 sha256 sha512 des des-ede3 aes-128-cbc aes-192-cbc
// aes-256-cbc rsa2048 dsa2048`, so a default run fills a whole row.
var DefaultAlgorithms = []string{"md5", "sha1", "sha256", "sha512", "des-cbc", "des-ede3", "aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "rsa2048", "dsa2048"}

// DefaultBlockSizes are openssl 1.1.0+'s block sizes.
var DefaultBlockSizes = []int{16, 64, 256, 1024, 8192, 16384}

// DefaultDuration is openssl's default time per algorithm and block size.
const DefaultDuration = 3 * time.Second

// Options select what Run measures. The zero value runs the defaults.
type Options struct {
	Algorithms []string      // nil = DefaultAlgorithms
	BlockSizes []int         // nil = DefaultBlockSizes; throughput algorithms only
	Duration   time.Duration // per algorithm and block size (per operation for public-key algorithms); 0 = DefaultDuration
}

// Algorithms returns the names of every supported algorithm, sorted.
func Algorithms() []string {
	names := make([]string, 0, len(throughputAlgs)+len(pkeyAlgs))
	for _, a := range throughputAlgs {
		names = append(names, a.name)
	}
	for _, a := range pkeyAlgs {
		names = append(names, a.name)
	}
	sort.Strings(names)
	return names
}

// Run measures the selected algorithms and writes openssl-speed-style
// output to w: progress lines while it runs, the tables at the end. The
// progress goes to w as well because the board captures one stream.
//
// Bad options are reported before anything is written. If ctx is cancelled
// Run stops within a few milliseconds and returns ctx.Err() without
// printing the tables, since a partial table would look like a full one.
func Run(ctx context.Context, w io.Writer, opts Options) error {
	tputs, pkeys, sizes, d, err := resolve(opts)
	if err != nil {
		return err
	}
	out := &errWriter{w: w}
	out.printf("version: bootbench-speed %s (%s)\n", Version, runtime.Version())
	out.printf("options: %s\n", buildOptions())

	var tres []tputResult
	for _, a := range tputs {
		r := tputResult{name: a.printed(), rates: make([]float64, len(sizes))}
		for i, size := range sizes {
			if out.err != nil {
				return out.err
			}
			op := a.newOp()
			buf := make([]byte, size)
			out.printf("Doing %s for %s on %d size blocks: ", a.printed(), durationString(d), size)
			n, el, err := measure(ctx, d, func() { op(buf) })
			if err != nil {
				out.printf("\n")
				return err
			}
			out.printf("%d %s's in %.2fs\n", n, a.printed(), el.Seconds())
			r.rates[i] = rate(float64(n)*float64(size), el)
		}
		tres = append(tres, r)
	}

	var pres []pkeyResult
	for _, a := range pkeys {
		ops, err := a.setup()
		if err != nil {
			return fmt.Errorf("speed: %s: %v", a.name, err)
		}
		r := pkeyResult{alg: a, rates: make([]float64, len(ops))}
		for i, op := range ops {
			if out.err != nil {
				return out.err
			}
			out.printf(op.doing+" for %s: ", durationString(d))
			var opErr error
			n, el, err := measure(ctx, d, func() {
				if e := op.run(); e != nil && opErr == nil {
					opErr = e
				}
			})
			if err != nil {
				out.printf("\n")
				return err
			}
			if opErr != nil {
				out.printf("\n")
				return fmt.Errorf("speed: %s: %v", a.name, opErr)
			}
			out.printf("%d "+op.done+" in %.2fs\n", n, el.Seconds())
			r.rates[i] = rate(float64(n), el)
		}
		pres = append(pres, r)
	}

	out.printf("%s", formatTables(sizes, tres, pres))
	return out.err
}

// resolve checks opts and fills in the defaults.
func resolve(opts Options) ([]*throughputAlg, []*pkeyAlg, []int, time.Duration, error) {
	names := opts.Algorithms
	if names == nil {
		names = DefaultAlgorithms
	}
	if len(names) == 0 {
		return nil, nil, nil, 0, errors.New("speed: no algorithms selected")
	}
	sizes := opts.BlockSizes
	if sizes == nil {
		sizes = DefaultBlockSizes
	}
	d := opts.Duration
	if d == 0 {
		d = DefaultDuration
	}
	if d < 0 {
		return nil, nil, nil, 0, fmt.Errorf("speed: negative duration %v", d)
	}

	var tputs []*throughputAlg
	var pkeys []*pkeyAlg
	seen := map[string]bool{}
	for _, name := range names {
		name = strings.ToLower(strings.TrimSpace(name))
		if seen[name] {
			continue
		}
		seen[name] = true
		if a := findThroughput(name); a != nil {
			tputs = append(tputs, a)
			continue
		}
		if a := findPkey(name); a != nil {
			pkeys = append(pkeys, a)
			continue
		}
		return nil, nil, nil, 0, fmt.Errorf("speed: unknown algorithm %q (supported: %s)", name, strings.Join(Algorithms(), " "))
	}

	if len(tputs) > 0 {
		if len(sizes) == 0 {
			return nil, nil, nil, 0, errors.New("speed: no block sizes selected")
		}
		for _, size := range sizes {
			if size <= 0 {
				return nil, nil, nil, 0, fmt.Errorf("speed: block size %d is not positive", size)
			}
			// CBC works on whole cipher blocks; rather than pad (and
			// measure something openssl does not) refuse the size.
			for _, a := range tputs {
				if size%a.unit != 0 {
					return nil, nil, nil, 0, fmt.Errorf("speed: block size %d is not a multiple of %s's %d-byte cipher block", size, a.name, a.unit)
				}
			}
		}
	}
	return tputs, pkeys, slices.Clone(sizes), d, nil
}

// measure calls op repeatedly for d and returns how many calls completed
// and how long they took.
//
// Reading the clock is a system call on boards without a vDSO (MIPS, older
// ARM kernels) and would dominate a 16-byte hash, so the clock and ctx are
// checked once per batch, and batches grow until one takes about a
// millisecond. The overshoot past d is therefore a millisecond or two, and
// the elapsed time reported is the measured one, not d.
//
// This is wall time, where openssl reports user CPU time by default; on a
// board that runs nothing but the benchmark the two agree, and wall time
// is available on every GOOS.
func measure(ctx context.Context, d time.Duration, op func()) (int64, time.Duration, error) {
	const target = time.Millisecond
	const maxBatch = 1 << 24
	done := ctx.Done()
	var n int64
	batch := int64(1)
	start := time.Now()
	last := start
	for {
		for i := int64(0); i < batch; i++ {
			op()
		}
		n += batch
		now := time.Now()
		elapsed := now.Sub(start)
		if elapsed >= d {
			return n, elapsed, nil
		}
		select {
		case <-done:
			return n, elapsed, ctx.Err()
		default:
		}
		if took := now.Sub(last); took < target && batch < maxBatch {
			batch *= 2
		} else if took > 4*target && batch > 1 {
			batch /= 2
		}
		last = now
	}
}

func rate(amount float64, el time.Duration) float64 {
	if el <= 0 {
		return 0
	}
	return amount / el.Seconds()
}

// durationString prints whole seconds the way openssl does ("3s") and
// anything else in Go's notation ("10ms").
func durationString(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// buildOptions describes the build the way openssl's "options:" line
// does: the settings that change the generated code, GOMIPS=softfloat
// above all, which makes a large difference on MIPS boards.
func buildOptions() string {
	parts := []string{runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOOS" || s.Key == "GOARCH" || s.Value == "" {
				continue
			}
			if strings.HasPrefix(s.Key, "GO") || s.Key == "CGO_ENABLED" {
				parts = append(parts, s.Key+"="+s.Value)
			}
		}
	}
	return strings.Join(parts, " ")
}

// errWriter keeps the first write error so Run can check once per step
// instead of after every line.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err != nil {
		return
	}
	if _, err := fmt.Fprintf(e.w, format, args...); err != nil {
		e.err = fmt.Errorf("speed: writing output: %w", err)
	}
}
