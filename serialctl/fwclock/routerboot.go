package fwclock

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// RouterBOOT drives MikroTik RouterBOOT's setup menu (REFERENCE: RouterBOOT
// 2.14–2.41 on RB450, RB433, RB450G). After its banner it prints "Press any
// key within 2 seconds to enter setup"; a key opens "What do you want to
// configure?", one item a line ("f - cpu frequency", "o - boot device",
// "x - exit setup", …) and "your choice:"; the key chosen is echoed after
// it. Per boot it chooses the clock under cpu frequency, "boot Ethernet
// once, then NAND" under boot device (the board is back on its own
// firmware after the run), and exits; RouterBOOT then netboots.
type RouterBOOT struct{ dialog }

// The texts RouterBOOT's menu is read by.
const (
	rbEnterSetup = "to enter setup"
	rbChoice     = "your choice:"
)

// SetupPrompt is the end of RouterBOOT's offer of its setup menu as it
// starts ("Press any key within 2 seconds to enter setup"): a served
// board's menu is driven from where it appears.
const SetupPrompt = rbEnterSetup

// setupKey opens the menu. DEL: RouterBOOT's default boot key setting
// takes any key, and DEL is the key its other setting waits for.
const setupKey = "\x7f"

// rbItem is a menu line, "f - cpu frequency" (a current choice may be
// marked with "*" before it).
var rbItem = regexp.MustCompile(`^\s*\*?\s*([0-9A-Za-z])\s+-\s+(\S.*?)\s*$`)

// The items the dialect needs, by their words.
var (
	rbCPUFrequency = regexp.MustCompile(`(?i)^cpu\s+frequency$`)
	rbBootDevice   = regexp.MustCompile(`(?i)^boot\s+device$`)
	rbExit         = regexp.MustCompile(`(?i)^exit(\s+setup)?$`)
	rbEthernetOnce = regexp.MustCompile(`(?i)^boot\s+ethernet\s+once,?\s+then\s+nand$`)
	rbFrequency    = regexp.MustCompile(`(?i)^(\d+)\s*MHz$`)
)

// SetClock enters setup as the board boots, sets mhz and a one-time
// Ethernet boot, and exits.
func (rb RouterBOOT) SetClock(ctx context.Context, from int, mhz boards.MHz) (int, error) {
	off, _, err := rb.await(ctx, from, rbEnterSetup, rb.bootTimeout)
	if err != nil {
		return from, err
	}
	if err := rb.write(setupKey); err != nil {
		return off, err
	}
	off, menu, err := rb.await(ctx, off, rbChoice, rb.stepTimeout)
	if err != nil {
		return off, err
	}
	items := menuItems(menu)
	freq, boot, exit, err := rb.mainItems(menu, items)
	if err != nil {
		return off, err
	}
	if off, err = rb.choose(ctx, off, freq, func(sub string) (menuItem, error) { return rb.frequencyItem(sub, mhz) }); err != nil {
		return off, err
	}
	if off, err = rb.choose(ctx, off, boot, rb.ethernetOnceItem); err != nil {
		return off, err
	}
	rb.say("RouterBOOT setup: %s - %s", exit.key, exit.words)
	return off, rb.write(exit.key)
}

// menuItem is one line of a menu.
type menuItem struct{ key, words string }

func menuItems(text string) []menuItem {
	var out []menuItem
	for _, l := range strings.Split(text, "\n") {
		if m := rbItem.FindStringSubmatch(strings.TrimRight(l, "\r")); m != nil {
			out = append(out, menuItem{m[1], m[2]})
		}
	}
	return out
}

func find(items []menuItem, re *regexp.Regexp) (menuItem, bool) {
	for _, it := range items {
		if re.MatchString(it.words) {
			return it, true
		}
	}
	return menuItem{}, false
}

// mainItems finds the three items of the main menu the dialect uses.
func (rb RouterBOOT) mainItems(menu string, items []menuItem) (freq, boot, exit menuItem, err error) {
	for _, need := range []struct {
		it   *menuItem
		re   *regexp.Regexp
		name string
	}{{&freq, rbCPUFrequency, "cpu frequency"}, {&boot, rbBootDevice, "boot device"}, {&exit, rbExit, "exit setup"}} {
		var ok bool
		if *need.it, ok = find(items, need.re); !ok {
			return freq, boot, exit, &Refusal{Firmware: "RouterBOOT's setup menu", Missing: fmt.Sprintf("item %q", need.name), Quote: oneLine(menu)}
		}
	}
	return freq, boot, exit, nil
}

// choose opens item's submenu, picks the key pick reads off it, and waits
// for the main menu again.
func (rb RouterBOOT) choose(ctx context.Context, off int, item menuItem, pick func(sub string) (menuItem, error)) (int, error) {
	if err := rb.write(item.key); err != nil {
		return off, err
	}
	off, sub, err := rb.await(ctx, off, rbChoice, rb.stepTimeout)
	if err != nil {
		return off, err
	}
	// The submenu's first line is the main menu's echo of the key.
	if _, rest, ok := strings.Cut(sub, "\n"); ok {
		sub = rest
	}
	choice, err := pick(sub)
	if err != nil {
		return off, err
	}
	rb.say("RouterBOOT setup: %s - %s: %s - %s", item.key, item.words, choice.key, choice.words)
	if err := rb.write(choice.key); err != nil {
		return off, err
	}
	off, _, err = rb.await(ctx, off, rbChoice, rb.stepTimeout)
	return off, err
}

// frequencyItem is mhz's line in the cpu frequency submenu ("h - 800MHz").
func (rb RouterBOOT) frequencyItem(sub string, mhz boards.MHz) (menuItem, error) {
	var offered []string
	for _, it := range menuItems(sub) {
		m := rbFrequency.FindStringSubmatch(it.words)
		if m == nil {
			continue
		}
		offered = append(offered, m[1])
		if n, _ := strconv.Atoi(m[1]); boards.MHz(n) == mhz {
			return it, nil
		}
	}
	if len(offered) == 0 {
		return menuItem{}, &Refusal{Firmware: "RouterBOOT's cpu frequency menu", Missing: "setting written as N MHz", Quote: oneLine(sub)}
	}
	return menuItem{}, &Refusal{Firmware: "RouterBOOT's cpu frequency menu", Missing: "setting " + mhz.String() + " (it offers " + strings.Join(offered, ", ") + " MHz)", Quote: oneLine(sub)}
}

// ethernetOnceItem is "boot Ethernet once, then NAND" in the boot device
// submenu.
func (rb RouterBOOT) ethernetOnceItem(sub string) (menuItem, error) {
	if it, ok := find(menuItems(sub), rbEthernetOnce); ok {
		return it, nil
	}
	return menuItem{}, &Refusal{Firmware: "RouterBOOT's boot device menu", Missing: `item "boot Ethernet once, then NAND"`, Quote: oneLine(sub)}
}
