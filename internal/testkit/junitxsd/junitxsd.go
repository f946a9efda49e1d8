// Package junitxsd checks JUnit XML against the schema CI servers read it
// with: the element and attribute rules of the Jenkins xUnit plugin's
// junit-10.xsd, which GitLab's JUnit report parser also accepts. Tests use
// it on what bootbench ci writes.
package junitxsd

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Check checks a document against the JUnit schema Jenkins'
// xUnit plugin validates with (junit-10.xsd, which GitLab's parser also
// accepts): the elements each element may hold, their required and
// allowed attributes, and the time attribute's number format.
func Check(doc []byte) error {
	type rule struct {
		children, required, allowed []string
	}
	rules := map[string]rule{
		"testsuites": {[]string{"testsuite"}, nil, []string{"name", "time", "tests", "failures", "errors"}},
		"testsuite": {[]string{"testsuite", "properties", "testcase", "system-out", "system-err"}, []string{"name", "tests", "failures", "errors"},
			[]string{"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"}},
		"properties": {[]string{"property"}, nil, nil},
		"property":   {nil, []string{"name", "value"}, nil},
		"testcase":   {[]string{"skipped", "error", "failure", "system-out", "system-err"}, []string{"name"}, []string{"time", "classname", "group"}},
		"failure":    {nil, nil, []string{"type", "message"}},
		"error":      {nil, nil, []string{"type", "message"}},
		"skipped":    {nil, nil, []string{"type", "message"}},
		"system-out": {nil, nil, nil},
		"system-err": {nil, nil, nil},
	}
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			r, known := rules[name]
			if !known {
				return fmt.Errorf("unknown element <%s>", name)
			}
			if len(stack) == 0 && name != "testsuites" && name != "testsuite" {
				return fmt.Errorf("root element <%s>", name)
			}
			if len(stack) > 0 && !slices.Contains(rules[stack[len(stack)-1]].children, name) {
				return fmt.Errorf("<%s> inside <%s>", name, stack[len(stack)-1])
			}
			have := map[string]string{}
			for _, a := range el.Attr {
				if !slices.Contains(r.required, a.Name.Local) && !slices.Contains(r.allowed, a.Name.Local) {
					return fmt.Errorf("<%s> has attribute %s", name, a.Name.Local)
				}
				have[a.Name.Local] = a.Value
			}
			for _, req := range r.required {
				if _, ok := have[req]; !ok {
					return fmt.Errorf("<%s> lacks attribute %s", name, req)
				}
			}
			if tm, ok := have["time"]; ok && (name == "testsuite" || name == "testsuites") && !surefireTime(tm) {
				return fmt.Errorf("<%s> time %q is not a number", name, tm)
			}
			stack = append(stack, name)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
}

// surefireTime is the schema's SUREFIRE_TIME: digits (with thousands
// commas) and an optional fraction.
func surefireTime(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	for _, c := range strings.ReplaceAll(whole, ",", "") + frac {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
