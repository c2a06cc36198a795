package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/coda-cli/coda/internal/llm"
	"github.com/gofrs/flock"
)

// Session is a transcript open for appending by this process, which holds
// its lock until Close. Its methods are safe for concurrent use.
type Session struct {
	store *Store
	id    string
	path  string
	dir   string
	lock  *flock.Flock

	mu      sync.Mutex
	f       *os.File
	size    int64 // bytes in the file; a failed write is cut back to it
	buf     bytes.Buffer
	state   *replay // what the file means so far, without the messages
	created bool    // by this process: Close may remove it if it stayed empty
	closed  bool
}

// openLocked loads the transcript of id, whose lock the caller holds, and
// returns it ready for appending. It records the start (cwd, git branch)
// and, when the load cut an unfinished tail, a rewind that makes every
// later load agree with what the caller continues from.
func (s *Store) openLocked(id string, lk *flock.Flock, start Start) (*Session, *Loaded, error) {
	path := s.transcriptPath(id)
	p, err := loadFile(path)
	if err != nil {
		return nil, nil, err
	}
	dir := s.sessionDir(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("open session %s: %w", id, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open session %s: %w", id, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("open session %s: %w", id, err)
	}
	loaded := p.finish()
	p.msgs, p.noMessages = msgList{}, true
	sess := &Session{store: s, id: id, path: path, dir: dir, lock: lk, f: f, size: fi.Size(), state: p}

	if p.tail > 0 {
		// End the line a crash cut short, so the next record starts clean.
		if err := sess.write([]byte{'\n'}); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	if loaded.Dropped > 0 {
		if err := sess.append(Record{Type: TypeRewind, Rewind: &Rewind{Keep: len(loaded.Messages)}}); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	start.Cwd = s.project
	start.GitBranch = gitBranch(s.project)
	start.PID = os.Getpid()
	if err := sess.append(Record{Type: TypeSession, Start: &start}); err != nil {
		f.Close()
		return nil, nil, err
	}
	return sess, loaded, nil
}

// ID is the session id (the transcript's file name without .jsonl).
func (s *Session) ID() string { return s.id }

// Path is the transcript file.
func (s *Session) Path() string { return s.path }

// Dir is the session's own folder, for what belongs with it besides the
// transcript (tool-results/, blobs/).
func (s *Session) Dir() string { return s.dir }

// AppendMessage writes a finished message. It returns once the line is
// in the file (not yet synced): call it before the in-memory conversation
// moves on. Messages the user typed should carry an ID, the handle
// /rewind and checkpoints use.
func (s *Session) AppendMessage(m llm.Message) error {
	return s.Append(Record{Type: TypeMessage, Message: &m})
}

// Append writes one record; a zero Time is set to now. Types this
// version does not know are written too (and ignored on load).
func (s *Session) Append(rec Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.append(rec)
}

func (s *Session) append(rec Record) error {
	if s.closed {
		return fmt.Errorf("append to session %s: closed", s.id)
	}
	if knownType(rec.Type) && !rec.complete() {
		return fmt.Errorf("append to session %s: %s record without its content", s.id, rec.Type)
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now()
	}
	rec.Time = rec.Time.UTC()
	s.buf.Reset()
	if err := encodeRecord(&s.buf, rec); err != nil {
		return fmt.Errorf("append to session %s: %w", s.id, err)
	}
	if err := s.write(s.buf.Bytes()); err != nil {
		return err
	}
	if knownType(rec.Type) {
		s.state.apply(&rec)
	} else {
		s.state.Seq++
		s.state.Unknown++
	}
	return nil
}

// write appends b in one write call, so a killed process leaves at most
// one partial line; a failed write is cut back out of the file.
func (s *Session) write(b []byte) error {
	n, err := s.f.Write(b)
	if err != nil {
		if n > 0 {
			s.f.Truncate(s.size)
		}
		return fmt.Errorf("append to session %s: %w", s.id, err)
	}
	s.size += int64(n)
	return nil
}

// Sync flushes the transcript to disk; the loop calls it at the end of
// every turn.
func (s *Session) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("sync session %s: %w", s.id, err)
	}
	return nil
}

// Close syncs and closes the transcript and releases the lock. A session
// this process created that never got a message (nor a checkpoint, nor a
// record of a type it does not know) leaves nothing behind.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.f.Sync()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = fmt.Errorf("close session %s: %w", s.id, err)
	}
	if s.created && !s.state.HasMessages && s.state.Unknown == 0 && len(s.state.checkpoints) == 0 {
		err = errors.Join(err, s.store.removeFiles(s.id))
	}
	if uerr := s.lock.Unlock(); uerr != nil {
		err = errors.Join(err, fmt.Errorf("unlock session %s: %w", s.id, uerr))
	}
	return err
}

// Prompts lists the user prompts of the current conversation, oldest
// first: the points /rewind offers.
func (s *Session) Prompts() []Prompt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Outline.prompts()
}

// RewindConversation cuts the conversation back to just before the prompt
// with id promptID and returns what is left; a record makes every later
// load agree. Files are not touched (see RewindCode).
func (s *Session) RewindConversation(promptID string) ([]llm.Message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("rewind session %s: closed", s.id)
	}
	p, err := loadFile(s.path)
	if err != nil {
		return nil, err
	}
	at, ok := p.Outline.find(promptID)
	if !ok || at > p.msgs.len() {
		return nil, fmt.Errorf("rewind session %s: no prompt %q in the conversation", s.id, promptID)
	}
	msgs := p.msgs.slice()[:at]
	keep := closedPrefix(msgs)
	rw := Rewind{Prompt: promptID, Keep: keep}
	if keep < at {
		rw.Prompt = "" // a tool_use before the prompt lacks its result: cut further
	}
	if err := s.append(Record{Type: TypeRewind, Rewind: &rw}); err != nil {
		return nil, err
	}
	return msgs[:keep:keep], nil
}
