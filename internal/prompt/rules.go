package prompt

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// rule is one .coda/rules/*.md file. A rule with Globs applies only once
// the model reads or edits a file matching one of them; without, it
// applies from the start.
type rule struct {
	Path  string
	Globs []string // relative to the project root, forward slashes
	Body  string
}

// findRules lists the rule files under dir (recursively), sorted by path.
func findRules(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder just has no rules
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// parseRule splits a rule file into its paths: globs and its body.
func parseRule(path, content string) rule {
	front, body := splitFrontmatter(content)
	return rule{Path: path, Globs: frontmatterList(front, "paths"), Body: body}
}

// matches reports whether the file at rel (relative to the project root,
// forward slashes) falls under one of r's globs.
func (r rule) matches(rel string) bool {
	for _, g := range r.Globs {
		if ok, err := doublestar.Match(g, rel); err == nil && ok {
			return true
		}
	}
	return false
}

// splitFrontmatter separates a leading "---" block from the rest. Text
// without one is all body.
func splitFrontmatter(content string) (front, body string) {
	content = strings.TrimPrefix(content, "\uFEFF")
	rest, ok := strings.CutPrefix(content, "---")
	if !ok {
		return "", content
	}
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 || strings.TrimSpace(rest[:nl]) != "" {
		return "", content
	}
	rest = rest[nl+1:]
	for off := 0; off <= len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if strings.TrimSpace(line) == "---" {
			if end < 0 {
				return rest[:off], ""
			}
			return rest[:off], rest[off+end+1:]
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", content // unterminated: not frontmatter
}

// frontmatterList reads one key of a small YAML mapping as a list of
// strings. It accepts the shapes people write: a block list ("- a"), a
// flow list ("[a, b]"), or one comma-separated scalar ("a, b").
func frontmatterList(front, key string) []string {
	lines := strings.Split(front, "\n")
	for i, line := range lines {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) != key || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			continue
		}
		v = strings.TrimSpace(v)
		if v != "" {
			v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
			var out []string
			for _, item := range strings.Split(v, ",") {
				if item = unquote(strings.TrimSpace(item)); item != "" {
					out = append(out, item)
				}
			}
			return out
		}
		var out []string
		for _, item := range lines[i+1:] {
			t := strings.TrimSpace(item)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if !strings.HasPrefix(t, "-") {
				break
			}
			if t = unquote(strings.TrimSpace(t[1:])); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// loadRules reads the rule files under dirs in order.
func loadRules(dirs ...string) []rule {
	var out []rule
	for _, d := range dirs {
		for _, p := range findRules(d) {
			content, _, err := readInstructionFile(p)
			if err != nil {
				continue
			}
			out = append(out, parseRule(p, content))
		}
	}
	return out
}

// relSlash is p relative to root with forward slashes, or "" when p is
// not below root.
func relSlash(root, p string) string {
	if !within(root, p) || p == root {
		return ""
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(rel)
}

// isFile reports whether p is an existing regular file.
func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}
