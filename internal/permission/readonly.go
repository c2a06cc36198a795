package permission

import (
	"regexp"
	"strings"

	"github.com/coda-cli/coda/internal/shellparse"
)

// readOnlySpec describes a shell command that only reads.
type readOnlySpec struct {
	valueFlags string   // short options taking a value (not a path)
	noPaths    bool     // operands are not files
	pattern    bool     // the first operand is a pattern, not a file (grep PATTERN FILE...)
	patternOpt string   // short options that give the pattern instead (grep -e, -f)
	writes     []string // options that make it write or run something
	maxFiles   int      // more operands than this write (uniq IN OUT); 0: no limit
}

// readOnlyCommands run without asking in every mode, when their path
// operands lie in the working directories and no rule says otherwise.
var readOnlyCommands = map[string]readOnlySpec{
	"ls": {valueFlags: "IwT"}, "cat": {}, "head": {valueFlags: "nc"}, "tail": {valueFlags: "ncs"},
	"wc": {}, "stat": {valueFlags: "c"}, "du": {valueFlags: "dBt"}, "diff": {valueFlags: "UCIxXSF", writes: []string{"--to-file"}},
	"cmp": {}, "comm": {}, "file": {valueFlags: "mfFe"}, "tree": {valueFlags: "LPIHo", writes: []string{"-o"}},
	"realpath": {}, "readlink": {}, "md5sum": {}, "sha1sum": {}, "sha256sum": {}, "sha512sum": {},
	"b2sum": {}, "cksum": {}, "nl": {}, "od": {valueFlags: "AjNtw"}, "hexdump": {valueFlags: "enfs"},
	"cut": {valueFlags: "dfcb"}, "sort": {valueFlags: "kotST", writes: []string{"-o", "--output", "--compress-program"}},
	"uniq": {valueFlags: "fsw", maxFiles: 1}, "cd": {},
	"grep": {valueFlags: "ABCefmdD", pattern: true, patternOpt: "ef"}, "egrep": {valueFlags: "ABCefmdD", pattern: true, patternOpt: "ef"},
	"fgrep": {valueFlags: "ABCefmdD", pattern: true, patternOpt: "ef"},
	"rg":    {valueFlags: "ABCefgmtTjM", pattern: true, patternOpt: "ef", writes: []string{"--pre"}},
	"echo":  {noPaths: true}, "printf": {noPaths: true}, "pwd": {noPaths: true}, "true": {noPaths: true},
	"false": {noPaths: true}, "which": {noPaths: true}, "type": {noPaths: true}, "whoami": {noPaths: true},
	"id": {noPaths: true}, "uname": {noPaths: true}, "printenv": {noPaths: true}, "basename": {noPaths: true},
	"dirname": {noPaths: true}, "seq": {noPaths: true}, "test": {noPaths: true}, "[": {noPaths: true},
	"[[": {noPaths: true}, "((": {noPaths: true}, "let": {noPaths: true}, "tr": {noPaths: true},
	"nproc": {noPaths: true}, "env": {noPaths: true}, "command": {noPaths: true}, ":": {noPaths: true},
}

