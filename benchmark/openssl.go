package benchmark

// OpenSSL is openssl speed: the host's openssl for a board of the host's
// arch, Debian's for another, and one built from Debian's source for an
// arch Debian has no package for (big-endian MIPS).
const OpenSSL = "openssl"

func init() {
	Register(Benchmark{Name: OpenSSL, Help: "openssl speed: the host's for a board of the host's arch, Debian's for another (built from Debian's source where Debian has no package)", Image: Image{Command: true}, Algorithms: openSSLAlgorithms, Output: "openssl"})
}

// openSSLAlgorithms are the names openssl 3.0's speed takes, every board's
// openssl being 3.0 (the host's, Debian 12's, or built from Debian 12's
// source): apps/speed.c's doit_choices, rsa_choices, dsa_choices,
// ffdh_choices, ecdsa_choices, ecdh_choices, eddsa_choices and
// sm2_choices, and the group names its main() takes (des, sha, aes, rsa,
// dsa, ecdsa, ecdh, eddsa, ffdh, sm2; openssl for compatibility).
var openSSLAlgorithms = []string{
	"md2", "mdc2", "md4", "md5", "hmac", "sha1", "sha256", "sha512", "whirlpool",
	"ripemd", "rmd160", "ripemd160", "rc4", "des-cbc", "des-ede3",
	"aes-128-cbc", "aes-192-cbc", "aes-256-cbc",
	"camellia-128-cbc", "camellia-192-cbc", "camellia-256-cbc",
	"rc2-cbc", "rc2", "rc5-cbc", "rc5", "idea-cbc", "idea", "seed-cbc", "seed",
	"bf-cbc", "blowfish", "bf", "cast-cbc", "cast", "cast5", "ghash", "rand",
	"dsa512", "dsa1024", "dsa2048",
	"rsa512", "rsa1024", "rsa2048", "rsa3072", "rsa4096", "rsa7680", "rsa15360",
	"ffdh2048", "ffdh3072", "ffdh4096", "ffdh6144", "ffdh8192",
	"ecdsap160", "ecdsap192", "ecdsap224", "ecdsap256", "ecdsap384", "ecdsap521",
	"ecdsak163", "ecdsak233", "ecdsak283", "ecdsak409", "ecdsak571",
	"ecdsab163", "ecdsab233", "ecdsab283", "ecdsab409", "ecdsab571",
	"ecdsabrp256r1", "ecdsabrp256t1", "ecdsabrp384r1", "ecdsabrp384t1", "ecdsabrp512r1", "ecdsabrp512t1",
	"ecdhp160", "ecdhp192", "ecdhp224", "ecdhp256", "ecdhp384", "ecdhp521",
	"ecdhk163", "ecdhk233", "ecdhk283", "ecdhk409", "ecdhk571",
	"ecdhb163", "ecdhb233", "ecdhb283", "ecdhb409", "ecdhb571",
	"ecdhbrp256r1", "ecdhbrp256t1", "ecdhbrp384r1", "ecdhbrp384t1", "ecdhbrp512r1", "ecdhbrp512t1",
	"ecdhx25519", "ecdhx448", "ed25519", "ed448", "curveSM2",
	"des", "sha", "aes", "camellia", "rsa", "dsa", "ecdsa", "ecdh", "eddsa", "ffdh", "sm2", "openssl",
}
