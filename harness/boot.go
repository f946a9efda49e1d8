package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/initramfs"
	"github.com/bootbench/bootbench/internal/bootparam"
	"github.com/bootbench/bootbench/netboot"
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
	if o.Router != nil && o.Benchmark == BenchRoute {
		params.Ports = o.Router.Ports()
	}
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
// itself for a board that loads a kernel directly, else into a Booter the
// bench serves. The returned stop ends the serving.
func (r *run) serve(ctx context.Context, kernel, image, dir string, events chan<- netboot.Event) (stop func(), err error) {
	o, p := r.o, r.o.Board.Profile
	cmdline := r.cmdline()
	if p.Boot == boards.BootQEMUDirect {
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
	}
	if err := netbootable(o.Board); err != nil {
		return nil, err
	}
	if o.Bench == nil {
		return nil, fmt.Errorf("board %s: boot method %s needs a bench network to serve it", o.Board.Name, p.Boot)
	}
	r.enter("network")
	report := func(e netboot.Event) {
		select {
		case events <- e:
		default: // progress is best effort; never stall a server
		}
	}
	booter := NewBooter(o.Bench.ServerIP(), o.Bench.Mask(), o.Transport)
	booter.AddBoot(o.Board, &BootSpec{Run: r.rec.ID, Kernel: kernel, Image: image, Cmdline: cmdline})
	stop, err = o.Bench.Serve(ctx, booter, report)
	if err != nil {
		return nil, err
	}
	r.say("network", "%s, serving %s (%s)", o.Bench, o.Board.Name, o.Board.MAC)
	return stop, nil
}

// netbootable refuses, before anything is powered, a board whose boot
// method bootbench cannot serve yet.
func netbootable(b boards.Board) error {
	switch b.Profile.Boot {
	case boards.BootIPXE, boards.BootPXE, boards.BootUBootDHCP, boards.BootUBootSerial, boards.BootPXELinux, boards.BootRouterBOOT, boards.BootCFE:
		return nil
	}
	return fmt.Errorf("board %s: boot method %s is not supported yet (supported: ipxe, pxe, uboot-dhcp, uboot-serial, pxelinux, routerboot-bootp, cfe, qemu-direct)", b.Name, b.Profile.Boot)
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
