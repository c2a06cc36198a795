package search

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// matcher finds the lines (or, in multiline mode, the line ranges) a
// pattern matches. A literal every match must contain is searched for first
// with bytes.Index, so most of the input is skipped at memory speed and the
// regular expression only runs on the lines holding that literal.
type matcher struct {
	re        *regexp.Regexp
	multiline bool

	lit   []byte // required literal, nil when none was found
	fold  bool   // lit is ASCII lower case, matched ignoring case
	exact bool   // the pattern is exactly lit: finding it is a match
}

// compilePattern builds the matcher for pattern with ripgrep's flags:
// ^ and $ match at line boundaries, -i ignores case, and multiline lets
// the pattern match newlines with '.' matching them too (-U
// --multiline-dotall). Without multiline a pattern that needs a literal
// newline is refused, as rg refuses it.
func compilePattern(pattern string, ignoreCase, multiline bool) (*matcher, error) {
	flags := "(?m)"
	if ignoreCase {
		flags += "(?i)"
	}
	if multiline {
		flags += "(?s)"
	}
	expr := flags + pattern
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			// Name the fragment of the user's pattern, not our flags.
			return nil, fmt.Errorf("regex parse error: %s: `%s`", se.Code, strings.TrimPrefix(se.Expr, flags))
		}
		return nil, fmt.Errorf("regex parse error: %w", err)
	}
	if !multiline && needsNewline(tree) {
		return nil, fmt.Errorf(`regex parse error: the literal "\n" is not allowed in a regex unless multiline is enabled`)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("regex parse error: %w", err)
	}
	m := &matcher{re: re, multiline: multiline}
	tree = tree.Simplify()
	if p, ok := requiredLiteral(tree); ok {
		m.lit, m.fold = []byte(p.text), p.fold
		m.exact = !p.fold && isLiteral(tree)
	}
	return m, nil
}

// needsNewline reports whether the expression contains a literal newline
// (or a class of nothing but a newline).
func needsNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 2 && re.Rune[0] == '\n' && re.Rune[1] == '\n' {
			return true
		}
	}
	for _, sub := range re.Sub {
		if needsNewline(sub) {
			return true
		}
	}
	return false
}

func isLiteral(re *syntax.Regexp) bool {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	return re.Op == syntax.OpLiteral && re.Flags&syntax.FoldCase == 0
}

type literal struct {
	text string
	fold bool
}

// requiredLiteral finds the longest literal that every match of re
// contains. Case-folded literals keep only their ASCII letters outside the
// few (k, s) whose folding reaches beyond ASCII, so a byte search for them
// stays exact.
func requiredLiteral(re *syntax.Regexp) (literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			s := string(re.Rune)
			if !utf8.ValidString(s) || containsRune(re.Rune, utf8.RuneError) {
				return literal{}, false
			}
			return literal{text: s}, true
		}
		return foldLiteral(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		var best literal
		found := false
		for _, sub := range re.Sub {
			if l, ok := requiredLiteral(sub); ok && len(l.text) > len(best.text) {
				best, found = l, true
			}
		}
		return best, found
	}
	return literal{}, false
}

func containsRune(rs []rune, r rune) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

