package session

import (
	"os"
	"path/filepath"
	"strings"
)

// gitBranch names the branch checked out in the repository holding dir,
// by reading .git/HEAD (a worktree's .git file points to its own HEAD):
// cheap enough for every session start, no git process. It is "" outside
// a repository and a short commit hash when HEAD is detached.
func gitBranch(dir string) string {
	for d := dir; ; {
		gitPath := filepath.Join(d, ".git")
		if fi, err := os.Stat(gitPath); err == nil {
			gitDir := gitPath
			if !fi.IsDir() {
				b, err := os.ReadFile(gitPath)
				if err != nil {
					return ""
				}
				target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return ""
				}
				gitDir = strings.TrimSpace(target)
				if !filepath.IsAbs(gitDir) {
					gitDir = filepath.Join(d, gitDir)
				}
			}
			return headBranch(filepath.Join(gitDir, "HEAD"))
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func headBranch(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
	}
	if len(head) > 12 {
		head = head[:12]
	}
	return head
}
