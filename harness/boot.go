package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/results"
)

// cmdline is the kernel command line of this run: the console, a panic
// that reboots (so a dead board is seen as one), the run's parameters, the
// clock where the command line carries it, and the user's additions.
func (r *run) cmdline() string {
	o, p := r.o, r.o.Board.Profile
	baud := o.Board.Baud
	if baud == 0 {
		baud = p.Baud
	}
	params := bootparam.Params{Run: string(r.rec.ID), Bench: o.Benchmark, Seconds: o.Seconds, Algs: o.Algs}
	parts := []string{fmt.Sprintf("console=%s,%d panic=-1 quiet loglevel=1", p.Console, baud)}
	switch {
	case o.Clock == 0:
	case p.ClockMethod == boards.ClockCPUFreq:
		params.ClockMHz = int(o.Clock)
	case p.ClockMethod == boards.ClockCmdline:
		parts = append(parts, strings.ReplaceAll(p.ClockCmdline, "{mhz}", fmt.Sprint(int(o.Clock))))
	}
	parts = append(parts, params.String(), o.Append)
	return strings.TrimSpace(strings.Join(parts, " "))
}

// serve puts what the board boots where it will get it: into the target
// itself for a board that loads a kernel directly, else into the bench's
// file tree with the bench serving it. The returned stop ends the serving.
func (r *run) serve(ctx context.Context, kernel, image, dir string, events chan<- netboot.Event) (stop func(), err error) {
	o, p := r.o, r.o.Board.Profile
	cmdline := r.cmdline()
	switch p.Boot {
	case boards.BootQEMUDirect:
		dl, ok := o.Target.(DirectLoader)
		if !ok {
			return nil, fmt.Errorf("board %s: boot method qemu-direct needs a virtual board", o.Board.Name)
		}
		k, initrd, args, err := r.stageDirect(kernel, image, dir, cmdline)
		if err != nil {
			return nil, err
		}
		dl.LoadDirect(k, initrd, args)
		return func() {}, nil
	case boards.BootIPXE, boards.BootUBootDHCP:
	default:
		return nil, fmt.Errorf("board %s: boot method %s is not supported yet (supported: ipxe, uboot-dhcp, qemu-direct)", o.Board.Name, p.Boot)
	}
	if o.Bench == nil {
		return nil, fmt.Errorf("board %s: boot method %s needs a bench network to serve it", o.Board.Name, p.Boot)
	}
	root := filepath.Join(dir, "tftp")
	if err := os.Mkdir(root, 0o755); err != nil {
		return nil, err
	}
	bootFile, err := stageNetboot(p.Boot, o.Transport, o.Bench.ServerIP(), r.rec.ID, kernel, image, root, cmdline)
	if err != nil {
		return nil, err
	}
	r.enter("network")
	report := func(e netboot.Event) {
		select {
		case events <- e:
		default: // progress is best effort; never stall a server
		}
	}
	boot := Boot{MAC: o.Board.MAC, IP: o.Board.Address, Root: root, BootFile: bootFile, IPXEScript: bootFile}
	stop, err = o.Bench.Serve(ctx, boot, report)
	if err != nil {
		return nil, err
	}
	r.say("network", "%s, serving %s (%s)", o.Bench, o.Board.Name, o.Board.MAC)
	return stop, nil
}

// stageNetboot puts what the board's bootloader fetches into root, and
// returns the file the DHCP answer names.
//
//	ipxe:       boot.ipxe (script), vmlinuz, initramfs.cpio
//	uboot-dhcp: boot.scr.uimg (U-Boot script image), Image, initramfs.cpio
func stageNetboot(method boards.BootMethod, transport string, server net.IP, runID results.RunID, kernel, image, root, cmdline string) (bootFile string, err error) {
	if err := copyFile(image, filepath.Join(root, "initramfs.cpio")); err != nil {
		return "", fmt.Errorf("stage image: %w", err)
	}
	switch method {
	case boards.BootIPXE:
		if err := copyFile(kernel, filepath.Join(root, "vmlinuz")); err != nil {
			return "", fmt.Errorf("stage kernel: %w", err)
		}
		script := IPXEScript(transport, server, string(runID), cmdline)
		return "boot.ipxe", os.WriteFile(filepath.Join(root, "boot.ipxe"), []byte(script), 0o644)
	case boards.BootUBootDHCP:
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

// IPXEScript is what iPXE runs: load our kernel and image from the server
// by transport ("http" or "tftp"), with the run's parameters on the kernel
// command line.
func IPXEScript(transport string, server net.IP, runID, cmdline string) string {
	base := transport + "://" + server.String() + "/"
	return "#!ipxe\n" +
		"echo bootbench: run " + runID + " loading from " + server.String() + " by " + transport + "\n" +
		"kernel " + base + "vmlinuz " + cmdline + "\n" +
		"initrd " + base + "initramfs.cpio\n" +
		"boot\n"
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

// stageDirect prepares a board that loads its kernel without a bootloader.
// An "elf" image is the kernel with the initramfs inside, as RouterBOOT
// loads it: the kernel finds it through rd_start/rd_size on its command
// line.
func (r *run) stageDirect(kernel, image, dir, cmdline string) (k, initrd, args string, err error) {
	switch r.o.Board.Profile.ImageFormat {
	case boards.FormatELF:
		kb, err := os.ReadFile(kernel)
		if err != nil {
			return "", "", "", fmt.Errorf("read kernel: %w", err)
		}
		cpio, err := os.ReadFile(image)
		if err != nil {
			return "", "", "", fmt.Errorf("read image: %w", err)
		}
		elf, rd, err := initramfs.WrapELF(kb, cpio, initramfs.ELFOptions{})
		if err != nil {
			return "", "", "", fmt.Errorf("wrap kernel and image in one ELF: %w", err)
		}
		k = filepath.Join(dir, "kernel.elf")
		if err := os.WriteFile(k, elf, 0o644); err != nil {
			return "", "", "", err
		}
		r.say("image", "kernel and image in one ELF: %s (%s)", mib(int64(len(elf))), rd)
		return k, "", cmdline + " " + rd, nil
	case boards.FormatCPIO:
		return kernel, image, cmdline, nil
	}
	return "", "", "", fmt.Errorf("board %s: image format %q cannot be booted directly", r.o.Board.Name, r.o.Board.Profile.ImageFormat)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
