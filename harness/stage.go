package harness

import (
	"fmt"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/results"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/vbench"
)

// stageNetboot puts what the board's bootloader fetches into the TFTP/HTTP
// root, and returns the file the DHCP answer names.
//
//	ipxe:       boot.ipxe (script), vmlinuz, initramfs.cpio
//	uboot-dhcp: boot.scr.uimg (U-Boot script image), Image, initramfs.cpio
func stageNetboot(method boards.BootMethod, transport string, server net.IP, runID results.RunID, kernel, image, root, cmdline string) (bootFile string, err error) {
	if err := copyFile(image, filepath.Join(root, "initramfs.cpio")); err != nil {
		return "", fmt.Errorf("stage image: %w", err)
	}
	switch method {
	case "ipxe":
		if err := copyFile(kernel, filepath.Join(root, "vmlinuz")); err != nil {
			return "", fmt.Errorf("stage kernel: %w", err)
		}
		script := IPXEScript(transport, server, string(runID), cmdline)
		return "boot.ipxe", os.WriteFile(filepath.Join(root, "boot.ipxe"), []byte(script), 0o644)
	case "uboot-dhcp":
		if err := copyFile(kernel, filepath.Join(root, "Image")); err != nil {
			return "", fmt.Errorf("stage kernel: %w", err)
		}
		scr, err := initramfs.UBootScript(UBootScript(cmdline))
		if err != nil {
			return "", fmt.Errorf("U-Boot script: %w", err)
		}
		// U-Boot's distro boot asks for boot.scr.uimg by this name.
		return "boot.scr.uimg", os.WriteFile(filepath.Join(root, "boot.scr.uimg"), scr, 0o644)
	}
	return "", fmt.Errorf("no netboot staging for %q", method)
}

// UBootScript is what U-Boot runs: fetch our kernel and image by TFTP from
// the server that answered its DHCP, and boot them with the run's command
// line. Debian's arm64 kernel is an uncompressed Image, which booti takes as
// is; the device tree is the one QEMU gave U-Boot.
func UBootScript(cmdline string) string {
	return strings.Join([]string{
		"echo bootbench: loading from ${serverip}",
		"setenv bootargs " + cmdline,
		"tftpboot ${kernel_addr_r} Image",
		"tftpboot ${ramdisk_addr_r} initramfs.cpio",
		"booti ${kernel_addr_r} ${ramdisk_addr_r}:${filesize} ${fdtcontroladdr}",
	}, "\n") + "\n"
}

// stageDirect prepares a board QEMU boots without a bootloader. An "elf"
// image is the kernel with the initramfs inside, as RouterBOOT loads it:
// the kernel finds it through rd_start/rd_size on its command line.
func (r *run) stageDirect(m *vbench.Machine, kernel, image, dir, cmdline string) error {
	switch r.o.Board.ImageFormat {
	case "elf":
		k, err := os.ReadFile(kernel)
		if err != nil {
			return fmt.Errorf("read kernel: %w", err)
		}
		cpio, err := os.ReadFile(image)
		if err != nil {
			return fmt.Errorf("read image: %w", err)
		}
		elf, rd, err := initramfs.WrapELF(k, cpio, initramfs.ELFOptions{})
		if err != nil {
			return fmt.Errorf("wrap kernel and image in one ELF: %w", err)
		}
		m.Kernel = filepath.Join(dir, "kernel.elf")
		if err := os.WriteFile(m.Kernel, elf, 0o644); err != nil {
			return err
		}
		m.Append = cmdline + " " + rd
		r.say("image", "kernel and image in one ELF: %s (%s)", mib(int64(len(elf))), rd)
	case "cpio", "":
		m.Kernel, m.Initrd, m.Append = kernel, image, cmdline
	default:
		return fmt.Errorf("board %s: image format %q cannot be booted directly", r.o.Board.Name, r.o.Board.ImageFormat)
	}
	return nil
}
