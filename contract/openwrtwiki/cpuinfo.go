// Package openwrtwiki holds what the board and the host share of the
// OpenWrt wiki's OpenSSL benchmark recipe: which /proc/cpuinfo lines it
// reads. The board sends them in its hello; the host prints the recipe's
// row from them (results/export).
//
//	h.CPUInfo = openwrtwiki.CPUInfoLines(string(cpuinfo))
package openwrtwiki

import "strings"

// Keys are what the recipe's awk looks for in /proc/cpuinfo (its
// patterns, case and all).
var Keys = []string{"system type", "machine", "cpu model", "BogoMIPS"}

// MaxLines bounds the lines a hello carries: one BogoMIPS line per core,
// and a board with more cores than this is not one the wiki's table lists.
const MaxLines = 64

// CPUInfoLines are the lines of /proc/cpuinfo the recipe reads, verbatim
// and in order.
func CPUInfoLines(cpuinfo string) []string {
	var lines []string
	for _, line := range strings.Split(cpuinfo, "\n") {
		for _, k := range Keys {
			if strings.Contains(line, k) && len(lines) < MaxLines {
				lines = append(lines, line)
				break
			}
		}
	}
	return lines
}
