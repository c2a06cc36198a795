// Package search is coda's built-in replacement for ripgrep: it walks a
// tree the way rg does (ignore files, hidden files, binary files, globs and
// file types) and prints matches in rg's --no-heading format, so the Grep
// tool reads the same output whichever searcher ran. Files are searched in
// parallel and printed in path order.
package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Mode selects what Search prints.
type Mode int

const (
	// FilesWithMatches prints the path of each file with a match (rg -l).
	FilesWithMatches Mode = iota
	// Content prints matching lines, with context (rg's default).
	Content
	// Count prints "path:N", N matching lines per file (rg -c).
	Count
)

// Options describe one search. The zero value lists files matching Pattern.
type Options struct {
	Pattern string // RE2 syntax, the subset of rg's syntax Go supports
	Mode    Mode

	IgnoreCase bool // -i
	// Multiline lets the pattern match across lines, with '.' matching
	// newlines (rg -U --multiline-dotall).
	Multiline bool

	LineNumbers   bool // content mode: "path:line:text" rather than "path:text"
	Before, After int  // content mode: context lines
	// MaxColumns replaces lines longer than this many bytes (counting the
	// newline) with a note, as rg --max-columns does; 0 keeps all.
	MaxColumns int

	Globs []string // rg --glob overrides, relative to the searched directory
	Type  string   // a file type from TypeNames, rg --type
}

// defaultChunkSize is the file size above which files are searched in
// pieces rather than read whole.
const defaultChunkSize = 64 << 20

// Search searches root (a directory, or a single file searched whatever
// the filters say) and calls emit with each output line, in path order,
// until emit returns false. The line is only valid during the call. An
// invalid pattern, glob or type, or a missing root, is an error.
func Search(ctx context.Context, root string, o Options, emit func(line []byte) bool) error {
	return search(ctx, root, o, defaultChunkSize, emit)
}

func search(ctx context.Context, root string, o Options, chunkSize int, emit func(line []byte) bool) error {
	m, err := compilePattern(o.Pattern, o.IgnoreCase, o.Multiline)
	if err != nil {
		return err
	}
	w := Walker{Globs: o.Globs}
	if o.Type != "" {
		globs, ok := TypeGlobs(o.Type)
		if !ok {
			return fmt.Errorf("unknown file type %q (known types: %s)", o.Type, strings.Join(TypeNames(), ", "))
		}
		w.TypeGlobs = globs
	}
	if _, err := w.compile(root); err != nil {
		return err
	}
	s := &searcher{opts: o, m: m, chunkSize: chunkSize}
	return s.run(ctx, root, w, emit)
}

type fileResult struct {
	seq int
	out output
}

// run walks root, searches the files on GOMAXPROCS workers and emits
// their output in walk order.
func (s *searcher) run(ctx context.Context, root string, w Walker, emit func([]byte) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)

	jobs := make(chan fileJob, 256)
	results := make(chan fileResult, 256)
	var walkErr error
	g.Go(func() error {
		defer close(jobs)
		seq := 0
		err := w.Walk(gctx, root, func(path string, d fs.DirEntry) error {
			select {
			case jobs <- fileJob{seq: seq, path: path, explicit: path == root}:
				seq++
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		})
		if err != nil && gctx.Err() == nil {
			walkErr = err
		}
		return nil
	})
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Add(1)
		g.Go(func() error {
			defer workers.Done()
			var buf []byte
			for job := range jobs {
				var r fileResult
				r.seq = job.seq
				if gctx.Err() == nil {
					buf = s.searchFile(job, buf, &r.out)
				}
				select {
				case results <- r:
				case <-gctx.Done():
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		workers.Wait()
		close(results)
		return nil
	})

	pending := make(map[int]*output)
	next := 0
	stopped := false
	printedFile := false
	contextLines := s.opts.Mode == Content && (s.opts.Before > 0 || s.opts.After > 0)
	for r := range results {
		if stopped {
			continue // drain until the workers are gone
		}
		pending[r.seq] = &r.out
		for !stopped {
			out, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if len(out.ends) == 0 {
				continue
			}
			// rg separates the context groups of different files too.
			if contextLines && printedFile && !emit([]byte("--")) {
				stopped = true
				break
			}
			printedFile = true
			for i := range out.ends {
				if !emit(out.line(i)) {
					stopped = true
					break
				}
			}
		}
		if stopped {
			cancel()
		}
	}
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := ctx.Err(); err != nil && !stopped {
		return err
	}
	return walkErr
}
