package shellparse

import (
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// word is one resolved shell word.
type word struct {
	text    string
	dynamic bool // holds a run-time value kept as source text
}

// maxBraceWords bounds brace expansion; past it the word is kept as written
// and treated as dynamic.
const maxBraceWords = 256

type quoting int

const (
	unquoted quoting = iota
	doubleQuoted
	heredoc
)

// resolveWord resolves w into the words the shell would pass, expanding
// braces ({a,b} gives two words).
func resolveWord(w *syntax.Word) []word {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) {
		return []word{resolveParts(w.Parts, unquoted)}
	}
	var out []word
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) == maxBraceWords {
			r := resolveParts(w.Parts, unquoted)
			r.dynamic = true
			return []word{r}
		}
		out = append(out, resolveParts(bw.Parts, unquoted))
	}
	return out
}

// resolveOne resolves w into a single word, without brace expansion (as
// bash does for redirection targets and assignments).
func resolveOne(w *syntax.Word) word {
	if w == nil {
		return word{}
	}
	return resolveParts(w.Parts, unquoted)
}

func resolveAssign(a *syntax.Assign) word {
	name := ""
	if a.Name != nil {
		name = a.Name.Value
	}
	switch {
	case a.Array != nil:
		return word{text: name + "=" + printNode(a.Array), dynamic: true}
	case a.Value != nil:
		v := resolveOne(a.Value)
		if a.Naked && a.Name == nil {
			return v
		}
		op := "="
		if a.Append {
			op = "+="
		}
		return word{text: name + op + v.text, dynamic: v.dynamic}
	}
	if a.Naked {
		return word{text: name}
	}
	return word{text: name + "="}
}

// resolveHeredoc resolves a here-document body.
func resolveHeredoc(w *syntax.Word) word {
	return resolveParts(w.Parts, heredoc)
}

func resolveParts(parts []syntax.WordPart, q quoting) word {
	var b strings.Builder
	dynamic := false
	for _, part := range parts {
		switch part := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(part.Value, q))
		case *syntax.SglQuoted:
			v := part.Value
			if part.Dollar {
				// $'\x72\x6d' is "rm": decode ANSI-C escapes.
				if s, _, err := expand.Format(nil, v, nil); err == nil {
					v, _, _ = strings.Cut(s, "\x00")
				} else {
					dynamic = true
				}
			}
			b.WriteString(v)
		case *syntax.DblQuoted:
			r := resolveParts(part.Parts, doubleQuoted)
			b.WriteString(r.text)
			dynamic = dynamic || r.dynamic
		case *syntax.ExtGlob:
			b.WriteString(printNode(part))
		default: // $VAR, ${...}, $(...), `...`, $((...)), <(...)
			b.WriteString(printNode(part))
			dynamic = true
		}
	}
	return word{text: b.String(), dynamic: dynamic}
}

// unescape removes the backslashes the shell would remove from a literal.
func unescape(s string, q quoting) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		next := s[i+1]
		switch {
		case q == unquoted:
			// Outside quotes a backslash quotes any character.
		case next == '$' || next == '`' || next == '\\' || next == '\n':
		case next == '"' && q == doubleQuoted:
		default:
			b.WriteByte(c) // kept literally inside quotes
			continue
		}
		i++
		if next != '\n' {
			b.WriteByte(next)
		}
	}
	return b.String()
}

// joinWords renders resolved words back as one shell line, quoting where a
// word would otherwise split or expand.
func joinWords(ws []word) string {
	parts := make([]string, 0, len(ws))
	for _, w := range ws {
		if w.dynamic {
			parts = append(parts, w.text)
			continue
		}
		q, err := syntax.Quote(w.text, syntax.LangBash)
		if err != nil {
			q = w.text
		}
		parts = append(parts, q)
	}
	return strings.Join(parts, " ")
}
