package tui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coda-cli/coda/internal/tools"
)

// toolInput decodes a tool's input loosely: the UI shows what it can and
// never fails on input the model got wrong.
func toolInput(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// toolTitle is "Name(key argument)", the one line a call is known by.
func toolTitle(name string, raw json.RawMessage, cwd string) string {
	in := toolInput(raw)
	arg := ""
	switch name {
	case "Bash":
		arg = firstLine(str(in, "command"))
		if strings.Contains(strings.TrimSpace(str(in, "command")), "\n") {
			arg += " …"
		}
	case "Read", "Write", "Edit", "MultiEdit", "NotebookEdit":
		arg = relPath(firstNonEmpty(str(in, "file_path"), str(in, "notebook_path")), cwd)
	case "Glob", "Grep":
		arg = str(in, "pattern")
		if p := str(in, "path"); p != "" {
			arg += " in " + relPath(p, cwd)
		}
	case "WebFetch":
		arg = str(in, "url")
	case "WebSearch":
		arg = str(in, "query")
	case "BashOutput":
		arg = str(in, "bash_id")
	case "KillShell":
		arg = str(in, "shell_id")
	case "TodoWrite":
		if todos, ok := in["todos"].([]any); ok {
			arg = plural(len(todos), "item")
		}
	default:
		arg = firstStringField(in)
	}
	if arg == "" {
		return name
	}
	return name + "(" + arg + ")"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// firstStringField is the value of the alphabetically first string field:
// a fair guess at the key argument of a tool the UI does not know.
func firstStringField(in map[string]any) string {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if s, ok := in[k].(string); ok && s != "" {
			return firstLine(s)
		}
	}
	return ""
}

// relPath shows paths inside the project relative to it.
func relPath(p, cwd string) string {
	if p == "" || cwd == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// fileDiffOf reads the diff Edit and Write display.
func fileDiffOf(display any) (tools.FileDiff, bool) {
	switch d := display.(type) {
	case tools.FileDiff:
		return d, true
	case *tools.FileDiff:
		if d != nil {
			return *d, true
		}
	}
	return tools.FileDiff{}, false
}

// toolSummary is the one-line outcome of a finished call.
func toolSummary(name string, raw json.RawMessage, res tools.Result) string {
	text := res.Text()
	if res.IsError {
		return firstLine(text)
	}
	switch d := res.Display.(type) {
	case tools.BashDisplay:
		switch {
		case d.ShellID != "":
			return "running in the background as " + d.ShellID
		case d.TimedOut:
			return "timed out"
		case d.Interrupted:
			return "interrupted"
		}
		s := fmt.Sprintf("exit %d", d.ExitCode)
		if n := countLines(d.Output); n == 0 {
			s += " · no output"
		}
		return s
	case tools.BashOutputDisplay:
		return d.Status.String()
	case tools.WebFetchDisplay:
		if d.Status != 0 {
			return fmt.Sprintf("%d · %s", d.Status, byteCount(d.Bytes))
		}
	case tools.PlanDisplay:
		return "plan approved · now in " + d.Mode + " mode"
	case []tools.Todo:
		done := 0
		for _, t := range d {
			if t.Status == "completed" {
				done++
			}
		}
		return fmt.Sprintf("%d of %d done", done, len(d))
	}
	if fd, ok := fileDiffOf(res.Display); ok {
		s := fmt.Sprintf("+%d -%d", fd.Added, fd.Removed)
		if fd.Created {
			s = fmt.Sprintf("created, %s", plural(fd.Added, "line"))
		}
		return s
	}
	switch name {
	case "Read":
		return "read " + plural(countLines(text), "line")
	case "Glob":
		if strings.HasPrefix(text, "No files") {
			return "no files"
		}
		return plural(countPaths(text), "file")
	case "Grep":
		if strings.HasPrefix(text, "No matches") {
			return "no matches"
		}
		return plural(countLines(text), "line")
	}
	return truncate(firstLine(text), 80)
}

// countPaths counts the lines of a Glob answer that are paths, not notes.
func countPaths(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "/") {
			n++
		}
	}
	return max(n, countLines(text)-1)
}

