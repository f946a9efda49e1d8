// Command elfinit is the /init of the initramfs the ELF wrapping test boots:
// it proves the kernel found and unpacked the initramfs, then powers off.
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Marker is what the test waits for on the serial console.
const Marker = "BOOTBENCH-ELFINIT-OK"

func main() {
	// The kernel starts /init with no open files when the initramfs has no
	// console set up for it, so open the console ourselves.
	con, err := os.OpenFile("/dev/console", os.O_WRONLY, 0)
	if err != nil {
		con = os.Stdout
	}
	cmdline := "?"
	if err := os.MkdirAll("/proc", 0o555); err == nil {
		if err := unix.Mount("proc", "/proc", "proc", 0, ""); err == nil {
			if b, err := os.ReadFile("/proc/cmdline"); err == nil {
				cmdline = strings.TrimSpace(string(b))
			}
		}
	}
	// Where the kernel's code sits in RAM shows whether it relocated
	// itself (KASLR) or stayed at its link address.
	code := "?"
	if b, err := os.ReadFile("/proc/iomem"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "Kernel code") {
				code = strings.TrimSpace(l)
			}
		}
	}
	fmt.Fprintf(con, "%s cmdline=%q iomem=%q\n", Marker, cmdline, code)
	con.Sync()
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Fprintf(con, "elfinit: power off: %v\n", err)
	}
	select {} // init must not exit: the kernel would panic
}
