package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/bootbench/bootbench/boards"
	"github.com/bootbench/bootbench/boot"
	"github.com/bootbench/bootbench/contract/bootparam"
	"github.com/bootbench/bootbench/netboot"
	"github.com/bootbench/bootbench/plan"
)

// cmdline is the kernel command line of this run, as its plan says, with
// the ports of a benchmark the host drives.
func (r *run) cmdline() string {
	var ports []bootparam.Port
	if r.drivenByHost() {
		ports = r.o.Host.Ports()
	}
	return plan.New(r.o.Job).Cmdline(string(r.rec.ID), ports)
}

// bootSpec is what the board's bootloader gets for this run: built's
// kernel and image with the run's command line, and for a Raspberry Pi
// its firmware and device tree with the config.txt settings of the run's
// clock (a served board's built files serve every clock of its job).
func (r *run) bootSpec(built *plan.Built) *boot.Spec {
	return &boot.Spec{Run: r.rec.ID, Kernel: built.Kernel, Image: built.Payload, Cmdline: r.cmdline(),
		RaspberryPi: plan.New(r.o.Job).RaspberryPi, RaspberryPiFiles: built.RaspberryPiFiles}
}

// serve puts what the board boots where it will get it: into the target
// itself for a board that loads a kernel directly, else into a Booter the
// bench serves. The returned stop ends the serving.
func (r *run) serve(ctx context.Context, built *plan.Built, dir string, events chan<- netboot.Event) (stop func(), err error) {
	o, p := r.o, r.o.Board.Profile
	cmdline := r.cmdline()
	if p.Boot == boards.BootQEMUDirect {
		dl, ok := o.Target.(DirectLoader)
		if !ok {
			return nil, fmt.Errorf("board %s: boot method qemu-direct needs a virtual board", o.Board.Name)
		}
		k, initrd, args, err := r.stageDirect(built, dir, cmdline)
		if err != nil {
			return nil, err
		}
		dl.LoadDirect(k, initrd, args)
		return func() {}, nil
	}
	if err := boot.Servable(o.Board); err != nil {
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
	booter := boot.NewBooter(o.Bench.ServerIP(), o.Bench.Mask(), o.Transport)
	booter.AddBoot(o.Board, r.bootSpec(built))
	stop, err = o.Bench.Serve(ctx, booter, report)
	if err != nil {
		return nil, err
	}
	r.say("network", "%s, serving %s (%s)", o.Bench, o.Board.Name, o.Board.MAC)
	return stop, nil
}

// stageDirect prepares a board that loads its kernel without a bootloader.
// An ELF wrapping is the kernel with the image inside, as RouterBOOT loads
// it: the kernel finds it through rd_start/rd_size on its command line.
func (r *run) stageDirect(built *plan.Built, dir, cmdline string) (k, initrd, args string, err error) {
	switch {
	case built.Plan.Wrap.ELF:
		// QEMU's Malta hands a MIPS kernel at most 255 bytes of -append
		// and drops the rest without a word: a kernel with a command line
		// area of its own (bootbench's) gets the whole line there.
		elf, rd, err := boot.SingleELF(r.o.Board.Profile, &boot.Spec{Kernel: built.Kernel, Image: built.Payload, Cmdline: cmdline})
		if err != nil {
			return "", "", "", fmt.Errorf("wrap kernel and image in one ELF: %w", err)
		}
		k = filepath.Join(dir, "kernel.elf")
		if err := os.WriteFile(k, elf, 0o644); err != nil {
			return "", "", "", err
		}
		if rd == "" {
			r.say("image", "kernel and image in one ELF: %s (the command line in the kernel's own area)", mib(int64(len(elf))))
			return k, "", "", nil
		}
		args = cmdline + " " + rd
		if len(args) > maltaAppendMax {
			return "", "", "", fmt.Errorf("board %s: the kernel command line is %d bytes, and QEMU passes a MIPS kernel at most %d (give a kernel with a command line area, such as bootbench's, or fewer --algs)", r.o.Board.Name, len(args), maltaAppendMax)
		}
		r.say("image", "kernel and image in one ELF: %s (%s)", mib(int64(len(elf))), rd)
		return k, "", args, nil
	case r.o.Board.Profile.ImageFormat == boards.FormatUImage:
		return "", "", "", fmt.Errorf("board %s: image format %q cannot be booted directly", r.o.Board.Name, r.o.Board.Profile.ImageFormat)
	}
	return built.Kernel, built.Payload, cmdline, nil
}

// maltaAppendMax is the longest -append QEMU's Malta passes on: one
// 256-byte entry of the YAMON environment it builds, its NUL included.
const maltaAppendMax = 255
