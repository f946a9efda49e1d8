package vbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The virtual RouterBOOT's setup menu, as RouterBOOT 2.14–2.41 prints it on
// an RB450, RB433 or RB450G (REFERENCE, "RouterBOOT setup menu"): after the
// banner, "Press any key within N seconds to enter setup"; a key opens
// "What do you want to configure?", one item a line and "your choice:".
// The key chosen is echoed with its item's words; an item with settings
// lists them (the current one marked "*") and takes one key; then the
// main menu again. Every item of RouterBOOT's menu is there: cpu
// frequency and boot device work as on the board, the others keep their
// setting, or answer as the board would where the twin has nothing behind
// them (its NAND is empty, its firmware not upgradable).
//
// Settings live in the board's flash (rbSettings). A new cpu frequency
// takes a restart: on exit the ROM starts again, announcing the clock it
// now runs at, which is the one the kernel gets (QEMU's -icount clock).

// rbSettings are RouterBOOT's settings as the virtual board keeps them.
type rbSettings struct {
	CPUMHz       int    `json:"cpu_mhz"`
	BootDevice   string `json:"boot_device"`
	BootDelay    int    `json:"boot_delay"`
	BootKey      string `json:"boot_key"`
	BootProtocol string `json:"boot_protocol"`
	CPUMode      string `json:"cpu_mode"`
	SerialBaud   int    `json:"serial_baud"`
}

// The boot devices.
const (
	bootEthernet     = "ethernet"
	bootNANDThenEth  = "nand-then-ethernet"
	bootEthernetOnce = "ethernet-once"
	bootNANDOnly     = "nand-only"
)

// rbFlashFile is where the settings are, in the board's flash directory.
const rbFlashFile = "routerboot.json"

// factoryRB is a RouterBOARD as it leaves the factory, at mhz.
func factoryRB(mhz int) rbSettings {
	return rbSettings{CPUMHz: mhz, BootDevice: bootNANDThenEth, BootDelay: 2, BootKey: "any",
		BootProtocol: "bootp", CPUMode: "power-save", SerialBaud: 115200}
}

// rbChoice is one setting an item offers.
type rbChoice struct {
	key, words string
	is         func(rbSettings) bool
	set        func(*rbSettings)
}

// rbItem is one item of the main menu: settings to choose from, or an
// action.
type rbItem struct {
	key, words, title string
	choices           []rbChoice
	action            func(r *routerBOOTROM, ctx context.Context) error
}

// rbMenu is the main menu, in RouterBOOT's order.
func rbMenu() []rbItem {
	return []rbItem{
		{key: "d", words: "boot delay", title: "Select boot delay:", choices: delayChoices()},
		{key: "k", words: "boot key", title: "Select key which will enter setup on boot:", choices: []rbChoice{
			strChoice("a", "any key", "any", func(s *rbSettings) *string { return &s.BootKey }),
			strChoice("d", "<Delete> key only", "delete", func(s *rbSettings) *string { return &s.BootKey }),
		}},
		{key: "s", words: "serial console", title: "Select baud rate for serial console:", choices: baudChoices()},
		{key: "o", words: "boot device", title: "Select boot device:", choices: []rbChoice{
			strChoice("e", "boot over Ethernet", bootEthernet, bootDevice),
			strChoice("n", "boot from NAND, if fail then Ethernet", bootNANDThenEth, bootDevice),
			strChoice("1", "boot Ethernet once, then NAND", bootEthernetOnce, bootDevice),
			strChoice("o", "boot from NAND only", bootNANDOnly, bootDevice),
		}},
		{key: "u", words: "cpu mode", title: "Select CPU mode:", choices: []rbChoice{
			strChoice("p", "power save", "power-save", func(s *rbSettings) *string { return &s.CPUMode }),
			strChoice("r", "regular", "regular", func(s *rbSettings) *string { return &s.CPUMode }),
		}},
		{key: "f", words: "cpu frequency", title: "Select CPU frequency:", choices: frequencyChoices()},
		{key: "r", words: "reset booter configuration", action: (*routerBOOTROM).resetSettings},
		{key: "e", words: "format nand", action: (*routerBOOTROM).formatNAND},
		{key: "g", words: "upgrade firmware", action: func(r *routerBOOTROM, _ context.Context) error {
			r.say("the virtual board's booter is part of bootbench; it is upgraded with it\r\n")
			return nil
		}},
		{key: "i", words: "board info", action: func(r *routerBOOTROM, _ context.Context) error {
			// RouterBOOT's own banner, word for word (not bootbench's clock text).
			r.say("Board: %s (virtual)\r\nBooter version: virtual\r\nCPU frequency: %d MHz\r\nMemory size: %d MB\r\n", r.board, r.settings.CPUMHz, r.ramMB)
			return nil
		}},
		{key: "p", words: "boot protocol", title: "Choose which boot protocol to use:", choices: []rbChoice{
			strChoice("b", "bootp protocol", "bootp", func(s *rbSettings) *string { return &s.BootProtocol }),
			strChoice("d", "dhcp protocol", "dhcp", func(s *rbSettings) *string { return &s.BootProtocol }),
		}},
		{key: "t", words: "do memory testing", action: func(r *routerBOOTROM, _ context.Context) error {
			r.say("testing memory... %d MB OK\r\n", r.ramMB)
			return nil
		}},
		{key: "x", words: "exit setup"},
	}
}

func bootDevice(s *rbSettings) *string { return &s.BootDevice }

