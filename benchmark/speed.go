package benchmark

import "github.com/bootbench/bootbench/speed"

// Speed is the built-in suite (package speed), pure Go, on every board.
const Speed = "speed"

func init() {
	Register(Benchmark{Name: Speed, Help: "built in, pure Go", Image: Image{BuiltIn: true}, Algorithms: speed.Algorithms(), Output: "openssl"})
}
