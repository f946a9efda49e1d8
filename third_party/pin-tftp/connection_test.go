package tftp

import (
	"net"
	"testing"
	"time"
)

// TestConnDeadline: a read times out when the last setDeadline says,
// whether the socket kept an earlier deadline (moved on when it came) or
// had to take a sooner one, and a datagram that comes in time is read.
func TestConnDeadline(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, pause time.Duration // setDeadline(first), then pause
		second       time.Duration // then setDeadline(second) and read
		sendAfter    time.Duration // a datagram this long after the read starts; 0: none
	}{
		{"kept, moved on", 300 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 0},
		{"sooner", 2 * time.Second, 0, 100 * time.Millisecond, 0},
		{"later than the first", 100 * time.Millisecond, 0, 400 * time.Millisecond, 0},
		{"kept, datagram after the socket's", 300 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			c := &connConnection{conn: conn}
			if err := c.setDeadline(tc.first); err != nil {
				t.Fatal(err)
			}
			firstSet := c.set
			time.Sleep(tc.pause)
			start := time.Now()
			if err := c.setDeadline(tc.second); err != nil {
				t.Fatal(err)
			}
			// The socket keeps a deadline still ahead that is not later
			// than the new one: no timer update.
			if kept := c.want.After(firstSet); kept != c.set.Equal(firstSet) {
				t.Errorf("after setDeadline(%v): socket kept its deadline %v, want %v",
					tc.second, c.set.Equal(firstSet), kept)
			}
			if tc.sendAfter > 0 {
				go func() {
					time.Sleep(tc.sendAfter)
					s, err := net.DialUDP("udp4", nil, conn.LocalAddr().(*net.UDPAddr))
					if err == nil {
						s.Write([]byte("ack"))
						s.Close()
					}
				}()
			}
			n, _, err := c.readFrom(make([]byte, 16))
			waited := time.Since(start)
			if tc.sendAfter > 0 {
				if err != nil || n != 3 {
					t.Fatalf("read %d bytes, %v; want the datagram sent after %v", n, err, tc.sendAfter)
				}
				return
			}
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				t.Fatalf("read: %v, want a timeout", err)
			}
			// Never sooner; later by what a loaded host may delay a
			// wakeup, and well before the 2 s that "sooner" would wait
			// if the socket kept its deadline.
			if waited < tc.second || waited > tc.second+400*time.Millisecond {
				t.Errorf("timed out after %v, want %v", waited, tc.second)
			}
		})
	}
}
