package session

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// LockedError is returned when another process holds a session. The caller
// can offer to fork it instead.
type LockedError struct {
	ID  string
	PID int // 0 when the holder had not written it yet
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("session %s is open in another coda process", e.ID)
	}
	return fmt.Sprintf("session %s is open in another coda process (pid %d)", e.ID, e.PID)
}

// lockSession takes the lock beside a session's transcript and writes this
// process's PID into it, so a second process can name the holder. The lock
// goes away with the process, however it ends.
func lockSession(path, id string) (*flock.Flock, error) {
	lk := flock.New(path)
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	if !ok {
		return nil, &LockedError{ID: id, PID: readLockPID(path)}
	}
	// Best effort: the PID only improves the message a second process
	// shows, and where locks are mandatory (Windows) the write is refused.
	_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
	return lk, nil
}

func readLockPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}
