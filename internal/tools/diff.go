package tools

import (
	"bytes"
	"fmt"
	"strings"
)

// FileDiff is what Write and Edit show the user: a unified diff of the
// change with three lines of context.
type FileDiff struct {
	Path    string
	Diff    string
	Added   int // lines added
	Removed int // lines removed
	Created bool
}

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// maxDiffEdits bounds the Myers search. Beyond it the differing middle is
// shown as removed and re-added whole: still a correct diff, just not the
// shortest, and never slow.
const maxDiffEdits = 1000

// NewFileDiff compares the content of path before and after a change.
func NewFileDiff(path, before, after string, created bool) FileDiff {
	return newFileDiff(path, []byte(before), []byte(after), created)
}

func newFileDiff(path string, before, after []byte, created bool) FileDiff {
	d := FileDiff{Path: path, Created: created}
	oldName, newName := path, path
	if created {
		oldName = "/dev/null"
	}
	d.Diff, d.Added, d.Removed = unifiedDiff(oldName, newName, before, after)
	return d
}

// lineOp is one step of an edit script.
type lineOp struct {
	kind byte // ' ', '-', '+'
	text string
}

// unifiedDiff renders the difference between a and b. Lines keep their
// newline while compared, so a change to a file's final newline shows up
// (with "\ No newline at end of file").
func unifiedDiff(oldName, newName string, a, b []byte) (string, int, int) {
	if bytes.Equal(a, b) {
		return "", 0, 0
	}
	// Trim the common head and tail at line boundaries first: an edit to
	// one line of a 10 MB file then diffs a few lines, not 200,000.
	prefix := commonPrefix(a, b)
	prefix = bytes.LastIndexByte(a[:prefix], '\n') + 1
	suffix := commonSuffix(a[prefix:], b[prefix:])
	if suffix > 0 {
		as, bs := len(a)-suffix, len(b)-suffix
		if !(atLineStart(a, as) && atLineStart(b, bs)) {
			if i := bytes.IndexByte(a[as:], '\n'); i >= 0 && i+1 <= suffix {
				suffix -= i + 1
			} else {
				suffix = 0
			}
		}
	}
	ctxBefore := trailingLines(a[:prefix], diffContext)
	ctxAfter := leadingLines(a[len(a)-suffix:], diffContext)
	firstLine := bytes.Count(a[:prefix], []byte{'\n'}) - len(ctxBefore) + 1 // number of the first line shown

	ops := make([]lineOp, 0, len(ctxBefore)+len(ctxAfter)+8)
	for _, l := range ctxBefore {
		ops = append(ops, lineOp{' ', l})
	}
	ops = appendMyers(ops, splitLines(a[prefix:len(a)-suffix]), splitLines(b[prefix:len(b)-suffix]))
	for _, l := range ctxAfter {
		ops = append(ops, lineOp{' ', l})
	}
	return renderHunks(oldName, newName, ops, firstLine)
}

// trailingLines returns the last n lines of s, which ends with a newline.
func trailingLines(s []byte, n int) []string {
	start := len(s)
	for k := 0; k < n && start > 0; k++ {
		start = bytes.LastIndexByte(s[:start-1], '\n') + 1
	}
	return splitLines(s[start:])
}

// leadingLines returns the first n lines of s.
func leadingLines(s []byte, n int) []string {
	end := 0
	for k := 0; k < n && end < len(s); k++ {
		i := bytes.IndexByte(s[end:], '\n')
		if i < 0 {
			end = len(s)
			break
		}
		end += i + 1
	}
	return splitLines(s[:end])
}

func atLineStart(s []byte, i int) bool { return i == 0 || s[i-1] == '\n' }

// commonPrefix is the length of the longest common prefix of a and b,
// compared a block at a time first.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const block = 256
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	const block = 256
	for i+block <= n && bytes.Equal(a[len(a)-i-block:len(a)-i], b[len(b)-i-block:len(b)-i]) {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// splitLines splits s after each newline; a last line without one is kept.
func splitLines(s []byte) []string {
	if len(s) == 0 {
		return nil
	}
	lines := make([]string, 0, bytes.Count(s, []byte{'\n'})+1)
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, string(s))
			break
		}
		lines = append(lines, string(s[:i+1]))
		s = s[i+1:]
	}
	return lines
}

