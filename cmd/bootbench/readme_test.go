package main

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// README's command lines are checked against the binary: every command
// line in its Commands block, every line of its code blocks that runs
// bootbench, and every inline `bootbench …` span must name a command the
// binary has and only flags that command's --help lists. A README example
// with a flag the binary lacks fails make test, naming the line.

// commandWords are bootbench's commands; results, boards and image take a
// subcommand.
var (
	commandWords = []string{"run", "serve", "ci", "console", "import", "results", "boards", "image", "speed", "tftp", "version"}
	groupWords   = map[string][]string{
		"results": {"list", "show", "compare", "export", "check", "push"},
		"boards":  {"list", "show"},
		"image":   {"build", "prebuild"},
	}
)

// readmeUse is one use of a command README shows: the command (with its
// subcommand), the flags it gives, and where.
type readmeUse struct {
	line    int
	text    string
	command string
	flags   []string
}

var (
	flagRE       = regexp.MustCompile(`(?:^|[\s\[(])(--?[a-z][a-z0-9-]*)`)
	inlineCodeRE = regexp.MustCompile("`((?:bin/)?bootbench [^`]+)`")
	promptRE     = regexp.MustCompile(`^\s*(?:\$ )?(?:bin/)?bootbench\s`)
	// commandLike is a word in a command's place: an inline span whose
	// first word is one and that gives flags is held to the binary's
	// commands; any other (a line the host types on a board's console,
	// `bootbench route <config>`) is prose.
	commandLike = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// readmeUses finds the command lines of a README: lines in code blocks
// that start with bootbench (continuation lines of the Commands block,
// indented, belong to the line before), and inline `bootbench …` spans
// that name a command.
func readmeUses(readme string) []readmeUse {
	var uses []readmeUse
	inCode, inCommands := false, false
	for i, line := range strings.Split(readme, "\n") {
		n := i + 1
		if strings.HasPrefix(line, "## ") {
			inCommands = strings.TrimSpace(line) == "## Commands"
		}
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			for _, m := range inlineCodeRE.FindAllStringSubmatch(line, -1) {
				uses = append(uses, usesOf(n, m[1], false)...)
			}
			continue
		}
		switch {
		case promptRE.MatchString(line):
			uses = append(uses, usesOf(n, line, true)...)
		case inCommands && strings.HasPrefix(line, " ") && len(uses) > 0:
			// A continuation of the command above it.
			last := uses[len(uses)-1]
			for _, u := range usesOf(n, "bootbench "+last.command+" "+line, true) {
				u.text = line
				uses = append(uses, u)
			}
		}
	}
	return uses
}

// usesOf reads one command line: its command and, for a group written
// with alternatives (list … | show RUN …), each subcommand with its own
// flags. strict says the command word must be one bootbench has.
func usesOf(n int, line string, strict bool) []readmeUse {
	line, _, _ = strings.Cut(line, " # ")
	line, _, _ = strings.Cut(line, " && ") // the next command is another's
	line, _, _ = strings.Cut(line, "; ")
	words := strings.Fields(promptRE.ReplaceAllString(line, ""))
	if len(words) == 0 {
		return nil
	}
	cmd := words[0]
	if cmd == "help" {
		if len(words) == 1 {
			return nil
		}
		return usesOf(n, "bootbench "+strings.Join(words[1:], " "), strict) // help CMD is CMD --help
	}
	if !slices.Contains(commandWords, cmd) {
		if !strict && !(commandLike.MatchString(cmd) && len(flagsIn(line)) > 0) {
			return nil // prose quoting something else (a console line the host types)
		}
		return []readmeUse{{line: n, text: line, command: cmd}}
	}
	rest := strings.Join(words[1:], " ")
	subs, ok := groupWords[cmd]
	if !ok {
		return []readmeUse{{line: n, text: line, command: cmd, flags: flagsIn(rest)}}
	}
	var uses []readmeUse
	for _, alt := range topLevelAlternatives(rest) {
		f := strings.Fields(alt)
		if len(f) == 0 || !slices.Contains(subs, f[0]) {
			// A continuation line's flags, or a subcommand README has
			// and the binary lacks.
			sub := ""
			if len(f) > 0 && !strings.HasPrefix(f[0], "-") && !strings.HasPrefix(f[0], "[") {
				sub = f[0]
			}
			uses = append(uses, readmeUse{line: n, text: line, command: strings.TrimSpace(cmd + " " + sub), flags: flagsIn(alt)})
			continue
		}
		uses = append(uses, readmeUse{line: n, text: line, command: cmd + " " + f[0], flags: flagsIn(strings.Join(f[1:], " "))})
	}
	return uses
}

// topLevelAlternatives splits s at " | " outside brackets.
func topLevelAlternatives(s string) []string {
	var alts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
		case '|':
			if depth == 0 && i > 0 && s[i-1] == ' ' && i+1 < len(s) && s[i+1] == ' ' {
				alts = append(alts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(alts, s[start:])
}

func flagsIn(s string) []string {
	var flags []string
	for _, m := range flagRE.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(flags, m[1]) {
			flags = append(flags, m[1])
		}
	}
	return flags
}

// readmeMismatches checks uses against help, which returns a command's
// --help text ("" for a command the binary does not have), and says what
// does not match, naming README's line.
func readmeMismatches(uses []readmeUse, help func(command string) string) []string {
	var bad []string
	for _, u := range uses {
		text := help(u.command)
		if text == "" {
			bad = append(bad, fmt.Sprintf("README.md:%d: bootbench has no command %q: %s", u.line, u.command, strings.TrimSpace(u.text)))
			continue
		}
		for _, f := range u.flags {
			name := strings.TrimLeft(f, "-")
			if name == "help" || name == "h" {
				continue
			}
			if !regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(name) + `(\s|$)`).MatchString(text) {
				bad = append(bad, fmt.Sprintf("README.md:%d: %s has no flag %s (see bootbench %s --help): %s", u.line, u.command, f, u.command, strings.TrimSpace(u.text)))
			}
		}
	}
	return bad
}

