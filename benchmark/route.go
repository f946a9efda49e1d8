package benchmark

// Route is the route benchmark: the board routes between two host
// networks while the host sends iperf3 traffic through it, one
// configuration at a time.
const Route = "route"

// routeModules are what the route benchmark needs of a Debian kernel that
// has them as modules: the routed ports' NIC driver (virtio-net on the
// virtual boards), nf_tables with conntrack and ctnetlink (to empty the
// table between configurations), and crc32c, which libcrc32c asks for at
// run time through a modprobe the board does not have; and wireguard for
// the wireguard configuration (with what it depends on: the UDP tunnel
// helpers and the Curve25519, ChaCha20 and Poly1305 libraries).
var routeModules = []string{"virtio_pci", "virtio_net", "crc32c_generic", "nf_tables", "nft_ct", "nf_conntrack_netlink", "wireguard"}

func init() {
	Register(Benchmark{
		Name: Route, Help: "the board routes iperf3 traffic between two host networks",
		Image:        Image{BuiltIn: true, KernelModules: routeModules},
		HostNetworks: true,
	})
}
