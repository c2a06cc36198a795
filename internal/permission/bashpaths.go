package permission

import (
	"os"
	"path"
	"strings"

	"github.com/coda-cli/coda/internal/shellparse"
)

// denyPaths applies Read and Edit deny rules to the files a command
// names: what its redirections write, what it reads with <, and its
// operands (read by any command, written by any that is not read-only).
func (e *Engine) denyPaths(s step) (Decision, bool) {
	deny := func(r *rule, verb string, t target) (Decision, bool) {
		return Decision{Behavior: Deny, Reason: "denied by rule " + r.text() + " (" + verb + " " + t.abs + ")", Rule: r.text()}, true
	}
	for _, w := range e.writeTargets(s) {
		if r := matchPath(e.deny, "deny", "Edit", w, true); r != nil {
			return deny(r, "writes", w)
		}
	}
	if s.cwd == "" {
		return Decision{}, false
	}
	_, readOnly := readOnlyPaths(s.cmd)
	_, operands := splitFlags(s.cmd.Args)
	for _, o := range append(operands, inputRedirects(s.cmd)...) {
		if strings.ContainsAny(o, "$`") {
			continue
		}
		t := resolveTarget(o, s.cwd, e.home)
		if r := matchPath(e.deny, "deny", "Read", t, false); r != nil {
			return deny(r, "reads", t)
		}
		if r := matchPath(e.deny, "deny", "Edit", t, true); r != nil && !readOnly {
			return deny(r, "may write", t)
		}
	}
	return Decision{}, false
}

// pathsReadable reports whether every path a read-only command reads lies
// in the working directories or is allowed by a Read rule; if not, it
// returns the first directory outside them ("" when a path is unknown).
func (e *Engine) pathsReadable(st state, s step, paths []string) (outside string, ok bool) {
	paths = append(paths, inputRedirects(s.cmd)...)
	if s.cwd == "" && len(paths) > 0 {
		return "", false
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "$`") {
			return "", false
		}
		t := resolveTarget(globBase(p), s.cwd, e.home)
		if !e.inside(t) && matchPath(e.allowRules(st), "allow", "Read", t, false) == nil {
			if fi, err := os.Stat(t.real); err != nil || !fi.IsDir() {
				return path.Dir(t.real), false
			}
			return t.real, false
		}
	}
	return "", true
}

// globBase cuts a glob back to the directory it searches.
func globBase(p string) string {
	i := strings.IndexAny(p, "*?[")
	if i < 0 {
		return p
	}
	dir := path.Dir(p[:i] + "x")
	return dir
}

// fileOperation reports mkdir, touch, mv or cp entirely inside the working
// directories (acceptEdits runs them).
func (e *Engine) fileOperation(s step) bool {
	c := s.cmd
	switch c.Name {
	case "mkdir", "touch", "mv", "cp":
	default:
		return false
	}
	if c.Dynamic || c.Opaque || s.cwd == "" || !safeWrappers(c) || dangerousAssigns(c.Assigns) {
		return false
	}
	_, operands := splitFlags(c.Args)
	if len(operands) == 0 {
		return false
	}
	for _, o := range operands {
		t := resolveTarget(o, s.cwd, e.home)
		if strings.ContainsAny(o, "*?[") || !e.inside(t) || isProtected(t.abs, e.home) || isProtected(t.real, e.home) {
			return false
		}
	}
	return true
}

// writeTargets are the files a command's redirections write (not the
// harmless devices); targets known only at run time are left to risk.
func (e *Engine) writeTargets(s step) []target {
	var out []target
	for _, r := range s.cmd.Redirects {
		if !r.Writes() || r.Dynamic || harmlessDevice(r.Target) {
			continue
		}
		if s.cwd == "" && !path.IsAbs(expandHome(r.Target, e.home)) {
			continue // unknown after a cd: left to risk
		}
		out = append(out, resolveTarget(r.Target, s.cwd, e.home))
	}
	return out
}