func byteCount(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// collapsedLines bound what a finished call shows under its line.
const (
	collapsedOutput = 5
	collapsedDiff   = 20
)

// toolBody is what shows under a call's line: the tail of a command's
// output, a coloured diff; everything when expanded.
func toolBody(rc *renderCtx, name string, raw json.RawMessage, res tools.Result, width int, expanded bool) string {
	th := rc.th
	if d, ok := res.Display.(tools.PlanDisplay); ok {
		plan := rc.md.render(d.Plan, width)
		if !expanded {
			out, more := firstLines(plan, collapsedDiff)
			return out + moreLines(th, more)
		}
		return plan
	}
	if fd, ok := fileDiffOf(res.Display); ok && !res.IsError {
		return colorDiff(th, fd.Diff, width, expanded)
	}
	if d, ok := res.Display.(tools.BashDisplay); ok && !expanded {
		out, dropped := lastLines(d.Output, collapsedOutput)
		return clipped(th, out, dropped, width, "earlier")
	}
	if d, ok := res.Display.(tools.BashOutputDisplay); ok && !expanded {
		out, dropped := lastLines(d.Output, collapsedOutput)
		return clipped(th, out, dropped, width, "earlier")
	}
	if todos, ok := res.Display.([]tools.Todo); ok {
		return todoLines(th, todos, width)
	}
	if !expanded {
		if res.IsError {
			rest, _ := firstLines(res.Text(), 4)
			if countLines(rest) <= 1 {
				return ""
			}
			return paint(th.err, wrapLines(rest, width))
		}
		return ""
	}
	return paint(th.dim, wrapLines(strings.TrimRight(res.Text(), "\n"), width))
}

func moreLines(th *theme, n int) string {
	if n == 0 {
		return ""
	}
	return "\n" + th.dim.Render(fmt.Sprintf("… %s more (ctrl+o to expand)", plural(n, "line")))
}

func clipped(th *theme, out string, dropped, width int, where string) string {
	if out == "" {
		return ""
	}
	s := paint(th.dim, wrapLines(out, width))
	if dropped > 0 {
		s = th.dim.Render(fmt.Sprintf("… %s %s (ctrl+o to expand)", plural(dropped, "line"), where)) + "\n" + s
	}
	return s
}

// wrapLines cuts each line to width: tool output is shown as it is, not
// reflowed.
func wrapLines(s string, w int) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = truncate(strings.ReplaceAll(l, "\t", "    "), w)
	}
	return strings.Join(lines, "\n")
}

// colorDiff colours a unified diff, without its file header lines.
func colorDiff(th *theme, diff string, width int, expanded bool) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "diff ") ||
			strings.HasPrefix(l, "index ") || strings.HasPrefix(l, `\ `) {
			continue
		}
		lines = append(lines, l)
	}
	dropped := 0
	if !expanded && len(lines) > collapsedDiff {
		dropped = len(lines) - collapsedDiff
		lines = lines[:collapsedDiff]
	}
	for i, l := range lines {
		l = truncate(strings.ReplaceAll(l, "\t", "    "), width)
		switch {
		case strings.HasPrefix(l, "+"):
			lines[i] = th.added.Render(l)
		case strings.HasPrefix(l, "-"):
			lines[i] = th.removed.Render(l)
		case strings.HasPrefix(l, "@@"):
			lines[i] = th.hunk.Render(l)
		default:
			lines[i] = th.dim.Render(l)
		}
	}
	if dropped > 0 {
		lines = append(lines, th.dim.Render(fmt.Sprintf("… %s more (ctrl+o to expand)", plural(dropped, "line"))))
	}
	return strings.Join(lines, "\n")
}
