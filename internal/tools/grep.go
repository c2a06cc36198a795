package tools

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/search"
)

//go:embed grep.md
var grepDescription string

const (
	// grepMaxColumns replaces longer lines (minified code, data) with a
	// short note instead of flooding the context.
	grepMaxColumns = 500
	// grepDefaultLimit caps the lines or entries returned when head_limit
	// is not given.
	grepDefaultLimit = 2000
	// grepStderrKeep bounds the rg diagnostics kept for an error message.
	grepStderrKeep = 8 << 10
)

type grepInput struct {
	Pattern    string `json:"pattern" jsonschema_description:"The regular expression to search for (ripgrep syntax: escape literal braces and parentheses, e.g. interface\\{\\} or foo\\(\\))."`
	Path       string `json:"path,omitempty" jsonschema_description:"File or directory to search in. Defaults to the working directory."`
	Glob       string `json:"glob,omitempty" jsonschema_description:"Only search files whose path matches this glob (rg --glob), e.g. \"*.js\" or \"*.{ts,tsx}\"; a leading ! excludes. Several globs may be separated by spaces."`
	Type       string `json:"type,omitempty" jsonschema_description:"Only search files of this type (rg --type), e.g. go, js, ts, py, rust, java, c, cpp, md, json, yaml, sh. More efficient than glob for standard types."`
	OutputMode string `json:"output_mode,omitempty" jsonschema:"enum=content,enum=files_with_matches,enum=count" jsonschema_description:"\"files_with_matches\" (default) lists matching files, newest first; \"content\" shows matching lines as path:line:text; \"count\" shows matches per file."`
	IgnoreCase bool   `json:"-i,omitempty" jsonschema_description:"Case-insensitive search (rg -i)."`
	LineNumber *bool  `json:"-n,omitempty" jsonschema_description:"Show line numbers (rg -n). Content mode only; defaults to true."`
	After      *int   `json:"-A,omitempty" jsonschema:"minimum=0" jsonschema_description:"Lines of context to show after each match (rg -A). Content mode only."`
	Before     *int   `json:"-B,omitempty" jsonschema:"minimum=0" jsonschema_description:"Lines of context to show before each match (rg -B). Content mode only."`
	Context    int    `json:"-C,omitempty" jsonschema:"minimum=0" jsonschema_description:"Lines of context to show before and after each match (rg -C). Content mode only."`
	Multiline  bool   `json:"multiline,omitempty" jsonschema_description:"Let the pattern span lines, with . matching newlines (rg -U --multiline-dotall). Default false."`
	HeadLimit  int    `json:"head_limit,omitempty" jsonschema:"minimum=0" jsonschema_description:"Return at most this many output lines (content), files (files_with_matches) or entries (count). Defaults to 2000."`
	Offset     int    `json:"offset,omitempty" jsonschema:"minimum=0" jsonschema_description:"Skip this many lines or entries before applying head_limit, to page through long results. Default 0."`
}

type grepTool struct {
	// rg is the ripgrep binary to run: "" looks it up on PATH at each
	// call, "-" never uses it (the built-in searcher always runs).
	rg string
}

// NewGrep returns the Grep tool. It runs ripgrep when rg is on PATH and
// the built-in searcher otherwise; both print the same output.
func NewGrep() Tool { return grepTool{} }

func (grepTool) Name() string                         { return "Grep" }
func (grepTool) Description() string                  { return grepDescription }
func (grepTool) InputSchema() json.RawMessage         { return SchemaFor[grepInput]() }
func (grepTool) ReadOnly() bool                       { return true }
func (grepTool) ConcurrencySafe(json.RawMessage) bool { return true }

func (g grepTool) Run(ctx context.Context, call Call) Result {
	in, err := Decode[grepInput](call.Input)
	if err != nil {
		return Errorf("Grep: %v", err)
	}
	o, err := grepOptions(in)
	if err != nil {
		return Errorf("Grep: %v", err)
	}
	root := call.Env.Cwd()
	if in.Path != "" {
		root = call.Env.Abs(in.Path)
	}
	if info, err := os.Stat(root); err != nil {
		return missingFileError("Grep", root, err)
	} else if !info.IsDir() && !info.Mode().IsRegular() {
		return notRegularError("Grep", root)
	}
	limit := in.HeadLimit
	if limit == 0 {
		limit = grepDefaultLimit
	}
	// Files are sorted and counts totalled over everything; content lines
	// arrive in order, so the search can stop once the page is full.
	want := 0
	if o.Mode == search.Content {
		want = in.Offset + limit + 1
	}
	var lines []string
	if rg := g.ripgrep(); rg != "" {
		lines, err = runRipgrep(ctx, rg, root, o, want)
	} else {
		lines, err = runBuiltin(ctx, root, o, want)
	}
	if err != nil {
		return Errorf("Grep: %v", err)
	}
	return grepResult(o.Mode, lines, in.Offset, limit)
}

func (g grepTool) ripgrep() string {
	switch g.rg {
	case "-":
		return ""
	case "":
		path, err := exec.LookPath("rg")
		if err != nil {
			return ""
		}
		return path
	}
	return g.rg
}