func harmlessDevice(p string) bool {
	return strings.HasPrefix(p, "/dev/") && !writesDevice(path.Clean(p))
}

// inputRedirects are the files a command reads with <.
func inputRedirects(c shellparse.Command) []string {
	var out []string
	for _, r := range c.Redirects {
		if r.Op == "<" && !r.Dynamic {
			out = append(out, r.Target)
		}
	}
	return out
}

// risk returns why a line must ask in every mode, or "".
func (e *Engine) risk(steps []step) string {
	for _, s := range steps {
		c := s.cmd
		if c.Opaque {
			return "runs code that cannot be read before it runs (" + c.Raw + "), so it always asks"
		}
		if reason := riskyTargets(c, e.home); reason != "" {
			return reason
		}
		for _, r := range c.Redirects {
			if r.Writes() && r.Dynamic {
				return "writes to a file named at run time (" + r.Target + "), so it always asks"
			}
			if r.Writes() && s.cwd == "" && !path.IsAbs(expandHome(r.Target, e.home)) && !harmlessDevice(r.Target) {
				return "writes " + r.Target + " in a directory known only at run time, so it always asks"
			}
		}
		if s.cwd == "" && fileWriters[c.Name] {
			return c.Raw + " changes files in a directory known only at run time, so it always asks"
		}
		for _, w := range e.writeTargets(s) {
			if isProtected(w.abs, e.home) || isProtected(w.real, e.home) {
				return w.abs + " is a protected path: writing it always asks"
			}
		}
		if _, ro := readOnlyPaths(c); !ro && c.Name != "" && s.cwd != "" {
			_, operands := splitFlags(c.Args)
			for _, o := range operands {
				if strings.ContainsAny(o, "$`") {
					continue
				}
				t := resolveTarget(o, s.cwd, e.home)
				if isProtected(t.abs, e.home) || isProtected(t.real, e.home) {
					return c.Raw + " may write the protected path " + t.abs + ", so it always asks"
				}
			}
		}
		if c.Name == "git" && gitWritesConfig(c.Args) {
			return c.Raw + " changes git configuration, so it always asks"
		}
	}
	return ""
}

// riskyTargets flags recursive deletes and permission changes whose target
// is only known at run time and could be the root or the home directory.
func riskyTargets(c shellparse.Command, home string) string {
	flags, operands := splitFlags(c.Args)
	recursive := false
	switch c.Name {
	case "rm":
		recursive = hasFlag(flags, "--recursive", "rR")
	case "chmod", "chown", "chgrp":
		recursive = hasFlag(flags, "--recursive", "R")
		if len(operands) > 0 {
			operands = operands[1:]
		}
	default:
		return ""
	}
	if !recursive {
		return ""
	}
	for _, w := range c.Wrappers {
		if strings.HasPrefix(w, "xargs") {
			return c.Raw + " takes its targets from input, so it always asks"
		}
	}
	for _, o := range operands {
		i := strings.IndexAny(o, "$`")
		if i < 0 {
			continue
		}
		prefix := expandHome(o[:i], home)
		if prefix == "" || prefix == "~" || strings.HasSuffix(prefix, "/") && vitalPrefix(path.Clean(prefix), home) {
			return c.Raw + " deletes or changes a path known only at run time, so it always asks"
		}
	}
	return ""
}

// fileWriters change the files named by their operands.
var fileWriters = map[string]bool{
	"rm": true, "rmdir": true, "mv": true, "cp": true, "ln": true, "tee": true, "touch": true,
	"chmod": true, "chown": true, "chgrp": true, "sed": true, "dd": true, "truncate": true,
	"install": true, "shred": true, "unlink": true, "mkdir": true,
}

func vitalPrefix(p, home string) bool {
	_, ok := vitalDir(p, home)
	return ok
}

// gitWritesConfig reports git config changes (which could install hooks
// or commands git runs later).
func gitWritesConfig(args []string) bool {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		i++
	}
	if i == len(args) || args[i] != "config" {
		return false
	}
	return !gitReadOnly(args)
}
