package ignore

import (
	"bytes"
	"strings"
)

// Match is the verdict of a set of rules on one path.
type Match int8

const (
	// None: no rule matched; a lower-precedence source decides.
	None Match = iota
	// Ignore: the path is excluded.
	Ignore
	// Whitelist: a negated rule ("!pattern") matched; the path is included
	// even if a lower-precedence source excludes it.
	Whitelist
)

// Rules are the patterns of one ignore file, matched against paths relative
// to the directory the file applies to. Within one file the last matching
// line wins, as in git.
type Rules struct {
	dir        string
	lines      []rule
	whitelists int
}

func (m Match) String() string {
	switch m {
	case Ignore:
		return "ignore"
	case Whitelist:
		return "whitelist"
	}
	return "none"
}

type rule struct {
	glob    Glob
	negate  bool
	dirOnly bool
}

// NewRules returns empty rules for paths under dir (absolute, clean).
func NewRules(dir string) *Rules { return &Rules{dir: dir} }

// ParseRules reads the gitignore-syntax text of a file that applies to dir.
// Lines that cannot be compiled are skipped, as git skips them.
func ParseRules(dir string, text []byte) *Rules {
	r := NewRules(dir)
	text = bytes.TrimPrefix(text, []byte("\uFEFF"))
	for len(text) > 0 {
		var line []byte
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			line, text = text, nil
		}
		_ = r.Add(string(line))
	}
	return r
}

// Add appends one line in gitignore syntax: '#' starts a comment, a leading
// '!' negates, a leading '/' (or any '/' but a trailing one) anchors the
// pattern to the rules' directory, a trailing '/' matches directories only,
// and "**" spans directories.
func (r *Rules) Add(line string) error {
	if strings.HasPrefix(line, "#") {
		return nil
	}
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRight(line, " \t\r\n\v\f")
	}
	if line == "" {
		return nil
	}
	var ru rule
	anchored := false
	if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	} else {
		if strings.HasPrefix(line, "!") {
			ru.negate = true
			line = line[1:]
		}
		if strings.HasPrefix(line, "/") {
			line = line[1:]
			anchored = true
		}
	}
	if strings.HasSuffix(line, "/") {
		ru.dirOnly = true
		line = strings.TrimSuffix(line[:len(line)-1], `\`)
	}
	if line == "" {
		return nil
	}
	if !anchored && !strings.Contains(line, "/") && !strings.HasPrefix(line, "**/") {
		line = "**/" + line
	}
	if strings.HasSuffix(line, "/**") {
		// "dir/**" matches what is inside dir, not dir itself.
		line += "/*"
	}
	g, err := CompileGlob(line)
	if err != nil {
		return err
	}
	ru.glob = g
	r.lines = append(r.lines, ru)
	if ru.negate {
		r.whitelists++
	}
	return nil
}

// Len is the number of rules.
func (r *Rules) Len() int { return len(r.lines) }

// Whitelists is the number of negated rules.
func (r *Rules) Whitelists() int { return r.whitelists }

// Match judges path (absolute, clean; a directory when isDir). Paths not
// under the rules' directory are matched as given.
func (r *Rules) Match(path string, isDir bool) Match {
	if r == nil || len(r.lines) == 0 {
		return None
	}
	rel := r.relative(path)
	for i := len(r.lines) - 1; i >= 0; i-- {
		ru := &r.lines[i]
		if ru.dirOnly && !isDir {
			continue
		}
		if ru.glob.Match(rel) {
			if ru.negate {
				return Whitelist
			}
			return Ignore
		}
	}
	return None
}

func (r *Rules) relative(path string) string {
	if r.dir == "" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, r.dir); ok {
		if rest == "" {
			return rest
		}
		if rest[0] == '/' {
			return rest[1:]
		}
		if strings.HasSuffix(r.dir, "/") { // the root directory
			return rest
		}
	}
	return path
}
