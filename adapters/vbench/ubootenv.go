package vbench

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
)

// ubootEnvSize is the environment U-Boot's qemu_arm64 build reads from the
// start of the second flash bank (CONFIG_ENV_SIZE 0x40000).
const ubootEnvSize = 0x40000

// pflashSize is the size QEMU's virt machine requires of a flash image.
const pflashSize = 64 << 20

// UBootEnv encodes an environment the way mkenvimage does: a little-endian
// CRC-32 of the data, then "name=value\0" entries, an empty one to end, and
// 0xff padding (erased flash) to size.
func UBootEnv(vars []string, size int) ([]byte, error) {
	b := make([]byte, size)
	for i := range b {
		b[i] = 0xff
	}
	data := []byte(strings.Join(vars, "\x00") + "\x00\x00")
	if len(data) > size-4 {
		return nil, fmt.Errorf("U-Boot environment of %d bytes does not fit in %d", len(data), size-4)
	}
	copy(b[4:], data)
	binary.LittleEndian.PutUint32(b, crc32.ChecksumIEEE(b[4:]))
	return b, nil
}

// writePflashEnv writes a flash image holding vars for QEMU's second flash
// bank. U-Boot then boots with our bootdelay and bootcmd rather than its
// defaults, which scan every bus before trying the network: under emulation
// that costs close to a minute.
func writePflashEnv(path string, vars []string) error {
	env, err := UBootEnv(vars, ubootEnvSize)
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(env); err != nil {
		f.Close()
		return err
	}
	if err := f.Truncate(pflashSize); err != nil { // sparse: erased flash is never read
		f.Close()
		return err
	}
	return f.Close()
}
