package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/coda-cli/coda/internal/commands"
	codasession "github.com/coda-cli/coda/internal/session"
	"github.com/coda-cli/coda/internal/tui"
)

// runInteractive runs the terminal UI over the session, or a plain line
// REPL when standard output (or input) is not a terminal. /resume ends
// the UI on one workspace and starts it again on the one it set up.
func runInteractive(ctx context.Context, o Options, s *workspace) (int, error) {
	out, isFile := o.Stdout.(*os.File)
	terminal := o.Stdin == nil && isFile && isTerminal(out) && o.Getenv("TERM") != "dumb"
	var plainIn *bufio.Reader
	if !terminal {
		var in io.Reader = os.Stdin
		if o.Stdin != nil {
			in = o.Stdin
		}
		// One reader for every session of the run: lines it has read ahead
		// belong to the session after a /resume.
		plainIn = bufio.NewReader(in)
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	first := s // run closes it
	var info []string
	for {
		next, nextInfo, code, err := runUI(ctx, o, s, info, out, plainIn)
		if next != nil && (err != nil || ctx.Err() != nil) {
			next.close()
			next = nil
		}
		if next == nil {
			if s != first {
				s.close()
			}
			return code, err
		}
		// The session left is released now, so it can be resumed again
		// (here or elsewhere); closing the first twice is harmless.
		s.close()
		s, info = next, []string{nextInfo}
	}
}

// runUI runs one session's UI, showing info once at the start, and
// returns the workspace /resume set up for the next, if any, with what to
// show there. plainIn is nil on a terminal.
func runUI(ctx context.Context, o Options, s *workspace, info []string, out *os.File, plainIn *bufio.Reader) (*workspace, string, int, error) {
	a, err := newAppSession(o, s)
	if err != nil {
		return nil, "", ExitConfig, err
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
		Info:        info,
		Save:        s.sess.Sync,
	}
	if plainIn == nil {
		env := os.Environ()
		opts.Profile = colorprofile.Detect(out, env)
		err = tui.Run(ctx, opts, os.Stdin, out, env)
	} else {
		opts.Profile = colorprofile.NoTTY
		err = tui.RunPlain(ctx, opts, plainIn, o.Stdout)
	}
	next, nextInfo := a.takeNext()
	if err != nil {
		return next, nextInfo, 1, err
	}
	return next, nextInfo, 0, nil
}

// isTerminal reports whether f is a character device: a terminal.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// askTrust asks, before the UI starts, whether to trust a folder whose
// project settings would widen what coda may do without asking. It reads
// one line from in; only "y" or "yes" trusts.
func askTrust(in io.Reader, out io.Writer) func(dir string, widening []string) bool {
	return func(dir string, widening []string) bool {
		fmt.Fprintf(out, "coda is starting in %s.\nThis folder's settings would allow:\n", dir)
		for _, w := range widening {
			fmt.Fprintf(out, "  - %s\n", w)
		}
		fmt.Fprint(out, "Trust this folder? [y/N] ")
		line, err := tui.ReadRawLine(in)
		if err != nil && !errors.Is(err, io.EOF) {
			line = ""
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true
		}
		fmt.Fprintln(out, "\nNot trusted: this time coda ignores what the folder's settings would allow.")
		return false
	}
}

// pickSession asks which of the project's sessions to resume (coda
// --resume without an id) before the session is set up. It returns the
// chosen id, or "" when the user chose none or there is none to choose
// (it said so on standard error).
func pickSession(ctx context.Context, o Options) (string, error) {
	store, err := projectStore(o)
	if err != nil {
		return "", err
	}
	infos, err := store.List()
	if err != nil {
		return "", err
	}
	var sessions []codasession.Info
	for _, in := range infos {
		if in.Messages > 0 {
			sessions = append(sessions, in)
		}
	}
	if len(sessions) == 0 {
		fmt.Fprintln(o.Stderr, "coda: no session to resume in this project yet")
		return "", nil
	}
	po := tui.PickOptions{Title: "Resume a session", Choices: commands.SessionChoices(sessions, time.Now())}
	out, isFile := o.Stdout.(*os.File)
	if o.Stdin == nil && isFile && isTerminal(out) && o.Getenv("TERM") != "dumb" {
		po.Terminal, po.In, po.Out, po.Env = true, os.Stdin, out, os.Environ()
		po.Profile = colorprofile.Detect(out, po.Env)
	} else {
		po.In, po.Out = o.Stdin, o.Stdout
		if po.In == nil {
			po.In = os.Stdin
		}
	}
	id, err := tui.Pick(ctx, po)
	if err == nil && id == "" {
		fmt.Fprintln(o.Stderr, "coda: no session chosen")
	}
	return id, err
}