// appendMyers appends the shortest edit script from a to b (Myers' greedy
// algorithm), or a plain "remove all, add all" past maxDiffEdits.
func appendMyers(ops []lineOp, a, b []string) []lineOp {
	// Lines become small integers so the inner loop compares ints.
	ids := make(map[string]int, len(a)+len(b))
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	n, m := len(x), len(y)
	maxD := min(n+m, maxDiffEdits)
	offset := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	found := false
	for d := 0; d <= maxD && !found; d++ {
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				i = v[offset+k+1] // down: insertion
			} else {
				i = v[offset+k-1] + 1 // right: deletion
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[offset+k] = i
			if i >= n && j >= m {
				found = true
				break
			}
		}
		trace = append(trace, append([]int(nil), v...))
	}
	if !found {
		for _, l := range a {
			ops = append(ops, lineOp{'-', l})
		}
		for _, l := range b {
			ops = append(ops, lineOp{'+', l})
		}
		return ops
	}
	// Walk the trace back from (n, m) to (0, 0).
	var rev []lineOp
	i, j := n, m
	for d := len(trace) - 1; d > 0; d-- {
		vPrev := trace[d-1]
		k := i - j
		var prevK int
		if k == -d || (k != d && vPrev[offset+k-1] < vPrev[offset+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevI := vPrev[offset+prevK]
		prevJ := prevI - prevK
		for i > prevI && j > prevJ {
			i--
			j--
			rev = append(rev, lineOp{' ', a[i]})
		}
		if i == prevI {
			j--
			rev = append(rev, lineOp{'+', b[j]})
		} else {
			i--
			rev = append(rev, lineOp{'-', a[i]})
		}
	}
	for i > 0 && j > 0 {
		i--
		j--
		rev = append(rev, lineOp{' ', a[i]})
	}
	for k := len(rev) - 1; k >= 0; k-- {
		ops = append(ops, rev[k])
	}
	return ops
}

// renderHunks prints ops as unified-diff hunks with diffContext lines of
// context, merging changes that are close together. firstLine is the
// line number (in both files) of ops[0].
func renderHunks(oldName, newName string, ops []lineOp, firstLine int) (string, int, int) {
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", oldName, newName)
	added, removed := 0, 0
	// Line numbers before each op.
	oldAt := make([]int, len(ops)+1)
	newAt := make([]int, len(ops)+1)
	oldAt[0], newAt[0] = firstLine, firstLine
	for i, op := range ops {
		oldAt[i+1], newAt[i+1] = oldAt[i], newAt[i]
		if op.kind != '+' {
			oldAt[i+1]++
		}
		if op.kind != '-' {
			newAt[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-diffContext)
		// Extend over changes separated by at most 2*diffContext equal lines.
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(end+diffContext, run)
				break
			}
			end = run
		}
		oldCount := oldAt[end] - oldAt[start]
		newCount := newAt[end] - newAt[start]
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(oldAt[start], oldCount), hunkRange(newAt[start], newCount))
		for _, op := range ops[start:end] {
			b.WriteByte(op.kind)
			b.WriteString(strings.TrimSuffix(op.text, "\n"))
			b.WriteByte('\n')
			if !strings.HasSuffix(op.text, "\n") {
				b.WriteString("\\ No newline at end of file\n")
			}
			switch op.kind {
			case '+':
				added++
			case '-':
				removed++
			}
		}
		i = end
	}
	return b.String(), added, removed
}

// hunkRange formats "start,count" the way diff -u does: a count of one is
// left out, and an empty range names the line before it.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

// countLines is the number of lines in s, counting a last line without a
// newline.
func countLines(s []byte) int {
	n := bytes.Count(s, []byte{'\n'})
	if len(s) > 0 && s[len(s)-1] != '\n' {
		n++
	}
	return n
}
