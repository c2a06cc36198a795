package tools

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed edit.md
var editDescription string

type editInput struct {
	FilePath   string `json:"file_path" jsonschema_description:"Absolute path of the file to change (a relative path resolves against the working directory)."`
	OldString  string `json:"old_string" jsonschema_description:"The exact text to replace, including its whitespace and indentation, without Read's line-number prefixes. It must occur exactly once unless replace_all is true."`
	NewString  string `json:"new_string" jsonschema_description:"The text to put in its place; it must differ from old_string."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema_description:"Replace every occurrence of old_string instead of requiring exactly one (default false)."`
}

type editTool struct{}

// NewEdit returns the Edit tool: exact string replacement in a file.
func NewEdit() Tool { return editTool{} }

func (editTool) Name() string                         { return "Edit" }
func (editTool) Description() string                  { return editDescription }
func (editTool) InputSchema() json.RawMessage         { return SchemaFor[editInput]() }
func (editTool) ReadOnly() bool                       { return false }
func (editTool) ConcurrencySafe(json.RawMessage) bool { return false }

// editSnippetLines bounds the numbered excerpt an Edit returns.
const editSnippetLines = 24

func (editTool) Run(ctx context.Context, call Call) Result {
	in, err := Decode[editInput](call.Input)
	if err != nil {
		return Errorf("Edit: %v", err)
	}
	if in.FilePath == "" {
		return Errorf("Edit: file_path is empty; give the path of the file to change")
	}
	if in.OldString == in.NewString {
		return Errorf("Edit: old_string and new_string are identical, so the edit would change nothing. Give the new text in new_string.")
	}
	abs := call.Env.Abs(in.FilePath)
	target := stateKey(abs)
	info, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		if in.OldString != "" {
			return missingFileError("Edit", abs, err)
		}
		return createWithEdit(call.Env, abs, target, in.NewString)
	}
	if err != nil {
		return Errorf("Edit: cannot access %s: %v", abs, err)
	}
	if info.IsDir() {
		return Errorf("Edit: %s is a directory; give the path of a file", abs)
	}
	if !info.Mode().IsRegular() {
		return notRegularError("Edit", abs)
	}
	data, modTime, err := Stat(target)
	if err != nil {
		return Errorf("Edit: read %s: %v", abs, err)
	}
	if err := call.Env.Files.CheckFresh(target, data, modTime); err != nil {
		return Errorf("Edit: %v", err)
	}
	mode := keptMode(info.Mode())
	if in.OldString == "" {
		if len(data) != 0 {
			return Errorf("Edit: old_string is empty but %s is not. Give the exact text to replace in old_string, or use Write to replace the whole file.", abs)
		}
		return finishEdit(ctx, call.Env, abs, target, mode, data, []byte(in.NewString), 0, 1, len(in.NewString))
	}

	oldS, newS := []byte(in.OldString), []byte(in.NewString)
	first := bytes.Index(data, oldS)
	if usesCRLF(data) {
		// The model writes "\n"; a CRLF file needs "\r\n" in both strings.
		crOld, crNew := toCRLF(oldS), toCRLF(newS)
		if i := bytes.Index(data, crOld); i >= 0 || first < 0 {
			oldS, newS, first = crOld, crNew, i
		}
	}
	// One more search tells unique from repeated without counting all.
	count := 0
	if first >= 0 {
		count = 1
		if bytes.Contains(data[first+len(oldS):], oldS) {
			count = 1 + bytes.Count(data[first+len(oldS):], oldS)
		}
	}
	switch {
	case count == 0:
		return Errorf("Edit: old_string was not found in %s. It must match the file exactly, including whitespace and indentation.%s Read the file again to copy the exact text.", abs, notFoundHint(string(data), in.OldString))
	case count > 1 && !in.ReplaceAll:
		return Errorf("Edit: old_string occurs %d times in %s (at lines %s). Include more surrounding lines in old_string to make it unique, or set replace_all to true to change every occurrence.", count, abs, occurrenceLines(data, oldS, 5))
	}
	var after []byte
	if in.ReplaceAll {
		after = bytes.ReplaceAll(data, oldS, newS)
	} else {
		after = make([]byte, 0, len(data)-len(oldS)+len(newS))
		after = append(after, data[:first]...)
		after = append(after, newS...)
		after = append(after, data[first+len(oldS):]...)
	}
	return finishEdit(ctx, call.Env, abs, target, mode, data, after, first, count, len(newS))
}

// createWithEdit handles an empty old_string on a missing file: the edit
// creates the file with new_string.
func createWithEdit(env *Env, abs, target, content string) Result {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return Errorf("Edit: create directory for %s: %v", abs, err)
	}
	data := []byte(content)
	if err := commitChange(env, target, data, 0o644); err != nil {
		return Errorf("Edit: %v", err)
	}
	text := fmt.Sprintf("Created %s (%d bytes, %d lines).", abs, len(data), countLines(data))
	return Result{Content: TextResult(text).Content, Display: NewFileDiff(abs, "", content, true)}
}

// finishEdit writes the changed content and reports the edit: a numbered
// excerpt around the first replacement, which starts at byte first of the
// new content and is n bytes long.
func finishEdit(ctx context.Context, env *Env, abs, target string, mode fs.FileMode, before, after []byte, first, count, n int) Result {
	if err := ctx.Err(); err != nil {
		return Errorf("Edit: %v", err)
	}
	if err := commitChange(env, target, after, mode); err != nil {
		return Errorf("Edit: %v", err)
	}
	what := "1 replacement"
	if count > 1 {
		what = fmt.Sprintf("%d replacements; the first is shown", count)
	}
	text := fmt.Sprintf("Edited %s (%s):\n%s", abs, what, editSnippet(after, first, n))
	return Result{Content: TextResult(text).Content, Display: newFileDiff(abs, before, after, false)}
}

