// Package nftnl speaks the few nf_tables netlink messages the board's
// route benchmark needs, on a raw netlink socket: replace the whole rule
// set with one table, one chain and its rules (one batch), and list the
// rules back as the kernel holds them. It is what a general nf_tables
// library would send, without the library's size, so that it fits the
// images of small 32-bit routers.
//
//	var b nftnl.Batch
//	b.FlushRuleset()
//	t := b.AddTable(nftnl.Table{Family: unix.NFPROTO_INET, Name: "bootbench"})
//	ch := b.AddChain(nftnl.Chain{Table: t, Name: "forward", Type: "filter", Hook: unix.NF_INET_FORWARD})
//	b.AddRule(ch, []nftnl.Expr{nftnl.Counter{}, nftnl.Verdict{Kind: nftnl.VerdictDrop}})
//	err := conn.Send(&b)
package nftnl

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// Table is an nf_tables table: a family (unix.NFPROTO_*) and a name.
type Table struct {
	Family uint8
	Name   string
}

// ChainPolicy is what a base chain does with the packets no rule decided.
type ChainPolicy uint32

const (
	ChainPolicyDrop   ChainPolicy = ChainPolicy(VerdictDrop)
	ChainPolicyAccept ChainPolicy = ChainPolicy(VerdictAccept)
)

// Chain is a base chain: its table, name, type ("filter"), the hook it
// hangs on (unix.NF_INET_*), its priority and policy.
type Chain struct {
	Table    Table
	Name     string
	Type     string
	Hook     uint32
	Priority int32
	Policy   ChainPolicy
}

// Batch is the messages that change the rule set at once: the kernel
// applies all of them or none.
type Batch struct {
	msgs []message
}

// message is one nf_tables request before its header is written.
type message struct {
	typ    uint16 // the subsystem's and the message's type
	flags  uint16
	family uint8
	resID  uint16 // the subsystem a batch mark is for
	attrs  []byte
}

// nftMsg is the netlink type of nf_tables message t (unix.NFT_MSG_*).
func nftMsg(t uint16) uint16 { return unix.NFNL_SUBSYS_NFTABLES<<8 | t }

// The flags a change asks for: an acknowledgement each, so that the
// kernel's refusal of any one of them is heard.
const (
	createFlags = unix.NLM_F_REQUEST | unix.NLM_F_ACK | unix.NLM_F_CREATE
	ruleFlags   = createFlags | unix.NLM_F_ECHO | unix.NLM_F_APPEND
)

// FlushRuleset deletes every table, of every family.
func (b *Batch) FlushRuleset() {
	b.msgs = append(b.msgs, message{typ: nftMsg(unix.NFT_MSG_DELTABLE), flags: createFlags, family: unix.NFPROTO_UNSPEC})
}

// AddTable creates t.
func (b *Batch) AddTable(t Table) Table {
	var a attrs
	a.str(unix.NFTA_TABLE_NAME, t.Name)
	a.u32(unix.NFTA_TABLE_FLAGS, 0)
	b.msgs = append(b.msgs, message{typ: nftMsg(unix.NFT_MSG_NEWTABLE), flags: createFlags, family: t.Family, attrs: a.b})
	return t
}

// AddChain creates the base chain c in its table.
func (b *Batch) AddChain(c Chain) Chain {
	var a attrs
	a.str(unix.NFTA_CHAIN_TABLE, c.Table.Name)
	a.str(unix.NFTA_CHAIN_NAME, c.Name)
	a.nest(unix.NFTA_CHAIN_HOOK, func(a *attrs) {
		a.u32(unix.NFTA_HOOK_HOOKNUM, c.Hook)
		a.u32(unix.NFTA_HOOK_PRIORITY, uint32(c.Priority))
	})
	a.u32(unix.NFTA_CHAIN_POLICY, uint32(c.Policy))
	a.str(unix.NFTA_CHAIN_TYPE, c.Type)
	b.msgs = append(b.msgs, message{typ: nftMsg(unix.NFT_MSG_NEWCHAIN), flags: createFlags, family: c.Table.Family, attrs: a.b})
	return c
}

// AddRule appends a rule of exprs to chain c.
func (b *Batch) AddRule(c Chain, exprs []Expr) {
	var a attrs
	a.str(unix.NFTA_RULE_TABLE, c.Table.Name)
	a.str(unix.NFTA_RULE_CHAIN, c.Name)
	marshalExprs(&a, exprs)
	b.msgs = append(b.msgs, message{typ: nftMsg(unix.NFT_MSG_NEWRULE), flags: ruleFlags, family: c.Table.Family, attrs: a.b})
}

// Messages are the batch as sent, a netlink message each, between the
// batch's begin and end, numbered from seq.
func (b *Batch) Messages(seq uint32) [][]byte {
	all := make([]message, 0, len(b.msgs)+2)
	all = append(all, batchMark(unix.NFNL_MSG_BATCH_BEGIN))
	all = append(all, b.msgs...)
	all = append(all, batchMark(unix.NFNL_MSG_BATCH_END))
	out := make([][]byte, len(all))
	for i, m := range all {
		out[i] = m.encode(seq + uint32(i))
	}
	return out
}

// acks is how many acknowledgements the kernel owes for the batch.
func (b *Batch) acks() int { return len(b.msgs) }

// batchMark begins or ends a batch for the nf_tables subsystem.
func batchMark(typ uint16) message {
	return message{typ: typ, flags: unix.NLM_F_REQUEST, resID: unix.NFNL_SUBSYS_NFTABLES}
}

// encode writes m with its netlink header and the nfgenmsg header every
// nfnetlink message starts with.
func (m message) encode(seq uint32) []byte {
	n := unix.NLMSG_HDRLEN + sizeofNfgenmsg + len(m.attrs)
	b := make([]byte, 0, n)
	b = binary.NativeEndian.AppendUint32(b, uint32(n))
	b = binary.NativeEndian.AppendUint16(b, m.typ)
	b = binary.NativeEndian.AppendUint16(b, m.flags)
	b = binary.NativeEndian.AppendUint32(b, seq)
	b = binary.NativeEndian.AppendUint32(b, 0) // to the kernel
	b = append(b, m.family, unix.NFNETLINK_V0)
	b = binary.BigEndian.AppendUint16(b, m.resID)
	return append(b, m.attrs...)
}

// sizeofNfgenmsg is struct nfgenmsg: family, version, resource id.
const sizeofNfgenmsg = 4
