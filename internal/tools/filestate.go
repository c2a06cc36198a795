package tools

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// FileState remembers, per agent, what each file looked like when the agent
// last read or wrote it, so Edit and Write can refuse to clobber changes the
// agent has not seen.
type FileState struct {
	mu    sync.Mutex
	files map[string]fileSeen
}

type fileSeen struct {
	hash    [32]byte
	modTime time.Time
	partial bool // only part of the file was read
}

// NewFileState returns an empty cache.
func NewFileState() *FileState { return &FileState{files: make(map[string]fileSeen)} }

// Record notes that the agent has seen content of the file at abs.
func (s *FileState) Record(abs string, content []byte, modTime time.Time) {
	s.RecordHash(abs, sha256.Sum256(content), modTime, false)
}

// RecordHash notes that the agent has seen the file at abs, whose content
// has SHA-256 sum (computed while streaming it, or zero when the file was
// too large to hash: then only an unchanged modification time counts as
// fresh). partial says only some of its lines were shown.
func (s *FileState) RecordHash(abs string, sum [32]byte, modTime time.Time, partial bool) {
	s.mu.Lock()
	s.files[abs] = fileSeen{hash: sum, modTime: modTime, partial: partial}
	s.mu.Unlock()
}

// Seen reports whether the agent has read or written abs.
func (s *FileState) Seen(abs string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.files[abs]
	return ok
}

// Paths lists every file the agent has read or written, sorted.
func (s *FileState) Paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Forget drops abs (the file was deleted).
func (s *FileState) Forget(abs string) {
	s.mu.Lock()
	delete(s.files, abs)
	s.mu.Unlock()
}

// CheckFresh returns an error the model can act on when abs was never read
// or changed on disk since. content and modTime are the file's current
// state. An unchanged modification time is trusted without hashing; a
// changed one falls back to comparing content, so a touch is not a change.
func (s *FileState) CheckFresh(abs string, content []byte, modTime time.Time) error {
	s.mu.Lock()
	seen, ok := s.files[abs]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("file %s has not been read yet in this session: Read it first, then retry", abs)
	}
	if seen.modTime.Equal(modTime) {
		return nil
	}
	if seen.hash == sha256.Sum256(content) {
		return nil
	}
	return fmt.Errorf("file %s was modified since it was last read (by the user or another program): Read it again, then retry", abs)
}

// Stat reads the current content and modification time of abs.
func Stat(abs string) ([]byte, time.Time, error) {
	info, err := os.Stat(abs)
	if err != nil {
		return nil, time.Time{}, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, time.Time{}, err
	}
	return data, info.ModTime(), nil
}