// readOnlyPaths returns the files a read-only command reads, or ok=false
// if c is not a read-only command. Dynamic operands make it not read-only:
// what they name is unknown.
func readOnlyPaths(c shellparse.Command) (paths []string, ok bool) {
	if c.Opaque || !safeWrappers(c) || dangerousAssigns(c.Assigns) {
		return nil, false
	}
	if c.Name == "git" {
		return nil, gitReadOnly(c.Args)
	}
	if c.Name == "find" {
		return findPaths(c.Args)
	}
	spec, known := readOnlyCommands[c.Name]
	if !known {
		return nil, false
	}
	if c.Name == "command" && (len(c.Args) == 0 || !strings.HasPrefix(c.Args[0], "-v") && !strings.HasPrefix(c.Args[0], "-V")) {
		return nil, false
	}
	if spec.noPaths {
		return nil, true
	}
	if c.Dynamic {
		return nil, false
	}
	var operands []string
	patternGiven := false
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if a == "--" {
			operands = append(operands, c.Args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		for _, w := range spec.writes {
			if a == w || strings.HasPrefix(a, w+"=") || !strings.HasPrefix(w, "--") && strings.HasPrefix(a, w) {
				return nil, false
			}
		}
		if strings.HasPrefix(a, "--") {
			if name, v, ok := strings.Cut(a, "="); ok && (name == "--file" || name == "--exclude-from") {
				paths = append(paths, v)
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			f := a[j]
			if strings.IndexByte(spec.patternOpt, f) >= 0 {
				patternGiven = true
			}
			if strings.IndexByte(spec.valueFlags, f) < 0 {
				continue
			}
			value := a[j+1:]
			if value == "" && i+1 < len(c.Args) {
				i++
				value = c.Args[i]
			}
			if f == 'f' && spec.pattern {
				paths = append(paths, value) // grep -f FILE reads patterns from FILE
			}
			break
		}
	}
	if spec.pattern && !patternGiven && len(operands) > 0 {
		operands = operands[1:]
	}
	if spec.maxFiles > 0 && len(operands) > spec.maxFiles {
		return nil, false
	}
	return append(paths, operands...), true
}

// findPaths returns the starting points of a find that only lists.
func findPaths(args []string) ([]string, bool) {
	var paths []string
	expr := false
	for _, a := range args {
		switch a {
		case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
			return nil, false
		}
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == ")" {
			expr = true
		}
		if !expr {
			paths = append(paths, a)
		}
	}
	return paths, true
}

// gitReadOnlySubcommands only inspect the repository. Some need their
// arguments checked (gitReadOnly).
var gitReadOnlySubcommands = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "branch": true, "rev-parse": true,
	"ls-files": true, "ls-tree": true, "blame": true, "describe": true, "shortlog": true,
	"reflog": true, "cat-file": true, "grep": true, "merge-base": true, "show-ref": true,
	"for-each-ref": true, "remote": true, "tag": true, "stash": true, "config": true,
	"worktree": true, "rev-list": true, "count-objects": true, "name-rev": true,
	"check-ignore": true, "whatchanged": true, "version": true, "help": true,
}

// gitGlobalSafe are options before the subcommand that change nothing.
var gitGlobalSafe = map[string]bool{"--no-pager": true, "-P": true, "--no-optional-locks": true, "--no-replace-objects": true}

// gitReadOnly reports whether `git args...` only reads.
func gitReadOnly(args []string) bool {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if !gitGlobalSafe[args[i]] {
			return false // -C, -c, --git-dir, --work-tree, --exec-path...
		}
		i++
	}
	if i == len(args) || !gitReadOnlySubcommands[args[i]] {
		return false
	}
	sub, rest := args[i], args[i+1:]
	for _, a := range rest {
		if a == "--output" || strings.HasPrefix(a, "--output=") || a == "--ext-diff" || a == "--no-index" {
			return false
		}
	}
	flags, operands := splitFlags(rest)
	has := func(names ...string) bool {
		for _, f := range flags {
			for _, n := range names {
				if f == n || strings.HasPrefix(f, n+"=") {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "branch":
		if has("-d", "-D", "-m", "-M", "-c", "-C", "-f", "--delete", "--move", "--copy", "--force",
			"--set-upstream-to", "-u", "--unset-upstream", "--edit-description", "--track", "-t") {
			return false
		}
		return len(operands) == 0 || has("--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
	case "tag":
		if has("-d", "-a", "-s", "-f", "-m", "-F", "-u", "--delete", "--annotate", "--sign", "--force", "--message", "--file") {
			return false
		}
		return len(operands) == 0 || has("--list", "-l", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
	case "remote":
		return len(operands) == 0 || operands[0] == "get-url" || operands[0] == "show" && has("-n")
	case "stash":
		return len(operands) > 0 && (operands[0] == "list" || operands[0] == "show")
	case "reflog":
		return len(operands) == 0 || operands[0] == "show"
	case "worktree":
		return len(operands) > 0 && operands[0] == "list"
	case "config":
		return has("--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch") || len(operands) > 0 && operands[0] == "get" || len(operands) > 0 && operands[0] == "list"
	}
	return true
}

// safeWrapperNames may be stripped before matching allow rules and keep a
// read-only command read-only (B.3): they change how, not what, runs.
var safeWrapperNames = map[string]bool{
	"timeout": true, "time": true, "nice": true, "nohup": true, "stdbuf": true,
	"command": true, "builtin": true, "noglob": true,
}

// safeWrappers reports whether every wrapper of c is harmless; xargs only
// bare, as its options (-I, -a...) change what runs.
func safeWrappers(c shellparse.Command) bool {
	for _, w := range c.Wrappers {
		name, rest, _ := strings.Cut(w, " ")
		if name == "xargs" && rest == "" {
			continue
		}
		if i := strings.LastIndex(name, "/"); i >= 0 {
			name = name[i+1:]
		}
		if !safeWrapperNames[name] {
			return false
		}
	}
	return true
}

// knownSafeVars may be set in front of a command without changing what an
// allow rule approved (B.3: known-safe variables are stripped for allow).
var knownSafeVars = regexp.MustCompile(`^(CI|DEBUG|NODE_ENV|RUST_LOG|RUST_BACKTRACE|GOOS|GOARCH|GOARM|GOAMD64|CGO_ENABLED|GOMAXPROCS|GOGC|LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|TERM|COLUMNS|LINES|VERBOSE|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONIOENCODING|NODE_NO_WARNINGS|TEST_[A-Z0-9_]*)$`)

// dangerousVars change which program runs or what it loads.
var dangerousVars = regexp.MustCompile(`^(PATH|LD_[A-Z_]+|DYLD_[A-Z_]+|IFS|BASH_ENV|ENV|PS4|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|HOME|CDPATH|GLOBIGNORE|BASH_FUNC_.*|PYTHON[A-Z_]*|NODE_OPTIONS|NODE_PATH|PERL5[A-Z_]*|PERLLIB|RUBY[A-Z_]*|GEM_[A-Z_]+|GIT_[A-Z_]+|PAGER|[A-Z_]*_PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|BROWSER|SSH_[A-Z_]+|GCONV_PATH|MALLOC_[A-Z_]+|TMPDIR|XDG_[A-Z_]+)$`)

func assignName(a string) string {
	name, _, _ := strings.Cut(a, "=")
	return strings.TrimSuffix(name, "+")
}

// dangerousAssigns reports an assignment that changes what runs.
func dangerousAssigns(assigns []string) bool {
	for _, a := range assigns {
		if dangerousVars.MatchString(assignName(a)) {
			return true
		}
	}
	return false
}

// allKnownSafe reports whether every assignment is known to be harmless.
func allKnownSafe(assigns []string) bool {
	for _, a := range assigns {
		if !knownSafeVars.MatchString(assignName(a)) {
			return false
		}
	}
	return true
}