// grepOptions checks the input and turns it into search options.
func grepOptions(in grepInput) (search.Options, error) {
	o := search.Options{Pattern: in.Pattern, IgnoreCase: in.IgnoreCase, Multiline: in.Multiline, Type: in.Type}
	if in.Pattern == "" {
		return o, errors.New("pattern is empty; give a regular expression to search for")
	}
	switch in.OutputMode {
	case "", "files_with_matches":
		o.Mode = search.FilesWithMatches
	case "content":
		o.Mode = search.Content
	case "count":
		o.Mode = search.Count
	default:
		return o, fmt.Errorf("output_mode %q is not one of content, files_with_matches, count", in.OutputMode)
	}
	if in.Context < 0 || in.HeadLimit < 0 || in.Offset < 0 || (in.After != nil && *in.After < 0) || (in.Before != nil && *in.Before < 0) {
		return o, errors.New("-A, -B, -C, head_limit and offset must not be negative")
	}
	if o.Mode == search.Content {
		o.LineNumbers = in.LineNumber == nil || *in.LineNumber
		o.Before, o.After = in.Context, in.Context
		if in.Before != nil {
			o.Before = *in.Before
		}
		if in.After != nil {
			o.After = *in.After
		}
		o.MaxColumns = grepMaxColumns
	}
	if in.Type != "" {
		if _, ok := search.TypeGlobs(in.Type); !ok {
			return o, fmt.Errorf("unknown file type %q; known types: %s. Use glob for other files", in.Type, strings.Join(search.TypeNames(), ", "))
		}
	}
	o.Globs = splitGlobs(in.Glob)
	if err := search.ValidateGlobs(o.Globs); err != nil {
		return o, err
	}
	return o, nil
}

// splitGlobs reads the glob parameter: several globs separated by spaces,
// or by commas outside braces ("*.ts,*.tsx" as well as "*.{ts,tsx}").
func splitGlobs(s string) []string {
	var out []string
	for _, field := range strings.Fields(s) {
		if strings.Contains(field, "{") {
			out = append(out, field)
			continue
		}
		for _, g := range strings.Split(field, ",") {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	return out
}

// runBuiltin collects the built-in searcher's output; with want > 0 it
// stops after that many lines.
func runBuiltin(ctx context.Context, root string, o search.Options, want int) ([]string, error) {
	var lines []string
	err := search.Search(ctx, root, o, func(line []byte) bool {
		lines = append(lines, string(line))
		return want == 0 || len(lines) < want
	})
	return lines, err
}

// runRipgrep runs rg and passes its output through; with want > 0 it stops
// rg after that many lines.
func runRipgrep(ctx context.Context, rg, root string, o search.Options, want int) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, rg, search.RgArgs(root, o)...)
	cmd.Dir = root
	if info, err := os.Stat(root); err == nil && !info.IsDir() {
		cmd.Dir = filepath.Dir(root)
	}
	cmd.WaitDelay = time.Second
	var stderr cappedBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("run rg: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run rg: %w", err)
	}
	sep := byte('\n')
	if o.Mode == search.FilesWithMatches {
		sep = 0
	}
	var lines []string
	r := bufio.NewReaderSize(stdout, 64<<10)
	stopped := false
	for {
		line, err := r.ReadBytes(sep)
		if len(line) > 0 {
			lines = append(lines, string(bytes.TrimSuffix(line, []byte{sep})))
			if want > 0 && len(lines) >= want {
				stopped = true
				cancel() // enough: stop rg
				break
			}
		}
		if err != nil {
			break
		}
	}
	err = cmd.Wait()
	if stopped {
		return lines, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		// rg found nothing.
	case len(lines) > 0:
		// rg could not read some files but found matches in others.
	default:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return lines, nil
}

// cappedBuffer keeps the first grepStderrKeep bytes written to it.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := grepStderrKeep - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// grepResult formats the output lines of a search for the model: files
// newest first, counts with a total, and a page of at most limit lines
// from offset.
func grepResult(mode search.Mode, lines []string, offset, limit int) Result {
	if len(lines) == 0 {
		return TextResult("No matches found")
	}
	if mode == search.FilesWithMatches {
		sortByModTime(lines)
	}
	total := len(lines)
	if offset >= total {
		if mode == search.Content {
			return TextResult(fmt.Sprintf("No matches found at offset %d.", offset))
		}
		return TextResult(fmt.Sprintf("No matches found at offset %d: there are only %d results.", offset, total))
	}
	page := lines[offset:min(total, offset+limit)]
	more := offset+len(page) < total
	var b strings.Builder
	switch mode {
	case search.FilesWithMatches:
		fmt.Fprintf(&b, "Found %d %s\n", total, plural(total, "file", "files"))
	}
	for _, l := range page {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if mode == search.Count {
		matches := 0
		for _, l := range lines {
			if i := strings.LastIndexByte(l, ':'); i >= 0 {
				n, _ := strconv.Atoi(l[i+1:])
				matches += n
			}
		}
		fmt.Fprintf(&b, "\nFound %d matching %s across %d %s.\n", matches, plural(matches, "line", "lines"), total, plural(total, "file", "files"))
	}
	if more {
		fmt.Fprintf(&b, "\n(Results truncated: showing %d from offset %d. Use offset=%d to see more, or narrow the search.)\n", len(page), offset, offset+len(page))
	}
	return TextResult(b.String())
}

// sortByModTime orders paths newest first, then by path.
func sortByModTime(paths []string) {
	times := make(map[string]time.Time, len(paths))
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			times[p] = info.ModTime()
		}
	}
	sort.Slice(paths, func(i, j int) bool {
		ti, tj := times[paths[i]], times[paths[j]]
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return paths[i] < paths[j]
	})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
