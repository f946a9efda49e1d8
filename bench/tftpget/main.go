// Command tftpget fetches one file by TFTP and prints the seconds it took,
// as curl -w '%{time_total}' does: bench/tftp-vs-dnsmasq.sh's client for
// the windowsize option (RFC 7440), which curl does not ask for.
//
//	tftpget -blksize 512 -windowsize 16 -o FILE ADDR:PORT NAME
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pin/tftp/v3"
)

func main() {
	blksize := flag.Int("blksize", 512, "block size to ask for (512: ask for none)")
	window := flag.Int("windowsize", 0, "windowsize to ask for (0: ask for none)")
	out := flag.String("o", "", "where the file goes (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tftpget [-blksize N] [-windowsize N] -o FILE ADDR:PORT NAME")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	secs, err := get(flag.Arg(0), flag.Arg(1), *out, *blksize, *window)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tftpget:", err)
		os.Exit(1)
	}
	fmt.Printf("%.6f", secs)
}

// get fetches name from server into path, timing the request to the last byte.
func get(server, name, path string, blksize, window int) (float64, error) {
	c, err := tftp.NewClient(server)
	if err != nil {
		return 0, err
	}
	if blksize != 512 {
		c.SetBlockSize(blksize)
	}
	if window > 0 {
		c.SetWindowSize(window)
	}
	c.SetTimeout(time.Second)
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	start := time.Now()
	wt, err := c.Receive(name, "octet")
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	secs := time.Since(start).Seconds()
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return secs, f.Close()
}
