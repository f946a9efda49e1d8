package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/internal/nftnl"
	"golang.org/x/sys/unix"
)

// tableName is the one table the board's rules live in.
const tableName = "bootbench"

// ports are the two routed ports: traffic enters at lan (the host's
// client side) and leaves at wan (its server side).
type ports struct {
	lan, wan string     // interface names
	lanNet   *net.IPNet // the client side's subnet
}

// applyConfig replaces the board's whole rule set with config's. A
// configuration without rules leaves none, so the kernel neither filters
// nor tracks connections (nf_conntrack only tracks once a rule needs it).
func applyConfig(c *nftnl.Conn, config string, p ports) error {
	b, err := configBatch(config, p)
	if err != nil {
		return err
	}
	if err := c.Send(b); err != nil {
		return fmt.Errorf("apply configuration %s through netlink: %w", config, err)
	}
	return nil
}

// configBatch is the netlink batch that replaces the rule set with
// config's.
func configBatch(config string, p ports) (*nftnl.Batch, error) {
	var b nftnl.Batch
	b.FlushRuleset()
	rules, policy, err := configRules(config, p)
	if err != nil {
		return nil, err
	}
	if rules != nil {
		t := b.AddTable(nftnl.Table{Family: unix.NFPROTO_INET, Name: tableName})
		ch := b.AddChain(nftnl.Chain{
			Name: "forward", Table: t, Type: "filter",
			Hook: unix.NF_INET_FORWARD, Priority: 0, Policy: policy,
		})
		for _, r := range rules {
			b.AddRule(ch, r)
		}
	}
	return &b, nil
}

// configRules are config's forward chain rules and policy; nil rules for
// no chain at all.
func configRules(config string, p ports) ([][]nftnl.Expr, nftnl.ChainPolicy, error) {
	accept, drop := nftnl.ChainPolicyAccept, nftnl.ChainPolicyDrop
	switch config {
	case bootparam.ConfigPlain:
		return nil, accept, nil
	case bootparam.ConfigFirewall:
		// What a stateless router filter holds: a few ports refused,
		// then each direction let through by interface and subnet.
		return [][]nftnl.Expr{
			portRule(unix.IPPROTO_TCP, 23), portRule(unix.IPPROTO_TCP, 135),
			portRule(unix.IPPROTO_TCP, 445), portRule(unix.IPPROTO_UDP, 1900),
			join(ifaces(p.lan, p.wan), ipNet(12, p.lanNet), counterVerdict(nftnl.VerdictAccept)),
			join(ifaces(p.wan, p.lan), ipNet(16, p.lanNet), counterVerdict(nftnl.VerdictAccept)),
			counterVerdict(nftnl.VerdictDrop),
		}, drop, nil
	case bootparam.ConfigConntrack:
		// A rule that only looks at the connection state makes the
		// kernel track every connection, and filters nothing.
		return [][]nftnl.Expr{join(ctState(nftnl.CtStateBitNEW), []nftnl.Expr{nftnl.Counter{}})}, accept, nil
	case bootparam.ConfigStateful:
		return [][]nftnl.Expr{
			join(ctState(nftnl.CtStateBitESTABLISHED|nftnl.CtStateBitRELATED), counterVerdict(nftnl.VerdictAccept)),
			join(ctState(nftnl.CtStateBitINVALID), counterVerdict(nftnl.VerdictDrop)),
			join(ifaces(p.lan, p.wan), ctState(nftnl.CtStateBitNEW), counterVerdict(nftnl.VerdictAccept)),
			counterVerdict(nftnl.VerdictDrop),
		}, drop, nil
	}
	return nil, accept, fmt.Errorf("unknown configuration %q (%s)", config, strings.Join(bootparam.RouteConfigs, ", "))
}

func join(parts ...[]nftnl.Expr) []nftnl.Expr { return slices.Concat(parts...) }

func counterVerdict(k nftnl.VerdictKind) []nftnl.Expr {
	return []nftnl.Expr{nftnl.Counter{}, nftnl.Verdict{Kind: k}}
}

// ifaces matches packets in at in and out at out.
func ifaces(in, out string) []nftnl.Expr {
	return []nftnl.Expr{
		nftnl.Meta{Key: nftnl.MetaKeyIIFNAME, Register: 1},
		nftnl.Cmp{Op: nftnl.CmpOpEq, Register: 1, Data: ifname(in)},
		nftnl.Meta{Key: nftnl.MetaKeyOIFNAME, Register: 1},
		nftnl.Cmp{Op: nftnl.CmpOpEq, Register: 1, Data: ifname(out)},
	}
}

// ifname is an interface name as the kernel compares it: IFNAMSIZ bytes,
// zero padded.
func ifname(n string) []byte {
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, n)
	return b
}

