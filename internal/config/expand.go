package config

import "strings"

// expandNode replaces ${VAR} and ${VAR:-default} in every string value under
// n, except inside the top-level "hooks" object (see the package comment).
func expandNode(n *node, getenv func(string) (string, bool)) {
	var walk func(n *node)
	walk = func(n *node) {
		switch n.kind {
		case kindString:
			n.str = expand(n.str, getenv)
		case kindArray:
			for _, v := range n.arr {
				walk(v)
			}
		case kindObject:
			for _, v := range n.obj {
				walk(v)
			}
		}
	}
	if n.kind != kindObject {
		walk(n)
		return
	}
	for k, v := range n.obj {
		if k != "hooks" {
			walk(v)
		}
	}
}

// expand substitutes variables in s. Text that is not a well-formed
// ${NAME} or ${NAME:-default} (no closing brace, a name that is not a shell
// identifier) is kept as written.
func expand(s string, getenv func(string) (string, bool)) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			break
		}
		body := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(body, ":-")
		if !isEnvName(name) {
			b.WriteString(s[:i+2])
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		val, ok := getenv(name)
		if hasDef && (!ok || val == "") {
			val = def
		}
		b.WriteString(val)
		s = s[i+2+end+1:]
	}
	b.WriteString(s)
	return b.String()
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		case i > 0 && '0' <= r && r <= '9':
		default:
			return false
		}
	}
	return true
}
