package ignore

import (
	"fmt"
	"regexp"
	"strings"
)

// Glob is a compiled glob with the semantics ripgrep gives .gitignore lines
// and --glob flags: '*' and '?' never match '/', "**" as a whole path
// component matches any number of directories, [...] is a character class
// ('!' or '^' negates it), {a,b} picks one of several alternatives and a
// backslash escapes the next character. A Glob matches whole strings.
type Glob struct {
	kind   globKind
	lit    string         // the literal, for globLiteral, globBase, globSuffix
	re     *regexp.Regexp // for globRegexp
	source string
}

type globKind uint8

const (
	globRegexp  globKind = iota
	globLiteral          // the whole path equals lit
	globBase             // "**/lit": the last component equals lit
	globSuffix           // "**/*lit": the last component ends with lit
)

// CompileGlob compiles pattern. The only errors come from malformed
// classes or alternatives that cannot be read literally either.
func CompileGlob(pattern string) (Glob, error) {
	g := Glob{source: pattern}
	switch {
	case !hasMeta(pattern):
		g.kind, g.lit = globLiteral, pattern
		return g, nil
	case strings.HasPrefix(pattern, "**/") && !hasMeta(pattern[3:]) && !strings.Contains(pattern[3:], "/"):
		g.kind, g.lit = globBase, pattern[3:]
		return g, nil
	case strings.HasPrefix(pattern, "**/*") && !hasMeta(pattern[4:]) && !strings.Contains(pattern[4:], "/"):
		g.kind, g.lit = globSuffix, pattern[4:]
		return g, nil
	}
	expr, err := translate(pattern)
	if err != nil {
		return Glob{}, fmt.Errorf("glob %q: %w", pattern, err)
	}
	re, err := regexp.Compile(`(?s)^(?:` + expr + `)$`)
	if err != nil {
		return Glob{}, fmt.Errorf("glob %q: %w", pattern, err)
	}
	g.re = re
	return g, nil
}

// String returns the pattern the glob was compiled from.
func (g Glob) String() string { return g.source }

// Match reports whether path (with '/' separators) matches the whole glob.
func (g Glob) Match(path string) bool {
	switch g.kind {
	case globLiteral:
		return path == g.lit
	case globBase:
		return baseName(path) == g.lit
	case globSuffix:
		return strings.HasSuffix(baseName(path), g.lit)
	}
	return g.re.MatchString(path)
}

func baseName(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }

// translate turns a glob into the body of a regular expression.
func translate(glob string) (string, error) {
	var b strings.Builder
	depth := 0 // open {alternatives}
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '*':
			if i+1 < len(glob) && glob[i+1] == '*' && (i == 0 || glob[i-1] == '/') &&
				(i+2 == len(glob) || glob[i+2] == '/') {
				switch {
				case i+2 == len(glob) && i == 0:
					b.WriteString(`.*`)
				case i+2 == len(glob):
					// "dir/**": everything below dir ('/' already written).
					b.WriteString(`.*`)
				default:
					// "**/" at the start or "/**/" inside: zero or more directories.
					b.WriteString(`(?:.*/)?`)
					i++ // the '/' after "**"
				}
				i++
				continue
			}
			// A lone '*' or a "**" inside a component, which reads as '*'.
			for i+1 < len(glob) && glob[i+1] == '*' {
				i++
			}
			b.WriteString(`[^/]*`)
		case '?':
			b.WriteString(`[^/]`)
		case '[':
			class, n, ok := translateClass(glob[i:])
			if !ok {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(class)
			i += n - 1
		case '{':
			depth++
			b.WriteString(`(?:`)
		case '}':
			if depth == 0 {
				b.WriteString(`\}`)
				continue
			}
			depth--
			b.WriteString(`)`)
		case ',':
			if depth > 0 {
				b.WriteString(`|`)
			} else {
				b.WriteString(`,`)
			}
		case '\\':
			if i+1 < len(glob) {
				i++
				b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
			} else {
				b.WriteString(`\\`)
			}
		default:
			// Bytes, not runes: a multi-byte character is copied whole,
			// one byte at a time, and QuoteMeta leaves those bytes alone.
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	if depth != 0 {
		return "", fmt.Errorf("unclosed '{'")
	}
	return b.String(), nil
}

// translateClass reads a [...] class at the start of s and returns its
// regular expression and its length in s; ok is false when the class is
// not closed, in which case '[' is a literal (as git reads it).
func translateClass(s string) (expr string, n int, ok bool) {
	var b strings.Builder
	b.WriteByte('[')
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteByte('^')
		i++
	}
	first := true
	for ; i < len(s); i++ {
		c := s[i]
		if c == ']' && !first {
			b.WriteByte(']')
			return b.String(), i + 1, true
		}
		first = false
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				c = s[i]
			}
			b.WriteString(escapeClassByte(c))
		case '-':
			b.WriteByte('-')
		default:
			b.WriteString(escapeClassByte(c))
		}
	}
	return "", 0, false
}

func escapeClassByte(c byte) string {
	switch c {
	case '\\', '[', ']', '^', '-':
		return `\` + string(rune(c))
	}
	return string([]byte{c})
}