// foldLiteral picks the longest run of runes that fold only within ASCII.
func foldLiteral(rs []rune) (literal, bool) {
	var best, cur []byte
	letters, bestLetters := false, false
	flush := func() {
		if len(cur) > len(best) {
			best, bestLetters = append(best[:0], cur...), letters
		}
		cur, letters = cur[:0], false
	}
	for _, r := range rs {
		if !asciiFoldSafe(r) {
			flush()
			continue
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		if 'a' <= r && r <= 'z' {
			letters = true
		}
		cur = append(cur, byte(r))
	}
	flush()
	if len(best) == 0 {
		return literal{}, false
	}
	return literal{text: string(best), fold: bestLetters}, true
}

// asciiFoldSafe reports whether r and everything it folds to are ASCII.
func asciiFoldSafe(r rune) bool {
	if r >= utf8.RuneSelf {
		return false
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// index finds the literal in b.
func (m *matcher) index(b []byte) int {
	if !m.fold {
		return bytes.Index(b, m.lit)
	}
	return indexFold(b, m.lit)
}

// indexFold finds lit (ASCII, lower case) in b ignoring ASCII case. It
// scans for the literal's first byte in both cases with IndexByte, which
// is vectorised, and compares the rest on each hit.
func indexFold(b, lit []byte) int {
	if len(lit) == 0 {
		return 0
	}
	lo := lit[0]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	nextLo, nextUp := -2, -2 // -2: not searched yet; -1: none left
	for pos := 0; pos+len(lit) <= len(b); {
		if nextLo != -1 && nextLo < pos {
			nextLo = indexByteFrom(b, lo, pos)
		}
		if up != lo && nextUp != -1 && nextUp < pos {
			nextUp = indexByteFrom(b, up, pos)
		}
		i := nextLo
		if up != lo && (i == -1 || (nextUp != -1 && nextUp < i)) {
			i = nextUp
		}
		if i < 0 || i+len(lit) > len(b) {
			return -1
		}
		if asciiEqualFold(b[i+1:i+len(lit)], lit[1:]) {
			return i
		}
		pos = i + 1
	}
	return -1
}

func indexByteFrom(b []byte, c byte, from int) int {
	i := bytes.IndexByte(b[from:], c)
	if i < 0 {
		return -1
	}
	return from + i
}

// asciiEqualFold compares s with lower (ASCII lower case) ignoring case.
func asciiEqualFold(s, lower []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// eachMatch calls fn with the byte range of each matching line (single-line
// mode) or group of lines (multiline mode) in buf, starting the search at
// from, a line start. A range starts at a line start and ends after a
// newline or at the end of buf. fn returns false to stop.
func (m *matcher) eachMatch(buf []byte, from int, fn func(start, end int) bool) {
	if m.multiline {
		m.eachMultilineMatch(buf, fn)
		return
	}
	for pos := from; pos < len(buf); {
		start := pos
		if m.lit != nil {
			i := m.index(buf[pos:])
			if i < 0 {
				return
			}
			start = lineStart(buf, pos+i)
		}
		end := lineEnd(buf, start)
		line := buf[start:end]
		if end < len(buf) {
			end++ // the newline belongs to the range
		}
		if m.exact || m.re.Match(line) {
			if !fn(start, end) {
				return
			}
		}
		pos = end
	}
}

// maxMultilineBatch bounds how many matches one FindAllIndex call collects,
// so a pattern matching at every position cannot exhaust memory.
const maxMultilineBatch = 1 << 14

// eachMultilineMatch finds matches across the whole buffer and widens each
// to whole lines. Matches whose lines overlap are reported as one range,
// as rg reports them.
func (m *matcher) eachMultilineMatch(buf []byte, fn func(start, end int) bool) {
	if m.lit != nil && m.index(buf) < 0 {
		return
	}
	lastStart, lastEnd := -1, -1
	emit := func(s, e int) bool {
		ls := lineStart(buf, s)
		var le int
		if e > ls && buf[e-1] == '\n' {
			le = e
		} else {
			le = lineEnd(buf, e)
			if le < len(buf) {
				le++
			}
		}
		if ls == le {
			return true // an empty match after the final newline: no line
		}
		if lastEnd > ls {
			lastEnd = max(lastEnd, le)
			return true
		}
		if lastStart >= 0 && !fn(lastStart, lastEnd) {
			return false
		}
		lastStart, lastEnd = ls, le
		return true
	}
	offset := 0
	for offset <= len(buf) {
		locs := m.re.FindAllIndex(buf[offset:], maxMultilineBatch)
		for _, loc := range locs {
			if !emit(offset+loc[0], offset+loc[1]) {
				return
			}
		}
		if len(locs) < maxMultilineBatch {
			break
		}
		// Continue after the batch. The next search starts without the
		// text before it, which only matters to \b or ^ right there.
		last := locs[len(locs)-1]
		next := offset + last[1]
		if last[0] == last[1] {
			next++
		}
		offset = next
	}
	if lastStart >= 0 {
		fn(lastStart, lastEnd)
	}
}

// lineStart is the start of the line holding offset i.
func lineStart(buf []byte, i int) int {
	return bytes.LastIndexByte(buf[:i], '\n') + 1
}

// lineEnd is the offset of the newline ending the line that starts at or
// holds offset i, or len(buf).
func lineEnd(buf []byte, i int) int {
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(buf)
}
