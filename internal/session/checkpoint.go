package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// blobsDir holds checkpoint content inside a session's folder, one file per
// distinct content, named by its SHA-256.
const blobsDir = "blobs"

// ConflictError is RewindCode refusing because files changed on disk after
// the agent last wrote them; rewinding anyway would lose those changes.
type ConflictError struct {
	Paths []string // sorted
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("changed since coda last edited them: %s (rewind with force to overwrite)", strings.Join(e.Paths, ", "))
}

// Checkpoint saves the current content of path (or notes that it does not
// exist) before a tool changes it, keyed to promptID, the user message
// that started the turn. Call it for every file a tool is about to
// create, edit, overwrite or delete.
func (s *Session) Checkpoint(promptID, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("checkpoint %s: session %s closed", abs, s.id)
	}
	hash, mode, err := s.storeBlob(abs)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", abs, err)
	}
	return s.append(Record{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: promptID, Path: abs, Before: hash, Mode: mode}})
}

// RecordWrite notes what the tool left at path after changing it, so a
// later rewind can tell the agent's content from the user's later edits.
func (s *Session) RecordWrite(promptID, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("record write %s: %w", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hash, err := hashFile(abs)
	if err != nil {
		return fmt.Errorf("record write %s: %w", abs, err)
	}
	return s.append(Record{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: promptID, Path: abs, After: hash}})
}

// fileRewind is what RewindCode knows about one path.
type fileRewind struct {
	before   string // content just before the prompt: blob hash or Absent
	mode     fs.FileMode
	expected string // what the agent (or the last rewind) left on disk
}

// RewindCode restores every file a tool changed at or after the prompt
// promptID to its content just before that prompt (a file that did not
// exist is deleted), and returns the paths it changed, sorted. Files the
// agent never changed are not touched. If a file changed on disk after the
// agent last wrote it, nothing is restored and a *ConflictError lists
// them, unless force.
func (s *Session) RewindCode(promptID string, force bool) (restored []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("rewind files: session %s closed", s.id)
	}
	files, err := s.changedSince(promptID)
	if err != nil {
		return nil, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	current := make(map[string]string, len(paths))
	var conflicts []string
	for _, p := range paths {
		h, err := hashFile(p)
		if err != nil {
			return nil, fmt.Errorf("rewind files: %w", err)
		}
		current[p] = h
		if h != files[p].expected {
			conflicts = append(conflicts, p)
		}
	}
	if len(conflicts) > 0 && !force {
		return nil, &ConflictError{Paths: conflicts}
	}

	var errs []error
	for _, p := range paths {
		f := files[p]
		if current[p] == f.before {
			continue
		}
		if err := s.restore(p, f); err != nil {
			errs = append(errs, err)
			continue
		}
		restored = append(restored, p)
		if err := s.append(Record{Type: TypeCheckpoint, Checkpoint: &Checkpoint{Prompt: promptID, Path: p, After: f.before, Restore: true}}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.f.Sync(); err != nil {
		errs = append(errs, fmt.Errorf("sync session %s: %w", s.id, err))
	}
	return restored, errors.Join(errs...)
}

// changedSince gathers, per path, the checkpoints written at or after the
// prompt: those after its message in the file, or naming it.
func (s *Session) changedSince(promptID string) (map[string]*fileRewind, error) {
	start, known := s.state.promptSeq[promptID]
	files := make(map[string]*fileRewind)
	for _, e := range s.state.checkpoints {
		if e.cp.Prompt != promptID && (!known || e.seq < start) {
			continue
		}
		f := files[e.cp.Path]
		if f == nil {
			if e.cp.Before == "" {
				continue // a write noted with no saved content before it
			}
			f = &fileRewind{before: e.cp.Before, mode: fs.FileMode(e.cp.Mode)}
			files[e.cp.Path] = f
		}
		// Before alone means the tool had not reported back: it failed (the
		// file is as saved) or crashed mid-write (a conflict, safely).
		if e.cp.After != "" {
			f.expected = e.cp.After
		} else {
			f.expected = e.cp.Before
		}
	}
	if !known && len(files) == 0 {
		return nil, fmt.Errorf("rewind files: no prompt %q in session %s", promptID, s.id)
	}
	return files, nil
}

// restore puts one file back: the saved content, byte for byte, or no
// file at all.
func (s *Session) restore(path string, f *fileRewind) error {
	if f.before == Absent {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rewind %s: %w", path, err)
		}
		return nil
	}
	content, err := os.ReadFile(filepath.Join(s.dir, blobsDir, f.before))
	if err != nil {
		return fmt.Errorf("rewind %s: saved content: %w", path, err)
	}
	if hashBytes(content) != f.before {
		return fmt.Errorf("rewind %s: saved content %s is damaged", path, f.before)
	}
	mode := f.mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("rewind %s: %w", path, err)
	}
	if err := os.WriteFile(path, content, mode); err != nil {
		return fmt.Errorf("rewind %s: %w", path, err)
	}
	return nil
}

// storeBlob saves the content of path in the blob store and returns its
// hash and permission bits, or Absent. The blob is synced: once the tool
// overwrites the file it is the only copy.
func (s *Session) storeBlob(path string) (hash string, mode uint32, err error) {
	src, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Absent, 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return "", 0, err
	}
	if !fi.Mode().IsRegular() {
		return "", 0, fmt.Errorf("not a regular file")
	}
	dir := filepath.Join(s.dir, blobsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(tmp, h), src)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	hash = hex.EncodeToString(h.Sum(nil))
	if err := os.Rename(tmp.Name(), filepath.Join(dir, hash)); err != nil {
		return "", 0, err
	}
	return hash, uint32(fi.Mode().Perm()), nil
}

// hashFile returns the SHA-256 of the file at path, or Absent.
func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Absent, nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// copyBlobs gives a fork the blobs of its source: hard links where the
// file system allows (blobs never change), copies otherwise.
func copyBlobs(from, to string) error {
	entries, err := os.ReadDir(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy checkpoints: %w", err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return fmt.Errorf("copy checkpoints: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		src, dst := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		if os.Link(src, dst) == nil {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("copy checkpoints: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return fmt.Errorf("copy checkpoints: %w", err)
		}
	}
	return nil
}