// ipNet matches IPv4 packets whose address at offset (12 source, 16
// destination) is in n.
func ipNet(offset uint32, n *net.IPNet) []nftnl.Expr {
	return []nftnl.Expr{
		nftnl.Meta{Key: nftnl.MetaKeyNFPROTO, Register: 1},
		nftnl.Cmp{Op: nftnl.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		nftnl.Payload{DestRegister: 1, Base: nftnl.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		nftnl.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte(n.Mask), Xor: make([]byte, 4)},
		nftnl.Cmp{Op: nftnl.CmpOpEq, Register: 1, Data: n.IP.To4()},
	}
}

// portRule drops proto traffic to port.
func portRule(proto byte, port uint16) []nftnl.Expr {
	dport := binary.BigEndian.AppendUint16(nil, port)
	return join([]nftnl.Expr{
		nftnl.Meta{Key: nftnl.MetaKeyL4PROTO, Register: 1},
		nftnl.Cmp{Op: nftnl.CmpOpEq, Register: 1, Data: []byte{proto}},
		nftnl.Payload{DestRegister: 1, Base: nftnl.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		nftnl.Cmp{Op: nftnl.CmpOpEq, Register: 1, Data: dport},
	}, counterVerdict(nftnl.VerdictDrop))
}

// ctState matches connections in any of the states.
func ctState(bits uint32) []nftnl.Expr {
	return []nftnl.Expr{
		nftnl.Ct{Register: 1, Key: nftnl.CtKeySTATE},
		nftnl.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binary.NativeEndian.AppendUint32(nil, bits), Xor: make([]byte, 4)},
		nftnl.Cmp{Op: nftnl.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
	}
}

// ruleSet is what the kernel holds, read back through netlink: a line a
// rule, whether any rule tracks connections, and the packets the rules
// dropped.
type ruleSet struct {
	lines     []string
	conntrack bool
	dropped   uint64
}

func listRules(c *nftnl.Conn) (ruleSet, error) {
	rules, err := c.ListRules()
	if err != nil {
		return ruleSet{}, fmt.Errorf("list the rules through netlink: %w", err)
	}
	return describeRules(rules), nil
}

func describeRules(rules []nftnl.Rule) ruleSet {
	var rs ruleSet
	for _, r := range rules {
		line, ct, dropped := describeRule(r.Exprs)
		rs.lines = append(rs.lines, fmt.Sprintf("%s %s: %s", r.Table, r.Chain, line))
		rs.conntrack = rs.conntrack || ct
		rs.dropped += dropped
	}
	return rs
}

// describeRule renders a rule's expressions the way nft's own listing
// names them, and says whether it looks at conntrack and what it dropped.
func describeRule(exprs []nftnl.Expr) (line string, conntrack bool, dropped uint64) {
	var words []string
	var counted uint64
	for _, e := range exprs {
		switch e := e.(type) {
		case nftnl.Meta:
			words = append(words, "meta", metaName(e.Key))
		case nftnl.Cmp:
			data := fmt.Sprintf("%x", e.Data)
			if n := len(words); n > 0 && (words[n-1] == "iifname" || words[n-1] == "oifname") {
				data = fmt.Sprintf("%q", strings.TrimRight(string(e.Data), "\x00"))
			}
			words = append(words, cmpName(e.Op), data)
		case nftnl.Payload:
			words = append(words, fmt.Sprintf("payload @%d,%d,%d", e.Base, e.Offset, e.Len))
		case nftnl.Bitwise:
			words = append(words, fmt.Sprintf("& %x", e.Mask))
		case nftnl.Ct:
			conntrack = true
			words = append(words, "ct", fmt.Sprint(e.Key))
		case nftnl.Counter:
			counted = e.Packets
			words = append(words, fmt.Sprintf("counter packets %d", e.Packets))
		case nftnl.Verdict:
			words = append(words, verdictName(e.Kind))
			if e.Kind == nftnl.VerdictDrop {
				dropped = counted
			}
		default:
			words = append(words, e.Name())
		}
	}
	if conntrack {
		// nft names the key: "ct state".
		for i := range words {
			if i > 0 && words[i-1] == "ct" && words[i] == fmt.Sprint(nftnl.CtKeySTATE) {
				words[i] = "state"
			}
		}
	}
	return strings.Join(words, " "), conntrack, dropped
}

func metaName(k nftnl.MetaKey) string {
	switch k {
	case nftnl.MetaKeyIIFNAME:
		return "iifname"
	case nftnl.MetaKeyOIFNAME:
		return "oifname"
	case nftnl.MetaKeyNFPROTO:
		return "nfproto"
	case nftnl.MetaKeyL4PROTO:
		return "l4proto"
	}
	return fmt.Sprint("key ", k)
}

func cmpName(op nftnl.CmpOp) string {
	if op == nftnl.CmpOpNeq {
		return "!="
	}
	if op == nftnl.CmpOpEq {
		return "=="
	}
	return fmt.Sprint("cmp ", op)
}

func verdictName(k nftnl.VerdictKind) string {
	switch k {
	case nftnl.VerdictAccept:
		return "accept"
	case nftnl.VerdictDrop:
		return "drop"
	}
	return fmt.Sprint("verdict ", k)
}
