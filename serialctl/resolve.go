package serialctl

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.bug.st/serial/enumerator"
)

// ErrNoPort means the console is not there: no such device, or no USB
// adapter with the given identity.
var ErrNoPort = errors.New("no such serial port")

// ErrAmbiguous means a usb:VID:PID spec matches more than one adapter and
// needs the serial number to say which.
var ErrAmbiguous = errors.New("more than one serial adapter matches")

// NoPortError says which console was not found and which ports are present,
// so the user can correct the spec.
type NoPortError struct {
	Spec    string
	Present []*enumerator.PortDetails
}

func (e *NoPortError) Error() string {
	return fmt.Sprintf("no console %s: %s", e.Spec, describePorts(e.Present))
}

func (e *NoPortError) Is(target error) bool { return target == ErrNoPort }

var usbSpecRE = regexp.MustCompile(`^usb:([0-9a-fA-F]{4}):([0-9a-fA-F]{4})(?::([^:\s]+))?$`)

// Resolve finds the device a console spec names among ports (from
// enumerator.GetDetailedPortsList). A usb:VID:PID[:SERIAL] spec matches
// VID and PID in any case of hex and the serial number exactly; without a
// serial number it must match one adapter only. Any other spec is a device
// path and is returned as it is.
func Resolve(spec string, ports []*enumerator.PortDetails) (string, error) {
	if !strings.HasPrefix(spec, "usb:") {
		return spec, nil
	}
	m := usbSpecRE.FindStringSubmatch(spec)
	if m == nil {
		return "", fmt.Errorf("console %q: write usb:VID:PID or usb:VID:PID:SERIAL with 4-digit hex ids (lsusb shows them)", spec)
	}
	vid, pid, serial := m[1], m[2], m[3]
	var found []*enumerator.PortDetails
	for _, p := range ports {
		if p.IsUSB && strings.EqualFold(p.VID, vid) && strings.EqualFold(p.PID, pid) &&
			(serial == "" || p.SerialNumber == serial) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", &NoPortError{Spec: spec, Present: ports}
	case 1:
		return found[0].Name, nil
	}
	var choices []string
	for _, p := range sortedPorts(found) {
		choices = append(choices, fmt.Sprintf("usb:%s:%s:%s (%s)", strings.ToLower(p.VID), strings.ToLower(p.PID), p.SerialNumber, p.Name))
	}
	return "", fmt.Errorf("console %s: %w: %s; add the serial number to say which", spec, ErrAmbiguous, strings.Join(choices, ", "))
}

// describePorts lists ports with their USB identity, the way a console spec
// names them.
func describePorts(ports []*enumerator.PortDetails) string {
	if len(ports) == 0 {
		return "no serial ports are present (is the adapter plugged in?)"
	}
	var s []string
	for _, p := range sortedPorts(ports) {
		switch {
		case !p.IsUSB:
			s = append(s, p.Name+" (not USB)")
		case p.SerialNumber == "":
			s = append(s, fmt.Sprintf("%s (usb:%s:%s, no serial number)", p.Name, strings.ToLower(p.VID), strings.ToLower(p.PID)))
		default:
			s = append(s, fmt.Sprintf("%s (usb:%s:%s:%s)", p.Name, strings.ToLower(p.VID), strings.ToLower(p.PID), p.SerialNumber))
		}
	}
	return "present: " + strings.Join(s, ", ")
}

func sortedPorts(ports []*enumerator.PortDetails) []*enumerator.PortDetails {
	s := append([]*enumerator.PortDetails(nil), ports...)
	sort.Slice(s, func(i, j int) bool { return s[i].Name < s[j].Name })
	return s
}
