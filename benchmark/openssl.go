package benchmark

// OpenSSL is openssl speed: the host's openssl for a board of the host's
// arch, Debian's for another, and one built from Debian's source for an
// arch Debian has no package for (big-endian MIPS).
const OpenSSL = "openssl"

func init() {
	Register(Benchmark{Name: OpenSSL, Help: "openssl speed: the host's for a board of the host's arch, Debian's for another (built from Debian's source where Debian has no package)", Image: Image{Command: true}})
}