// editSnippet numbers the lines around content[start:start+n] in Read's
// format, with a few lines of context, eliding the middle of long changes.
func editSnippet(content []byte, start, n int) string {
	firstLine := bytes.Count(content[:start], []byte{'\n'}) + 1
	changed := bytes.Count(content[start:start+n], []byte{'\n'})
	if n > 0 && content[start+n-1] == '\n' {
		changed-- // the change ends with its line
	}
	from := max(1, firstLine-diffContext)
	to := firstLine + max(changed, 0) + diffContext
	off := bytes.LastIndexByte(content[:start], '\n') + 1 // start of firstLine
	for l := firstLine; l > from; l-- {
		off = bytes.LastIndexByte(content[:off-1], '\n') + 1
	}
	var b strings.Builder
	total := to - from + 1
	skipFrom := from + editSnippetLines/2
	skipTo := to - editSnippetLines/2
	for l := from; l <= to && off < len(content); l++ {
		end := bytes.IndexByte(content[off:], '\n')
		line := content[off:]
		if end >= 0 {
			line = content[off : off+end]
		}
		if total > editSnippetLines && l >= skipFrom && l <= skipTo {
			if l == skipFrom {
				fmt.Fprintf(&b, "   ...\t(%d lines not shown)\n", skipTo-skipFrom+1)
			}
		} else {
			line = bytes.TrimSuffix(line, []byte{'\r'})
			text := strings.ToValidUTF8(string(line), "\uFFFD")
			if len(text) > readMaxLineChars {
				text = strings.ToValidUTF8(text[:readMaxLineChars], "") + "… [line truncated]"
			}
			fmt.Fprintf(&b, "%6d\t%s\n", l, text)
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return b.String()
}

// usesCRLF reports whether the file's first line ends with "\r\n".
func usesCRLF(content []byte) bool {
	i := bytes.IndexByte(content, '\n')
	return i > 0 && content[i-1] == '\r'
}

func toCRLF(s []byte) []byte {
	lf := bytes.ReplaceAll(s, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n"))
}

// occurrenceLines lists the line numbers of the first few occurrences.
func occurrenceLines(content, s []byte, limit int) string {
	var nums []string
	line, pos := 1, 0
	for len(nums) < limit {
		i := bytes.Index(content[pos:], s)
		if i < 0 {
			break
		}
		line += bytes.Count(content[pos:pos+i], []byte{'\n'})
		nums = append(nums, fmt.Sprint(line))
		line += bytes.Count(s, []byte{'\n'})
		pos += i + len(s)
	}
	if bytes.Count(content, s) > limit {
		nums = append(nums, "...")
	}
	return strings.Join(nums, ", ")
}

var lineNumberPrefix = regexp.MustCompile(`(?m)^\s*\d+\t`)

// notFoundHint points the model at what it most likely got wrong: Read's
// line-number prefixes pasted into old_string, or the line in the file
// closest to old_string's first line.
func notFoundHint(content, old string) string {
	if lineNumberPrefix.MatchString(old) && !lineNumberPrefix.MatchString(content) {
		return " old_string seems to include the line-number prefixes Read adds (spaces, a number, a tab); leave them out."
	}
	target := ""
	for _, l := range strings.Split(old, "\n") {
		if strings.TrimSpace(l) != "" {
			target = strings.TrimRight(l, "\r")
			break
		}
	}
	if target == "" {
		return ""
	}
	n, line, exactTrim := closestLine(content, target)
	if n == 0 {
		return ""
	}
	shown := line
	if len(shown) > 200 {
		shown = strings.ToValidUTF8(shown[:200], "") + "…"
	}
	if exactTrim {
		return fmt.Sprintf(" Line %d has old_string's first line with different indentation or spacing: %q.", n, shown)
	}
	return fmt.Sprintf(" The closest line to old_string's first line is line %d: %q.", n, shown)
}

// closestLine finds the line of content most like target: one equal after
// trimming whitespace if any, else the one holding the most distinct
// three-byte sequences of target (at least half of them). n is 0 when no
// line is close.
func closestLine(content, target string) (n int, line string, exactTrim bool) {
	trimmed := strings.TrimSpace(target)
	// Each of target's trigrams maps to the last line it was seen on, so
	// a trigram repeated within one line counts once.
	grams := make(map[string]int)
	for i := 0; i+3 <= len(trimmed); i++ {
		grams[trimmed[i:i+3]] = 0
	}
	bestScore := 0
	lineNo := 0
	for rest := content; rest != ""; {
		lineNo++
		l := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		l = strings.TrimRight(l, "\r")
		lt := strings.TrimSpace(l)
		if lt == trimmed {
			return lineNo, l, true
		}
		score := 0
		for i := 0; i+3 <= len(lt); i++ {
			if seen, ok := grams[lt[i:i+3]]; ok && seen != lineNo {
				grams[lt[i:i+3]] = lineNo
				score++
			}
		}
		if score > bestScore {
			bestScore, n, line = score, lineNo, l
		}
	}
	if len(grams) == 0 || bestScore*2 < len(grams) {
		return 0, "", false
	}
	return n, line, false
}
