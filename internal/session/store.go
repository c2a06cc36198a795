package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNotFound is returned (wrapped) when no session matches.
var ErrNotFound = errors.New("session not found")

// DefaultMaxAge is how long Cleanup keeps sessions when given no age.
const DefaultMaxAge = 30 * 24 * time.Hour

// Store is the session folder of one project:
// <home>/.coda/projects/<project-slug>/sessions/. Each session is
// <id>.jsonl (the transcript), <id>.lock (held while a process appends)
// and <id>/ (blobs/ for checkpoints, tool-results/, the listing index).
type Store struct {
	project string
	dir     string
}

// NewStore returns the store for the project at projectDir, under home
// (the user's home directory).
func NewStore(home, projectDir string) *Store {
	if abs, err := filepath.Abs(projectDir); err == nil {
		projectDir = abs
	}
	return &Store{
		project: projectDir,
		dir:     filepath.Join(home, ".coda", "projects", ProjectSlug(projectDir), "sessions"),
	}
}

// maxSlugLen keeps the slug well inside a file name's 255 bytes.
const maxSlugLen = 200

// ProjectSlug names a project's folder: every character of the absolute
// path that is not an ASCII letter or digit becomes '-'. A path too long
// for a file name is cut and given a hash of the whole, so two long paths
// sharing a prefix stay apart.
func ProjectSlug(abs string) string {
	b := []byte(abs)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	if len(b) <= maxSlugLen {
		return string(b)
	}
	sum := hashBytes([]byte(abs))
	return string(b[:maxSlugLen]) + "-" + sum[:12]
}

// Dir is the folder holding the project's sessions.
func (s *Store) Dir() string { return s.dir }

func (s *Store) transcriptPath(id string) string { return filepath.Join(s.dir, id+".jsonl") }
func (s *Store) lockPath(id string) string       { return filepath.Join(s.dir, id+".lock") }
func (s *Store) sessionDir(id string) string     { return filepath.Join(s.dir, id) }

// Create starts a new session with a fresh id.
func (s *Store) Create() (*Session, error) {
	id, err := newID(time.Now())
	if err != nil {
		return nil, err
	}
	return s.CreateWithID(id)
}

// CreateWithID starts a new session with the given id (--session-id).
func (s *Store) CreateWithID(id string) (*Session, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	sess, _, err := s.create(id, Start{Source: "startup"}, nil)
	return sess, err
}

// create makes the transcript for id, fills it with fill (may be nil), and
// opens it for appending.
func (s *Store) create(id string, start Start, fill func(w io.Writer) error) (*Session, *Loaded, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("create session folder: %w", err)
	}
	lk, err := lockSession(s.lockPath(id), id)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(s.transcriptPath(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		lk.Unlock()
		if errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("create session %s: it already exists", id)
		}
		return nil, nil, fmt.Errorf("create session %s: %w", id, err)
	}
	if fill != nil {
		w := bufio.NewWriterSize(f, 1<<20)
		err = fill(w)
		if err == nil {
			err = w.Flush()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.removeFiles(id)
		lk.Unlock()
		return nil, nil, fmt.Errorf("create session %s: %w", id, err)
	}
	sess, loaded, err := s.openLocked(id, lk, start)
	if err != nil {
		s.removeFiles(id)
		lk.Unlock()
		return nil, nil, err
	}
	sess.created = true
	return sess, loaded, nil
}

// Open resumes the session id (or a unique prefix of it): it takes the
// lock, loads the conversation and returns the session for appending. A
// session another process holds gives a *LockedError.
func (s *Store) Open(id string) (*Session, *Loaded, error) {
	id, err := s.Resolve(id)
	if err != nil {
		return nil, nil, err
	}
	lk, err := lockSession(s.lockPath(id), id)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(s.transcriptPath(id)); err != nil {
		// Removed between Resolve and the lock.
		lk.Unlock()
		return nil, nil, fmt.Errorf("open session %s: %w", id, ErrNotFound)
	}
	sess, loaded, err := s.openLocked(id, lk, Start{Source: "resume"})
	if err != nil {
		lk.Unlock()
		return nil, nil, err
	}
	return sess, loaded, nil
}

