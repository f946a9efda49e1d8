package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"golang.org/x/sys/unix"
)

// randomReady is whether the kernel's random pool is ready: getrandom
// without GRND_NONBLOCK would not wait.
func randomReady() bool {
	var b [1]byte
	_, err := unix.Getrandom(b[:], unix.GRND_NONBLOCK)
	return !errors.Is(err, unix.EAGAIN)
}

// seedRandom credits seed, random bytes from the host, to the kernel's
// random pool at 8 bits a byte (RNDADDENTROPY, root's), which makes a
// pool that was not ready ready. It says so when the pool was not.
func seedRandom(out io.Writer, seed []byte) error {
	wasReady := randomReady()
	fd, err := unix.Open("/dev/urandom", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("seed the random pool: %w", err)
	}
	defer unix.Close(fd)
	info := randPoolInfo(seed)
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.RNDADDENTROPY, uintptr(unsafe.Pointer(&info[0]))); errno != 0 {
		return fmt.Errorf("seed the random pool: RNDADDENTROPY: %w", errno)
	}
	if !wasReady {
		fmt.Fprintf(out, "random: the kernel's pool was not ready; seeded with %d bytes from the host, ready: %v\n", len(seed), randomReady())
	}
	return nil
}

// randPoolInfo is the kernel's struct rand_pool_info holding seed: the
// entropy it is credited with in bits, its length in bytes, then the
// bytes, the two ints in the board's byte order.
func randPoolInfo(seed []byte) []byte {
	b := make([]byte, 8, 8+len(seed))
	binary.NativeEndian.PutUint32(b[0:], uint32(8*len(seed)))
	binary.NativeEndian.PutUint32(b[4:], uint32(len(seed)))
	return append(b, seed...)
}