// binaryHelp is the built binary's --help for a command, cached; "" when
// the command does not print one.
func binaryHelp(t *testing.T) func(string) string {
	db := emptyStore(t)
	cache := map[string]string{}
	return func(command string) string {
		if h, ok := cache[command]; ok {
			return h
		}
		r := bootbench(t, db, append(strings.Fields(command), "--help")...)
		h := ""
		if r.code == 0 && strings.HasPrefix(r.stdout, "Usage: bootbench "+command) {
			h = r.stdout
		}
		cache[command] = h
		return h
	}
}

// TestREADMECommandsAccepted: README's command lines name only commands
// and flags the binary's --help lists.
func TestREADMECommandsAccepted(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	uses := readmeUses(string(readme))
	if n := len(uses); n < 40 {
		t.Fatalf("found only %d command lines in README: the parser lost them", n)
	}
	for _, m := range readmeMismatches(uses, binaryHelp(t)) {
		t.Error(m)
	}
}

// TestREADMECheckCatchesMismatch: the check fails on README text with a
// flag, a subcommand or a command the binary lacks, naming the line; and
// passes text that matches.
func TestREADMECheckCatchesMismatch(t *testing.T) {
	help := binaryHelp(t)
	tests := []struct {
		name, readme string
		want         []string
	}{
		{"a flag run lacks", "## Commands\n\n```\nbootbench run      [--board NAME] [--colour red]\n```\n",
			[]string{"README.md:4: run has no flag --colour"}},
		{"a flag on a continuation line", "## Commands\n\n```\nbootbench import   --board NAME\n                   [--fast] FILE...\n```\n",
			[]string{"README.md:5: import has no flag --fast"}},
		{"a subcommand results lacks", "## Commands\n\n```\nbootbench results  list | purge --all\n```\n",
			[]string{`README.md:4: bootbench has no command "results purge"`}},
		{"an inline example", "Run `bootbench results export --format csv --gzip` to save space.\n",
			[]string{"README.md:1: results export has no flag --gzip"}},
		{"an example block", "```\n$ bootbench speed --seconds 1 --threads 4\n```\n",
			[]string{"README.md:2: speed has no flag --threads"}},
		{"a command the binary lacks", "Try `bootbench frobnicate --board rb450g` first.\n",
			[]string{`README.md:1: bootbench has no command "frobnicate"`}},
		{"all accepted", "## Commands\n\n```\nbootbench results  list [--board NAME] | show RUN [--transcript | --raw] | check\nbootbench boards   list | show NAME\n```\nThen `bootbench import --board rb450 --clock 300 FILE`.\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readmeMismatches(readmeUses(tt.readme), help)
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %d mismatches starting %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("got %q, want it to start %q", got[i], w)
				}
			}
		})
	}
}

// commandsBlock is README's Commands block, each line's spacing made one.
func commandsBlock(readme string) string {
	start := strings.Index(readme, "## Commands\n\n```\n")
	if start < 0 {
		return ""
	}
	rest := readme[start+len("## Commands\n\n```\n"):]
	return normalizeLines(rest[:strings.Index(rest, "```")])
}

func normalizeLines(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return strings.Join(out, "\n")
}

// TestUsageIsREADMECommands: bootbench help's command lines are README's
// Commands block, line for line.
func TestUsageIsREADMECommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := commandsBlock(string(readme))
	help := bootbench(t, emptyStore(t), "help").stdout
	_, usage, _ := strings.Cut(help, "Usage:\n")
	usage, _, _ = strings.Cut(usage, "\n\n")
	if got := normalizeLines(usage); got != want {
		t.Errorf("bootbench help's usage:\n%s\n\nREADME's Commands block:\n%s", got, want)
	}
}

// repoFileRE is a file of this repository README names by its path: Go
// files, scripts, patches, YAML and test data under a directory.
var repoFileRE = regexp.MustCompile("`((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]+\\.(?:go|sh|patch|yaml|bin|md|txt|json))`")

// TestREADMEFilesExist: the files README names by path are where it
// says (harness/booter.go had moved to boot/booter.go).
func TestREADMEFilesExist(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(readme), "\n") {
		for _, m := range repoFileRE.FindAllStringSubmatch(line, -1) {
			if _, err := os.Stat("../../" + m[1]); err != nil {
				t.Errorf("README.md:%d names %s, which is not in the repository", i+1, m[1])
			}
		}
	}
}

// TestREADMERouterOSEntry: the RouterOS entry README shows is the one
// boards show rb1100 prints.
func TestREADMERouterOSEntry(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, entry, ok := strings.Cut(string(readme), "\n  rb1100-1:\n")
	if !ok {
		t.Fatal("README shows no rb1100-1 entry")
	}
	entry, _, _ = strings.Cut(entry, "```")
	want := normalizeLines("rb1100-1:\n" + entry)
	show := bootbench(t, emptyStore(t), "boards", "show", "rb1100").stdout
	_, got, _ := strings.Cut(show, "In bench.yaml's boards:\n")
	got, _, _ = strings.Cut(got, "tested end to end")
	if normalizeLines(got) != want {
		t.Errorf("boards show rb1100 prints\n%s\nREADME shows\n%s", normalizeLines(got), want)
	}
}
