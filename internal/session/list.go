package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// Info describes a session for a picker.
type Info struct {
	ID   string
	Path string
	// Title is the newest title record, else the first user prompt
	// shortened to about 60 characters.
	Title        string
	LastActivity time.Time
	Messages     int    // in the conversation, compactions and rewinds applied
	GitBranch    string // as recorded when a process last opened it
	Size         int64  // bytes of the transcript
}

// List describes every session of the project, newest activity first.
// Each transcript is read once; after that only what was appended since,
// thanks to a small index kept in the session's folder.
func (s *Store) List() ([]Info, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	infos := make([]Info, 0, len(ids))
	for _, id := range ids {
		in, err := s.info(id)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, in)
	}
	sort.Slice(infos, func(i, j int) bool {
		if !infos[i].LastActivity.Equal(infos[j].LastActivity) {
			return infos[i].LastActivity.After(infos[j].LastActivity)
		}
		return infos[i].ID > infos[j].ID
	})
	return infos, nil
}

const (
	indexFile    = "index.json"
	indexVersion = 1
	// checkLen bytes before the indexed offset must still hash the same:
	// a transcript rewritten or truncated since is read from the start.
	checkLen = 64
)

// index is the listing summary of a transcript's first Offset bytes.
type index struct {
	Version int     `json:"version"`
	Offset  int64   `json:"offset"`
	Check   string  `json:"check"`
	Summary summary `json:"summary"`
}

func (s *Store) info(id string) (Info, error) {
	path := s.transcriptPath(id)
	f, err := os.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("list session %s: %w", id, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Info{}, fmt.Errorf("list session %s: %w", id, err)
	}
	size := fi.Size()

	p := &replay{noMessages: true, noCheckpoints: true}
	var start int64
	idx, ok := s.readIndex(id)
	if ok && idx.Offset <= size && checkAt(f, idx.Offset) == idx.Check {
		p.summary, start = idx.Summary, idx.Offset
	}
	// A line being appended right now is left for the next listing.
	if err := p.read(io.NewSectionReader(f, start, size-start), false); err != nil {
		return Info{}, fmt.Errorf("list session %s: %w", id, err)
	}
	if end := start + p.consumed; !ok || end != idx.Offset {
		s.writeIndex(id, index{Version: indexVersion, Offset: end, Check: checkAt(f, end), Summary: p.summary})
	}

	in := Info{
		ID:           id,
		Path:         path,
		Title:        p.title(),
		LastActivity: p.LastActivity,
		Messages:     p.Outline.Count,
		GitBranch:    p.GitBranch,
		Size:         size,
	}
	if in.LastActivity.IsZero() {
		in.LastActivity = fi.ModTime()
	}
	return in, nil
}

// checkAt hashes the checkLen bytes of f before offset.
func checkAt(f *os.File, offset int64) string {
	from := max(0, offset-checkLen)
	b := make([]byte, offset-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return ""
	}
	return hashBytes(b)
}

func (s *Store) readIndex(id string) (index, bool) {
	b, err := os.ReadFile(filepath.Join(s.sessionDir(id), indexFile))
	if err != nil {
		return index{}, false
	}
	var idx index
	if json.Unmarshal(b, &idx) != nil || idx.Version != indexVersion || idx.Check == "" {
		return index{}, false
	}
	return idx, true
}

// writeIndex saves idx for the next listing. It is a cache: failing to
// write it only makes the next listing slower, so errors are dropped.
func (s *Store) writeIndex(id string, idx index) {
	if idx.Check == "" {
		return
	}
	// Prompt texts are not needed to follow rewinds; keep the index small.
	prompts := make([]promptMark, len(idx.Summary.Outline.Prompts))
	for i, pm := range idx.Summary.Outline.Prompts {
		prompts[i] = promptMark{Prompt: Prompt{ID: pm.ID}, At: pm.At}
	}
	idx.Summary.Outline.Prompts = prompts
	b, err := json.Marshal(idx)
	if err != nil {
		return
	}
	dir := s.sessionDir(id)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".index-*")
	if err != nil {
		return
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, indexFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}
