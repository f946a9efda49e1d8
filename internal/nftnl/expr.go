package nftnl

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Expr is one expression of a rule: what the kernel runs, in order, on
// each packet the rule sees. The types here are the ones the board's rule
// sets use; a rule listed back with any other expression has an Other.
type Expr interface {
	// Name is the expression's name in nf_tables ("meta", "cmp", ...).
	Name() string
	marshal(a *attrs)
}

// MetaKey is what a Meta expression loads.
type MetaKey uint32

const (
	MetaKeyIIFNAME MetaKey = unix.NFT_META_IIFNAME
	MetaKeyOIFNAME MetaKey = unix.NFT_META_OIFNAME
	MetaKeyNFPROTO MetaKey = unix.NFT_META_NFPROTO
	MetaKeyL4PROTO MetaKey = unix.NFT_META_L4PROTO
)

// Meta loads a packet's metadata (its interfaces, protocols) into a
// register.
type Meta struct {
	Key      MetaKey
	Register uint32
}

func (Meta) Name() string { return "meta" }

func (e Meta) marshal(a *attrs) {
	a.u32(unix.NFTA_META_KEY, uint32(e.Key))
	a.u32(unix.NFTA_META_DREG, e.Register)
}

// CmpOp is how a Cmp compares.
type CmpOp uint32

const (
	CmpOpEq  CmpOp = unix.NFT_CMP_EQ
	CmpOpNeq CmpOp = unix.NFT_CMP_NEQ
)

// Cmp compares a register with Data; the rule goes on if it holds.
type Cmp struct {
	Op       CmpOp
	Register uint32
	Data     []byte
}

func (Cmp) Name() string { return "cmp" }

func (e Cmp) marshal(a *attrs) {
	a.u32(unix.NFTA_CMP_SREG, e.Register)
	a.u32(unix.NFTA_CMP_OP, uint32(e.Op))
	a.nest(unix.NFTA_CMP_DATA, func(a *attrs) { a.put(unix.NFTA_DATA_VALUE, e.Data) })
}

// PayloadBase is the header a Payload's offset counts from.
type PayloadBase uint32

const (
	PayloadBaseNetworkHeader   PayloadBase = unix.NFT_PAYLOAD_NETWORK_HEADER
	PayloadBaseTransportHeader PayloadBase = unix.NFT_PAYLOAD_TRANSPORT_HEADER
)

// Payload loads Len bytes of the packet at Offset from Base into a
// register.
type Payload struct {
	DestRegister uint32
	Base         PayloadBase
	Offset, Len  uint32
}

func (Payload) Name() string { return "payload" }

func (e Payload) marshal(a *attrs) {
	a.u32(unix.NFTA_PAYLOAD_DREG, e.DestRegister)
	a.u32(unix.NFTA_PAYLOAD_BASE, uint32(e.Base))
	a.u32(unix.NFTA_PAYLOAD_OFFSET, e.Offset)
	a.u32(unix.NFTA_PAYLOAD_LEN, e.Len)
}

// Bitwise computes (register & Mask) ^ Xor over Len bytes.
type Bitwise struct {
	SourceRegister, DestRegister uint32
	Len                          uint32
	Mask, Xor                    []byte
}

func (Bitwise) Name() string { return "bitwise" }

func (e Bitwise) marshal(a *attrs) {
	a.u32(unix.NFTA_BITWISE_SREG, e.SourceRegister)
	a.u32(unix.NFTA_BITWISE_DREG, e.DestRegister)
	a.u32(unix.NFTA_BITWISE_LEN, e.Len)
	a.nest(unix.NFTA_BITWISE_MASK, func(a *attrs) { a.put(unix.NFTA_DATA_VALUE, e.Mask) })
	a.nest(unix.NFTA_BITWISE_XOR, func(a *attrs) { a.put(unix.NFTA_DATA_VALUE, e.Xor) })
}

// CtKey is what a Ct expression loads from the packet's connection.
type CtKey uint32

const CtKeySTATE CtKey = unix.NFT_CT_STATE

// The connection states a "ct state" register holds, as bits (in the
// host's byte order, as the kernel stores them).
const (
	CtStateBitINVALID     uint32 = 1 << 0
	CtStateBitESTABLISHED uint32 = 1 << 1
	CtStateBitRELATED     uint32 = 1 << 2
	CtStateBitNEW         uint32 = 1 << 3
)

// Ct loads what conntrack knows of the packet's connection into a
// register; a rule with one makes the kernel track connections.
type Ct struct {
	Register uint32
	Key      CtKey
}

func (Ct) Name() string { return "ct" }

func (e Ct) marshal(a *attrs) {
	a.u32(unix.NFTA_CT_KEY, uint32(e.Key))
	a.u32(unix.NFTA_CT_DREG, e.Register)
}

// Counter counts the packets and bytes that reach it.
type Counter struct {
	Bytes, Packets uint64
}

func (Counter) Name() string { return "counter" }

