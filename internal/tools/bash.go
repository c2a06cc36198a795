package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

//go:embed bash.md
var bashDescription string

// Bash timeouts, as the model asks for them in milliseconds.
const (
	bashDefaultTimeout = 120_000
	bashMaxTimeout     = 600_000
)

// bashMaxOutput is how many characters of output the model reads; longer
// output keeps its head and tail.
const bashMaxOutput = 30_000

type bashInput struct {
	Command         string `json:"command" jsonschema_description:"The command to run with bash -c."`
	Timeout         int    `json:"timeout,omitempty" jsonschema_description:"Optional timeout in milliseconds (default 120000, max 600000)."`
	Description     string `json:"description,omitempty" jsonschema_description:"Clear, concise description of what the command does in 5-10 words, in active voice."`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema_description:"Run the command in the background and return a shell id at once; read its output with BashOutput."`
}

// BashDisplay is what the UI shows for a Bash call.
type BashDisplay struct {
	Command     string
	Description string
	ExitCode    int
	Duration    time.Duration
	TimedOut    bool
	Interrupted bool
	Output      string // the last lines of the output
	ShellID     string // set when the command went to the background
}

// Bash runs shell commands in the agent's working directory.
type Bash struct{}

// NewBash returns the Bash tool.
func NewBash() *Bash { return &Bash{} }

// ShellTools returns Bash and the tools that manage its background shells.
func ShellTools() []Tool { return []Tool{NewBash(), NewBashOutput(), NewKillShell()} }

func (*Bash) Name() string                               { return "Bash" }
func (*Bash) Description() string                        { return bashDescription }
func (*Bash) InputSchema() json.RawMessage               { return SchemaFor[bashInput]() }
func (*Bash) ReadOnly() bool                             { return false }
func (*Bash) ConcurrencySafe(input json.RawMessage) bool { return false }

func (b *Bash) Run(ctx context.Context, call Call) Result {
	in, err := Decode[bashInput](call.Input)
	if err != nil {
		return Errorf("Bash: %v", err)
	}
	if strings.TrimSpace(in.Command) == "" {
		return Errorf("Bash: command is empty")
	}
	env := call.Env
	dir, dirNote := bashWorkDir(env)
	c := shellCommand{Command: in.Command, Dir: dir, Wrap: env.WrapShell}
	if in.RunInBackground {
		return runInBackground(env, c, in)
	}

	timeout := bashTimeout(in.Timeout)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var out outputCapture
	proc, err := startShell(c, &out)
	if err != nil {
		return Errorf("Bash: %v", err)
	}
	var timedOut, interrupted bool
	select {
	case <-proc.Exited():
	case <-runCtx.Done():
		if ctx.Err() != nil {
			interrupted = true
		} else {
			timedOut = true
		}
	}
	e := proc.finish()

	notes := []string{}
	if dirNote != "" {
		notes = append(notes, dirNote)
	}
	if n := settleCwd(env, dir, e.Dir); n != "" {
		notes = append(notes, n)
	}

	text := out.String()
	var msg strings.Builder
	if text == "" {
		msg.WriteString("(no output)")
	} else {
		msg.WriteString(strings.TrimRight(text, "\n"))
	}
	msg.WriteString("\n\n")
	switch {
	case timedOut:
		fmt.Fprintf(&msg, "Command timed out after %s; its processes were killed (exit code %d).", timeout, e.Code)
	case interrupted:
		fmt.Fprintf(&msg, "Command was interrupted; its processes were killed (exit code %d).", e.Code)
	case e.Signal != 0:
		fmt.Fprintf(&msg, "Command was killed by signal %s (exit code %d).", e.Signal, e.Code)
	default:
		fmt.Fprintf(&msg, "Exit code: %d", e.Code)
	}
	for _, n := range notes {
		msg.WriteString("\n" + n)
	}
	return Result{
		Content: TextResult(msg.String()).Content,
		IsError: timedOut || interrupted || e.Signal != 0 || e.Code >= 2,
		Display: BashDisplay{
			Command:     in.Command,
			Description: in.Description,
			ExitCode:    e.Code,
			Duration:    e.Duration,
			TimedOut:    timedOut,
			Interrupted: interrupted,
			Output:      lastLines(text, 20, 2000),
		},
	}
}

// bashTimeout turns the model's timeout in milliseconds into a duration:
// the default when unset, clamped to the maximum.
func bashTimeout(ms int) time.Duration {
	if ms <= 0 {
		ms = bashDefaultTimeout
	}
	return time.Duration(min(ms, bashMaxTimeout)) * time.Millisecond
}

func runInBackground(env *Env, c shellCommand, in bashInput) Result {
	if env.Shells == nil {
		return Errorf("Bash: background shells are not available here; run the command without run_in_background")
	}
	short := oneLine(in.Command, 80)
	id, err := env.Shells.start(c, func(st ShellStatus) {
		env.Remind(fmt.Sprintf("Background shell %s (`%s`) exited with code %d; use BashOutput to read its output.", st.ID, short, st.ExitCode))
	})
	if err != nil {
		return Errorf("Bash: %v", err)
	}
	text := fmt.Sprintf("Command running in background with ID: %s. Read its output with BashOutput (bash_id %q); stop it with KillShell (shell_id %q). You will be told when it exits.", id, id, id)
	return Result{
		Content: TextResult(text).Content,
		Display: BashDisplay{Command: in.Command, Description: in.Description, ShellID: id},
	}
}

// bashWorkDir is the directory the next command starts in: the agent's
// working directory, or the project directory when that one is gone.
func bashWorkDir(env *Env) (dir, note string) {
	dir = env.Cwd()
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir, ""
	}
	env.SetCwd(env.ProjectDir)
	return env.ProjectDir, fmt.Sprintf("Note: the working directory %s no longer exists; cwd reset to %s.", dir, env.ProjectDir)
}

// settleCwd makes the shell's final directory the agent's working
// directory when it lies inside the roots. start is where the command
// began; final is the physical path the shell reported.
func settleCwd(env *Env, start, final string) (note string) {
	if final == "" || !filepath.IsAbs(final) {
		return ""
	}
	final = filepath.Clean(final)
	if final == start {
		return ""
	}
	if real, err := filepath.EvalSymlinks(start); err == nil && real == final {
		return "" // same place, reached through a symlink
	}
	if dir, ok := rootedPath(env, final); ok {
		env.SetCwd(dir)
		return ""
	}
	return fmt.Sprintf("Note: the command ended in %s, outside the allowed directories; cwd reset to %s.", final, start)
}

// rootedPath maps a physical path inside one of the roots to the path
// through that root as configured (which may itself run through a symlink).
func rootedPath(env *Env, physical string) (string, bool) {
	if env.InRoots(physical) {
		return physical, true
	}
	for _, root := range env.Roots {
		real, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if physical == real {
			return root, true
		}
		if rel, ok := strings.CutPrefix(physical, real+string(filepath.Separator)); ok {
			return filepath.Join(root, rel), true
		}
	}
	return "", false
}

// outputCapture keeps the head and the tail of a stream of any length in
// bounded memory, with counts of what passed, so the middle can be cut
// with a marker that says how much is missing.
type outputCapture struct {
	head, tail []byte
	dropped    bool  // some bytes between head and tail were discarded
	runes      int64 // characters seen (UTF-8 sequence starts)
	lines      int64 // newlines seen
}

// captureKeep bytes hold at least bashMaxOutput/2 characters even at four
// bytes a character.
const captureKeep = 4 * bashMaxOutput / 2

func (c *outputCapture) Write(p []byte) (int, error) {
	n := len(p)
	for _, b := range p {
		if !utf8.RuneStart(b) {
			continue
		}
		c.runes++
		if b == '\n' {
			c.lines++
		}
	}
	if room := captureKeep - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*captureKeep {
		c.tail = append(c.tail[:0:0], c.tail[len(c.tail)-captureKeep:]...)
		c.dropped = true
	}
	return n, nil
}

// String is the captured text, its middle cut when it is longer than
// bashMaxOutput characters.
func (c *outputCapture) String() string {
	return cutMiddle(string(c.head), string(c.tail), c.dropped, c.runes, c.lines)
}

// truncateOutput cuts the middle of s when it is longer than bashMaxOutput
// characters.
func truncateOutput(s string) string {
	var c outputCapture
	c.Write([]byte(s))
	return c.String()
}

func cutMiddle(head, tail string, dropped bool, runes, lines int64) string {
	if runes <= bashMaxOutput {
		return strings.ToValidUTF8(head+tail, "\uFFFD")
	}
	if !dropped {
		head, tail = head+tail, head+tail
	}
	keep := bashMaxOutput / 2
	head = firstRunes(head, keep)
	tail = lastRunes(tail, keep)
	cutRunes := runes - int64(utf8.RuneCountInString(head)) - int64(utf8.RuneCountInString(tail))
	cutLines := lines - int64(strings.Count(head, "\n")) - int64(strings.Count(tail, "\n"))
	marker := fmt.Sprintf("\n\n... [%d characters (%d lines) truncated] ...\n\n", cutRunes, cutLines)
	return strings.ToValidUTF8(head, "\uFFFD") + marker + strings.ToValidUTF8(tail, "\uFFFD")
}

func firstRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

func lastRunes(s string, n int) string {
	i := len(s)
	for k := 0; k < n && i > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// lastLines is the end of s for the UI: at most n lines and maxBytes.
func lastLines(s string, n, maxBytes int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) > maxBytes {
		s = strings.ToValidUTF8(s[len(s)-maxBytes:], "")
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// oneLine shortens s to one line of at most n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = firstRunes(s, n-1) + "…"
	}
	return s
}
