package app

import (
	"context"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/charmbracelet/colorprofile"

	codasession "github.com/coda-cli/coda/internal/session"
	"github.com/coda-cli/coda/internal/tui"
)

// runInteractive runs the terminal UI over the session, or a plain line
// REPL when standard output (or input) is not a terminal.
func runInteractive(ctx context.Context, o Options, s *workspace) (int, error) {
	a, err := newAppSession(o, s)
	if err != nil {
		return ExitConfig, err
	}
	opts := tui.Options{
		Agent:       s.agent,
		Env:         s.env,
		Commands:    commandRegistry(),
		Session:     a,
		Settings:    a.settings,
		ProjectDir:  s.cwd,
		Version:     Version,
		HistoryPath: filepath.Join(homeDir(o), ".coda", "projects", codasession.ProjectSlug(s.cwd), "history.jsonl"),
		Mode:        s.mode,
		SetMode:     a.setMode,
		RunShell:    a.runShell,
		Notes:       s.notes,
		Save:        s.sess.Sync,
	}
	out, isFile := o.Stdout.(*os.File)
	if o.Stdin == nil && isFile && isTerminal(out) && o.Getenv("TERM") != "dumb" {
		env := os.Environ()
		opts.Profile = colorprofile.Detect(out, env)
		if err := tui.Run(ctx, opts, os.Stdin, out, env); err != nil {
			return 1, err
		}
		return 0, nil
	}
	var in io.Reader = os.Stdin
	if o.Stdin != nil {
		in = o.Stdin
	}
	opts.Profile = colorprofile.NoTTY
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := tui.RunPlain(ctx, opts, in, o.Stdout); err != nil {
		return 1, err
	}
	return 0, nil
}

// isTerminal reports whether f is a character device: a terminal.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
