package search

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coda-cli/coda/internal/ignore"
)

// Walker lists the files below a directory the way ripgrep chooses what to
// search: depth first in name order, skipping what ignore files exclude,
// hidden entries, .git directories, special files, and symbolic links
// (which it never follows into directories).
type Walker struct {
	// Hidden also lists hidden files and directories (names starting with
	// '.'), like rg --hidden. .git directories stay skipped.
	Hidden bool
	// Symlinks also lists symbolic links that point to regular files.
	Symlinks bool
	// MaxDepth stops descending below that many levels (1: only the
	// directory's own entries); 0 means no limit.
	MaxDepth int
	// Globs are rg --glob overrides in gitignore syntax, relative to the
	// walked directory: a file must match one of the plain globs (when
	// there are any) and none of the "!"-negated ones. A matching glob
	// overrides ignore files and hiding.
	Globs []string
	// TypeGlobs restricts files to names matching one of these globs (a
	// file type, rg --type).
	TypeGlobs []string
	// SkipDir, when set, is asked about each directory (absolute path)
	// before the walk enters it.
	SkipDir func(path string) bool
}

// WalkFunc receives each file: its absolute path and its directory entry.
// Returning an error stops the walk with that error.
type WalkFunc func(path string, d fs.DirEntry) error

// walkFilter is the compiled form of a Walker's globs and types.
type walkFilter struct {
	overrides *ignore.Rules // plain globs read as ignore rules, whose verdict is inverted
	wanted    int           // plain (not negated) globs
	types     []ignore.Glob
}

func (w Walker) compile(root string) (*walkFilter, error) {
	f := &walkFilter{overrides: ignore.NewRules(root)}
	for _, g := range w.Globs {
		if err := f.overrides.Add(g); err != nil {
			return nil, fmt.Errorf("invalid glob %q: %w", g, err)
		}
	}
	f.wanted = f.overrides.Len() - f.overrides.Whitelists()
	for _, g := range w.TypeGlobs {
		cg, err := ignore.CompileGlob(g)
		if err != nil {
			return nil, fmt.Errorf("invalid type glob %q: %w", g, err)
		}
		f.types = append(f.types, cg)
	}
	return f, nil
}

// Walk calls fn for each file below root (absolute, clean). When root is a
// file, fn gets just that file, whatever the filters say, as when a file
// is named on rg's command line. Unreadable directories are skipped.
func (w Walker) Walk(ctx context.Context, root string, fn WalkFunc) error {
	info, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			// Opening a pipe or device could block or never end.
			return fmt.Errorf("%s is not a regular file or directory", root)
		}
		return fn(root, fs.FileInfoToDirEntry(info))
	}
	f, err := w.compile(root)
	if err != nil {
		return err
	}
	return w.walkDir(ctx, root, ignore.Load(root), f, 1, fn)
}

func (w Walker) walkDir(ctx context.Context, dir string, stack *ignore.Stack, f *walkFilter, depth int, fn WalkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && len(entries) == 0 {
		return nil
	}
	stack = stack.Child(dir, entries)
	prefix := dir + string(filepath.Separator)
	if strings.HasSuffix(dir, string(filepath.Separator)) {
		prefix = dir
	}
	for _, e := range entries {
		name := e.Name()
		path := prefix + name
		typ := e.Type()
		isDir := typ.IsDir()
		switch {
		case isDir:
			if name == ".git" {
				continue
			}
		case typ&fs.ModeSymlink != 0:
			if !w.Symlinks {
				continue
			}
			target, err := os.Stat(path)
			if err != nil || !target.Mode().IsRegular() {
				continue
			}
		case !typ.IsRegular():
			continue
		}
		if !w.include(stack, f, path, name, isDir) {
			continue
		}
		if !isDir {
			if err := fn(path, e); err != nil {
				return err
			}
			continue
		}
		if w.MaxDepth > 0 && depth >= w.MaxDepth {
			continue
		}
		if w.SkipDir != nil && w.SkipDir(path) {
			continue
		}
		if err := w.walkDir(ctx, path, stack, f, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

// include applies ripgrep's precedence: --glob overrides first, then
// ignore files, then file types, and hiding last.
func (w Walker) include(stack *ignore.Stack, f *walkFilter, path, name string, isDir bool) bool {
	if f.overrides.Len() > 0 {
		switch f.overrides.Match(path, isDir) {
		case ignore.Ignore: // a plain glob matched: wanted
			return true
		case ignore.Whitelist: // a "!" glob matched: unwanted
			return false
		}
		if f.wanted > 0 && !isDir {
			return false
		}
	}
	whitelisted := false
	switch stack.Match(path, isDir) {
	case ignore.Ignore:
		return false
	case ignore.Whitelist:
		whitelisted = true
	}
	if len(f.types) > 0 && !isDir {
		matched := false
		for _, g := range f.types {
			if g.Match(name) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
		whitelisted = true
	}
	if !whitelisted && !w.Hidden && strings.HasPrefix(name, ".") {
		return false
	}
	return true
}