func (e Counter) marshal(a *attrs) {
	a.u64(unix.NFTA_COUNTER_BYTES, e.Bytes)
	a.u64(unix.NFTA_COUNTER_PACKETS, e.Packets)
}

// VerdictKind is what a Verdict decides.
type VerdictKind int32

const (
	VerdictDrop   VerdictKind = 0 // NF_DROP
	VerdictAccept VerdictKind = 1 // NF_ACCEPT
)

// Verdict ends the rule with a decision (an "immediate" expression into
// the verdict register).
type Verdict struct {
	Kind VerdictKind
}

func (Verdict) Name() string { return "immediate" }

func (e Verdict) marshal(a *attrs) {
	a.u32(unix.NFTA_IMMEDIATE_DREG, unix.NFT_REG_VERDICT)
	a.nest(unix.NFTA_IMMEDIATE_DATA, func(a *attrs) {
		a.nest(unix.NFTA_DATA_VERDICT, func(a *attrs) { a.u32(unix.NFTA_VERDICT_CODE, uint32(e.Kind)) })
	})
}

// Other is an expression listed back that none of the types above is.
type Other struct {
	Kind string
}

func (e Other) Name() string { return e.Kind }

func (e Other) marshal(a *attrs) {}

// marshalExprs appends a rule's expressions, a list element each.
func marshalExprs(a *attrs, exprs []Expr) {
	a.nest(unix.NFTA_RULE_EXPRESSIONS, func(a *attrs) {
		for _, e := range exprs {
			a.nest(unix.NFTA_LIST_ELEM, func(a *attrs) {
				a.str(unix.NFTA_EXPR_NAME, e.Name())
				a.nest(unix.NFTA_EXPR_DATA, func(a *attrs) { e.marshal(a) })
			})
		}
	})
}

// parseExprs reads a rule's list of expressions.
func parseExprs(b []byte) ([]Expr, error) {
	elems, err := parseAttrs(b)
	if err != nil {
		return nil, err
	}
	var out []Expr
	for _, el := range elems {
		f, err := fields(el.data)
		if err != nil {
			return nil, err
		}
		name := cstring(f[unix.NFTA_EXPR_NAME])
		e, err := parseExpr(name, f[unix.NFTA_EXPR_DATA])
		if err != nil {
			return nil, fmt.Errorf("expression %s: %w", name, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseExpr(name string, data []byte) (Expr, error) {
	f, err := fields(data)
	if err != nil {
		return nil, err
	}
	switch name {
	case "meta":
		return Meta{Key: MetaKey(be32(f[unix.NFTA_META_KEY])), Register: be32(f[unix.NFTA_META_DREG])}, nil
	case "cmp":
		v, err := dataValue(f[unix.NFTA_CMP_DATA])
		return Cmp{Op: CmpOp(be32(f[unix.NFTA_CMP_OP])), Register: be32(f[unix.NFTA_CMP_SREG]), Data: v}, err
	case "payload":
		return Payload{DestRegister: be32(f[unix.NFTA_PAYLOAD_DREG]), Base: PayloadBase(be32(f[unix.NFTA_PAYLOAD_BASE])),
			Offset: be32(f[unix.NFTA_PAYLOAD_OFFSET]), Len: be32(f[unix.NFTA_PAYLOAD_LEN])}, nil
	case "bitwise":
		mask, err := dataValue(f[unix.NFTA_BITWISE_MASK])
		if err != nil {
			return nil, err
		}
		xor, err := dataValue(f[unix.NFTA_BITWISE_XOR])
		return Bitwise{SourceRegister: be32(f[unix.NFTA_BITWISE_SREG]), DestRegister: be32(f[unix.NFTA_BITWISE_DREG]),
			Len: be32(f[unix.NFTA_BITWISE_LEN]), Mask: mask, Xor: xor}, err
	case "ct":
		return Ct{Key: CtKey(be32(f[unix.NFTA_CT_KEY])), Register: be32(f[unix.NFTA_CT_DREG])}, nil
	case "counter":
		return Counter{Bytes: be64(f[unix.NFTA_COUNTER_BYTES]), Packets: be64(f[unix.NFTA_COUNTER_PACKETS])}, nil
	case "immediate":
		if be32(f[unix.NFTA_IMMEDIATE_DREG]) != unix.NFT_REG_VERDICT {
			break // an immediate into a data register: not a verdict
		}
		d, err := fields(f[unix.NFTA_IMMEDIATE_DATA])
		if err != nil {
			return nil, err
		}
		v, err := fields(d[unix.NFTA_DATA_VERDICT])
		return Verdict{Kind: VerdictKind(be32(v[unix.NFTA_VERDICT_CODE]))}, err
	}
	return Other{Kind: name}, nil
}

// dataValue reads an NFTA_DATA_VALUE out of its nest.
func dataValue(b []byte) ([]byte, error) {
	f, err := fields(b)
	return f[unix.NFTA_DATA_VALUE], err
}
