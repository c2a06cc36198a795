package shellparse

import (
	"path"
	"strings"
)

// wrapperSpec describes a command that runs another command given as its
// remaining arguments, so that the wrapped command can be found.
type wrapperSpec struct {
	argFlags string   // short options that take a value
	longArgs []string // long options that take a value when written without '='
	operands int      // operands before the wrapped command (timeout's duration)
	notIf    string   // short options that make it something else (command -v)
	assigns  bool     // NAME=value words may follow the options (env)
	// scriptFlag and scriptLong name the option whose value is a command
	// line the wrapper runs itself (env -S, flock -c).
	scriptFlag byte
	scriptLong string
}

// wrapperTable lists the wrappers stripped to find the real program.
var wrapperTable = map[string]wrapperSpec{
	"sudo":      {argFlags: "ugphCDrtTU", longArgs: []string{"--user", "--group", "--host", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user", "--command-timeout"}, notIf: "elvV"},
	"doas":      {argFlags: "uC"},
	"pkexec":    {longArgs: []string{"--user"}},
	"env":       {argFlags: "uCS", longArgs: []string{"--unset", "--chdir", "--split-string"}, assigns: true, scriptFlag: 'S', scriptLong: "--split-string"},
	"nice":      {argFlags: "n", longArgs: []string{"--adjustment"}},
	"ionice":    {argFlags: "cnP"},
	"timeout":   {argFlags: "sk", longArgs: []string{"--signal", "--kill-after"}, operands: 1},
	"nohup":     {},
	"time":      {argFlags: "of", longArgs: []string{"--output", "--format"}},
	"stdbuf":    {argFlags: "ioe", longArgs: []string{"--input", "--output", "--error"}},
	"command":   {notIf: "vV"},
	"builtin":   {},
	"exec":      {argFlags: "a"},
	"noglob":    {},
	"nocorrect": {},
	"setsid":    {},
	"chroot":    {longArgs: []string{"--userspec", "--groups"}, operands: 1},
	"unbuffer":  {},
	"busybox":   {},
	"xargs":     {argFlags: "adEILnPs", longArgs: []string{"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}},
	"flock":     {argFlags: "wEc", longArgs: []string{"--wait", "--timeout", "--conflict-exit-code", "--command"}, operands: 1, scriptFlag: 'c', scriptLong: "--command"},
}

// shells are the programs that take a script with -c or on standard input.
var shells = map[string]bool{
	"sh": true, "bash": true, "rbash": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "yash": true, "posh": true, "fish": true,
}

// script is code a command runs that is given to it as a string.
type script struct {
	text      string
	dynamic   bool // known only at run time
	fromStdin bool // read from standard input, which is a pipe or nothing
}

// stripWrappers removes the wrappers in front of words and records them in
// cmd. A wrapper that carries the script itself (env -S, flock -c) stays the
// command and its script is returned.
func stripWrappers(cmd *Command, words []word) ([]word, *script) {
	for len(words) > 0 && !words[0].dynamic {
		name := path.Base(words[0].text)
		spec, ok := wrapperTable[name]
		if !ok {
			break
		}
		rest, assigns, sc, ok := spec.skip(words[1:])
		if !ok {
			break
		}
		if sc != nil {
			return words, sc
		}
		if len(rest) == 0 {
			break // it runs nothing else: the wrapper is the command
		}
		cmd.Wrappers = append(cmd.Wrappers, joinWords(words[:len(words)-len(rest)-len(assigns)]))
		cmd.Assigns = append(cmd.Assigns, assigns...)
		if name == "xargs" {
			cmd.Dynamic = true // the wrapped command gets arguments from stdin
		}
		words = rest
	}
	return words, nil
}

// skip consumes the wrapper's options and operands from args and returns
// the wrapped command's words.
func (s wrapperSpec) skip(args []word) (rest []word, assigns []string, sc *script, ok bool) {
	i := 0
	takeValue := func() (word, bool) {
		if i+1 >= len(args) {
			return word{}, false
		}
		i++
		return args[i], true
	}
	for ; i < len(args); i++ {
		a := args[i]
		t := a.text
		if a.dynamic || t == "-" || !strings.HasPrefix(t, "-") || len(t) < 2 {
			break
		}
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			name, value, hasValue := strings.Cut(t, "=")
			dynamic := a.dynamic
			if !hasValue && contains(s.longArgs, name) {
				v, ok := takeValue()
				if !ok {
					return nil, nil, nil, false
				}
				value, dynamic = v.text, v.dynamic
			}
			if s.scriptLong != "" && name == s.scriptLong {
				return nil, nil, splitScript(value, dynamic, args[i+1:]), true
			}
			continue
		}
		cluster := t[1:]
		for j := 0; j < len(cluster); j++ {
			c := cluster[j]
			if strings.IndexByte(s.notIf, c) >= 0 {
				return nil, nil, nil, false
			}
			if strings.IndexByte(s.argFlags, c) < 0 {
				continue
			}
			value, dynamic := cluster[j+1:], a.dynamic
			if value == "" {
				v, ok := takeValue()
				if !ok {
					return nil, nil, nil, false
				}
				value, dynamic = v.text, v.dynamic
			}
			if s.scriptFlag != 0 && c == s.scriptFlag {
				return nil, nil, splitScript(value, dynamic, args[i+1:]), true
			}
			break
		}
	}
	if s.assigns {
		for i < len(args) && !args[i].dynamic && isAssignment(args[i].text) {
			assigns = append(assigns, args[i].text)
			i++
		}
	}
	for n := 0; n < s.operands; n++ {
		if i >= len(args) {
			return nil, nil, nil, false
		}
		i++
	}
	// flock FILE -c COMMAND: the option comes after the operand.
	if s.scriptFlag != 0 && i+1 < len(args) &&
		(args[i].text == "-"+string(s.scriptFlag) || args[i].text == s.scriptLong) {
		return nil, nil, splitScript(args[i+1].text, args[i+1].dynamic, args[i+2:]), true
	}
	return args[i:], assigns, nil, true
}

// splitScript is the script of env -S STRING ARGS... or flock -c COMMAND.
func splitScript(s string, dynamic bool, rest []word) *script {
	text := s
	if len(rest) > 0 {
		text += " " + joinWords(rest)
		for _, w := range rest {
			dynamic = dynamic || w.dynamic
		}
	}
	return &script{text: text, dynamic: dynamic}
}

// inlineScript reports the code that the command in words runs from a
// string, a here-document, its standard input or a run-time value, rather
// than from a file or its own binary.
func inlineScript(name string, words []word, stdin *word, redirs []Redirect) (script, bool) {
	if len(words) == 0 {
		return script{}, false
	}
	args := words[1:]
	readStdin := func() (script, bool) {
		if stdin != nil {
			return script{text: stdin.text, dynamic: stdin.dynamic}, true
		}
		for _, r := range redirs {
			if r.Op == "<" && (r.FD == "" || r.FD == "0") {
				if r.Dynamic {
					return script{dynamic: true}, true
				}
				return script{}, false // a script file
			}
		}
		return script{fromStdin: true}, true
	}
	switch {
	case shells[name]:
		return shellScript(args, readStdin)
	case name == "eval":
		if len(args) == 0 {
			return script{}, false
		}
		s := script{text: joinResolved(args)}
		for _, a := range args {
			s.dynamic = s.dynamic || a.dynamic
		}
		return s, true
	case name == "source" || name == ".":
		if len(args) == 0 {
			return script{}, false
		}
		switch {
		case args[0].dynamic:
			return script{dynamic: true}, true
		case args[0].text == "/dev/stdin" || args[0].text == "-":
			return readStdin()
		}
		return script{}, false
	case name == "su" || name == "script":
		return optionScript(args)
	case name == "watch":
		return watchScript(args)
	}
	return script{}, false
}

// shellScript handles sh-like option syntax: -c SCRIPT, -s, a script file.
func shellScript(args []word, readStdin func() (script, bool)) (script, bool) {
	hasC, fromStdin := false, false
	var operand *word
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		if a.dynamic {
			operand = &args[i]
			break
		}
		if t == "-" {
			fromStdin = true
			break
		}
		if t == "--" {
			if i+1 < len(args) {
				operand = &args[i+1]
			}
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		if (t[0] == '-' || t[0] == '+') && len(t) > 1 {
			if strings.ContainsAny(t[1:], "oO") {
				i++
			}
			hasC = hasC || strings.Contains(t[1:], "c")
			fromStdin = fromStdin || (t[0] == '-' && strings.Contains(t[1:], "s"))
			continue
		}
		operand = &args[i]
		break
	}
	switch {
	case hasC && operand == nil:
		return script{dynamic: true}, true
	case hasC:
		return script{text: operand.text, dynamic: operand.dynamic}, true
	case fromStdin || operand == nil || operand.text == "/dev/stdin":
		return readStdin()
	case operand.dynamic:
		return script{dynamic: true}, true
	}
	return script{}, false
}

// optionScript finds -c SCRIPT / --command SCRIPT (su, script).
func optionScript(args []word) (script, bool) {
	for i, a := range args {
		t := a.text
		if v, ok := strings.CutPrefix(t, "--command="); ok {
			return script{text: v, dynamic: a.dynamic}, true
		}
		isC := t == "--command" || (len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.HasSuffix(t, "c"))
		if isC {
			if i+1 >= len(args) {
				return script{dynamic: true}, true
			}
			return script{text: args[i+1].text, dynamic: args[i+1].dynamic}, true
		}
	}
	return script{}, false
}

// watchScript is the command watch runs through sh -c: its remaining words.
func watchScript(args []word) (script, bool) {
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") || args[i].dynamic {
			break
		}
		if t == "-n" || t == "--interval" || t == "-q" || t == "--equexit" {
			i++
		}
	}
	if i >= len(args) {
		return script{}, false
	}
	s := script{text: joinResolved(args[i:])}
	for _, a := range args[i:] {
		s.dynamic = s.dynamic || a.dynamic
	}
	return s, true
}

// findExecs returns the commands find runs with -exec, -execdir, -ok and
// -okdir.
func findExecs(name string, words []word) [][]word {
	if name != "find" {
		return nil
	}
	var out [][]word
	for i := 1; i < len(words); i++ {
		switch words[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(words) && words[j].text != ";" && words[j].text != "+" {
			j++
		}
		if j > i+1 {
			out = append(out, words[i+1:j])
		}
		i = j
	}
	return out
}

// joinResolved joins words with spaces as the shell joins eval's arguments.
func joinResolved(ws []word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.text
	}
	return strings.Join(parts, " ")
}

func isAssignment(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
