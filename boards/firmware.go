package boards

import (
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// A board under its own firmware, in the inventory:
//
//	rb1100-1:
//	  profile: rb1100
//	  image: none
//	  console: /dev/ttyUSB1
//	  power: {driver: manual}
//	  route_configs:
//	    plain:
//	      - {send: "/ip firewall filter remove [find]"}
//	      - {expect: "] > "}
//	    stateful:
//	      - {manual: "set the firewall to drop new connections from the WAN"}
//
// image: none is the whole contract: no image is built or served for the
// board. Each configuration is a list of console steps, as a profile's
// console_steps, plus manual steps the operator does by hand; a single
// {manual: ...} stands for a list of one.

// configNameRE is a configuration name: it becomes part of metric names.
var configNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// stepFields are a console step's fields in an inventory.
var stepFields = []string{"expect", "send", "key", "manual", "timeout"}

// image reads image:, which says whether bootbench netboots the board
// (netboot, the default) or leaves it its own firmware (none).
func (p *inventoryParser) image(n *yaml.Node, what string) (own bool) {
	var s string
	if !p.scalar(n, what+" image", &s) {
		return false
	}
	switch s {
	case "none":
		return true
	case "netboot":
		return false
	}
	p.problem(n, "%s: image %q: give none (the board keeps its own firmware; bootbench netboots nothing) or netboot (the default)", what, s)
	return true // its other fields are read as none's: this one problem is the one to fix
}

// firmwareFields checks what goes with image: none: the route
// configurations, and none of what only a netboot uses.
func (p *inventoryParser) firmwareFields(b Board, f map[string]*yaml.Node, k *yaml.Node, what string) Board {
	if !b.OwnFirmware {
		if n := f["route_configs"]; n != nil {
			p.problem(n, "%s: route_configs are for a board under its own firmware (image: none); a netbooted board's configurations are bootbench's own (--route-configs)", what)
		}
		return b
	}
	for _, key := range []string{"kernel", "job"} {
		if n := f[key]; n != nil {
			p.problem(n, "%s: %s is for a netbooted board; this one keeps its own firmware (image: none)", what, key)
		}
	}
	n := f["route_configs"]
	if n == nil {
		if absent(f, "route_configs") {
			p.problem(k, "%s: image: none needs route_configs (each configuration's console steps, e.g. plain: [{send: \"...\"}, {expect: \"# \"}])", what)
		}
		return b
	}
	b.RouteConfigs = p.routeConfigs(n, what)
	return b
}

// routeConfigs reads route_configs: a mapping of configuration names to
// their steps, in file order.
func (p *inventoryParser) routeConfigs(n *yaml.Node, what string) []RouteConfig {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		p.problem(n, "%s: route_configs must map each configuration's name to its steps (plain: [{send: \"...\"}, {expect: \"# \"}])", what)
		return nil
	}
	var out []RouteConfig
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		c := RouteConfig{Name: k.Value, Line: k.Line}
		cwhat := what + " route config " + c.Name
		switch {
		case !configNameRE.MatchString(c.Name):
			p.problem(k, "%s: route config name %q: use lower-case letters, digits, '-' and '_' (it names metrics: tcp-throughput@1460/%s)", what, c.Name, c.Name)
		case c.Name == "direct":
			p.problem(k, "%s: route config name direct is the baseline without the board; name it differently", what)
		case slices.ContainsFunc(out, func(o RouteConfig) bool { return o.Name == c.Name }):
			p.problem(k, "%s: route config %s given twice", what, c.Name)
		}
		c.Steps = p.steps(v, cwhat)
		out = append(out, c)
	}
	return out
}

// steps reads one configuration's steps: a list, or one step on its own.
func (p *inventoryParser) steps(n *yaml.Node, what string) []ConsoleStep {
	items := []*yaml.Node{n}
	switch n.Kind {
	case yaml.SequenceNode:
		items = n.Content
	case yaml.MappingNode:
	default:
		p.problem(n, "%s: give a list of steps ({send: ...}, {expect: ..., timeout: 30s}, {key: ...}, {manual: ...})", what)
		return nil
	}
	var out []ConsoleStep
	for i, item := range items {
		swhat := what + " step " + strconv.Itoa(i+1)
		f := p.mapping(item, swhat, stepFields...)
		if f == nil {
			continue
		}
		var st ConsoleStep
		given := 0
		for _, fld := range []struct {
			key string
			v   *string
		}{{"expect", &st.Expect}, {"send", &st.Send}, {"key", &st.Key}, {"manual", &st.Manual}} {
			if f[fld.key] != nil && p.scalar(f[fld.key], swhat+" "+fld.key, fld.v) {
				given++
			}
		}
		for _, fld := range []string{"expect", "send", "key", "manual"} {
			if f[misspelt+fld] != nil {
				given++ // said once already, as unknown
			}
		}
		if given != 1 {
			p.problem(item, "%s: give one of expect, send, key or manual", swhat)
			continue
		}
		if t := f["timeout"]; t != nil {
			if st.Expect == "" {
				p.problem(t, "%s: timeout is how long an expect waits", swhat)
			} else if p.scalar(t, swhat+" timeout", &st.Timeout) && st.Timeout <= 0 {
				p.problem(t, "%s: timeout must be more than 0", swhat)
			}
		}
		if st.Expect != "" && st.Timeout == 0 {
			st.Timeout = defaultStepTimeout
		}
		out = append(out, st)
	}
	return out
}
