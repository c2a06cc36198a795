package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// target is a path a tool call touches, in the two forms rules look at.
type target struct {
	abs  string // absolute and cleaned, as written
	real string // with every symlink resolved (for a path that does not exist yet, its nearest existing parent)
}

// maxSymlinks bounds symlink chains, as the kernel does.
const maxSymlinks = 40

// resolveTarget makes p absolute against cwd (with ~ and $HOME expanded)
// and resolves symlinks.
func resolveTarget(p, cwd, home string) target {
	p = expandHome(p, home)
	raw := p
	if !filepath.IsAbs(p) {
		raw = cwd + string(filepath.Separator) + p
	}
	return target{abs: filepath.Clean(raw), real: realPath(raw)}
}

// expandHome replaces a leading ~, $HOME or ${HOME} with home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	for _, prefix := range []string{"~", "$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok && (rest == "" || rest[0] == '/') {
			return home + rest
		}
	}
	return p
}

// realPath resolves the symlinks of the absolute path p one component at a
// time, as the kernel does (so "link/.." is the link target's parent). The
// part below the first missing component is joined as written.
func realPath(p string) string {
	parts := strings.Split(p, string(filepath.Separator))
	cur := string(filepath.Separator)
	hops := 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		if part == "" || part == "." {
			continue
		}
		next := filepath.Join(cur, part)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		hops++
		link, err := os.Readlink(next)
		if err != nil || hops > maxSymlinks {
			return filepath.Join(append([]string{next}, parts[i+1:]...)...)
		}
		if filepath.IsAbs(link) {
			cur = string(filepath.Separator)
		} // a relative link resolves from the directory holding it: cur
		parts = append(strings.Split(link, string(filepath.Separator)), parts[i+1:]...)
		i = -1
	}
	return cur
}

// within reports whether p is dir or lies below it.
func within(dir, p string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// pathPattern is a compiled Read/Edit rule path.
type pathPattern struct {
	// globs are absolute doublestar patterns: the rule's, and the same
	// with symlinks in its literal part resolved, so that a real path
	// matches too when the project lies behind a symlink.
	globs []string
}

// compilePath turns a rule path (gitignore style) into an absolute pattern:
// "//abs" from the filesystem root, "~/x" from home, "/x" from root (the
// settings file's project), "./x" or "x/y" from the project directory, and
// a bare name ("x", "*.key") at any depth. Deny and ask rules with a
// relative path match at any depth; allow rules stay under the project.
func compilePath(spec string, allow bool, root, home, project string) (pathPattern, error) {
	s := spec
	if len(s) > 1 {
		s = strings.TrimSuffix(s, "/")
	}
	var glob string
	switch {
	case s == "//" || strings.HasPrefix(s, "//"):
		glob = "/" + strings.TrimLeft(s, "/")
	case s == "~" || strings.HasPrefix(s, "~/"):
		if home == "" {
			return pathPattern{}, fmt.Errorf("home directory unknown for %q", spec)
		}
		glob = home + strings.TrimPrefix(s, "~")
	case strings.HasPrefix(s, "/"):
		glob = root + s
	case strings.HasPrefix(s, "./"):
		glob = project + "/" + strings.TrimPrefix(s, "./")
	default:
		bare := !strings.Contains(s, "/")
		switch {
		case !allow:
			glob = "/**/" + s
		case bare:
			glob = project + "/**/" + s
		default:
			glob = project + "/" + s
		}
	}
	glob = filepath.Clean(glob)
	glob = filepath.ToSlash(glob)
	if !doublestar.ValidatePattern(glob) {
		return pathPattern{}, fmt.Errorf("invalid path pattern %q", spec)
	}
	pp := pathPattern{globs: []string{glob}}
	if base, rest := doublestar.SplitPattern(glob); base != "/" {
		if real := filepath.ToSlash(realPath(base)); real != base {
			pp.globs = append(pp.globs, strings.TrimSuffix(real, "/")+"/"+rest)
		}
	}
	return pp, nil
}

// match reports whether p or a directory above it matches: a rule naming a
// directory covers what is inside.
func (pp pathPattern) match(p string) bool {
	p = filepath.ToSlash(p)
	for _, g := range pp.globs {
		if ok, _ := doublestar.Match(g, p); ok {
			return true
		}
		if ok, _ := doublestar.Match(g+"/**", p); ok {
			return true
		}
	}
	return false
}
