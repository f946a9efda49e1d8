package fwclock

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bootbench/bootbench/boards"
)

// MenuSeen is RouterBOOT's setup menu as a console log shows it: someone
// entered setup by hand and captured it. It says, before a run, whether
// the routerboot-menu dialect can drive that firmware and which clocks its
// cpu frequency menu offers.
type MenuSeen struct {
	Main        []MenuItem    // the main menu, as last shown
	Frequencies boards.Clocks // the cpu frequency menu's settings (nil: not shown)
	// EthernetOnce is the boot device menu's "boot Ethernet once, then
	// NAND" ("" when that menu was not shown or lacks it); BootDevices
	// tells whether that menu was shown.
	EthernetOnce MenuItem
	BootDevices  bool
	mainText     string
	frequency    string
}

// MenuItem is one line of a menu: its key and its words.
type MenuItem struct{ Key, Words string }

// ReadRouterBOOTMenu reads the setup menus in a console log's text: each
// stretch that ends at "your choice:" is a menu, told apart by its items
// (the main menu's "cpu frequency", settings written "N MHz", a boot
// device's "boot over Ethernet"). ok is false when the text shows none.
func ReadRouterBOOTMenu(text string) (m MenuSeen, ok bool) {
	segs := strings.Split(text, rbChoice)
	for i, seg := range segs[:len(segs)-1] {
		if i > 0 {
			// The rest of the line "your choice:" began is the key
			// chosen, echoed with its item's words.
			_, seg, _ = strings.Cut(seg, "\n")
		}
		items := menuItems(seg)
		switch {
		case hasItem(items, rbCPUFrequency) || hasItem(items, rbBootDevice):
			m.Main, m.mainText, ok = toMenuItems(items), seg, true
		case frequencies(items) != nil:
			m.Frequencies, m.frequency, ok = frequencies(items), seg, true
		case hasItem(items, rbEthernetOnce) || hasItem(items, rbBootOverEthernet):
			m.BootDevices, ok = true, true
			if it, found := find(items, rbEthernetOnce); found {
				m.EthernetOnce = MenuItem{it.key, it.words}
			}
		}
	}
	return m, ok
}

// rbBootOverEthernet tells the boot device menu apart when its one-time
// item is worded otherwise.
var rbBootOverEthernet = regexp.MustCompile(`(?i)^boot\s+over\s+ethernet$`)

// Drivable says whether the dialect finds all it needs in the menus seen:
// nil, or a Refusal quoting the menu that lacks it. A menu not shown is
// not held against the firmware.
func (m MenuSeen) Drivable() error {
	if m.Main != nil {
		rb := RouterBOOT{}
		if _, _, _, err := rb.mainItems(m.mainText, menuItems(m.mainText)); err != nil {
			// The refusal quotes the menu as the log shows it.
			return err
		}
	}
	if m.BootDevices && m.EthernetOnce.Key == "" {
		return &Refusal{Firmware: "RouterBOOT's boot device menu", Missing: `item "boot Ethernet once, then NAND"`}
	}
	return nil
}

// Summary is what was seen, for a person: "main menu: cpu frequency f,
// boot device o, exit setup x; cpu frequency: 200, 300 MHz".
func (m MenuSeen) Summary() string {
	var parts []string
	if m.Main != nil {
		var found []string
		for _, need := range []struct {
			name string
			re   interface{ MatchString(string) bool }
		}{{"cpu frequency", rbCPUFrequency}, {"boot device", rbBootDevice}, {"exit setup", rbExit}} {
			for _, it := range m.Main {
				if need.re.MatchString(it.Words) {
					found = append(found, need.name+" "+it.Key)
					break
				}
			}
		}
		parts = append(parts, "main menu: "+strings.Join(found, ", "))
	}
	if m.Frequencies != nil {
		parts = append(parts, "cpu frequency: "+m.Frequencies.Joined(", "))
	}
	if m.EthernetOnce.Key != "" {
		parts = append(parts, fmt.Sprintf("boot device: %s - %s", m.EthernetOnce.Key, m.EthernetOnce.Words))
	}
	return strings.Join(parts, "; ")
}

func hasItem(items []menuItem, re interface{ MatchString(string) bool }) bool {
	for _, it := range items {
		if re.MatchString(it.words) {
			return true
		}
	}
	return false
}

func toMenuItems(items []menuItem) []MenuItem {
	out := make([]MenuItem, len(items))
	for i, it := range items {
		out[i] = MenuItem{it.key, it.words}
	}
	return out
}

// frequencies are the settings of a cpu frequency menu, nil when items
// are not one.
func frequencies(items []menuItem) boards.Clocks {
	var out boards.Clocks
	for _, it := range items {
		if m := rbFrequency.FindStringSubmatch(it.words); m != nil {
			n, _ := strconv.Atoi(m[1])
			out = append(out, boards.MHz(n))
		}
	}
	return out
}