// Load reads the session id (or a unique prefix) without locking it, to
// show or copy it; another process may be appending to it meanwhile.
func (s *Store) Load(id string) (*Loaded, error) {
	id, err := s.Resolve(id)
	if err != nil {
		return nil, err
	}
	p, err := loadFile(s.transcriptPath(id))
	if err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// Fork copies the session id (or a unique prefix) into a new session and
// opens that; the original is only read, so it may be open elsewhere.
// Unparseable lines are left behind; unknown record types are copied.
func (s *Store) Fork(id string) (*Session, *Loaded, error) {
	src, err := s.Resolve(id)
	if err != nil {
		return nil, nil, err
	}
	in, err := os.Open(s.transcriptPath(src))
	if err != nil {
		return nil, nil, fmt.Errorf("fork session %s: %w", src, err)
	}
	defer in.Close()
	forkID, err := newID(time.Now())
	if err != nil {
		return nil, nil, err
	}
	copyLines := func(w io.Writer) error {
		if err := copyValidLines(w, in); err != nil {
			return err
		}
		return copyBlobs(filepath.Join(s.sessionDir(src), blobsDir), filepath.Join(s.sessionDir(forkID), blobsDir))
	}
	sess, loaded, err := s.create(forkID, Start{Source: "fork", ForkedFrom: src}, copyLines)
	if err != nil {
		return nil, nil, fmt.Errorf("fork session %s: %w", src, err)
	}
	return sess, loaded, nil
}

// copyValidLines copies the lines of r that are JSON, each ending in '\n'.
func copyValidLines(w io.Writer, r io.Reader) error {
	var werr error
	write := func(line []byte) {
		line = bytes.TrimSpace(line)
		if werr != nil || len(line) == 0 || !json.Valid(line) {
			return
		}
		if _, werr = w.Write(line); werr == nil {
			_, werr = w.Write([]byte{'\n'})
		}
	}
	_, partial, err := readBatches(r, func(lines [][]byte) {
		for _, l := range lines {
			write(l)
		}
	})
	if err != nil {
		return err
	}
	write(partial)
	return werr
}

// Resolve turns an id or a unique prefix of one into the id.
func (s *Store) Resolve(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	if _, err := os.Stat(s.transcriptPath(id)); err == nil {
		return id, nil
	}
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, c := range ids {
		if strings.HasPrefix(c, id) {
			matches = append(matches, c)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("session %q in %s: %w", id, s.dir, ErrNotFound)
	case 1:
		return matches[0], nil
	}
	if len(matches) > 5 {
		matches = append(matches[:5], "...")
	}
	return "", fmt.Errorf("session prefix %q is ambiguous: %s", id, strings.Join(matches, ", "))
}

// ids lists the sessions in the folder, sorted.
func (s *Store) ids() ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok && e.Type().IsRegular() {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Remove deletes the session id (or a unique prefix) and everything stored
// with it. A session open in some process is refused with *LockedError.
func (s *Store) Remove(id string) error {
	id, err := s.Resolve(id)
	if err != nil {
		return err
	}
	lk, err := lockSession(s.lockPath(id), id)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return s.removeFiles(id)
}

// removeFiles deletes a session's files; the caller holds its lock. The
// lock file goes last, while still held, so no other process can take it
// over a half-removed session.
func (s *Store) removeFiles(id string) error {
	err := os.RemoveAll(s.sessionDir(id))
	if rerr := os.Remove(s.transcriptPath(id)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if rerr := os.Remove(s.lockPath(id)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("remove session %s: %w", id, err)
	}
	return nil
}

// Cleanup removes sessions whose transcript was last written more than
// maxAge ago (DefaultMaxAge when maxAge <= 0), and leftovers of sessions
// that are gone (a folder or lock whose transcript is missing). Sessions
// open in some process are kept.
func (s *Store) Cleanup(maxAge time.Duration) (removed int, err error) {
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	cutoff := time.Now().Add(-maxAge)
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("clean up sessions: %w", err)
	}
	// Every id with a transcript, folder or lock, once.
	var ids []string
	seen := make(map[string]bool)
	for _, e := range entries {
		id := e.Name()
		if e.IsDir() {
			if strings.HasPrefix(id, ".") {
				continue
			}
		} else if base, ok := strings.CutSuffix(id, ".jsonl"); ok {
			id = base
		} else if base, ok := strings.CutSuffix(id, ".lock"); ok {
			id = base
		} else {
			continue
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	var errs []error
	for _, id := range ids {
		if !s.staleSince(id, cutoff) {
			continue
		}
		lk, err := lockSession(s.lockPath(id), id)
		if err != nil {
			var locked *LockedError
			if !errors.As(err, &locked) {
				errs = append(errs, err)
			}
			continue
		}
		fi, statErr := os.Stat(s.transcriptPath(id))
		if statErr == nil && !fi.ModTime().Before(cutoff) { // appended to before we took the lock
			lk.Unlock()
			continue
		}
		if err := s.removeFiles(id); err != nil {
			errs = append(errs, err)
		} else if statErr == nil {
			removed++
		}
		lk.Unlock()
	}
	return removed, errors.Join(errs...)
}

// staleSince reports whether session id was last written before cutoff:
// its transcript, or, with none, its folder.
func (s *Store) staleSince(id string, cutoff time.Time) bool {
	fi, err := os.Stat(s.transcriptPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		fi, err = os.Stat(s.sessionDir(id))
		if errors.Is(err, fs.ErrNotExist) {
			fi, err = os.Stat(s.lockPath(id))
		}
	}
	return err == nil && fi.ModTime().Before(cutoff)
}

// Latest returns the id of the session with the newest activity that
// holds at least one message (what --continue resumes).
func (s *Store) Latest() (string, error) {
	infos, err := s.List()
	if err != nil {
		return "", err
	}
	for _, in := range infos {
		if in.Messages > 0 {
			return in.ID, nil
		}
	}
	return "", fmt.Errorf("no session with messages in %s: %w", s.dir, ErrNotFound)
}

// newID makes a session id that sorts by creation time:
// 20060102-150405-<8 hex>.
func newID(now time.Time) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("new session id: %w", err)
	}
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), nil
}

// validID accepts ids that are safe as a file name.
func validID(id string) error {
	if id == "" || len(id) > 128 || id[0] == '.' {
		return fmt.Errorf("invalid session id %q", id)
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("invalid session id %q: only letters, digits, '-', '_' and '.'", id)
		}
	}
	return nil
}
