// Package nocache keeps commands that only read and print from creating
// $XDG_CACHE_HOME/goimports (or ~/.cache/goimports).
//
// The image builder's dependencies include golang.org/x/tools'
// internal/modindex, whose package initialiser creates that directory in
// os.UserCacheDir() whenever the binary starts, whatever the command. This
// package hides the cache directory from that initialiser, for the
// commands named in quiet only, by pointing XDG_CACHE_HOME at /dev/null
// (where no directory can be made) until main calls Restore.
//
// It works because of the order the Go specification gives package
// initialisation (since Go 1.21): of the packages whose imports are
// initialised, the first by import path goes next. This package imports
// only os, which modindex imports too, and
// github.com/bootbench/bootbench/... sorts before golang.org/x/tools/...,
// so this init always runs first. main must import it.
package nocache

import "os"

// quiet are the commands that never build an image, so nothing they run
// needs the index.
var quiet = map[string]bool{
	"results": true, "import": true, "boards": true, "speed": true,
	"help": true, "-h": true, "--help": true,
}

var (
	hidden     bool
	saved      string
	savedIsSet bool
)

func init() {
	if len(os.Args) > 1 && !quiet[os.Args[1]] {
		return
	}
	saved, savedIsSet = os.LookupEnv("XDG_CACHE_HOME")
	hidden = os.Setenv("XDG_CACHE_HOME", os.DevNull) == nil
}

// Restore gives back the cache directory the process started with; main
// calls it first, before anything could need it.
func Restore() {
	if !hidden {
		return
	}
	hidden = false
	if savedIsSet {
		os.Setenv("XDG_CACHE_HOME", saved)
	} else {
		os.Unsetenv("XDG_CACHE_HOME")
	}
}
