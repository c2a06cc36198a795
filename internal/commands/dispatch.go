package commands

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// Parse splits a command line into the command name (without the slash)
// and its arguments. ok is false when the line is not a command: it does
// not start with "/", or the first word is a path like /usr/bin/env.
func Parse(line string) (name, args string, ok bool) {
	if !strings.HasPrefix(line, "/") {
		return "", "", false
	}
	rest := line[1:]
	end := strings.IndexFunc(rest, unicode.IsSpace)
	if end < 0 {
		end = len(rest)
	}
	name = rest[:end]
	if !validName(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(rest[end:]), true
}

// validName accepts the characters command names use: letters, digits and
// - _ : . (namespaced custom commands look like frontend:component).
func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("-_:.", r) {
			return false
		}
	}
	return true
}

// Outcome is what running a command line produced.
type Outcome struct {
	// Handled is false when the line was not a command and should go to
	// the model as it is.
	Handled bool
	Command *Command
	Result
}

// InputError is a command line that could not run: an unknown command or
// a missing argument. Its message is written for the user.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// Dispatch runs line if it is a command. The UI and `coda -p` both call
// it before anything reaches the model: Outcome.Output is shown to the
// user, Outcome.Prompt (when not empty) is what to send to the model
// instead of the line. A line that is not a command comes back with
// Handled false. c.Commands must be set; c.Args is filled in here.
func Dispatch(ctx context.Context, line string, c Context) (Outcome, error) {
	name, args, ok := Parse(strings.TrimRightFunc(line, unicode.IsSpace))
	if !ok {
		return Outcome{}, nil
	}
	cmd, err := Resolve(c.Commands, name, args)
	if err != nil {
		return Outcome{Handled: true}, err
	}
	c.Args = args
	res, err := cmd.Run(ctx, &c)
	return Outcome{Handled: true, Command: cmd, Result: res}, err
}

// Resolve finds the command for name and checks its arguments, returning
// an InputError a user can act on.
func Resolve(r *Registry, name, args string) (*Command, error) {
	cmd, ok := r.Lookup(name)
	if !ok {
		msg := fmt.Sprintf("Unknown command /%s.", name)
		if near := r.Nearest(name); near != nil {
			msg += fmt.Sprintf(" Did you mean /%s?", near.Name)
		} else {
			msg += " Type /help for the list."
		}
		return nil, &InputError{Msg: msg}
	}
	if cmd.ArgRequired && args == "" {
		return nil, &InputError{Msg: fmt.Sprintf("/%s needs an argument: /%s %s", cmd.Name, cmd.Name, cmd.ArgHint)}
	}
	return cmd, nil
}
