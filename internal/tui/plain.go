package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/coda-cli/coda/internal/agent"
	"github.com/coda-cli/coda/internal/commands"
)

// RunPlain is the session for a standard output that is not a terminal:
// a line REPL that reads a line, runs it (a command, a "!" line or a
// prompt), prints the streamed answer and one line per tool call, and
// asks approvals as questions on the next input line. It writes no escape
// sequences.
func RunPlain(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Mode == "" {
		o.Mode = "default"
	}
	p := &plain{o: o, in: bufio.NewReader(in), out: out, th: newTheme(), md: newMarkdown(), mode: o.Mode}
	for _, line := range o.Info {
		p.printf("%s\n", line)
	}
	return p.loop(ctx)
}

type plain struct {
	o    Options
	in   *bufio.Reader
	out  io.Writer
	th   theme
	md   *markdown
	mode string
	exit bool
}

// readLine returns the next line without its end; io.EOF when input ends.
func (p *plain) readLine() (string, error) {
	line, err := p.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (p *plain) printf(format string, args ...any) {
	fmt.Fprint(p.out, stripANSI(fmt.Sprintf(format, args...)))
}

func (p *plain) loop(ctx context.Context) error {
	for !p.exit {
		if ctx.Err() != nil {
			return nil
		}
		line, err := p.readLine()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "!"):
			p.shell(ctx, strings.TrimSpace(line[1:]))
		default:
			p.line(ctx, line)
		}
	}
	return nil
}

func (p *plain) shell(ctx context.Context, command string) {
	if p.o.RunShell == nil || command == "" {
		p.printf("running shell commands with ! is not available here\n")
		return
	}
	res := p.o.RunShell(ctx, command)
	if out := strings.TrimRight(shellOutput(res), "\n"); out != "" {
		p.printf("%s\n", out)
	}
	p.printf("%s\n", shellStatus(res))
}

// line runs a command or sends a prompt.
func (p *plain) line(ctx context.Context, line string) {
	prompt := line
	if p.o.Commands != nil {
		c := commands.Context{Agent: p.o.Agent, Session: p.o.Session, UI: p, Commands: p.o.Commands, Now: p.o.Now}
		if p.o.Settings != nil {
			c.Settings = p.o.Settings()
		}
		if p.o.Agent != nil {
			c.Conv = p.o.Agent.Conversation()
		}
		res, err := commands.Dispatch(ctx, line, c)
		if err != nil {
			p.printf("%s\n", err)
			return
		}
		if res.Handled {
			if res.Output != "" {
				p.printf("%s\n", res.Output)
			}
			if res.Prompt == "" {
				return
			}
			prompt = res.Prompt
		}
	}
	p.prompt(ctx, prompt)
}

// prompt runs the agent and prints its events as they come.
func (p *plain) prompt(ctx context.Context, prompt string) {
	if p.o.Agent == nil {
		p.printf("no model is configured\n")
		return
	}
	blocks, warnings := attachMentions(prompt, p.o.ProjectDir, p.o.Env)
	for _, w := range warnings {
		p.printf("⚠ %s\n", w)
	}
	rc := &renderCtx{th: &p.th, md: p.md, cwd: p.o.ProjectDir}
	midLine := false
	newline := func() {
		if midLine {
			p.printf("\n")
			midLine = false
		}
	}
	for e := range p.o.Agent.SubmitBlocks(ctx, blocks) {
		switch e := e.(type) {
		case agent.TextDelta:
			p.printf("%s", e.Text)
			midLine = !strings.HasSuffix(e.Text, "\n")
		case agent.StreamReset:
			newline()
			p.printf("(retrying; the partial answer above is discarded)\n")
		case agent.ToolStarted:
			newline()
		case agent.ToolFinished:
			newline()
			t := &toolEntry{id: e.ID, name: e.Name, input: e.Input, done: true, res: e.Result, dur: e.Duration}
			p.printf("%s\n", t.render(rc, 100, false))
		case agent.ApprovalRequest:
			newline()
			p.approve(e)
		case agent.Notice:
			newline()
			p.printf("⚠ %s\n", e.Text)
		case agent.ErrorEvent:
			newline()
			p.printf("Error: %v\n", e.Err)
		case agent.TurnComplete:
			p.save()
		case agent.LoopComplete:
			p.save()
			newline()
			if e.Reason == agent.StopInterrupted {
				p.printf("Interrupted.\n")
			} else if e.Reason != agent.StopSuccess && e.Reason != agent.StopError && e.Err != nil {
				p.printf("%v\n", e.Err)
			}
		}
	}
}

func (p *plain) save() {
	if p.o.Save != nil {
		if err := p.o.Save(); err != nil {
			p.printf("⚠ could not save the session: %v\n", err)
		}
	}
}

// approve asks on the next input line.
func (p *plain) approve(req agent.ApprovalRequest) {
	p.printf("Allow %s?", toolTitle(req.Tool, req.Input, p.o.ProjectDir))
	if req.Reason != "" {
		p.printf(" (%s)", req.Reason)
	}
	always := ""
	if len(req.Suggestions) > 0 {
		always = fmt.Sprintf(", [a]lways allow %s", strings.Join(req.Suggestions, ", "))
	}
	p.printf("\n[y]es%s, [n]o, or type what to do instead: ", always)
	line, err := p.readLine()
	ans := agent.Approval{}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		ans.Allow = true
	case "a", "always":
		ans.Allow, ans.Always = len(req.Suggestions) > 0, len(req.Suggestions) > 0
	case "n", "no", "":
	default:
		ans.Message = strings.TrimSpace(line)
	}
	if err != nil {
		ans = agent.Approval{}
	}
	p.printf("\n")
	select {
	case req.Reply <- ans:
	default:
	}
}

// The plain REPL is its own commands.UI.

func (p *plain) Clear()                        {}
func (p *plain) PermissionMode() string        { return p.mode }
func (p *plain) SetPermissionMode(mode string) { p.mode = mode; p.setMode(mode) }
func (p *plain) Exit()                         { p.exit = true }

// SetInput shows the text: there is no input box to put it in.
func (p *plain) SetInput(text string) { p.printf("Your prompt was:\n%s\n", text) }

// Reload has nothing to redraw: the answers above stay as they were.
func (p *plain) Reload() {}

func (p *plain) setMode(mode string) {
	if p.o.SetMode != nil {
		p.o.SetMode(mode)
	}
}

// Choose lists the choices and reads a number (or a value).
func (p *plain) Choose(title string, choices []commands.Choice, then func(context.Context, string) (commands.Result, error)) {
	p.printf("%s\n", title)
	for i, c := range choices {
		mark := " "
		if c.Current {
			mark = "*"
		}
		key := ""
		if c.Key != "" {
			key = " [" + c.Key + "]"
		}
		p.printf("%s %d. %s%s\n", mark, i+1, c.Label, key)
	}
	p.printf("Number (Enter to cancel): ")
	line, err := p.readLine()
	line = strings.TrimSpace(line)
	if err != nil || line == "" {
		return
	}
	value := line
	if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(choices) {
		value = choices[n-1].Value
	}
	for _, c := range choices {
		if c.Key != "" && strings.EqualFold(c.Key, line) {
			value = c.Value
		}
	}
	res, err := then(context.Background(), value)
	if err != nil {
		p.printf("%v\n", err)
		return
	}
	if res.Output != "" {
		p.printf("%s\n", res.Output)
	}
}
