// Package ignore decides which files a search skips because an ignore file
// says so, with the rules ripgrep applies: .gitignore files in the searched
// directory, its subdirectories and its parents, .git/info/exclude, and the
// .ignore and .rgignore files ripgrep also reads. Rules from .gitignore and
// info/exclude apply only inside a git repository and stop at its root.
package ignore

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The files a directory's rules come from, highest precedence first.
const (
	rgIgnoreFile  = ".rgignore"
	dotIgnoreFile = ".ignore"
	gitIgnoreFile = ".gitignore"
)

// Stack is the ignore state of one directory: its own ignore files and,
// through its parent, those of every directory above it. A Stack is
// immutable and safe for concurrent use.
type Stack struct {
	parent *Stack
	dir    string

	rg, dot, git, exclude *Rules

	hasGit bool // dir holds a .git (a repository root)
	anyGit bool // dir or an ancestor holds a .git
}

// Load returns the stack for dir (absolute, clean), reading the ignore
// files of dir and all its ancestors.
func Load(dir string) *Stack {
	var chain []string
	for d := dir; ; {
		chain = append(chain, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	var s *Stack
	for i := len(chain) - 1; i >= 0; i-- {
		s = s.load(chain[i], nil)
	}
	return s
}

// Child returns the stack for dir, a subdirectory of s's directory whose
// entries are known (so that a directory without ignore files costs no
// system call). A directory without ignore files or .git shares s.
func (s *Stack) Child(dir string, entries []fs.DirEntry) *Stack {
	found := false
	for _, e := range entries {
		switch e.Name() {
		case rgIgnoreFile, dotIgnoreFile, gitIgnoreFile, ".git":
			found = true
		}
	}
	if !found {
		return s
	}
	return s.load(dir, entries)
}

// load reads dir's ignore files; entries, when not nil, lists dir.
func (s *Stack) load(dir string, entries []fs.DirEntry) *Stack {
	has := func(name string) bool {
		if entries == nil {
			_, err := os.Lstat(filepath.Join(dir, name))
			return err == nil
		}
		for _, e := range entries {
			if e.Name() == name {
				return true
			}
		}
		return false
	}
	n := &Stack{parent: s, dir: dir}
	n.rg = readRules(dir, filepath.Join(dir, rgIgnoreFile), has(rgIgnoreFile))
	n.dot = readRules(dir, filepath.Join(dir, dotIgnoreFile), has(dotIgnoreFile))
	n.git = readRules(dir, filepath.Join(dir, gitIgnoreFile), has(gitIgnoreFile))
	if has(".git") {
		n.hasGit = true
		if gitDir := resolveGitDir(filepath.Join(dir, ".git")); gitDir != "" {
			n.exclude = readRules(dir, filepath.Join(gitDir, "info", "exclude"), true)
		}
	}
	n.anyGit = n.hasGit || (s != nil && s.anyGit)
	if n.rg == nil && n.dot == nil && n.git == nil && n.exclude == nil && !n.hasGit && s != nil {
		return s
	}
	return n
}

func readRules(dir, file string, exists bool) *Rules {
	if !exists {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	r := ParseRules(dir, data)
	if r.Len() == 0 {
		return nil
	}
	return r
}

// resolveGitDir finds the git directory whose info/exclude applies: .git
// itself, or for a worktree (a .git file saying "gitdir: ...") the common
// directory it shares with the main checkout.
func resolveGitDir(dotGit string) string {
	info, err := os.Stat(dotGit)
	if err != nil {
		return ""
	}
	if info.IsDir() {
		return dotGit
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return ""
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	gitDir = strings.TrimSpace(gitDir)
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(filepath.Dir(dotGit), gitDir)
	}
	if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		return filepath.Clean(c)
	}
	return gitDir
}

// Dir is the directory the stack describes.
func (s *Stack) Dir() string { return s.dir }

// Match judges path (absolute, clean, below s's directory; a directory when
// isDir). The nearest directory's rules win within each kind of file, and
// the kinds rank .rgignore over .ignore over .gitignore over
// .git/info/exclude. .gitignore and exclude rules count only inside a git
// repository, and not from above its root.
func (s *Stack) Match(path string, isDir bool) Match {
	var mRg, mDot, mGit, mExclude Match
	sawGit := false
	for f := s; f != nil; f = f.parent {
		if mRg == None {
			mRg = f.rg.Match(path, isDir)
		}
		if mDot == None {
			mDot = f.dot.Match(path, isDir)
		}
		if s.anyGit && !sawGit {
			if mGit == None {
				mGit = f.git.Match(path, isDir)
			}
			if mExclude == None {
				mExclude = f.exclude.Match(path, isDir)
			}
		}
		sawGit = sawGit || f.hasGit
	}
	for _, m := range [...]Match{mRg, mDot, mGit, mExclude} {
		if m != None {
			return m
		}
	}
	return None
}
