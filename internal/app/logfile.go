package app

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
)

// maxLogSize is when the log is rotated at start-up (one old copy kept).
const maxLogSize = 20 << 20

// openLog opens ~/.coda/logs/coda.log for appending; it never writes to
// the terminal, which the UI owns. On failure logging is off and the
// reason is returned for a one-time notice.
func openLog(home, sessionID string) (*slog.Logger, io.Closer, error) {
	dir := filepath.Join(home, ".coda", "logs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return slog.New(slog.DiscardHandler), nopCloser{}, fmt.Errorf("log folder: %w", err)
	}
	path := filepath.Join(dir, "coda.log")
	if info, err := os.Stat(path); err == nil && info.Size() > maxLogSize {
		_ = os.Rename(path, path+".1")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return slog.New(slog.DiscardHandler), nopCloser{}, fmt.Errorf("open log: %w", err)
	}
	log := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo})).
		With("session", sessionID, "pid", os.Getpid())
	return log, f, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
