//go:build !mips && !mipsle

package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/google/nftables"
	"github.com/google/nftables/expr"
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
func applyConfig(c *nftables.Conn, config string, p ports) error {
	c.FlushRuleset()
	rules, policy, err := configRules(config, p)
	if err != nil {
		return err
	}
	if rules != nil {
		t := c.AddTable(&nftables.Table{Family: nftables.TableFamilyINet, Name: tableName})
		ch := c.AddChain(&nftables.Chain{
			Name: "forward", Table: t, Type: nftables.ChainTypeFilter,
			Hooknum: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter, Policy: &policy,
		})
		for _, r := range rules {
			c.AddRule(&nftables.Rule{Table: t, Chain: ch, Exprs: r})
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("apply configuration %s through netlink: %w", config, err)
	}
	return nil
}

// configRules are config's forward chain rules and policy; nil rules for
// no chain at all.
func configRules(config string, p ports) ([][]expr.Any, nftables.ChainPolicy, error) {
	accept, drop := nftables.ChainPolicyAccept, nftables.ChainPolicyDrop
	switch config {
	case bootparam.ConfigPlain:
		return nil, accept, nil
	case bootparam.ConfigFirewall:
		// What a stateless router filter holds: a few ports refused,
		// then each direction let through by interface and subnet.
		return [][]expr.Any{
			portRule(unix.IPPROTO_TCP, 23), portRule(unix.IPPROTO_TCP, 135),
			portRule(unix.IPPROTO_TCP, 445), portRule(unix.IPPROTO_UDP, 1900),
			join(ifaces(p.lan, p.wan), ipNet(12, p.lanNet), counterVerdict(expr.VerdictAccept)),
			join(ifaces(p.wan, p.lan), ipNet(16, p.lanNet), counterVerdict(expr.VerdictAccept)),
			counterVerdict(expr.VerdictDrop),
		}, drop, nil
	case bootparam.ConfigConntrack:
		// A rule that only looks at the connection state makes the
		// kernel track every connection, and filters nothing.
		return [][]expr.Any{join(ctState(expr.CtStateBitNEW), []expr.Any{&expr.Counter{}})}, accept, nil
	case bootparam.ConfigStateful:
		return [][]expr.Any{
			join(ctState(expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED), counterVerdict(expr.VerdictAccept)),
			join(ctState(expr.CtStateBitINVALID), counterVerdict(expr.VerdictDrop)),
			join(ifaces(p.lan, p.wan), ctState(expr.CtStateBitNEW), counterVerdict(expr.VerdictAccept)),
			counterVerdict(expr.VerdictDrop),
		}, drop, nil
	}
	return nil, accept, fmt.Errorf("unknown configuration %q (%s)", config, strings.Join(bootparam.RouteConfigs, ", "))
}

func join(parts ...[]expr.Any) []expr.Any { return slices.Concat(parts...) }

func counterVerdict(k expr.VerdictKind) []expr.Any {
	return []expr.Any{&expr.Counter{}, &expr.Verdict{Kind: k}}
}

// ifaces matches packets in at in and out at out.
func ifaces(in, out string) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyIIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(in)},
		&expr.Meta{Key: expr.MetaKeyOIFNAME, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: ifname(out)},
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
func ipNet(offset uint32, n *net.IPNet) []expr.Any {
	return []expr.Any{
		&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.NFPROTO_IPV4}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: offset, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte(n.Mask), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: n.IP.To4()},
	}
}

// portRule drops proto traffic to port.
func portRule(proto byte, port uint16) []expr.Any {
	dport := binary.BigEndian.AppendUint16(nil, port)
	return join([]expr.Any{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{proto}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: dport},
	}, counterVerdict(expr.VerdictDrop))
}

// ctState matches connections in any of the states.
func ctState(bits uint32) []expr.Any {
	return []expr.Any{
		&expr.Ct{Register: 1, Key: expr.CtKeySTATE},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4,
			Mask: binary.NativeEndian.AppendUint32(nil, bits), Xor: make([]byte, 4)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: make([]byte, 4)},
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

func listRules(c *nftables.Conn) (ruleSet, error) {
	var rs ruleSet
	chains, err := c.ListChains()
	if err != nil {
		return rs, fmt.Errorf("list chains through netlink: %w", err)
	}
	for _, ch := range chains {
		rules, err := c.GetRules(ch.Table, ch)
		if err != nil {
			return rs, fmt.Errorf("list rules of %s through netlink: %w", ch.Name, err)
		}
		for _, r := range rules {
			line, ct, dropped := describeRule(r.Exprs)
			rs.lines = append(rs.lines, fmt.Sprintf("%s %s: %s", ch.Table.Name, ch.Name, line))
			rs.conntrack = rs.conntrack || ct
			rs.dropped += dropped
		}
	}
	return rs, nil
}

// describeRule renders a rule's expressions the way nft's own listing
// names them, and says whether it looks at conntrack and what it dropped.
func describeRule(exprs []expr.Any) (line string, conntrack bool, dropped uint64) {
	var words []string
	var counted uint64
	for _, e := range exprs {
		switch e := e.(type) {
		case *expr.Meta:
			words = append(words, "meta", metaName(e.Key))
		case *expr.Cmp:
			data := fmt.Sprintf("%x", e.Data)
			if n := len(words); n > 0 && (words[n-1] == "iifname" || words[n-1] == "oifname") {
				data = fmt.Sprintf("%q", strings.TrimRight(string(e.Data), "\x00"))
			}
			words = append(words, cmpName(e.Op), data)
		case *expr.Payload:
			words = append(words, fmt.Sprintf("payload @%d,%d,%d", e.Base, e.Offset, e.Len))
		case *expr.Bitwise:
			words = append(words, fmt.Sprintf("& %x", e.Mask))
		case *expr.Ct:
			conntrack = true
			words = append(words, "ct", fmt.Sprint(e.Key))
		case *expr.Counter:
			counted = e.Packets
			words = append(words, fmt.Sprintf("counter packets %d", e.Packets))
		case *expr.Verdict:
			words = append(words, verdictName(e.Kind))
			if e.Kind == expr.VerdictDrop {
				dropped = counted
			}
		default:
			words = append(words, fmt.Sprintf("%T", e))
		}
	}
	if conntrack {
		// nft names the key: "ct state".
		for i := range words {
			if i > 0 && words[i-1] == "ct" && words[i] == fmt.Sprint(expr.CtKeySTATE) {
				words[i] = "state"
			}
		}
	}
	return strings.Join(words, " "), conntrack, dropped
}

func metaName(k expr.MetaKey) string {
	switch k {
	case expr.MetaKeyIIFNAME:
		return "iifname"
	case expr.MetaKeyOIFNAME:
		return "oifname"
	case expr.MetaKeyNFPROTO:
		return "nfproto"
	case expr.MetaKeyL4PROTO:
		return "l4proto"
	}
	return fmt.Sprint("key ", k)
}

func cmpName(op expr.CmpOp) string {
	if op == expr.CmpOpNeq {
		return "!="
	}
	if op == expr.CmpOpEq {
		return "=="
	}
	return fmt.Sprint("cmp ", op)
}

func verdictName(k expr.VerdictKind) string {
	switch k {
	case expr.VerdictAccept:
		return "accept"
	case expr.VerdictDrop:
		return "drop"
	}
	return fmt.Sprint("verdict ", k)
}
