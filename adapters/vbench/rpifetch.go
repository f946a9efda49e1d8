package vbench

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// piFetcher fetches the Pi 4's boot files by TFTP from one server, under
// the prefix the first file decides.
type piFetcher struct {
	rom    *piROM
	ctx    context.Context
	l      *link
	mac    net.HardwareAddr // the server's
	server net.IP
	prefix string
}

// errNotFound is a TFTP server's "file not found".
var errNotFound = errors.New("file not found")

// get fetches prefix+name, printing what the bootloader prints.
func (f *piFetcher) get(name string) ([]byte, error) {
	path := f.prefix + name
	f.rom.say("TFTP_GET: %s %s %s", f.rom.mac, f.server, path)
	data, err := tftpGet(f.ctx, f.l, f.mac, f.server, path, func() {})
	var te *tftpError
	if errors.As(err, &te) {
		f.rom.say("TFTP: error %d %s", te.code, te.msg)
		if te.code == tftpNotFound {
			return nil, fmt.Errorf("%s: %w", path, errNotFound)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.rom.say("TFTP: complete %d", len(data))
	return data, nil
}

// need fetches a file the boot cannot go on without.
func (f *piFetcher) need(name, what string) ([]byte, error) {
	data, err := f.get(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return data, nil
}

// firmware decides the prefix (TFTP_PREFIX): start4.elf or start.elf in
// the serial's directory keep it; neither clears it.
func (f *piFetcher) firmware() error {
	f.prefix = f.rom.serial + "/"
	_, err := f.get("start4.elf")
	if errors.Is(err, errNotFound) {
		if _, err := f.get("start.elf"); err == nil {
			return fmt.Errorf("%sstart.elf is the firmware of the Pis before the 4, which needs start4.elf", f.prefix)
		} else if !errors.Is(err, errNotFound) {
			return err
		}
		f.prefix = ""
		_, err = f.need("start4.elf", "firmware")
	}
	if err != nil {
		return err
	}
	f.rom.say("Read start4.elf")
	if _, err := f.need("fixup4.dat", "firmware"); err != nil {
		return err
	}
	f.rom.say("Read fixup4.dat")
	f.rom.say("Starting start4.elf @ 0xfec00200 partition -1")
	return nil
}

// fetchAll fetches what the bootloader and then the firmware read, in
// their order.
func (f *piFetcher) fetchAll() (*piLoad, error) {
	if err := f.firmware(); err != nil {
		return nil, err
	}
	load := &piLoad{}
	text, err := f.get("config.txt")
	switch {
	case errors.Is(err, errNotFound):
		f.rom.say("MESS: no config.txt: defaults")
	case err != nil:
		return nil, err
	default:
		if load.config, err = parsePiConfig(string(text), f.rom.serial); err != nil {
			// Fetching it again would read the same lines.
			f.rom.say("MESS: %v", err)
			return nil, fmt.Errorf("%w: %v", errCannotStart, err)
		}
	}
	c := load.config
	text, err = f.get(c.CmdlineFile())
	if err != nil && !errors.Is(err, errNotFound) {
		return nil, err
	}
	load.cmdline = parseCmdline(string(text))
	if _, err := f.need(c.DeviceTreeFile(), "device tree"); err != nil {
		return nil, err
	}
	f.rom.say("MESS: Loaded '%s' (QEMU's virt machine makes its own)", c.DeviceTreeFile())
	if load.kernel, err = f.need(c.KernelFile(), "kernel"); err != nil {
		return nil, err
	}
	f.rom.say("MESS: Loading '%s' to 0x200000 size %#x", c.KernelFile(), len(load.kernel))
	if c.Initramfs != "" {
		if load.initrd, err = f.need(c.Initramfs, "initramfs"); err != nil {
			return nil, err
		}
		f.rom.say("MESS: Loading '%s' followkernel size %#x", c.Initramfs, len(load.initrd))
	}
	return load, nil
}
