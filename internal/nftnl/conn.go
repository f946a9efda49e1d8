package nftnl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is a netlink socket to the kernel's netfilter subsystems, in the
// network namespace of the thread that dialled it.
type Conn struct {
	fd  int
	seq uint32
}

// replyTimeout bounds the wait for the kernel's answer: it answers at
// once, or something is wrong with the socket.
const replyTimeout = 10 * time.Second

// Dial opens the socket.
func Dial() (*Conn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	tv := unix.NsecToTimeval(replyTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	return &Conn{fd: fd}, nil
}

// Close closes the socket.
func (c *Conn) Close() error { return unix.Close(c.fd) }

// Send applies the batch and waits for the kernel to acknowledge each of
// its changes.
func (c *Conn) Send(b *Batch) error {
	first := c.seq + 1
	msgs := b.Messages(first)
	c.seq += uint32(len(msgs))
	if err := unix.Sendto(c.fd, bytes.Join(msgs, nil), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("send the batch: %w", err)
	}
	for acked := 0; acked < b.acks(); {
		ms, err := c.receive()
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.Header.Type != unix.NLMSG_ERROR {
				continue // a rule echoed back
			}
			acked++
			if err := errnoOf(m); err != nil {
				return fmt.Errorf("the kernel refused message %d of the batch: %w", m.Header.Seq-first, err)
			}
		}
	}
	return nil
}

// Rule is a rule as the kernel lists it.
type Rule struct {
	Family       uint8
	Table, Chain string
	Exprs        []Expr
}

// ListRules lists every rule of every table, in the kernel's order:
// table by table, chain by chain, rule by rule.
func (c *Conn) ListRules() ([]Rule, error) {
	c.seq++
	if err := unix.Sendto(c.fd, DumpRequest(c.seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("ask for the rules: %w", err)
	}
	var rules []Rule
	for {
		ms, err := c.receive()
		if err != nil {
			return nil, err
		}
		rs, done, err := parseDump(ms)
		if err != nil {
			return nil, fmt.Errorf("the kernel's list of rules: %w", err)
		}
		rules = append(rules, rs...)
		if done {
			return rules, nil
		}
	}
}

// DumpRequest asks for every rule (sequence number seq); ParseDump reads
// the answer.
func DumpRequest(seq uint32) []byte {
	m := message{typ: nftMsg(unix.NFT_MSG_GETRULE), flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP, family: unix.NFPROTO_UNSPEC}
	return m.encode(seq)
}

// ParseDump reads one read's worth of a rule dump: its rules, and whether
// the dump ended with it.
func ParseDump(b []byte) ([]Rule, bool, error) {
	ms, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil, false, fmt.Errorf("netlink messages: %w", err)
	}
	return parseDump(ms)
}

func parseDump(ms []syscall.NetlinkMessage) ([]Rule, bool, error) {
	var rules []Rule
	for _, m := range ms {
		switch m.Header.Type {
		case unix.NLMSG_DONE:
			return rules, true, nil
		case unix.NLMSG_ERROR:
			return nil, false, errnoOf(m)
		case nftMsg(unix.NFT_MSG_NEWRULE):
			r, err := parseRule(m.Data)
			if err != nil {
				return nil, false, err
			}
			rules = append(rules, r)
		}
	}
	return rules, false, nil
}

func parseRule(b []byte) (Rule, error) {
	if len(b) < sizeofNfgenmsg {
		return Rule{}, errors.New("rule message cut short")
	}
	f, err := fields(b[sizeofNfgenmsg:])
	if err != nil {
		return Rule{}, err
	}
	r := Rule{Family: b[0], Table: cstring(f[unix.NFTA_RULE_TABLE]), Chain: cstring(f[unix.NFTA_RULE_CHAIN])}
	r.Exprs, err = parseExprs(f[unix.NFTA_RULE_EXPRESSIONS])
	if err != nil {
		return Rule{}, fmt.Errorf("rule in %s %s: %w", r.Table, r.Chain, err)
	}
	return r, nil
}

// receive reads what the kernel sent next.
func (c *Conn) receive() ([]syscall.NetlinkMessage, error) {
	buf := make([]byte, 64<<10)
	n, _, err := unix.Recvfrom(c.fd, buf, 0)
	if err != nil {
		return nil, fmt.Errorf("read the kernel's answer: %w", err)
	}
	ms, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return nil, fmt.Errorf("the kernel's answer: %w", err)
	}
	return ms, nil
}

// errnoOf is an NLMSG_ERROR's error, nil for an acknowledgement.
func errnoOf(m syscall.NetlinkMessage) error {
	if len(m.Data) < 4 {
		return errors.New("netlink error message cut short")
	}
	if e := -int32(binary.NativeEndian.Uint32(m.Data)); e != 0 {
		return syscall.Errno(e)
	}
	return nil
}
