package permission

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

type corpusLine struct {
	want string // "deny", "ask" or "" (ordinary)
	cmd  string
	line int
}

// readCorpus reads a testdata command list (see dangerous.txt's header).
func readCorpus(t *testing.T, name string, labelled bool) []corpusLine {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		l := corpusLine{line: n, cmd: text}
		if labelled {
			want, cmd, ok := strings.Cut(text, "\t")
			if !ok || (want != "deny" && want != "ask") {
				t.Fatalf("%s:%d: want deny<TAB>command or ask<TAB>command", name, n)
			}
			l.want, l.cmd = want, cmd
		}
		if s, err := strconv.Unquote(l.cmd); err == nil && strings.HasPrefix(l.cmd, `"`) {
			l.cmd = s // a Go string literal, for commands with newlines
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func bashInputJSON(cmd string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return b
}

func TestDangerousCorpus(t *testing.T) {
	lines := readCorpus(t, "dangerous.txt", true)
	if len(lines) < 100 {
		t.Fatalf("corpus has %d commands, want at least 100", len(lines))
	}
	proj := newProject(t)
	engines := map[string]*Engine{
		"bypassPermissions":         proj.engine(t, Config{Mode: ModeBypass}),
		"bypass+allow Bash":         proj.engine(t, Config{Mode: ModeBypass, Rules: []RuleSource{{List: "allow", Rule: "Bash"}}}),
		"acceptEdits+sandbox":       proj.engine(t, Config{Mode: ModeAcceptEdits, SandboxedBash: true}),
		"default+allow Bash(rm *)":  proj.engine(t, Config{Rules: []RuleSource{{List: "allow", Rule: "Bash(rm *)"}, {List: "allow", Rule: "Bash(curl *)"}}}),
		"dontAsk+allow Bash(sh *)":  proj.engine(t, Config{Mode: ModeDontAsk, Rules: []RuleSource{{List: "allow", Rule: "Bash(sh *)"}, {List: "allow", Rule: "Bash(bash *)"}}}),
		"default+session allow all": proj.engine(t, Config{}),
	}
	if err := engines["default+session allow all"].AllowForSession("Bash(*)"); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.want == "deny" {
			if reason, ok := HardDeny(l.cmd); !ok {
				t.Errorf("dangerous.txt:%d: HardDeny(%q) = false, want a hard deny", l.line, l.cmd)
			} else if reason == "" {
				t.Errorf("dangerous.txt:%d: HardDeny(%q): empty reason", l.line, l.cmd)
			}
		}
		for name, e := range engines {
			d := e.Check("Bash", bashInputJSON(l.cmd), false)
			switch {
			case d.Behavior == Allow:
				t.Errorf("dangerous.txt:%d: %s: %q allowed (%s)", l.line, name, l.cmd, d.Reason)
			case l.want == "deny" && (d.Behavior != Deny || !d.Hard):
				t.Errorf("dangerous.txt:%d: %s: %q = %v hard=%v (%s), want a hard deny", l.line, name, l.cmd, d.Behavior, d.Hard, d.Reason)
			}
		}
	}
}

func TestOrdinaryCommandsAreNotHardDenied(t *testing.T) {
	proj := newProject(t)
	e := proj.engine(t, Config{Mode: ModeBypass})
	for _, l := range readCorpus(t, "ordinary.txt", false) {
		if reason, ok := HardDeny(l.cmd); ok {
			t.Errorf("ordinary.txt:%d: HardDeny(%q) = %q", l.line, l.cmd, reason)
		}
		if d := e.Check("Bash", bashInputJSON(l.cmd), false); d.Hard {
			t.Errorf("ordinary.txt:%d: %q hard-denied in bypass mode: %s", l.line, l.cmd, d.Reason)
		}
	}
}
