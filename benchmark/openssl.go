package benchmark

// OpenSSL is openssl speed: the host's openssl for a board of the host's
// arch, Debian's for another.
const OpenSSL = "openssl"

func init() {
	Register(Benchmark{Name: OpenSSL, Help: "openssl speed: the host's for a board of the host's arch, Debian's for another", Image: Image{Command: true}})
}
