package benchmark

// DD is the seed's `time dd if=/dev/zero of=/tmp/testfile bs=16k count=…`
// and the read back: benchinit writes a file on a tmpfs of its own in
// 16 KiB blocks and reads it back, and prints dd's own summary lines,
// which results/parse's dd parser reads as dd-write and dd-read.
const DD = "dd"

func init() {
	Register(Benchmark{Name: DD, Help: "built in: a file written to and read back from the board's tmpfs in 16 KiB blocks, as dd bs=16k", Image: Image{BuiltIn: true}, Output: "dd"})
}