func strChoice(key, words, v string, field func(*rbSettings) *string) rbChoice {
	return rbChoice{key: key, words: words,
		is:  func(s rbSettings) bool { return *field(&s) == v },
		set: func(s *rbSettings) { *field(s) = v }}
}

func intChoice(key, words string, v int, field func(*rbSettings) *int) rbChoice {
	return rbChoice{key: key, words: words,
		is:  func(s rbSettings) bool { return *field(&s) == v },
		set: func(s *rbSettings) { *field(s) = v }}
}

func delayChoices() []rbChoice {
	var out []rbChoice
	for d := 1; d <= 9; d++ {
		out = append(out, intChoice(fmt.Sprint(d), fmt.Sprintf("%d second%s", d, plural(d)), d, func(s *rbSettings) *int { return &s.BootDelay }))
	}
	return out
}

func baudChoices() []rbChoice {
	var out []rbChoice
	for i, b := range []int{1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200} {
		out = append(out, intChoice(fmt.Sprint(i+1), fmt.Sprint(b), b, func(s *rbSettings) *int { return &s.SerialBaud }))
	}
	return out
}

// frequencyChoices are the clocks the twin can make: QEMU's -icount
// halvings of 1000 MHz.
func frequencyChoices() []rbChoice {
	var out []rbChoice
	for i, mhz := range []int{250, 500, 1000} {
		out = append(out, intChoice(string(rune('a'+i)), fmt.Sprintf("%dMHz", mhz), mhz, func(s *rbSettings) *int { return &s.CPUMHz }))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// enterSetup waits the boot delay for a key (the Delete key only, when
// the boot key says so).
func (r *routerBOOTROM) enterSetup(ctx context.Context) bool {
	r.say("Press any key within %d second%s to enter setup", r.settings.BootDelay, plural(r.settings.BootDelay))
	deadline := time.Now().Add(time.Duration(r.settings.BootDelay) * time.Second)
	for {
		b, err := readKey(ctx, r.con, deadline)
		if err != nil {
			r.say("\r\n")
			return false
		}
		if r.settings.BootKey != "delete" || b == 0x7f {
			return true
		}
	}
}

// errRestart is the menu's exit after the clock changed: the ROM starts
// again at the new clock.
var errRestart = errors.New("restart")

// setup runs the menu until exit. It returns errRestart when the clock
// changed.
func (r *routerBOOTROM) setup(ctx context.Context) error {
	was := r.settings.CPUMHz
	menu := rbMenu()
	for {
		r.say("\r\n\r\nRouterBOOT-virtual\r\nWhat do you want to configure?\r\n")
		for _, it := range menu {
			r.say("   %s - %s\r\n", it.key, it.words)
		}
		it, err := r.pick(ctx, menu)
		if err != nil {
			return err
		}
		r.say("%s - %s\r\n", it.key, it.words)
		switch {
		case it.key == "x":
			if err := saveFlash(r.flash, rbFlashFile, r.settings); err != nil {
				r.say("saving settings failed: %v\r\n", err)
			}
			if r.settings.CPUMHz != was {
				return errRestart
			}
			return nil
		case it.action != nil:
			err = it.action(r, ctx)
		default:
			err = r.choose(ctx, it)
		}
		if err != nil {
			return err
		}
	}
}

// pick prints "your choice: " and reads keys until one names an item.
func (r *routerBOOTROM) pick(ctx context.Context, menu []rbItem) (rbItem, error) {
	r.say("\r\nyour choice: ")
	for {
		b, err := readKey(ctx, r.con, time.Now().Add(time.Hour))
		if errors.Is(err, errTimeout) {
			continue
		}
		if err != nil {
			return rbItem{}, err
		}
		for _, it := range menu {
			if it.key == string(rune(b)) {
				return it, nil
			}
		}
	}
}

// choose lists an item's settings and takes the one chosen.
func (r *routerBOOTROM) choose(ctx context.Context, it rbItem) error {
	r.say("\r\n%s\r\n", it.title)
	menu := make([]rbItem, len(it.choices))
	for i, c := range it.choices {
		mark := " "
		if c.is(r.settings) {
			mark = "*"
		}
		r.say(" %s %s - %s\r\n", mark, c.key, c.words)
		menu[i] = rbItem{key: c.key, words: c.words}
	}
	got, err := r.pick(ctx, menu)
	if err != nil {
		return err
	}
	r.say("%s - %s\r\n", got.key, got.words)
	for _, c := range it.choices {
		if c.key == got.key {
			c.set(&r.settings)
		}
	}
	return nil
}

// yes asks a question and reads y or n.
func (r *routerBOOTROM) yes(ctx context.Context, question string) (bool, error) {
	r.say("%s [y/N]: ", question)
	b, err := readKey(ctx, r.con, time.Now().Add(time.Minute))
	if errors.Is(err, errTimeout) {
		r.say("\r\n")
		return false, nil
	}
	if err != nil {
		return false, err
	}
	r.say("%c\r\n", b)
	return strings.EqualFold(string(rune(b)), "y"), nil
}

func (r *routerBOOTROM) resetSettings(ctx context.Context) error {
	ok, err := r.yes(ctx, "Do you really want to reset booter configuration?")
	if ok {
		r.settings = factoryRB(r.factoryMHz)
		r.say("booter configuration reset\r\n")
	}
	return err
}

func (r *routerBOOTROM) formatNAND(ctx context.Context) error {
	ok, err := r.yes(ctx, "Do you want to format your NAND?")
	if ok {
		r.say("formatting NAND... done (the virtual board's NAND holds nothing)\r\n")
	}
	return err
}
