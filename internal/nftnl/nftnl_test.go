package nftnl

import (
	"encoding/binary"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Every expression type reads back as it was written, in a rule message
// as the kernel lists it (in the host's byte order, so this holds on
// big-endian hosts too).
func TestRuleRoundTrip(t *testing.T) {
	exprs := []Expr{
		Meta{Key: MetaKeyIIFNAME, Register: 1},
		Cmp{Op: CmpOpNeq, Register: 1, Data: []byte("eth1\x00\x00")},
		Payload{DestRegister: 1, Base: PayloadBaseTransportHeader, Offset: 2, Len: 2},
		Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: []byte{1, 2, 3, 4}, Xor: []byte{0, 0, 0, 0}},
		Ct{Register: 1, Key: CtKeySTATE},
		Counter{Bytes: 1 << 40, Packets: 7},
		Verdict{Kind: VerdictAccept},
	}
	var b Batch
	b.AddRule(Chain{Table: Table{Family: unix.NFPROTO_INET, Name: "t"}, Name: "c"}, exprs)
	msgs := b.Messages(5)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want begin, rule, end", len(msgs))
	}
	done := message{typ: unix.NLMSG_DONE, flags: unix.NLM_F_MULTI}
	rules, ok, err := ParseDump(append(append([]byte{}, msgs[1]...), done.encode(6)...))
	if err != nil || !ok {
		t.Fatalf("parse: %v, done %v", err, ok)
	}
	want := []Rule{{Family: unix.NFPROTO_INET, Table: "t", Chain: "c", Exprs: exprs}}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", rules, want)
	}
	if seq := binary.NativeEndian.Uint32(msgs[2][8:]); seq != 7 {
		t.Errorf("the batch's end has sequence number %d, want 7", seq)
	}
}

func TestParseDumpErrors(t *testing.T) {
	var b Batch
	b.AddRule(Chain{Table: Table{Name: "t"}, Name: "c"}, []Expr{Counter{}})
	rule := b.Messages(1)[1]
	errMsg := binary.NativeEndian.AppendUint32(nil, unix.NLMSG_HDRLEN+4)
	errMsg = binary.NativeEndian.AppendUint16(errMsg, unix.NLMSG_ERROR)
	errMsg = append(errMsg, make([]byte, 10)...)
	errMsg = binary.NativeEndian.AppendUint32(errMsg, ^uint32(unix.EPERM)+1)
	cut := append([]byte{}, rule...)
	binary.NativeEndian.PutUint16(cut[unix.NLMSG_HDRLEN+sizeofNfgenmsg:], 200) // the first attribute claims more than there is
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"error", errMsg, syscall.EPERM.Error()},
		{"attribute too long", cut, "length 200"},
		{"message cut", rule[:30], "netlink messages"},
	}
	for _, tt := range tests {
		if _, _, err := ParseDump(tt.b); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
