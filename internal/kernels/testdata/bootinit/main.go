// Command bootinit is the /init of the initramfs the kernel tests boot: it
// shows that the kernel runs a program of its byte order, says how long
// the kernel took to start it and what the kernel says of the CPU, then
// powers the board off.
package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// Marker starts the line the test waits for; Marker+"-END" follows
// /proc/cpuinfo.
const Marker = "BOOTBENCH-KERNEL-INIT"

func main() {
	con := console()
	os.MkdirAll("/proc", 0o555)
	if err := syscall.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		fmt.Fprintf(con, "bootinit: mount /proc: %v\n", err)
	}
	uptime := firstField("/proc/uptime")
	// A sleep needs the kernel's clocks and timers as the Go runtime
	// calls them; it hangs, or measures nonsense, when they are missing.
	fmt.Fprintln(con, "bootinit: sleeping 100 ms")
	start := time.Now()
	time.Sleep(100 * time.Millisecond)
	slept := time.Since(start)
	fmt.Fprintf(con, "%s byteorder=%s uptime=%s slept=%.3f float=%g\n", Marker, byteOrder(), uptime, slept.Seconds(), float())
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		fmt.Fprintf(con, "bootinit: %v\n", err)
	}
	con.Write(cpuinfo)
	fmt.Fprintf(con, "%s-END\n", Marker)
	syscall.Sync()
	if err := syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Fprintf(con, "bootinit: power off: %v\n", err)
	}
	select {} // init must not exit: the kernel would panic
}

// console opens the console: the kernel starts /init with no open files
// when the initramfs has no /dev/console of its own (devtmpfs mounts
// after the initramfs is unpacked, but before /init starts).
func console() *os.File {
	if con, err := os.OpenFile("/dev/console", os.O_WRONLY, 0); err == nil {
		return con
	}
	return os.Stdout
}

// byteOrder is the order this process finds a two-byte integer's bytes in
// memory: the CPU's, as the kernel set it up for user mode.
func byteOrder() string {
	x := uint16(0x0102)
	if *(*byte)(unsafe.Pointer(&x)) == 0x01 {
		return "big"
	}
	return "little"
}

// float is a sum a hardfloat build computes with the FPU's instructions,
// which the kernel must run or emulate.
func float() float64 {
	x := 0.0
	for i := 1; i <= 10; i++ {
		x += 1 / float64(i*i)
	}
	return x
}

func firstField(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
