package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/coda-cli/coda/internal/search"
)

//go:embed glob.md
var globDescription string

// globMaxResults bounds the paths one Glob returns.
const globMaxResults = 200

type globInput struct {
	Pattern string `json:"pattern" jsonschema_description:"The glob to match file paths against, relative to path, e.g. \"**/*.go\" or \"src/**/*.{ts,tsx}\"."`
	Path    string `json:"path,omitempty" jsonschema_description:"The directory to search in. Omit it to search the working directory; do not pass \"undefined\" or \"null\"."`
}

type globTool struct{}

// NewGlob returns the Glob tool: files by name pattern, newest first.
func NewGlob() Tool { return globTool{} }

func (globTool) Name() string                         { return "Glob" }
func (globTool) Description() string                  { return globDescription }
func (globTool) InputSchema() json.RawMessage         { return SchemaFor[globInput]() }
func (globTool) ReadOnly() bool                       { return true }
func (globTool) ConcurrencySafe(json.RawMessage) bool { return true }

type globMatch struct {
	path    string
	modTime time.Time
}

func (globTool) Run(ctx context.Context, call Call) Result {
	in, err := Decode[globInput](call.Input)
	if err != nil {
		return Errorf("Glob: %v", err)
	}
	if in.Pattern == "" {
		return Errorf("Glob: pattern is empty; give a glob such as \"**/*.go\"")
	}
	dir := call.Env.Cwd()
	if in.Path != "" {
		dir = call.Env.Abs(in.Path)
		info, err := os.Stat(dir)
		switch {
		case err != nil:
			return Errorf("Glob: path %s does not exist or cannot be read: %v", dir, err)
		case !info.IsDir():
			return Errorf("Glob: path %s is a file, not a directory; give the directory to search in", dir)
		}
	}
	pattern := filepath.ToSlash(in.Pattern)
	base, rest := doublestar.SplitPattern(pattern)
	if !doublestar.ValidatePattern(rest) {
		return Errorf("Glob: invalid pattern %q: check its brackets [] and braces {}", in.Pattern)
	}
	root := filepath.Clean(filepath.FromSlash(base))
	if !filepath.IsAbs(root) {
		root = filepath.Join(dir, root)
	}

	matches, err := globFiles(ctx, root, rest)
	if errors.Is(err, fs.ErrNotExist) {
		return TextResult("No files found")
	}
	if err != nil {
		return Errorf("Glob: %v", err)
	}
	if len(matches) == 0 {
		return TextResult("No files found")
	}
	sort.Slice(matches, func(i, j int) bool {
		if !matches[i].modTime.Equal(matches[j].modTime) {
			return matches[i].modTime.After(matches[j].modTime)
		}
		return matches[i].path < matches[j].path
	})
	var b strings.Builder
	for i, m := range matches {
		if i == globMaxResults {
			break
		}
		b.WriteString(m.path)
		b.WriteByte('\n')
	}
	if len(matches) > globMaxResults {
		fmt.Fprintf(&b, "\n(Showing the %d most recently modified of %d matching files. Use a more specific pattern or path to see the others.)\n", globMaxResults, len(matches))
	}
	return TextResult(b.String())
}

// globFiles walks root once, skipping .git and what ignore files exclude,
// and returns the files whose path relative to root matches pattern.
// Patterns without "**" also bound the walk's depth and prune directories
// no match can be under.
func globFiles(ctx context.Context, root, pattern string) ([]globMatch, error) {
	w := search.Walker{Hidden: true, Symlinks: true}
	if !strings.Contains(pattern, "**") && !strings.Contains(pattern, "{") {
		parts := strings.Split(pattern, "/")
		w.MaxDepth = len(parts)
		w.SkipDir = func(path string) bool {
			rel := relativeTo(root, path)
			depth := strings.Count(rel, "/") + 1
			return depth >= len(parts) || !doublestar.MatchUnvalidated(strings.Join(parts[:depth], "/"), rel)
		}
	}
	var matches []globMatch
	err := w.Walk(ctx, root, func(path string, d fs.DirEntry) error {
		if path == root {
			return nil // root is a file: a pattern names what is inside a directory
		}
		rel := relativeTo(root, path)
		if !doublestar.MatchUnvalidated(pattern, rel) {
			return nil
		}
		var info fs.FileInfo
		var err error
		if d.Type()&fs.ModeSymlink != 0 {
			info, err = os.Stat(path)
		} else {
			info, err = d.Info()
		}
		if err != nil {
			return nil // gone since the directory was listed
		}
		matches = append(matches, globMatch{path: path, modTime: info.ModTime()})
		return nil
	})
	return matches, err
}

// relativeTo is path (below root) relative to root, with '/' separators.
func relativeTo(root, path string) string {
	rel := strings.TrimPrefix(path, root)
	return filepath.ToSlash(strings.TrimPrefix(rel, string(filepath.Separator)))
}
